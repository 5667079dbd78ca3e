// Unit tests for the kernel-level builder (cake/ir/kernel_builder.hpp): parameters, dims, the parallel
// iteration space, resources, roles and launch settings are recorded in the Program exactly as
// declared, with the caller's line.
#include <doctest/doctest.h>

#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {
void empty_body(role&) {}
}  // namespace

TEST_CASE("kernel: name, target and location") {
  auto k = kernel("gemm"); const unsigned line = __LINE__;
  CHECK(k.p.kernel_name == "gemm");
  CHECK(k.p.target == sm_90a);  // the default target
  CHECK(k.p.loc.line == line);
  k.target(sm_100a);
  CHECK(k.p.target == sm_100a);
  CHECK(k.p.arch().name == "sm_100a");
}

TEST_CASE("kernel: launch settings (cluster, persistence and rasterization, PDL, manual barrier init)") {
  auto k = kernel("k").target(sm_90a).cluster(2, 1).persistent(raster::along_n(4)).programmatic_launch().manual_barrier_init();
  CHECK(k.p.launch.cluster[0] == 2);
  CHECK(k.p.launch.cluster[1] == 1);
  CHECK(k.p.launch.cluster[2] == 1);
  CHECK(k.p.launch.cluster_size() == 2);
  CHECK(k.p.launch.persistent);
  CHECK(k.p.launch.rast.order == raster_order::along_n);
  CHECK(k.p.launch.rast.group == 4);
  CHECK(k.p.launch.pdl);
  CHECK(k.p.launch.manual_barrier_init);
  auto d = kernel("d");
  CHECK_FALSE(d.p.launch.persistent);
  CHECK(d.p.launch.cluster_size() == 1);
  d.persistent();
  CHECK(d.p.launch.rast.order == raster_order::along_m);
  CHECK(d.p.launch.rast.group == 8);  // the documented default
}

TEST_CASE("input/output: tensors share dims by name and record dtype, rank and direction") {
  auto k = kernel("k");
  auto A = k.input<bf16>("A", dims("M", "K")); const unsigned line = __LINE__;
  auto B = k.input<f16>("B", dims("N", "K"));
  auto D = k.output<f32>("D", dims("M", "N"));
  REQUIRE(k.p.tensors.size() == 3);
  REQUIRE(k.p.dims.size() == 3);  // M, K, N: K and M are shared
  CHECK(k.p.dims[0].nm == "M");
  CHECK(k.p.dims[1].nm == "K");
  CHECK(k.p.dims[2].nm == "N");
  CHECK(A.index == 0);
  CHECK(B.index == 1);
  CHECK(D.index == 2);
  CHECK(A.rank == 2);
  const auto& a = k.p.tensors[0];
  CHECK(a.nm == "A");
  CHECK(a.dt == dtype::bf16);
  CHECK_FALSE(a.output);
  CHECK(a.dims[0] == 0);
  CHECK(a.dims[1] == 1);
  CHECK(a.loc.line == line);
  CHECK(k.p.tensors[1].dt == dtype::f16);
  CHECK(k.p.tensors[1].dims[1] == 1);  // B's K is A's K
  CHECK(k.p.tensors[2].output);
  CHECK(k.p.tensors[2].dims[0] == 0);
  CHECK(k.p.tensors[2].dims[1] == 2);
  CHECK(k.p.find_dim("N") == 2);
  CHECK(k.p.find_dim("Q") == -1);
  CHECK(k.p.errors.empty());
}

TEST_CASE("dims: dynamic by default, specialized with spec(...), a dim keeps one mode") {
  auto k = kernel("k");
  k.input<bf16>("X", dims(spec("H"), dyn("S"), "D"));
  REQUIRE(k.p.dims.size() == 3);
  CHECK(k.p.dims[0].mode == dim_mode::specialized);
  CHECK(k.p.dims[1].mode == dim_mode::dynamic);
  CHECK(k.p.dims[2].mode == dim_mode::dynamic);
  CHECK(k.p.tensors[0].rank == 3);
  k.input<bf16>("Y", dims("H"));  // H was specialized in X
  CHECK(has_error(k.p, "ir.dim-mode-conflict", 0));
}

