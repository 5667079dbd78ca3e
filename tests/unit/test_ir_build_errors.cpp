// Unit tests for misuse outside constant evaluation: the checks that are compile errors in a constexpr
// schedule are recorded in program::errors (rule id, value, the user's line) and never crash.
#include <doctest/doctest.h>

#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {

struct gemm {
  kernel_builder k;
  dim_ref M, N, K;
  tensor<bf16> A, B, D;
  space<2> mn;
  explicit gemm(target_id target) : k(kernel("k")) {
    k.target(target);
    const auto d = k.dims("M", "N", "K");
    M = d[0], N = d[1], K = d[2];
    A = k.input<bf16>("A", dims(M, K));
    B = k.input<bf16>("B", dims(N, K));
    D = k.output<bf16>("D", dims(M, N));
    mn = k.parallel(tiles(M, 128), tiles(N, 128));
  }
};

}  // namespace

TEST_CASE("errors: a build error records the rule, the message, the value and the user's line") {
  gemm g(sm_90a);
  auto sA = g.k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = g.k.smem<bf16>("sB", {260, 64}, swizzle::b128);
  unsigned line = 0;
  g.k.role("c", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 260});
    r.wgmma(acc, sA, sB); line = __LINE__;
  });
  const program p = g.k.build();
  REQUIRE(p.errors.size() == 1);
  const build_error& e = p.errors[0];
  CHECK(e.rule == "instruction.mma-shape");
  CHECK(e.value == 260);
  CHECK(e.message.find("8..256") != std::string_view::npos);
  CHECK(e.loc.line == line);
  CHECK(p.ops.size() == 1);  // the op is still recorded, for the analyzer to point at
}

TEST_CASE("errors: wgmma shape, unit, and operand major-ness") {
  gemm g(sm_90a);
  auto sA = g.k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = g.k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto f8a = g.k.smem<e4m3>("f8a", {128, 128}, swizzle::b128);
  auto f8b = g.k.smem<e4m3>("f8b", {128, 128}, swizzle::b128, major::mn);
  auto tfa = g.k.smem<tf32>("tfa", {64, 32}, swizzle::b128);
  auto tfb = g.k.smem<tf32>("tfb", {32, 32}, swizzle::b128, major::mn);
  auto i8a = g.k.smem<i8>("i8a", {64, 128}, swizzle::b128);
  auto i8b = g.k.smem<i8>("i8b", {40, 128}, swizzle::b128);
  g.k.role("w", warps(4), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.wgmma(acc, sA, sB);  // op 0: warps() role
  });
  g.k.role("c", warpgroups(1), [&](role& r) {
    auto acc96 = r.accumulator<f32>("acc96", {96, 128});
    auto acc = r.accumulator<f32>("acc", {64, 128});
    auto acc32 = r.accumulator<f32>("acc32", {64, 32});
    auto acci = r.accumulator<i32>("acci", {64, 40});
    r.wgmma(acc96, sA, sB);   // op 1: 96 rows per warpgroup
    r.wgmma(acc, f8a, f8b);   // op 2: fp8 with MN-major B
    r.wgmma(acc32, tfa, tfb); // op 3: tf32 with MN-major B
    r.wgmma(acci, i8a, i8b);  // op 4: i8 with N = 40
  });
  const program& p = g.k.p;
  CHECK(has_error(p, "instruction.wgmma-unit", 0));
  CHECK(has_error(p, "instruction.mma-shape", 96));
  CHECK(has_error(p, "instruction.wgmma-major", 2));
  CHECK(has_error(p, "instruction.wgmma-major", 3));
  CHECK(has_error(p, "instruction.mma-shape", 40));
  CHECK(p.errors.size() == 5);
}

TEST_CASE("errors: MN-major bf16 operands and i8 with N = 48 are legal wgmma") {
  gemm g(sm_90a);
  auto sA = g.k.smem<bf16>("sA", {64, 64}, swizzle::b128, major::mn);
  auto sB = g.k.smem<bf16>("sB", {64, 64}, swizzle::b128, major::mn);
  auto i8a = g.k.smem<i8>("i8a", {64, 128}, swizzle::b128);
  auto i8b = g.k.smem<i8>("i8b", {48, 128}, swizzle::b128);
  g.k.role("c", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    auto acci = r.accumulator<i32>("acci", {64, 48});
    r.wgmma(acc, sA, sB);
    r.wgmma(acci, i8a, i8b);
  });
  CHECK(g.k.p.errors.empty());
}

