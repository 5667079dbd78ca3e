// The doctest main of every GPU test executable. Without a usable driver or device it prints
// "SKIPPED: <reason>" and exits with 77, which ctest reports as skipped (SKIP_RETURN_CODE 77).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include <cake/jit/driver.hpp>

#include "device_gate.hpp"

namespace {

// The cases that ran and the ones that skipped themselves (device_gate.hpp), by name.
std::set<std::string> started;
std::vector<std::string> skipped;
std::string current;
std::vector<std::string> vacuous;  // cases that ran, did not skip themselves, and asserted nothing

struct case_tracker : doctest::IReporter {
  explicit case_tracker(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& tc) override {
    current = tc.m_name;
    started.insert(current);
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& st) override {
    if (st.numAssertsCurrentTest == 0 && st.testCaseSuccess) vacuous.push_back(current);
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("cake_case_tracker", 1, case_tracker);

}  // namespace

void cake_gpu_test::skip(const std::string& why) {
  for (const auto& s : skipped)
    if (s.rfind(current + ": ", 0) == 0) return;  // once per case (subcases re-enter it)
  skipped.push_back(current + ": " + why);
}

int main(int argc, char** argv) {
  try {
    const auto& d = cake::jit::driver::get();
    const auto& dev = d.device(0);
    std::printf("device 0: %s, %d SMs, %d B L2, driver for CUDA %s (%s)\n", dev.describe().c_str(), dev.sm_count,
                dev.l2_bytes, cake::jit::driver::version_string(d.version()).c_str(), d.library().c_str());
  } catch (const std::exception& e) {
    std::printf("SKIPPED: %s\n", e.what());
    return 77;
  }
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (!skipped.empty()) {
    std::printf("SKIPPED %zu of %zu case(s) on this device:\n", skipped.size(), started.size());
    for (const auto& s : skipped) std::printf("  %s\n", s.c_str());
    if (rc == 0 && skipped.size() == started.size()) return 77;  // nothing ran: skipped, not passed
  }
  // A case that ran on the device and asserted nothing could not have failed (unless it skipped itself).
  int bad = 0;
  for (const auto& name : vacuous) {
    bool was_skipped = false;
    for (const auto& s : skipped) was_skipped = was_skipped || s.rfind(name + ": ", 0) == 0;
    if (!was_skipped) std::fprintf(stderr, "test case '%s' ran and made no assertion: it could not have failed\n", name.c_str()), ++bad;
  }
  if (bad && rc == 0) return 1;
  return rc;
}
