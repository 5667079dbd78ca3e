// cake/device/compute.cuh — register compute every target shares: integer helpers for loop bounds,
// the elementwise math functions of Cake's op table, conversions between element types, warp
// reductions, and vector/atomic global memory access. Generated kernels call these with every physical
// choice (lane masks, widths) passed in by the caller.
//
// NVRTC-clean: no host headers. The approximate special functions are the PTX .approx instructions
// (ex2, lg2, tanh on sm_75+); [PTX §9.7.3] documents their error bounds.
#pragma once

#include "cake/device/common.cuh"

namespace cake_dev {

// ---- integers ------------------------------------------------------------------------------------
__device__ __forceinline__ long long min_ll(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ long long max_ll(long long a, long long b) { return a > b ? a : b; }

// ---- math [PTX §9.7.3 floating-point instructions] ------------------------------------------------
// ex2.approx.ftz.f32: 2^x (max relative error 2^-22 over the normal range; -inf gives +0).
__device__ __forceinline__ float exp2f_fast(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// 2^x by a polynomial on the FMA pipe, for exp2(x, fma_share{n, d}) (docs/language.md): the MUFU unit that
// runs ex2 retires 16 results per clock per SM, the FMA pipe 128, so where exp2 throughput bounds a kernel some
// elements can be computed here instead (the H200's attention prefill was not so bound). x = i + f with i = rint(x)
// (the 1.5 * 2^23 rounding trick; __fadd_rn / __fsub_rn so that no flag folds it away) and f in [-0.5, 0.5];
// 2^f by a degree-4 minimax polynomial with p(0) = 1 (relative error <= 3.7e-6, 2^-18.07, in f32; tools/gen/exp2_poly.py
// fits it); 2^i added to the exponent field. x is clamped to [-127, 128] first: -inf (and anything <= -127)
// gives +0, 0 gives 1, +inf (and >= 128) gives +inf, as ex2 does; results below 2^-126 are denormals (ex2.ftz
// flushes them); a NaN gives +0 (ex2: NaN).
__device__ __forceinline__ float exp2f_poly(float x) {
  x = fminf(fmaxf(x, -127.0f), 128.0f);
  const float t = __fadd_rn(x, 12582912.0f);  // 1.5 * 2^23: x rounded to an integer, in t's low mantissa bits
  const float f = __fsub_rn(x, __fsub_rn(t, 12582912.0f));
  float p = fmaf(0x1.409104p-7f, f, 0x1.ca9008p-5f);
  p = fmaf(p, f, 0x1.ebf1b4p-3f);
  p = fmaf(p, f, 0x1.62dfcap-1f);
  p = fmaf(p, f, 1.0f);
  // t's low bits hold rint(x) (the 1.5 * 2^23 part shifts out): adding rint(x) << 23 scales p by 2^rint(x)
  return __uint_as_float(__float_as_uint(p) + (__float_as_uint(t) << 23));
}
// lg2.approx.ftz.f32: log2(x) (max absolute error 2^-22.6 for x in [0.5, 2]).
__device__ __forceinline__ float log2f_fast(float x) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// tanh.approx.f32 (sm_75+): max relative error 2^-10.987.
__device__ __forceinline__ float tanhf_fast(float x) {
  float r;
  asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// rcp.rn.f32: correctly rounded reciprocal.
__device__ __forceinline__ float rcpf(float x) {
  float r;
  asm("rcp.rn.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float expf_fast(float x) { return exp2f_fast(x * 1.4426950408889634f); }
__device__ __forceinline__ float logf_fast(float x) { return log2f_fast(x) * 0.6931471805599453f; }
__device__ __forceinline__ float sigmoidf(float x) { return rcpf(1.0f + exp2f_fast(-x * 1.4426950408889634f)); }
__device__ __forceinline__ float siluf(float x) { return x * sigmoidf(x); }
// GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as cuBLASLt's GELU epilogue.
__device__ __forceinline__ float gelu_tanhf(float x) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf_fast(u));
}
// GELU, erf form: 0.5 x (1 + erf(x / sqrt 2)).
__device__ __forceinline__ float gelu_erff(float x) { return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f)); }
__device__ __forceinline__ float reluf(float x) { return x > 0.0f ? x : 0.0f; }

// ---- conversions [PTX §9.7.9.21 cvt] ----------------------------------------------------------------
__device__ __forceinline__ float bf16_to_f32(u16 h) { return __uint_as_float(static_cast<u32>(h) << 16); }
__device__ __forceinline__ u16 f32_to_bf16(float x) { return static_cast<u16>(pack_bf16x2(x, 0.0f) & 0xffffu); }
__device__ __forceinline__ float f16_to_f32(u16 h) {
  float r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));
  return r;
}
__device__ __forceinline__ u16 f32_to_f16(float x) {
  u16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float lo_bf16(u32 v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float hi_bf16(u32 v) { return __uint_as_float(v & 0xffff0000u); }
__device__ __forceinline__ float lo_f16(u32 v) { return f16_to_f32(static_cast<u16>(v & 0xffffu)); }
__device__ __forceinline__ float hi_f16(u32 v) { return f16_to_f32(static_cast<u16>(v >> 16)); }

// ---- 8-bit floats (OCP FP8: e4m3 bias 7, no infinities, NaN S.1111.111, largest 448; e5m2 bias 15, IEEE-like,
// largest 57344) [PTX §9.7.9.21 cvt: .e4m3x2 / .e5m2x2 need sm_89+]. An 8-bit register tile packs four elements
// per 32-bit word, element i in byte i % 4 of word i / 4. sm_89+ converts pairs in hardware: cvt.rn.f16x2.e4m3x2
// (each byte exactly to f16, then exactly to f32) and cvt.rn.satfinite.e4m3x2.f32 d, a, b (a into the high byte,
// b into the low; round to nearest even, finite values past the largest and infinities to the largest, NaN to
// NaN). sm_80 has neither: the same results by integer arithmetic (fp8_software below), so a schedule written
// for sm_80 computes the same bits.
namespace fp8_software {
// byte b (e4m3 if E == 4, e5m2 if E == 5) as a float: exact
template <int E>
__device__ __forceinline__ float to_f32(u32 b) {
  constexpr int M = 7 - E, bias = E == 4 ? 7 : 15;
  const u32 s = (b & 0x80u) << 24, e = (b >> M) & ((1u << E) - 1u), m = b & ((1u << M) - 1u);
  u32 bits;
  if (E == 4 && e == 15u && m == 7u) bits = 0x7fc00000u;                          // e4m3 NaN
  else if (E == 5 && e == 31u) bits = m ? 0x7fc00000u : 0x7f800000u;              // e5m2 NaN, infinity
  else if (e == 0u) bits = __float_as_uint(static_cast<float>(m) * (E == 4 ? 0x1p-9f : 0x1p-16f));  // subnormal
  else bits = ((e + 127u - bias) << 23) | (m << (23 - M));
  return __uint_as_float(bits | s);
}
// float x as a byte, rounded to nearest even, saturated to the largest finite value (satfinite)
template <int E>
__device__ __forceinline__ u32 from_f32(float x) {
  constexpr int M = 7 - E, bias = E == 4 ? 7 : 15;
  constexpr u32 largest = E == 4 ? 0x43e00000u : 0x47600000u;    // 448, 57344 as f32 bits
  constexpr u32 smallest_normal = E == 4 ? 0x3c800000u : 0x38800000u;  // 2^-6, 2^-14
  const u32 u = __float_as_uint(x), s = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return s | 0x7fu;                                         // NaN (both formats)
  if (a >= largest) return s | (E == 4 ? 0x7eu : 0x7bu);                         // saturate (infinities too)
  if (a < smallest_normal)                                                       // subnormal: m units of the step
    return s | static_cast<u32>(__float2int_rn(__uint_as_float(a) * (E == 4 ? 0x1p9f : 0x1p16f)));  // (m = 2^M: the smallest normal, right)
  const u32 r = (a + ((1u << (22 - M)) - 1u) + ((a >> (23 - M)) & 1u)) & ~((1u << (23 - M)) - 1u);  // mantissa to M bits, ties to even
  return s | ((((r >> 23) - (127u - bias)) << M) | ((r >> (23 - M)) & ((1u << M) - 1u)));
}
}  // namespace fp8_software

// two fp8 elements (byte 0 -> lo, byte 1 -> hi of the low 16 bits of `two`) as floats
template <int E>
__device__ __forceinline__ void fp8x2_to_f32(u32 two, float& lo, float& hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  u32 h2;
  if (E == 4) asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<u16>(two & 0xffffu)));
  else asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h2) : "h"(static_cast<u16>(two & 0xffffu)));
  lo = lo_f16(h2);
  hi = hi_f16(h2);
