// Microbenchmarks that calibrate Cake's cost model (include/cake/cost/) on one GPU. Each measures one
// term of the model in isolation and writes raw numbers; bench/cost/derive_calibration.py turns them
// into include/cake/cost/calibration/<target>_<gpu>.hpp (fitted parameters + the raw tables, with
// provenance). Nothing here looks at the GEMM shapes the model is validated on (bench/cost/sweep.cpp).
//
//   wgmma      two consumer warpgroups on smem-resident operands issuing, per 128-byte K block, the 4
//              wgmma.m64nNk16 (bf16) or m64nNk32 (e4m3) of the sm_90a GEMM, fence/commit/wait(0) per
//              block, one CTA per SM on every SM: time per K block for N = 64..256.
//   tma        a TMA producer warp and a consumer warp that only waits and releases: time per pipeline
//              stage for 1..6 stages, 1..3 boxes of 128 x 64 bf16 per stage, from an L2-resident working
//              set or streaming from HBM, with and without 2-CTA multicast; one CTA (unloaded latency)
//              or every SM (loaded latency, bandwidth); plus the working-set sweep that locates the L2 knee.
//   hbm        copy / read / write of 1 GiB with 16-byte vector accesses.
//   gemm       the Cake sm_90a GEMM itself on shapes with exactly T tiles per CTA (M = 128 * SMs,
//              N = T * BN), T in {4, 8}, K in {512 .. 4096}: a least-squares fit of
//              time = a + T * (e + kblocks * s) gives the per-tile epilogue cost e and the fixed cost a
//              (launch, prologue, pipeline fill); s, the in-situ time per K block, is a cross-check.
//
//   cake_cost_calibrate [--json FILE] [--driver VERSION] [--quick] [--only wgmma,tma,hbm,gemm]
//   cake_cost_calibrate --precompile      compile every kernel into the JIT cache (no GPU needed)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <cake/gemm.hpp>
#include <cake/harness/timing.hpp>
#include <cake/lower/ptx_text.hpp>

#include "common.hpp"

namespace {

using cake_bench::num;
namespace jit = cake::jit;

bool g_precompile = false;
bool g_quick = false;

// ---- kernel sources -------------------------------------------------------------------------------------

std::string wgmma_name(int n, bool fp8) { return std::string("cal_wgmma_") + (fp8 ? "e4m3" : "bf16") + "_n" + std::to_string(n); }

std::string wgmma_source(int n, bool fp8) {
  using cake::lower::ptx::mma_type;
  const mma_type t = fp8 ? mma_type::e4m3 : mma_type::bf16;
  const auto mma = cake::lower::ptx::wgmma_ss(64, n, fp8 ? 32 : 16, t, t, mma_type::f32, false, false, "acc", "da", "db", "1");
  if (!mma.ok()) throw jit::error("wgmma text for N=" + std::to_string(n) + ": " + mma.error);
  // Operand bytes: random bf16 in +-[0.5, 1) or e4m3 without NaN encodings, so the tensor cores draw the
  // power they draw on real data (zeros would let the clocks run higher than in a GEMM).
  const std::string pattern = fp8 ? "(h & 0xF7F7F7F7u)" : "((h & 0x807F807Fu) | 0x3F003F00u)";
  std::string s = cake_bench::device_prelude();
  s += "struct alignas(64) cal_wgmma_args { long long iters; float* sink; };\n";
  s += "extern \"C\" __global__ void __launch_bounds__(256, 1) " + wgmma_name(n, fp8) + "(const __grid_constant__ cal_wgmma_args args) {\n";
  s += R"(  extern __shared__ unsigned char cal_raw[];
  const u32 raw = smem_addr(cal_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  unsigned char* gbase = cal_raw + (base - raw);
  const u32 words = (128u * 128u + )" + std::to_string(n) + R"(u * 128u) / 4u;
  for (u32 i = threadIdx.x; i < words; i += blockDim.x) {
    u32 h = (i * 2654435761u) ^ (blockIdx.x * 40503u + 17u);
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    reinterpret_cast<u32*>(gbase)[i] = )" + pattern + R"(;
  }
  fence_proxy_async_smem();
  __syncthreads();
  const u32 wg = threadIdx.x / 128u;
  float acc[)" + std::to_string(n / 2) + R"(];
#pragma unroll
  for (int i = 0; i < )" + std::to_string(n / 2) + R"(; ++i) acc[i] = 0.f;
  const u32 a0 = base + wg * 64u * 128u, b0 = base + 128u * 128u;
  for (long long it = 0; it < args.iters; ++it) {
    wgmma_fence();
#pragma unroll
    for (u32 kk = 0; kk < 4u; ++kk) {
      const u64 da = make_wgmma_desc(a0 + kk * 32u, 16, 1024, wgmma_swizzle_128b);
      const u64 db = make_wgmma_desc(b0 + kk * 32u, 16, 1024, wgmma_swizzle_128b);
)" + mma.text + R"(    }
    wgmma_commit();
    wgmma_wait<0>();
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < )" + std::to_string(n / 2) + R"(; ++i) s += acc[i];
  if (s == 1234.5f) args.sink[threadIdx.x] = s;
}
)";
  return s;
}

