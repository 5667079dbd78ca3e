// cake/device/sm80.cuh — sm_80 (Ampere) device helpers: cp.async with zero-fill, ldmatrix,
// mma.sync (bf16/f16 m16n8k16, tf32 m16n8k8; e4m3 m16n8k32 on sm_89+), and the mbarrier forms that exist
// from sm_80 on (init, arrive, test_wait, cp.async completion on an mbarrier). All usable on sm_90a/sm_100a too.
// Fragment layouts are in [HF §5 mma]; callers pass registers already arranged that way.
#pragma once
#include "cake/device/common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "cake/device/sm80.cuh needs sm_80 or newer (cp.async, bf16 mma.sync)"
#endif

namespace cake_dev {

// ---- cp.async [HF §5 cp.async] --------------------------------------------------------------------

// cp.async.ca.shared.global [dst], [src], Bytes, src_bytes: Bytes ∈ {4,8,16}; bytes past src_bytes are zero-filled.
template <int Bytes>
__device__ __forceinline__ void cp_async_ca(u32 dst_smem, const void* src, u32 src_bytes) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async.ca copies 4, 8 or 16 bytes");
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst_smem), "l"(src), "n"(Bytes), "r"(src_bytes)
               : "memory");
}
// cp.async.cg.shared.global [dst], [src], 16, src_bytes: L2-only 16-byte copy; bytes past src_bytes are zero-filled.
__device__ __forceinline__ void cp_async_cg_16(u32 dst_smem, const void* src, u32 src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst_smem), "l"(src), "r"(src_bytes) : "memory");
}
// cp.async.commit_group: close the current group of cp.async operations.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// cp.async.wait_group N: wait until at most N committed groups are pending (their writes then visible to this thread).
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  static_assert(N >= 0, "cp.async.wait_group takes a non-negative immediate");
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
// cp.async.wait_all: wait for every committed and uncommitted cp.async of this thread.
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// ---- mbarrier, the sm_80 forms [HF §1] -------------------------------------------------------------
// `bar` is the 32-bit shared::cta address of an 8-byte aligned .b64 object (see smem_addr). Minimum targets:
// mbarrier.init / inval / arrive (no count, default .release.cta semantics) and cp.async.mbarrier.arrive{.noinc}
// PTX ISA 7.0, test_wait.parity 7.1, all sm_80 ([PTX §9.7.13.15.9, .13, .15, .16]; CCCL's cuda::ptx bindings,
// cuda/__ptx/instructions/generated/mbarrier_*.h, cp_async_mbarrier_arrive_noinc.h, say the same). The
// .shared::cta spelling (PTX ISA 7.8) and the sink `_` assemble for sm_80 with ptxas 13.0 [ptxas13]. Not here,
// because sm_80 lacks them (ptxas 13.0: "requires .target sm_90 or higher"): try_wait, an arrive with a count,
// expect_tx / complete_tx, remote (shared::cluster) arrives; those are in sm90.cuh.

// mbarrier.init.shared::cta.b64: phase 0, expected = pending = count, tx = 0 [HF §1 Init].
__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// mbarrier.inval.shared::cta.b64: invalidate before re-init or reuse of the memory [HF §1 Init].
__device__ __forceinline__ void mbar_inval(u32 bar) { asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(bar) : "memory"); }
// mbarrier.arrive.shared::cta.b64: one arrival on a local barrier (release, cta scope) [HF §1 Arrive].
__device__ __forceinline__ void mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// cp.async.mbarrier.arrive.noinc.shared::cta.b64: the hardware arrives on `bar` once every cp.async this
// thread issued before it has completed (asynchronously: the instruction itself does not wait). .noinc
// leaves the pending count alone, so this arrival must be counted in the barrier's init count; without
// .noinc the count is raised by one first and the net change is zero [HF §1 Transaction counts]. Once the
// phase completes, every thread that waited for it may read what the tracked copies wrote [PTX §9.7.9.25.1.2].
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
// mbarrier.test_wait.parity.shared::cta.b64 (acquire, cta): non-blocking probe, true once the phase with
// parity `parity` has completed [HF §1 Wait].
__device__ __forceinline__ bool mbar_test_wait(u32 bar, u32 parity) {
  u32 ok;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
// The sm_80 wait: spin on test_wait.parity until the phase completes (try_wait, which may suspend the thread
// for a while, needs sm_90 [HF §1 Wait]). Consumers of a fresh "full" barrier wait with parity 0, producers
// of a fresh "empty" barrier with parity 1, which passes at once [HF §1 Phase rules].
__device__ __forceinline__ void mbar_wait_test(u32 bar, u32 parity) {
  while (!mbar_test_wait(bar, parity)) {
  }
}
// Debug variant (emit_options::hang_timeout_ns): false once %globaltimer passes `deadline_ns`.
__device__ __forceinline__ bool mbar_wait_test_until(u32 bar, u32 parity, u64 deadline_ns) {
  while (!mbar_test_wait(bar, parity)) {
    if (globaltimer_ns() > deadline_ns) return false;
  }
  return true;
}

// ---- ldmatrix [HF §5 ldmatrix]: lanes 8i..8i+7 give the 16-byte row addresses of matrix i ----------

// ldmatrix.sync.aligned.m8n8.x1.shared.b16: one 8x8 b16 matrix (lanes 0-7 give addresses).
__device__ __forceinline__ void ldmatrix_x1(u32 (&r)[1], u32 smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(smem) : "memory");
}
// ldmatrix.sync.aligned.m8n8.x2.shared.b16: two 8x8 b16 matrices.
__device__ __forceinline__ void ldmatrix_x2(u32 (&r)[2], u32 smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(smem) : "memory");
}
// ldmatrix.sync.aligned.m8n8.x4.shared.b16: four 8x8 b16 matrices.
__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], u32 smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem)
               : "memory");
}
// ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16: one matrix, transposed (column-major source).
__device__ __forceinline__ void ldmatrix_x1_trans(u32 (&r)[1], u32 smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(smem) : "memory");
}
// ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16: two matrices, transposed.
__device__ __forceinline__ void ldmatrix_x2_trans(u32 (&r)[2], u32 smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem)
               : "memory");
}
// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16: four matrices, transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(u32 (&r)[4], u32 smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem)
               : "memory");
}

// ---- mma.sync [HF §5 mma]: only .row.col exists; d = a·b + c ----------------------------------------

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: a = 4 regs of bf16x2, b = 2 regs, c/d = 4 floats.
__device__ __forceinline__ void mma_m16n8k16_bf16_f32(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2],
                                                      const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32: as above with f16x2 operands.
__device__ __forceinline__ void mma_m16n8k16_f16_f32(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2],
                                                     const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: a = 4 tf32 regs, b = 2 tf32 regs (see f32_to_tf32).
__device__ __forceinline__ void mma_m16n8k8_tf32_f32(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2],
                                                     const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (sm_89+ only, so absent from sm_80 builds):
// a = 4 regs of 4×e4m3, b = 2 regs, c/d = 4 floats.
__device__ __forceinline__ void mma_m16n8k32_e4m3_f32(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2],
                                                      const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
#endif

}  // namespace cake_dev
