// Unit tests for the embedded device headers (include/cake/device/embedded.hpp):
//  1. embedded.hpp matches the .cuh files on disk (stale embedding fails with the regeneration command);
//  2. every wrapper of every header is used by a test kernel below (so nothing escapes assembly);
//  3. NVRTC compiles each embedded header, through the embedded copies only, to CUBIN for its target
//     (sm_80 / sm_90a / sm_100a), so ptxas validates every inline-asm string, and the PTX contains
//     every expected instruction;
//  4. sm_90-only helpers are compile errors, not silent no-ops, when compiled for sm_80 (the sm_80 mbarrier
//     forms are in sm80.cuh; try_wait, expect_tx and remote arrives in sm90.cuh).
#include <doctest/doctest.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cake/device/embedded.hpp"

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// $CUDA/include and $CUDA/include/cccl: from CUDA_HOME / CUDA_PATH, else next to the loaded libnvrtc.
// The device headers need no system header, so an empty result only drops the -I options.
std::vector<std::string> cuda_include_dirs() {
  std::vector<fs::path> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) && info.dli_fname)
    roots.push_back(fs::path(info.dli_fname).parent_path().parent_path());
  for (const auto& r : roots) {
    std::error_code ec;
    if (fs::exists(r / "include" / "nvrtc.h", ec)) return {(r / "include" / "cccl").string(), (r / "include").string()};
  }
  return {};
}

struct nvrtc_out {
  bool ok = false;
  std::string log;
  std::string ptx;
  size_t cubin_bytes = 0;
};

// Compile `source` for `arch` (e.g. "sm_90a") with the embedded headers as the only Cake headers.
nvrtc_out nvrtc_compile(const std::string& source, const std::string& arch) {
  std::vector<std::string> names, texts;
  for (const auto& h : cake::device::embedded_headers) {
    names.emplace_back(h.name);
    texts.emplace_back(h.source);
  }
  std::vector<const char*> name_ptrs, text_ptrs;
  for (size_t i = 0; i < names.size(); ++i) {
    name_ptrs.push_back(names[i].c_str());
    text_ptrs.push_back(texts[i].c_str());
  }
  nvrtc_out out;
  nvrtcProgram prog{};
  if (nvrtcCreateProgram(&prog, source.c_str(), "device_test.cu", static_cast<int>(names.size()), text_ptrs.data(),
                         name_ptrs.data()) != NVRTC_SUCCESS) {
    out.log = "nvrtcCreateProgram failed";
    return out;
  }
  std::vector<std::string> opts = {"-std=c++20", "-default-device", "--gpu-architecture=" + arch};
  for (const auto& dir : cuda_include_dirs()) opts.push_back("--include-path=" + dir);
  std::vector<const char*> opt_ptrs;
  for (const auto& o : opts) opt_ptrs.push_back(o.c_str());
  const nvrtcResult res = nvrtcCompileProgram(prog, static_cast<int>(opt_ptrs.size()), opt_ptrs.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  out.log.resize(log_size);
  if (log_size) nvrtcGetProgramLog(prog, out.log.data());
  if (res == NVRTC_SUCCESS) {
    size_t ptx_size = 0;
    nvrtcGetPTXSize(prog, &ptx_size);
    out.ptx.resize(ptx_size);
    nvrtcGetPTX(prog, out.ptx.data());
    nvrtcGetCUBINSize(prog, &out.cubin_bytes);
    out.ok = out.cubin_bytes > 0;
  }
  nvrtcDestroyProgram(&prog);
  return out;
}

// Names of the helper functions a header defines (every `__forceinline__ [constexpr] T name(`).
std::set<std::string> wrapper_names(std::string_view source) {
  std::set<std::string> names;
  static const std::regex fn(R"(__forceinline__\s+(?:constexpr\s+)?\w+\s+(\w+)\s*\()");
  const std::string s(source);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), fn); it != std::sregex_iterator(); ++it)
    names.insert((*it)[1].str());
  return names;
}

bool uses(const std::string& kernel, const std::string& fn) {
  return kernel.find(fn + "(") != std::string::npos || kernel.find(fn + "<") != std::string::npos;
}

// ---- test kernels: each uses every wrapper of its header at least once ------------------------------

