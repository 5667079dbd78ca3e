#pragma once
// The tool's one point of contact with the analyzer (include/cake/analysis/, docs/diagnostics.md):
// run it on a Program and render its report. Everything else in the tool sees only these three calls.
#include <memory>
#include <string>

#include <cake/analysis.hpp>

#include "util.hpp"

namespace cake_cli {

struct analysis_result {
  std::unique_ptr<cake::analysis::report> report;  // large (fixed-capacity): kept on the heap
  int errors = 0, warnings = 0;
  std::string text, json;  // GCC-style text; the "cake.diagnostics/1" object
};

inline analysis_result analyze_program(const cake::program& p) {
  analysis_result r;
  r.report = std::make_unique<cake::analysis::report>();
  cake::analysis::analyze_into(p, *r.report);
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
  return r;
}

}  // namespace cake_cli