#else
  lo = fp8_software::to_f32<E>(two & 0xffu);
  hi = fp8_software::to_f32<E>((two >> 8) & 0xffu);
#endif
}
// two fp8 elements (byte 0 -> lo, byte 1 -> hi of the low 16 bits) as packed f16x2: exact (every e4m3 and e5m2 value is
// an f16), one instruction on sm_89+
template <int E>
__device__ __forceinline__ u32 fp8x2_to_f16x2(u32 two) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  u32 h2;
  if (E == 4) asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<u16>(two & 0xffffu)));
  else asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h2) : "h"(static_cast<u16>(two & 0xffffu)));
  return h2;
#else
  return pack_f16x2(fp8_software::to_f32<E>(two & 0xffu), fp8_software::to_f32<E>((two >> 8) & 0xffu));
#endif
}
// element k (0..3) of a packed word as a float
template <int E>
__device__ __forceinline__ float fp8_to_f32(u32 word, int k) {
  float lo, hi;
  fp8x2_to_f32<E>(word >> (16 * (k / 2)), lo, hi);
  return k % 2 ? hi : lo;
}
// two floats as two fp8 elements in the low 16 bits (lo -> byte 0)
template <int E>
__device__ __forceinline__ u32 f32x2_to_fp8(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  u16 r;
  if (E == 4) asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  else asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return fp8_software::from_f32<E>(lo) | (fp8_software::from_f32<E>(hi) << 8);
#endif
}