TEST_CASE("errors: mma_sync unit and warp tile shape") {
  gemm g(sm_80);
  auto sA = g.k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = g.k.smem<bf16>("sB", {64, 64}, swizzle::b128);
  g.k.role("wg", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    r.mma_sync(acc, sA, sB);
  });
  g.k.role("w", warps(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {24, 64});
    r.mma_sync(acc, sA, sB);
  });
  CHECK(has_error(g.k.p, "instruction.mma-sync-unit", 0));
  CHECK(has_error(g.k.p, "instruction.mma-shape", 24064));
}

TEST_CASE("errors: tcgen05.mma M must be 64 or 128 (value M * 1000 + N)") {
  gemm g(sm_100a);
  auto sA = g.k.smem<bf16>("sA", {96, 64}, swizzle::b128);
  auto sB = g.k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto acc = g.k.tmem("acc", columns(128));
  g.k.role("m", warps(1), [&](role& r) { r.tcgen05_mma(acc, sA, sB); });
  CHECK(has_error(g.k.p, "instruction.mma-shape", 96128));
  // An MN-major A stores [K x M]: M is its column count.
  gemm h(sm_100a);
  auto tA = h.k.smem<bf16>("tA", {64, 64}, swizzle::b128, major::mn);
  auto tB = h.k.smem<bf16>("tB", {128, 64}, swizzle::b128);
  auto acc2 = h.k.tmem("acc", columns(128));
  h.k.role("m", warps(1), [&](role& r) { r.tcgen05_mma(acc2, tA, tB); });
  CHECK(h.k.p.errors.empty());
}

TEST_CASE("errors: ops not admitted by the target name the op") {
  gemm g(sm_80);
  auto s = g.k.smem<bf16>("s", {64, 64}, swizzle::b128);
  g.k.role("r", warps(1), [&](role& r) {
    r.tma_load(s, g.A.tile(0, 0));  // op 0
    r.stmatrix(s, r.fragment<bf16>("x", {64, 64}));  // op 1
    r.fence_proxy_async();           // op 2
    r.cluster_arrive();              // op 3
    r.griddep_wait();                // op 4
    r.setmaxnreg(40);                // op 5
    r.wgmma_fence();                 // op 6
    r.tcgen05_fence_after();         // op 7
    r.cp_async(s, g.A.tile(0, 0));   // op 8: fine on sm_80
    r.ldmatrix(r.fragment<bf16>("y", {64, 64}), s);  // op 9: fine
  });
  const program& p = g.k.p;
  for (int op = 0; op <= 7; ++op) CHECK_MESSAGE(has_error(p, "instruction.not-admitted", op), op);
  CHECK(count_errors(p, "instruction.not-admitted") == 8);
  CHECK(first_error(p, "instruction.not-admitted")->message.find("TMA") != std::string_view::npos);
}

TEST_CASE("errors: tcgen05 is not admitted on sm_90a, wgmma not on sm_100a") {
  gemm h(sm_90a);
  h.k.role("r", warps(1), [&](role& r) { r.tcgen05_fence_before(); });
  CHECK(has_error(h.k.p, "instruction.not-admitted", 0));
  gemm b(sm_100a);
  b.k.role("r", warpgroups(1), [&](role& r) { r.wgmma_commit(); });
  CHECK(has_error(b.k.p, "instruction.not-admitted", 0));
}

TEST_CASE("errors: a target set after the ops is checked by build()") {
  auto k = kernel("k").cluster(2);  // fine for the default target, sm_90a
  k.role("r", warpgroups(1), regs(40), [&](role& r) { r.wgmma_fence(); });
  CHECK(k.p.errors.empty());
  k.target(sm_80);
  const program p = k.build();
  CHECK(has_error(p, "instruction.not-admitted", 0));  // wgmma_fence, op 0
  CHECK(has_error(p, "instruction.not-admitted", 2));  // the cluster size
  CHECK(has_error(p, "instruction.not-admitted", 40)); // regs(40): setmaxnreg
  auto t = kernel("t");
  t.tmem("acc", columns(64));
  CHECK(t.p.errors.size() == 1);
  t.target(sm_100a);  // declared off sm_100a, then moved to it: the earlier error stays
  t.role("r", warps(1), [](role&) {});
  CHECK(t.build().errors.size() == 1);
}

