// Unit tests for the role builder (cake/ir/role_builder.hpp): every method records one op with the
// right kind, operands, role, enclosing loop, flags and immediates, and the source line of the call.
#include <doctest/doctest.h>

#include <cstring>
#include <type_traits>

#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {

// A kernel with the usual GEMM resources; roles are added by each test. Not copyable in spirit:
// handles point back into `k`.
struct fixture {
  kernel_builder k;
  dim_ref M, N, K;
  tensor<bf16> A, B, D;
  space<2> mn;
  smem_tile<bf16> sA, sB, sD;
  pipeline_ref ab;
  mbarrier_ref bar, bars;
  named_barrier_ref nb;
  explicit fixture(target_id target = sm_90a) : k(kernel("k")) {
    k.target(target);
    if (target != sm_80) k.cluster(2);
    const auto d = k.dims("M", "N", "K");
    M = d[0], N = d[1], K = d[2];
    A = k.input<bf16>("A", dims(M, K));
    B = k.input<bf16>("B", dims(N, K));
    D = k.output<bf16>("D", dims(M, N));
    mn = k.parallel(tiles(M, 128), tiles(N, 256));
    sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
    sB = k.smem<bf16>("sB", {256, 64}, swizzle::b128);
    sD = k.smem<bf16>("sD", {128, 64}, swizzle::b128, copies(2));
    ab = k.pipeline("ab", stages(4)).carries(sA, sB);
    bar = k.mbarrier("bar");
    bars = k.mbarrier("bars", arrivals(1), 4);
    nb = k.named_barrier("nb");
  }
  const program& p() const { return k.p; }
  const op& last() const { return k.p.ops.back(); }
};

void check_op(const program& p, int id, op_kind kind, unsigned line, int parent = -1) {
  REQUIRE(id >= 0);
  REQUIRE(static_cast<std::size_t>(id) < p.ops.size());
  const op& o = p.ops[id];
  CHECK(to_string(o.kind) == to_string(kind));
  CHECK(o.loc.line == line);
  CHECK(o.parent == parent);
}

}  // namespace

TEST_CASE("ops: the op table names every kind once and gives its category and instruction family") {
  CHECK(op_kind_count == static_cast<int>(op_kind::count_));
  for (int i = 0; i < op_kind_count; ++i)
    for (int j = i + 1; j < op_kind_count; ++j) CHECK(op_table[i].name != op_table[j].name);
  CHECK(info(op_kind::wgmma).category == op_category::compute);
  CHECK(info(op_kind::wgmma).needs == feature::wgmma);
  CHECK(info(op_kind::tma_load).category == op_category::memory);
  CHECK(info(op_kind::tma_load).who == issuer::leader);
  CHECK(info(op_kind::mbarrier_wait).category == op_category::sync);
  CHECK(info(op_kind::mbarrier_wait).who == issuer::all);
  CHECK(info(op_kind::tile_loop).category == op_category::control);
  CHECK(info(op_kind::convert).needs == feature::count_);  // generic code, admitted everywhere
  CHECK(info(op_kind::tcgen05_mma).who == issuer::leader);
  CHECK(info(op_kind::setmaxnreg).needs == feature::setmaxnreg);
  CHECK(to_string(op_category::memory) == "memory");
  CHECK(to_string(op_kind::pipeline_acquire) == "pipeline_acquire");
}

TEST_CASE("ops: each role's ops carry the role index, ids are global and in program order") {
  fixture f;
  f.k.role("a", warps(1), [&](role& r) { r.fence_proxy_async(); });
  f.k.role("b", warps(1), [&](role& r) {
    r.cluster_arrive();
    r.cluster_wait();
  });
  REQUIRE(f.p().ops.size() == 3);
  CHECK(f.p().ops[0].role == 0);
  CHECK(f.p().ops[1].role == 1);
  CHECK(f.p().ops[2].role == 1);
  CHECK(f.p().ops[1].kind == op_kind::cluster_arrive);
  CHECK(f.p().ops[2].kind == op_kind::cluster_wait);
}

