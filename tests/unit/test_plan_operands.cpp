// Unit tests for cake/plan/operands.hpp: the rows x cols, dtype and bytes an operand touches after part
// selection, and where a part starts inside a stage (with the swizzle alignment it must keep).
#include <doctest/doctest.h>

#include "../../kernels/gemm/sm90_bf16.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

TEST_CASE("operands: shapes, dtypes and bytes after part selection (sm_90a GEMM)") {
  constexpr program p = kernels::gemm_bf16_sm90();
  const op& mma = p.ops[find_op(p, op_kind::wgmma)];
  CHECK(plan::full_shape(p, mma.a).rows == 128);
  CHECK(plan::shape_of(p, mma.a).rows == 64);  // rows(warpgroup, 2)
  CHECK(plan::shape_of(p, mma.a).cols == 64);
  CHECK(plan::shape_of(p, mma.b).rows == 256);
  CHECK(plan::shape_of(p, mma.d).cols == 256);
  CHECK(plan::dtype_of(p, mma.a) == dtype::bf16);
  CHECK(plan::dtype_of(p, mma.d) == dtype::f32);
  CHECK(plan::bytes_of(p, mma.a) == 8192);
  CHECK(plan::bytes_of(p, mma.b) == 32768);
  const op& st = p.ops[find_op(p, op_kind::stmatrix)];
  CHECK(plan::shape_of(p, st.a).cols == 64);  // out.cols(ch, 4)
  CHECK(plan::dtype_of(p, st.a) == dtype::bf16);
  const op& store = p.ops[find_op(p, op_kind::tma_store)];
  CHECK(plan::dtype_of(p, store.d) == dtype::bf16);  // the global tensor D
}

TEST_CASE("operands: part offsets and the swizzle alignment of parts") {
  auto k = kernel("k");
  auto s128 = k.smem<bf16>("s128", {128, 64}, swizzle::b128);
  auto wide = k.smem<bf16>("wide", {64, 32});
  auto tm = kernel("t").target(sm_100a).tmem("acc", columns(256));
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 64});
    r.store(s128.rows(r.warpgroup(), 2), x);  // op 0: 64-row parts: 8192 B apart, on 1024 B
    r.store(s128.rows(r.warpgroup(), 32), x); // op 1: 4-row parts: 512 B apart, breaks 128B swizzle
    r.store(wide.cols(r.warpgroup(), 2), x);  // op 2: 16-column parts: 32 B apart
    r.store(wide, x);                         // op 3: no part
  });
  const program& p = k.p;
  CHECK(plan::part_offset_bytes(p, p.ops[0].d, 1) == 8192);
  CHECK(plan::part_offset_bytes(p, p.ops[0].d, 0) == 0);
  CHECK(plan::part_alignment_ok(p, p.ops[0].d));
  CHECK(plan::part_offset_bytes(p, p.ops[1].d, 3) == 3 * 512);
  CHECK_FALSE(plan::part_alignment_ok(p, p.ops[1].d));
  CHECK(plan::part_offset_bytes(p, p.ops[2].d, 1) == 32);
  CHECK_FALSE(plan::part_alignment_ok(p, p.ops[2].d));  // 32 B is not on the 128 B boundary
  CHECK(plan::part_offset_bytes(p, p.ops[3].d, 5) == 0);
  CHECK(plan::part_alignment_ok(p, p.ops[3].d));
  // TMEM: lanes x columns.
  (void)tm;
  auto t = kernel("t").target(sm_100a);
  auto acc = t.tmem("acc", columns(256));
  t.role("e", warpgroups(1), [&](role& r) { r.tmem_load(r.fragment<f32>("f", {128, 32}), acc.cols(0, 8)); });
  CHECK(plan::shape_of(t.p, t.p.ops[0].a).rows == 128);
  CHECK(plan::shape_of(t.p, t.p.ops[0].a).cols == 32);
  CHECK(plan::dtype_of(t.p, t.p.ops[0].a) == dtype::f32);
}
