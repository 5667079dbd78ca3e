// Unit tests for the register-compute and new sync methods of the role builder: r.loaded, the
// fill_outside / accumulate / later(n) modifiers and their misuse (ir.modifier), release_pending, turns,
// alternating walks, cluster_sum, atomics and scatter, MMAs with A from registers or into parts, and
// which register tiles each op reads and writes.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "cake/ir/printer.hpp"
#include "cake/plan/plan.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {

float bits_to_float(std::int32_t b) {
  float v = 0;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

std::vector<int> reads_of(const program& p, int op) {
  std::vector<int> r;
  p.reg_reads(op, [&](const operand& x) { r.push_back(x.index); });
  return r;
}
std::vector<int> writes_of(const program& p, int op) {
  std::vector<int> r;
  p.reg_writes(op, [&](const operand& x) { r.push_back(x.index); });
  return r;
}

}  // namespace

TEST_CASE("compute builder: r.loaded records the load and hands back the tile for an expression") {
  auto k = kernel("k").target(sm_90a);
  auto [M, N] = k.dims("M", "N");
  auto Bias = k.input<bf16>("bias", dims(N));
  auto X = k.input<f32>("X", dims(M, N));
  int load = -1, set = -1;
  k.role("r", warpgroups(1), [&](role& r) {
    auto acc = r.fragment<f32>("acc", {64, 64});
    r.load(acc, X.tile(0, 0)).fill_outside(-2.5f);
    load = static_cast<int>(k.p.ops.size());
    set = r.set(acc, acc + r.loaded(r.col_vector<bf16>("b", 64), Bias.tile(1))).id;
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  CHECK(p.ops[0].kind == op_kind::load_global);
  CHECK(bits_to_float(p.ops[0].imm[2]) == -2.5f);  // fill_outside: the value outside the tensor
  CHECK(p.ops[load].kind == op_kind::load_global);
  CHECK(p.ops[load].d.index == 1);
  CHECK(p.ops[load].a.kind == operand_kind::global);
  CHECK(p.tile_refs[p.ops[load].a.index].coords[0] == index_expr(1));
  CHECK(p.ops[load].imm[2] == 0);  // default fill: 0.0f
  CHECK(p.regs[1].rows == 1);
  CHECK(p.regs[1].cols == 64);
  CHECK(p.regs[1].dt == dtype::bf16);
  CHECK(reads_of(p, set) == std::vector<int>{0, 1});
  CHECK(writes_of(p, set) == std::vector<int>{0});
}

TEST_CASE("compute builder: row and column vectors, and tiles without a positive shape") {
  auto k = kernel("k").target(sm_80);
  k.role("r", warps(2), [&](role& r) {
    auto rv = r.row_vector<f32>("rv", 16);
    auto cv = r.col_vector<i32>("cv", 32);
    (void)rv, (void)cv;
    (void)r.fragment<f32>("bad", {0, 8});
    (void)r.row_vector<f32>("bad2", -4);
  });
  const program& p = k.p;
  CHECK(p.regs[0].rows == 16);
  CHECK(p.regs[0].cols == 1);
  CHECK(p.regs[1].rows == 1);
  CHECK(p.regs[1].cols == 32);
  CHECK(p.regs[1].dt == dtype::i32);
  CHECK(p.regs[0].scope == role_unit::warp);
  CHECK_FALSE(p.regs[0].accumulator);
  CHECK(has_error(p, "ir.reg-shape", 0));
  CHECK(has_error(p, "ir.reg-shape", -4));
}

TEST_CASE("compute builder: a register tile with no columns or rows is an error, and building and analyzing the program does not crash") {
  // Found by sweeping softmax_config_for past its widths (width 0): build() planned the program for its
  // diagnostics and divided by the tile's zero columns (SIGFPE).
  for (auto [rows, cols] : {std::pair{1, 0}, std::pair{0, 64}, std::pair{0, 0}}) {
    INFO(rows << " x " << cols);
    auto k = kernel("k").target(sm_90a);
    auto [R, C] = k.dims("R", "C");
    auto X = k.input<bf16>("X", dims(R, C));
    auto rs = k.parallel(tiles(R, 4));
    k.role("r", warps(4), [&](role& r) {
      auto x = r.fragment<bf16>("x", {rows, cols});
      auto s = r.row_vector<f32>("s", rows);
      r.for_each(rs, [&](auto i) {
        r.load(x, X.tile(i * 4 + r.warp(), 0));
        r.row_sum(s, x * x);
      });
    });
    const program p = k.build();
    CHECK(has_error(p, "ir.reg-shape", static_cast<long long>(rows) * cols));
    CHECK(analyze(p).errors > 0);
  }
}

TEST_CASE("compute builder: accumulate() on reductions, reads of accumulating reductions include their destinations") {
  auto k = kernel("k").target(sm_90a);
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto m = r.row_vector<f32>("m", 64);
    auto i = r.row_vector<i32>("i", 64);
    r.row_max(m, x).accumulate();                           // #0
    r.row_argmax(m, i, x, r.warpgroup() * 64).accumulate();  // #1
    r.row_argmin(m, i, x, index_expr(0));                    // #2
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  CHECK(p.ops[0].has(flag_accumulate));
  CHECK(reads_of(p, 0) == std::vector<int>{0, 1});
  CHECK(writes_of(p, 0) == std::vector<int>{1});
  CHECK(p.ops[1].has(flag_accumulate));
  CHECK(p.ops[1].ix == var_index(var_kind::warpgroup, 0) * 64);
  CHECK(reads_of(p, 1) == std::vector<int>{0, 1, 2});
  CHECK(writes_of(p, 1) == std::vector<int>{1, 2});
  CHECK_FALSE(p.ops[2].has(flag_accumulate));
  CHECK(reads_of(p, 2) == std::vector<int>{0});
  CHECK(writes_of(p, 2) == std::vector<int>{1, 2});
}

TEST_CASE("compute builder: reductions of an expression record its nodes, their lead leaf and every leaf as a read") {
  auto k = kernel("k").target(sm_90a);
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 128});
    auto w = r.col_vector<f32>("w", 128);
    auto s = r.row_vector<f32>("s", 64);
    auto i = r.row_vector<i32>("i", 64);
    r.row_sum(s, x * x);                                         // #0
    r.row_argmin(s, i, w - 2.0f * x, index_expr(128)).accumulate();  // #1
    r.row_max(s, x);                                             // #2: a tile, as before
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  const op& sum = p.ops[0];
  CHECK(sum.kind == op_kind::reduce_rows);
  CHECK(sum.has(flag_expr_src));
  CHECK(static_cast<reduce_kind>(sum.imm[0]) == reduce_kind::sum);
  CHECK(sum.a.index == 0);  // the lead leaf: x, the full tile
  CHECK(sum.expr_first() == 0);
  CHECK(sum.expr_count() == 3);  // x, x, x * x
  CHECK(p.exprs[sum.expr_first() + sum.expr_count() - 1].fn == math_fn::mul);
  CHECK(reads_of(p, 0) == std::vector<int>{0, 0});
  CHECK(writes_of(p, 0) == std::vector<int>{2});
  const op& arg = p.ops[1];
  CHECK(arg.kind == op_kind::arg_reduce_rows);
  CHECK(arg.has(flag_expr_src));
  CHECK(arg.a.index == 0);  // x, not the column vector w that comes first
  CHECK(arg.ix == index_expr(128));
  CHECK(reads_of(p, 1) == std::vector<int>{1, 0, 2, 3});  // the leaves, then the accumulated pair
  CHECK(writes_of(p, 1) == std::vector<int>{2, 3});
  CHECK_FALSE(p.ops[2].has(flag_expr_src));
  CHECK(p.ops[2].expr_count() == 0);
  CHECK(cake::detail::op_text(p, 0).find("s = row_sum((x * x))") != std::string::npos);
  CHECK(cake::detail::op_text(p, 1).find("(s, i) = row_argmin((w - (2.0 * x)), col0 128) accumulate") != std::string::npos);
}

