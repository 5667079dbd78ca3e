// Every schedule cake::gemm's dispatcher can return (the plans of include/cake/gemm_dispatch.hpp) and every
// schedule the sweep times (bench/gemm/sweep_candidates.hpp, so that a regenerated table can only name
// schedules checked here) is analyzed clean, lowered and assembled by NVRTC for sm_90a with no register
// spills and no stack frame: bf16 and e4m3 for both the persistent and the split-K schedule. Its own
// executable (about 25 NVRTC compiles).
#include <set>
#include <string>

#include "bench/gemm/sweep_candidates.hpp"
#include "lower_check.hpp"

using namespace cake;
using lower_check::lower_and_build;

namespace {

void lowers(const gemm_plan& p) {
  INFO(plan_name(p));
  if (p.kernel == gemm_kernel::splitk) {
    const auto b = lower_and_build(kernels::gemm_splitk_sm90<bf16>(p.splitk));
    CHECK(b.lowered.cluster[0] == p.splitk.splits);
    const auto f = lower_and_build(kernels::gemm_splitk_sm90<e4m3>(p.splitk));
    CHECK(f.lowered.cluster[0] == p.splitk.splits);
    CHECK(lower_check::has(f.ptx(), ".e4m3.e4m3"));
    CHECK(kernels::gemm_splitk_sm90<e4m3>(p.splitk).scalars.size() == 1);  // the per-tensor scale
    return;
  }
  const auto b = lower_and_build(kernels::gemm_sm90<bf16>(p.sm90));
  CHECK(b.lowered.cluster[0] == p.sm90.cluster_m);
  const auto f = lower_and_build(kernels::gemm_sm90<e4m3>(p.sm90));
  CHECK(lower_check::has(f.ptx(), ".e4m3.e4m3"));
}

}  // namespace

TEST_CASE("every plan of the generated gemm dispatch table lowers to CUBIN without spills") {
  REQUIRE(!gemm_dispatch_table::plans.empty());
  for (const auto& p : gemm_dispatch_table::plans) lowers(p);
}

TEST_CASE("every schedule the gemm sweep can time lowers to CUBIN without spills") {
  std::set<std::string> in_table;
  for (const auto& p : gemm_dispatch_table::plans) in_table.insert(plan_name(p));
  for (const auto& p : cake_bench::sweep_all_candidates())
    if (!in_table.count(plan_name(p))) lowers(p);  // the table's plans: the case above
}

// cake::gemm derives split-K's a_rows from M (gemm_detail::splitk_a_rows): each short A load is a box of
// a_rows rows into the first rows of the stage's 64-row A region, and the stage's transaction bytes count
// those rows only (a box of 64 rows would never complete a barrier that expects fewer bytes, or the reverse).
TEST_CASE("split-K's short A loads: a box of a_rows rows and the stage's bytes derived from it") {
  for (int a_rows : {8, 16, 32}) {
    kernels::gemm_splitk_config c;  // sk4_bn128_s6
    c.a_rows = a_rows;
    REQUIRE(c.valid());
    INFO("a_rows " << a_rows);
    for (bool fp8 : {false, true}) {
      const program p = fp8 ? kernels::gemm_splitk_sm90<e4m3>(c) : kernels::gemm_splitk_sm90<bf16>(c);
      const auto b = lower_and_build(p);
      const auto& tma = b.lowered.plan.tma;
      REQUIRE(tma.count == 2);
      CHECK(tma.descriptors[0].box_rows == a_rows);  // A
      CHECK(tma.descriptors[1].box_rows == c.bn);    // B
      // 128-byte rows (64 bf16, 128 e4m3): a_rows of A and bn of B per stage
      CHECK(lower_check::has(b.source(), std::to_string(128 * (a_rows + c.bn)) + "u);  // bytes the loads into this stage deliver"));
    }
  }
  kernels::gemm_splitk_config c;
  c.a_rows = 24;
  CHECK_FALSE(c.valid());
  c.a_rows = 16, c.bm = 128;
  CHECK_FALSE(c.valid());  // two consumers read rows 0..63 and 64..127 of A
}

// The same for the persistent schedule (gemm_detail::sm90_a_rows): ping-pong's 64-row tiles and the
// cooperative 128-row ones (a box into each consumer's half: the second one's are rows past M, zeros),
// bf16 and e4m3.
TEST_CASE("the persistent schedule's short A loads: a box of a_rows rows and the stage's bytes derived from it") {
  struct variant {
    kernels::gemm_sm90_config c;
    bool fp8;
  };
  kernels::gemm_sm90_config pp = cake_bench::sm90_plan(128, 1, true, 64, 1).sm90, coop = cake_bench::sm90_plan(256, 1).sm90;
  for (auto [c, a_rows, fp8] : {std::tuple{pp, 8, false}, std::tuple{pp, 32, true}, std::tuple{coop, 16, false}, std::tuple{coop, 8, true}}) {
    c.a_rows = a_rows;
    INFO(plan_name({gemm_kernel::sm90, c, {}}) << " a_rows " << a_rows << (fp8 ? " e4m3" : " bf16"));
    const auto b = lower_and_build(fp8 ? kernels::gemm_sm90<e4m3>(c) : kernels::gemm_sm90<bf16>(c));
    const auto& tma = b.lowered.plan.tma;
    REQUIRE(tma.count >= 2);
    CHECK(tma.descriptors[0].box_rows == a_rows);  // A
    CHECK(tma.descriptors[1].box_rows == c.bn);    // B
    // cooperative: a box into each consumer's half
    const int a_boxes = c.pingpong ? 1 : 2;
    CHECK(lower_check::has(b.source(), std::to_string(128 * (a_boxes * a_rows + c.bn)) + "u);  // bytes the loads into this stage deliver"));
  }
}