TEST_CASE("control: for_each and loop open loops, bodies nest and record parent and end") {
  fixture f;
  unsigned l_tile = 0, l_k = 0, l_body = 0;
  index_expr tm, tn, kv;
  f.k.role("r", warpgroups(1), [&](role& r) {
    l_tile = __LINE__; r.for_each(f.mn, [&](auto m, auto n) {
      tm = m, tn = n;
      l_k = __LINE__; r.loop(tiles(f.K, 64), [&](auto kt) {
        kv = kt;
        r.wgmma_fence(); l_body = __LINE__;
      });
      r.wgmma_commit();
    });
  });
  // A call spread over several lines (a loop and its body) records the line where the call starts.
  const program& p = f.p();
  REQUIRE(p.ops.size() == 4);
  check_op(p, 0, op_kind::tile_loop, l_tile);
  check_op(p, 1, op_kind::loop, l_k, 0);
  check_op(p, 2, op_kind::wgmma_fence, l_body, 1);
  check_op(p, 3, op_kind::wgmma_commit, l_body + 2, 0);
  CHECK(p.ops[0].end == 4);
  CHECK(p.ops[1].end == 3);
  CHECK(p.ops[1].imm[1] == 0);  // its bounds: program::loops[0]
  CHECK_FALSE(p.ops[1].has(flag_static_trip));
  REQUIRE(p.loops.size() == 1);
  REQUIRE(p.bound_of(1) == &p.loops[0]);
  CHECK(p.bound_of(0) == nullptr);  // the tile loop has no bounds
  CHECK(p.loops[0].lo == index_expr(0));
  CHECK(p.loops[0].hi == (f.K.extent() + 63) / 64);  // tiles(K, 64) = ceil(K / 64)
  CHECK(p.loops[0].dim == f.K.index);
  CHECK(p.loops[0].block == 64);
  CHECK(p.loops[0].step == 1);
  CHECK_FALSE(p.loops[0].has_hi2);
  CHECK(p.depth(2) == 2);
  CHECK(p.inside(2, 0));
  CHECK(p.inside(2, 1));
  CHECK_FALSE(p.inside(3, 1));
  CHECK(tm == var_index(var_kind::tile_coord, 0));
  CHECK(tn == var_index(var_kind::tile_coord, 1));
  CHECK(kv == var_index(var_kind::loop, 1));  // the loop variable names its loop op
}

TEST_CASE("control: for_each hands the body the point (pt[i]) or one index per axis") {
  auto k = kernel("k");
  auto [S, H, B] = k.dims("S", "H", "B");
  auto sp = k.parallel(tiles(S, 128), each(H), each(B));
  CHECK(sp.extent(0) == 128);
  CHECK(sp.extent(1) == 1);
  index_expr a0, a1, a2, b0, b1, b2;
  k.role("r", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto pt) { a0 = pt[0], a1 = pt[1], a2 = pt[2]; });
    r.for_each(sp, [&](auto s, auto h, auto b) { b0 = s, b1 = h, b2 = b; });
  });
  CHECK(a0 == var_index(var_kind::tile_coord, 0));
  CHECK(a1 == var_index(var_kind::tile_coord, 1));
  CHECK(a2 == var_index(var_kind::tile_coord, 2));
  CHECK(b0 == a0);
  CHECK(b1 == a1);
  CHECK(b2 == a2);
  CHECK(k.p.ops.size() == 2);
  CHECK(k.p.ops[0].kind == op_kind::tile_loop);
  CHECK(k.p.errors.empty());
}

TEST_CASE("control: loop bounds are recorded in program::loops (tiles, min, from and step, index expressions)") {
  auto k = kernel("k");
  auto [M, N, K] = k.dims("M", "N", "K");
  auto sp = k.parallel(tiles(M, 128), tiles(N, 128), split(4));
  k.role("r", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto m, auto, auto s) {
      r.loop(min(m + 1, tiles(K, 64)), [&](auto) {});  // op 1: loops[0]
      r.loop(s, tiles(K, 64), 4, [&](auto) {});         // op 2: loops[1]
      r.loop(K.extent() / 8, [&](auto) {});             // op 3: loops[2]
      r.loop(index_expr(2), 10, 3, [&](auto) {});        // op 4: loops[3]
    });
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  REQUIRE(p.loops.size() == 4);
  const index_expr k_blocks = (K.extent() + 63) / 64;
  // min(m + 1, tiles(K, 64)): two upper bounds; the tiles() side is remembered as (dim, block).
  CHECK(p.bound_of(1) == &p.loops[0]);
  CHECK(p.loops[0].lo == index_expr(0));
  CHECK(p.loops[0].hi == var_index(var_kind::tile_coord, 0) + 1);
  CHECK(p.loops[0].has_hi2);
  CHECK(p.loops[0].hi2 == k_blocks);
  CHECK(p.loops[0].dim == K.index);
  CHECK(p.loops[0].block == 64);
  CHECK(p.loops[0].step == 1);
  // From the split index, in steps of 4.
  CHECK(p.loops[1].lo == var_index(var_kind::tile_coord, 2));
  CHECK(p.loops[1].hi == k_blocks);
  CHECK_FALSE(p.loops[1].has_hi2);
  CHECK(p.loops[1].step == 4);
  // A plain index expression of a dim's extent: no (dim, block) is remembered.
  CHECK(p.loops[2].hi == K.extent() / 8);
  CHECK(p.loops[2].block == 0);
  // Constant bounds.
  CHECK(p.loops[3].lo == index_expr(2));
  CHECK(p.loops[3].hi == index_expr(10));
  CHECK(p.loops[3].step == 3);
  for (int op = 1; op <= 4; ++op) {
    CHECK(p.ops[op].kind == op_kind::loop);
    CHECK_FALSE(p.ops[op].has(flag_static_trip));
    CHECK(p.ops[op].imm[1] == op - 1);
  }
}

