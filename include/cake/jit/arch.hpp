#pragma once
// The compilation targets the JIT accepts, given as data ("sm_80", "sm_90a", "sm_100a").
// Matching is exact: "sm_90" is not "sm_90a" and nothing is substituted silently (hardware-facts §7:
// code built for an "a" target runs only on that exact compute capability). Names and compute
// capabilities come from the target tables (target/*.hpp), the one source of those facts; this table
// adds what only the JIT needs.
#include <array>
#include <string>
#include <string_view>

#include <cake/jit/error.hpp>
#include <cake/target/targets.hpp>

namespace cake::jit {

enum class arch : unsigned char { sm_80, sm_90a, sm_100a };

struct arch_info {
  arch id;
  std::string_view name;     // as spelled in --gpu-architecture=
  int nvrtc_number;          // as listed by nvrtcGetSupportedArchs (80, 90, 100)
  int cc_major, cc_minor;    // the compute capability the cubin is built for
  bool arch_specific;        // "a" target: runs only on exactly cc_major.cc_minor
};

constexpr arch_info from_target(arch id, const target_info& t, int nvrtc_number, bool arch_specific) {
  return {id, t.name, nvrtc_number, t.cc_major, t.cc_minor, arch_specific};
}
inline constexpr std::array<arch_info, 3> arch_table{{
    from_target(arch::sm_80, targets::sm80, 80, false),
    from_target(arch::sm_90a, targets::sm90a, 90, true),
    from_target(arch::sm_100a, targets::sm100a, 100, true),
}};
// jit::arch and cake::target_id name the same targets in the same order.
static_assert(static_cast<int>(arch::sm_90a) == static_cast<int>(target_id::sm_90a) && arch_table.size() == target_count);

constexpr const arch_info& info(arch a) { return arch_table[static_cast<int>(a)]; }
constexpr std::string_view to_string(arch a) { return info(a).name; }

// "sm_80, sm_90a, sm_100a": for messages.
inline std::string supported_arch_list() {
  std::string s;
  for (const auto& a : arch_table) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

// Parses a target name; throws jit::error naming the accepted spellings, with a hint for near misses
// ("sm_90" -> "did you mean sm_90a?").
inline arch parse_arch(std::string_view name) {
  for (const auto& a : arch_table)
    if (a.name == name) return a.id;
  std::string hint;
  for (const auto& a : arch_table) {
    std::string_view base = a.name;
    if (a.arch_specific) base.remove_suffix(1);  // "sm_90a" -> "sm_90"
    const std::string bare(base.substr(3));        // "90"
    if (name == base || name == bare || name == bare + "a" || name == "compute_" + bare ||
        name == "compute_" + bare + "a")
      hint = " (did you mean " + std::string(a.name) + "? Cake compiles exactly the named target and " +
             "never substitutes one for another)";
  }
  throw error("unknown target '" + std::string(name) + "': the JIT accepts exactly " + supported_arch_list() +
              hint);
}

}  // namespace cake::jit
