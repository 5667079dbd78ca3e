// cake/device/sm90.cuh — sm_90a (Hopper) device helpers: mbarrier with transaction counts, TMA
// (tile loads incl. multicast, stores, bulk groups, prefetch), proxy fences, wgmma descriptors and
// fences, stmatrix, setmaxnreg. Also valid for sm_100a except the wgmma group (sm_90a only [HF §3]).
// The wgmma.mma_async instruction itself has N/2 accumulator operands and is generated as text by
// cake/lower/ptx_text.hpp (cake::lower::ptx::wgmma_ss / wgmma_rs), not expanded here.
#pragma once
#include "cake/device/common.cuh"
#include "cake/device/sm80.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "cake/device/sm90.cuh needs sm_90a or newer (mbarrier tx-count, TMA, wgmma, setmaxnreg)"
#endif

namespace cake_dev {

// ---- mbarrier [HF §1] ---------------------------------------------------------------------------
// `bar` is always the 32-bit shared::cta address of an 8-byte aligned .b64 object (see smem_addr).
// init, inval, the plain arrive and test_wait exist from sm_80 on: they are in sm80.cuh. Here: the
// forms that need sm_90 (arrive with a count, remote arrives, tx-counts, try_wait, .cluster scope).

// mbarrier.arrive.shared::cta.b64 with count: `count` arrivals at once.
__device__ __forceinline__ void mbar_arrive_count(u32 bar, u32 count) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// mbarrier.arrive.shared::cluster.b64: one arrival on a barrier of another CTA of the cluster (default
// semantics: release at cta scope, as CUTLASS's ClusterBarrier::arrive(cta_id)); `remote_bar` comes from
// mapa_shared(bar, rank) [HF §1 Arrive]. Only arrive/expect_tx/complete_tx may target a remote barrier;
// waits must stay local [HF §1 hang causes 5]. This is the cheap form for pipeline releases: ptxas 13.0
// emits a bare SYNCS.ARRIVE for it, whereas .release.cluster adds MEMBAR.ALL.GPU before every arrive.
__device__ __forceinline__ void mbar_arrive_cluster(u32 remote_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote_bar) : "memory");
}
// mbarrier.arrive.release.cluster.shared::cluster.b64: remote arrive that also releases this thread's
// prior generic memory writes at cluster scope (costs a GPU-wide MEMBAR; use only where a peer reads
// data this thread wrote with ordinary stores).
__device__ __forceinline__ void mbar_arrive_cluster_release(u32 remote_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote_bar) : "memory");
}
// The same arrival on `bar`'s copy in every CTA of a cluster of `ctas`, as one release followed by relaxed
// arrivals: fence.release.cluster, then mbarrier.arrive.relaxed.cluster per CTA (a release pattern, PTX memory
// model). ptxas 13.0 emits one MEMBAR.ALL.GPU for the fence and bare SYNCS.ARRIVEs that pipeline, where one
// mbar_arrive_cluster_release per CTA waits out a GPU-wide MEMBAR (and the arrive before it) each time.
// mbarrier.arrive.relaxed.cluster on `bar`'s copy in each of the first `ctas` CTAs of the cluster: no ordering
// of its own; the callers below put the release fence before it.
__device__ __forceinline__ void mbar_arrive_cluster_all_relaxed(u32 bar, u32 ctas) {
  for (u32 q = 0; q < ctas; ++q)
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(mapa_shared(bar, q)) : "memory");
}
__device__ __forceinline__ void mbar_arrive_cluster_all_release(u32 bar, u32 ctas) {
  asm volatile("fence.release.cluster;" ::: "memory");
  mbar_arrive_cluster_all_relaxed(bar, ctas);
}
// As mbar_arrive_cluster_all_release where the only writes to hand over are this CTA's own shared memory
// (st.shared, ordered before the caller by a CTA barrier): fence.release.sync_restrict::shared::cta.cluster
// orders just those, and ptxas 13.0 emits no GPU-wide MEMBAR for it (MEMBAR.ALL.CTA and FENCE.VIEW.ASYNC.S).
__device__ __forceinline__ void mbar_arrive_cluster_all_release_smem(u32 bar, u32 ctas) {
  asm volatile("fence.release.sync_restrict::shared::cta.cluster;" ::: "memory");
  mbar_arrive_cluster_all_relaxed(bar, ctas);
}
// ld.shared::cluster.f32: a float from the shared memory of a CTA of the cluster (address from mapa).
__device__ __forceinline__ float ld_shared_cluster_f32(u32 cluster_addr) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(cluster_addr) : "memory");
  return v;
}
// ld.shared::cluster.v4.f32: four floats (16-byte aligned) from the shared memory of a CTA of the
// cluster; the cluster sum reads its scratch this way (a quarter of the instructions of the scalar form).
__device__ __forceinline__ float4 ld_shared_cluster_v4_f32(u32 cluster_addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(cluster_addr) : "memory");
  return v;
}
// mbarrier.arrive.expect_tx.shared::cta.b64: add `tx_bytes` to the expected transaction count, then
// arrive once. With TMA, `tx_bytes` is the full box bytes this CTA receives, out-of-bounds fill and
// multicast from peers included [HF §1 Measured, hang causes 1].
__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 tx_bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(tx_bytes) : "memory");
}
// mbarrier.expect_tx.relaxed.cta.shared::cta.b64: add to the expected tx count without arriving.
__device__ __forceinline__ void mbar_expect_tx(u32 bar, u32 tx_bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(tx_bytes) : "memory");
}
// mbarrier.try_wait.parity.shared::cta.b64 (acquire, cta): true once the phase with parity `parity`
// has completed; may return false after a system time limit, so callers loop [HF §1 Wait].
__device__ __forceinline__ bool mbar_try_wait(u32 bar, u32 parity) {
  u32 ok;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
// mbarrier.try_wait.parity with a suspend-time hint in ns (CUTLASS uses 0x989680) [HF §1 Wait].
__device__ __forceinline__ bool mbar_try_wait_hint(u32 bar, u32 parity, u32 suspend_ns) {
  u32 ok;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity), "r"(suspend_ns)
      : "memory");
  return ok != 0;
}
// mbarrier.try_wait.parity.acquire.cluster: as mbar_try_wait, acquiring at cluster scope; use it where
// the arrivals came from other CTAs (remote consumer releases) and this thread then writes their smem.
__device__ __forceinline__ bool mbar_try_wait_cluster(u32 bar, u32 parity) {
  u32 ok;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
// Loop on try_wait.parity until the phase completes. Consumers of a fresh "full" barrier start with
// parity 0; producers of a fresh "empty" barrier start with parity 1, which passes at once [HF §1 Phase].
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
// As mbar_wait, passing a suspend-time hint (ns) to each try_wait, e.g. 0x989680 as CUTLASS does.
__device__ __forceinline__ void mbar_wait_hint(u32 bar, u32 parity, u32 suspend_ns) {
  while (!mbar_try_wait_hint(bar, parity, suspend_ns)) {
  }
}
// Cluster-scope acquiring variant of mbar_wait.
__device__ __forceinline__ void mbar_wait_cluster(u32 bar, u32 parity) {
  while (!mbar_try_wait_cluster(bar, parity)) {
  }
}
// Debug variant: loop on try_wait.parity until the phase completes (true) or %globaltimer passes
// `deadline_ns` (false), so a hang becomes a reportable error instead of a stuck GPU.
__device__ __forceinline__ bool mbar_wait_until(u32 bar, u32 parity, u64 deadline_ns) {
  while (!mbar_try_wait(bar, parity)) {
    if (globaltimer_ns() > deadline_ns) return false;
  }
  return true;
}
// The same for a barrier that peers of the cluster arrive on (release.cluster): the try_wait acquires at
// cluster scope, so that the peers' writes before their arrive are visible after it [HF §1 Arrive].
__device__ __forceinline__ bool mbar_wait_cluster_until(u32 bar, u32 parity, u64 deadline_ns) {
  while (!mbar_try_wait_cluster(bar, parity)) {
    if (globaltimer_ns() > deadline_ns) return false;
  }
  return true;
}

// ---- fences [HF §1 Init, §2 Proxies] ---------------------------------------------------------------

// fence.mbarrier_init.release.cluster: make prior mbarrier.init visible to the cluster and the async
// proxy; follow with a CTA or cluster barrier before any TMA or remote arrive uses the barriers.
__device__ __forceinline__ void fence_mbarrier_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
// fence.proxy.async.shared::cta: order this thread's generic-proxy smem writes (st.shared, stmatrix)
// before later async-proxy reads (TMA store, wgmma); each writing thread issues it before the barrier.
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// ---- TMA loads [HF §2 Load] -------------------------------------------------------------------------
// `tmap` is the generic address of a CUtensorMap in .param/.const/.global (e.g. &kernel_param of a
// `const __grid_constant__ CUtensorMap`); coordinates are element indices, innermost first. The copy
// performs complete_tx(box bytes) on `bar` (same smem offset in every destination CTA for multicast).

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
__device__ __forceinline__ void tma_load_2d(u32 dst_smem, const void* tmap, u32 bar, i32 c0, i32 c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
          dst_smem),
      "l"(tmap), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}
// cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
__device__ __forceinline__ void tma_load_3d(u32 dst_smem, const void* tmap, u32 bar, i32 c0, i32 c1, i32 c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];" ::"r"(dst_smem),
      "l"(tmap), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
// cp.async.bulk.tensor.4d / .5d: tensors of rank 4 and 5 (e.g. [B, S, H, D] with a box over S and D).
__device__ __forceinline__ void tma_load_4d(u32 dst_smem, const void* tmap, u32 bar, i32 c0, i32 c1, i32 c2, i32 c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];" ::"r"(dst_smem),
      "l"(tmap), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_load_5d(u32 dst_smem, const void* tmap, u32 bar, i32 c0, i32 c1, i32 c2, i32 c3, i32 c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, "
      "%7}], [%2];" ::"r"(dst_smem),
      "l"(tmap), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}
// cp.async.bulk.tensor.2d....multicast::cluster: the box lands at `dst_smem` and completes on `bar` in
// every CTA whose rank bit is set in the 16-bit `cta_mask` [HF §2 Multicast].
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst_smem, const void* tmap, u32 bar, u16 cta_mask, i32 c0,
                                                      i32 c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%4, %5}], [%2], %3;" ::"r"(dst_smem),
      "l"(tmap), "r"(bar), "h"(cta_mask), "r"(c0), "r"(c1)
      : "memory");
}
// cp.async.bulk.tensor.3d....multicast::cluster
__device__ __forceinline__ void tma_load_3d_multicast(u32 dst_smem, const void* tmap, u32 bar, u16 cta_mask, i32 c0,
                                                      i32 c1, i32 c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%4, %5, %6}], [%2], %3;" ::"r"(dst_smem),
      "l"(tmap), "r"(bar), "h"(cta_mask), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