TEST_CASE("errors: build() repeats target checks without duplicating findings") {
  auto k = kernel("k").target(sm_80);
  k.role("r", warps(1), [&](role& r) { r.fence_proxy_async(); });
  CHECK(k.p.errors.size() == 1);
  const program p = k.build();
  CHECK(p.errors.size() == 1);
  CHECK(count_errors(p, "instruction.not-admitted") == 1);
}

TEST_CASE("errors: regs(n) on a target without setmaxnreg") {
  auto k = kernel("k").target(sm_80);
  k.role("r", warpgroups(1), regs(40), [](role&) {});
  CHECK(has_error(k.p, "instruction.not-admitted", 40));
}

TEST_CASE("errors: cluster size, shape and target") {
  auto k = kernel("k").target(sm_90a).cluster(32);
  CHECK(has_error(k.p, "resource.cluster-size", 32));
  auto j = kernel("j").target(sm_90a).cluster(0, 2);
  CHECK(has_error(j.p, "resource.cluster-size", 0));
  auto z = kernel("z").target(sm_90a).cluster(2, 1, 2);
  CHECK(has_error(z.p, "resource.cluster-shape", 2));
  auto y = kernel("y").target(sm_90a).cluster(2, 3);
  CHECK(has_error(y.p, "resource.cluster-shape", 3));
  auto a = kernel("a").target(sm_80).cluster(2);
  CHECK(has_error(a.p, "instruction.not-admitted", 2));
  CHECK(a.p.errors.size() == 1);  // not also "more than 16"
  auto ok = kernel("ok").target(sm_100a).cluster(16, 1);
  CHECK(ok.p.errors.empty());
}

TEST_CASE("errors: modifiers on the wrong op, multicast without a cluster") {
  gemm g(sm_90a);
  auto s = g.k.smem<bf16>("s", {128, 64}, swizzle::b128);
  auto b = g.k.mbarrier("b");
  g.k.role("r", warpgroups(1), [&](role& r) {
    r.tma_load(s, g.A.tile(0, 0)).multicast();  // op 0: no cluster
    r.fence_proxy_async().multicast();          // op 1: not a TMA load
    r.wgmma_fence().overwrite();                // op 2: not an MMA
    r.wait(b).remote();                         // op 3: not an arrive
  });
  const program& p = g.k.p;
  CHECK(has_error(p, "instruction.multicast-without-cluster", 0));
  CHECK(has_error(p, "ir.modifier", 1));
  CHECK(has_error(p, "ir.modifier", 2));
  CHECK(has_error(p, "ir.modifier", 3));
  // A cluster declared after the op satisfies multicast at build().
  gemm h(sm_90a);
  auto s2 = h.k.smem<bf16>("s", {128, 64}, swizzle::b128);
  h.k.role("r", warps(1), [&](role& r) { r.tma_load(s2, h.A.tile(0, 0)).multicast(); });
  CHECK(h.k.p.errors.size() == 1);
  h.k.cluster(2);
  const program built = h.k.build();
  CHECK(count_errors(built, "instruction.multicast-without-cluster") == 1);  // the first finding stays
  auto j = kernel("j").cluster(2);
  auto B = j.input<bf16>("B", dims("N", "K"));
  auto sb = j.smem<bf16>("sb", {128, 64}, swizzle::b128);
  j.role("r", warps(1), [&](role& r) { r.tma_load(sb, B.tile(0, 0)).multicast(); });
  CHECK(j.build().errors.empty());
}

TEST_CASE("errors: overwrite_on_first takes a loop variable") {
  gemm g(sm_90a);
  auto sA = g.k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = g.k.smem<bf16>("sB", {64, 64}, swizzle::b128);
  g.k.role("c", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    r.wgmma(acc, sA, sB).overwrite_on_first(r.warpgroup());
  });
  CHECK(has_error(g.k.p, "ir.overwrite-first", 0));
}

TEST_CASE("errors: release/commit with a slot of another pipeline, slot of a region it does not carry") {
  gemm g(sm_90a);
  auto s1 = g.k.smem<bf16>("s1", {64, 64});
  auto s2 = g.k.smem<bf16>("s2", {64, 64});
  auto p1 = g.k.pipeline("p1", stages(2)).carries(s1);
  auto p2 = g.k.pipeline("p2", stages(2)).carries(s2);
  g.k.role("r", warps(1), [&](role& r) {
    auto a = r.acquire(p1);  // op 0
    r.release(p2, a);
    r.commit(p2, a);
    (void)a[s2];
  });
  CHECK(count_errors(g.k.p, "ir.slot-pipeline") == 2);
  CHECK(has_error(g.k.p, "ir.slot-pipeline", 0));
  CHECK(has_error(g.k.p, "ir.slot-region", 0));
}