TEST_CASE("control: with one axis, a generic body receives the index itself, as an index_expr parameter does") {
  auto k = kernel("k");
  auto M = k.dim("M");
  auto sp = k.parallel(tiles(M, 64));
  index_expr from_generic, from_index;
  bool got_index = false;
  k.role("r", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto i) {
      got_index = std::is_same_v<decltype(i), index_expr>;
      from_generic = i;
    });
    r.for_each(sp, [&](index_expr m) { from_index = m; });
  });
  CHECK(got_index);  // [&](auto i) with a one-axis space is the axis index, not the point
  CHECK(from_generic == var_index(var_kind::tile_coord, 0));
  CHECK(from_index == from_generic);
  CHECK(k.p.errors.empty());
}

TEST_CASE("control: for_range records a static trip count, setmaxnreg and griddepcontrol") {
  fixture f;
  unsigned l_range = 0, l_set = 0, l_gw = 0, l_gl = 0;
  f.k.role("r", warpgroups(1), [&](role& r) {
    r.setmaxnreg(232); l_set = __LINE__;
    r.griddep_wait(); l_gw = __LINE__;
    r.for_range(4, [&](auto) {}); l_range = __LINE__;
    r.griddep_launch_dependents(); l_gl = __LINE__;
  });
  const program& p = f.p();
  check_op(p, 0, op_kind::setmaxnreg, l_set);
  CHECK(p.ops[0].imm[0] == 232);
  check_op(p, 1, op_kind::griddep_wait, l_gw);
  check_op(p, 2, op_kind::loop, l_range);
  CHECK(p.ops[2].has(flag_static_trip));
  CHECK(p.ops[2].imm[1] == 4);
  CHECK(p.ops[2].end == 3);  // an empty body
  check_op(p, 3, op_kind::griddep_launch, l_gl);
  CHECK(p.errors.empty());
}

TEST_CASE("registers: accumulator and fragment tiles belong to their role and unit") {
  fixture f;
  unsigned line = 0;
  f.k.role("w", warps(2), [&](role&) {});
  f.k.role("r", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 256}); line = __LINE__;
    auto frag = r.fragment<bf16>("frag", {64, 64});
    CHECK(acc.o.kind == operand_kind::reg);
    CHECK(acc.o.index == 0);
    CHECK(frag.o.index == 1);
  });
  const program& p = f.p();
  REQUIRE(p.regs.size() == 2);
  CHECK(p.regs[0].nm == "acc");
  CHECK(p.regs[0].dt == dtype::f32);
  CHECK(p.regs[0].rows == 64);
  CHECK(p.regs[0].cols == 256);
  CHECK(p.regs[0].role == 1);
  CHECK(p.regs[0].scope == role_unit::warpgroup);
  CHECK(p.regs[0].accumulator);
  CHECK(p.regs[0].loc.line == line);
  CHECK_FALSE(p.regs[1].accumulator);
  CHECK(p.regs[1].dt == dtype::bf16);
  CHECK(p.ops.empty());  // declaring registers records no op
}

TEST_CASE("compute: wgmma records accumulator, A and B with their stage and part selections") {
  fixture f;
  unsigned line = 0;
  f.k.role("c", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 256});
    r.loop(tiles(f.K, 64), [&](auto kt) {
      auto s = r.wait(f.ab);
      r.wgmma(acc, s[f.sA].rows(r.warpgroup(), 2), s[f.sB]).overwrite_on_first(kt); line = __LINE__;
    });
  });
  const program& p = f.p();
  const int id = find_op(p, op_kind::wgmma);
  check_op(p, id, op_kind::wgmma, line, 0);
  const op& o = p.ops[id];
  CHECK(o.d.kind == operand_kind::reg);
  CHECK(o.d.index == 0);
  CHECK(o.a.kind == operand_kind::smem);
  CHECK(o.a.index == 0);
  CHECK(o.a.sel == stage_sel::slot);
  CHECK(o.a.slot_op == 1);  // the wait op
  CHECK(o.a.part == part_axis::rows);
  CHECK(o.a.parts == 2);
  CHECK(o.a.part_index == var_index(var_kind::warpgroup, 0));
  CHECK(o.b.index == 1);
  CHECK(o.b.part == part_axis::none);
  CHECK(o.has(flag_overwrite_first));
  CHECK(o.imm[2] == 0);  // the loop op
  CHECK_FALSE(o.has(flag_overwrite));
  CHECK(p.errors.empty());
}