const std::string common_kernel = R"(
#include "cake/device/common.cuh"
using namespace cake_dev;
extern "C" __global__ void __launch_bounds__(128, 1) k_common(unsigned* out, float x) {
  __shared__ unsigned s[128];
  u32 v = thread_idx() + lane_id() + warp_idx() + warpgroup_idx() + warp_in_warpgroup() + thread_in_warpgroup();
  v += elect_one_sync() ? 1u : 0u;
  v += smem_addr(&s[threadIdx.x]);
  if (warp_idx() == 0) named_barrier_arrive(1, 64);
  else if (warp_idx() == 1) named_barrier_sync(1, 64);
  named_barrier_sync(2, 128);
  if (globaltimer_ns() == 0) trap();
  v += pack_bf16x2(x, x + 1.0f) + pack_f16x2(x, 2.0f * x) + f32_to_tf32(x);
  v += atom_inc_acq_rel_gpu(out + 4, 3u);
#if __CUDA_ARCH__ >= 900
  griddep_wait();
  griddep_launch_dependents();
  v += cluster_ctarank() + cluster_nctarank() + cluster_id_x() + cluster_count_x();
  v += mapa_shared(smem_addr(s), 0);
  cluster_arrive_release();
  cluster_wait_acquire();
  cluster_arrive_relaxed();
  cluster_wait_acquire();
  cluster_sync();
#endif
  out[threadIdx.x] = v;
}
)";

const std::string sm80_kernel = R"(
#include "cake/device/sm80.cuh"
using namespace cake_dev;
extern "C" __global__ void k_sm80(const unsigned short* g, float* out) {
  __shared__ alignas(128) unsigned short s[32 * 64];
  const u32 sa = smem_addr(s) + lane_id() * 16u;
  cp_async_ca<4>(sa, g, 4);
  cp_async_ca<8>(sa, g, 8);
  cp_async_ca<16>(sa, g, 16);
  cp_async_cg_16(sa + 512, g + 8, 0);
  cp_async_commit();
  cp_async_wait<0>();
  cp_async_wait_all();
  __shared__ alignas(8) unsigned long long bars[2];
  const u32 full = smem_addr(&bars[0]), other = smem_addr(&bars[1]);
  if (threadIdx.x == 0) {
    mbar_init(full, 32);
    mbar_init(other, 1);
  }
  __syncthreads();
  cp_async_cg_16(sa + 1024, g + 16, 16);
  cp_async_mbar_arrive_noinc(full);
  mbar_wait_test(full, 0);
  if (!mbar_wait_test_until(full, 0, globaltimer_ns() + 2000000000ull)) trap();
  if (threadIdx.x == 0) mbar_arrive(other);
  float probe = mbar_test_wait(other, 0) ? 1.f : 0.f;
  __syncthreads();
  if (threadIdx.x == 0) mbar_inval(other);
  u32 a1[1], a2[2], a4[4], t1[1], t2[2], t4[4];
  ldmatrix_x1(a1, sa);
  ldmatrix_x2(a2, sa);
  ldmatrix_x4(a4, sa);
  ldmatrix_x1_trans(t1, sa);
  ldmatrix_x2_trans(t2, sa);
  ldmatrix_x4_trans(t4, sa);
  float c[4] = {0.f, 0.f, 0.f, 0.f}, d[4], e[4], f[4];
  mma_m16n8k16_bf16_f32(d, a4, a2, c);
  mma_m16n8k16_f16_f32(e, t4, t2, d);
  mma_m16n8k8_tf32_f32(f, a4, t2, e);
#if __CUDA_ARCH__ >= 890
  mma_m16n8k32_e4m3_f32(f, t4, a2, f);
#endif
  out[threadIdx.x] = f[0] + f[1] + f[2] + f[3] + float(a1[0] + t1[0]) + probe;
}
)";

