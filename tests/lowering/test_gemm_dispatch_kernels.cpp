// Every schedule cake::gemm's dispatcher can return (the plans of include/cake/gemm_dispatch.hpp) and every
// schedule the sweep times (bench/gemm/sweep_candidates.hpp, so that a regenerated table can only name
// schedules checked here) is analyzed clean, lowered and assembled by NVRTC for sm_90a with no register
// spills and no stack frame: bf16 and e4m3 for both the persistent and the split-K schedule. Its own
// executable (about 25 NVRTC compiles).
#include <iterator>
#include <set>
#include <tuple>
#include <string>

#include "bench/gemm/sweep_candidates.hpp"
#include "lower_check.hpp"

using namespace cake;
using lower_check::lower_and_build;

namespace {

void lowers(const gemm_plan& p) {
  INFO(plan_name(p));
  if (p.kernel == gemm_kernel::splitk) {
    const int cluster = p.splitk.global_sum ? 1 : p.splitk.splits;
    const auto b = lower_and_build(kernels::gemm_splitk_sm90<bf16>(p.splitk));
    CHECK(b.lowered.cluster[0] == cluster);
    const auto f = lower_and_build(kernels::gemm_splitk_sm90<e4m3>(p.splitk));
    CHECK(f.lowered.cluster[0] == cluster);
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
  // The global-sum form's split is a constant of the program and nothing else (the counter's wrap, the
  // loop over the others' parts): one split per width here, every split in the next case.
  std::set<std::tuple<int, int>> global_widths;
  for (const auto& p : cake_bench::sweep_all_candidates()) {
    if (in_table.count(plan_name(p))) continue;  // the table's plans: the case above
    if (p.kernel == gemm_kernel::splitk && p.splitk.global_sum && !global_widths.insert({p.splitk.bm, p.splitk.bn}).second) continue;
    lowers(p);
  }
  CHECK(global_widths.size() == 2 * std::size(splitk_global_widths));  // 64- and 128-row tiles
}

TEST_CASE("the global-sum split-K schedule: every split the sweep can time differs from another only in the split") {
  // (each program against the same width's at 2 splits: the counter's wrap and the loop over the other parts)
  for (const auto& p : cake_bench::sweep_all_candidates()) {
    if (p.kernel != gemm_kernel::splitk || !p.splitk.global_sum) continue;
    INFO(plan_name(p));
    const program a = kernels::gemm_splitk_sm90<bf16>(p.splitk);
    CHECK(a.errors.empty());
    CHECK(analyze(a).errors == 0);
    auto two = p.splitk;
    two.splits = 2;
    const program b = kernels::gemm_splitk_sm90<bf16>(two);
    CHECK(a.ops.size() == b.ops.size());
    CHECK(a.regs.size() == b.regs.size());
    CHECK(plan::plan_smem(a).total == plan::plan_smem(b).total);
  }
}

// cake::gemm derives a_rows from M (short_a_rows in kernels/gemm/short_a.hpp): A's load is then a box of a_rows
// rows into the first rows of each consumer's row block of the stage (one block: split-K's 64-row tiles and
// ping-pong; two: split-K's 128-row tiles and the cooperative schedule, whose second box lies past M), and
// the stage's transaction bytes count those rows only (a box of the whole tile would never complete a barrier
// that expects fewer bytes, or the reverse). Both schedules, bf16 and e4m3, analyzed clean (the boxes say the
// rest is unused: dataflow.partial-fill).
TEST_CASE("the GEMM schedules' short A loads: boxes of a_rows rows per consumer block and the stage's bytes derived from them") {
  auto check = [](const program& p, int a_rows, int blocks, int bn, const std::string& what) {
    INFO(what << " a_rows " << a_rows);
    const auto b = lower_and_build(p);
    const auto& tma = b.lowered.plan.tma;
    REQUIRE(tma.count >= 2);
    CHECK(tma.descriptors[0].box_rows == a_rows);  // A
    CHECK(tma.descriptors[1].box_rows == bn);      // B
    // 128-byte rows (64 bf16, 128 e4m3): a_rows of A per block and bn of B per stage
    CHECK(lower_check::has(b.source(), std::to_string(128 * (blocks * a_rows + bn)) + "u);  // bytes the loads into this stage deliver"));
  };
  for (int a_rows : {8, 16, 32}) {
    kernels::gemm_splitk_config sk;  // sk4_bn128_s6, 64-row tiles
    sk.a_rows = a_rows;
    REQUIRE(sk.valid());
    check(kernels::gemm_splitk_sm90<bf16>(sk), a_rows, 1, sk.bn, "split-K bf16");
    check(kernels::gemm_splitk_sm90<e4m3>(sk), a_rows, 1, sk.bn, "split-K e4m3");
  }
  kernels::gemm_splitk_config sk128 = cake_bench::splitk_plan(2, 128, 128).splitk;
  sk128.a_rows = 16;
  check(kernels::gemm_splitk_sm90<bf16>(sk128), 16, 2, sk128.bn, "split-K 128-row tiles");
  kernels::gemm_sm90_config pp = cake_bench::sm90_plan(128, 1, true, 64, 1).sm90, coop = cake_bench::sm90_plan(256, 1).sm90;
  pp.a_rows = 8;
  check(kernels::gemm_sm90<bf16>(pp), 8, 1, pp.bn, "ping-pong bf16");
  pp.a_rows = 32;
  check(kernels::gemm_sm90<e4m3>(pp), 32, 1, pp.bn, "ping-pong e4m3");
  coop.a_rows = 16;
  check(kernels::gemm_sm90<bf16>(coop), 16, 2, coop.bn, "cooperative bf16");
  coop.a_rows = 8;
  check(kernels::gemm_sm90<e4m3>(coop), 8, 2, coop.bn, "cooperative e4m3");
  kernels::gemm_splitk_config c;
  c.a_rows = 24;
  CHECK_FALSE(c.valid());
}
