// cake::gemm on the GPU: fresh random inputs (normal and uniform, several scales), the output poisoned
// with NaN first, ragged shapes and tiny ones, padded leading dimensions; relative Frobenius error
// against an f32-accumulation reference within bf16 (fp8) tolerance, every element written and no
// padding column touched.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <vector>

#include <cake/gemm.hpp>
#include <cake/harness/gemm_check.hpp>
#include "../../bench/gemm/sweep_candidates.hpp"
#include "device_gate.hpp"

using cake::harness::distribution;
using cake::harness::gemm_problem;

namespace {

const std::vector<gemm_problem>& shapes() {
  static const std::vector<gemm_problem> s = {
      {128, 256, 64},                                   // one tile
      {1, 8, 8},                                        // tiny
      {1, 1, 1},                                        // tiniest: N=1 takes the direct-store epilogue
      {7, 24, 40, 0, 0, 0, {distribution::uniform, 8.f}},
      {129, 257, 72},                                   // ragged in all three (ldd padded to 264)
      {300, 200, 1000, 0, 0, 0, {distribution::normal, 0.01f}},
      {777, 1111, 333, 344, 336, 1120},                 // padded leading dimensions
      {1000, 1000, 1000, 0, 0, 0, {distribution::uniform, 0.1f}},
      {256, 512, 4096},                                 // long K
      {4096, 2112, 7168},                               // BN=176 by the shape choice
      {2048, 24576, 1536},
      {1024, 3000, 512, 0, 0, 0, {distribution::normal, 8.f}},
      {4100, 4100, 256},
  };
  return s;
}

bool gpu_ready() { return cake_gpu_test::require_device(9, 0, true, "cake::gemm (sm_90a)"); }

}  // namespace

TEST_CASE("cake::gemm bf16 matches the f32 reference on ragged, tiny and padded shapes") {
  if (!gpu_ready()) return;
  cake::harness::gemm_reference reference;
  auto rng = cake::harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  for (const auto& pr : shapes()) {
    cake::harness::gemm_operands o(pr);
    const auto r = cake::harness::check_gemm(o, rng, reference, [&](cake::harness::gemm_operands& x) {
      const auto& q = x.p;
      cake::gemm(x.a.address(), x.b.address(), x.d.address(), q.m, q.n, q.k, q.lda, q.ldb, q.ldd);
    });
    INFO(pr.describe() << ": rel_err " << r.cmp.rel_err << ", nonfinite " << r.cmp.nonfinite << ", padding written " << r.padding_written);
    CHECK(r.cmp.nonfinite == 0);
    CHECK(r.padding_written == 0);
    CHECK(r.cmp.rel_err < 1e-2);
  }
}

TEST_CASE("cake::gemm rejects bad arguments with the argument named") {
  if (!gpu_ready()) return;
  cake::jit::device_buffer a(4096), b(4096), d(4096);
  CHECK_THROWS_WITH_AS(cake::gemm(a.address(), b.address(), d.address(), 8, 8, 8, 4, 8, 8), doctest::Contains("lda = 4 is smaller than K = 8"),
                       cake::jit::error);
  CHECK_THROWS_WITH_AS(cake::gemm(a.address(), b.address(), d.address(), 8, 8, 9, 9, 16, 8), doctest::Contains("lda * element size = 18 bytes"),
                       cake::jit::error);
  CHECK_THROWS_WITH_AS(cake::gemm(static_cast<char*>(a.address()) + 2, b.address(), d.address(), 8, 8, 8, 8, 8, 8),
                       doctest::Contains("A must be a non-null, 16-byte aligned"), cake::jit::error);
  CHECK_THROWS_WITH_AS(cake::gemm(a.address(), b.address(), d.address(), 0, 8, 8, 8, 8, 8), doctest::Contains("at least 1"), cake::jit::error);
}

TEST_CASE("cake::gemm_fp8 (e4m3, per-tensor scale) matches the f32 reference") {
  if (!gpu_ready()) return;
  cake::harness::gemm_reference reference;
  auto rng = cake::harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const std::vector<gemm_problem> fp8_shapes = {{128, 256, 128}, {1, 8, 16}, {129, 257, 80}, {300, 200, 1000}, {777, 1111, 336}, {2048, 2112, 4096}};
  for (gemm_problem pr : fp8_shapes) {
    pr.fp8 = true;
    pr.scale = 0.25f;
    pr.fill = {distribution::normal, 2.f};
    cake::harness::gemm_operands o(pr);
    const auto r = cake::harness::check_gemm(o, rng, reference, [&](cake::harness::gemm_operands& x) {
      const auto& q = x.p;
      cake::gemm_fp8(x.a.address(), x.b.address(), x.d.address(), q.m, q.n, q.k, q.lda, q.ldb, q.ldd, q.scale);
    });
    INFO(pr.describe() << ": rel_err " << r.cmp.rel_err << ", nonfinite " << r.cmp.nonfinite << ", padding written " << r.padding_written);
    CHECK(r.cmp.nonfinite == 0);
    CHECK(r.padding_written == 0);
    CHECK(r.cmp.rel_err < 1e-2);  // the inputs are exact fp8 values; only f32 accumulation order and the bf16 output round
  }
}

