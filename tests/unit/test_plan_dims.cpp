// Unit tests for cake/plan/dims.hpp: which dims a region or register tile holds (from the copies that
// fill it, rows_at included), what every MMA contracts (the one dim A and B share, or over(dim)), the
// ambiguous / absent / unshared cases, and the operand major-ness derived from it.
#include <doctest/doctest.h>

#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {

using plan::contraction_status;

bool holds(const plan::dim_pair& d, const dim_ref& rows, const dim_ref& cols) { return d.rows == rows.index && d.cols == cols.index; }

// A one-MMA sm_90a kernel: sA is filled from A's tile, sB from B's tile, then acc += sA * sB, with
// .over(dim `over`) when given.
struct one_mma {
  program p;
  int mma = -1;
};
// Dims are M, N, K, J (indices 0..3); a_rows etc. pick them by index.
one_mma wgmma_over(int a_rows, int a_cols, int b_rows, int b_cols, int over = -1, bool declare_b_mn = false) {
  auto k = kernel("k").target(sm_90a);
  const auto d = k.dims("M", "N", "K", "J");
  auto A = k.input<bf16>("A", dims(d[a_rows], d[a_cols]));
  auto B = k.input<bf16>("B", dims(d[b_rows], d[b_cols]));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = declare_b_mn ? k.smem<bf16>("sB", {64, 64}, swizzle::b128, major::mn) : k.smem<bf16>("sB", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  one_mma m;
  k.role("r", warpgroups(1), [&](role& r) {
    r.tma_load(sA, A.tile(0, 0), bar);
    r.tma_load(sB, B.tile(0, 0), bar);
    auto acc = r.accumulator<f32>("acc", {64, 64});
    auto o = r.wgmma(acc, sA, sB);
    if (over >= 0) o.over(d[over]);
    m.mma = o.id;
  });
  m.p = k.build();
  return m;
}
constexpr int M = 0, N = 1, K = 2, J = 3;

}  // namespace

TEST_CASE("plan dims: the sm_90a GEMM: regions from TMA loads and stores, the accumulator from the MMA") {
  constexpr program p = kernels::gemm_bf16_sm90();
  constexpr auto D = plan::plan_dims(p);
  const int m = p.find_dim("M"), n = p.find_dim("N"), k = p.find_dim("K");
  // sA holds (M, K), sB (N, K), sD (M, N) (filled by the TMA store's source side).
  CHECK(D.smem[0].rows == m);
  CHECK(D.smem[0].cols == k);
  CHECK(D.smem[1].rows == n);
  CHECK(D.smem[1].cols == k);
  CHECK(D.smem[2].rows == m);
  CHECK(D.smem[2].cols == n);
  const int mma = find_op(p, op_kind::wgmma);
  const plan::contraction& c = D.mma[mma];
  CHECK(c.status == contraction_status::ok);
  CHECK(c.reduce == k);  // the one dim A and B share
  CHECK(c.a == major::k);
  CHECK(c.b == major::k);
  CHECK(plan::operand_major(D, mma, 0) == major::k);
  CHECK(plan::operand_major(D, mma, 1) == major::k);
  // The accumulator holds (A's other dim, B's other dim) = (M, N); its bf16 conversion too.
  CHECK(D.regs[0].rows == m);
  CHECK(D.regs[0].cols == n);
  CHECK(D.regs[1].rows == m);
  CHECK(D.regs[1].cols == n);
  CHECK(plan::make_plan(p).dims.mma[mma].reduce == k);  // part of the kernel plan
}

TEST_CASE("plan dims: cp.async fills regions on sm_80, mma_sync contracts K") {
  constexpr program p = kernels::gemm_bf16_sm80();
  constexpr auto D = plan::plan_dims(p);
  const int m = p.find_dim("M"), n = p.find_dim("N"), k = p.find_dim("K");
  CHECK(D.smem[0].rows == m);
  CHECK(D.smem[0].cols == k);
  CHECK(D.smem[1].rows == n);
  const int mma = find_op(p, op_kind::mma_sync);
  CHECK(D.mma[mma].status == contraction_status::ok);
  CHECK(D.mma[mma].reduce == k);
}

