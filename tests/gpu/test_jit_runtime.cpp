// The JIT runtime on a real GPU: hand-written kernels are built with NVRTC, loaded through the dlopen'ed
// driver, launched with cuLaunchKernelEx and checked against the host on fresh random inputs, with the
// outputs poisoned first. The sm_90a cases need a cc 9.0 device (the H200); elsewhere they say so and
// pass without checking.
#include <doctest/doctest.h>

#include "device_gate.hpp"

#include <bit>
#include <cstdint>
#include <vector>

#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>
#include <cake/jit.hpp>

using namespace cake::jit;
using namespace cake::harness;

namespace {

constexpr const char* vadd_source = R"(
extern "C" __global__ void __launch_bounds__(256) vadd(float* c, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

// Fills `words` words of dynamic shared memory, then each thread sums a strided set of them in reverse.
constexpr const char* big_smem_source = R"(
extern "C" __global__ void big_smem(unsigned* out, unsigned words) {
  extern __shared__ unsigned buf[];
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) buf[i] = i * 2654435761u;
  __syncthreads();
  unsigned acc = 0;
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) acc += buf[words - 1 - i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
)";

constexpr const char* cluster_source = R"(
extern "C" __global__ void cluster_ranks(unsigned* out) {
  unsigned rank, count;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(count));
  if (threadIdx.x == 0) out[blockIdx.x] = (count << 16) | rank;
}
)";

// One 64 x 32 bf16 box per CTA, loaded by TMA (cp.async.bulk.tensor + mbarrier tx-count) and written
// out whole, including the part of the box that falls outside the tensor (TMA fills it with zeros).
// With `swizzled`, the map uses 128B swizzle and the copy-out undoes it: 16-B chunk j of row r sits at
// chunk j ^ (r % 8) (hardware-facts §2). The wait gives up after 2 s and flags status bit 0, so a
// mistake cannot hang the GPU; bit 1 flags a tile that is not 1024-B aligned.
constexpr const char* tma_source = R"(
struct alignas(64) tensor_map_param { unsigned long long bits[16]; };

extern "C" __global__ void __launch_bounds__(128) tma_tile(const __grid_constant__ tensor_map_param tmap,
                                                           unsigned short* out, unsigned* status, int swizzled) {
  constexpr int box_x = 64, box_y = 32;
  __shared__ __align__(1024) unsigned short tile[box_y * box_x];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned tile_addr = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  const unsigned bar_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    if (tile_addr % 1024 != 0) atomicOr(status, 2u);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(bar_addr), "r"(box_x * box_y * 2) : "memory");
    const int x0 = blockIdx.x * box_x, y0 = blockIdx.y * box_y;
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(tile_addr), "l"(reinterpret_cast<unsigned long long>(&tmap)), "r"(x0), "r"(y0), "r"(bar_addr)
                 : "memory");
  }
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  unsigned done = 0;
  while (!done) {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar_addr) : "memory");
    if (!done) {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      if (now - start > 2000000000ull) { atomicOr(status, 1u); return; }
    }
  }
  for (int i = threadIdx.x; i < box_y * box_x; i += blockDim.x) {
    const int r = i / box_x, c = i % box_x;
    const int at = swizzled ? r * box_x + (((c / 8) ^ (r % 8)) * 8) + c % 8 : i;
    out[(blockIdx.y * box_y + r) * (gridDim.x * box_x) + blockIdx.x * box_x + c] = tile[at];
  }
}
)";

const device_info& device0() { return driver::get().device(0); }
bool is_cc90() { return device0().cc_major == 9 && device0().cc_minor == 0; }

void synchronize(const char* what) {
  const auto& d = driver::get();
  d.check(d.cuCtxSynchronize(), "cuCtxSynchronize", what);
}

launch_config grid_1d(unsigned blocks, unsigned threads) {
  launch_config c;
  c.grid = {blocks, 1, 1};
  c.block = {threads, 1, 1};
  return c;
}

// Runs vadd on fresh inputs through k and returns the number of wrong elements (bitwise).
int vadd_mismatches(const kernel& k, bool pdl) {
  auto rng = random_source::fresh();
  INFO("seed " << rng.seed() << " (CAKE_SEED reproduces it)");
  const int n = 1000003;  // not a multiple of the block: the tail is guarded
  const auto a = random_vector<float>(n, rng, {distribution::normal, 3.0f});
  const auto b = random_vector<float>(n, rng, {distribution::uniform, 0.5f});
  auto da = to_device(a), db = to_device(b);
  device_buffer dc(n * sizeof(float));
  dc.fill_u32(0xffffffffu);  // NaN: an element the kernel misses cannot look right
  // Uploads and the memset run on the legacy stream, which a non-blocking stream does not wait for.
  synchronize("vadd inputs");
  auto cfg = grid_1d((n + 255) / 256, 256);
  const auto& d = driver::get();
  CUstream stream = nullptr;
  if (pdl) {  // on a stream of its own, with the programmatic-stream-serialization attribute
    d.check(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", "vadd");
    cfg.stream = stream;
    cfg.programmatic_stream_serialization = true;
  }
  launch_with(k, cfg, dc.get(), da.get(), db.get(), n);
  if (stream) {
    d.check(d.cuStreamSynchronize(stream), "cuStreamSynchronize", "vadd");
    d.check(d.cuStreamDestroy(stream), "cuStreamDestroy", "vadd");
  }
  synchronize("vadd");
  const auto c = dc.download<float>();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += std::bit_cast<std::uint32_t>(c[i]) != std::bit_cast<std::uint32_t>(a[i] + b[i]);
  return wrong;
}

}  // namespace

