// cake/device/sm100.cuh — sm_100a (Blackwell) device helpers: tensor-memory allocation, tcgen05.mma
// (kind::f16, A/B from smem descriptors), commit to an mbarrier, tcgen05 fences, tcgen05.ld/st
// (32x32b shape for a few repeat counts), and the sm_100 smem/instruction descriptors [HF §4].
// Wide tcgen05.ld/st forms (x32..x128) are generated as text by cake/lower/ptx_text.hpp (tcgen05_ld/st).
// mbarrier, TMA and setmaxnreg helpers come from sm90.cuh (same instructions on sm_100a).
#pragma once
#include "cake/device/common.cuh"
#include "cake/device/sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 1000
#error "cake/device/sm100.cuh needs sm_100a (tcgen05, tensor memory)"
#endif

namespace cake_dev {

// ---- tensor memory allocation [HF §4 TMEM] ---------------------------------------------------------
// All tcgen05 ops of one kernel must use the same cta_group. NCols is a power of 2 in [32, 512].

template <u32 NCols>
__device__ __forceinline__ constexpr void check_tmem_cols() {
  static_assert(NCols >= 32 && NCols <= 512 && (NCols & (NCols - 1)) == 0,
                "tensor-memory allocations are a power of 2 in [32, 512] columns");
}
// tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], NCols: one warp allocates; the TMEM
// address (lane<<16 | column) is written to smem at `dst_smem`. Blocks until columns are free.
template <u32 NCols>
__device__ __forceinline__ void tmem_alloc_cg1(u32 dst_smem) {
  check_tmem_cols<NCols>();
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(dst_smem), "n"(NCols) : "memory");
}
// tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, NCols: must run before the kernel exits.
template <u32 NCols>
__device__ __forceinline__ void tmem_dealloc_cg1(u32 taddr) {
  check_tmem_cols<NCols>();
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "n"(NCols) : "memory");
}
// tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned: this CTA will not allocate again.
__device__ __forceinline__ void tmem_relinquish_alloc_permit_cg1() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
// tcgen05.alloc.cta_group::2...: collective of one warp in each CTA of the pair [HF §4 TMEM, CTA pair].
template <u32 NCols>
__device__ __forceinline__ void tmem_alloc_cg2(u32 dst_smem) {
  check_tmem_cols<NCols>();
  asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(dst_smem), "n"(NCols) : "memory");
}
// tcgen05.dealloc.cta_group::2...: the peer must take part and must not have exited [HF §1 hang causes 7].
template <u32 NCols>
__device__ __forceinline__ void tmem_dealloc_cg2(u32 taddr) {
  check_tmem_cols<NCols>();
  asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(taddr), "n"(NCols) : "memory");
}
// tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned
__device__ __forceinline__ void tmem_relinquish_alloc_permit_cg2() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
}

// ---- MMA, commit, fences [HF §4 MMA; Commit, fences and waits] ----------------------------------------

// tcgen05.mma.cta_group::1.kind::f16 [d], adesc, bdesc, idesc, enable_input_d: issued by ONE thread;
// D (TMEM) = A·B (+ D when accumulate != 0). K is 16 per instruction for kind::f16.
__device__ __forceinline__ void tcgen05_mma_f16_cg1(u32 d_tmem, u64 a_desc, u64 b_desc, u32 idesc, u32 accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n"
      "}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
      : "memory");
}
// tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64: one arrive on `bar` when all
// prior tcgen05 async ops of THIS thread complete (so the MMA-issuing thread commits) [HF §1 hang causes 6].
__device__ __forceinline__ void tcgen05_commit_cg1(u32 bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar) : "memory");
}
// tcgen05.commit.cta_group::2...multicast::cluster: arrive on `bar` in every CTA set in `cta_mask`.
__device__ __forceinline__ void tcgen05_commit_cg2_multicast(u32 bar, u16 cta_mask) {
  asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(
                   bar),
               "h"(cta_mask)
               : "memory");
}
// tcgen05.fence::before_thread_sync: order prior tcgen05 ops before a following thread sync.
__device__ __forceinline__ void tcgen05_fence_before_sync() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }
// tcgen05.fence::after_thread_sync: order later tcgen05 ops after a preceding thread sync / mbarrier wait.
__device__ __forceinline__ void tcgen05_fence_after_sync() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }

// ---- TMEM ↔ registers [HF §4 ld/st] --------------------------------------------------------------------
// Warp (warp_id % 4) may access only TMEM lanes 32·(warp_id%4) … +31; `taddr` must be warp-uniform.
// 32x32b.xN: each thread reads N consecutive 32-bit columns of its lane. Follow with tmem_wait_ld().