TEST_CASE("compute: mma_sync takes operands from smem stages or registers, per warp") {
  fixture f(sm_80);
  unsigned line = 0;
  f.k.role("m", warps(4), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    auto fa = r.fragment<bf16>("fa", {64, 64});
    r.mma_sync(acc, fa, f.sD.stage(1).rows(r.warp() % 2, 2)).overwrite(); line = __LINE__;
  });
  const program& p = f.p();
  check_op(p, 0, op_kind::mma_sync, line);
  const op& o = p.ops[0];
  CHECK(o.a.kind == operand_kind::reg);
  CHECK(o.b.kind == operand_kind::smem);
  CHECK(o.b.index == 2);
  CHECK(o.b.sel == stage_sel::expr);
  CHECK(o.b.stage.constant == 1);
  CHECK(o.b.parts == 2);
  CHECK(o.has(flag_overwrite));
  CHECK(p.errors.empty());
}

TEST_CASE("compute: tcgen05_mma writes a TMEM stage from smem operands") {
  auto k = kernel("k").target(sm_100a);
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {256, 64}, swizzle::b128);
  auto acc = k.tmem("acc", columns(256));
  auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
  auto ap = k.pipeline("ap", stages(1)).carries(acc);
  unsigned line = 0;
  k.role("mma", warps(1), [&](role& r) {
    auto a = r.acquire(ap);
    auto s = r.wait(ab);
    r.tcgen05_mma(a[acc], s[sA], s[sB]); line = __LINE__;
  });
  const program& p = k.p;
  check_op(p, 2, op_kind::tcgen05_mma, line);
  CHECK(p.ops[2].d.kind == operand_kind::tmem);
  CHECK(p.ops[2].d.sel == stage_sel::slot);
  CHECK(p.ops[2].d.slot_op == 0);
  CHECK(p.ops[2].a.slot_op == 1);
  CHECK(p.ops[2].b.index == 1);
  CHECK(p.errors.empty());
}

TEST_CASE("compute: fill, zero, set (one op per expression), row reductions, argmin and convert") {
  fixture f;
  unsigned l_fill = 0, l_zero = 0, l_add = 0, l_exp = 0, l_max = 0, l_sum = 0, l_arg = 0, l_cvt = 0;
  f.k.role("c", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto y = r.fragment<f32>("y", {64, 64});
    auto m = r.fragment<f32>("m", {64, 1});
    auto i = r.fragment<i32>("i", {64, 1});
    r.fill(x, -1.5f); l_fill = __LINE__;
    r.zero(y); l_zero = __LINE__;
    r.set(x, x + y); l_add = __LINE__;
    r.set(y, exp2(x)); l_exp = __LINE__;
    r.row_max(m, x); l_max = __LINE__;
    r.row_sum(m, y); l_sum = __LINE__;
    r.row_argmin(m, i, x, index_expr(64)); l_arg = __LINE__;
    auto h = r.convert<bf16>(x); l_cvt = __LINE__;
    CHECK(h.o.index == 4);
  });
  const program& p = f.p();
  REQUIRE(p.errors.empty());
  check_op(p, 0, op_kind::fill, l_fill);
  float v = 0;
  std::memcpy(&v, &p.ops[0].imm[0], sizeof v);
  CHECK(v == -1.5f);
  check_op(p, 1, op_kind::fill, l_zero);
  CHECK(p.ops[1].imm[0] == 0);
  // r.set: the destination, and the expression's nodes in program::exprs (imm[0] first, imm[1] count, root last).
  check_op(p, 2, op_kind::elementwise, l_add);
  CHECK(p.ops[2].d.index == 0);
  CHECK(p.ops[2].a.kind == operand_kind::none);
  REQUIRE(p.ops[2].imm[0] == 0);
  REQUIRE(p.ops[2].imm[1] == 3);
  CHECK(p.exprs[0].fn == math_fn::tile);
  CHECK(p.exprs[0].ref == 0);
  CHECK(p.exprs[1].fn == math_fn::tile);
  CHECK(p.exprs[1].ref == 1);
  CHECK(p.exprs[2].fn == math_fn::add);
  CHECK(p.exprs[2].kid[0] == 0);
  CHECK(p.exprs[2].kid[1] == 1);
  check_op(p, 3, op_kind::elementwise, l_exp);
  CHECK(p.ops[3].d.index == 1);
  REQUIRE(p.ops[3].imm[0] == 3);
  REQUIRE(p.ops[3].imm[1] == 2);
  CHECK(p.exprs[4].fn == math_fn::exp2);
  CHECK(p.exprs[4].kid[0] == 3);  // child indices are absolute in program::exprs
  CHECK(p.exprs[4].kid[1] == -1);
  check_op(p, 4, op_kind::reduce_rows, l_max);
  CHECK(p.ops[4].imm[0] == static_cast<int>(reduce_kind::max));
  CHECK(p.ops[4].d.index == 2);
  CHECK(p.ops[4].a.index == 0);
  CHECK_FALSE(p.ops[4].has(flag_accumulate));
  check_op(p, 5, op_kind::reduce_rows, l_sum);
  CHECK(p.ops[5].imm[0] == static_cast<int>(reduce_kind::sum));
  // argmin: d = the value vector, b = the index vector, a = the source, ix = the column of the tile's column 0.
  check_op(p, 6, op_kind::arg_reduce_rows, l_arg);
  CHECK(p.ops[6].imm[0] == static_cast<int>(reduce_kind::argmin));
  CHECK(p.ops[6].d.index == 2);
  CHECK(p.ops[6].b.index == 3);
  CHECK(p.ops[6].a.index == 0);
  CHECK(p.ops[6].ix == index_expr(64));
  check_op(p, 7, op_kind::convert, l_cvt);
  CHECK(p.ops[7].a.index == 0);
  CHECK(p.ops[7].d.index == 4);
  // convert declares the converted tile: same shape and role, the new dtype, a derived name.
  CHECK(p.regs[4].dt == dtype::bf16);
  CHECK(p.regs[4].rows == 64);
  CHECK(p.regs[4].nm == "x.bf16");
  CHECK_FALSE(p.regs[4].accumulator);
  CHECK(p.regs[4].loc.line == l_cvt);
}