// cp.async.bulk.tensor.2d....L2::cache_hint: as tma_load_2d with a 64-bit L2 policy (see l2_policy_*).
__device__ __forceinline__ void tma_load_2d_hint(u32 dst_smem, const void* tmap, u32 bar, u64 policy, i32 c0, i32 c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%4, "
      "%5}], [%2], %3;" ::"r"(dst_smem),
      "l"(tmap), "r"(bar), "l"(policy), "r"(c0), "r"(c1)
      : "memory");
}
// createpolicy.fractional.L2::evict_last.b64 (fraction 1.0): keep data resident (operands re-read by many CTAs).
__device__ __forceinline__ u64 l2_policy_evict_last() {
  u64 p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
// createpolicy.fractional.L2::evict_first.b64 (fraction 1.0): streaming data read once.
__device__ __forceinline__ u64 l2_policy_evict_first() {
  u64 p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

// ---- TMA stores, bulk groups, prefetch [HF §2 Prefetch and store] -------------------------------------

// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group: store a box from smem; out-of-bounds
// elements are clipped. Issue fence_proxy_async_smem in the writing threads (and a barrier) first.
__device__ __forceinline__ void tma_store_2d(const void* tmap, u32 src_smem, i32 c0, i32 c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(tmap),
               "r"(src_smem), "r"(c0), "r"(c1)
               : "memory");
}
// cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group
__device__ __forceinline__ void tma_store_3d(const void* tmap, u32 src_smem, i32 c0, i32 c1, i32 c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(tmap),
               "r"(src_smem), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
// cp.async.bulk.tensor.4d / .5d stores.
__device__ __forceinline__ void tma_store_4d(const void* tmap, u32 src_smem, i32 c0, i32 c1, i32 c2, i32 c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(tmap),
               "r"(src_smem), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void tma_store_5d(const void* tmap, u32 src_smem, i32 c0, i32 c1, i32 c2, i32 c3, i32 c4) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];" ::"l"(tmap),
               "r"(src_smem), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
               : "memory");
}
// cp.async.bulk.commit_group: close this thread's current bulk async-group (TMA stores).
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// cp.async.bulk.wait_group N: at most N of this thread's bulk groups still pending (writes complete).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
  static_assert(N >= 0, "cp.async.bulk.wait_group takes a non-negative immediate");
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
// cp.async.bulk.wait_group.read N: at most N groups still reading their smem source (source reusable).
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  static_assert(N >= 0, "cp.async.bulk.wait_group.read takes a non-negative immediate");
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// prefetch.tensormap: pull a tensor map (kernel parameter) into the descriptor cache before first use.
__device__ __forceinline__ void prefetch_tensormap(const void* tmap) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(tmap) : "memory");
}
// cp.async.bulk.prefetch.tensor.Nd.L2.global.tile: prefetch one box of a tensor into L2 (no smem, no barrier;
// the box and the out-of-bounds handling are the tensor map's, as for a load) [HF §1 Prefetch and store].
__device__ __forceinline__ void tma_prefetch_l2_2d(const void* tmap, i32 c0, i32 c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(tmap), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_prefetch_l2_3d(const void* tmap, i32 c0, i32 c1, i32 c2) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::"l"(tmap), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void tma_prefetch_l2_4d(const void* tmap, i32 c0, i32 c1, i32 c2, i32 c3) {
  asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];" ::"l"(tmap), "r"(c0), "r"(c1), "r"(c2),
               "r"(c3)
               : "memory");
}
__device__ __forceinline__ void tma_prefetch_l2_5d(const void* tmap, i32 c0, i32 c1, i32 c2, i32 c3, i32 c4) {
  asm volatile("cp.async.bulk.prefetch.tensor.5d.L2.global.tile [%0, {%1, %2, %3, %4, %5}];" ::"l"(tmap), "r"(c0), "r"(c1), "r"(c2),
               "r"(c3), "r"(c4)
               : "memory");
}

