// Unit tests for the plan derivations that register compute, alternating walks, turns and cluster sums
// add: the dims register tiles hold (plan/dims.hpp), barrier counts per point of an alternating walk and
// the ready/done barriers of a cluster sum (plan/barriers.hpp), the scratch of cross-warp reductions and
// cluster sums (plan/smem_plan.hpp), and the named barriers of reductions and turns
// (plan/named_barriers.hpp).
#include <doctest/doctest.h>

#include "../../kernels/gemm/sm90_bf16.hpp"
#include "../../kernels/gemm/sm90_splitk.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;
using plan::barrier_origin;

namespace {

int reg_index(const program& p, std::string_view name) {
  for (std::size_t i = 0; i < p.regs.size(); ++i)
    if (p.regs[i].nm == name) return static_cast<int>(i);
  FAIL("no register tile named " << std::string(name));
  return -1;
}
int role_index(const program& p, std::string_view name) {
  for (std::size_t i = 0; i < p.roles.size(); ++i)
    if (p.roles[i].nm == name) return static_cast<int>(i);
  FAIL("no role named " << std::string(name));
  return -1;
}
bool holds(const plan::dim_pair& d, const dim_ref& rows, const dim_ref& cols) { return d.rows == rows.index && d.cols == cols.index; }

}  // namespace

// ---- dims of register tiles --------------------------------------------------------------------------

