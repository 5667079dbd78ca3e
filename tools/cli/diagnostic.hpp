#pragma once
// Diagnostics the tool itself produces (compile errors of a schedule file, tool-level failures), in the
// analyzer's shape: the same GCC-style text and the same JSON fields as a diagnostic of the schema
// "cake.diagnostics/1" (docs/diagnostics.md), so an agent reads one format whatever found the problem.
#include <optional>
#include <string>
#include <vector>

#include "util.hpp"

namespace cake_cli {

struct note {
  std::string message;
  std::string file;
  int line = 0, column = 0;
};

struct diagnostic {
  std::string rule;      // "resource.smem-overflow", or a tool rule: "cli.compile-error", ...
  std::string category;  // the rule's prefix: "resource", "cli", ...
  std::string severity = "error";
  std::string message;
  std::string file;      // empty: not about a place
  int line = 0, column = 0;
  std::optional<long long> value;  // the number a compile-time check reported
  std::vector<note> notes;
  std::string help;
};

inline diagnostic make_diagnostic(std::string rule, std::string message, std::string help = {}) {
  diagnostic d;
  d.category = rule.substr(0, rule.find('.'));
  d.rule = std::move(rule);
  d.message = std::move(message);
  d.help = std::move(help);
  return d;
}

inline std::string location_text(const std::string& file, int line, int column) {
  std::string s = display_path(file);
  if (line > 0) s += ":" + std::to_string(line);
  if (line > 0 && column > 0) s += ":" + std::to_string(column);
  return s;
}

inline std::string to_text(const diagnostic& d) {
  std::string s = (d.file.empty() ? std::string("cake") : location_text(d.file, d.line, d.column)) + ": " + d.severity + ": [" + d.rule + "] " + d.message + "\n";
  for (const auto& n : d.notes) {
    if (!n.file.empty()) s += location_text(n.file, n.line, n.column) + ": note: " + n.message + "\n";
    else s += "  note: " + n.message + "\n";
  }
  if (!d.help.empty()) s += "  help: " + d.help + "\n";
  return s;
}

inline std::string json_location(const std::string& file, int line, int column) {
  if (file.empty()) return "null";
  return "{\"file\":" + json_string(display_path(file)) + ",\"line\":" + std::to_string(line) + ",\"column\":" + std::to_string(column) + "}";
}

inline std::string to_json(const diagnostic& d) {
  std::string o = "{\"rule\":" + json_string(d.rule) + ",\"category\":" + json_string(d.category) + ",\"severity\":" + json_string(d.severity) +
                  ",\"message\":" + json_string(d.message) + ",\"location\":" + json_location(d.file, d.line, d.column) + ",\"op\":null,\"path\":\"\"" +
                  ",\"numbers\":{";
  if (d.value) o += "\"value\":" + std::to_string(*d.value);
  o += "},\"notes\":[";
  for (std::size_t i = 0; i < d.notes.size(); ++i)
    o += std::string(i ? "," : "") + "{\"message\":" + json_string(d.notes[i].message) + ",\"location\":" +
         json_location(d.notes[i].file, d.notes[i].line, d.notes[i].column) + "}";
  o += "],\"help\":" + (d.help.empty() ? std::string("null") : json_string(d.help)) + "}";
  return o;
}

}  // namespace cake_cli