const std::string compute_kernel = R"(
#include "cake/device/compute.cuh"
using namespace cake_dev;
extern "C" __global__ void k_compute(const unsigned* in, float* out, long long n) {
  const u32 v = in[threadIdx.x];
  float x = lo_bf16(v) + hi_bf16(v) + lo_f16(v) + hi_f16(v) + bf16_to_f32(f32_to_bf16(1.5f)) + f16_to_f32(f32_to_f16(2.5f));
  x = exp2f_fast(x) + exp2f_poly(x) + log2f_fast(x) + tanhf_fast(x) + rcpf(x) + expf_fast(x) + logf_fast(x);
  x += sigmoidf(x) + siluf(x) + gelu_tanhf(x) + gelu_erff(x) + reluf(x);
  float mx = warp_max<1, 16>(x), sm = warp_sum<1, 16>(x), mn = warp_min<1, 2>(x);
  float lo = x, hi = x;
  int ilo = int(threadIdx.x), ihi = int(threadIdx.x);
  warp_argmin<1, 16>(lo, ilo);
  warp_argmax<1, 16>(hi, ihi);
  ilo += warp_min_int<1, 2>(ihi);
  const long long trips = min_ll(n, 64) + max_ll(n, 1);
  red_add_f32(out + 1, mx + sm + mn + lo + hi + float(ilo + ihi + trips));
  red_add_s64_rn(reinterpret_cast<long long*>(out + 8192), x);  // out[8192..8193] as one i64 (8-byte aligned)
#if __CUDA_ARCH__ >= 900
  red_add_bf16x2(out + 2, v);
  red_add_bf16(out + 3, static_cast<u16>(v >> 16));
  {
    const u32 g[4] = {v, v + 1, v + 2, v + 3};
    red_add_f32x2(out + 8 + 2 * threadIdx.x, g[0], g[1]);
    red_add_f32x4(out + 128 + 4 * threadIdx.x, g[0], g[1], g[2], g[3]);
    red_add_f32_group<4>(out + 512 + 4 * threadIdx.x, g, n);
    red_add_f32_group<2>(out + 1024 + 2 * threadIdx.x, g, n);
  }
#endif
  out[threadIdx.x + 4] = x;
  // 8-bit floats: both formats, both directions (sm_89+: cvt .e4m3x2 / .e5m2x2; sm_80: fp8_software's to_f32 / from_f32)
  {
    float a, b;
    fp8x2_to_f32<4>(v, a, b);
    const u32 q = f32x2_to_fp8<4>(a, b) | (f32x2_to_fp8<5>(fp8_to_f32<5>(v, 2), b) << 16);
    out[threadIdx.x + 2048] = fp8_to_f32<4>(q, 3) + __uint_as_float(fp8x2_to_f16x2<5>(q >> 16)) +
                              fp8_software::to_f32<5>(fp8_software::from_f32<4>(x) & 0xffu);  // (the sm_80 forms, on every target)
  }
  // 16-, 8- and 4-byte vector accesses (aligned by the caller)
  u32 w4[4], w2[2], w1[1];
  ld_global_words<4>(w4, in + 4 * threadIdx.x);
  ld_global_words<2>(w2, in + 2 * threadIdx.x + 256);
  ld_global_words<1>(w1, in + threadIdx.x + 512);
  w4[0] += w2[1] + w1[0];
  st_global_words<4>(reinterpret_cast<u32*>(out) + 1024 + 4 * threadIdx.x, w4);
  st_global_words<2>(reinterpret_cast<u32*>(out) + 2048 + 2 * threadIdx.x, w2);
  st_global_words<1>(reinterpret_cast<u32*>(out) + 3072 + threadIdx.x, w1);
}
)";