TEST_CASE("compute: convert shortens a long base name so that the dtype suffix always fits") {
  fixture f;
  f.k.role("c", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("a_register_tile_with_a_long_name", {64, 64});  // 32 characters: too long
    (void)r.convert<bf16>(x);
  });
  CHECK(has_error(f.p(), "ir.name-too-long", 32));
  const auto& converted = f.p().regs.back();
  CHECK(converted.nm.view().size() <= name::capacity);
  CHECK(converted.nm.view().substr(converted.nm.view().size() - 5) == ".bf16");
}

TEST_CASE("memory: tma_load into a pipeline slot records the global tile and its coordinates") {
  fixture f;
  unsigned l_a = 0, l_b = 0;
  f.k.role("p", warps(1), [&](role& r) {
    r.for_each(f.mn, [&](auto m, auto n) {
      r.loop(tiles(f.K, 64), [&](auto kt) {
        auto s = r.acquire(f.ab);
        r.tma_load(s[f.sA], f.A.tile(m, kt)); l_a = __LINE__;
        r.tma_load(s[f.sB], f.B.tile(n, kt)).multicast(); l_b = __LINE__;
      });
    });
  });
  const program& p = f.p();
  check_op(p, 3, op_kind::tma_load, l_a, 1);
  check_op(p, 4, op_kind::tma_load, l_b, 1);
  const op& a = p.ops[3];
  CHECK(a.d.kind == operand_kind::smem);
  CHECK(a.d.sel == stage_sel::slot);
  CHECK(a.d.slot_op == 2);
  CHECK(a.a.kind == operand_kind::global);
  const global_tile_ref& g = p.tile_refs[a.a.index];
  CHECK(g.tensor == 0);
  CHECK(g.rank == 2);
  CHECK(g.coords[0] == var_index(var_kind::tile_coord, 0));
  CHECK(g.coords[1] == var_index(var_kind::loop, 1));
  CHECK_FALSE(a.has(flag_multicast));
  CHECK(p.ops[4].has(flag_multicast));
  CHECK(p.tile_refs[p.ops[4].a.index].tensor == 1);
  CHECK(p.errors.empty());
}

TEST_CASE("memory: tma_load completing on an explicit mbarrier, tma_store, tensor-map prefetch") {
  fixture f;
  unsigned l_load = 0, l_store = 0, l_pf = 0;
  f.k.role("p", warps(1), [&](role& r) {
    r.prefetch_tensor_map(f.B); l_pf = __LINE__;
    r.tma_load(f.sD.stage(1), f.A.tile(0, 1), f.bars[index_expr(3)]); l_load = __LINE__;
    r.tma_store(f.D.tile(2, r.warp()), f.sD.stage(0)); l_store = __LINE__;
  });
  const program& p = f.p();
  check_op(p, 0, op_kind::tma_prefetch, l_pf);
  CHECK(p.ops[0].a.kind == operand_kind::tensor);
  CHECK(p.ops[0].a.index == 1);
  check_op(p, 1, op_kind::tma_load, l_load);
  CHECK(p.ops[1].b.kind == operand_kind::mbarrier);
  CHECK(p.ops[1].b.index == 1);
  CHECK(p.ops[1].b.stage.constant == 3);
  check_op(p, 2, op_kind::tma_store, l_store);
  CHECK(p.ops[2].d.kind == operand_kind::global);  // destination first
  CHECK(p.ops[2].a.kind == operand_kind::smem);
  CHECK(p.tile_refs[p.ops[2].d.index].tensor == 2);
  CHECK(p.tile_refs[p.ops[2].d.index].coords[1] == var_index(var_kind::warp, 0));
}

