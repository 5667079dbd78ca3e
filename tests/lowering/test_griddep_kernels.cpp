// The programmatic-launch schedules of the GPU tier (tests/gpu/test_griddep.cpp, included as it is with its
// test cases turned into uninstantiated templates) lower and assemble for sm_90a: griddepcontrol.wait is in
// the PTX where the schedule asks for it, and nowhere in the variant without it.
#include "lower_check.hpp"

#undef TEST_CASE
#define TEST_CASE(name) template <class> [[maybe_unused]] void DOCTEST_ANONYMOUS(CAKE_GPU_CASE_)()
#include "tests/gpu/test_griddep.cpp"
#undef TEST_CASE
#define TEST_CASE(name) DOCTEST_TEST_CASE(name)

TEST_CASE("programmatic launch: the griddep_wait schedule lowers with griddepcontrol.wait") {
  const auto b = lower_check::lower_and_build(griddep_gpu::pdl_scale(true));
  CHECK(lower_check::count(b.ptx(), "griddepcontrol.wait") == 1);
}

TEST_CASE("programmatic launch: the variant without griddep_wait lowers without it (the GPU tier races it)") {
  const auto p = griddep_gpu::pdl_scale(false);
  int findings = 0;
  for (const auto& d : cake::analyze(p).diagnostics) findings += d.rule == cake::analysis::rule_id::sync_griddep_missing;
  CHECK(findings == 1);  // the read of X
  cake::lower::emit_options o;
  o.analyze = false;  // lowering refuses what the analyzer rejects unless told not to
  const auto lowered = cake::lower::lower(p, o);
  REQUIRE_MESSAGE(lowered.ok, lowered.error);
  const auto art = cake::jit::build(lowered.source, lowered.entry, "sm_90a");
  REQUIRE_MESSAGE(art.ok, art.diagnostics());
  CHECK(lower_check::count(art.ptx, "griddepcontrol.wait") == 0);
}