// ---- warp reductions [PTX §9.7.8.6 shfl.sync] -----------------------------------------------------
// Reduce over the lanes that differ in the bits of `mask_bits` (a butterfly over xor distances
// lo..hi, powers of two): the lanes that hold one row of a fragment.
template <int Lo, int Hi>
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int d = Lo; d <= Hi; d *= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, d));
  return v;
}
template <int Lo, int Hi>
__device__ __forceinline__ float warp_min(float v) {
#pragma unroll
  for (int d = Lo; d <= Hi; d *= 2) v = fminf(v, __shfl_xor_sync(0xffffffffu, v, d));
  return v;
}
template <int Lo, int Hi>
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int d = Lo; d <= Hi; d *= 2) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}
// The smallest int across lanes Lo..Hi (butterfly): the lowest matching column of a row, where lanes
// without a match hold INT_MAX (row_argmin's lazy index).
template <int Lo, int Hi>
__device__ __forceinline__ int warp_min_int(int v) {
#pragma unroll
  for (int d = Lo; d <= Hi; d *= 2) v = min(v, __shfl_xor_sync(0xffffffffu, v, d));
  return v;
}
// (value, index) pairs: the smaller value wins, ties go to the smaller index (a deterministic argmin).
template <int Lo, int Hi>
__device__ __forceinline__ void warp_argmin(float& v, int& i) {
#pragma unroll
  for (int d = Lo; d <= Hi; d *= 2) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, d);
    const int oi = __shfl_xor_sync(0xffffffffu, i, d);
    if (ov < v || (ov == v && oi < i)) v = ov, i = oi;
  }
}
template <int Lo, int Hi>
__device__ __forceinline__ void warp_argmax(float& v, int& i) {
#pragma unroll
  for (int d = Lo; d <= Hi; d *= 2) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, d);
    const int oi = __shfl_xor_sync(0xffffffffu, i, d);
    if (ov > v || (ov == v && oi < i)) v = ov, i = oi;
  }
}

