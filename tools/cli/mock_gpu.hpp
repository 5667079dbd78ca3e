#pragma once
// The test hook of the GPU child (docs/evolve.md, "Testing without a GPU"): with CAKE_GPU_MOCK=FILE the
// `cake __gpu` child does not touch a GPU; it answers with the verdict that FILE scripts for the kernel,
// through the same files and parent-side handling as a real run (a scripted crash really aborts the
// child). CI has no GPU: this is how the tests drive `cake evolve`'s run and bench gates.
//
// FILE, one rule per line (the first that matches wins; '#' starts a comment):
//   gpu_s S                               GPU seconds each child reports (default 1; what budgets count)
//   run   PATTERN passed|failed|crashed   the verdict of `run` for kernels matching PATTERN
//   bench PATTERN passed|failed|crashed CAKE_MS PEER_MS
// PATTERN is `*` or NAME=VALUE,... : every pair must be among the candidate's parameters.
#include <sstream>
#include <string>
#include <vector>

#include <cake/cli/export.hpp>

#include "util.hpp"

namespace cake_cli {

struct mock_result {
  std::string status = "failed", cause, shapes_json, text, rule;
  double gpu_s = 1;
  bool crash = false;
};

inline std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

// `display` is "family[a=1,b=2]" (a family point) or a kernel name; `peer` the kernel's declared peer, which the
// bench rows name as a real run does (cublas when it declares none).
inline mock_result mock_verdict(const std::string& script, const std::string& display, bool bench, const std::vector<cake::cli::problem_shape>& shapes,
                                const std::string& peer = "cublas") {
  mock_result m;
  const auto text = read_file(script);
  if (!text) {
    m.cause = "CAKE_GPU_MOCK: cannot read " + script;
    return m;
  }
  const auto open = display.find('['), close = display.rfind(']');
  const auto params = open != std::string::npos && close != std::string::npos ? split_list(display.substr(open + 1, close - open - 1), ',') : std::vector<std::string>{};
  std::istringstream lines(*text);
  std::string line;
  bool matched = false;
  double cake_ms = 0, peer_ms = 0;
  while (std::getline(lines, line)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream w(line);
    std::string gate, pattern, verdict;
    if (!(w >> gate)) continue;
    if (gate == "gpu_s") {
      w >> m.gpu_s;
      continue;
    }
    if (!(w >> pattern >> verdict) || gate != (bench ? "bench" : "run") || matched) continue;
    bool hit = pattern == "*";
    if (!hit) {
      hit = true;
      for (const auto& want : split_list(pattern, ',')) {
        bool found = false;
        for (const auto& have : params) found = found || have == want;
        hit = hit && found;
      }
    }
    if (!hit) continue;
    matched = true;
    m.rule = trim(line);
    if (bench) w >> cake_ms >> peer_ms;
    m.status = verdict;
  }
  if (!matched) {
    m.status = "failed";
    m.cause = "CAKE_GPU_MOCK: no line of " + script + " scripts " + std::string(bench ? "bench" : "run") + " for " + display;
    return m;
  }
  if (m.status == "crashed") {
    m.crash = true;
    return m;
  }
  const bool ok = m.status == "passed";
  if (!ok) m.cause = "scripted: wrong results (CAKE_GPU_MOCK)";
  for (const auto& s : shapes) {
    std::string row = "{\"shape\":{";
    for (std::size_t i = 0; i < s.size(); ++i) row += std::string(i ? "," : "") + json_string(s[i].name) + ":" + std::to_string(s[i].value);
    row += "},\"ok\":" + std::string(ok ? "true" : "false") + ",\"rel_err\":" + (ok ? "0.001" : "1") + ",\"max_abs_err\":0,\"nonfinite\":0,\"padding_written\":0,\"tolerance\":0.01,\"seed\":0";
    if (!ok) row += ",\"cause\":\"scripted wrong result\"";
    if (bench && ok)
      row += ",\"cake_ms\":" + json_number(cake_ms) + ",\"peer\":" + json_string(peer.empty() ? "cublas" : peer) + ",\"peer_ms\":" + json_number(peer_ms) + ",\"ratio\":" + json_number(peer_ms / cake_ms) + ",\"runs\":0";
    m.shapes_json += (m.shapes_json.empty() ? "" : ",") + row + "}";
    m.text += "  (mock) " + std::string(ok ? "ok" : "WRONG") + "\n";
  }
  return m;
}

}  // namespace cake_cli
