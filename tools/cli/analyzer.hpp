#pragma once
// The tool's one point of contact with the analyzer (include/cake/analysis/, docs/diagnostics.md):
// run it on a Program and render its report. Everything else in the tool sees only these three calls.
#include <memory>
#include <string>
#include <vector>

#include <cake/analysis.hpp>
#include <cake/cli/export.hpp>

#include "util.hpp"

namespace cake_cli {

// A finding of a test-only rule hook (CAKE_EXPORT_TEST_RULE, include/cake/cli/export.hpp): an error that
// the analyzer's report cannot hold (its rule ids are the analyzer's table), counted with its errors.
struct hook_finding {
  std::string rule, message, help, file;
  int line = 0;
};

struct analysis_result {
  std::unique_ptr<cake::analysis::report> report;  // large (fixed-capacity): kept on the heap
  int errors = 0, warnings = 0;
  std::string text, json;  // GCC-style text; the "cake.diagnostics/1" object
  std::vector<hook_finding> hooks;  // test-only rule hooks that fired (their errors are in `errors`)
};

// The rule ids of the errors (analyzer's, then hooks'), each once, in report order; with warnings too
// when asked (what cake corpus-gate compares).
inline std::vector<std::string> rule_ids(const analysis_result& a, bool with_warnings = false) {
  std::vector<std::string> ids;
  auto add = [&](const std::string& id) {
    for (const auto& x : ids)
      if (x == id) return;
    ids.push_back(id);
  };
  for (const auto& d : a.report->diagnostics)
    if (d.sev() == cake::analysis::severity::error || (with_warnings && d.sev() == cake::analysis::severity::warning)) add(std::string(d.about().id));
  for (const auto& h : a.hooks) add(h.rule);
  return ids;
}

// `without`: rule ids whose findings are dropped, as if the analyzer lacked them (`cake evolve --without-rule`:
// what a search finds on the GPU where a rule does not exist yet; corpus-gate drops them from its sets itself).
inline analysis_result analyze_program(const cake::program& p, const std::vector<cake::cli::exported_rule>* hooks = nullptr,
                                       const std::vector<std::string>* without = nullptr) {
  analysis_result r;
  r.report = std::make_unique<cake::analysis::report>();
  cake::analysis::analyze_into(p, *r.report);
  if (without && !without->empty()) {
    auto& ds = r.report->diagnostics;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      bool drop = false;
      for (const auto& id : *without) drop = drop || ds[i].about().id == id;
      if (!drop) ds[kept++] = ds[i];
      else if (ds[i].sev() == cake::analysis::severity::error) --r.report->errors;
      else if (ds[i].sev() == cake::analysis::severity::warning) --r.report->warnings;
    }
    ds.count = kept;
  }
  r.errors = r.report->errors;
  r.warnings = r.report->warnings;
  // Source locations are the paths the compiler saw (absolute): show them as the compile diagnostics do.
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string() + "/";
  auto relative = [&](std::string s) {
    if (ec || cwd.size() < 2) return s;
    for (std::size_t at = s.find(cwd); at != std::string::npos; at = s.find(cwd, at)) s.erase(at, cwd.size());
    return s;
  };
  r.text = relative(cake::analysis::to_text(*r.report));
  r.json = relative(cake::analysis::to_json(*r.report));
  if (hooks)
    for (const auto& h : *hooks)
      if (h.fires && h.fires(p)) {
        r.hooks.push_back({h.id, h.message, h.help, relative(h.file), h.line});
        ++r.errors;
        r.text += relative(h.file) + ":" + std::to_string(h.line) + ": error: " + h.message + " [" + h.id + "] (a test-only rule hook)\n  help: " + h.help + "\n";
      }
  return r;
}

}  // namespace cake_cli