// ---- wgmma support [HF §3] (the mma_async text itself comes from cake/lower/ptx_text.hpp) --------------

// Swizzle field values of the sm_90 smem descriptor, bits 62-63 [HF §3 Smem descriptor].
enum wgmma_swizzle : u32 { wgmma_swizzle_none = 0, wgmma_swizzle_128b = 1, wgmma_swizzle_64b = 2, wgmma_swizzle_32b = 3 };

// sm_90 wgmma shared-memory matrix descriptor [HF §3 Smem descriptor]: enc(x) = (x & 0x3FFFF) >> 4;
// start address bits 0-13, LBO bits 16-29, SBO bits 32-45, base offset bits 49-51, swizzle bits 62-63.
// K-major with 128B swizzle: SBO = 1024 (8 rows × 128 B), LBO unused (pass 16, i.e. enc 1), base
// offset 0 when the tile starts on a 1024 B boundary; step K by adding 32 B per k16 to the start.
__host__ __device__ __forceinline__ constexpr u64 make_wgmma_desc(u32 start_smem, u32 lbo_bytes, u32 sbo_bytes,
                                                                  u32 swizzle, u32 base_offset = 0) {
  return (static_cast<u64>((start_smem & 0x3FFFFu) >> 4)) | (static_cast<u64>((lbo_bytes & 0x3FFFFu) >> 4) << 16) |
         (static_cast<u64>((sbo_bytes & 0x3FFFFu) >> 4) << 32) | (static_cast<u64>(base_offset & 7u) << 49) |
         (static_cast<u64>(swizzle & 3u) << 62);
}
static_assert(make_wgmma_desc(1024, 16, 1024, wgmma_swizzle_128b) == 0x4000004000010040ull,
              "sm_90 descriptor layout drifted from hardware-facts §3");