TEST_CASE("dims: rank 1..4, more dims are an error, not a silent cut") {
  auto k = kernel("k");
  k.input<bf16>("X", dims("A", "B", "C", "D"));
  CHECK(k.p.tensors[0].rank == 4);
  CHECK(k.p.errors.empty());
  k.input<bf16>("Y", dims("A", "B", "C", "D", "E"));
  CHECK(has_error(k.p, "ir.tensor-rank", 0));
  k.input<bf16>("Z", dims());
  CHECK(count_errors(k.p, "ir.tensor-rank") == 2);
}

TEST_CASE("param: scalar parameters") {
  auto k = kernel("k");
  auto alpha = k.param<f32>("alpha"); const unsigned line = __LINE__;
  auto n = k.param<i32>("n");
  CHECK(alpha.index == 0);
  CHECK(n.index == 1);
  CHECK(k.p.scalars[0].nm == "alpha");
  CHECK(k.p.scalars[0].dt == dtype::f32);
  CHECK(k.p.scalars[0].loc.line == line);
  CHECK(k.p.scalars[1].dt == dtype::i32);
}

TEST_CASE("dims: k.dims declares dims by label, handles, labels and tensors name the same dim") {
  auto k = kernel("k");
  auto [M, N, K] = k.dims("M", "N", "K"); const unsigned line = __LINE__;
  REQUIRE(k.p.dims.size() == 3);
  CHECK(M.index == 0);
  CHECK(N.index == 1);
  CHECK(K.index == 2);
  CHECK(M.nm == "M");
  CHECK(M.mode == dim_mode::dynamic);
  CHECK(K.extent() == var_index(var_kind::dim, 2));  // the run-time extent, an index expression
  k.input<bf16>("A", dims(M, K));
  k.input<bf16>("B", dims("N", K));  // a label and a handle of the same kernel name one dim
  CHECK(k.p.dims.size() == 3);
  CHECK(k.p.tensors[1].dims[0] == N.index);
  CHECK(k.p.tensors[1].dims[1] == K.index);
  CHECK(k.dim("K").index == K.index);  // declaring a label again returns the same dim
  auto D = k.dim("D", dim_mode::specialized);
  CHECK(D.index == 3);
  CHECK(k.p.dims[3].mode == dim_mode::specialized);
  k.dim("D");  // dynamic here, specialized before
  CHECK(has_error(k.p, "ir.dim-mode-conflict", 3));
  CHECK(first_error(k.p, "ir.dim-mode-conflict")->loc.line > line);
  auto [S, H] = k.dims("S", spec("H"));
  CHECK(S.mode == dim_mode::dynamic);
  CHECK(H.mode == dim_mode::specialized);
  CHECK(k.p.dims.size() == 6);
}

TEST_CASE("parallel: tiles, each and split axes are recorded in order with their block sizes") {
  auto k = kernel("k");
  auto [M, N, K] = k.dims("M", "N", "K");
  k.input<bf16>("A", dims(M, K));
  auto H = k.dim("H");
  const auto sp = k.parallel(tiles(M, 128), tiles("N", 256), each(H), split(4)); const unsigned line = __LINE__;
  CHECK(sp.extent(0) == 128);
  CHECK(sp.extent(1) == 256);
  CHECK(sp.extent(2) == 1);
  CHECK(sp.extent(3) == 4);
  REQUIRE(k.p.has_space());
  CHECK(k.p.space.count == 4);
  CHECK(k.p.space.axes[0].kind == axis_kind::tiles);
  CHECK(k.p.space.axes[0].dim == M.index);
  CHECK(k.p.space.axes[0].extent == 128);
  CHECK(k.p.space.axes[1].dim == N.index);  // given by label
  CHECK(k.p.space.axes[2].kind == axis_kind::each);
  CHECK(k.p.space.axes[2].dim == H.index);
  CHECK(k.p.space.axes[2].extent == 1);
  CHECK(k.p.space.axes[3].kind == axis_kind::split);
  CHECK(k.p.space.axes[3].extent == 4);
  CHECK(k.p.axis_of_dim(N.index) == 1);
  CHECK(k.p.axis_of_dim(H.index) == 2);
  CHECK(k.p.axis_of_dim(K.index) == -1);  // K is not walked by the space
  CHECK(k.p.space.loc.line == line);
  CHECK(k.p.errors.empty());
  CHECK_FALSE(kernel("none").p.has_space());
}