TEST_CASE("compute builder: a reduced expression with no full tile of the destination's rows is ir.reduce-expr") {
  auto k = kernel("k").target(sm_90a);
  k.role("r", warpgroups(1), [&](role& r) {
    auto v = r.col_vector<f32>("v", 128);
    auto other = r.fragment<f32>("other", {32, 128});
    auto s = r.row_vector<f32>("s", 64);
    r.row_sum(s, v * 2.0f);    // only a column vector
    r.row_max(s, other + 1.0f);  // a full tile, but of 32 rows
  });
  CHECK(count_errors(k.p, "ir.reduce-expr") == 2);
  CHECK(has_error(k.p, "ir.reduce-expr", 64));
}

TEST_CASE("compute builder: modifiers on ops they do not apply to are ir.modifier") {
  auto k = kernel("k").target(sm_90a);
  auto [M, K] = k.dims("M", "K");
  auto X = k.output<f32>("X", dims(M, K));
  auto A = k.input<bf16>("A", dims(M, K));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA);
  int lazy = -1;
  k.role("load", warps(1), [&](role& r) {
    r.loop(tiles(K, 64), [&](auto kt) { r.tma_load(r.acquire(ab)[sA], A.tile(0, kt)); });
  });
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.fill(x, 0.0f);
    r.store(X.tile(0, 0), x).fill_outside(1.0f);  // not a load
    r.set(x, x * 2.0f).accumulate();              // not a reduction
    auto best = r.row_vector<f32>("best", 64);
    auto arg = r.row_vector<i32>("arg", 64);
    r.row_argmin(best, arg, x, 0).lazy_index();               // not accumulating
    r.row_min(best, x).accumulate().lazy_index();             // not an argmin
    lazy = r.row_argmin(best, arg, x, 0).accumulate().lazy_index().id;
    r.loop(tiles(K, 64), [&](auto) {
      auto s = r.wait(ab);
      r.fill(x, 1.0f).later(1);                   // not a release
      r.release(ab, s).later(0);                  // 1..4 iterations
      r.release(ab, s).later(5);
    });
  });
  const program& p = k.p;
  CHECK(count_errors(p, "ir.modifier") == 7);
  CHECK(has_error(p, "ir.modifier", 0));
  CHECK(has_error(p, "ir.modifier", 5));
  REQUIRE(lazy >= 0);
  CHECK(p.ops[static_cast<std::size_t>(lazy)].has(flag_lazy_index));
  CHECK(p.ops[static_cast<std::size_t>(lazy)].has(flag_accumulate));
  CHECK_FALSE(p.ops[static_cast<std::size_t>(lazy - 1)].has(flag_lazy_index));  // refused: the flag is not set
}