TEST_CASE("memory: an L2 tile prefetch names the tile and takes its box from an smem region") {
  fixture f;
  unsigned l_pf = 0;
  f.k.role("p", warps(1), [&](role& r) {
    r.loop(tiles(f.K, 64), [&](auto kt) { r.prefetch_l2(f.sA, f.A.tile(1, kt + 2)); l_pf = __LINE__; });
  });
  const program& p = f.p();
  check_op(p, 1, op_kind::tma_prefetch_tile, l_pf, 0);
  CHECK(p.ops[1].d.kind == operand_kind::smem);  // the box
  CHECK(p.ops[1].d.index == 0);
  CHECK(p.ops[1].a.kind == operand_kind::global);
  CHECK(p.tile_refs[p.ops[1].a.index].tensor == 0);
  CHECK(info(op_kind::tma_prefetch_tile).who == issuer::leader);
  CHECK(cake::detail::op_text(p, 1) == "#1 tma_prefetch_tile A.tile(1, k0 + 2) (box of sA)");
  CHECK(p.errors.empty());
}

TEST_CASE("memory: cp.async, global and shared loads and stores") {
  fixture f(sm_80);
  unsigned l_cp = 0, l_lg = 0, l_ls = 0, l_sg = 0, l_ss = 0;
  f.k.role("w", warps(4), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 64});
    r.cp_async(f.sA, f.A.tile(1, 2)); l_cp = __LINE__;
    r.load(x, f.A.tile(0, 0)); l_lg = __LINE__;
    r.load(x, f.sD.stage(1)); l_ls = __LINE__;
    r.store(f.D.tile(0, 0), x); l_sg = __LINE__;
    r.store(f.sD.stage(0), x); l_ss = __LINE__;
  });
  const program& p = f.p();
  check_op(p, 0, op_kind::cp_async, l_cp);
  CHECK(p.ops[0].d.kind == operand_kind::smem);
  CHECK(p.tile_refs[p.ops[0].a.index].coords[0].constant == 1);
  check_op(p, 1, op_kind::load_global, l_lg);
  CHECK(p.ops[1].d.kind == operand_kind::reg);
  CHECK(p.ops[1].a.kind == operand_kind::global);
  check_op(p, 2, op_kind::load_shared, l_ls);
  CHECK(p.ops[2].a.kind == operand_kind::smem);
  check_op(p, 3, op_kind::store_global, l_sg);
  CHECK(p.ops[3].d.kind == operand_kind::global);
  CHECK(p.ops[3].a.kind == operand_kind::reg);
  check_op(p, 4, op_kind::store_shared, l_ss);
  CHECK(p.ops[4].d.kind == operand_kind::smem);
  CHECK(p.errors.empty());
}

TEST_CASE("memory: ldmatrix and stmatrix (with a column part of a register tile)") {
  fixture f;
  unsigned l_ld = 0, l_st = 0;
  f.k.role("w", warpgroups(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 256});
    r.ldmatrix(x, f.sA); l_ld = __LINE__;
    r.stmatrix(f.sD.stage(0), x.cols(1, 4)); l_st = __LINE__;
  });
  const program& p = f.p();
  check_op(p, 0, op_kind::ldmatrix, l_ld);
  CHECK(p.ops[0].d.kind == operand_kind::reg);
  CHECK(p.ops[0].a.kind == operand_kind::smem);
  check_op(p, 1, op_kind::stmatrix, l_st);
  CHECK(p.ops[1].a.part == part_axis::cols);
  CHECK(p.ops[1].a.parts == 4);
  CHECK(p.ops[1].a.part_index.constant == 1);
  CHECK(p.errors.empty());
}

