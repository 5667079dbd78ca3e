// Unit tests for cake/plan/tma.hpp and tmem.hpp: the tensor maps a kernel needs (multicast loads split
// the box across the cluster) and the TMEM column plan.
#include <doctest/doctest.h>

#include <limits>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

TEST_CASE("tma plan: sm_90a GEMM: A box, B box split by the multicast, D store box") {
  constexpr program p = kernels::gemm_bf16_sm90();
  constexpr auto T = plan::plan_tma(p);
  REQUIRE(T.count == 3);
  CHECK_FALSE(T.overflow);
  CHECK(T.descriptors[0] == plan::tma_descriptor{0, 0, 128, 64, swizzle::b128});  // A
  CHECK(T.descriptors[1] == plan::tma_descriptor{1, 0, 128, 64, swizzle::b128});  // B: 256 rows over 2 CTAs
  CHECK(T.descriptors[2] == plan::tma_descriptor{2, 0, 64, 64, swizzle::b128});   // D: one warpgroup's half
  const int load_a = find_op(p, op_kind::tma_load, 0), load_b = find_op(p, op_kind::tma_load, 1), store = find_op(p, op_kind::tma_store);
  CHECK(T.of_op[load_a] == 0);
  CHECK(T.of_op[load_b] == 1);
  CHECK(T.of_op[store] == 2);
  CHECK(T.split_of_op[load_a] == 1);
  CHECK(T.split_of_op[load_b] == 2);
  CHECK(T.of_op[0] == -1);  // the tile loop
  CHECK(T.split_of_op[0] == 1);
  CHECK(plan::tma_smem_side(p.ops[store]).kind == operand_kind::smem);
  CHECK(plan::tma_global_side(p.ops[store]).kind == operand_kind::global);
}

TEST_CASE("tma plan: sm_100a GEMM loads whole boxes, sm_80 has no tensor maps") {
  constexpr auto T = plan::plan_tma(kernels::gemm_bf16_sm100());
  REQUIRE(T.count == 2);
  CHECK(T.descriptors[0] == plan::tma_descriptor{0, 0, 128, 64, swizzle::b128});
  CHECK(T.descriptors[1] == plan::tma_descriptor{1, 0, 256, 64, swizzle::b128});
  CHECK(plan::plan_tma(kernels::gemm_bf16_sm80()).count == 0);  // cp.async needs none
}

TEST_CASE("tma plan: fill_outside(nan) gives a load its own NaN-filled tensor map, 0 is the default, other values and integer tensors are refused") {
  auto k = kernel("k").target(sm_90a);
  auto [B, K] = k.dims("B", "K");
  auto N = k.input<f32>("norms", dims(B, K));
  auto I = k.input<i32>("ids", dims(B, K));
  auto s1 = k.smem<f32>("s1", {1, 128});
  auto s2 = k.smem<f32>("s2", {1, 128});
  auto si = k.smem<i32>("si", {1, 128});
  int bad_value = -1, bad_type = -1;
  k.role("r", warps(1), [&](role& r) {
    r.tma_load(s1, N.tile(0, 0)).fill_outside(std::numeric_limits<float>::quiet_NaN());
    r.tma_load(s2, N.tile(0, 1)).fill_outside(0.0f);  // the default fill: another descriptor than s1's
    bad_value = r.tma_load(s2, N.tile(0, 1)).fill_outside(-1.0f).id;
    bad_type = r.tma_load(si, I.tile(0, 0)).fill_outside(std::numeric_limits<float>::quiet_NaN()).id;
    r.fence_proxy_async();
  });
  const program& p = k.p;
  CHECK(count_errors(p, "ir.modifier") == 2);
  CHECK(has_error(p, "ir.modifier", bad_value));
  CHECK(has_error(p, "ir.modifier", bad_type));
  CHECK(p.ops[0].has(flag_oob_nan));
  CHECK_FALSE(p.ops[1].has(flag_oob_nan));
  CHECK_FALSE(p.ops[static_cast<std::size_t>(bad_type)].has(flag_oob_nan));
  const auto T = plan::plan_tma(p);
  CHECK(T.descriptors[T.of_op[0]].nan_fill);
  CHECK_FALSE(T.descriptors[T.of_op[1]].nan_fill);
  CHECK(T.of_op[0] != T.of_op[1]);  // same tensor and box, another fill: another tensor map
  CHECK(to_text(p).find("fill_outside nan") != std::string::npos);
}

