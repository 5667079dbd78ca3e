#pragma once
// The value of an index condition: an expression tree of index leaves, immediates, comparisons, && || !,
// + - * min max (what r.when takes and what a uniform mask compares). One evaluator for every pass that runs
// a schedule at concrete points: the protocol executor (per unit) and the output-coverage enumeration (per
// point of the launch). The caller supplies the value of an index leaf; anything else (a register value, a
// float function) is 0 here, so a pass must first ask whether the tree is an index condition at all.
#include "context.hpp"

namespace cake::analysis {

template <class LeafValue>
constexpr long long index_condition_value(const program& p, int n, const LeafValue& leaf, int depth = 64) {
  if (n < 0 || n >= static_cast<int>(p.exprs.size()) || depth < 0) return 0;
  const expr_node& x = p.exprs[n];
  auto k = [&](int i) { return index_condition_value(p, x.kid[i], leaf, depth - 1); };
  switch (x.fn) {
    case math_fn::index: return leaf(x.ix);
    case math_fn::imm: return static_cast<long long>(__builtin_bit_cast(float, x.bits));
    case math_fn::lt: return k(0) < k(1);
    case math_fn::le: return k(0) <= k(1);
    case math_fn::gt: return k(0) > k(1);
    case math_fn::ge: return k(0) >= k(1);
    case math_fn::eq: return k(0) == k(1);
    case math_fn::ne: return k(0) != k(1);
    case math_fn::and_: return k(0) && k(1);
    case math_fn::or_: return k(0) || k(1);
    case math_fn::not_: return !k(0);
    case math_fn::add: return k(0) + k(1);
    case math_fn::sub: return k(0) - k(1);
    case math_fn::mul: return k(0) * k(1);
    case math_fn::min: { const long long a = k(0), b = k(1); return a < b ? a : b; }
    case math_fn::max: { const long long a = k(0), b = k(1); return a > b ? a : b; }
    default: return 0;
  }
}

// Whether node n is an index condition whose every leaf the caller can evaluate (leaf_ok): comparisons, && || !,
// + - * min max over index leaves and immediates. A register value or a float function makes it not one.
template <class LeafOk>
constexpr bool is_index_condition(const program& p, int n, const LeafOk& leaf_ok, int depth = 16) {
  if (n < 0 || n >= static_cast<int>(p.exprs.size()) || depth < 0) return false;
  const expr_node& x = p.exprs[n];
  auto k = [&](int i) { return is_index_condition(p, x.kid[i], leaf_ok, depth - 1); };
  switch (x.fn) {
    case math_fn::index: return leaf_ok(x.ix);
    case math_fn::imm: return true;
    case math_fn::not_: return k(0);
    case math_fn::lt: case math_fn::le: case math_fn::gt: case math_fn::ge: case math_fn::eq: case math_fn::ne:
    case math_fn::and_: case math_fn::or_: case math_fn::add: case math_fn::sub: case math_fn::mul: case math_fn::min: case math_fn::max:
      return k(0) && k(1);
    default: return false;
  }
}

}  // namespace cake::analysis