TEST_CASE("parallel: one to five axes, nothing is inferred from dim labels") {
  auto k = kernel("k");
  auto [X, Y] = k.dims("X", "Y");
  k.parallel(tiles(Y, 64));  // one axis, over a dim that is not called M
  CHECK(k.p.space.count == 1);
  CHECK(k.p.space.axes[0].dim == Y.index);
  CHECK(k.p.errors.empty());
  auto j = kernel("j");
  auto [A, B, C, D, E] = j.dims("A", "B", "C", "D", "E");
  const auto five = j.parallel(tiles(A, 8), tiles(B, 16), each(C), each(D), split(2));
  CHECK(j.p.space.count == 5);
  CHECK(five.extent(4) == 2);
  CHECK(j.p.space.axes[4].kind == axis_kind::split);
  CHECK(j.p.errors.empty());
  (void)X, (void)E;
}

TEST_CASE("parallel: misuse (six axes, a second space, an unknown label, a block size below 1)") {
  auto k = kernel("k");
  auto [A, B, C] = k.dims("A", "B", "C");
  k.parallel(tiles(A, 8), each(B), each(C), split(2), split(2), split(2));
  CHECK(has_error(k.p, "ir.space-axes", 6));
  CHECK(k.p.space.count == 5);  // the sixth is not written past the space
  auto j = kernel("j");
  auto [M, N] = j.dims("M", "N");
  j.parallel(tiles(M, 128));
  j.parallel(tiles(N, 128));
  CHECK(has_error(j.p, "ir.space-redeclared", 1));
  auto u = kernel("u");
  u.dims("M");
  u.parallel(tiles("Q", 64)); const unsigned line = __LINE__;
  REQUIRE(first_error(u.p, "ir.unknown-dim") != nullptr);
  CHECK(first_error(u.p, "ir.unknown-dim")->loc.line == line);
  auto e = kernel("e");
  auto [P, Q] = e.dims("P", "Q");
  e.parallel(tiles(P, 0), split(-2));
  CHECK(has_error(e.p, "ir.tile-extent", 0));
  CHECK(has_error(e.p, "ir.tile-extent", -2));
  (void)B, (void)Q;
}

TEST_CASE("smem: dtype, shape, swizzle, major-ness and copies, in any option order") {
  auto k = kernel("k");
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128); const unsigned line = __LINE__;
  auto sB = k.smem<f16>("sB", {64, 32}, major::mn, copies(3), swizzle::b64);
  auto sC = k.smem<f32>("sC", {16, 16});
  CHECK(sA.o.kind == operand_kind::smem);
  CHECK(sA.o.index == 0);
  CHECK(sB.o.index == 1);
  CHECK(sC.o.index == 2);
  const auto& a = k.p.smem[0];
  CHECK(a.nm == "sA");
  CHECK(a.dt == dtype::bf16);
  CHECK(a.rows == 128);
  CHECK(a.cols == 64);
  CHECK(a.swz == swizzle::b128);
  CHECK(a.mj == major::k);
  CHECK_FALSE(a.mj_declared);  // major-ness is derived from the MMAs unless declared
  CHECK(a.stages == 1);
  CHECK(a.pipeline == no_index);
  CHECK(a.loc.line == line);
  CHECK(a.bytes_per_stage() == 16384);
  CHECK(a.inner_bytes() == 128);
  const auto& b = k.p.smem[1];
  CHECK(b.mj == major::mn);
  CHECK(b.mj_declared);
  CHECK(b.swz == swizzle::b64);
  CHECK(b.stages == 3);
  CHECK(b.bytes() == 3 * 64 * 32 * 2);
  CHECK(k.p.smem[2].swz == swizzle::none);
  CHECK(k.p.errors.empty());
}