// TMA producer/consumer without compute. Box = 128 rows x 64 bf16 (16 KiB, one 128B-swizzle span per row),
// the A box of the sm_90a GEMM. Barriers: full[s] (1 arrival + tx), empty[s] (one arrival per CTA of the
// cluster: with multicast, each consumer releases the stage in both CTAs, as the GEMM does).
const char* tma_source_body = R"(
struct alignas(64) cal_tma_args {
  unsigned long long tmap[16];
  long long iters;
  long long box_count;
  int boxes, stages, multicast, streaming, col_boxes, pad;
  unsigned long long timeout_ns;
  int* error;
};
// Box ids advance by a fixed step per stage and wrap at box_count (32-bit, no division in the loop:
// the producer's issue path must cost what the GEMM's does, a few instructions per load).
struct cal_box_walk {
  u32 id, step, count;
  __device__ __forceinline__ void next() { id += step; while (id >= count) id -= count; }
  __device__ __forceinline__ u32 at(u32 j) const { u32 x = id + j; return x >= count ? x - count : x; }
};
extern "C" __global__ void __launch_bounds__(64, 1) cal_tma(const __grid_constant__ cal_tma_args a) {
  extern __shared__ unsigned char cal_raw[];
  const u32 raw = smem_addr(cal_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  const u32 boxes = static_cast<u32>(a.boxes);
  const u32 stage_bytes = boxes * 16384u;
  const u32 S = static_cast<u32>(a.stages);
  const u32 bars = base + S * stage_bytes;
  const u32 rank = a.multicast ? cluster_ctarank() : 0u;
  if (threadIdx.x == 0) {
    for (u32 s = 0; s < S; ++s) {
      mbar_init(bars + 8u * s, 1u);
      mbar_init(bars + 8u * (S + s), a.multicast ? 2u : 1u);
    }
    fence_mbarrier_init();
  }
  if (a.multicast) cluster_sync();
  else __syncthreads();
  const u32 warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
  const u64 deadline = globaltimer_ns() + a.timeout_ns;
  const u32 count = static_cast<u32>(a.box_count);
  const u32 ctas = gridDim.x, cta = blockIdx.x;
  const u32 clusters = a.multicast ? ctas / 2u : ctas, cluster = a.multicast ? cta / 2u : cta;
  // Own boxes (A) and the cluster's shared boxes (B): streaming walks the tensor in global order; the
  // L2-resident walk starts each CTA somewhere else in the working set.
  cal_box_walk own, shared;
  if (a.streaming) {
    own = {static_cast<u32>((static_cast<unsigned long long>(cta) * boxes) % count), (ctas * boxes) % count, count};
    shared = {static_cast<u32>((static_cast<unsigned long long>(cluster) * boxes + count / 2) % count), (clusters * boxes) % count, count};
  } else {
    own = {static_cast<u32>((static_cast<unsigned long long>(cta) * 104729u) % count), boxes % count, count};
    shared = {static_cast<u32>((static_cast<unsigned long long>(cluster) * 7919u + count / 2) % count), boxes % count, count};
  }
  bool failed = false;
  u32 s = 0, ph = 0;
  if (warp == 0) {
    if (lane == 0) {
      for (long long it = 0; it < a.iters; ++it) {
        if (!mbar_wait_until(bars + 8u * (S + s), ph ^ 1u, deadline)) { failed = true; break; }
        mbar_arrive_expect_tx(bars + 8u * s, stage_bytes);
        const u32 dst = base + s * stage_bytes;
        for (u32 j = 0; j < boxes; ++j) {
          if (a.multicast && j > 0) {
            // Boxes 1.. are the cluster's shared tile: box j is loaded by rank (j - 1) % 2 and lands in both CTAs.
            if (((j - 1u) & 1u) != rank) continue;
            const u32 id = shared.at(j);
            tma_load_2d_multicast(dst + j * 16384u, a.tmap, bars + 8u * s, 0x3, static_cast<int>(id & 63u) * 64, static_cast<int>(id >> 6) * 128);
          } else {
            const u32 id = own.at(j);
            tma_load_2d(dst + j * 16384u, a.tmap, bars + 8u * s, static_cast<int>(id & 63u) * 64, static_cast<int>(id >> 6) * 128);
          }
        }
        own.next();
        shared.next();
        if (++s == S) { s = 0; ph ^= 1u; }
      }
    }
  } else {
    for (long long it = 0; it < a.iters; ++it) {
      if (!mbar_wait_until(bars + 8u * s, ph, deadline)) { failed = true; break; }
      __syncwarp();
      if (lane == 0) {
        if (a.multicast) {
          mbar_arrive_cluster(mapa_shared(bars + 8u * (S + s), 0u));
          mbar_arrive_cluster(mapa_shared(bars + 8u * (S + s), 1u));
        } else {
          mbar_arrive(bars + 8u * (S + s));
        }
      }
      if (++s == S) { s = 0; ph ^= 1u; }
    }
  }
  if (failed) atomicExch(a.error, 1);
  __syncwarp();  // lane 0 of the producer warp ran the loop alone; the cluster barrier below is .aligned
  if (a.multicast) cluster_sync();
  else __syncthreads();
}
)";

