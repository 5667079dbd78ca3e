#pragma once
// Lookup of targets by id or by name. An unknown name is not mapped to anything close: callers get
// nullptr and report "unsupported target" with the list of supported names.
#include <string_view>

#include "sm100a.hpp"
#include "sm80.hpp"
#include "sm90a.hpp"
#include "target.hpp"

namespace cake {

inline constexpr target_id sm_80 = target_id::sm_80;
inline constexpr target_id sm_90a = target_id::sm_90a;
inline constexpr target_id sm_100a = target_id::sm_100a;

constexpr const target_info& target_of(target_id id) {
  switch (id) {
    case target_id::sm_80: return targets::sm80;
    case target_id::sm_90a: return targets::sm90a;
    default: return targets::sm100a;
  }
}
constexpr std::string_view to_string(target_id id) { return target_of(id).name; }

constexpr const target_info* find_target(std::string_view name) {
  for (const target_info* t : {&targets::sm80, &targets::sm90a, &targets::sm100a})
    if (t->name == name) return t;
  return nullptr;
}
inline constexpr std::string_view supported_targets = "sm_80, sm_90a, sm_100a";

// Is an M x N instruction shape legal on this target's unit?
constexpr bool mma_shape_legal(const target_info& t, unsigned unit, int m, int n) {
  for (int i = 0; i < t.mma_rule_count; ++i) {
    const auto& r = t.mma_rules[i];
    if (r.unit != unit) continue;
    if (m < r.m_min || m > r.m_max || (m - r.m_min) % r.m_step) return false;
    if (n < r.n_min || n > r.n_max || (n - r.n_min) % r.n_step) return false;
    return true;
  }
  return false;
}

}  // namespace cake
