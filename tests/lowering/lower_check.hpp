#pragma once
// Shared by the lowering tests of register compute and of the kernels that use it: a schedule is built
// without build errors, analyzed clean (no errors, no warnings), lowered, and assembled by NVRTC for its
// target with no register spills and no stack frame. Also: the targets the op table lowers a set of op
// kinds on (so that a test covers every one of them), and PTX searches.
#include <doctest/doctest.h>

#include <initializer_list>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <cake/analysis.hpp>
#include <cake/cake.hpp>
#include <cake/analysis/output.hpp>
#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>

namespace lower_check {

struct built {
  cake::lower::lowered_kernel lowered;
  cake::jit::artifacts art;
  const std::string& ptx() const { return art.ptx; }
  const std::string& source() const { return lowered.source; }
};

// specialized: (dim label, value) pairs baked in at lowering. stack_frame_ok: a stack frame without spills
// is accepted (registers arrays indexed at run time live in local memory; see the caller's note).
// spill_bytes_ok: spill stores and loads of up to that many bytes each are accepted (with their stack frame),
// for a schedule whose documented fastest form spills a little (the caller says why).
inline built lower_and_build(const cake::program& p, std::initializer_list<std::pair<const char*, long long>> specialized = {},
                             bool stack_frame_ok = false, int spill_bytes_ok = 0) {
  built b;
  INFO("kernel " << p.kernel_name.view() << " (" << to_string(p.target) << ")");
  if (!p.errors.empty())
    FAIL("build error " << cake::to_text(p.errors[0]));
  const auto report = cake::analyze(p);
  INFO(cake::analysis::to_text(report));
  CHECK(report.errors == 0);
  CHECK(report.warnings == 0);
  cake::lower::emit_options o;
  for (const auto& [label, value] : specialized) {
    REQUIRE_MESSAGE(p.find_dim(label) >= 0, "no dim " << label);
    o.specialized.push_back({p.find_dim(label), value});
  }
  b.lowered = cake::lower::lower(p, o);
  REQUIRE_MESSAGE(b.lowered.ok, b.lowered.error);
  b.art = cake::jit::build(b.lowered.source, b.lowered.entry, std::string(to_string(p.target)));
  REQUIRE_MESSAGE(b.art.ok, b.art.diagnostics());
  CHECK_FALSE(b.art.cubin.empty());
  CHECK(b.art.ptx.find(".target " + std::string(to_string(p.target))) != std::string::npos);
  CHECK_MESSAGE(b.art.resources.spill_stores <= spill_bytes_ok, b.art.resources.registers << " registers");
  CHECK(b.art.resources.spill_loads <= spill_bytes_ok);
  if (!stack_frame_ok && spill_bytes_ok == 0) CHECK(b.art.resources.stack_frame == 0);
  return b;
}

inline bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }
inline bool has_re(const std::string& text, const std::string& pattern) { return std::regex_search(text, std::regex(pattern)); }
inline int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The targets on which the op table lowers every one of `kinds` (and which admit them).
inline std::vector<cake::target_id> lowering_targets(std::initializer_list<cake::op_kind> kinds) {
  std::vector<cake::target_id> out;
  for (cake::target_id t : {cake::target_id::sm_80, cake::target_id::sm_90a, cake::target_id::sm_100a}) {
    bool all = true;
    for (cake::op_kind k : kinds) {
      const auto& i = cake::info(k);
      all = all && i.lowered(t) && (i.needs == cake::feature::count_ || cake::target_of(t).admitted(i.needs));
    }
    if (all) out.push_back(t);
  }
  return out;
}

}  // namespace lower_check