const std::string sm90_kernel = R"(
#include "cake/device/sm90.cuh"
using namespace cake_dev;
struct alignas(64) tensor_map { unsigned long long bytes[16]; };
extern "C" __global__ void __launch_bounds__(384, 1)
k_sm90(const __grid_constant__ tensor_map tm, const __grid_constant__ tensor_map tm3, float* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const u32 base = smem_addr(smem);
  const u32 bar = base + 16384, bar2 = bar + 8;
  float acc = float(threadIdx.x);
  u32 acc_u = threadIdx.x;
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    mbar_init(bar2, 2);
    fence_mbarrier_init();
    prefetch_tensormap(&tm);
  }
  cluster_sync();
  if (warpgroup_idx() == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      const u64 pol = l2_policy_evict_last() ^ l2_policy_evict_first();
      mbar_arrive_expect_tx(bar, 5 * 4096);
      tma_load_2d(base, &tm, bar, 0, 0);
      tma_load_2d_multicast(base + 4096, &tm, bar, 0x3, 64, 0);
      tma_load_2d_hint(base + 8192, &tm, bar, pol, 0, 64);
      tma_load_3d(base + 12288, &tm3, bar, 0, 0, 1);
      tma_load_3d_multicast(base, &tm3, bar, 0x1, 0, 0, 2);
      tma_load_4d(base, &tm3, bar, 0, 0, 1, 2);
      tma_load_5d(base, &tm3, bar, 0, 0, 1, 2, 3);
      tma_prefetch_l2_2d(&tm, 0, 128);
      tma_prefetch_l2_3d(&tm3, 0, 0, 1);
      tma_prefetch_l2_4d(&tm3, 0, 0, 1, 2);
      tma_prefetch_l2_5d(&tm3, 0, 0, 1, 2, 3);
      mbar_expect_tx(bar2, 0);
      mbar_arrive_count(bar2, 2);
      mbar_wait_cluster(bar2, 0);
      mbar_arrive(bar2);
      mbar_arrive_cluster(mapa_shared(bar2, cluster_ctarank() ^ 1u));
      mbar_arrive_cluster_release(mapa_shared(bar2, cluster_ctarank() ^ 1u));
      mbar_arrive_cluster_all_release(bar2, 2u);
      mbar_arrive_cluster_all_release_smem(bar2, 2u);
      mbar_arrive_cluster_all_relaxed(bar2, 2u);
      acc += ld_shared_cluster_f32(mapa_shared(base + 16400, cluster_ctarank() ^ 1u));
      const float4 q = ld_shared_cluster_v4_f32(mapa_shared(base + 16400, cluster_ctarank() ^ 1u));
      acc += q.x + q.w;
    }
  } else {
    setmaxnreg_inc<232>();
    acc += elect_one_sync() ? 1.f : 0.f;
    mbar_wait(bar, 0);
    if (!mbar_wait_until(bar, 0, globaltimer_ns() + 2000000000ull)) trap();
    if (!mbar_wait_cluster_until(bar, 0, globaltimer_ns() + 2000000000ull)) trap();
    acc += mbar_try_wait_hint(bar, 0, 0x989680u) ? 1.f : 0.f;
    mbar_wait_hint(bar, 0, 0x989680u);
    acc += mbar_test_wait(bar, 0) ? 1.f : 0.f;
    acc += (mbar_try_wait(bar, 0) && mbar_try_wait_cluster(bar, 0)) ? 1.f : 0.f;
    const u64 desc = make_wgmma_desc(base, 16, 1024, wgmma_swizzle_128b);
    wgmma_fence_operand(acc);
    wgmma_fence_operand(acc_u);
    wgmma_fence();
    wgmma_commit();
    wgmma_wait<0>();
    acc += float(desc & 0xff);
    const u32 row = base + (threadIdx.x % 32u) * 16u;
    stmatrix_x1(row, acc_u);
    stmatrix_x2(row, acc_u, acc_u + 1);
    stmatrix_x4(row, acc_u, acc_u + 1, acc_u + 2, acc_u + 3);
    stmatrix_x1_trans(row, acc_u);
    stmatrix_x2_trans(row, acc_u, acc_u);
    stmatrix_x4_trans(row, acc_u, acc_u, acc_u, acc_u);
    fence_proxy_async_smem();
    named_barrier_sync(1, 256);
    if (threadIdx.x == 128) {
      tma_store_2d(&tm, base, 0, 0);
      tma_store_3d(&tm3, base, 0, 0, 0);
      tma_store_4d(&tm3, base, 0, 0, 0, 1);
      tma_store_5d(&tm3, base, 0, 0, 0, 1, 2);
      bulk_commit_group();
      bulk_wait_group_read<1>();
      bulk_wait_group<0>();
    }
  }
  if (threadIdx.x == 0) mbar_inval(bar2);
  cluster_sync();
  out[threadIdx.x] = acc;
}
)";