// Before a sweep times them (bench/gemm/bench_gemm_sweep.cpp) and the dispatcher returns them: every
// schedule the sweep can time and every plan of the dispatch table, through cake::gemm_with as cake::gemm
// runs it, on small-M (M 1, 7, 16, 30: split-K's short A loads of 8, 16 and 32 rows), ragged (N = 257: the direct-store epilogue for the persistent schedule) and
// domain-like shapes; bf16 and e4m3 (split-K included: its e4m3 form scales the cluster's sum). Three cases,
// so that each (its JIT of about 40-80 kernels included) fits one device call: the table's plans, the
// sweep's other persistent and 64-row split-K schedules, its other 128-row split-K ones.
namespace {
const std::vector<gemm_problem> plan_shapes = {{1, 4096, 4096}, {7, 1000, 777}, {16, 520, 1000}, {30, 1032, 2048}, {100, 2112, 1536}, {129, 257, 72}, {64, 512, 64}, {384, 6144, 1024}};
void check_plans(const std::vector<cake::gemm_plan>& plans, const std::vector<gemm_problem>& bf16_shapes = plan_shapes) {
  REQUIRE(!plans.empty());
  cake::harness::gemm_reference reference;
  auto rng = cake::harness::random_source::fresh();
  MESSAGE("seed " << rng.seed() << ", " << plans.size() << " plans");
  for (const auto& plan : plans) {
    for (bool fp8 : {false, true}) {
      for (gemm_problem pr : bf16_shapes) {
        if (fp8 && pr.k % 16) continue;  // e4m3 rows must be 16-byte multiples (TMA pitch)
        pr.fp8 = fp8;
        pr.scale = fp8 ? 0.25f : 1.0f;
        pr.fill = {distribution::normal, fp8 ? 2.f : 0.5f};
        cake::harness::gemm_operands o(pr);
        const auto r = cake::harness::check_gemm(o, rng, reference, [&](cake::harness::gemm_operands& x) {
          const auto& q = x.p;
          cake::gemm_with(plan, fp8 ? cake::gemm_input::e4m3 : cake::gemm_input::bf16, x.a.address(), x.b.address(), x.d.address(), q.m, q.n, q.k, q.lda,
                          q.ldb, q.ldd, q.scale);
        });
        INFO(cake::plan_name(plan) << (fp8 ? " e4m3 " : " bf16 ") << pr.describe() << ": rel_err " << r.cmp.rel_err << ", nonfinite " << r.cmp.nonfinite
                                   << ", padding written " << r.padding_written);
        CHECK(r.cmp.nonfinite == 0);
        CHECK(r.padding_written == 0);
        CHECK(r.cmp.rel_err < 1e-2);
      }
    }
  }
}
bool in_table(const cake::gemm_plan& p) {
  const auto& t = cake::gemm_dispatch_table::plans;
  return std::find(t.begin(), t.end(), p) != t.end();
}
bool global_sum(const cake::gemm_plan& p) { return p.kernel == cake::gemm_kernel::splitk && p.splitk.global_sum; }
// the sweep's schedules that are not in the table, of 128-row split-K tiles or not (the global-sum form: below)
std::vector<cake::gemm_plan> other_candidates(bool bm128) {
  std::vector<cake::gemm_plan> out;
  for (const auto& p : cake_bench::sweep_all_candidates())
    if (!in_table(p) && !global_sum(p) && (p.kernel == cake::gemm_kernel::splitk && p.splitk.bm == 128) == bm128) out.push_back(p);
  return out;
}
// The global-sum split-K schedules the sweep can time, one per tile shape (the split is a constant of the
// program: the counter's wrap and the loop over the others' parts), the splits cycling through 2..8 so that
// every split runs too.
std::vector<cake::gemm_plan> global_sum_plans() {
  std::vector<cake::gemm_plan> out;
  int next = 2;
  for (const auto& p : cake_bench::sweep_all_candidates()) {
    if (!global_sum(p) || p.splitk.splits != next) continue;
    bool seen = false;
    for (const auto& q : out) seen = seen || (q.splitk.bm == p.splitk.bm && q.splitk.bn == p.splitk.bn);
    if (seen) continue;
    out.push_back(p);
    next = next == cake::splitk_global_max_fill_splits ? 2 : next + 1;
  }
  return out;
}
}  // namespace

