#pragma once
// What the analyzer reports. A diagnostic names its rule (id, category, severity come from
// rules.hpp), the op it is about (op#N, the same number the printer shows), the source line of the
// builder call, the path `kernel › role › loop › op#N kind(resource)`, the numbers behind the finding
// (named, so that agents can read them without parsing text), notes that point at the other side of a
// handoff with their own locations, and a fix hint. Coverage notes say what was not checked; they are
// never counted as passed.
//
// Everything here is a literal type with fixed capacity, so reports are built the same way at run time
// and in constant evaluation (cake::verify).
#include <cstdint>
#include <string_view>

#include "../core/fixed_string.hpp"
#include "../core/source_location.hpp"
#include "../core/static_vector.hpp"
#include "rules.hpp"
#include "text.hpp"

namespace cake::analysis {

struct number {
  std::string_view name;  // a literal from the pass: "expected_bytes", "delivered_bytes", ...
  long long value = 0;
};

struct note {
  fixed_text<168> text;
  src_loc loc;  // unknown (line 0) when the note is not about a place in the schedule
};

struct diagnostic {
  static constexpr int max_numbers = 6, max_notes = 6;
  rule_id rule = rule_id::count_;
  int op = -1;  // op id, -1 when the finding is about a declaration or the whole kernel
  src_loc loc;
  fixed_text<256> message;
  fixed_text<200> path;
  number numbers[max_numbers]{};
  int number_count = 0;
  note notes[max_notes]{};
  int note_count = 0;
  int notes_dropped = 0;
  fixed_text<224> help;

  constexpr const rule_info& about() const { return info(rule); }
  constexpr severity sev() const { return about().sev; }
  constexpr category cat() const { return about().cat; }

  constexpr diagnostic& num(std::string_view name, long long value) {
    if (number_count < max_numbers) numbers[number_count++] = {name, value};
    return *this;
  }
  // A new note; when the notes are full, writes go to a scratch note and the drop is counted.
  constexpr fixed_text<168>& add_note(src_loc at = {}) {
    if (note_count < max_notes) {
      notes[note_count].loc = at;
      return notes[note_count++].text;
    }
    ++notes_dropped;
    scratch_ = {};
    return scratch_.text;
  }

 private:
  note scratch_{};
};

// Something the analyzer did not (fully) check. `rule` names the rule whose verdict it limits
// (rule_id::count_ for a general remark); such rules are reported as partial, never as passed.
struct coverage_note {
  rule_id rule = rule_id::count_;
  int op = -1;
  src_loc loc;
  fixed_text<232> text;
};

enum class rule_status : std::uint8_t {
  not_run,  // the rule's check cannot run on a Program (type-level static_asserts)
  passed,   // checked, nothing found, and nothing about it was left unmodelled
  failed,   // at least one diagnostic
  partial,  // nothing found, but a coverage note limits what was checked
};
constexpr std::string_view to_string(rule_status s) {
  return s == rule_status::not_run ? "not_run" : s == rule_status::passed ? "passed" : s == rule_status::failed ? "failed" : "partial";
}

struct report {
  static constexpr int max_diagnostics = 48, max_coverage = 16;
  name kernel;
  std::string_view target;
  static_vector<diagnostic, max_diagnostics> diagnostics;
  int diagnostics_dropped = 0;
  static_vector<coverage_note, max_coverage> coverage;
  int coverage_dropped = 0;
  rule_status status[rule_count]{};

  int errors = 0, warnings = 0, notes = 0;
  int ops = 0;              // ops of the Program
  int protocol_runs = 0;    // executions of the abstract protocol (one per trip-count setting)
  long protocol_steps = 0;  // ops executed by the abstract protocol, all runs together
  int k_trips = 0;          // trips used for loops over the reduce axis (the longer run)
  int tiles = 0;            // tile-loop iterations used for persistent kernels

  constexpr bool ok() const { return errors == 0; }
  constexpr int count(rule_status s) const {
    int n = 0;
    for (auto v : status) n += v == s;
    return n;
  }
  constexpr bool fired(rule_id r) const {
    for (const auto& d : diagnostics)
      if (d.rule == r) return true;
    return false;
  }
  // The first diagnostic of error severity, nullptr if none.
  constexpr const diagnostic* first_error() const {
    for (const auto& d : diagnostics)
      if (d.sev() == severity::error) return &d;
    return nullptr;
  }
};

}  // namespace cake::analysis
