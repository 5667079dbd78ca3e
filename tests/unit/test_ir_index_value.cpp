// Unit tests for index values (r.read_index, r.let_index, r.let_min) and for tile coordinates in
// elements (.elements_at) and register load/store limits (.limit): what the builder records, what it
// refuses, how the printer shows them, the analyzer's model of a read, and the C++ lowering emits.
#include <doctest/doctest.h>

#include <string>

#include "cake/analysis.hpp"
#include "cake/cake.hpp"
#include "cake/lower/lower.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using cake_test::find_op;
using cake_test::has_error;

namespace {

// Rows of a packed batch: entry b owns rows Off[b] .. Off[b + 1] - 1 of X and Y ([R, C], f32); one CTA per
// (row tile, entry) copies the tile's rows that belong to its entry.
struct packed {
  kernel_builder k;
  dim_ref R, C, N, MR;
  tensor<f32> X, Y;
  tensor<i32> Off;
  space<2> sp;
  explicit packed(target_id t) : k(kernel("packed")) {
    k.target(t);
    const auto d = k.dims("R", "C", "N", "MR");
    R = d[0], C = d[1], N = d[2], MR = d[3];
    X = k.input<f32>("X", dims(R, C));
    Y = k.output<f32>("Y", dims(R, C));
    Off = k.input<i32>("Off", dims(N, MR));  // (b, 0) = Off[b]; viewed with strides [1, 0]
    sp = k.parallel(tiles(MR, 32), each(N));
  }
};

program packed_copy(target_id t, bool limit = true) {
  packed g(t);
  g.k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(g.sp, [&](auto q, auto b) {
      const index_expr start = r.read_index(g.Off.at(b, 0));
      const index_expr end = r.read_index(g.Off.at(b + 1, 0));
      const index_expr len = r.let_index(end - start);
      r.when(q * 32 < len, [&] {
        const index_expr row = start + q * 32 + r.warp() * 8;
        auto src = g.X.tile(row, 0).elements_at(0);
        auto dst = g.Y.tile(row, 0).elements_at(0);
        r.load(x, limit ? src.limit(0, end) : src);
        r.store(limit ? dst.limit(0, end) : dst, x);
      });
    });
  });
  return g.k.build();
}

}  // namespace

TEST_CASE("index values: read_index records a read of one element and returns its variable") {
  const program p = packed_copy(sm_90a);
  REQUIRE(p.errors.empty());
  const int rd = find_op(p, op_kind::read_index);
  REQUIRE(rd >= 0);
  const op& o = p.ops[rd];
  REQUIRE(o.a.kind == operand_kind::global);
  const auto& ref = p.tile_refs[o.a.index];
  CHECK(ref.elements == 0b11);  // .at(...): every coordinate is an element index
  CHECK(ref.coords[0] == var_index(var_kind::tile_coord, 1));
  // the second read is at b + 1; the let is their difference, a variable of later expressions
  const int rd2 = find_op(p, op_kind::read_index, 1);
  const int let = find_op(p, op_kind::let_index);
  REQUIRE(let > rd2);
  CHECK(p.ops[let].ix == var_index(var_kind::value, rd2) - var_index(var_kind::value, rd));
  CHECK(info(op_kind::read_index).lowered_on == on_all);
  CHECK(info(op_kind::let_index).lowered_on == on_all);
}

TEST_CASE("index values: elements_at and limit record on the tile reference") {
  const program p = packed_copy(sm_90a);
  const int st = find_op(p, op_kind::store_global);
  REQUIRE(st >= 0);
  const auto& ref = p.tile_refs[p.ops[st].d.index];
  CHECK(ref.element_coord(0));
  CHECK_FALSE(ref.element_coord(1));
  CHECK(ref.has_limit());
  CHECK(ref.limit_pos == 0);
  CHECK(ref.limit == var_index(var_kind::value, find_op(p, op_kind::read_index, 1)));
  const std::string text = to_text(p);
  CHECK(text.find("read_index v") != std::string::npos);
  CHECK(text.find("Off.at(N + 1, 0)") != std::string::npos);
  CHECK(text.find(".elements_at(0).limit(0, v") != std::string::npos);
}

TEST_CASE("index values: let_min records the smaller of two expressions") {
  packed g(sm_90a);
  g.k.role("rows", warps(4), [&](role& r) {
    r.for_each(g.sp, [&](auto q, auto b) {
      const index_expr end = r.read_index(g.Off.at(b + 1, 0));
      const index_expr m = r.let_min(q * 32 + 32, end);
      CHECK(m.terms[0].kind == var_kind::value);
    });
  });
  const program p = g.k.build();
  const int let = find_op(p, op_kind::let_index);
  REQUIRE(let >= 0);
  CHECK(p.ops[let].imm[0] == 1);
  CHECK(p.ops[let].d.stage == var_index(var_kind::value, find_op(p, op_kind::read_index)));
  CHECK(to_text(p).find("= min(") != std::string::npos);
}

