// The accepted proposal of the seeded failure class (tests/verify/accepted/seeded_pingpong/entry.txt names
// this file): the family of tests/cli/seeded_family.cpp plus the rule a person wrote when accepting
// `cake evolve`'s proposal. It is a TEST-ONLY rule hook (CAKE_EXPORT_TEST_RULE), not an analyzer rule:
// the failure it rejects is scripted (tests/cli/seeded_mock.txt), and the pingpong GEMM is correct on the
// H200, so a rule in include/cake/analysis rejecting it would reject valid schedules. What the test shows
// is the loop: with the rule the variant is rejected at the analyzer gate and the corpus gate holds the
// entry; with the rule removed (`cake corpus-gate --without-rule test.pingpong-scripted`) the gate fails.
#include "seeded_family.cpp"

namespace seeded_test {

// The pingpong variants are the ones whose consumers take turns (op turn_take): the structural feature
// the scripted failure class shares.
constexpr bool takes_turns(const cake::program& p) {
  for (const auto& o : p.ops)
    if (o.kind == cake::op_kind::turn_take) return true;
  return false;
}

}  // namespace seeded_test

CAKE_EXPORT_TEST_RULE(pingpong_scripted, seeded_test::takes_turns,
                      "the consumer warpgroups take turns (pingpong): the scripted failure class of tests/cli/seeded_mock.txt",
                      "pingpong = false (the fixed twin of tests/verify/accepted/seeded_pingpong)")

// The bad twin as a kernel of its own, so that `cake check` shows the hook's finding (tests/cli/CMakeLists.txt).
CAKE_EXPORT(seeded_bad_twin, (seeded_test::generate({.bn = 128, .stages = 2, .pingpong = true})), reference("gemm"))