TEST_CASE("errors: tensor.tile takes one coordinate per dim, coordinates must be representable") {
  gemm g(sm_90a);
  auto s = g.k.smem<bf16>("s", {64, 64});
  g.k.role("r", warps(1), [&](role& r) {
    r.tma_load(s, g.A.tile(0));
    r.tma_load(s, g.A.tile(0, 1, 2));
    r.tma_load(s, g.A.tile((r.warp() + 1) / 2 + 1, 0));
  });
  CHECK(has_error(g.k.p, "ir.tile-rank", 1));
  CHECK(has_error(g.k.p, "ir.tile-rank", 3));
  CHECK(has_error(g.k.p, "ir.index-expr", 0));
}

TEST_CASE("errors: stage and part selections are checked when the op is recorded") {
  gemm g(sm_90a);
  auto s = g.k.smem<bf16>("s", {128, 64}, copies(2));
  g.k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 64});
    r.store(s.rows(r.warpgroup(), 3), x);                // 128 rows in 3 parts
    r.store(s.cols(0, 0), x);                            // 0 parts
    r.store(s.rows(0, 300), x);                          // more parts than a count holds
    r.store(s.stage((r.warp() + 1) / 2 + 1), x);         // unrepresentable stage
    r.store(s.rows((r.warp() + 1) / 2 * 2, 2), x);       // unrepresentable part index
    r.store(s.rows(r.warpgroup(), 2).stage(1), x);       // fine
  });
  const program& p = g.k.p;
  CHECK(has_error(p, "ir.part-count", 3));
  CHECK(has_error(p, "ir.part-count", 0));
  CHECK(count_errors(p, "ir.part-count") == 3);
  CHECK(count_errors(p, "ir.index-expr") == 2);
  CHECK(p.errors.size() == 5);
}

TEST_CASE("errors: wait counts, trip counts, tx counts, register tiles") {
  gemm g(sm_90a);
  auto b = g.k.mbarrier("b");
  g.k.role("r", warpgroups(1), [&](role& r) {
    r.wgmma_wait(8);
    r.cp_async_wait(-1);
    r.bulk_wait_read(9);
    r.for_range(0, [](auto) {});
    r.for_range(1025, [](auto) {});
    r.arrive_expect_tx(b, 1 << 20);
    r.expect_tx(b, -4);
    r.fragment<f32>("x", {0, 8});
  });
  const program& p = g.k.p;
  CHECK(has_error(p, "ir.wait-count", 8));
  CHECK(has_error(p, "ir.wait-count", -1));
  CHECK(has_error(p, "ir.wait-count", 9));
  CHECK(has_error(p, "ir.trip-count", 0));
  CHECK(has_error(p, "ir.trip-count", 1025));
  CHECK(has_error(p, "sync.tx-count-range", 1 << 20));
  CHECK(has_error(p, "sync.tx-count-range", -4));
  CHECK(has_error(p, "ir.reg-shape", 0));
  CHECK(p.errors.size() == capacity::errors);
  CHECK(p.errors_dropped == 0);
}

TEST_CASE("errors: setmaxnreg takes a multiple of 8 in 24..256") {
  gemm g(sm_90a);
  g.k.role("r", warpgroups(1), [&](role& r) {
    r.setmaxnreg(30);
    r.setmaxnreg(264);
    r.setmaxnreg(16);
    r.setmaxnreg(24);
    r.setmaxnreg(256);
  });
  const program& p = g.k.p;
  CHECK(has_error(p, "resource.setmaxnreg-value", 30));
  CHECK(has_error(p, "resource.setmaxnreg-value", 264));
  CHECK(has_error(p, "resource.setmaxnreg-value", 16));
  CHECK(p.errors.size() == 3);
}