TEST_CASE("index values: the builder refuses a non-i32 tensor, positions outside the tensor, and limits on TMA") {
  packed g(sm_90a);
  auto bad = g.k.input<f32>("F", dims(g.N));
  auto s = g.k.smem<f32>("s", {32, 32});
  auto bar = g.k.mbarrier("bar");
  g.k.role("rows", warpgroups(1), [&](role& r) {
    r.for_each(g.sp, [&](auto q, auto b) {
      (void)r.read_index(bad.at(b));                                  // f32: refused
      auto x = r.fragment<f32>("x", {8, 64});
      r.load(x, g.X.tile(q, 0).elements_at(2));                        // no dim 2
      r.load(x, g.X.tile(q, 0).limit(5, 7));                           // no dim 5
      r.tma_load(s, g.X.tile(q, 0).limit(0, 7), bar);                  // a TMA box has no limit
    });
  });
  const program& p = g.k.p;
  CHECK(has_error(p, "ir.index-value", static_cast<int>(dtype::f32)));
  CHECK(cake_test::count_errors(p, "ir.tile-rank") == 2);
  CHECK(has_error(p, "ir.modifier", 0));
}

TEST_CASE("index values: the analyzer's model reads a tensor as non-decreasing, and values are in scope after their op") {
  const program p = packed_copy(sm_90a);
  const auto r = analyze(p);
  CHECK(r.errors == 0);
  CHECK(r.warnings == 0);
  const int rd = find_op(p, op_kind::read_index), rd2 = find_op(p, op_kind::read_index, 1), let = find_op(p, op_kind::let_index);
  auto zero = [](const index_term&) -> long long { return 0; };
  CHECK(analysis::detail::model_value(p, rd, 64, zero) == 0);    // Off[0]
  CHECK(analysis::detail::model_value(p, rd2, 64, zero) == 64);  // Off[1]
  CHECK(analysis::detail::model_value(p, let, 64, zero) == 64);  // the entry's length
  CHECK(analysis::detail::value_scope_error(p, rd, let).empty());
  CHECK_FALSE(analysis::detail::value_scope_error(p, let, rd).empty());  // used before its op
}

TEST_CASE("index values: lowering declares one variable per value and bounds stores by the limit") {
  for (target_id t : {target_id::sm_80, target_id::sm_90a}) {
    const program p = packed_copy(t);
    const auto l = lower::lower(p, {});
    REQUIRE_MESSAGE(l.ok, l.error);
    const int rd = find_op(p, op_kind::read_index);
    CHECK(l.source.find("const long long iv" + std::to_string(rd) + " = (long long)__ldg(static_cast<const int*>(args.ptr[2])") != std::string::npos);
    CHECK(l.source.find("cake_dev::min_ll(d_R, (iv") != std::string::npos);  // rows = min(R, end)
    // without the limit the rows end at R only
    const auto plain = lower::lower(packed_copy(t, false), {});
    REQUIRE(plain.ok);
    CHECK(plain.source.find("cake_dev::min_ll(d_R") == std::string::npos);
  }
}

TEST_CASE("index values: a loop bound that is negative under the model is reported with the bound as written") {
  packed g(sm_80);
  g.k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(g.sp, [&](auto q, auto b) {
      const index_expr start = r.read_index(g.Off.at(b, 0)), end = r.read_index(g.Off.at(b + 1, 0));
      r.loop(start - end, [&](auto j) { r.load(x, g.X.tile(q * 4 + r.warp(), j)); });
    });
  });
  const program p = g.k.build();
  const auto rep = analyze(p);
  int found = 0;
  for (const auto& d : rep.diagnostics)
    if (d.rule == analysis::rule_id::ir_index_value_bound) {
      ++found;
      const std::string m(d.message.view());
      INFO(m);
      CHECK(m.find("while below v") != std::string::npos);  // v1 - v2, not an empty expression
      CHECK(m.find("-32 trips") != std::string::npos);       // one unit (tiles(MR, 32)) below zero
    }
  CHECK(found == 1);
}

