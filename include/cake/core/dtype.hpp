#pragma once
// Element types, their sizes, and which matrix units accept them (hardware-facts §3, §4, §5).
#include <string_view>

namespace cake {

// i64 is a storage dtype of global tensors only (exact integer sums: atomic_add / scatter_add of f32 tiles
// rounded to the nearest integer, and register loads that convert back to f32); no register tile, smem
// tile or TMA box is i64.
enum class dtype : unsigned char { f32, f16, bf16, tf32, e4m3, e5m2, i8, i32, i64 };
inline constexpr int dtype_count = 9;

// Which units take a dtype as an A/B operand or as an accumulator.
enum unit_mask : unsigned {
  unit_none = 0,
  unit_mma_sync = 1u << 0,   // sm_80 mma.sync
  unit_wgmma = 1u << 1,      // sm_90a wgmma.mma_async
  unit_tcgen05 = 1u << 2,    // sm_100a tcgen05.mma
};

struct dtype_info {
  dtype id;
  std::string_view name;
  int bits;              // storage bits per element
  unsigned operand_of;   // units that accept it as an A/B operand
  unsigned accumulator_of;
  int mma_k;             // K of one MMA instruction step (elements): 16 for 16-bit, 8 tf32, 32 for 8-bit
};

inline constexpr dtype_info dtype_table[dtype_count] = {
    {dtype::f32, "f32", 32, unit_none, unit_mma_sync | unit_wgmma | unit_tcgen05, 0},
    {dtype::f16, "f16", 16, unit_mma_sync | unit_wgmma | unit_tcgen05, unit_mma_sync | unit_wgmma | unit_tcgen05, 16},
    {dtype::bf16, "bf16", 16, unit_mma_sync | unit_wgmma | unit_tcgen05, unit_none, 16},
    {dtype::tf32, "tf32", 32, unit_mma_sync | unit_wgmma | unit_tcgen05, unit_none, 8},
    {dtype::e4m3, "e4m3", 8, unit_wgmma | unit_tcgen05, unit_none, 32},
    {dtype::e5m2, "e5m2", 8, unit_wgmma | unit_tcgen05, unit_none, 32},
    {dtype::i8, "i8", 8, unit_mma_sync | unit_wgmma | unit_tcgen05, unit_none, 32},
    {dtype::i32, "i32", 32, unit_none, unit_mma_sync | unit_wgmma | unit_tcgen05, 0},
    {dtype::i64, "i64", 64, unit_none, unit_none, 0},
};

constexpr const dtype_info& info(dtype d) { return dtype_table[static_cast<int>(d)]; }
constexpr std::string_view to_string(dtype d) { return info(d).name; }
constexpr int size_bits(dtype d) { return info(d).bits; }
constexpr int size_bytes(dtype d) { return info(d).bits / 8; }
constexpr bool is_float8(dtype d) { return d == dtype::e4m3 || d == dtype::e5m2; }
constexpr bool is_16bit_float(dtype d) { return d == dtype::f16 || d == dtype::bf16; }
// Element kinds a TMA tensor map holds as floating point (fp8 travels as bytes): the ones whose
// out-of-bounds elements it can fill with NaN.
constexpr bool tma_float(dtype d) { return d == dtype::f32 || d == dtype::f16 || d == dtype::bf16 || d == dtype::tf32; }

// Accumulator legality per operand dtype (hardware-facts §3: bf16/tf32 accumulate in f32 only; f16 and
// fp8 in f16 or f32; i8 in i32).
constexpr bool accumulator_legal(dtype operand, dtype acc) {
  switch (operand) {
    case dtype::bf16:
    case dtype::tf32: return acc == dtype::f32;
    case dtype::f16:
    case dtype::e4m3:
    case dtype::e5m2: return acc == dtype::f32 || acc == dtype::f16;
    case dtype::i8: return acc == dtype::i32;
    default: return false;
  }
}

// Tag types used as builder template arguments: k.input<bf16>(...), r.accumulator<f32>(...).
template <dtype D>
struct dtype_tag {
  static constexpr dtype value = D;
};
using f32 = dtype_tag<dtype::f32>;
using f16 = dtype_tag<dtype::f16>;
using bf16 = dtype_tag<dtype::bf16>;
using tf32 = dtype_tag<dtype::tf32>;
using e4m3 = dtype_tag<dtype::e4m3>;
using e5m2 = dtype_tag<dtype::e5m2>;
using i8 = dtype_tag<dtype::i8>;
using i32 = dtype_tag<dtype::i32>;
using i64 = dtype_tag<dtype::i64>;

template <class T>
concept element_type = requires { { T::value } -> std::convertible_to<dtype>; };

}  // namespace cake