TEST_CASE("errors: for_each needs the parallel space") {
  auto k = kernel("k");
  k.role("r", warps(1), [&](role& r) {
    r.for_each(space<2>{}, [](auto, auto) {});
  });
  CHECK(has_error(k.p, "ir.no-space", 0));
  CHECK(k.p.ops.size() == 1);  // the loop is still recorded, for the analyzer to point at
  gemm g(sm_90a);
  g.k.role("r", warps(1), [&](role& r) { r.for_each(g.mn, [](auto, auto) {}); });
  CHECK(g.k.p.errors.empty());
}

TEST_CASE("errors: loop bounds (min of three, a step outside 1..32767, element rows, unknown dims, blocks)") {
  gemm g(sm_90a);
  g.k.role("r", warps(1), [&](role& r) {
    r.loop(min(min(4, 5), 6), [](auto) {});                            // min() of three
    r.loop(index_expr(0), tiles(g.K, 64), 0, [](auto) {});              // step 0
    r.loop(index_expr(0), tiles(g.K, 64), 40000, [](auto) {});          // step too large
    r.loop(var_index(var_kind::elem_row, 0) + 1, [](auto) {});           // a mask variable in a bound
    r.loop(tiles("Q", 64), [](auto) {});                                // a label nothing declares
    r.loop(tiles(g.K, 0), [](auto) {});                                 // block 0
    r.loop(min(tiles(g.K, 64), (g.N.extent() + 1) / 2 + g.N.extent()), [](auto) {});  // unrepresentable
  });
  const program& p = g.k.p;
  CHECK(count_errors(p, "ir.loop-bound") == 4);
  CHECK(has_error(p, "ir.loop-bound", 0));
  CHECK(has_error(p, "ir.loop-bound", 40000));
  CHECK(has_error(p, "ir.unknown-dim", 0));
  CHECK(has_error(p, "ir.tile-extent", 0));
  CHECK(has_error(p, "ir.index-expr", 0));
  CHECK(p.ops.size() == 7);  // every loop is still recorded
  CHECK(p.loops.size() == 7);
}