// A start that reads no value (a strided walk's second trip, as the decode's slice loop after its first
// block) past the model's end runs zero trips: not reported. The same bound read the wrong way round is.
TEST_CASE("index values: a loop from a fixed start past a short range's end is not a reversed bound") {
  for (const bool reversed : {false, true}) {
    packed g(sm_80);
    g.k.role("rows", warps(4), [&](role& r) {
      auto x = r.fragment<f32>("x", {8, 64});
      r.for_each(g.sp, [&](auto q, auto b) {
        const index_expr start = r.read_index(g.Off.at(b, 0)), end = r.read_index(g.Off.at(b + 1, 0));
        const index_expr blocks = r.let_index(reversed ? start - end : end - start);
        // (the model puts the end at 32, one unit: a start of 64 lies past it)
        r.loop(q + 64, loop_extent(blocks), 64, [&](auto j) { r.load(x, g.X.tile(q * 4 + r.warp(), j)); });
      });
    });
    const program p = g.k.build();
    const auto rep = analyze(p);
    int found = 0;
    for (const auto& d : rep.diagnostics) found += d.rule == analysis::rule_id::ir_index_value_bound;
    INFO("reversed " << reversed);
    CHECK(found == (reversed ? 1 : 0));
  }
}

// count_arrival: S splits of each row block arrive on its counter; the last adds the parts.
namespace {
program split_sum(units_t u, int n = 4) {
  auto k = kernel("split_sum").target(sm_90a);
  auto [R, C, NS, CR] = k.dims("R", "C", "NS", "CR");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto Part = k.output<f32>("part", dims(NS, R, C));
  auto Count = k.output<i32>("count", dims(CR, C));
  auto work = k.parallel(split(4), tiles(R, 64));
  k.role("rows", u, [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.for_each(work, [&](auto s, auto i) {
      r.load(x, X.tile(i, s));
      r.store(Part.tile(s, i, 0), x);
      auto before = r.count_arrival(Count.at(i, 0), n);
      r.when(eq(before, n - 1), [&] {
        r.for_range(4, [&](auto q) { r.when(ne(q, s), [&] { r.load_add(x, Part.tile(q, i, 0)); }); });
        r.store(Y.tile(i, 0), x);
      });
    });
  });
  return k.build();
}
// How many sync.counter-arrivals diagnostics the analyzer gives the program.
int arrivals_errors(const program& p) {
  int n = 0;
  for (const auto& d : analyze(p).diagnostics) n += d.rule == analysis::rule_id::sync_counter_arrivals;
  return n;
}
}  // namespace

TEST_CASE("count_arrival: records the counter and its count, defines an index value, and prints both") {
  const program p = split_sum(warps(1));
  REQUIRE(p.errors.empty());
  const int c = find_op(p, op_kind::count_arrival);
  REQUIRE(c >= 0);
  CHECK(p.ops[c].imm[0] == 4);
  CHECK(p.ops[c].a.kind == operand_kind::global);
  CHECK(p.tile_refs[p.ops[c].a.index].elements == 0b11);
  CHECK(info(op_kind::count_arrival).lowered_on == on_all);
  // the when reads its value
  const int w = find_op(p, op_kind::when);
  REQUIRE(w > c);
  bool reads = false;
  for (int i = p.ops[w].expr_first(); i < p.ops[w].expr_first() + p.ops[w].expr_count(); ++i)
    reads = reads || (p.exprs[i].fn == math_fn::index && p.exprs[i].ix.uses(var_kind::value, c));
  CHECK(reads);
  CHECK(to_text(p).find("count_arrival v" + std::to_string(c) + " = count.at(") != std::string::npos);
  CHECK(to_text(p).find("then stepped mod 4") != std::string::npos);
  // the analyzer's model: the last arrival (its unit takes the combining path)
  CHECK(analysis::detail::model_value(p, c, 1, [](const index_term&) { return 0LL; }) == 3);
  const auto rep = analyze(p);
  CHECK(rep.errors == 0);
  CHECK(rep.warnings == 0);
}

TEST_CASE("count_arrival: the builder refuses a counter that is not i32 and a count below 1") {
  auto k = kernel("bad_counter").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto F = k.output<f32>("F", dims(R, C));
  auto I = k.output<i32>("I", dims(R, C));
  auto sp = k.parallel(tiles(R, 64));
  k.role("rows", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto i) {
      (void)r.count_arrival(F.at(i, 0), 2);
      (void)r.count_arrival(I.at(i, 0), 0);
    });
  });
  CHECK(has_error(k.p, "ir.index-value", static_cast<int>(dtype::f32)));
  CHECK(has_error(k.p, "ir.index-value", 0));
}