TEST_CASE("sync builder: deferred releases, their flush, turns and alternating walks") {
  auto k = kernel("k").target(sm_90a);
  auto [M, K] = k.dims("M", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto sp = k.parallel(tiles(M, 64));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(4)).carries(sA);
  auto order = k.turns("order");
  auto plain = k.named_barrier("plain", per_unit);
  int walk = -1, release = -1, flush = -1, take = -1, pass = -1, plain_walk = -1;
  k.role("load", warps(1), [&](role& r) {
    plain_walk = static_cast<int>(k.p.ops.size());
    r.for_each(sp, [&](auto m) {
      r.loop(tiles(K, 64), [&](auto kt) { r.tma_load(r.acquire(ab)[sA], A.tile(m, kt)); });
    });
  });
  k.role("use", warpgroups(2), [&](role& r) {
    walk = static_cast<int>(k.p.ops.size());
    r.for_each(alternating(sp), [&](auto) {
      take = r.take_turn(order).id;
      r.loop(tiles(K, 64), [&](auto) {
        auto s = r.wait(ab);
        release = r.release(ab, s).later(3).id;
      });
      flush = r.release_pending(ab).id;
      pass = r.pass_turn(order).id;
      r.sync(plain);
    });
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  CHECK(p.named_barriers[order.index].turns);
  CHECK(p.named_barriers[order.index].per_unit);
  CHECK_FALSE(p.named_barriers[plain.index].turns);
  CHECK(p.ops[walk].kind == op_kind::tile_loop);
  CHECK(p.ops[walk].has(flag_alternate));
  CHECK_FALSE(p.ops[plain_walk].has(flag_alternate));
  CHECK(p.ops[release].has(flag_release_later));
  CHECK(p.ops[release].imm[1] == 3);
  CHECK(p.ops[release].a.sel == stage_sel::slot);
  CHECK(p.ops[p.ops[release].a.slot_op].kind == op_kind::pipeline_wait);
  CHECK(p.ops[flush].kind == op_kind::pipeline_flush);
  CHECK(p.ops[flush].d.kind == operand_kind::pipeline);
  CHECK(p.ops[flush].d.index == ab.index);
  CHECK(p.ops[flush].parent == walk);
  CHECK(p.ops[take].kind == op_kind::turn_take);
  CHECK(p.ops[take].d.kind == operand_kind::named_barrier);
  CHECK(p.ops[take].d.index == order.index);
  CHECK(p.ops[pass].kind == op_kind::turn_pass);
  CHECK(p.ops[pass].d.index == order.index);
  CHECK(plan::role_uses_named(p, 1, order.index));
  CHECK_FALSE(plan::role_uses_named(p, 0, order.index));
}

TEST_CASE("compute builder: cluster_sum and cluster_max need a cluster, atomics and scatter record their operands") {
  {
    auto k = kernel("k").target(sm_90a);
    k.role("r", warpgroups(1), [&](role& r) {
      auto x = r.fragment<f32>("x", {64, 64});
      r.cluster_sum(x);
    });
    CHECK(has_error(k.p, "instruction.multicast-without-cluster", 1));
  }
  {
    auto k = kernel("k").target(sm_90a);
    k.role("r", warpgroups(1), [&](role& r) {
      auto x = r.fragment<f32>("x", {64, 64});
      r.cluster_max(x);
    });
    CHECK(has_error(k.p, "instruction.multicast-without-cluster", 1));
  }
  auto k = kernel("k").target(sm_90a).cluster(4);
  auto [N, K, D] = k.dims("N", "K", "D");
  auto Sums = k.output<f32>("sums", dims(K, D));
  int sum = -1, add = -1, scatter = -1, mx = -1;
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    auto idx = r.row_vector<i32>("i", 8);
    sum = r.cluster_sum(x).id;
    mx = r.cluster_max(x).id;
    add = r.atomic_add(Sums.tile(r.cluster_rank(), 0), x).id;
    scatter = r.scatter_add(Sums.tile(0, 1), x, idx).id;
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  CHECK(p.ops[sum].kind == op_kind::cluster_reduce);
  CHECK(p.ops[sum].d.index == 0);
  CHECK(p.ops[sum].imm[0] == static_cast<int>(reduce_kind::sum));
  CHECK(reads_of(p, sum) == std::vector<int>{0});   // the sum reads the tile...
  CHECK(writes_of(p, sum) == std::vector<int>{0});  // ...and writes it
  CHECK(p.ops[mx].kind == op_kind::cluster_reduce);  // cluster_max: the same op, the max in imm[0]
  CHECK(p.ops[mx].imm[0] == static_cast<int>(reduce_kind::max));
  CHECK_FALSE(p.ops[mx].has(flag_scatter));
  CHECK(reads_of(p, mx) == std::vector<int>{0});
  CHECK(writes_of(p, mx) == std::vector<int>{0});
  CHECK(p.ops[add].kind == op_kind::atomic_add);
  CHECK(p.ops[add].d.kind == operand_kind::global);
  CHECK(p.ops[add].a.index == 0);
  CHECK(p.tile_refs[p.ops[add].d.index].coords[0] == var_index(var_kind::cluster_rank, 0));
  CHECK(p.ops[scatter].kind == op_kind::scatter_add);
  CHECK(p.ops[scatter].a.index == 0);
  CHECK(p.ops[scatter].b.index == 1);
  CHECK(reads_of(p, scatter) == std::vector<int>{0, 1});
  CHECK(writes_of(p, scatter).empty());
}

TEST_CASE("analysis: a cluster_max under a condition that differs between the cluster's CTAs is named as the max") {
  auto k = kernel("k").target(sm_90a).cluster(2);
  auto [N, D] = k.dims("N", "D");
  auto Y = k.output<f32>("Y", dims(N, D));
  auto rows = k.parallel(tiles(N, 8));
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(rows, [&](auto t) {
      r.fill(x, 1.0f);
      r.when(eq(r.cluster_rank(), 0), [&] { r.cluster_max(x); });
      r.store(Y.tile(t, 0), x);
    });
  });
  const auto rep = analyze(k.p);
  std::string msg, help;
  for (const auto& d : rep.diagnostics)
    if (d.rule == analysis::rule_id::sync_cluster_sum_divergent) msg = std::string(d.message.view()), help = std::string(d.help.view());
  INFO(analysis::to_text(rep));
  CHECK(msg.rfind("cluster_max of 'x'", 0) == 0);  // the op the schedule wrote, not "cluster_sum"
  CHECK(help.find("run the cluster_max in every CTA") != std::string::npos);
}

