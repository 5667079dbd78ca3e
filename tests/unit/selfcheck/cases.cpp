// The doctest main's own rules (tests/unit/main.cpp), checked by running it on these cases: a case that
// asserts nothing must fail the run, its twin that asserts must pass, a filter that selects no case must
// fail even where a skip-decorated case exists, and selecting that decorated case passes (ctest entries in
// tests/unit/CMakeLists.txt, "main:" prefix).
#include <doctest/doctest.h>

TEST_CASE("selfcheck: asserts nothing") {
  for (int i = 0; i < 0; ++i) CHECK(i == 1);  // a loop over an empty range: checks nothing
}
TEST_CASE("selfcheck: asserts once") { CHECK(1 + 1 == 2); }
TEST_CASE("selfcheck: skipped by its decorator" * doctest::skip()) { CHECK(false); }