TEST_CASE("cake::gemm_with runs every dispatch-table plan correctly") {
  if (!gpu_ready()) return;
  check_plans({cake::gemm_dispatch_table::plans.begin(), cake::gemm_dispatch_table::plans.end()});
}

TEST_CASE("cake::gemm_with runs every other sweep candidate correctly: persistent and 64-row split-K") {
  if (!gpu_ready()) return;
  check_plans(other_candidates(false));
}

TEST_CASE("cake::gemm_with runs every other sweep candidate correctly: 128-row split-K") {
  if (!gpu_ready()) return;
  check_plans(other_candidates(true));
}

TEST_CASE("cake::gemm_with runs the split-K schedules whose partial sums meet in global memory correctly") {
  if (!gpu_ready()) return;
  const auto plans = global_sum_plans();
  CHECK(plans.size() == 2 * std::size(cake::splitk_global_widths));
  check_plans(plans);
}

// The last arrival leaves every counter at 0 (atom.inc wraps): the workspace is ready for the next launch with
// no memset, whatever split ran before. Splits past the fill's 8 (up to 32) and more splits than K blocks
// (splits with no K block add zeros and arrive all the same).
TEST_CASE("global-sum split-K: up to 32 splits, splits with no K block, and the counters back at 0 after every launch") {
  if (!gpu_ready()) return;
  cake::harness::gemm_reference reference;
  auto rng = cake::harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  struct run_case {
    int splits, bm, bn;
    gemm_problem shape;
  };
  const run_case cases[] = {{32, 64, 128, {33, 1000, 8192}}, {16, 128, 192, {200, 2112, 4096}}, {12, 64, 136, {64, 520, 256}},  // 4 K blocks for 12 splits
                            {3, 128, 144, {513, 2112, 7168}}, {2, 64, 64, {1, 64, 64}}};
  for (const auto& c : cases) {
    const cake::gemm_plan plan = cake_bench::splitk_plan(c.splits, c.bn, c.bm, true);
    REQUIRE(plan.splitk.valid());
    gemm_problem pr = c.shape;
    pr.fill = {distribution::normal, 0.5f};
    cake::harness::gemm_operands o(pr);
    for (int round = 0; round < 2; ++round) {  // twice: the second launch starts from the counters the first left
      const auto r = cake::harness::check_gemm(o, rng, reference, [&](cake::harness::gemm_operands& x) {
        const auto& q = x.p;
        cake::gemm_with(plan, cake::gemm_input::bf16, x.a.address(), x.b.address(), x.d.address(), q.m, q.n, q.k, q.lda, q.ldb, q.ldd);
      });
      INFO(cake::plan_name(plan) << " " << pr.describe() << " round " << round << ": rel_err " << r.cmp.rel_err);
      CHECK(r.cmp.nonfinite == 0);
      CHECK(r.padding_written == 0);
      CHECK(r.cmp.rel_err < 1e-2);
    }
    const long long counters = (pr.m + c.bm - 1) / c.bm * (c.bm / 64) * ((pr.n + c.bn - 1) / c.bn);
    const auto w = cake::gemm_detail::splitk_workspace_for(0, nullptr, 0, static_cast<std::size_t>(counters));
    std::vector<int> host(static_cast<std::size_t>(counters), -1);
    auto& d = cake::jit::driver::get();
    d.bind(0);
    d.check(d.cuCtxSynchronize(), "cuCtxSynchronize", "after the global-sum runs");
    d.check(d.cuMemcpyDtoH(host.data(), w.count, host.size() * sizeof(int)), "cuMemcpyDtoH", "reading the counters");
    INFO(cake::plan_name(plan));
    CHECK(std::count(host.begin(), host.end(), 0) == counters);
  }
}

// Runs of K blocks (k_group): K that ends inside a run, K of fewer runs than splits (a split with no run adds
// zeros), one run in all, and the plan shapes; both types through check_plans.
TEST_CASE("global-sum split-K in runs of K blocks: partial last runs and splits with no run") {
  if (!gpu_ready()) return;
  std::vector<cake::gemm_plan> plans;
  for (const auto& [splits, bn, bm, group] : {std::tuple{3, 192, 64, 8}, std::tuple{2, 64, 64, 16}, std::tuple{4, 128, 128, 4}}) {
    cake::gemm_plan p = cake_bench::splitk_plan(splits, bn, bm, true);
    p.splitk.k_group = group;
    REQUIRE(p.splitk.valid());
    plans.push_back(p);
  }
  std::vector<gemm_problem> shapes = {{32, 8192, 28672 / 4 + 64 * 3}, {1, 4096, 7168}, {200, 2112, 64 * 5 + 16}, {64, 1000, 192}, {129, 520, 4096}};
  shapes.insert(shapes.end(), plan_shapes.begin(), plan_shapes.end());
  check_plans(plans, shapes);
}