const char* hbm_source_body = R"(
extern "C" __global__ void cal_copy(const int4* __restrict__ src, int4* __restrict__ dst, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) dst[i] = src[i];
}
extern "C" __global__ void cal_read(const int4* __restrict__ src, long long n, int* sink) {
  int x = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const int4 v = src[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x13572468) sink[0] = x;
}
extern "C" __global__ void cal_write(int4* __restrict__ dst, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    dst[i] = make_int4((int)i, 1, 2, 3);
}
// Random bf16 in +-[0.5, 1) (two per word), for GEMM operands.
extern "C" __global__ void cal_fill_bf16(unsigned* dst, long long words, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < words; i += (long long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    dst[i] = (h & 0x807F807Fu) | 0x3F003F00u;
  }
}
)";

jit::artifacts compile(const std::string& src, const std::string& name) {
  auto a = jit::build(src, name, "sm_90a");
  if (!a.ok) throw jit::error("calibration kernel " + name + " does not compile:\n" + a.diagnostics());
  return a;
}

const std::vector<int>& wgmma_ns() {
  static const std::vector<int> v = {64, 96, 128, 144, 160, 176, 192, 208, 224, 240, 256};
  return v;
}

// ---- timing helpers -----------------------------------------------------------------------------------

double median_ms(const std::function<void(CUstream)>& work, int runs, bool flush = false) {
  cake::harness::timing_options o;
  o.warmup = 1;
  o.runs = runs;
  o.flush_l2 = flush;
  return cake::harness::time_gpu(work, o).median_ms;
}

struct json_out {
  std::ostringstream s;
  bool first_section = true;
  void section(const std::string& name, const std::vector<std::string>& rows) {
    s << (first_section ? "" : ",\n") << "  \"" << name << "\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) s << "    " << rows[i] << (i + 1 < rows.size() ? ",\n" : "\n");
    s << "  ]";
    first_section = false;
  }
};

// ---- wgmma ------------------------------------------------------------------------------------------------