TEST_CASE("compute builder: row_scan, column reductions, scatter_store and fetch_add record their operands") {
  auto k = kernel("k").target(sm_90a);
  auto [N, K, D, One] = k.dims("N", "K", "D", "one");
  auto Cur = k.output<i32>("cursor", dims(K, One));
  auto Xs = k.output<f32>("Xs", dims(N, D));
  int scan = -1, cols = -1, store = -1, fetch = -1;
  k.role("r", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});       // reg 0
    auto s = r.fragment<f32>("s", {8, 64});       // 1
    auto c = r.col_vector<f32>("c", 64);          // 2
    auto idx = r.row_vector<i32>("i", 8);         // 3
    auto pos = r.row_vector<i32>("pos", 8);       // 4
    scan = r.row_scan(s, x).id;
    cols = r.col_min(c, x).id;
    fetch = r.fetch_add(pos, Cur.tile(0, 0), idx, 3).id;
    store = r.scatter_store(Xs.tile(0, 0), x, pos).id;
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  CHECK(p.ops[scan].kind == op_kind::scan_rows);
  CHECK(reads_of(p, scan) == std::vector<int>{0});
  CHECK(writes_of(p, scan) == std::vector<int>{1});
  CHECK(p.ops[cols].kind == op_kind::reduce_cols);
  CHECK(p.ops[cols].imm[0] == static_cast<int>(reduce_kind::min));
  CHECK(writes_of(p, cols) == std::vector<int>{2});
  CHECK(p.ops[fetch].kind == op_kind::fetch_add);
  CHECK(p.ops[fetch].a.kind == operand_kind::global);  // the counter
  CHECK(p.ops[fetch].imm[0] == 3);
  CHECK(reads_of(p, fetch) == std::vector<int>{3});   // the index vector...
  CHECK(writes_of(p, fetch) == std::vector<int>{4});  // ...and the old values
  CHECK(p.ops[store].kind == op_kind::scatter_store);
  CHECK(p.ops[store].d.kind == operand_kind::global);
  CHECK(reads_of(p, store) == std::vector<int>{0, 4});
  CHECK(writes_of(p, store).empty());
}