TEST_CASE("smem: the tile's inner extent must fit the swizzle span and be a multiple of 16 bytes") {
  auto k = kernel("k");
  k.smem<bf16>("a", {128, 128}, swizzle::b128);  // 256 B rows
  CHECK(has_error(k.p, "representation.swizzle-span", 256));
  k.smem<bf16>("b", {128, 64}, swizzle::b64);  // 128 B rows
  CHECK(has_error(k.p, "representation.swizzle-span", 128));
  k.smem<e4m3>("c", {128, 64}, swizzle::b32);
  CHECK(has_error(k.p, "representation.swizzle-span", 64));
  k.smem<bf16>("d", {128, 12});  // 24 B rows
  CHECK(has_error(k.p, "representation.inner-bytes", 24));
  k.smem<bf16>("e", {0, 64});
  CHECK(has_error(k.p, "ir.smem-shape", 0));
  k.smem<bf16>("f", {64, 64}, copies(33));
  CHECK(has_error(k.p, "ir.stages", 33));
  auto ok = kernel("ok");
  ok.smem<e4m3>("a", {128, 128}, swizzle::b128);  // 128 B of fp8 fits the span exactly
  ok.smem<bf16>("b", {64, 32}, swizzle::b64);
  ok.smem<f32>("c", {64, 8}, swizzle::b32);
  CHECK(ok.p.errors.empty());
}

TEST_CASE("tmem: columns per stage, 128 lanes, sm_100a only") {
  auto k = kernel("k").target(sm_100a);
  auto acc = k.tmem("acc", columns(256)); const unsigned line = __LINE__;
  CHECK(acc.o.kind == operand_kind::tmem);
  CHECK(acc.o.index == 0);
  CHECK(k.p.tmem[0].columns == 256);
  CHECK(k.p.tmem[0].lanes == 128);
  CHECK(k.p.tmem[0].dt == dtype::f32);
  CHECK(k.p.tmem[0].loc.line == line);
  CHECK(k.p.errors.empty());
  k.tmem("big", columns(513));
  CHECK(has_error(k.p, "memory.tmem-columns", 513));
  auto h = kernel("h").target(sm_90a);
  h.tmem("acc", columns(128));
  CHECK(has_error(h.p, "instruction.tmem-off-sm100a", 128));
}

TEST_CASE("mbarrier: declared or derived arrivals, arrays of barriers") {
  auto k = kernel("k");
  auto a = k.mbarrier("a"); const unsigned line = __LINE__;
  auto b = k.mbarrier("b", arrivals(3), 4);
  CHECK(a.index == 0);
  CHECK(b.index == 1);
  CHECK(k.p.mbarriers[0].arrivals == 0);  // derived
  CHECK(k.p.mbarriers[0].count == 1);
  CHECK(k.p.mbarriers[0].loc.line == line);
  CHECK(k.p.mbarriers[1].arrivals == 3);
  CHECK(k.p.mbarriers[1].count == 4);
  const auto e = b[index_expr(2)];
  CHECK(e.index == 1);
  CHECK(e.elem.constant == 2);
  k.mbarrier("c", arrivals(1 << 20));
  CHECK(has_error(k.p, "sync.arrival-count-range", 1 << 20));
  k.mbarrier("d", arrivals(1), 33);
  CHECK(has_error(k.p, "ir.barrier-array", 33));
}