std::vector<std::string> run_wgmma() {
  std::vector<std::string> rows;
  std::unique_ptr<jit::device_buffer> sink;
  if (!g_precompile) sink = std::make_unique<jit::device_buffer>(4096);
  for (bool fp8 : {false, true}) {
    for (int n : wgmma_ns()) {
      if (g_quick && n % 64) continue;
      const auto name = wgmma_name(n, fp8);
      const auto art = compile(wgmma_source(n, fp8), name);
      if (g_precompile) continue;
      const auto& dev = jit::driver::get().device(0);
      auto mod = jit::module::load(art);
      auto k = mod.get_kernel(name);
      struct alignas(64) args_t {
        long long iters;
        CUdeviceptr sink;
      };
      // About 20 ms per launch at the expected rate (~0.7 us per K block at N = 256).
      args_t args{static_cast<long long>(28000.0 * 256 / n), sink->get()};
      jit::launch_config c;
      c.grid = {static_cast<unsigned>(dev.sm_count), 1, 1};
      c.block = {256, 1, 1};
      c.dynamic_smem = 120 * 1024;  // one CTA per SM, as the GEMM
      void* params[] = {&args};
      const double ms = median_ms([&](CUstream st) { c.stream = st; jit::launch(k, c, params); }, g_quick ? 3 : 5);
      const double us = ms * 1e3 / static_cast<double>(args.iters);
      const double tflops = 2.0 * 128 * n * (fp8 ? 128 : 64) * dev.sm_count / (us * 1e-6) / 1e12;
      std::printf("wgmma %-5s N=%3d  %.4f us per K block  %.1f TFLOP/s\n", fp8 ? "e4m3" : "bf16", n, us, tflops);
      rows.push_back("{\"dtype\": \"" + std::string(fp8 ? "e4m3" : "bf16") + "\", \"n\": " + std::to_string(n) + ", \"iters\": " +
                     std::to_string(args.iters) + ", \"kblock_us\": " + num(us, 5) + ", \"tflops\": " + num(tflops, 1) + "}");
    }
  }
  return rows;
}

// ---- TMA ---------------------------------------------------------------------------------------------------

struct tma_case {
  int boxes, stages;
  bool multicast, streaming, all_sms;
  double working_set_mib;
  std::string what;
};