TEST_CASE("compute builder: MMAs with A from registers and into column parts of an accumulator") {
  auto k = kernel("k").target(sm_90a);
  auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128);
  int wg = -1, part = -1;
  k.role("r", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    auto pr = r.fragment<bf16>("p", {64, 64});
    r.fill(pr, 1.0f);
    wg = r.wgmma(acc.cols(0, 2), pr, sB).id;
    part = r.wgmma(acc.cols(1, 2), pr, sB).overwrite().id;
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  CHECK(p.ops[wg].a.kind == operand_kind::reg);
  CHECK(p.ops[wg].a.index == 1);
  CHECK(p.ops[wg].d.part == part_axis::cols);
  CHECK(p.ops[wg].d.parts == 2);
  CHECK(p.ops[part].d.part_index == index_expr(1));
  CHECK(p.ops[part].has(flag_overwrite));
  CHECK(reads_of(p, wg) == std::vector<int>{1});
  CHECK(writes_of(p, wg) == std::vector<int>{0});
  CHECK(plan::shape_of(p, p.ops[wg].d).cols == 64);  // N of each MMA

  auto m = kernel("m").target(sm_80);
  auto sV = m.smem<bf16>("sV", {32, 64}, swizzle::b128);
  int mma = -1;
  m.role("w", warps(1), [&](role& r) {
    auto o = r.accumulator<f32>("o", {16, 64});
    auto a = r.fragment<bf16>("a", {16, 32});
    r.fill(a, 0.0f);
    mma = r.mma_sync(o, a, sV).overwrite().id;
  });
  REQUIRE(m.p.errors.empty());
  CHECK(m.p.ops[mma].a.kind == operand_kind::reg);
  CHECK(m.p.ops[mma].has(flag_overwrite));
}