const std::string sm100_kernel = R"(
#include "cake/device/sm100.cuh"
using namespace cake_dev;
extern "C" __global__ void k_sm100_cg1(float* out) {
  __shared__ u32 tmem_slot;
  __shared__ alignas(8) u64 bar;
  if (warp_idx() == 0) tmem_alloc_cg1<128>(smem_addr(&tmem_slot));
  tcgen05_fence_before_sync();
  __syncthreads();
  tcgen05_fence_after_sync();
  const u32 taddr = tmem_slot;
  if (threadIdx.x == 0) {
    const u64 a = make_umma_smem_desc(0, 16, 1024, umma_swizzle_128b);
    const u32 idesc = make_umma_idesc(umma_d_f32, umma_ab_bf16, umma_ab_bf16, false, false, 128, 128);
    tcgen05_mma_f16_cg1(taddr, a, a + 64, idesc, 0);
    tcgen05_commit_cg1(smem_addr(&bar));
  }
  u32 r1[1], r2[2], r4[4], r8[8], r16[16];
  tmem_ld_32x32b_x1(r1, taddr);
  tmem_ld_32x32b_x2(r2, taddr + 1);
  tmem_ld_32x32b_x4(r4, taddr + 4);
  tmem_ld_32x32b_x8(r8, taddr + 8);
  tmem_ld_32x32b_x16(r16, taddr + 16);
  tmem_wait_ld();
  tmem_st_32x32b_x1(taddr + 32, r1);
  tmem_st_32x32b_x2(taddr + 34, r2);
  tmem_st_32x32b_x4(taddr + 36, r4);
  tmem_st_32x32b_x8(taddr + 40, r8);
  tmem_wait_st();
  __syncthreads();
  if (warp_idx() == 0) {
    tmem_relinquish_alloc_permit_cg1();
    tmem_dealloc_cg1<128>(taddr);
  }
  out[threadIdx.x] = float(r1[0] + r2[1] + r4[3] + r8[7] + r16[15]);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) k_sm100_cg2(float* out) {
  __shared__ u32 tmem_slot;
  __shared__ alignas(8) u64 bar;
  if (warp_idx() == 0) tmem_alloc_cg2<256>(smem_addr(&tmem_slot));
  tcgen05_fence_before_sync();
  cluster_sync();
  tcgen05_fence_after_sync();
  if (threadIdx.x == 0) tcgen05_commit_cg2_multicast(smem_addr(&bar), 0x3);
  cluster_sync();
  if (warp_idx() == 0) {
    tmem_relinquish_alloc_permit_cg2();
    tmem_dealloc_cg2<256>(tmem_slot);
  }
  out[threadIdx.x] = float(tmem_slot);
}
)";

struct header_case {
  std::string include_name;
  std::vector<std::pair<const std::string*, const char*>> kernels;  // (source, arch)
  std::vector<const char*> ptx_must_contain;
};

