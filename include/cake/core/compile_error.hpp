#pragma once
// Compile-time rejection that shows the rule id, a message and a number in the compiler's own error.
//
// C++20 static_assert messages must be literals, so a check that runs during constant evaluation cannot
// format numbers into them. Instead `reject<Rule, Message>(value)` reads element `value` of a one-element
// array whose type names the rule and the message. g++ 12 then prints, e.g.
//   error: array subscript value '245760' is outside the bounds of array
//   'cake::compile_error<"resource.smem-overflow", "shared memory needed (bytes) exceeds ...">::the_value_is'
// and its "in 'constexpr' expansion of" trace names the user's builder call and its line. clang 14 says
// "note: in call to 'reject(245760)'" and quotes the fail<"rule", "message"> line of the builder, then
// the user's call. (tests/compile_fail checks both forms.)
// Outside constant evaluation reject() does nothing: the builder records the same finding as a build
// error in the Program instead (see ir/kernel_builder.hpp), which the analyzer reports.
#include <type_traits>

#include "fixed_string.hpp"

namespace cake {

template <fixed_string Rule, fixed_string Message>
struct compile_error {
  static constexpr long long the_value_is[1] = {0};
};

// Values below 1 are shown shifted by one (0 shows as -1) so that they are out of bounds too.
template <fixed_string Rule, fixed_string Message>
constexpr long long reject(long long value) {
  if (std::is_constant_evaluated()) return compile_error<Rule, Message>::the_value_is[value < 1 ? value - 1 : value];
  return 0;
}

}  // namespace cake
