// Unit tests for cake/core/dtype.hpp: the dtype table (names, sizes, MMA units), accumulator legality
// and the tag types used as builder template arguments.
#include <doctest/doctest.h>

#include <set>
#include <string_view>
#include <type_traits>

#include "cake/core/dtype.hpp"

using namespace cake;

TEST_CASE("dtype table: every entry sits at its enum's index, with the documented name and size") {
  struct expected {
    dtype d;
    std::string_view name;
    int bits;
  };
  const expected table[] = {{dtype::f32, "f32", 32}, {dtype::f16, "f16", 16},  {dtype::bf16, "bf16", 16}, {dtype::tf32, "tf32", 32},
                            {dtype::e4m3, "e4m3", 8}, {dtype::e5m2, "e5m2", 8}, {dtype::i8, "i8", 8},       {dtype::i32, "i32", 32},
                            {dtype::i64, "i64", 64}};
  static_assert(sizeof(table) / sizeof(table[0]) == dtype_count);
  for (const auto& e : table) {
    CAPTURE(e.name);
    CHECK(info(e.d).id == e.d);
    CHECK(to_string(e.d) == e.name);
    CHECK(size_bits(e.d) == e.bits);
    CHECK(size_bytes(e.d) == e.bits / 8);
  }
}

TEST_CASE("dtype table: names are unique") {
  std::set<std::string_view> names;
  for (const auto& e : dtype_table) names.insert(e.name);
  CHECK(names.size() == static_cast<std::size_t>(dtype_count));
}

TEST_CASE("dtype table: which matrix units take a dtype as an operand") {
  // mma.sync on sm_80 has no fp8; wgmma and tcgen05 take every operand type (hardware-facts §3-§5).
  for (dtype d : {dtype::f16, dtype::bf16, dtype::tf32, dtype::i8}) {
    CAPTURE(to_string(d));
    CHECK((info(d).operand_of & unit_mma_sync) != 0);
    CHECK((info(d).operand_of & unit_wgmma) != 0);
    CHECK((info(d).operand_of & unit_tcgen05) != 0);
  }
  for (dtype d : {dtype::e4m3, dtype::e5m2}) {
    CHECK((info(d).operand_of & unit_mma_sync) == 0);
    CHECK((info(d).operand_of & unit_wgmma) != 0);
    CHECK((info(d).operand_of & unit_tcgen05) != 0);
  }
  // f32 and i32 are accumulators, never operands.
  CHECK(info(dtype::f32).operand_of == unit_none);
  CHECK(info(dtype::i32).operand_of == unit_none);
  CHECK(info(dtype::f32).accumulator_of == (unit_mma_sync | unit_wgmma | unit_tcgen05));
  CHECK(info(dtype::i32).accumulator_of == (unit_mma_sync | unit_wgmma | unit_tcgen05));
  CHECK(info(dtype::bf16).accumulator_of == unit_none);
  // i64 is storage only (exact sums in global memory): no matrix unit reads or accumulates it.
  CHECK(info(dtype::i64).operand_of == unit_none);
  CHECK(info(dtype::i64).accumulator_of == unit_none);
}

TEST_CASE("dtype table: K of one MMA instruction step follows the element width") {
  CHECK(info(dtype::f16).mma_k == 16);
  CHECK(info(dtype::bf16).mma_k == 16);
  CHECK(info(dtype::tf32).mma_k == 8);
  CHECK(info(dtype::e4m3).mma_k == 32);
  CHECK(info(dtype::e5m2).mma_k == 32);
  CHECK(info(dtype::i8).mma_k == 32);
  // Every operand dtype's K step covers 32 bytes of K (two 16-byte core-matrix columns).
  for (const auto& e : dtype_table)
    if (e.operand_of != unit_none) CHECK(e.mma_k * e.bits == 256);
}

TEST_CASE("dtype predicates: fp8 and 16-bit floats") {
  CHECK(is_float8(dtype::e4m3));
  CHECK(is_float8(dtype::e5m2));
  CHECK_FALSE(is_float8(dtype::i8));
  CHECK_FALSE(is_float8(dtype::bf16));
  CHECK(is_16bit_float(dtype::f16));
  CHECK(is_16bit_float(dtype::bf16));
  CHECK_FALSE(is_16bit_float(dtype::tf32));
  CHECK_FALSE(is_16bit_float(dtype::e4m3));
}

TEST_CASE("accumulator legality per operand dtype (hardware-facts §3)") {
  CHECK(accumulator_legal(dtype::bf16, dtype::f32));
  CHECK_FALSE(accumulator_legal(dtype::bf16, dtype::f16));
  CHECK(accumulator_legal(dtype::tf32, dtype::f32));
  CHECK_FALSE(accumulator_legal(dtype::tf32, dtype::f16));
  CHECK(accumulator_legal(dtype::f16, dtype::f16));
  CHECK(accumulator_legal(dtype::f16, dtype::f32));
  CHECK(accumulator_legal(dtype::e4m3, dtype::f16));
  CHECK(accumulator_legal(dtype::e5m2, dtype::f32));
  CHECK(accumulator_legal(dtype::i8, dtype::i32));
  CHECK_FALSE(accumulator_legal(dtype::i8, dtype::f32));
  // Accumulator types are not operands.
  CHECK_FALSE(accumulator_legal(dtype::f32, dtype::f32));
  CHECK_FALSE(accumulator_legal(dtype::i32, dtype::i32));
  // An accumulator is never narrower than 16 bits.
  for (const auto& op : dtype_table)
    for (const auto& acc : dtype_table)
      if (accumulator_legal(op.id, acc.id)) CHECK(acc.bits >= 16);
}

TEST_CASE("dtype tags carry their dtype and satisfy element_type") {
  static_assert(element_type<bf16> && element_type<i32> && !element_type<int>);
  CHECK(f32::value == dtype::f32);
  CHECK(f16::value == dtype::f16);
  CHECK(bf16::value == dtype::bf16);
  CHECK(tf32::value == dtype::tf32);
  CHECK(e4m3::value == dtype::e4m3);
  CHECK(e5m2::value == dtype::e5m2);
  CHECK(i8::value == dtype::i8);
  CHECK(i32::value == dtype::i32);
  CHECK(i64::value == dtype::i64);
  CHECK_FALSE(std::is_same_v<f16, bf16>);
}

TEST_CASE("dtype functions are usable in constant expressions") {
  constexpr int b = size_bytes(dtype::bf16) * 64;
  static_assert(b == 128);
  static_assert(to_string(dtype::e4m3) == "e4m3");
  static_assert(!accumulator_legal(dtype::bf16, dtype::f16));
  CHECK(b == 128);
}
