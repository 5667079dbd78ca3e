#pragma once
// The compilation targets the JIT accepts, given as data ("sm_80", "sm_90a", "sm_100a").
// Matching is exact: "sm_90" is not "sm_90a" and nothing is substituted silently (hardware-facts §7:
// code built for an "a" target runs only on that exact compute capability). The DSL's target_id maps
// onto these names one to one; the JIT keeps its own small table so that it depends on no DSL header.
#include <array>
#include <string>
#include <string_view>

#include <cake/jit/error.hpp>

namespace cake::jit {

enum class arch : unsigned char { sm_80, sm_90a, sm_100a };

struct arch_info {
  arch id;
  std::string_view name;     // as spelled in --gpu-architecture=
  int nvrtc_number;          // as listed by nvrtcGetSupportedArchs (80, 90, 100)
  int cc_major, cc_minor;    // the compute capability the cubin is built for
  bool arch_specific;        // "a" target: runs only on exactly cc_major.cc_minor
};

inline constexpr std::array<arch_info, 3> arch_table{{
    {arch::sm_80, "sm_80", 80, 8, 0, false},
    {arch::sm_90a, "sm_90a", 90, 9, 0, true},
    {arch::sm_100a, "sm_100a", 100, 10, 0, true},
}};

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