// wgmma.fence.sync.aligned: order prior register/smem accesses before the next wgmma.mma_async;
// required before the first wgmma and after the accumulators were touched by other code [HF §3 Rules].
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// wgmma.commit_group.sync.aligned: close the current group of wgmma.mma_async operations.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// wgmma.wait_group.sync.aligned N: at most N wgmma groups pending; their smem reads and register
// writes are complete for the retired groups. Follow with wgmma_fence_operand on the accumulators.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes an immediate 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Compiler-only fence on one accumulator register: keeps reads/writes of `r` from moving across the
// wgmma wait/fence asm statements (the hardware ordering is given by wgmma_wait/wgmma_fence).
__device__ __forceinline__ void wgmma_fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void wgmma_fence_operand(u32& r) { asm volatile("" : "+r"(r)::"memory"); }

// ---- stmatrix [HF §3 stmatrix]: lanes 8i..8i+7 give the 16-byte row addresses of matrix i -------------

// stmatrix.sync.aligned.m8n8.x1.shared.b16: one 8x8 b16 matrix; r0 holds (row lane/4, cols 2(lane%4)+{0,1}).
__device__ __forceinline__ void stmatrix_x1(u32 smem, u32 r0) {
  asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(smem), "r"(r0) : "memory");
}
// stmatrix.sync.aligned.m8n8.x2.shared.b16: two matrices (lanes 0-15 give addresses).
__device__ __forceinline__ void stmatrix_x2(u32 smem, u32 r0, u32 r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(smem), "r"(r0), "r"(r1) : "memory");
}
// stmatrix.sync.aligned.m8n8.x4.shared.b16: four matrices (all 32 lanes give addresses).
__device__ __forceinline__ void stmatrix_x4(u32 smem, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem), "r"(r0), "r"(r1), "r"(r2),
               "r"(r3)
               : "memory");
}
// stmatrix.sync.aligned.m8n8.x1.trans.shared.b16: transposed store of one matrix.
__device__ __forceinline__ void stmatrix_x1_trans(u32 smem, u32 r0) {
  asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" ::"r"(smem), "r"(r0) : "memory");
}
// stmatrix.sync.aligned.m8n8.x2.trans.shared.b16
__device__ __forceinline__ void stmatrix_x2_trans(u32 smem, u32 r0, u32 r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(smem), "r"(r0), "r"(r1)
               : "memory");
}
// stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
__device__ __forceinline__ void stmatrix_x4_trans(u32 smem, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// ---- register reconfiguration [HF §3 setmaxnreg] --------------------------------------------------
// Every warp of the warpgroup must execute it; the kernel needs a register cap at entry
// (__launch_bounds__(threads, 1)), else ptxas ignores it (C7508).

// setmaxnreg.inc.sync.aligned.u32 N: raise this warpgroup's per-thread register limit to N.
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}
// setmaxnreg.dec.sync.aligned.u32 N: lower this warpgroup's per-thread register limit to N.
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

}  // namespace cake_dev