std::vector<std::string> run_tma() {
  std::vector<std::string> rows;
  const auto src = cake_bench::device_prelude() + tma_source_body;
  const auto art = compile(src, "cal_tma");
  if (g_precompile) return rows;
  const auto& dev = jit::driver::get().device(0);
  auto mod = jit::module::load(art);
  auto k = mod.get_kernel("cal_tma");
  const long long cols = 4096;  // row pitch 8 KiB, like a K = 4096 bf16 operand
  const std::size_t max_bytes = std::size_t{2} << 30;
  jit::device_buffer tensor(max_bytes), err(64);
  {  // any bytes will do, but not zeros (compressible data could flatter HBM)
    auto fill = jit::module::load(compile(cake_bench::device_prelude() + hbm_source_body, "cal_hbm"));
    auto f = fill.get_kernel("cal_fill_bf16");
    jit::launch_config c;
    c.grid = {static_cast<unsigned>(dev.sm_count * 4), 1, 1};
    c.block = {512, 1, 1};
    jit::launch_with(f, c, tensor.get(), static_cast<long long>(max_bytes / 4), 7u);
    jit::driver::get().cuCtxSynchronize();
  }
  std::vector<tma_case> cases;
  for (int boxes : {1, 2, 3})
    for (int s : {1, 2, 3, 4, 6})
      if (s * boxes * 16 <= 200) {
        cases.push_back({boxes, s, false, false, false, 16, "latency"});
        cases.push_back({boxes, s, false, false, true, 16, "l2"});
        cases.push_back({boxes, s, false, true, true, 2048, "hbm"});
        if (boxes == 3) {
          cases.push_back({boxes, s, true, false, false, 16, "latency-multicast"});
          cases.push_back({boxes, s, true, false, true, 16, "l2-multicast"});
          cases.push_back({boxes, s, true, true, true, 2048, "hbm-multicast"});
        }
      }
  for (int boxes : {1, 3}) cases.push_back({boxes, 1, false, true, false, 2048, "latency-hbm"});
  for (double w : {16.0, 32.0, 48.0, 64.0, 96.0, 128.0, 256.0, 512.0}) cases.push_back({3, 4, false, true, true, w, "l2-knee"});
  for (const auto& c : cases) {
    if (g_quick && c.stages == 6) continue;
    struct alignas(64) args_t {
      CUtensorMap tmap;
      long long iters, box_count;
      int boxes, stages, multicast, streaming, col_boxes, pad;
      unsigned long long timeout_ns;
      CUdeviceptr error;
    } args{};
    static_assert(sizeof(CUtensorMap) == 128);
    const long long rows_total = static_cast<long long>(c.working_set_mib * 1024 * 1024) / (cols * 2) / 128 * 128;
    jit::tensor_map_spec spec;
    spec.dtype = jit::tma_dtype::bf16;
    spec.rank = 2;
    spec.global_address = tensor.address();
    spec.global_dims = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows_total), 1, 1, 1};
    spec.global_strides_bytes = {static_cast<std::uint64_t>(cols * 2), 0, 0, 0};
    spec.box_dims = {64, 128, 1, 1, 1};
    spec.swizzle = jit::tma_swizzle::b128;
    spec.l2_promotion = jit::tma_l2_promotion::b256;
    args.tmap = jit::encode_tensor_map(spec);
    args.iters = c.all_sms ? 3000 : 1500;
    args.box_count = rows_total / 128 * (cols / 64);
    args.boxes = c.boxes;
    args.stages = c.stages;
    args.multicast = c.multicast;
    args.streaming = c.streaming;
    args.col_boxes = static_cast<int>(cols / 64);
    args.timeout_ns = 2'000'000'000ull;
    args.error = err.get();
    err.fill_u32(0);
    jit::launch_config lc;
    lc.grid = {c.all_sms ? static_cast<unsigned>(dev.sm_count / 2 * 2) : (c.multicast ? 2u : 1u), 1, 1};
    lc.block = {64, 1, 1};
    lc.dynamic_smem = static_cast<unsigned>(1024 + c.stages * c.boxes * 16384 + 16 * c.stages + 64);
    if (lc.dynamic_smem < 120 * 1024) lc.dynamic_smem = 120 * 1024;  // one CTA per SM
    if (c.multicast) lc.cluster = {2, 1, 1};
    void* params[] = {&args};
    const double ms = median_ms([&](CUstream st) { lc.stream = st; jit::launch(k, lc, params); }, g_quick ? 3 : 5);
    const bool ok = err.download<int>(1)[0] == 0;
    const double stage_us = ms * 1e3 / static_cast<double>(args.iters);
    const double recv = c.boxes * 16384.0;
    const double issued = c.multicast ? 16384.0 * (1 + (c.boxes - 1) / 2.0) : recv;
    const double ctas = lc.grid.x;
    const double gbps_issued = issued * ctas / (stage_us * 1e-6) / 1e9;
    std::printf("tma %-14s boxes %d stages %d ws %6.0f MiB ctas %3.0f  %.4f us/stage  issued %.0f GB/s%s\n", c.what.c_str(), c.boxes, c.stages,
                c.working_set_mib, ctas, stage_us, gbps_issued, ok ? "" : "  TIMED OUT");
    rows.push_back("{\"what\": \"" + c.what + "\", \"boxes\": " + std::to_string(c.boxes) + ", \"stages\": " + std::to_string(c.stages) +
                   ", \"multicast\": " + (c.multicast ? "true" : "false") + ", \"streaming\": " + (c.streaming ? "true" : "false") +
                   ", \"ctas\": " + std::to_string(lc.grid.x) + ", \"working_set_mib\": " + num(c.working_set_mib, 1) +
                   ", \"stage_bytes_received\": " + num(recv, 0) + ", \"stage_bytes_issued\": " + num(issued, 0) + ", \"iters\": " +
                   std::to_string(args.iters) + ", \"stage_us\": " + num(stage_us, 5) + ", \"issued_gbps\": " + num(gbps_issued, 1) +
                   ", \"ok\": " + (ok ? "true" : "false") + "}");
  }
  return rows;
}

// ---- HBM -----------------------------------------------------------------------------------------------------

