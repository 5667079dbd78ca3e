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