TEST_CASE("memory: TMEM alloc, load, store and dealloc (sm_100a)") {
  auto k = kernel("k").target(sm_100a);
  auto acc = k.tmem("acc", columns(128));
  unsigned l_al = 0, l_ld = 0, l_st = 0, l_de = 0;
  k.role("e", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {128, 32});
    r.tmem_alloc(acc); l_al = __LINE__;
    r.tmem_load(x, acc.cols(2, 4)); l_ld = __LINE__;
    r.tmem_store(acc.cols(3, 4), x); l_st = __LINE__;
    r.tmem_dealloc(acc); l_de = __LINE__;
  });
  const program& p = k.p;
  check_op(p, 0, op_kind::tmem_alloc, l_al);
  CHECK(p.ops[0].d.kind == operand_kind::tmem);
  check_op(p, 1, op_kind::tmem_load, l_ld);
  CHECK(p.ops[1].a.kind == operand_kind::tmem);
  CHECK(p.ops[1].a.parts == 4);
  check_op(p, 2, op_kind::tmem_store, l_st);
  CHECK(p.ops[2].d.kind == operand_kind::tmem);
  CHECK(p.ops[2].a.kind == operand_kind::reg);
  check_op(p, 3, op_kind::tmem_dealloc, l_de);
  CHECK(p.errors.empty());
}

TEST_CASE("sync: pipeline acquire, wait, release and commit name the pipeline and the slot") {
  fixture f;
  unsigned l_acq = 0, l_wait = 0, l_rel = 0, l_com = 0;
  f.k.role("r", warps(1), [&](role& r) {
    auto s = r.acquire(f.ab); l_acq = __LINE__;
    CHECK(s.pipeline == 0);
    CHECK(s.op == 0);
    r.commit(f.ab, s); l_com = __LINE__;
    auto w = r.wait(f.ab); l_wait = __LINE__;
    CHECK(w.op == 2);
    r.release(f.ab, w); l_rel = __LINE__;
  });
  const program& p = f.p();
  check_op(p, 0, op_kind::pipeline_acquire, l_acq);
  CHECK(p.ops[0].d.kind == operand_kind::pipeline);
  CHECK(p.ops[0].d.index == 0);
  check_op(p, 1, op_kind::pipeline_commit, l_com);
  CHECK(p.ops[1].a.sel == stage_sel::slot);
  CHECK(p.ops[1].a.slot_op == 0);
  check_op(p, 2, op_kind::pipeline_wait, l_wait);
  check_op(p, 3, op_kind::pipeline_release, l_rel);
  CHECK(p.ops[3].d.index == 0);
  CHECK(p.ops[3].a.slot_op == 2);
  CHECK(p.errors.empty());
}

TEST_CASE("sync: explicit mbarrier init, arrive (local and remote), expect_tx, wait, tcgen05 commit") {
  fixture f(sm_100a);
  unsigned l_init = 0, l_arr = 0, l_rem = 0, l_aet = 0, l_et = 0, l_wait = 0, l_tc = 0;
  f.k.role("r", warps(1), [&](role& r) {
    r.init(f.bars[index_expr(1)], 2); l_init = __LINE__;
    r.arrive(f.bar); l_arr = __LINE__;
    r.arrive(f.bar).remote(); l_rem = __LINE__;
    r.arrive_expect_tx(f.bars[r.warp()], 4096); l_aet = __LINE__;
    r.expect_tx(f.bar, 8192); l_et = __LINE__;
    r.wait(f.bar); l_wait = __LINE__;
    r.tcgen05_commit(f.bar); l_tc = __LINE__;
  });
  const program& p = f.p();
  check_op(p, 0, op_kind::mbarrier_init, l_init);
  CHECK(p.ops[0].d.kind == operand_kind::mbarrier);
  CHECK(p.ops[0].d.index == 1);
  CHECK(p.ops[0].d.stage.constant == 1);
  CHECK(p.ops[0].imm[0] == 2);
  check_op(p, 1, op_kind::mbarrier_arrive, l_arr);
  CHECK_FALSE(p.ops[1].has(flag_remote));
  check_op(p, 2, op_kind::mbarrier_arrive, l_rem);
  CHECK(p.ops[2].has(flag_remote));
  check_op(p, 3, op_kind::mbarrier_arrive_expect_tx, l_aet);
  CHECK(p.ops[3].imm[0] == 4096);
  CHECK(p.ops[3].d.stage == var_index(var_kind::warp, 0));
  check_op(p, 4, op_kind::mbarrier_expect_tx, l_et);
  CHECK(p.ops[4].imm[0] == 8192);
  check_op(p, 5, op_kind::mbarrier_wait, l_wait);
  check_op(p, 6, op_kind::tcgen05_commit, l_tc);
  CHECK(p.ops[6].d.index == 0);
  CHECK(p.errors.empty());
}