// ---- global vector access [PTX §9.7.9.8 ld, §9.7.9.10 st] ---------------------------------------------
// N 32-bit words (N = 1, 2, 4) at an address aligned to 4 * N bytes.
template <int N>
__device__ __forceinline__ void ld_global_words(u32* r, const u32* p) {
  if constexpr (N == 4) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
  } else if constexpr (N == 2) {
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    r[0] = v.x, r[1] = v.y;
  } else {
    r[0] = *p;
  }
}
template <int N>
__device__ __forceinline__ void st_global_words(u32* p, const u32* r) {
  if constexpr (N == 4) *reinterpret_cast<uint4*>(p) = make_uint4(r[0], r[1], r[2], r[3]);
  else if constexpr (N == 2) *reinterpret_cast<uint2*>(p) = make_uint2(r[0], r[1]);
  else *p = r[0];
}

// ---- atomics [PTX §9.7.12.4 red] ---------------------------------------------------------------------
__device__ __forceinline__ void red_add_f32(float* p, float v) { atomicAdd(p, v); }
// An i64 element += round-to-nearest(v) (cvt.rni.s64.f32: saturating, NaN -> 0) as red.global.add.u64:
// two's-complement addition is the same for signed values, and integer addition is associative, so the
// sum does not depend on the order of the atomics (the deterministic sums of the k-means update).
__device__ __forceinline__ void red_add_s64_rn(i64* p, float v) {
  atomicAdd(reinterpret_cast<u64*>(p), static_cast<u64>(__float2ll_rn(v)));
}
// red.global.add.noftz.bf16x2 (sm_90+): two adjacent bf16 (4-byte aligned) in one atomic.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ void red_add_bf16x2(void* p, u32 v) {
  asm volatile("red.global.add.noftz.bf16x2 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// red.global.add.noftz.bf16 (sm_90+): one bf16 (2-byte aligned).
__device__ __forceinline__ void red_add_bf16(void* p, u16 v) {
  asm volatile("red.global.add.noftz.bf16 [%0], %1;" ::"l"(p), "h"(v) : "memory");
}
// red.global.add.v2.f32 / red.global.add.v4.f32: 2 / 4 adjacent f32 in one reduction, at a global address
// aligned to 8 / 16 bytes [PTX §9.7.12.4 red: "red{.sem}{.scope}{.global}.add{.level::cache_hint}.vec_32_bit.f32",
// vec_32_bit = {.v2, .v4}, .global only; "Support for vector types introduced in PTX ISA version 8.1",
// "requires sm_90 or higher"; atomic per element, not as a whole, like the scalar form]. ptxas 13.0 refuses
// it for sm_80 ("Feature 'red instruction with vector types' requires .target sm_90 or higher").
__device__ __forceinline__ void red_add_f32x2(float* p, u32 a, u32 b) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(__uint_as_float(a)), "f"(__uint_as_float(b)) : "memory");
}
__device__ __forceinline__ void red_add_f32x4(float* p, u32 a, u32 b, u32 c, u32 d) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(__uint_as_float(a)), "f"(__uint_as_float(b)), "f"(__uint_as_float(c)),
               "f"(__uint_as_float(d))
               : "memory");
}
// Adds the G (2 or 4) f32 whose bits are v[0..G) at p[0..G), those of index < n only (n: the columns left in
// the row; n <= 0 adds nothing): one vector reduction when all G are inside and p is aligned to 4 * G bytes;
// otherwise aligned pairs (G = 4), then single elements. Exact at ragged edges: nothing at index >= n.
template <int G>
__device__ __forceinline__ void red_add_f32_group(float* p, const u32* v, long long n) {
  static_assert(G == 2 || G == 4, "groups of 2 or 4 f32");
  if (n >= G && (reinterpret_cast<unsigned long long>(p) % (4u * G)) == 0) {
    if constexpr (G == 4) red_add_f32x4(p, v[0], v[1], v[2], v[3]);
    else red_add_f32x2(p, v[0], v[1]);
    return;
  }
#pragma unroll
  for (int j = 0; j < G; j += 2) {
    if (j + 2 <= n && (reinterpret_cast<unsigned long long>(p + j) % 8u) == 0) {
      red_add_f32x2(p + j, v[j], v[j + 1]);
    } else {
      if (j < n) atomicAdd(p + j, __uint_as_float(v[j]));
      if (j + 1 < n) atomicAdd(p + j + 1, __uint_as_float(v[j + 1]));
    }
  }
}
#endif

}  // namespace cake_dev