std::vector<std::string> run_hbm() {
  std::vector<std::string> rows;
  const auto art = compile(cake_bench::device_prelude() + hbm_source_body, "cal_hbm");
  if (g_precompile) return rows;
  const auto& dev = jit::driver::get().device(0);
  auto mod = jit::module::load(art);
  const std::size_t bytes = std::size_t{1} << 30;
  jit::device_buffer a(bytes), b(bytes), sink(64);
  const long long n = static_cast<long long>(bytes / 16);
  jit::launch_config c;
  c.grid = {static_cast<unsigned>(dev.sm_count * 8), 1, 1};
  c.block = {512, 1, 1};
  auto copy = mod.get_kernel("cal_copy"), read = mod.get_kernel("cal_read"), write = mod.get_kernel("cal_write");
  jit::launch_with(mod.get_kernel("cal_fill_bf16"), c, a.get(), static_cast<long long>(bytes / 4), 11u);
  const double copy_ms = median_ms([&](CUstream st) { c.stream = st; jit::launch_with(copy, c, a.get(), b.get(), n); }, 10);
  const double read_ms = median_ms([&](CUstream st) { c.stream = st; jit::launch_with(read, c, a.get(), n, sink.get()); }, 10);
  const double write_ms = median_ms([&](CUstream st) { c.stream = st; jit::launch_with(write, c, b.get(), n); }, 10);
  const auto row = [&](const char* what, double ms, double moved) {
    const double gbps = moved / (ms * 1e-3) / 1e9;
    std::printf("hbm %-5s %.4f ms  %.0f GB/s\n", what, ms, gbps);
    rows.push_back("{\"what\": \"" + std::string(what) + "\", \"bytes\": " + std::to_string(bytes) + ", \"ms\": " + num(ms, 5) + ", \"gbps\": " + num(gbps, 1) + "}");
  };
  row("copy", copy_ms, 2.0 * bytes);
  row("read", read_ms, 1.0 * bytes);
  row("write", write_ms, 1.0 * bytes);
  return rows;
}

// ---- the GEMM on T tiles per CTA ------------------------------------------------------------------------------

