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
// plus the cases a doctest::skip decorator skipped whose names the run's --test-case filters match (doctest
// reports every filtered-out case as skipped too, decorated or not: counting every decorated one let a
// vacuous entry pass in an executable that has one, as two unit entries split at ';' did).
int g_cases_selected = 0;
std::vector<std::string> g_decorated_skips;  // names of the cases a doctest::skip decorator skipped
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
    if (tc.m_skip) g_decorated_skips.push_back(tc.m_name);
  }
};
REGISTER_LISTENER("case_counter", 1, case_counter);

// doctest's name filter: '*' any run, '?' any character, case-insensitive (the default; -cs is not used here).
bool wildcard_match(const char* pattern, const char* text) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  if (*pattern == '\0') return *text == '\0';
  if (*pattern == '*') return wildcard_match(pattern + 1, text) || (*text != '\0' && wildcard_match(pattern, text + 1));
  return *text != '\0' && (*pattern == '?' || lower(*pattern) == lower(*text)) && wildcard_match(pattern + 1, text + 1);
}
// The --test-case / -tc filters of the command line (comma-separated; a backslash before a comma keeps it in the name), or none.
std::vector<std::string> test_case_filters(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string v;
    for (const char* key : {"--test-case=", "-tc=", "--dt-test-case=", "--dt-tc="})
      if (a.rfind(key, 0) == 0) v = a.substr(std::string(key).size());
    if (v.empty()) continue;
    std::string cur;
    for (std::size_t j = 0; j < v.size(); ++j) {
      if (v[j] == '\\' && j + 1 < v.size() && v[j + 1] == ',') cur += v[++j];
      else if (v[j] == ',') out.push_back(cur), cur.clear();
      else cur += v[j];
    }
    out.push_back(cur);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // a query (--list-test-cases, --help): nothing was to run
  const auto filters = test_case_filters(argc, argv);
  for (const auto& name : g_decorated_skips) {
    bool match = filters.empty();
    for (const auto& f : filters) match = match || wildcard_match(f.c_str(), name.c_str());
    if (match) ++g_cases_selected;
  }
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
