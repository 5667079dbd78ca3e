// Tensor-map validation: every rule of cuTensorMapEncodeTiled is checked before the driver is called,
// and each message carries the offending number.
#include <doctest/doctest.h>

#include <cake/jit/tensor_map.hpp>

using namespace cake::jit;

namespace {

// A valid 2-D bf16 map: a 4096 x 1000 row-major matrix (K innermost), 64 x 128 boxes, 128B swizzle.
tensor_map_spec good() {
  tensor_map_spec s;
  s.dtype = tma_dtype::bf16;
  s.rank = 2;
  s.global_address = reinterpret_cast<const void*>(std::uintptr_t{0x7f0000000000});
  s.global_dims = {4096, 1000};
  s.global_strides_bytes = {4096 * 2};
  s.box_dims = {64, 128};
  s.swizzle = tma_swizzle::b128;
  return s;
}

std::string only_problem(const tensor_map_spec& s) {
  const auto bad = validate_tensor_map(s);
  REQUIRE(bad.size() == 1);
  return bad[0];
}

}  // namespace

TEST_CASE("tensor map: a valid spec passes, and its box bytes count the whole box") {
  CHECK(validate_tensor_map(good()).empty());
  CHECK(good().box_bytes() == 64 * 128 * 2);
  auto s = good();
  s.rank = 5;
  s.global_dims = {64, 2, 3, 4, 5};
  s.global_strides_bytes = {128, 256, 768, 3072};
  s.box_dims = {64, 1, 1, 1, 1};
  CHECK(validate_tensor_map(s).empty());
}

TEST_CASE("tensor map: each broken rule is reported with its numbers") {
  auto s = good();
  s.rank = 6;
  CHECK(only_problem(s) == "rank 6 is outside 1..5");
  s.rank = 0;
  CHECK(only_problem(s) == "rank 0 is outside 1..5");

  s = good();
  s.global_address = reinterpret_cast<const void*>(std::uintptr_t{0x7f0000000008});
  CHECK(only_problem(s) == "global address 0x7f0000000008 is not 16-byte aligned (it is 8 bytes past a 16-byte boundary)");
  s.global_address = nullptr;
  CHECK(only_problem(s) == "global address is null");

  s = good();
  s.global_dims[1] = 0;
  CHECK(only_problem(s) == "global_dims[1] = 0 is outside 1..2^32");
  s.global_dims[1] = (1ull << 32) + 1;
  CHECK(only_problem(s) == "global_dims[1] = 4294967297 is outside 1..2^32");
  s.global_dims[1] = 1ull << 32;
  CHECK(validate_tensor_map(s).empty());

  s = good();
  s.global_strides_bytes[0] = 200;
  CHECK(only_problem(s) == "global_strides_bytes[0] = 200 is not a multiple of 16");
  s.global_strides_bytes[0] = 1ull << 40;
  CHECK(only_problem(s) == "global_strides_bytes[0] = 1099511627776 is not below 2^40");

  s = good();
  s.box_dims[1] = 257;
  CHECK(only_problem(s) == "box_dims[1] = 257 is outside 1..256");
  s.box_dims[1] = 0;
  CHECK(only_problem(s) == "box_dims[1] = 0 is outside 1..256");

  s = good();
  s.element_strides[1] = 9;
  CHECK(only_problem(s) == "element_strides[1] = 9 is outside 1..8");
}

TEST_CASE("tensor map: inner box bytes against 16 B and the swizzle span") {
  auto s = good();
  s.box_dims[0] = 128;  // 256 B with SW128
  CHECK(only_problem(s) == "inner box is 256 B, larger than the 128 B swizzle span (at most 64 elements of 2 B)");
  s.swizzle = tma_swizzle::b64;
  s.box_dims[0] = 64;  // 128 B with SW64
  CHECK(only_problem(s) == "inner box is 128 B, larger than the 64 B swizzle span (at most 32 elements of 2 B)");
  s.box_dims[0] = 32;  // 64 B with SW64: fine
  CHECK(validate_tensor_map(s).empty());
  s.swizzle = tma_swizzle::none;
  s.box_dims[0] = 4;  // 8 B
  CHECK(only_problem(s) == "inner box is 4 elements x 2 B = 8 B, not a multiple of 16 B");
  s.dtype = tma_dtype::e4m3;
  s.box_dims[0] = 16;  // 16 B of fp8
  CHECK(validate_tensor_map(s).empty());
  s.swizzle = tma_swizzle::b32;
  s.box_dims[0] = 48;
  CHECK(only_problem(s) == "inner box is 48 B, larger than the 32 B swizzle span (at most 32 elements of 1 B)");
}

TEST_CASE("tensor map: NaN fill only for floating-point kinds, several problems are all listed") {
  auto s = good();
  s.oob_fill = tma_oob_fill::nan_request_zero_fma;
  CHECK(validate_tensor_map(s).empty());
  s.dtype = tma_dtype::i8;
  s.box_dims[0] = 128;
  CHECK(only_problem(s) == "NaN out-of-bounds fill needs a floating-point element kind");

  s = good();
  s.box_dims = {0, 300};
  s.global_strides_bytes[0] = 8;
  CHECK(validate_tensor_map(s).size() == 3);  // the stride and both boxes
  CHECK_THROWS_WITH_AS(encode_tensor_map(s), doctest::Contains("invalid tensor map:\n  global_strides_bytes[0] = 8"),
                       cake::jit::error);
}

TEST_CASE("tensor map: element kinds map to the driver's data types") {
  CHECK(to_cuda(tma_dtype::bf16) == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  CHECK(to_cuda(tma_dtype::f16) == CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  CHECK(to_cuda(tma_dtype::f32) == CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  CHECK(to_cuda(tma_dtype::tf32) == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32);
  CHECK(to_cuda(tma_dtype::e4m3) == CU_TENSOR_MAP_DATA_TYPE_UINT8);
  CHECK(to_cuda(tma_dtype::e5m2) == CU_TENSOR_MAP_DATA_TYPE_UINT8);
  CHECK(to_cuda(tma_dtype::i8) == CU_TENSOR_MAP_DATA_TYPE_UINT8);
  CHECK(to_cuda(tma_dtype::i32) == CU_TENSOR_MAP_DATA_TYPE_INT32);
  CHECK(element_bytes(tma_dtype::tf32) == 4);
  CHECK(element_bytes(tma_dtype::e5m2) == 1);
  CHECK(alignof(CUtensorMap) >= 64);
}