std::vector<std::string> run_gemm(std::string& max_clusters_row) {
  std::vector<std::string> rows;
  const int sms = g_precompile ? 132 : jit::driver::get().device(0).sm_count;
  const long long M = 128LL * (sms / 2 * 2);
  const std::vector<int> bns = g_quick ? std::vector<int>{256, 128} : std::vector<int>{256, 192, 176, 128, 96};
  std::unique_ptr<jit::device_buffer> A, B, D;
  if (!g_precompile) {
    const long long maxN = 8LL * 256;
    A = std::make_unique<jit::device_buffer>(static_cast<std::size_t>(M * 4096 * 2));
    B = std::make_unique<jit::device_buffer>(static_cast<std::size_t>(maxN * 4096 * 2));
    D = std::make_unique<jit::device_buffer>(static_cast<std::size_t>(M * maxN * 2));
    auto mod = jit::module::load(compile(cake_bench::device_prelude() + hbm_source_body, "cal_hbm"));
    auto f = mod.get_kernel("cal_fill_bf16");
    jit::launch_config c;
    c.grid = {static_cast<unsigned>(sms * 4), 1, 1};
    c.block = {512, 1, 1};
    jit::launch_with(f, c, A->get(), static_cast<long long>(A->size() / 4), 3u);
    jit::launch_with(f, c, B->get(), static_cast<long long>(B->size() / 4), 5u);
    jit::driver::get().cuCtxSynchronize();
  }
  // The per-tile sweep at the deepest pipeline, and a pipeline-depth / cluster set for the latency term.
  struct run_set {
    int bn, stages, cluster;
    std::vector<int> tiles;
    std::vector<long long> ks;
  };
  std::vector<run_set> sets;
  for (int bn : bns) {
    cake::kernels::gemm_sm90_config c;
    c.bn = bn;
    sets.push_back({bn, cake::max_gemm_stages(c, 2), 2, {2, 4, 8}, {256, 512, 1024, 2048, 4096}});
  }
  if (!g_quick)
    for (int bn : {256, 128}) {
      cake::kernels::gemm_sm90_config c;
      c.bn = bn;
      for (int s : {2, 3}) sets.push_back({bn, s, 2, {4}, {1024, 2048, 4096}});
      for (int s : {2, 3, cake::max_gemm_stages(c, 2)}) sets.push_back({bn, s, 1, {4}, {1024, 2048, 4096}});
    }
  bool queried = false;
  for (const auto& set : sets) {
    cake::kernels::gemm_sm90_config cfg;
    cfg.bn = set.bn;
    cfg.stages = set.stages;
    cfg.cluster_m = set.cluster;
    const cake::program p = cake::kernels::gemm_sm90<cake::bf16>(cfg);
    if (g_precompile) {
      const auto l = cake::lower::lower(p);
      if (!l.ok) throw jit::error("GEMM BN=" + std::to_string(set.bn) + " does not lower: " + l.error);
      compile(l.source, l.entry);
      continue;
    }
    const auto k = cake::runtime_kernel::build(p);
    if (!queried && set.cluster == 2 && jit::driver::get().cuOccupancyMaxActiveClusters) {
      queried = true;
      // How many 2-CTA clusters of this kernel fit at once (the persistent grid assumes SMs / 2).
      const int clusters = k.max_active_clusters();
      std::printf("max active 2-CTA clusters of the BN=%d GEMM: %d\n", set.bn, clusters);
      max_clusters_row = "{\"kernel\": \"gemm_bf16_sm90 BN=" + std::to_string(set.bn) + "\", \"cluster\": 2, \"max_active_clusters\": " + std::to_string(clusters) + "}";
    }
    for (int T : set.tiles) {
      // Exactly T tiles per CTA: M covers every CTA once, N is T tiles wide.
      const long long N = static_cast<long long>(T) * set.bn;
      for (long long K : set.ks) {
        const cake::tensor_arg t[] = {cake::tensor_view(A->address(), {M, K}), cake::tensor_view(B->address(), {N, K}),
                                      cake::tensor_view(D->address(), {M, N})};
        const double ms = median_ms([&](CUstream st) { k.launch(t, {}, st); }, g_quick ? 5 : 20, true);
        std::printf("gemm BN=%3d stages %d cluster %d  T=%d  %lldx%lldx%lld  %.4f ms\n", set.bn, set.stages, set.cluster, T, M, N, K, ms);
        rows.push_back("{\"bn\": " + std::to_string(set.bn) + ", \"stages\": " + std::to_string(set.stages) + ", \"cluster\": " + std::to_string(set.cluster) +
                       ", \"tiles_per_cta\": " + std::to_string(T) + ", \"m\": " + std::to_string(M) + ", \"n\": " + std::to_string(N) + ", \"k\": " +
                       std::to_string(K) + ", \"kblocks\": " + std::to_string(K / 64) + ", \"ms\": " + num(ms, 5) + "}");
      }
    }
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json = "cost_calibration.json", driver_version = "unknown", only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) json = argv[++i];
    else if (a == "--driver" && i + 1 < argc) driver_version = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--quick") g_quick = true;
    else if (a == "--precompile") g_precompile = true;
    else {
      std::fprintf(stderr, "cake_cost_calibrate: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  const auto want = [&](const char* part) { return only.empty() || only.find(part) != std::string::npos; };
  try {
    if (!g_precompile && !jit::driver::available()) {
      std::printf("cake_cost_calibrate: no GPU: %s\n", jit::driver::unavailable_reason().c_str());
      return 77;
    }
    const auto t0 = std::chrono::steady_clock::now();
    json_out out;
    std::vector<std::string> wg, tma, hbm, gemm;
    std::string max_clusters;
    if (want("wgmma")) wg = run_wgmma();
    if (want("tma")) tma = run_tma();
    if (want("hbm")) hbm = run_hbm();
    if (want("gemm")) gemm = run_gemm(max_clusters);
    if (g_precompile) {
      std::printf("cake_cost_calibrate: every kernel is in the JIT cache (%.1f s)\n",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      return 0;
    }
    const auto& dev = jit::driver::get().device(0);
    std::ostringstream head;
    head << "{\n  \"schema\": \"cake.cost-calibration-raw/1\",\n  \"gpu\": \"" << dev.name << "\", \"sm\": \"sm_90a\", \"sm_count\": " << dev.sm_count
         << ", \"l2_bytes\": " << dev.l2_bytes << ", \"smem_optin_per_block\": " << dev.smem_optin_per_block << ",\n  \"driver\": \""
         << driver_version << "\", \"cuda\": \"" << dev.driver_version / 1000 << "." << dev.driver_version % 1000 / 10 << "\", \"date\": \""
         << cake_bench::today() << "\",\n  \"command\": \"" << cake_bench::json_escape(cake_bench::command_line(argc, argv)) << "\",\n"
         << "  \"method\": \"CUDA events, median of 5 (wgmma, tma) / 10 (hbm) / 20 (gemm, L2 flushed before each run) launches after one warm-up\",\n";
    out.s << head.str();
    out.first_section = true;
    out.s << "  \"max_active_clusters\": [" << max_clusters << "],\n";
    out.section("wgmma", wg);
    out.section("tma", tma);
    out.section("hbm", hbm);
    out.section("gemm", gemm);
    out.s << "\n}\n";
    std::ofstream(json) << out.s.str();
    std::printf("cake_cost_calibrate: wrote %s (%.1f s)\n", json.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cake_cost_calibrate: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