TEST_CASE("sync: named barrier sync and arrive, fences, cluster arrive/wait/sync") {
  fixture f(sm_100a);
  unsigned l_sync = 0, l_arr = 0, l_fpa = 0, l_fmi = 0, l_tb = 0, l_ta = 0, l_cs = 0;
  f.k.role("r", warps(2), [&](role& r) {
    r.sync(f.nb); l_sync = __LINE__;
    r.arrive(f.nb); l_arr = __LINE__;
    r.fence_proxy_async(); l_fpa = __LINE__;
    r.fence_mbarrier_init(); l_fmi = __LINE__;
    r.tcgen05_fence_before(); l_tb = __LINE__;
    r.tcgen05_fence_after(); l_ta = __LINE__;
    r.cluster_sync(); l_cs = __LINE__;
  });
  const program& p = f.p();
  check_op(p, 0, op_kind::named_barrier_sync, l_sync);
  CHECK(p.ops[0].d.kind == operand_kind::named_barrier);
  CHECK(p.ops[0].d.index == 0);
  check_op(p, 1, op_kind::named_barrier_arrive, l_arr);
  check_op(p, 2, op_kind::fence_proxy_async, l_fpa);
  check_op(p, 3, op_kind::fence_mbarrier_init, l_fmi);
  check_op(p, 4, op_kind::tcgen05_fence_before, l_tb);
  check_op(p, 5, op_kind::tcgen05_fence_after, l_ta);
  check_op(p, 6, op_kind::cluster_arrive, l_cs);  // cluster_sync is an arrive and a wait
  check_op(p, 7, op_kind::cluster_wait, l_cs);
  CHECK(p.errors.empty());
}

TEST_CASE("sync: wgmma fence/commit/wait, cp.async commit/wait, bulk commit/wait(.read)") {
  fixture f;
  unsigned l_wf = 0, l_wc = 0, l_ww = 0, l_cc = 0, l_cw = 0, l_bc = 0, l_bwr = 0, l_bw = 0;
  f.k.role("r", warpgroups(1), [&](role& r) {
    r.wgmma_fence(); l_wf = __LINE__;
    r.wgmma_commit(); l_wc = __LINE__;
    r.wgmma_wait(1); l_ww = __LINE__;
    r.cp_async_commit(); l_cc = __LINE__;
    r.cp_async_wait(2); l_cw = __LINE__;
    r.bulk_commit(); l_bc = __LINE__;
    r.bulk_wait_read(1); l_bwr = __LINE__;
    r.bulk_wait(0); l_bw = __LINE__;
  });
  const program& p = f.p();
  check_op(p, 0, op_kind::wgmma_fence, l_wf);
  check_op(p, 1, op_kind::wgmma_commit, l_wc);
  check_op(p, 2, op_kind::wgmma_wait, l_ww);
  CHECK(p.ops[2].imm[0] == 1);
  check_op(p, 3, op_kind::cp_async_commit, l_cc);
  check_op(p, 4, op_kind::cp_async_wait, l_cw);
  CHECK(p.ops[4].imm[0] == 2);
  check_op(p, 5, op_kind::bulk_commit, l_bc);
  check_op(p, 6, op_kind::bulk_wait, l_bwr);
  CHECK(p.ops[6].has(flag_read_only));
  CHECK(p.ops[6].imm[0] == 1);
  check_op(p, 7, op_kind::bulk_wait, l_bw);
  CHECK_FALSE(p.ops[7].has(flag_read_only));
  CHECK(p.errors.empty());
}

TEST_CASE("index variables: warpgroup, warp and cluster rank inside a role") {
  fixture f;
  f.k.role("r", warpgroups(2), [&](role& r) {
    CHECK(r.warpgroup() == var_index(var_kind::warpgroup, 0));
    CHECK(r.warp() == var_index(var_kind::warp, 0));
    CHECK(r.cluster_rank() == var_index(var_kind::cluster_rank, 0));
    CHECK(r.decl().nm == "r");
    r.tma_store(f.D.tile(r.cluster_rank() * 2 + r.warpgroup(), 0), f.sD.stage(0).rows(r.warpgroup(), 2));
  });
  const auto& c = f.p().tile_refs[0].coords[0];
  CHECK(c.term_count == 2);
  CHECK(c.eval([](const index_term& t) { return t.kind == var_kind::cluster_rank ? 1LL : 1LL; }) == 3);
  CHECK(f.p().errors.empty());
}

TEST_CASE("slots: slot[region] selects the region's stage held by the slot") {
  fixture f;
  f.k.role("r", warps(1), [&](role& r) {
    auto s = r.acquire(f.ab);
    const auto a = s[f.sA];
    CHECK(a.o.sel == stage_sel::slot);
    CHECK(a.o.slot_op == s.op);
    CHECK(a.o.index == f.sA.o.index);
    const auto staged = f.sD.stage(r.warp() + 1);
    CHECK(staged.o.sel == stage_sel::expr);
    CHECK(staged.o.stage == var_index(var_kind::warp, 0) + 1);
    (void)s[f.sD];  // sD is not carried by 'ab'
  });
  CHECK(has_error(f.p(), "ir.slot-region", 0));
}