TEST_CASE("runtime: an sm_90a vector add is built, loaded as CUBIN, launched and exact") {
  if (!cake_gpu_test::require_device(9, 0, true, "the sm_90a vector add")) return;
  const auto art = build(vadd_source, "vadd", "sm_90a");
  INFO(art.diagnostics());
  REQUIRE(art.ok);
  const auto m = module::load(art);
  CHECK(m.choice().kind == image_kind::cubin);
  const auto k = m.get_kernel("vadd");
  CHECK(k.max_threads_per_block() == 256);
  CHECK(vadd_mismatches(k, false) == 0);
  CHECK(vadd_mismatches(k, true) == 0);  // with the programmatic-stream-serialization attribute
}

TEST_CASE("runtime: sm_80 code follows the compatibility rule (PTX JIT on newer devices)") {
  const auto art = build(vadd_source, "vadd", "sm_80");
  REQUIRE(art.ok);
  const auto expected = choose_image(arch::sm_80, device0(), true, true);
  if (expected.kind == image_kind::refuse) {
    CHECK_THROWS_WITH_AS(module::load(art), doctest::Contains(expected.reason.c_str()), cake::jit::error);
    return;
  }
  const auto m = module::load(art);
  CHECK(m.choice().kind == expected.kind);
  CHECK(vadd_mismatches(m.get_kernel("vadd"), false) == 0);
}

TEST_CASE("runtime: code for another arch-specific target is refused with the device named") {
  const auto& dev = device0();
  const char* other = (dev.cc_major == 10 && dev.cc_minor == 0) ? "sm_90a" : "sm_100a";
  const auto art = build(vadd_source, "vadd", other);
  REQUIRE(art.ok);
  const std::string expected = std::string(other) + " code cannot run on " + dev.describe();
  CHECK_THROWS_WITH_AS(module::load(art), doctest::Contains(expected.c_str()), cake::jit::error);
}

TEST_CASE("runtime: an unknown kernel name is a clear error") {
  const auto art = build(vadd_source, "vadd", "sm_80");
  REQUIRE(art.ok);
  if (choose_image(arch::sm_80, device0(), true, true).kind == image_kind::refuse) return;
  CHECK_THROWS_WITH_AS(module::load(art).get_kernel("vadd_typo"), doctest::Contains("no kernel named 'vadd_typo'"),
                       cake::jit::error);
}

TEST_CASE("runtime: dynamic shared memory above 48 KiB is opted in, beyond the device's limit is refused") {
  if (!cake_gpu_test::require_device(9, 0, true, "dynamic shared memory above 48 KiB (sm_90a limits)")) return;
  const auto art = build(big_smem_source, "big_smem", "sm_90a");
  REQUIRE(art.ok);
  const auto k = load_kernel(art);
  const unsigned threads = 256;
  for (unsigned bytes : {200u * 1024, 100u * 1024, 16u * 1024}) {
    CAPTURE(bytes);
    const unsigned words = bytes / 4;
    device_buffer out(2 * threads * sizeof(unsigned));
    out.fill_u32(0xdeadbeefu);
    auto cfg = grid_1d(2, threads);
    cfg.dynamic_smem = bytes;
    launch_with(k, cfg, out.get(), words);
    synchronize("big_smem");
    const auto got = out.download<unsigned>();
    int wrong = 0;
    for (unsigned t = 0; t < 2 * threads; ++t) {
      unsigned acc = 0;
      for (unsigned i = t % threads; i < words; i += threads) acc += (words - 1 - i) * 2654435761u;
      wrong += got[t] != acc;
    }
    CHECK(wrong == 0);
  }
  auto cfg = grid_1d(1, threads);
  cfg.dynamic_smem = static_cast<unsigned>(device0().smem_optin_per_block - k.static_smem_bytes()) + 16;
  device_buffer out(threads * sizeof(unsigned));
  CHECK_THROWS_WITH_AS(launch_with(k, cfg, out.get(), 1u), doctest::Contains("B per block after opt-in"),
                       cake::jit::error);
}