TEST_CASE("cake::gemm_with runs the lookahead schedules correctly (the next tile's first K block during this tile's stores)") {
  if (!gpu_ready()) return;
  std::vector<cake::gemm_plan> plans;
  for (int bn : {256, 192, 128})
    for (int cluster : {2, 1}) {
      cake::gemm_plan p;
      p.sm90.bn = bn, p.sm90.cluster_m = cluster, p.sm90.lookahead = true;
      p.sm90.stages = cake::max_gemm_stages(p.sm90, 2);
      plans.push_back(p);
    }
  // shapes with several tiles per CTA (the next point in the same and in the next row of tiles), one K block
  // (the K loop after the first block runs no trip), ragged in every dim, and the plan tests' shapes
  std::vector<gemm_problem> shapes = {{2048, 4096, 512}, {1500, 3000, 64}, {1000, 2500, 200}, {4096, 4096, 1024}, {300, 200, 1000}};
  shapes.insert(shapes.end(), plan_shapes.begin(), plan_shapes.end());
  check_plans(plans, shapes);
  // (the fused epilogues and the direct store with the lookahead: tests/gpu/test_compute.cpp)
  cake::kernels::gemm_sm90_config pp;
  pp.pingpong = true, pp.bm = 128, pp.bn = 128, pp.lookahead = true;
  cake::harness::gemm_operands o(gemm_problem{256, 256, 256});
  CHECK_THROWS_WITH_AS(cake::gemm_with(pp, cake::gemm_input::bf16, o.a.address(), o.b.address(), o.d.address(), 256, 256, 256, 256, 256, 256),
                       doctest::Contains("lookahead"), cake::jit::argument_error);
}

TEST_CASE("cake::gemm_with runs the whole-tile staging schedules correctly (one staging buffer per output chunk), with and without the lookahead") {
  if (!gpu_ready()) return;
  std::vector<cake::gemm_plan> plans;
  for (int bn : {256, 192, 176, 128})
    for (bool lookahead : {false, true}) {
      cake::gemm_plan p;
      p.sm90.bn = bn, p.sm90.cluster_m = bn == 192 ? 1 : 2, p.sm90.lookahead = lookahead, p.sm90.whole_tile_staging = true;
      p.sm90.stages = cake::max_gemm_stages(p.sm90, 2);
      plans.push_back(p);
    }
  // several tiles per CTA, one K block, ragged in every dim (a chunk past N is clipped by the TMA store), and the
  // plan tests' shapes
  std::vector<gemm_problem> shapes = {{2048, 4096, 512}, {1500, 3000, 64}, {1000, 2500, 200}, {300, 200, 1000}};
  shapes.insert(shapes.end(), plan_shapes.begin(), plan_shapes.end());
  check_plans(plans, shapes);
  cake::kernels::gemm_sm90_config pp;
  pp.pingpong = true, pp.bm = 128, pp.bn = 128, pp.in_flight = 1, pp.whole_tile_staging = true;
  cake::harness::gemm_operands o(gemm_problem{256, 256, 256});
  CHECK_THROWS_WITH_AS(cake::gemm_with(pp, cake::gemm_input::bf16, o.a.address(), o.b.address(), o.d.address(), 256, 256, 256, 256, 256, 256),
                       doctest::Contains("whole-tile staging"), cake::jit::argument_error);
}

TEST_CASE("split-K has no fused epilogue: refused with the schedule named") {
  if (!gpu_ready()) return;
  cake::jit::device_buffer a(4096), b(4096), d(4096), bias(64);
  cake::gemm_epilogue_args epi;
  epi.bias = bias.address();
  const cake::gemm_plan sk4 = cake_bench::splitk_plan(4);
  CHECK_THROWS_WITH_AS(cake::gemm_detail::run(cake::gemm_input::e4m3, &sk4, a.address(), b.address(), d.address(), 8, 8, 16, 16, 16, 8, 1.0,
                                              nullptr, 0, epi),
                       doctest::Contains("sk4_bn128_s6 has no fused epilogue"), cake::jit::error);
}