const std::vector<header_case>& cases() {
  static const std::vector<header_case> all = {
      {"cake/device/common.cuh",
       {{&common_kernel, "sm_80"}, {&common_kernel, "sm_90a"}, {&common_kernel, "sm_100a"}},
       {"%laneid", "bar.sync", "bar.arrive", "%globaltimer", "trap;", "cvt.rn.bf16x2.f32", "cvt.rn.f16x2.f32",
        "cvt.rna.tf32.f32", "atom.acq_rel.gpu.global.inc.u32"}},
      {"cake/device/compute.cuh",
       {{&compute_kernel, "sm_80"}, {&compute_kernel, "sm_90a"}, {&compute_kernel, "sm_100a"}},
       {"ex2.approx.ftz.f32", "lg2.approx.ftz.f32", "tanh.approx.f32", "rcp.rn.f32", "cvt.f32.f16", "cvt.rn.f16.f32",
        "shfl.sync.bfly.b32", "atom.global.add.f32", "ld.global.v4.u32", "ld.global.v2.u32", "st.global.v4.u32",
        "st.global.v2.u32"}},
      {"cake/device/sm80.cuh",
       {{&sm80_kernel, "sm_80"}, {&sm80_kernel, "sm_90a"}},
       {"cp.async.ca.shared.global", "cp.async.cg.shared.global", "cp.async.commit_group", "cp.async.wait_group 0",
        "cp.async.wait_all", "ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "mbarrier.init.shared::cta.b64", "mbarrier.inval.shared::cta.b64",
        "mbarrier.arrive.shared::cta.b64", "cp.async.mbarrier.arrive.noinc.shared::cta.b64", "mbarrier.test_wait.parity.shared::cta.b64"}},
      {"cake/device/sm90.cuh",
       {{&sm90_kernel, "sm_90a"}},
       {"mbarrier.init.shared::cta.b64", "mbarrier.inval.shared::cta.b64", "mbarrier.arrive.shared::cta.b64",
        "mbarrier.arrive.shared::cluster.b64", "mbarrier.arrive.release.cluster.shared::cluster.b64", "mbarrier.arrive.expect_tx.shared::cta.b64",
        "mbarrier.expect_tx.relaxed.cta.shared::cta.b64", "mbarrier.try_wait.parity.shared::cta.b64",
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64", "mbarrier.test_wait.parity.shared::cta.b64",
        "fence.mbarrier_init.release.cluster", "fence.proxy.async.shared::cta",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint",
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [",
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [",
        "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [",
        "createpolicy.fractional.L2::evict_last.b64", "createpolicy.fractional.L2::evict_first.b64",
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group",
        "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group", "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group",
        "cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read 1", "cp.async.bulk.wait_group 0",
        "prefetch.tensormap", "cp.async.bulk.prefetch.tensor.2d.L2.global.tile", "wgmma.fence.sync.aligned",
        "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0", "stmatrix.sync.aligned.m8n8.x1.shared.b16",
        "stmatrix.sync.aligned.m8n8.x2.shared.b16", "stmatrix.sync.aligned.m8n8.x4.shared.b16",
        "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16", "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "setmaxnreg.inc.sync.aligned.u32 232",
        "setmaxnreg.dec.sync.aligned.u32 40", "elect.sync", "mapa.shared::cluster.u32",
        "barrier.cluster.arrive.release.aligned", "barrier.cluster.wait.acquire.aligned", "ld.shared::cluster.f32"}},
      {"cake/device/sm100.cuh",
       {{&sm100_kernel, "sm_100a"}},
       {"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", "tcgen05.dealloc.cta_group::1.sync.aligned.b32",
        "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned", "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32",
        "tcgen05.dealloc.cta_group::2.sync.aligned.b32", "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned",
        "tcgen05.mma.cta_group::1.kind::f16", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
        "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync",
        "tcgen05.ld.sync.aligned.32x32b.x1.b32", "tcgen05.ld.sync.aligned.32x32b.x2.b32",
        "tcgen05.ld.sync.aligned.32x32b.x4.b32", "tcgen05.ld.sync.aligned.32x32b.x8.b32",
        "tcgen05.ld.sync.aligned.32x32b.x16.b32", "tcgen05.st.sync.aligned.32x32b.x1.b32",
        "tcgen05.st.sync.aligned.32x32b.x2.b32", "tcgen05.st.sync.aligned.32x32b.x4.b32",
        "tcgen05.st.sync.aligned.32x32b.x8.b32", "tcgen05.wait::ld.sync.aligned", "tcgen05.wait::st.sync.aligned"}},
  };
  return all;
}

}  // namespace

TEST_CASE("embedded device headers match the .cuh files on disk") {
  const fs::path dir = fs::path(CAKE_SOURCE_DIR) / "include" / "cake" / "device";
  std::set<std::string> on_disk;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".cuh") on_disk.insert("cake/device/" + e.path().filename().string());
  std::set<std::string> embedded;
  for (const auto& h : cake::device::embedded_headers) embedded.insert(std::string(h.name));
  INFO("regenerate with: python3 tools/gen/embed_device.py");
  CHECK(on_disk == embedded);
  for (const auto& h : cake::device::embedded_headers) {
    const fs::path file = fs::path(CAKE_SOURCE_DIR) / "include" / std::string(h.name);
    INFO("stale embedding of ", std::string(h.name), "; regenerate with: python3 tools/gen/embed_device.py");
    REQUIRE(fs::exists(file));
    CHECK(read_text(file) == std::string(h.source));
  }
}

TEST_CASE("embedded_source finds headers by include name and nothing else") {
  CHECK(cake::device::embedded_source("cake/device/sm90.cuh").find("namespace cake_dev") != std::string_view::npos);
  CHECK(cake::device::embedded_source("cake/device/sm90.cuh") == cake::device::sm90_cuh);
  CHECK(cake::device::embedded_source("sm90.cuh").empty());
  CHECK(cake::device::embedded_source("cake/device/nope.cuh").empty());
}

TEST_CASE("every device wrapper is exercised by a test kernel") {
  for (const auto& c : cases()) {
    const std::string_view src = cake::device::embedded_source(c.include_name);
    REQUIRE_MESSAGE(!src.empty(), c.include_name, " is not embedded");
    const auto names = wrapper_names(src);
    CHECK_MESSAGE(names.size() >= 5, c.include_name, ": wrapper scan found only ", names.size(), " functions");
    std::string all_kernels;
    for (const auto& [k, arch] : c.kernels) all_kernels += *k;
    // common.cuh helpers are also used by the other kernels; count those too for common.cuh only.
    if (c.include_name == "cake/device/common.cuh")
      for (const auto& other : cases())
        for (const auto& [k, arch] : other.kernels) all_kernels += *k;
    for (const auto& fn : names) {
      if (fn == "check_tmem_cols") continue;  // compile-time check, runs inside tmem_alloc/dealloc
      CHECK_MESSAGE(uses(all_kernels, fn), c.include_name, ": helper ", fn, " is not used by any test kernel");
    }
  }
}

