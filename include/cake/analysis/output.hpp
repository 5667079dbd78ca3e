#pragma once
// Reports as text for people and editors (GCC style) and as JSON for agents. Run time only.
//
// Text, one block per diagnostic:
//   FILE:LINE:COL: error: [rule.id] message
//     at kernel › role R › loop k1 › op#3 kind(resource)
//   FILE:LINE:COL: note: a note that points at a place in the schedule
//     note: a note without a place
//     help: the suggested fix
// then coverage notes (`FILE:LINE:COL: note: [coverage] ...`) and a summary line.
//
// JSON: the schema "cake.diagnostics/1", documented in docs/diagnostics.md. Fields are only ever added
// within a schema version; a change in meaning gets a new version.
#include <cstdio>
#include <string>
#include <string_view>

#include "diagnostic.hpp"

namespace cake::analysis {

inline constexpr std::string_view json_schema = "cake.diagnostics/1";

struct text_options {
  bool coverage = true;  // list coverage notes
  bool summary = true;   // end with a one-line summary
};

namespace detail {

inline std::string location_text(const src_loc& l) {
  return std::string(l.file) + ':' + std::to_string(l.line) + ':' + std::to_string(l.column);
}

inline void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  out += '"';
}

inline void json_location(std::string& out, const src_loc& l) {
  if (!l.known()) {
    out += "null";
    return;
  }
  out += "{\"file\":";
  json_string(out, l.file);
  out += ",\"line\":" + std::to_string(l.line) + ",\"column\":" + std::to_string(l.column) + '}';
}

}  // namespace detail

inline std::string to_text(const diagnostic& d, std::string_view kernel = {}) {
  std::string s;
  s += d.loc.known() ? detail::location_text(d.loc) : std::string(kernel.empty() ? "cake" : kernel);
  s += ": ";
  s += to_string(d.sev());
  s += ": [";
  s += d.about().id;
  s += "] ";
  s += d.message.view();
  s += '\n';
  if (!d.path.empty()) s += "  at " + std::string(d.path.view()) + '\n';
  for (int i = 0; i < d.note_count; ++i) {
    const note& n = d.notes[i];
    if (n.loc.known()) s += detail::location_text(n.loc) + ": note: " + std::string(n.text.view()) + '\n';
    else s += "  note: " + std::string(n.text.view()) + '\n';
  }
  if (d.notes_dropped) s += "  note: (" + std::to_string(d.notes_dropped) + " more notes not shown)\n";
  if (!d.help.empty()) s += "  help: " + std::string(d.help.view()) + '\n';
  return s;
}

inline std::string to_text(const report& r, const text_options& opt = {}) {
  std::string s;
  for (const auto& d : r.diagnostics) s += to_text(d, r.kernel.view());
  if (r.diagnostics_dropped) s += std::string(r.kernel.view()) + ": note: " + std::to_string(r.diagnostics_dropped) + " more diagnostics were dropped\n";
  if (opt.coverage) {
    for (const auto& n : r.coverage) {
      s += n.loc.known() ? detail::location_text(n.loc) : std::string(r.kernel.view());
      s += ": note: [coverage] ";
      if (n.rule != rule_id::count_) s += std::string(to_string(n.rule)) + ": ";
      s += std::string(n.text.view()) + '\n';
    }
  }
  if (opt.summary) {
    s += std::string(r.kernel.view()) + " (" + std::string(r.target) + "): " + std::to_string(r.errors) + " error(s), " +
         std::to_string(r.warnings) + " warning(s); rules: " + std::to_string(r.count(rule_status::passed)) + " passed, " +
         std::to_string(r.count(rule_status::failed)) + " failed, " + std::to_string(r.count(rule_status::partial)) + " partial, " +
         std::to_string(r.count(rule_status::not_run)) + " not run; protocol: " + std::to_string(r.protocol_runs) + " run(s), " +
         std::to_string(r.protocol_steps) + " steps\n";
  }
  return s;
}

inline std::string to_json(const report& r) {
  using detail::json_location;
  using detail::json_string;
  std::string o = "{\"schema\":";
  json_string(o, json_schema);
  o += ",\"kernel\":";
  json_string(o, r.kernel.view());
  o += ",\"target\":";
  json_string(o, r.target);
  o += ",\"ok\":";
  o += r.ok() ? "true" : "false";
  o += ",\"summary\":{\"errors\":" + std::to_string(r.errors) + ",\"warnings\":" + std::to_string(r.warnings) +
       ",\"notes\":" + std::to_string(r.notes) + ",\"diagnostics_dropped\":" + std::to_string(r.diagnostics_dropped) +
       ",\"coverage_notes\":" + std::to_string(r.coverage.size()) + ",\"ops\":" + std::to_string(r.ops) +
       ",\"rules\":{\"passed\":" + std::to_string(r.count(rule_status::passed)) + ",\"failed\":" + std::to_string(r.count(rule_status::failed)) +
       ",\"partial\":" + std::to_string(r.count(rule_status::partial)) + ",\"not_run\":" + std::to_string(r.count(rule_status::not_run)) +
       "},\"protocol\":{\"runs\":" + std::to_string(r.protocol_runs) + ",\"steps\":" + std::to_string(r.protocol_steps) +
       ",\"k_trips\":" + std::to_string(r.k_trips) + ",\"tiles\":" + std::to_string(r.tiles) + "}}";
  o += ",\"diagnostics\":[";
  for (std::size_t i = 0; i < r.diagnostics.size(); ++i) {
    const diagnostic& d = r.diagnostics[i];
    if (i) o += ',';
    o += "{\"rule\":";
    json_string(o, d.about().id);
    o += ",\"category\":";
    json_string(o, to_string(d.cat()));
    o += ",\"severity\":";
    json_string(o, to_string(d.sev()));
    o += ",\"message\":";
    json_string(o, d.message.view());
    o += ",\"location\":";
    json_location(o, d.loc);
    o += ",\"op\":" + (d.op >= 0 ? std::to_string(d.op) : std::string("null"));
    o += ",\"path\":";
    json_string(o, d.path.view());
    o += ",\"numbers\":{";
    for (int k = 0; k < d.number_count; ++k) {
      if (k) o += ',';
      json_string(o, d.numbers[k].name);
      o += ':' + std::to_string(d.numbers[k].value);
    }
    o += "},\"notes\":[";
    for (int k = 0; k < d.note_count; ++k) {
      if (k) o += ',';
      o += "{\"message\":";
      json_string(o, d.notes[k].text.view());
      o += ",\"location\":";
      json_location(o, d.notes[k].loc);
      o += '}';
    }
    o += "],\"help\":";
    if (d.help.empty()) o += "null";
    else json_string(o, d.help.view());
    o += '}';
  }
  o += "],\"coverage\":[";
  for (std::size_t i = 0; i < r.coverage.size(); ++i) {
    const coverage_note& n = r.coverage[i];
    if (i) o += ',';
    o += "{\"rule\":";
    if (n.rule == rule_id::count_) o += "null";
    else json_string(o, to_string(n.rule));
    o += ",\"op\":" + (n.op >= 0 ? std::to_string(n.op) : std::string("null"));
    o += ",\"location\":";
    json_location(o, n.loc);
    o += ",\"message\":";
    json_string(o, n.text.view());
    o += '}';
  }
  o += "],\"rules\":{";
  for (int i = 0; i < rule_count; ++i) {
    if (i) o += ',';
    json_string(o, rule_table[i].id);
    o += ':';
    json_string(o, to_string(r.status[i]));
  }
  o += "}}";
  return o;
}

}  // namespace cake::analysis
