#pragma once
// Tiled TMA descriptors (CUtensorMap, 128-B aligned by cuda.h's declaration, more than the 64 B the
// driver needs). The spec is validated before the driver is called, against the rules of
// cuTensorMapEncodeTiled (hardware-facts §2), so a bad spec gets a message with the numbers instead of
// CUDA_ERROR_INVALID_VALUE. validate_tensor_map needs no GPU; encode_tensor_map needs the driver.
#include <cuda.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cake/jit/driver.hpp>

namespace cake::jit {

// Element kinds TMA moves. 8-bit floats and int8 travel as bytes (TMA copies; it does not convert).
enum class tma_dtype { u8, i8, e4m3, e5m2, u16, f16, bf16, u32, i32, f32, tf32, u64, i64, f64 };
enum class tma_swizzle { none, b32, b64, b128 };
enum class tma_oob_fill { zeros, nan_request_zero_fma };  // NaN fill is for floating-point kinds only
enum class tma_l2_promotion { none, b64, b128, b256 };

constexpr int element_bytes(tma_dtype t) {
  switch (t) {
    case tma_dtype::u8: case tma_dtype::i8: case tma_dtype::e4m3: case tma_dtype::e5m2: return 1;
    case tma_dtype::u16: case tma_dtype::f16: case tma_dtype::bf16: return 2;
    case tma_dtype::u32: case tma_dtype::i32: case tma_dtype::f32: case tma_dtype::tf32: return 4;
    case tma_dtype::u64: case tma_dtype::i64: case tma_dtype::f64: return 8;
  }
  return 0;
}
constexpr bool is_floating(tma_dtype t) {
  return t == tma_dtype::f16 || t == tma_dtype::bf16 || t == tma_dtype::f32 || t == tma_dtype::tf32 ||
         t == tma_dtype::f64;
}
constexpr int swizzle_span_bytes(tma_swizzle s) {
  return s == tma_swizzle::b32 ? 32 : s == tma_swizzle::b64 ? 64 : s == tma_swizzle::b128 ? 128 : 0;
}
constexpr CUtensorMapDataType to_cuda(tma_dtype t) {
  switch (t) {
    case tma_dtype::u8: case tma_dtype::i8: case tma_dtype::e4m3: case tma_dtype::e5m2: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case tma_dtype::u16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case tma_dtype::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case tma_dtype::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case tma_dtype::u32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case tma_dtype::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case tma_dtype::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case tma_dtype::tf32: return CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
    case tma_dtype::u64: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
    case tma_dtype::i64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case tma_dtype::f64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

inline constexpr unsigned tma_max_rank = 5;

namespace detail {
inline std::string hex(std::uintptr_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}
}  // namespace detail

struct tensor_map_spec {
  tma_dtype dtype = tma_dtype::bf16;
  unsigned rank = 2;
  const void* global_address = nullptr;               // device address (CUdeviceptr cast to a pointer)
  std::array<std::uint64_t, 5> global_dims{};          // elements, innermost first
  std::array<std::uint64_t, 4> global_strides_bytes{}; // rank-1 entries: the stride of dims 1..rank-1
  std::array<std::uint32_t, 5> box_dims{};             // elements per TMA copy, innermost first
  std::array<std::uint32_t, 5> element_strides{1, 1, 1, 1, 1};
  tma_swizzle swizzle = tma_swizzle::none;
  tma_oob_fill oob_fill = tma_oob_fill::zeros;
  tma_l2_promotion l2_promotion = tma_l2_promotion::none;

  // Bytes one copy delivers: the full box, including any part that falls out of bounds (hardware-facts
  // §1: expect_tx must count these bytes).
  std::uint64_t box_bytes() const {
    std::uint64_t n = static_cast<std::uint64_t>(element_bytes(dtype));
    for (unsigned i = 0; i < rank && i < tma_max_rank; ++i) n *= box_dims[i];
    return n;
  }
};

// Every rule the spec breaks, one message each (empty: valid).
inline std::vector<std::string> validate_tensor_map(const tensor_map_spec& s) {
  std::vector<std::string> bad;
  const auto n = [](auto v) { return std::to_string(v); };
  const auto esize = static_cast<std::uint64_t>(element_bytes(s.dtype));
  if (s.rank < 1 || s.rank > tma_max_rank) {
    bad.push_back("rank " + n(s.rank) + " is outside 1..5");
    return bad;  // the arrays below cannot be read meaningfully
  }
  const auto addr = reinterpret_cast<std::uintptr_t>(s.global_address);
  if (addr == 0) bad.push_back("global address is null");
  else if (addr % 16 != 0)
    bad.push_back("global address " + detail::hex(addr) + " is not 16-byte aligned (it is " + n(addr % 16) + " bytes past a 16-byte boundary)");
  for (unsigned i = 0; i < s.rank; ++i) {
    const auto d = s.global_dims[i];
    if (d == 0 || d > (1ull << 32)) bad.push_back("global_dims[" + n(i) + "] = " + n(d) + " is outside 1..2^32");
  }
  for (unsigned i = 0; i + 1 < s.rank; ++i) {
    const auto st = s.global_strides_bytes[i];
    if (st % 16 != 0) bad.push_back("global_strides_bytes[" + n(i) + "] = " + n(st) + " is not a multiple of 16");
    if (st >= (1ull << 40)) bad.push_back("global_strides_bytes[" + n(i) + "] = " + n(st) + " is not below 2^40");
  }
  for (unsigned i = 0; i < s.rank; ++i) {
    const auto b = s.box_dims[i];
    if (b < 1 || b > 256) bad.push_back("box_dims[" + n(i) + "] = " + n(b) + " is outside 1..256");
    const auto e = s.element_strides[i];
    if (e < 1 || e > 8) bad.push_back("element_strides[" + n(i) + "] = " + n(e) + " is outside 1..8");
  }
  const auto inner = static_cast<std::uint64_t>(s.box_dims[0]) * esize;
  if (inner % 16 != 0)
    bad.push_back("inner box is " + n(s.box_dims[0]) + " elements x " + n(esize) + " B = " + n(inner) +
                  " B, not a multiple of 16 B");
  if (const auto span = swizzle_span_bytes(s.swizzle); span > 0 && inner > static_cast<std::uint64_t>(span))
    bad.push_back("inner box is " + n(inner) + " B, larger than the " + n(span) + " B swizzle span (at most " +
                  n(span / esize) + " elements of " + n(esize) + " B)");
  if (s.oob_fill == tma_oob_fill::nan_request_zero_fma && !is_floating(s.dtype))
    bad.push_back("NaN out-of-bounds fill needs a floating-point element kind");
  return bad;
}

// Validates, then encodes with cuTensorMapEncodeTiled. Throws jit::error listing every broken rule, or
// the driver's error.
inline CUtensorMap encode_tensor_map(const tensor_map_spec& s) {
  if (const auto bad = validate_tensor_map(s); !bad.empty()) {
    std::string msg = "invalid tensor map:";
    for (const auto& b : bad) msg += "\n  " + b;
    throw error(msg);
  }
  const auto& d = driver::get();
  CUtensorMap map{};
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], estrides[5];
  for (unsigned i = 0; i < s.rank; ++i) {
    dims[i] = s.global_dims[i];
    box[i] = s.box_dims[i];
    estrides[i] = s.element_strides[i];
    if (i + 1 < s.rank) strides[i] = s.global_strides_bytes[i];
  }
  const auto swz = s.swizzle == tma_swizzle::b32    ? CU_TENSOR_MAP_SWIZZLE_32B
                   : s.swizzle == tma_swizzle::b64  ? CU_TENSOR_MAP_SWIZZLE_64B
                   : s.swizzle == tma_swizzle::b128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                                    : CU_TENSOR_MAP_SWIZZLE_NONE;
  const auto l2 = s.l2_promotion == tma_l2_promotion::b64    ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                  : s.l2_promotion == tma_l2_promotion::b128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                  : s.l2_promotion == tma_l2_promotion::b256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                                             : CU_TENSOR_MAP_L2_PROMOTION_NONE;
  const auto oob = s.oob_fill == tma_oob_fill::nan_request_zero_fma ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                                                                    : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  d.check(d.cuTensorMapEncodeTiled(&map, to_cuda(s.dtype), s.rank, const_cast<void*>(s.global_address), dims,
                                   strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swz, l2, oob),
          "cuTensorMapEncodeTiled",
          "encoding a rank-" + std::to_string(s.rank) + " tensor map (box bytes " + std::to_string(s.box_bytes()) + ")");
  return map;
}

}  // namespace cake::jit