TEST_CASE("plan dims: rows_at picks the dim the region's rows hold, the default is the second-to-last") {
  auto k = kernel("k");
  auto [B, S, H, Dd] = k.dims("B", "S", "H", "D");
  auto Q = k.input<bf16>("Q", dims(B, S, H, Dd));
  auto sQ = k.smem<bf16>("sQ", {64, 64}, swizzle::b128);
  auto sR = k.smem<bf16>("sR", {16, 64}, swizzle::b128);
  auto sX = k.smem<bf16>("sX", {16, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  k.role("r", warps(1), [&](role& r) {
    r.tma_load(sQ, Q.tile(0, 0, 0, 0).rows_at(1), bar);
    r.tma_load(sR, Q.tile(0, 0, 0, 0), bar);
    r.tma_load(sQ, Q.tile(0, 0, 0, 0).rows_at(0), bar);  // a later copy does not change what sQ holds
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto D = plan::plan_dims(p);
  CHECK(holds(D.smem[0], S, Dd));
  CHECK(holds(D.smem[1], H, Dd));
  CHECK_FALSE(D.smem[2].known());  // no copy fills sX
  CHECK(holds(plan::dims_of_tile_ref(p, p.tile_refs[p.ops[2].a.index]), B, Dd));
}

TEST_CASE("plan dims: the contracted dim is the one A and B share, wherever it sits") {
  // A (M, K), B (N, K): K is both operands' columns: both K-major.
  auto nt = wgmma_over(M, K, N, K);
  auto D = plan::plan_dims(nt.p);
  CHECK(D.mma[nt.mma].status == contraction_status::ok);
  CHECK(D.mma[nt.mma].reduce == K);
  CHECK(D.mma[nt.mma].a == major::k);
  CHECK(D.mma[nt.mma].b == major::k);
  // B holding (K, N): K is its rows, so B is MN-major; the accumulator still holds (M, N).
  auto nn = wgmma_over(M, K, K, N);
  D = plan::plan_dims(nn.p);
  CHECK(D.mma[nn.mma].status == contraction_status::ok);
  CHECK(D.mma[nn.mma].reduce == K);
  CHECK(D.mma[nn.mma].a == major::k);
  CHECK(D.mma[nn.mma].b == major::mn);
  CHECK(plan::operand_major(D, nn.mma, 1) == major::mn);
  CHECK(D.regs[0].rows == M);
  CHECK(D.regs[0].cols == N);
  // A holding (K, M) as well: both MN-major.
  auto tt = wgmma_over(K, M, K, N);
  D = plan::plan_dims(tt.p);
  CHECK(D.mma[tt.mma].a == major::mn);
  CHECK(D.mma[tt.mma].b == major::mn);
  // Labels carry no meaning: the shared dim is contracted whatever it is called.
  auto j = wgmma_over(M, J, N, J);
  D = plan::plan_dims(j.p);
  CHECK(D.mma[j.mma].reduce == J);
  CHECK(D.mma[j.mma].status == contraction_status::ok);
}

TEST_CASE("plan dims: over(dim) names the contracted dim, ambiguity, absence and no shared dim") {
  // A and B over the same two dims (M, K): either could be contracted.
  auto amb = wgmma_over(M, K, M, K);
  auto D = plan::plan_dims(amb.p);
  CHECK(D.mma[amb.mma].status == contraction_status::ambiguous);
  CHECK(D.mma[amb.mma].reduce == no_index);
  // over(K) settles it: K-major both; the accumulator holds (M, M).
  auto settled = wgmma_over(M, K, M, K, K);
  D = plan::plan_dims(settled.p);
  CHECK(D.mma[settled.mma].status == contraction_status::ok);
  CHECK(D.mma[settled.mma].reduce == K);
  CHECK(D.mma[settled.mma].b == major::k);
  CHECK(settled.p.ops[settled.mma].has(flag_over));
  CHECK(settled.p.ops[settled.mma].imm[1] == K);
  // over(M) of the same operands: both MN-major.
  auto rows = wgmma_over(M, K, M, K, M);
  D = plan::plan_dims(rows.p);
  CHECK(D.mma[rows.mma].reduce == M);
  CHECK(D.mma[rows.mma].a == major::mn);
  CHECK(D.mma[rows.mma].b == major::mn);
  // over(N) where A holds (M, K): A lacks it.
  auto absent_a = wgmma_over(M, K, N, K, N);
  D = plan::plan_dims(absent_a.p);
  CHECK(D.mma[absent_a.mma].status == contraction_status::not_in_operand);
  CHECK(D.mma[absent_a.mma].missing_in == 0);
  // over(M) where B holds (N, K): B lacks it.
  auto absent_b = wgmma_over(M, K, N, K, M);
  D = plan::plan_dims(absent_b.p);
  CHECK(D.mma[absent_b.mma].status == contraction_status::not_in_operand);
  CHECK(D.mma[absent_b.mma].missing_in == 1);
  // A (M, K), B (N, J): nothing shared.
  auto none = wgmma_over(M, K, N, J);
  D = plan::plan_dims(none.p);
  CHECK(D.mma[none.mma].status == contraction_status::none_shared);
}

TEST_CASE("plan dims: a declared major-ness is kept only where dims are unknown") {
  // Dims known: the derived major-ness wins over a declaration (the analyzer reports the disagreement).
  auto known = wgmma_over(M, K, N, K, -1, true);
  auto D = plan::plan_dims(known.p);
  CHECK(known.p.smem[1].mj == major::mn);
  CHECK(known.p.smem[1].mj_declared);
  CHECK(D.mma[known.mma].b == major::k);
  // Regions no copy fills: the declared (or default k) major-ness is used, and the status says so.
  auto k = kernel("k").target(sm_90a);
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128, major::mn);
  int mma = -1;
  k.role("r", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    mma = r.wgmma(acc, sA, sB).id;
  });
  const program p = k.build();
  D = plan::plan_dims(p);
  CHECK(D.mma[mma].status == contraction_status::declared);
  CHECK(D.mma[mma].a == major::k);
  CHECK(D.mma[mma].b == major::mn);
  CHECK_FALSE(D.regs[0].known());
}

TEST_CASE("plan dims: a register A operand computed from an earlier MMA (S = Q Kt, O = P V)") {
  auto k = kernel("attn").target(sm_90a);
  auto [Sq, Sk, Dh] = k.dims("Sq", "Sk", "D");
  auto Q = k.input<bf16>("Q", dims(Sq, Dh));
  auto Kt = k.input<bf16>("Kt", dims(Sk, Dh));
  auto V = k.input<bf16>("V", dims(Sk, Dh));
  auto sQ = k.smem<bf16>("sQ", {64, 64}, swizzle::b128);
  auto sK = k.smem<bf16>("sK", {64, 64}, swizzle::b128);
  auto sV = k.smem<bf16>("sV", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  int s_mma = -1, o_mma = -1;
  k.role("r", warpgroups(1), [&](role& r) {
    r.tma_load(sQ, Q.tile(0, 0), bar);
    r.tma_load(sK, Kt.tile(0, 0), bar);
    r.tma_load(sV, V.tile(0, 0), bar);
    auto s = r.accumulator<f32>("s", {64, 64});
    auto o = r.accumulator<f32>("o", {64, 64});
    s_mma = r.wgmma(s, sQ, sK).id;  // shares D
    auto pr = r.convert<bf16>(s);
    o_mma = r.wgmma(o, pr, sV).id;  // P (Sq, Sk) x V (Sk, D): shares Sk, V's rows
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto D = plan::plan_dims(p);
  CHECK(D.mma[s_mma].reduce == Dh.index);
  CHECK(holds(D.regs[0], Sq, Sk));  // s
  CHECK(holds(D.regs[2], Sq, Sk));  // s.bf16, through the convert
  CHECK(D.mma[o_mma].status == contraction_status::ok);
  CHECK(D.mma[o_mma].a_in_regs);
  CHECK(D.mma[o_mma].reduce == Sk.index);
  CHECK(D.mma[o_mma].b == major::mn);  // V holds (Sk, D) and Sk is contracted: MN-major
  CHECK(holds(D.regs[1], Sq, Dh));  // o
}
