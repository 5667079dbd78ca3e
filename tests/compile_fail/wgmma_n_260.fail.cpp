// Compile-fail test: wgmma N (the accumulator's columns) must be 8..256 in steps of 8.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: instruction.mma-shape
// EXPECT-GCC: array subscript value '260'
// EXPECT-CLANG: in call to 'reject(260)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 260});
    r.wgmma(acc, sA, sB);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
