// Compile-fail test: wgmma takes MN-major operands only for f16/bf16; fp8 must be K-major.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: instruction.wgmma-major
// EXPECT-GCC: array subscript value '-1'
// EXPECT-CLANG: in call to 'reject(0)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto sA = k.smem<e4m3>("sA", {64, 128}, swizzle::b128);
  auto sB = k.smem<e4m3>("sB", {128, 128}, swizzle::b128, major::mn);
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.wgmma(acc, sA, sB);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