TEST_CASE("runtime: cluster launches, portable (2) and non-portable (16)") {
  if (!cake_gpu_test::require_device(9, 0, true, "cluster launches")) return;
  const auto art = build(cluster_source, "cluster_ranks", "sm_90a");
  REQUIRE(art.ok);
  const auto k = load_kernel(art);
  const unsigned blocks = 32;
  for (unsigned size : {2u, 16u}) {
    CAPTURE(size);
    device_buffer out(blocks * sizeof(unsigned));
    out.fill_u32(0xffffffffu);
    auto cfg = grid_1d(blocks, 32);
    cfg.cluster = {size, 1, 1};
    launch_with(k, cfg, out.get());
    synchronize("cluster_ranks");
    const auto got = out.download<unsigned>();
    for (unsigned b = 0; b < blocks; ++b) CHECK(got[b] == ((size << 16) | (b % size)));
  }
  auto bad = grid_1d(3, 32);
  bad.cluster = {2, 1, 1};
  device_buffer out(4 * sizeof(unsigned));
  CHECK_THROWS_WITH_AS(launch_with(k, bad, out.get()), doctest::Contains("grid (3, 1, 1) is not a multiple of cluster (2, 1, 1)"),
                       cake::jit::error);
}

TEST_CASE("runtime: a TMA tile load round-trips, ragged tail boxes zero-filled, plain and 128B-swizzled") {
  if (!cake_gpu_test::require_device(9, 0, true, "TMA tile loads")) return;
  const auto art = build(tma_source, "tma_tile", "sm_90a");
  INFO(art.diagnostics());
  REQUIRE(art.ok);
  const auto k = load_kernel(art);

  const int rows = 100, cols = 72;             // 100 = 3 x 32 + 4, 72 = 64 + 8: both tails ragged
  const int grid_x = 2, grid_y = 4, box_x = 64, box_y = 32;
  const int out_cols = grid_x * box_x, out_rows = grid_y * box_y;
  auto rng = random_source::fresh();
  INFO("seed " << rng.seed());
  const auto g = random_vector<host_bf16>(rows * cols, rng, {distribution::normal, 1.0f});
  const auto dg = to_device(g);

  for (auto swizzle : {tma_swizzle::none, tma_swizzle::b128}) {
    const int swizzled = swizzle == tma_swizzle::b128;
    CAPTURE(swizzled);
    tensor_map_spec spec;
    spec.dtype = tma_dtype::bf16;
    spec.rank = 2;
    spec.global_address = dg.address();
    spec.global_dims = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows)};
    spec.global_strides_bytes = {static_cast<std::uint64_t>(cols) * 2};
    spec.box_dims = {static_cast<std::uint32_t>(box_x), static_cast<std::uint32_t>(box_y)};
    spec.swizzle = swizzle;
    const CUtensorMap map = encode_tensor_map(spec);

    device_buffer out(out_rows * out_cols * 2);
    out.fill_u32(0xffffffffu);  // 0xffff: a bf16 NaN that no element of g or zero fill can equal
    device_buffer status(sizeof(unsigned));
    status.fill_u32(0);
    launch_config cfg;
    cfg.grid = {static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y), 1};
    cfg.block = {128, 1, 1};
    launch_with(k, cfg, map, out.get(), status.get(), swizzled);
    synchronize("tma_tile");
    REQUIRE(status.download<unsigned>()[0] == 0);  // bit 0: barrier timeout, bit 1: misaligned tile
    const auto got = out.download<std::uint16_t>();
    int wrong = 0, zero_filled = 0;
    for (int y = 0; y < out_rows; ++y)
      for (int x = 0; x < out_cols; ++x) {
        const bool inside = y < rows && x < cols;
        const std::uint16_t want = inside ? g[y * cols + x].bits : 0;
        zero_filled += !inside;
        wrong += got[y * out_cols + x] != want;
      }
    CHECK(zero_filled == out_rows * out_cols - rows * cols);
    CHECK(wrong == 0);
  }
}

TEST_CASE("timing harness: samples and statistics of a real kernel with the L2 flushed") {
  const auto art = build(vadd_source, "vadd", is_cc90() ? "sm_90a" : "sm_80");
  REQUIRE(art.ok);
  if (choose_image(art.target, device0(), true, true).kind == image_kind::refuse) return;
  const auto k = load_kernel(art);
  const int n = 1 << 24;
  device_buffer a(n * 4), b(n * 4), c(n * 4);
  a.fill_u32(0x3f800000u);
  b.fill_u32(0x40000000u);
  timing_options o;
  o.warmup = 2;
  o.runs = 20;
  const auto r = time_gpu(
      [&](CUstream s) {
        auto cfg = grid_1d(n / 256, 256);
        cfg.stream = s;
        launch_with(k, cfg, c.get(), a.get(), b.get(), n);
      },
      o);
  REQUIRE(r.samples_ms.size() == 20);
  for (double s : r.samples_ms) CHECK(s > 0);
  CHECK(r.min_ms <= r.p10_ms);
  CHECK(r.p10_ms <= r.median_ms);
  CHECK(r.median_ms <= r.p90_ms);
  CHECK(r.p90_ms <= r.max_ms);
  CHECK(r.flush_bytes >= 2 * static_cast<std::size_t>(device0().l2_bytes));
  // 3 x 64 MiB of traffic cannot take less than ~10 us on any current GPU, nor a second.
  CHECK(r.median_ms > 0.01);
  CHECK(r.median_ms < 1000);
  const auto out = c.download<float>(16);
  for (float v : out) CHECK(v == 3.0f);
}