TEST_CASE("errors: rows_at must name a dim before the tensor's last one") {
  auto k = kernel("k");
  auto [B, S, H, D] = k.dims("B", "S", "H", "D");
  auto Q = k.input<bf16>("Q", dims(B, S, H, D));
  auto s = k.smem<bf16>("s", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  k.role("r", warps(1), [&](role& r) {
    r.tma_load(s, Q.tile(0, 1, 2, 0).rows_at(1), bar);  // rows over S: fine
    r.tma_load(s, Q.tile(0, 1, 2, 0).rows_at(3), bar);  // the last dim: columns already run along it
    r.tma_load(s, Q.tile(0, 1, 2, 0).rows_at(7), bar);  // past the rank
  });
  CHECK(count_errors(k.p, "ir.tile-rows") == 2);
  CHECK(has_error(k.p, "ir.tile-rows", 3));
  CHECK(has_error(k.p, "ir.tile-rows", 7));
  CHECK(k.p.tile_refs[0].row_pos == 1);
}

TEST_CASE("errors: names longer than 31 characters, anywhere") {
  const char* long_name = "this_name_is_definitely_too_long";  // 32
  auto k = kernel(long_name);
  CHECK(has_error(k.p, "ir.name-too-long", 32));
  k.input<bf16>("A", dims("M", long_name));
  CHECK(has_error(k.p, "ir.name-too-long", 1));  // the dim at position 1
  k.smem<bf16>(long_name, {64, 64});
  k.role(long_name, warps(1), [&](role& r) {
    r.accumulator<f32>(long_name, {16, 8});
  });
  CHECK(count_errors(k.p, "ir.name-too-long") == 5);
}

TEST_CASE("errors: capacities are reported with their value, nothing is written out of bounds") {
  auto k = kernel("k");
  const char* names[] = {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"};
  for (const char* n : names) k.named_barrier(n);
  CHECK(k.p.named_barriers.size() == capacity::named_barriers);
  CHECK(has_error(k.p, "ir.capacity", static_cast<long long>(capacity::named_barriers)));
  auto j = kernel("j").target(sm_80);
  j.role("r", warps(1), [&](role& r) {
    for (std::size_t i = 0; i < capacity::ops + 3; ++i) r.cp_async_commit();
  });
  CHECK(j.p.ops.size() == capacity::ops);
  CHECK(has_error(j.p, "ir.capacity", static_cast<long long>(capacity::ops)));
  // each capacity's error names its kind, and the one-line text (the entry points' exceptions) shows the value
  CHECK(k.p.errors[0].message == "more named barriers than a Program holds (value: the capacity)");
  CHECK(j.p.errors[0].message == "more ops than a Program holds (value: the capacity)");
  const std::string t = to_text(j.p.errors[0]);
  CHECK(t.rfind("[ir.capacity] more ops than a Program holds (the capacity: 160) at ", 0) == 0);
  CHECK(t.find("test_ir_build_errors.cpp:") != std::string::npos);
  // (a message without a value note shows the value after it)
  CHECK(to_text(build_error{"ir.x", "plain", 7, {}}) == "[ir.x] plain (value 7)");
  auto t2 = kernel("t");
  auto A = t2.input<bf16>("A", dims("M", "K"));
  auto sA = t2.smem<bf16>("sA", {64, 64});
  auto bar = t2.mbarrier("bar");
  t2.role("r", warps(1), [&](role& r) {
    for (std::size_t i = 0; i <= capacity::tile_refs; ++i) r.tma_load(sA, A.tile(0, static_cast<int>(i)), bar);
  });
  CHECK(has_error(t2.p, "ir.capacity", static_cast<long long>(capacity::tile_refs)));
  CHECK(to_text(t2.p.errors[0]).find("more tensor tiles named by ops (T.tile(...), T.at(...)) than a Program holds (the capacity: 64)") != std::string::npos);
}

TEST_CASE("errors: more findings than the error list holds are counted, not lost") {
  auto k = kernel("k").target(sm_80);
  k.role("r", warps(1), [&](role& r) {
    for (int i = 0; i < 12; ++i) r.fence_proxy_async();  // 12 distinct findings (op# differs)
  });
  CHECK(k.p.errors.size() == capacity::errors);
  CHECK(k.p.errors_dropped == 12 - static_cast<int>(capacity::errors));
  CHECK(to_text(k.p).find("... and 4 more build errors") != std::string::npos);
}

TEST_CASE("errors: shared memory overflow is found by build() with the bytes needed") {
  auto k = kernel("k").target(sm_80);
  k.smem<bf16>("big", {256, 64}, copies(6));  // 196608 bytes > 166912
  k.role("r", warps(1), [](role&) {});
  const program p = k.build(); const unsigned line = __LINE__;
  REQUIRE(first_error(p, "resource.smem-overflow") != nullptr);
  CHECK(first_error(p, "resource.smem-overflow")->value == 196608);
  CHECK(first_error(p, "resource.smem-overflow")->loc.line == line);
  CHECK(first_error(p, "resource.smem-overflow")->message.find("166912") != std::string_view::npos);
  auto h = kernel("h").target(sm_90a);
  h.smem<bf16>("big", {256, 64}, copies(6));
  h.role("r", warps(1), [](role&) {});
  CHECK(h.build().errors.empty());
}

TEST_CASE("errors: tensor memory overflow is found by build() with the columns needed") {
  auto k = kernel("k").target(sm_100a);
  auto a = k.tmem("a", columns(256));
  auto b = k.tmem("b", columns(256));
  k.pipeline("p", stages(2)).carries(a, b);
  k.role("r", warps(1), [](role&) {});
  CHECK(has_error(k.build(), "resource.tmem-overflow", 1024));
}

TEST_CASE("errors: descending() orders a parallel axis, a loop given it is a build error") {
  gemm g(sm_90a);
  g.k.role("r", warpgroups(1), [&](role& r) {
    r.for_each(g.mn, [&](auto, auto) { r.loop(tiles(g.K, 64).descending(), [&](auto) {}); });
  });
  const program p = g.k.build();
  REQUIRE_FALSE(p.errors.empty());
  CHECK(p.errors[0].rule == "ir.descending-loop");
  CHECK(p.errors[0].value == 64);
}

TEST_CASE("errors: r.next_point belongs inside a walk, not an alternating one, inside one it is a when on the walk's step") {
  {
    gemm g(sm_90a);
    g.k.role("r", warpgroups(1), [&](role& r) { r.next_point(g.mn, [&](auto, auto) {}); });
    const program p = g.k.build();
    REQUIRE_FALSE(p.errors.empty());
    CHECK(p.errors[0].rule == "ir.next-point");
    CHECK(p.errors[0].value == 0);
  }
  {
    gemm g(sm_90a);
    g.k.role("r", warpgroups(2), [&](role& r) { r.for_each(alternating(g.mn), [&](auto, auto) { r.next_point(g.mn, [&](auto, auto) {}); }); });
    const program p = g.k.build();
    REQUIRE_FALSE(p.errors.empty());
    CHECK(p.errors[0].rule == "ir.next-point");
    CHECK(p.errors[0].value == 0);  // the walk's op#: the role's first op
  }
  gemm g(sm_90a);
  g.k.persistent();
  g.k.role("r", warpgroups(1), [&](role& r) { r.for_each(g.mn, [&](auto, auto) { r.next_point(g.mn, [&](auto, auto) { r.fence_proxy_async(); }); }); });
  const program p = g.k.build();
  CHECK(p.errors.empty());
  const auto& w = p.ops[1];
  CHECK(w.kind == op_kind::when);
  CHECK(w.has(flag_next_point));
  CHECK(p.ops[2].kind == op_kind::fence_proxy_async);
  CHECK(p.ops[2].parent == 1);
  const std::string text = to_text(p);
  INFO(text);
  CHECK(text.find("next point: ") != std::string::npos);
  CHECK(text.find("walk_step + 1") != std::string::npos);
}

TEST_CASE("errors: k.split_tail needs 2..1024 parts, an extent of dims, a persistent walk and no cluster, and prints its range") {
  auto build_with = [](auto&& declare) {
    gemm g(sm_90a);
    declare(g);
    g.k.role("r", warpgroups(1), [&](role& r) { r.for_each(g.mn, [&](auto, auto) { r.loop(r.part_begin(), loop_extent(r.part_end()), 1, [&](auto) {}); }); });
    return g.k.build();
  };
  {
    const program p = build_with([](gemm& g) { g.k.persistent().split_tail((g.K.extent() + 63) / 64, 1); });
    REQUIRE_FALSE(p.errors.empty());
    CHECK(p.errors[0].rule == "ir.split-tail");
    CHECK(p.errors[0].value == 1);
  }
  {
    const program p = build_with([](gemm& g) { g.k.persistent().split_tail(index_expr(8), 2000); });
    REQUIRE_FALSE(p.errors.empty());
    CHECK(p.errors[0].rule == "ir.split-tail");
    CHECK(p.errors[0].value == 2000);
  }
  {
    const program p = build_with([](gemm& g) { g.k.split_tail((g.K.extent() + 63) / 64, 8); });  // (not persistent)
    REQUIRE_FALSE(p.errors.empty());
    CHECK(p.errors[0].rule == "ir.split-tail");
    CHECK(p.errors[0].message.find("k.persistent") != std::string_view::npos);
    CHECK(p.errors[0].value == 8);
  }
  {
    const program p = build_with([](gemm& g) { g.k.persistent().cluster(2).split_tail((g.K.extent() + 63) / 64, 8); });
    REQUIRE_FALSE(p.errors.empty());
    CHECK(p.errors[0].rule == "ir.split-tail");
    CHECK(p.errors[0].value == 2);  // the cluster size
  }
  const program ok = build_with([](gemm& g) { g.k.persistent().split_tail((g.K.extent() + 63) / 64, 8); });
  REQUIRE(ok.errors.empty());
  CHECK(ok.launch.split_tail());
  CHECK(ok.launch.tail_parts == 8);
  const std::string text = to_text(ok);
  INFO(text);
  CHECK(text.find("split tail: up to 8 parts of (K + 63) / 64") != std::string::npos);
  CHECK(text.find("loop k1 in part_begin..part_end") != std::string::npos);
}

TEST_CASE("plan::split_tail_parts: the last round's points split as far as the idle CTAs and the range allow") {
  CHECK(plan::split_tail_parts(4096, 132, 8, 16) == 8);     // 4 left over 132 CTAs: 33 each, 8 key blocks
  CHECK(plan::split_tail_parts(4096, 132, 128, 16) == 16);  // the schedule's cap
  CHECK(plan::split_tail_parts(2816, 132, 19, 16) == 3);    // 44 left: 3 each
  CHECK(plan::split_tail_parts(2752, 132, 147, 16) == 1);   // 112 left: no room to split
  CHECK(plan::split_tail_parts(264, 132, 8, 16) == 1);      // whole rounds
  CHECK(plan::split_tail_parts(100, 132, 8, 16) == 1);      // fewer points than CTAs (one CTA each)
  CHECK(plan::split_tail_parts(136, 132, 1, 16) == 1);      // a range of one
}
