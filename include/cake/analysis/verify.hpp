#pragma once
// The compile-time gate: static_assert(cake::verify(program)) runs cake::analyze during constant
// evaluation. When it finds an error, it calls rule_failed<"rule.id">("rule.id", op), whose constructor
// calls the non-constexpr function first_error_at_op<N>(); the compiler's error then names both:
//   g++ 12:   in 'constexpr' expansion of 'cake::analysis::gate::rule_failed<...{"sync.expect-tx-mismatch"}>(...)'
//             error: call to non-'constexpr' function 'void cake::analysis::gate::first_error_at_op() [with int N = 3]'
//   clang 14: note: non-constexpr function 'first_error_at_op<3>' cannot be used in a constant expression
//             note: in call to 'rule_failed(&"sync.expect-tx-mismatch"[0], 3)'
// N is the op number the printer and the runtime diagnostics use; -1 means a finding about a
// declaration rather than an op. The runtime analyzer (cake::analyze) gives the full message.
#include <utility>

#include "../core/fixed_string.hpp"
#include "analyze.hpp"

namespace cake::analysis::gate {

// Not constexpr on purpose: reaching it during constant evaluation is the error.
template <int N>
inline void first_error_at_op() {}

using op_marker = void (*)();
template <class Seq>
struct op_markers;
template <int... I>
struct op_markers<std::integer_sequence<int, I...>> {
  static constexpr op_marker at[sizeof...(I)] = {&first_error_at_op<I - 1>...};
};
using markers = op_markers<std::make_integer_sequence<int, static_cast<int>(capacity::ops) + 1>>;

template <fixed_string Rule>
struct rule_failed {
  // `rule` repeats the id as an argument: clang prints argument values, not template arguments.
  constexpr rule_failed(const char* rule, int op) {
    (void)rule;
    const int i = op < -1 || op >= static_cast<int>(capacity::ops) ? 0 : op + 1;
    markers::at[i]();
  }
};

constexpr void fail(rule_id r, int op) {
  switch (r) {
#define CAKE_X(e, id, c, s, p, doc) \
  case rule_id::e: rule_failed<id>{id, op}; break;
    CAKE_RULES(CAKE_X)
#undef CAKE_X
    default: break;
  }
}

}  // namespace cake::analysis::gate

namespace cake {

// True when the analyzer finds no error (warnings and coverage notes do not fail it). In a constant
// expression a failure does not return false: it stops compilation naming the rule and the op.
constexpr bool verify(const program& p, const analysis::analysis_options& opt = {}) {
  analysis::report r;
  analysis::analyze_into(p, r, opt);
  if (const analysis::diagnostic* d = r.first_error()) {
    analysis::gate::fail(d->rule, d->op);
    return false;
  }
  return true;
}

}  // namespace cake