TEST_CASE("count_arrival lowers to one atom.inc.acq_rel.gpu per unit: a shuffle in a warp, a scratch word between two barriers in a warpgroup") {
  // (two warps on one counter element: 4 splits x 2 units arrive)
  const auto warp = lower::lower(split_sum(warps(2), 8));
  REQUIRE_MESSAGE(warp.ok, warp.error);
  CHECK(warp.source.find("__syncwarp();") != std::string::npos);
  CHECK(warp.source.find("cake_dev::atom_inc_acq_rel_gpu(") != std::string::npos);
  CHECK(warp.source.find(", 7u)") != std::string::npos);  // wraps to 0 after the 8th
  CHECK(warp.source.find("__shfl_sync(0xffffffffu, iv") != std::string::npos);
  const auto wg = lower::lower(split_sum(warpgroups(1)));
  REQUIRE_MESSAGE(wg.ok, wg.error);
  const auto at = wg.source.find("count_arrival (4 arrivals");
  REQUIRE(at != std::string::npos);
  const std::string body = wg.source.substr(at, wg.source.find("const long long iv", at) - at);
  int syncs = 0;
  for (auto q = body.find("named_barrier_sync("); q != std::string::npos; q = body.find("named_barrier_sync(", q + 1)) ++syncs;
  CHECK(syncs == 2);
  CHECK(body.find("st.shared.u32") != std::string::npos);
  CHECK(body.find("if (leader)") != std::string::npos);
  // its scratch word lies past every other use of the role's scratch
  const auto plan = plan::make_plan(split_sum(warpgroups(1)));
  CHECK(plan.frags.count_offset[0] >= 0);
  CHECK(plan.frags.scratch_bytes[0] >= plan.frags.count_offset[0] + 4);
  CHECK(plan::make_plan(split_sum(warps(2))).frags.count_offset[0] == -1);  // warps broadcast by shuffle
}

TEST_CASE("count_arrival: a count that is not the number of units sharing a counter element is sync.counter-arrivals") {
  // 4 splits and 2 warps, each warp on the same counter element (no coordinate tells the warps apart): 8 arrive
  const auto rep = analyze(split_sum(warps(2), 4));
  CHECK(rep.errors >= 1);
  bool found = false;
  for (const auto& d : rep.diagnostics)
    if (d.rule == analysis::rule_id::sync_counter_arrivals) found = d.message.view().find("waits for 4 arrivals per element, but 8 units step") != std::string_view::npos;
  CHECK(found);
  CHECK(analyze(split_sum(warps(2), 8)).errors == 0);
}

TEST_CASE("count_arrival outside the walk: every CTA of the grid arrives (split(4): 4 per element when the space is one split axis)") {
  auto build = [](int n) {
    auto k = kernel("once_per_cta").target(sm_90a);
    auto C = k.dim("C");
    auto Count = k.output<i32>("count", dims(C));
    auto Y = k.output<f32>("Y", dims(C));
    auto sp = k.parallel(split(4));
    k.role("w", warps(1), [&](role& r) {
      auto x = r.col_vector<f32>("x", 64);
      auto before = r.count_arrival(Count.at(0), n);
      r.when(eq(before, n - 1), [&] {
        r.fill(x, 1.0f);
        r.store(Y.tile(0), x);
      });
      r.for_each(sp, [&](auto) {});
    });
    return k.build();
  };
  CHECK(arrivals_errors(build(4)) == 0);
  CHECK(arrivals_errors(build(1)) == 1);
}

TEST_CASE("count_arrival in an alternating walk: one unit per point arrives (split(4) over two warpgroups: 4 per element, not 8)") {
  auto build = [](int n, bool alternate) {
    auto k = kernel("alternating_counter").target(sm_90a);
    auto C = k.dim("C");
    auto Count = k.output<i32>("count", dims(C));
    auto Y = k.output<f32>("Y", dims(C));
    auto sp = k.parallel(split(4));
    k.role("w", warpgroups(2), [&](role& r) {
      auto x = r.col_vector<f32>("x", 64);
      auto body = [&](auto) {
        auto before = r.count_arrival(Count.at(0), n);
        r.when(eq(before, n - 1), [&] {
          r.fill(x, 1.0f);
          r.store(Y.tile(0), x);
        });
      };
      if (alternate) r.for_each(alternating(sp), body);
      else r.for_each(sp, body);
    });
    return k.build();
  };
  CHECK(arrivals_errors(build(4, true)) == 0);
  CHECK(arrivals_errors(build(8, true)) == 1);
  CHECK(arrivals_errors(build(8, false)) == 0);  // both warpgroups at every point
  CHECK(arrivals_errors(build(4, false)) == 1);
}
