#pragma once
// cake::analyze(program) -> report: builder errors recorded in the Program, then every pass of the
// pass list below on the Program and its plan (computed once here), then coverage. The same function
// runs at compile time inside cake::verify.
#include "control.hpp"
#include "counter.hpp"
#include "coverage.hpp"
#include "global_access.hpp"
#include "griddep.hpp"
#include "index_value.hpp"
#include "instruction.hpp"
#include "memory.hpp"
#include "protocol.hpp"
#include "representation.hpp"
#include "resource.hpp"
#include "structure.hpp"
#include "sync.hpp"
#include "tile_coverage.hpp"
#include "output_coverage.hpp"

namespace cake::analysis {

// The analyzer's passes, in the order they run (rules.hpp names the pass of every rule).
struct pass_entry {
  pass_id id;
  void (*run)(context&);
};
inline constexpr pass_entry pass_list[] = {
    {pass_id::resource, &check_resource},     {pass_id::instruction, &check_instruction}, {pass_id::representation, &check_representation},
    {pass_id::memory, &check_memory},         {pass_id::memory, &check_global_access},    {pass_id::memory, &check_tile_coverage}, {pass_id::memory, &check_output_coverage},
    {pass_id::memory, &check_dims_sized},
    {pass_id::sync, &check_sync_static},      {pass_id::sync, &check_griddep},            {pass_id::sync, &check_index_values},
    {pass_id::sync, &check_counters},
    {pass_id::sync, &check_control},          {pass_id::protocol, &check_protocol},       {pass_id::coverage, &check_coverage},
};

namespace detail {

// Build errors come first. One the analyzer also found (it re-checks every builder rule it can, with
// the numbers and notes of the plan) is reported once, in the analyzer's words.
constexpr void merge_build_errors(context& c) {
  if (c.p.errors.empty() && c.p.errors_dropped == 0) return;
  const auto found = c.out.diagnostics;
  c.out.diagnostics.count = 0;
  for (const auto& e : c.p.errors) {
    rule_id r = find_rule(e.rule);
    if (r == rule_id::count_) r = rule_id::ir_malformed;
    bool dup = false;
    for (const auto& d : found) dup = dup || d.rule == r;
    if (dup) continue;
    diagnostic* d = push_diagnostic(c, r, -1, e.loc);
    if (!d) break;
    write_role_path(d->path, c.p, -1);
    if (r == rule_id::ir_malformed) d->message << '[' << e.rule << "] ";
    // Builder messages end in "(value: what the value is)": show it as "(what the value is: N)".
    const value_note note = split_value_note(e.message);
    if (!note.what.empty()) d->message << note.head << '(' << note.what << ": " << e.value << ')';
    else d->message << e.message << " (value " << e.value << ')';
    d->num("value", e.value);
  }
  for (const auto& d : found)
    if (!c.out.diagnostics.push_back(d)) ++c.out.diagnostics_dropped;
  if (c.p.errors_dropped > 0) {
    fixed_text<232> t;
    t << "the builder found " << c.p.errors_dropped << " more problem(s) than a Program records; fix the ones above and build again";
    add_coverage(c, rule_id::count_, -1, c.p.loc, t.view());
  }
}

// Did the builder fail to record the schedule as written (an `ir.*` error)? Then the Program is not
// what the schedule says, and only the builder's findings are reported.
constexpr bool recorded_as_written(const program& p) {
  for (const auto& e : p.errors)
    if (e.rule.substr(0, 3) == "ir.") return false;
  return true;
}

constexpr void finish(context& c, bool ran) {
  report& r = c.out;
  for (int i = 0; i < rule_count; ++i) {
    const pass_id pass = rule_table[i].pass;
    const bool runs = pass == pass_id::structure || pass == pass_id::builder || (ran && pass != pass_id::type);
    r.status[i] = runs ? rule_status::passed : rule_status::not_run;
  }
  for (const auto& n : r.coverage)
    if (n.rule != rule_id::count_) r.status[static_cast<int>(n.rule)] = rule_status::partial;
  for (const auto& d : r.diagnostics) {
    r.status[static_cast<int>(d.rule)] = rule_status::failed;
    switch (d.sev()) {
      case severity::error: ++r.errors; break;
      case severity::warning: ++r.warnings; break;
      default: ++r.notes; break;
    }
  }
}

}  // namespace detail

// Fills `out` (which must be empty). Use this form to avoid copying a report.
constexpr void analyze_into(const program& p, report& out, const analysis_options& opt = {}) {
  out.kernel = p.kernel_name;
  out.target = to_string(p.target);
  out.ops = static_cast<int>(p.ops.size());
  plan::kernel_plan plan{};
  context c{p, plan, opt, out};
  // A Program the builder could not record as written is not analyzed further (its indices may not even
  // be consistent); otherwise the structure check guards every pass.
  const bool ran = detail::recorded_as_written(p) && check_structure(c);
  if (ran) {
    plan = plan::make_plan(p);
    for (const auto& pass : pass_list) pass.run(c);
  }
  detail::merge_build_errors(c);
  detail::finish(c, ran);
}

constexpr report analyze(const program& p, const analysis_options& opt = {}) {
  report r;
  analyze_into(p, r, opt);
  return r;
}

}  // namespace cake::analysis

namespace cake {
using analysis::analysis_options;
using analysis::analyze;
}  // namespace cake