TEST_CASE("NVRTC compiles every embedded device header to CUBIN for its target") {
  for (const auto& c : cases()) {
    for (const auto& kernel_and_arch : c.kernels) {
      const std::string arch = kernel_and_arch.second;
      const nvrtc_out r = nvrtc_compile(*kernel_and_arch.first, arch);
      INFO(c.include_name, " for ", arch, ":\n", r.log);
      REQUIRE(r.ok);
      CHECK(r.cubin_bytes > 0);
      for (const char* needle : c.ptx_must_contain) {
        CHECK_MESSAGE(r.ptx.find(needle) != std::string::npos, "PTX for ", arch, " lacks `", needle, "`");
      }
    }
  }
  // The sm_90 half of common.cuh appears only in sm_90a+ builds.
  const nvrtc_out c90 = nvrtc_compile(common_kernel, "sm_90a");
  REQUIRE(c90.ok);
  for (const char* needle : {"elect.sync", "griddepcontrol.wait", "griddepcontrol.launch_dependents", "%cluster_ctarank",
                             "%cluster_nctarank", "%clusterid.x", "%nclusterid.x", "mapa.shared::cluster.u32",
                             "barrier.cluster.arrive.release.aligned", "barrier.cluster.arrive.relaxed.aligned",
                             "barrier.cluster.wait.acquire.aligned"})
    CHECK_MESSAGE(c90.ptx.find(needle) != std::string::npos, "common.cuh PTX for sm_90a lacks `", needle, "`");
  // red.global.add.noftz.bf16x2 exists from sm_90 on: present in the sm_90a build of the compute kernel.
  const nvrtc_out k90 = nvrtc_compile(compute_kernel, "sm_90a");
  REQUIRE(k90.ok);
  CHECK(k90.ptx.find("red.global.add.noftz.bf16x2") != std::string::npos);
  CHECK(k90.ptx.find("red.global.add.noftz.bf16 ") != std::string::npos);
  // red.global.add.v2.f32 / .v4.f32 (PTX ISA 8.1, sm_90+): in the sm_90a build only.
  CHECK(k90.ptx.find("red.global.add.v2.f32") != std::string::npos);
  CHECK(k90.ptx.find("red.global.add.v4.f32") != std::string::npos);
  const nvrtc_out k80 = nvrtc_compile(compute_kernel, "sm_80");
  REQUIRE(k80.ok);
  CHECK(k80.ptx.find("red.global.add.v") == std::string::npos);
  // e4m3 mma.sync exists only from sm_89 on: present in the sm_90a build of the sm80 kernel.
  const nvrtc_out r90 = nvrtc_compile(sm80_kernel, "sm_90a");
  REQUIRE(r90.ok);
  CHECK(r90.ptx.find("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32") != std::string::npos);
}

TEST_CASE("sm_90 helpers are compile errors on sm_80, not silent no-ops") {
  const std::string cluster_on_sm80 = R"(
#include "cake/device/common.cuh"
extern "C" __global__ void k(unsigned* out) { out[0] = cake_dev::cluster_ctarank(); }
)";
  const nvrtc_out r = nvrtc_compile(cluster_on_sm80, "sm_80");
  CHECK_FALSE(r.ok);
  CHECK(r.log.find("cluster_ctarank") != std::string::npos);

  const std::string sm90_on_sm80 = R"(
#include "cake/device/sm90.cuh"
extern "C" __global__ void k() {}
)";
  const nvrtc_out r2 = nvrtc_compile(sm90_on_sm80, "sm_80");
  CHECK_FALSE(r2.ok);
  CHECK(r2.log.find("needs sm_90a or newer") != std::string::npos);

  // sm80.cuh's mbarrier waits spin on test_wait; the try_wait loop (sm90.cuh) is not there to call by mistake.
  const std::string try_wait_on_sm80 = R"(
#include "cake/device/sm80.cuh"
extern "C" __global__ void k() { __shared__ unsigned long long b; cake_dev::mbar_wait(cake_dev::smem_addr(&b), 0); }
)";
  const nvrtc_out r3 = nvrtc_compile(try_wait_on_sm80, "sm_80");
  CHECK_FALSE(r3.ok);
  CHECK(r3.log.find("mbar_wait") != std::string::npos);
}
