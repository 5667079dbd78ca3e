// cake/device/common.cuh — device helpers every target shares: integer types, thread/warp/warpgroup
// identities, elect-one, shared-memory addresses, named barriers, grid-dependency control, cluster
// identities/barriers/mapa, timers and float packing. Generated kernels call these; all physical
// constants (barrier ids, counts, offsets) are passed in by the caller, never decided here.
//
// NVRTC-clean: no host headers, no <cstdint>; compiles under `nvrtc -default-device` and under nvcc.
// Sections cited as [HF §n] are in shared/reference/hardware-facts.md; [PTX §x] is the PTX ISA 9.1.
// Helpers that need sm_90 exist only when compiling for sm_90 or newer (or in nvcc's host pass), so a
// call from sm_80 code is a compile error naming the helper, never a silent no-op.
#pragma once

namespace cake_dev {

using u16 = unsigned short;
using u32 = unsigned;
using u64 = unsigned long long;
using i32 = int;
using i64 = long long;

// ---- identities ---------------------------------------------------------------------------------

// %tid.x: thread index in the (1-D) block.
__device__ __forceinline__ u32 thread_idx() { return threadIdx.x; }

// %laneid [PTX §10 special registers]: lane within the warp.
__device__ __forceinline__ u32 lane_id() {
  u32 r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}

// shfl.sync.idx [PTX §9.7.8.6]: warp index, broadcast from lane 0 so the compiler knows it is warp-uniform.
__device__ __forceinline__ u32 warp_idx() { return __shfl_sync(0xffffffffu, threadIdx.x / 32u, 0); }

// Warpgroup = 4 contiguous warps starting at a warp index divisible by 4 [HF §3 Rules].
__device__ __forceinline__ u32 warpgroup_idx() { return warp_idx() / 4u; }
// Warp rank within its warpgroup (0..3): selects the 16-row slice of a wgmma fragment [HF §3 Fragments].
__device__ __forceinline__ u32 warp_in_warpgroup() { return warp_idx() % 4u; }
// Thread rank within its warpgroup (0..127).
__device__ __forceinline__ u32 thread_in_warpgroup() { return threadIdx.x % 128u; }

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// elect.sync [PTX §9.7.13.14]: true in exactly one active lane of the warp (sm_90+).
__device__ __forceinline__ bool elect_one_sync() {
  u32 pred = 0;
  asm volatile(
      "{\n"
      ".reg .b32 %%rx;\n"
      ".reg .pred %%px;\n"
      "elect.sync %%rx|%%px, 0xffffffff;\n"
      "selp.u32 %0, 1, 0, %%px;\n"
      "}\n"
      : "=r"(pred));
  return pred != 0;
}
#else
// sm_80 fallback for elect-one: the lowest active lane (same choice elect.sync makes for a full warp).
__device__ __forceinline__ bool elect_one_sync() { return lane_id() == static_cast<u32>(__ffs(__activemask()) - 1); }
#endif

// ---- addresses ----------------------------------------------------------------------------------

// cvta.to.shared: 32-bit shared::cta address of a generic pointer into shared memory; every smem
// operand of TMA/mbarrier/wgmma/ldmatrix/stmatrix wrappers below takes this form [HF §1, §2].
__device__ __forceinline__ u32 smem_addr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

// ---- named barriers [HF §5 Named barriers] --------------------------------------------------------

// bar.sync id, count: wait until `count` threads (multiple of 32) reached barrier `id` (0..15).
__device__ __forceinline__ void named_barrier_sync(u32 id, u32 count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
// bar.arrive id, count: signal barrier `id` without waiting (producer side of a named-barrier handoff).
__device__ __forceinline__ void named_barrier_arrive(u32 id, u32 count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// ---- counters across CTAs --------------------------------------------------------------------------

// atom.acq_rel.gpu.global.inc.u32 [PTX §9.7.13.5 atom; memory model §8]: *p = (*p >= last) ? 0 : *p + 1,
// returning the old value; release orders this thread's earlier writes (and, through a CTA barrier before
// it, those of the threads it met) before the step at GPU scope, acquire makes the writes released by
// earlier steps visible to this thread's later reads (and, through a barrier after, to those it meets).
__device__ __forceinline__ unsigned atom_inc_acq_rel_gpu(unsigned* p, unsigned last) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(last) : "memory");
  return old;
}

// ---- timers and traps (debug builds of generated kernels use these for hang detection) -------------

// %globaltimer [PTX §10.27]: nanosecond wall clock (coarse ticks), comparable across SMs.
__device__ __forceinline__ u64 globaltimer_ns() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// trap [PTX §9.7.19.2]: abort the kernel; the host sees cudaErrorLaunchFailure / CUDA_ERROR_ILLEGAL_INSTRUCTION.
__device__ __forceinline__ void trap() { asm volatile("trap;"); }

// ---- float packing (sm_80+) [PTX §9.7.9.21 cvt] -------------------------------------------------

// cvt.rn.bf16x2.f32 d, hi, lo: two floats → packed bf16x2, `lo` in bits 0-15 (round to nearest even).
__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %2, %1;" : "=r"(r) : "f"(lo), "f"(hi));
  return r;
}
// cvt.rn.f16x2.f32 d, hi, lo: two floats → packed f16x2, `lo` in bits 0-15.
__device__ __forceinline__ u32 pack_f16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(r) : "f"(lo), "f"(hi));
  return r;
}
// cvt.rna.tf32.f32: round a float to tf32 (low 13 mantissa bits cleared), as mma .tf32 expects.
__device__ __forceinline__ u32 f32_to_tf32(float x) {
  u32 r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// ---- programmatic dependent launch (sm_90+) [PTX §9.7.13.13] -------------------------------------

// griddepcontrol.wait: block until the prerequisite grid has completed and its memory is visible.
__device__ __forceinline__ void griddep_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
// griddepcontrol.launch_dependents: allow the dependent grid to start launching.
__device__ __forceinline__ void griddep_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

// ---- clusters (sm_90+) [PTX §9.7.13.3 barrier.cluster, §9.7.9.23 mapa; HF §1, §6 Clusters] ----------

// %cluster_ctarank: this CTA's rank in its cluster (the bit index used by TMA multicast masks [HF §2]).
__device__ __forceinline__ u32 cluster_ctarank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// %cluster_nctarank: number of CTAs in the cluster.
__device__ __forceinline__ u32 cluster_nctarank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
// %clusterid.x: index of this cluster in the grid (x).
__device__ __forceinline__ u32 cluster_id_x() {
  u32 r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
// %nclusterid.x: number of clusters in the grid (x).
__device__ __forceinline__ u32 cluster_count_x() {
  u32 r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}
// barrier.cluster.arrive.release.aligned: arrive on the cluster barrier, releasing prior writes
// (e.g. mbarrier.init after fence.mbarrier_init) to the cluster. All threads of the warp execute it.
__device__ __forceinline__ void cluster_arrive_release() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
// barrier.cluster.arrive.relaxed.aligned: arrive without release semantics (cheaper; no ordering).
__device__ __forceinline__ void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory"); }
// barrier.cluster.wait.acquire.aligned: wait for all threads of the cluster to arrive, acquiring.
__device__ __forceinline__ void cluster_wait_acquire() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
// arrive.release + wait.acquire: the full cluster-wide barrier (start: barrier inits visible; end: no
// CTA exits while a peer may still multicast into it or arrive on its barriers [HF §1 hang causes 4]).
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive_release();
  cluster_wait_acquire();
}
// mapa.shared::cluster.u32: map a local shared::cta address to the same offset in CTA `cta_rank` of
// the cluster (a shared::cluster address for remote mbarrier arrives) [HF §1 Arrive].
__device__ __forceinline__ u32 mapa_shared(u32 local_smem_addr, u32 cta_rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local_smem_addr), "r"(cta_rank));
  return r;
}
#endif  // sm_90+

}  // namespace cake_dev
