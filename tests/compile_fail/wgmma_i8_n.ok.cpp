// Compile-fail test: wgmma with i8 operands: N above 32 must be a multiple of 16.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: instruction.mma-shape
// EXPECT-GCC: array subscript value '40'
// EXPECT-CLANG: in call to 'reject(40)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto sA = k.smem<i8>("sA", {64, 128}, swizzle::b128);
  auto sB = k.smem<i8>("sB", {48, 128}, swizzle::b128);
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<i32>("acc", {64, 48});
    r.wgmma(acc, sA, sB);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