TEST_CASE("named_barrier: thread count declared, derived, or one barrier per unit") {
  auto k = kernel("k");
  auto a = k.named_barrier("a"); const unsigned line = __LINE__;
  auto b = k.named_barrier("b", threads(256));
  auto c = k.named_barrier("c", per_unit);
  CHECK(a.index == 0);
  CHECK(b.index == 1);
  CHECK(c.index == 2);
  CHECK(k.p.named_barriers[0].threads == 0);
  CHECK_FALSE(k.p.named_barriers[0].per_unit);
  CHECK(k.p.named_barriers[0].loc.line == line);
  CHECK(k.p.named_barriers[1].threads == 256);
  CHECK(k.p.named_barriers[2].per_unit);
  k.named_barrier("d", threads(100));
  CHECK(has_error(k.p, "sync.named-barrier-count", 100));
  k.named_barrier("e", threads(2048));
  CHECK(has_error(k.p, "sync.named-barrier-count", 2048));
}

TEST_CASE("pipeline: carries regions, which take its stage count and record their pipeline") {
  auto k = kernel("k").target(sm_100a);
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {256, 64}, swizzle::b128);
  auto acc = k.tmem("acc", columns(128));
  auto ab = k.pipeline("ab", stages(4)).carries(sA, sB); const unsigned line = __LINE__;
  auto ap = k.pipeline("accp", stages(2)).carries(acc);
  CHECK(ab.index == 0);
  CHECK(ap.index == 1);
  const auto& d = k.p.pipelines[0];
  CHECK(d.nm == "ab");
  CHECK(d.stages == 4);
  CHECK(d.carried_count == 2);
  CHECK(d.carried[0] == 0);
  CHECK(d.carried[1] == 1);
  CHECK_FALSE(d.carried_tmem[0]);
  CHECK(d.loc.line == line);
  CHECK(k.p.smem[0].stages == 4);
  CHECK(k.p.smem[1].stages == 4);
  CHECK(k.p.smem[0].pipeline == 0);
  CHECK(k.p.pipelines[1].carried_tmem[0]);
  CHECK(k.p.tmem[0].stages == 2);
  CHECK(k.p.tmem[0].pipeline == 1);
  CHECK(k.p.pipeline_stage_bytes(0) == 16384 + 32768);
  CHECK(k.p.pipeline_stage_bytes(1) == 0);  // TMEM stages hold no smem
  CHECK(k.p.errors.empty());
}

TEST_CASE("pipeline: misuse (a region in two pipelines, more than 4 regions, conflicting copies, stages)") {
  auto k = kernel("k");
  auto r0 = k.smem<bf16>("r0", {64, 64});
  auto r1 = k.smem<bf16>("r1", {64, 64});
  auto r2 = k.smem<bf16>("r2", {64, 64});
  auto r3 = k.smem<bf16>("r3", {64, 64});
  auto r4 = k.smem<bf16>("r4", {64, 64});
  auto r5 = k.smem<bf16>("r5", {64, 64}, copies(2));
  k.pipeline("p", stages(2)).carries(r0, r1, r2, r3, r4);
  CHECK(has_error(k.p, "ir.capacity", 4));
  k.pipeline("q", stages(2)).carries(r0);
  CHECK(has_error(k.p, "ir.region-in-two-pipelines", 0));
  k.pipeline("r", stages(3)).carries(r5);
  CHECK(has_error(k.p, "ir.carried-copies", 2));
  k.pipeline("s", stages(17));
  CHECK(has_error(k.p, "ir.stages", 17));
  auto j = kernel("j");
  auto same = j.smem<bf16>("same", {64, 64}, copies(3));
  j.pipeline("p", stages(3)).carries(same);  // copies(n) equal to the stages is consistent
  CHECK(j.p.errors.empty());
}