TEST_CASE("plan dims: register tiles loaded from tensors hold the tile's dims, conversions keep them") {
  auto k = kernel("k").target(sm_90a);
  auto [S, H, D] = k.dims("S", "H", "D");
  auto X = k.input<bf16>("X", dims(S, H, D));
  auto V = k.input<f32>("v", dims(D));
  auto sx = k.smem<bf16>("sx", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  k.role("r", warpgroups(1), [&](role& r) {
    auto a = r.fragment<bf16>("a", {64, 64});
    auto b = r.fragment<bf16>("b", {64, 64});
    auto c = r.fragment<bf16>("c", {64, 64});
    auto v = r.col_vector<f32>("v", 64);
    r.load(a, X.tile(0, 1, 0));             // rows over H (the second-to-last), columns over D
    r.load(b, X.tile(0, 1, 0).rows_at(0));  // rows over S
    r.tma_load(sx, X.tile(0, 0, 0).rows_at(0), bar);
    r.wait(bar);
    r.load(c, sx);                          // the smem region's dims (S, D)
    auto f = r.convert<f32>(b);
    r.load(v, V.tile(0));
    (void)f;
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto Dp = plan::plan_dims(p);
  CHECK(holds(Dp.regs[reg_index(p, "a")], H, D));
  CHECK(holds(Dp.regs[reg_index(p, "b")], S, D));
  CHECK(holds(Dp.regs[reg_index(p, "c")], S, D));
  CHECK(holds(Dp.regs[reg_index(p, "b.f32")], S, D));
  CHECK_FALSE(Dp.regs[reg_index(p, "v")].known());  // a vector holds one dim only
}

TEST_CASE("plan dims: a register A operand converted from an accumulator contracts the dim its columns hold") {
  auto k = kernel("pv").target(sm_90a);
  auto [Sq, Sk, Dh] = k.dims("Sq", "Sk", "D");
  auto Q = k.input<bf16>("Q", dims(Sq, Dh));
  auto Kt = k.input<bf16>("K", dims(Sk, Dh));
  auto V = k.input<bf16>("V", dims(Sk, Dh));
  auto sQ = k.smem<bf16>("sQ", {64, 64}, swizzle::b128);
  auto sK = k.smem<bf16>("sK", {64, 64}, swizzle::b128);
  auto sV = k.smem<bf16>("sV", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  int pv = -1;
  k.role("r", warpgroups(1), [&](role& r) {
    auto s = r.accumulator<f32>("s", {64, 64});
    auto o = r.accumulator<f32>("o", {64, 64});
    r.tma_load(sQ, Q.tile(0, 0), bar);
    r.tma_load(sK, Kt.tile(0, 0), bar);
    r.tma_load(sV, V.tile(0, 0), bar);
    r.wait(bar);
    r.wgmma(s, sQ, sK).overwrite();
    r.set(s, exp2(s));
    pv = r.wgmma(o, r.convert<bf16>(s), sV).overwrite().id;
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto D = plan::plan_dims(p);
  CHECK(holds(D.regs[reg_index(p, "s")], Sq, Sk));
  CHECK(holds(D.regs[reg_index(p, "s.bf16")], Sq, Sk));
  CHECK(D.mma[pv].status == plan::contraction_status::ok);
  CHECK(D.mma[pv].reduce == Sk.index);
  CHECK(D.mma[pv].b == major::mn);  // V (Sk, D): its rows are contracted
  CHECK(holds(D.regs[reg_index(p, "o")], Sq, Dh));
}

// A tile written by r.set takes the dims of a leaf of its own shape (an r.set's sources are the leaves of
// its expression), so O = P V with P computed by r.set finds V's contracted dim and takes it as MN-major.
TEST_CASE("plan dims: a tile written by r.set from a full tile keeps that tile's dims") {
  auto k = kernel("pv2").target(sm_90a);
  auto [Sq, Sk, Dh] = k.dims("Sq", "Sk", "D");
  auto Q = k.input<bf16>("Q", dims(Sq, Dh));
  auto Kt = k.input<bf16>("K", dims(Sk, Dh));
  auto V = k.input<bf16>("V", dims(Sk, Dh));
  auto sQ = k.smem<bf16>("sQ", {64, 64}, swizzle::b128);
  auto sK = k.smem<bf16>("sK", {64, 64}, swizzle::b128);
  auto sV = k.smem<bf16>("sV", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  int pv = -1;
  k.role("r", warpgroups(1), [&](role& r) {
    auto s = r.accumulator<f32>("s", {64, 64});
    auto o = r.accumulator<f32>("o", {64, 64});
    auto pr = r.fragment<bf16>("p", {64, 64});
    r.tma_load(sQ, Q.tile(0, 0), bar);
    r.tma_load(sK, Kt.tile(0, 0), bar);
    r.tma_load(sV, V.tile(0, 0), bar);
    r.wait(bar);
    r.wgmma(s, sQ, sK).overwrite();
    r.set(pr, exp2(s));  // P = exp2(S), written straight into a bf16 tile
    pv = r.wgmma(o, pr, sV).overwrite().id;
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto D = plan::plan_dims(p);
  CHECK(holds(D.regs[reg_index(p, "p")], Sq, Sk));
  CHECK(D.mma[pv].reduce == Sk.index);
  CHECK(D.mma[pv].b == major::mn);
}

// ---- barriers: alternating walks and cluster sums ---------------------------------------------------------

TEST_CASE("barrier plan: in an alternating walk one unit releases each point's stages (ping-pong GEMM)") {
  kernels::gemm_sm90_config c;
  c.bm = 128, c.bn = 128, c.pingpong = true;
  const program pp = kernels::gemm_bf16_sm90(c);
  c.pingpong = false;
  const program coop = kernels::gemm_bf16_sm90(c);
  REQUIRE(pp.errors.empty());
  REQUIRE(coop.errors.empty());
  const auto B = plan::plan_barriers(pp);
  const auto Bc = plan::plan_barriers(coop);
  CHECK(B.pipelines[0].full_arrivals == 1);   // the producer warpgroup
  CHECK(B.pipelines[0].empty_arrivals == 1 * 2);  // one consumer warpgroup per point x the 2 CTAs the multicast writes
  CHECK(Bc.pipelines[0].empty_arrivals == 2 * 2);
  CHECK(B.pipelines[0].tx_bytes == Bc.pipelines[0].tx_bytes);
  const int rel = find_op(pp, op_kind::pipeline_release);
  const int acq = find_op(pp, op_kind::pipeline_acquire);
  REQUIRE(rel >= 0);
  CHECK(plan::units_per_point(pp, rel) == 1);
  CHECK(plan::units_per_point(pp, acq) == 1);  // the producer has one unit anyway
  CHECK(plan::units_per_point(coop, find_op(coop, op_kind::pipeline_release)) == 2);
  // Every stage's barriers carry those counts.
  for (int s = 0; s < c.stages; ++s) CHECK(B.objects[B.pipelines[0].empty_base + s].arrivals == 2);
}

TEST_CASE("barrier plan: an alternating walk counts its units once for commits and releases of every unit") {
  auto k = kernel("alt").target(sm_90a);
  auto [M, K] = k.dims("M", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto sp = k.parallel(tiles(M, 64));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA);
  k.role("load", warps(2), [&](role& r) {
    r.for_each(alternating(sp), [&](auto m) {
      r.loop(tiles(K, 64), [&](auto kt) { r.tma_load(r.acquire(ab)[sA], A.tile(m, kt)); });
    });
  });
  k.role("use", warpgroups(3), [&](role& r) {
    r.for_each(sp, [&](auto) {
      r.loop(tiles(K, 64), [&](auto) { r.release(ab, r.wait(ab)); });
    });
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto B = plan::plan_barriers(p);
  CHECK(B.pipelines[0].full_arrivals == 1);   // one of the 2 producer warps per point
  CHECK(B.pipelines[0].empty_arrivals == 3);  // all 3 consumer warpgroups per point
  CHECK(B.pipelines[0].tx_bytes == 64 * 64 * 2);
}

TEST_CASE("barrier plan: each cluster sum gets a 'ready' and a 'done' barrier, one arrival per unit of every CTA") {
  for (int splits : {2, 4}) {
    kernels::gemm_splitk_config c;
    c.splits = splits;
    const program p = kernels::gemm_splitk_sm90(c);
    REQUIRE(p.errors.empty());
    const auto B = plan::plan_barriers(p);
    const auto L = plan::plan_smem(p);
    const int sum = find_op(p, op_kind::cluster_reduce);
    REQUIRE(sum >= 0);
    INFO("splits " << splits);
    // pipeline barriers first, then the cluster sum's two
    CHECK(B.count == 2 * c.stages + 2);
    CHECK(B.cluster_ready[sum] == 2 * c.stages);
    const auto& ready = B.objects[B.cluster_ready[sum]];
    const auto& done = B.objects[B.cluster_ready[sum] + 1];
    CHECK(ready.origin == barrier_origin::cluster_ready);
    CHECK(done.origin == barrier_origin::cluster_done);
    CHECK(ready.source == sum);
    CHECK(ready.arrivals == 1 * splits);  // one warpgroup per CTA, every CTA of the cluster
    CHECK(done.arrivals == 1 * splits);
    CHECK(ready.derived);
    CHECK(ready.offset == L.barrier_offset + 8 * B.cluster_ready[sum]);
    CHECK(done.offset == ready.offset + 8);
    for (std::size_t i = 0; i < p.ops.size(); ++i)
      if (static_cast<int>(i) != sum) CHECK(B.cluster_ready[i] == -1);
    CHECK(plan::mbarrier_objects(p) == B.count);
    CHECK(L.barrier_count == B.count);
  }
}

TEST_CASE("barrier plan: a cluster sum of a role of several units, inside an alternating walk") {
  auto build = [](bool alternate) {
    auto k = kernel("cs").target(sm_90a).cluster(2);
    auto sp = k.parallel(tiles(k.dim("M"), 64));
    k.role("r", warpgroups(2), [&](role& r) {
      auto x = r.fragment<f32>("x", {64, 64});
      auto body = [&](auto) {
        r.fill(x, 1.0f);
        r.cluster_sum(x);
      };
      if (alternate) r.for_each(alternating(sp), body);
      else r.for_each(sp, body);
    });
    return k.build();
  };
  const program all = build(false), alt = build(true);
  REQUIRE(all.errors.empty());
  REQUIRE(alt.errors.empty());
  const auto Ba = plan::plan_barriers(all), Bt = plan::plan_barriers(alt);
  const int s = find_op(all, op_kind::cluster_reduce);
  CHECK(Ba.objects[Ba.cluster_ready[s]].arrivals == 2 * 2);
  CHECK(Bt.objects[Bt.cluster_ready[s]].arrivals == 1 * 2);
}

// ---- shared memory: scratch ----------------------------------------------------------------------------

TEST_CASE("smem plan: a role's scratch for cross-warp reductions and cluster sums follows the barriers, 16-byte aligned") {
  {
    constexpr program p = kernels::gemm_splitk_sm90();
    constexpr auto L = plan::plan_smem(p);
    constexpr auto F = plan::plan_fragments(p);
    const int math = role_index(p, "math");
    CHECK(F.scratch_bytes[math] == 128 * 64 * 4);
    CHECK(L.scratch_offset[math] == plan::align_up(L.barrier_offset + 8 * L.barrier_count, 16));
    CHECK(L.scratch_offset[role_index(p, "load")] == -1);
    CHECK(L.total == L.scratch_offset[math] + F.scratch_bytes[math]);
    CHECK(L.fits());
  }
  {
    // Two roles with cross-warp reductions: one scratch each, in role order.
    auto k = kernel("two").target(sm_90a);
    auto X = k.input<bf16>("X", dims("R", "C"));
    for (const char* nm : {"a", "b"})
      k.role(nm, warpgroups(nm[0] == 'a' ? 1 : 2), [&](role& r) {
        auto x = r.fragment<bf16>("x", {2, 2048});
        auto m = r.row_vector<f32>(nm[0] == 'a' ? "m" : "n", 2);
        r.load(x, X.tile(0, 0));
        r.row_max(m, x);
      });
    const program p = k.build();
    REQUIRE(p.errors.empty());
    const auto L = plan::plan_smem(p);
    const auto F = plan::plan_fragments(p);
    CHECK(F.scratch_bytes[0] == 1 * 4 * 1 * 8);
    CHECK(F.scratch_bytes[1] == 2 * 4 * 1 * 8);
    CHECK(L.barrier_count == 0);
    CHECK(L.scratch_offset[0] == 0);
    CHECK(L.scratch_offset[1] == 32);
    CHECK(L.total == 32 + 64);
  }
  {
    // Rows inside a warp: no scratch.
    auto k = kernel("none").target(sm_90a);
    auto X = k.input<bf16>("X", dims("R", "C"));
    k.role("r", warps(4), [&](role& r) {
      auto x = r.fragment<bf16>("x", {4, 1024});
      auto m = r.row_vector<f32>("m", 4);
      r.load(x, X.tile(0, 0));
      r.row_sum(m, x);
    });
    const auto L = plan::plan_smem(k.build());
    CHECK(L.scratch_offset[0] == -1);
    CHECK(L.total == 0);
  }
}

// ---- named barriers: reductions and turns ------------------------------------------------------------------

TEST_CASE("named barrier plan: a role with cross-warp reductions gets one derived barrier per unit, after the declared ones") {
  auto k = kernel("nb").target(sm_90a);
  auto X = k.input<bf16>("X", dims("R", "C"));
  auto epi = k.named_barrier("epi", per_unit);
  auto all = k.named_barrier("all");
  k.role("a", warps(2), [&](role& r) {
    r.sync(all);
  });
  k.role("b", warpgroups(2), [&](role& r) {
    auto x = r.fragment<bf16>("x", {1, 4096});
    auto m = r.row_vector<f32>("m", 1);
    r.load(x, X.tile(0, 0));
    r.row_max(m, x);
    r.sync(epi);
    r.sync(all);
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto N = plan::plan_named_barriers(p);
  CHECK(N.barriers[0].first_id[0] == -1);
  CHECK(N.barriers[0].first_id[1] == 1);  // epi: ids 1, 2 (one per warpgroup of b)
  CHECK(N.barriers[0].threads == 128);
  CHECK(N.barriers[1].first_id[0] == 3);  // all: one shared id
  CHECK(N.barriers[1].first_id[1] == 3);
  CHECK(N.barriers[1].threads == 64 + 256);
  CHECK(N.reduce_first_id[0] == -1);
  CHECK(N.reduce_first_id[1] == 4);  // ids 4, 5
  CHECK(N.ids_used == 6);
}

TEST_CASE("named barrier plan: turns are one barrier per unit, taken by the unit and passed by the previous one") {
  kernels::gemm_sm90_config c;
  c.bm = 128, c.bn = 128, c.pingpong = true;
  const program pp = kernels::gemm_bf16_sm90(c);
  REQUIRE(pp.errors.empty());
  const auto N = plan::plan_named_barriers(pp);
  const int consumer = role_index(pp, "consumer"), producer = role_index(pp, "producer");
  int epi = -1, mma = -1;
  for (std::size_t b = 0; b < pp.named_barriers.size(); ++b) {
    if (pp.named_barriers[b].nm == "epi") epi = static_cast<int>(b);
    if (pp.named_barriers[b].nm == "mma") mma = static_cast<int>(b);
  }
  REQUIRE(mma >= 0);
  REQUIRE(epi >= 0);
  CHECK(pp.named_barriers[mma].turns);
  CHECK(pp.named_barriers[mma].per_unit);
  CHECK(N.barriers[mma].per_unit);
  CHECK(N.barriers[mma].first_id[producer] == -1);
  CHECK(N.barriers[mma].first_id[consumer] >= 1);
  CHECK(N.barriers[mma].threads == 2 * 128);  // the warpgroup taking the turn and the one passing it
  CHECK(N.barriers[epi].threads == 128);
  // the two consumer warpgroups have their own ids: epi's and mma's do not overlap
  const int e0 = N.barriers[epi].first_id[consumer], m0 = N.barriers[mma].first_id[consumer];
  CHECK((e0 + 2 <= m0 || m0 + 2 <= e0));
  CHECK(N.ids_used == 1 + 2 + 2);
  // The cooperative variant declares the turns but never takes them: no hardware barrier for them.
  c.pingpong = false;
  const auto Nc = plan::plan_named_barriers(kernels::gemm_bf16_sm90(c));
  CHECK(Nc.barriers[mma].first_id[consumer] == -1);
  CHECK(Nc.ids_used == 1 + 2);
  // Turns between warps: 2 x 32 threads.
  auto k = kernel("wt").target(sm_80);
  auto t = k.turns("t");
  k.role("w", warps(3), [&](role& r) {
    r.take_turn(t);
    r.pass_turn(t);
  });
  const auto Nw = plan::plan_named_barriers(k.build());
  CHECK(Nw.barriers[0].first_id[0] == 1);
  CHECK(Nw.barriers[0].threads == 64);
  CHECK(Nw.ids_used == 4);
}
