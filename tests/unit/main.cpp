// The doctest main of the executables whose cases ctest runs one by one (doctest_discover_tests: unit,
// golden, lowering, verify). ctest runs each case as `--test-case=<name>`; a name that selects no case (a
// name CMake split at ';', a filter that reads it otherwise) would run nothing and pass. Counting the cases
// the filters select (started, or skipped by a decorator) turns such a vacuous entry into a failure.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// Cases the filters selected: doctest's count of cases passing the filters (taken at the end of the run),
// plus cases a doctest::skip decorator skipped (doctest reports every filtered-out case as skipped too, so
// only decorated ones count; a decorated case outside the filter is counted as well, which can only hide a
// vacuous entry in an executable that has such a case).
int g_cases_selected = 0;
std::string g_current;
std::vector<std::string> g_vacuous;  // cases that ran and asserted nothing

struct case_counter : doctest::IReporter {
  explicit case_counter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& st) override { g_cases_selected += static_cast<int>(st.numTestCasesPassingFilters); }
  void test_case_start(const doctest::TestCaseData& tc) override { g_current = tc.m_name; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& st) override {
    if (st.numAssertsCurrentTest == 0 && st.testCaseSuccess) g_vacuous.push_back(g_current);
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData& tc) override {
    if (tc.m_skip) ++g_cases_selected;
  }
};
REGISTER_LISTENER("case_counter", 1, case_counter);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // a query (--list-test-cases, --help): nothing was to run
  if (g_cases_selected == 0) {
    std::fprintf(stderr, "no test case matched the filters: this run checked nothing (a test name with ';', or a filter that selects no case)\n");
    return rc != 0 ? rc : 1;
  }
  if (!g_vacuous.empty()) {
    for (const auto& name : g_vacuous) std::fprintf(stderr, "test case '%s' ran and made no assertion: it could not have failed\n", name.c_str());
    return rc != 0 ? rc : 1;
  }
  return rc;
}