TEST_CASE("tma plan: equal (tensor, box, swizzle) share one descriptor, a cluster of 4 splits by 4") {
  auto k = kernel("k").cluster(4);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto s1 = k.smem<bf16>("s1", {128, 64}, swizzle::b128);
  auto s2 = k.smem<bf16>("s2", {128, 64}, swizzle::b128);
  auto s3 = k.smem<bf16>("s3", {128, 32}, swizzle::b64);
  k.role("r", warps(1), [&](role& r) {
    r.tma_load(s1, A.tile(0, 0));
    r.tma_load(s2, A.tile(1, 0));               // same descriptor as s1
    r.tma_load(s3, A.tile(0, 1));               // another box and swizzle
    r.tma_load(s2, A.tile(0, 0)).multicast();   // 32 rows per CTA
    r.fence_proxy_async();
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto T = plan::plan_tma(p);
  REQUIRE(T.count == 3);
  CHECK(T.of_op[0] == T.of_op[1]);
  CHECK(T.descriptors[1] == plan::tma_descriptor{0, 0, 128, 32, swizzle::b64});
  CHECK(T.descriptors[2].box_rows == 32);
  CHECK(T.split_of_op[3] == 4);
  CHECK(T.of_op[4] == -1);
}

TEST_CASE("tma plan: a rank-4 tensor tiled with rows_at: the box's rows run along the named dim") {
  auto k = kernel("k");
  auto [B, S, H, D] = k.dims("B", "S", "H", "D");
  auto Q = k.input<bf16>("Q", dims(B, S, H, D));
  auto sQ = k.smem<bf16>("sQ", {64, 64}, swizzle::b128);
  auto sR = k.smem<bf16>("sR", {16, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  k.role("r", warps(1), [&](role& r) {
    r.tma_load(sQ, Q.tile(1, 2, 3, 0).rows_at(1), bar);  // rows over S, columns over D
    r.tma_load(sR, Q.tile(1, 2, 3, 0), bar);             // default: rows over H (the second-to-last)
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto T = plan::plan_tma(p);
  REQUIRE(T.count == 2);
  CHECK(T.descriptors[0] == plan::tma_descriptor{0, 1, 64, 64, swizzle::b128});
  CHECK(T.descriptors[1] == plan::tma_descriptor{0, 2, 16, 64, swizzle::b128});
  CHECK(p.tile_refs[p.ops[0].a.index].row_pos == 1);
  CHECK(p.tile_refs[p.ops[1].a.index].row_pos == no_index);
  (void)B, (void)S, (void)H, (void)D;
}

TEST_CASE("tma plan: a tile prefetch uses its load's tensor map (whatever its fill), another box gets its own") {
  auto k = kernel("k").target(sm_90a);
  auto [P, PS, HK, D] = k.dims("pages", "page_size", "HK", "D");
  auto Kc = k.input<bf16>("K", dims(P, PS, HK, D));
  auto N = k.input<f32>("norms", dims("B", "C"));
  auto sK = k.smem<bf16>("sK", {64, 64}, swizzle::b128);
  auto sN = k.smem<f32>("sN", {1, 128});
  auto bar = k.mbarrier("bar");
  k.role("r", warps(1), [&](role& r) {
    r.tma_load(sK.rows(1, 4), Kc.tile(7, 0, 2, 1).rows_at(1), bar);  // a 16-key page box
    r.prefetch_l2(sK.rows(2, 4), Kc.tile(9, 0, 2, 1).rows_at(1));   // the same box, another page
    r.prefetch_l2(sK, Kc.tile(9, 0, 2, 1).rows_at(1));              // a 64-row box: a map of its own
    r.tma_load(sN, N.tile(0, 1), bar).fill_outside(std::numeric_limits<float>::quiet_NaN());
    r.prefetch_l2(sN, N.tile(0, 2));                                 // shares the NaN-filled map
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  CHECK(p.ops[1].kind == op_kind::tma_prefetch_tile);
  CHECK(plan::tma_smem_side(p.ops[1]).kind == operand_kind::smem);
  CHECK(plan::tma_global_side(p.ops[1]).kind == operand_kind::global);
  const auto T = plan::plan_tma(p);
  REQUIRE(T.count == 3);
  CHECK(T.descriptors[0] == plan::tma_descriptor{0, 1, 16, 64, swizzle::b128});
  CHECK(T.descriptors[1] == plan::tma_descriptor{0, 1, 64, 64, swizzle::b128});
  CHECK(T.descriptors[2] == plan::tma_descriptor{1, 0, 1, 128, swizzle::none, true});
  CHECK(T.of_op[0] == 0);
  CHECK(T.of_op[1] == 0);
  CHECK(T.of_op[2] == 1);
  CHECK(T.of_op[4] == 2);
  (void)P, (void)PS, (void)HK, (void)D;
}

TEST_CASE("tma plan: more than 8 distinct descriptors is flagged") {
  auto k = kernel("k");
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto s = k.smem<bf16>("s", {128, 64});
  k.role("r", warps(1), [&](role& r) {
    for (int n = 1; n <= 9; ++n) r.tma_load(s.rows(0, n == 9 ? 64 : n), A.tile(0, 0));
  });
  // Nine distinct boxes: 128/n rows for n = 1..8 and 128/64 (3, 5, 6, 7 do not divide 128 rows: those
  // are builder errors, but the plan still covers them).
  const auto T = plan::plan_tma(k.p);
  CHECK(T.count == plan::tma_plan::max_descriptors);
  CHECK(T.overflow);
}

TEST_CASE("tmem plan: sm_100a GEMM allocates 256 columns for one 256-column accumulator") {
  constexpr auto T = plan::plan_tmem(kernels::gemm_bf16_sm100());
  CHECK(T.column_of[0] == 0);
  CHECK(T.used == 256);
  CHECK(T.allocated == 256);
  CHECK(T.fits);
}

TEST_CASE("tmem plan: regions are packed, allocation is a power of two in 32..512") {
  auto k = kernel("k").target(sm_100a);
  auto a = k.tmem("a", columns(96));
  auto b = k.tmem("b", columns(64));
  k.pipeline("p", stages(2)).carries(b);
  (void)a;
  const auto T = plan::plan_tmem(k.p);
  CHECK(T.column_of[0] == 0);
  CHECK(T.column_of[1] == 96);
  CHECK(T.used == 96 + 128);
  CHECK(T.allocated == 256);
  auto s = kernel("s").target(sm_100a);
  s.tmem("x", columns(20));
  CHECK(plan::plan_tmem(s.p).allocated == 32);
  CHECK(plan::plan_tmem(kernel("none").p).allocated == 0);
  auto o = kernel("o").target(sm_100a);
  o.tmem("x", columns(512));
  o.tmem("y", columns(1));
  const auto over = plan::plan_tmem(o.p);
  CHECK_FALSE(over.fits);
  CHECK(over.allocated == 512);
  CHECK(over.used == 513);
}