TEST_CASE("role: unit, count, register budget, location and thread count") {
  auto k = kernel("k");
  k.role("producer", warpgroups(1), regs(40), empty_body); const unsigned line = __LINE__;
  k.role("consumer", warpgroups(2), regs(232), empty_body);
  k.role("helper", warps(3), empty_body);
  REQUIRE(k.p.roles.size() == 3);
  const auto& r = k.p.roles[0];
  CHECK(r.nm == "producer");
  CHECK(r.unit == role_unit::warpgroup);
  CHECK(r.count == 1);
  CHECK(r.regs == 40);
  CHECK(r.loc.line == line);
  CHECK(r.warps() == 4);
  CHECK(r.threads() == 128);
  CHECK(k.p.roles[1].threads() == 256);
  CHECK(k.p.roles[2].unit == role_unit::warp);
  CHECK(k.p.roles[2].regs == 0);
  CHECK(k.p.roles[2].threads() == 96);
  CHECK(k.p.block_threads() == 480);
  CHECK(k.p.errors.empty());
}

TEST_CASE("role: the body receives a builder bound to that role, roles do not nest") {
  auto k = kernel("k");
  int seen = -1;
  k.role("a", warps(1), empty_body);
  k.role("b", warps(2), [&](role& r) {
    seen = r.decl().count;
    k.role("inner", warps(1), empty_body);
  });
  CHECK(seen == 2);
  CHECK(has_error(k.p, "ir.nested-role", 0));
  CHECK(k.p.roles.size() == 2);
  CHECK(k.role_ == -1);  // the builder is back at kernel level
}

TEST_CASE("role: size, register budget and threads per block are checked") {
  auto k = kernel("k");
  k.role("zero", warps(0), empty_body);
  CHECK(has_error(k.p, "ir.role-size", 0));
  k.role("odd", warpgroups(1), regs(44), empty_body);
  CHECK(has_error(k.p, "resource.setmaxnreg-value", 44));
  k.role("high", warpgroups(1), regs(264), empty_body);
  CHECK(has_error(k.p, "resource.setmaxnreg-value", 264));
  k.role("many", warpgroups(7), empty_body);  // 128 * 9 = 1152 threads in total
  CHECK(has_error(k.p, "resource.threads-per-block", 1152));
}

TEST_CASE("names: unique within their kind, the same name in two kinds is fine") {
  auto k = kernel("k");
  k.smem<bf16>("x", {64, 64});
  k.mbarrier("x");  // another kind
  CHECK(k.p.errors.empty());
  k.smem<bf16>("x", {64, 64});
  CHECK(has_error(k.p, "ir.duplicate-name", 0));
  k.role("r", warps(1), empty_body);
  k.role("r", warps(1), empty_body);
  CHECK(has_error(k.p, "ir.duplicate-name", 0));
  CHECK(count_errors(k.p, "ir.duplicate-name") == 2);
}

TEST_CASE("build: returns the Program, a kernel without roles is an error") {
  auto k = kernel("k");
  const program p = k.build(); const unsigned line = __LINE__;
  CHECK(has_error(p, "ir.no-roles", 0));
  REQUIRE(first_error(p, "ir.no-roles") != nullptr);
  CHECK(first_error(p, "ir.no-roles")->loc.line == line);
  auto j = kernel("j");
  j.role("r", warps(1), empty_body);
  CHECK(j.build().errors.empty());
}

TEST_CASE("build: a Program is a plain constexpr value") {
  constexpr program p = [] {
    auto k = kernel("tiny").target(sm_80);
    auto s = k.smem<f16>("s", {16, 16});
    k.role("r", warps(1), [&](role& r) { r.cp_async_commit(); (void)s; });
    return k.build();
  }();
  static_assert(p.ops.size() == 1 && p.smem.size() == 1 && p.errors.empty());
  CHECK(p.kernel_name == "tiny");
  CHECK(p.ops[0].kind == op_kind::cp_async_commit);
}
