#pragma once
// Helpers shared by the ir/plan unit tests: look-ups of build errors and of ops in a Program.
#include <string_view>

#include "cake/cake.hpp"

namespace cake_test {

inline int count_errors(const cake::program& p, std::string_view rule) {
  int n = 0;
  for (const auto& e : p.errors) n += e.rule == rule;
  return n;
}
inline bool has_error(const cake::program& p, std::string_view rule, long long value) {
  for (const auto& e : p.errors)
    if (e.rule == rule && e.value == value) return true;
  return false;
}
inline const cake::build_error* first_error(const cake::program& p, std::string_view rule) {
  for (const auto& e : p.errors)
    if (e.rule == rule) return &e;
  return nullptr;
}
// Index of the n-th op of a kind, -1 if there is none.
inline int find_op(const cake::program& p, cake::op_kind k, int nth = 0) {
  for (std::size_t i = 0; i < p.ops.size(); ++i)
    if (p.ops[i].kind == k && nth-- == 0) return static_cast<int>(i);
  return -1;
}

}  // namespace cake_test