// tcgen05.ld.sync.aligned.32x32b.x1.b32
__device__ __forceinline__ void tmem_ld_32x32b_x1(u32 (&r)[1], u32 taddr) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(r[0]) : "r"(taddr) : "memory");
}
// tcgen05.ld.sync.aligned.32x32b.x2.b32
__device__ __forceinline__ void tmem_ld_32x32b_x2(u32 (&r)[2], u32 taddr) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(taddr) : "memory");
}
// tcgen05.ld.sync.aligned.32x32b.x4.b32
__device__ __forceinline__ void tmem_ld_32x32b_x4(u32 (&r)[4], u32 taddr) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(taddr)
               : "memory");
}
// tcgen05.ld.sync.aligned.32x32b.x8.b32
__device__ __forceinline__ void tmem_ld_32x32b_x8(u32 (&r)[8], u32 taddr) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
               : "r"(taddr)
               : "memory");
}
// tcgen05.ld.sync.aligned.32x32b.x16.b32
__device__ __forceinline__ void tmem_ld_32x32b_x16(u32 (&r)[16], u32 taddr) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
      "[%16];"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]),
        "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
      : "r"(taddr)
      : "memory");
}
// tcgen05.st.sync.aligned.32x32b.x1.b32
__device__ __forceinline__ void tmem_st_32x32b_x1(u32 taddr, const u32 (&r)[1]) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};" ::"r"(taddr), "r"(r[0]) : "memory");
}
// tcgen05.st.sync.aligned.32x32b.x2.b32
__device__ __forceinline__ void tmem_st_32x32b_x2(u32 taddr, const u32 (&r)[2]) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x2.b32 [%0], {%1, %2};" ::"r"(taddr), "r"(r[0]), "r"(r[1]) : "memory");
}
// tcgen05.st.sync.aligned.32x32b.x4.b32
__device__ __forceinline__ void tmem_st_32x32b_x4(u32 taddr, const u32 (&r)[4]) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {%1, %2, %3, %4};" ::"r"(taddr), "r"(r[0]), "r"(r[1]),
               "r"(r[2]), "r"(r[3])
               : "memory");
}
// tcgen05.st.sync.aligned.32x32b.x8.b32
__device__ __forceinline__ void tmem_st_32x32b_x8(u32 taddr, const u32 (&r)[8]) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8};" ::"r"(taddr), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7])
               : "memory");
}
// tcgen05.wait::ld.sync.aligned: all prior tcgen05.ld of this thread complete (registers valid).
__device__ __forceinline__ void tmem_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }
// tcgen05.wait::st.sync.aligned: all prior tcgen05.st of this thread complete.
__device__ __forceinline__ void tmem_wait_st() { asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory"); }

// ---- descriptors [HF §4 Smem descriptor vs sm_90; Instruction descriptor] ------------------------------

// 3-bit swizzle field of the sm_100 smem descriptor, bits 61-63.
enum umma_swizzle : u32 {
  umma_swizzle_none = 0,
  umma_swizzle_128b_base32b = 1,
  umma_swizzle_128b = 2,
  umma_swizzle_64b = 4,
  umma_swizzle_32b = 6
};
// sm_100 smem descriptor: sm_90 fields at 0-13/16-29/32-45/49-51, version bits 46-48 = 0b001,
// LBO mode bit 52 = 0 (relative), swizzle bits 61-63. Addresses and offsets must be 16 B aligned.
__host__ __device__ __forceinline__ constexpr u64 make_umma_smem_desc(u32 start_smem, u32 lbo_bytes, u32 sbo_bytes,
                                                                      u32 swizzle, u32 base_offset = 0) {
  return (static_cast<u64>((start_smem & 0x3FFFFu) >> 4)) | (static_cast<u64>((lbo_bytes & 0x3FFFFu) >> 4) << 16) |
         (static_cast<u64>((sbo_bytes & 0x3FFFFu) >> 4) << 32) | (1ull << 46) |
         (static_cast<u64>(base_offset & 7u) << 49) | (static_cast<u64>(swizzle & 7u) << 61);
}
static_assert(make_umma_smem_desc(0, 16, 1024, umma_swizzle_128b) == 0x4000404000010000ull,
              "sm_100 smem descriptor layout drifted from hardware-facts §4");

// Operand/accumulator format codes of the instruction descriptor [HF §4 Instruction descriptor].
enum umma_d_format : u32 { umma_d_f16 = 0, umma_d_f32 = 1, umma_d_s32 = 2 };
enum umma_ab_format : u32 {
  umma_ab_f16 = 0,   // kind::f16
  umma_ab_bf16 = 1,  // kind::f16
  umma_ab_tf32 = 2,  // kind::tf32
  umma_ab_e4m3 = 0,  // kind::f8f6f4
  umma_ab_e5m2 = 1   // kind::f8f6f4
};
// 32-bit instruction descriptor for kind::f16/tf32/f8f6f4/i8 (dense): D format bits 4-5, A/B formats
// 7-9/10-12, negate A/B 13/14, A/B major 15/16 (0 = K-major, 1 = MN-major), N>>3 at 17-22, M>>4 at 24-28.
__host__ __device__ __forceinline__ constexpr u32 make_umma_idesc(u32 d_format, u32 a_format, u32 b_format,
                                                                  bool a_mn_major, bool b_mn_major, u32 m, u32 n,
                                                                  bool negate_a = false, bool negate_b = false) {
  return ((d_format & 3u) << 4) | ((a_format & 7u) << 7) | ((b_format & 7u) << 10) | (u32(negate_a) << 13) |
         (u32(negate_b) << 14) | (u32(a_mn_major) << 15) | (u32(b_mn_major) << 16) | (((n >> 3) & 0x3Fu) << 17) |
         (((m >> 4) & 0x1Fu) << 24);
}
static_assert(make_umma_idesc(umma_d_f32, umma_ab_bf16, umma_ab_bf16, false, false, 128, 128) == 0x08200490u,
              "instruction descriptor drifted from hardware-facts §4 example (bf16, f32, M=N=128, K-major)");

}  // namespace cake_dev
