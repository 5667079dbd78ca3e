// Compile-fail test: wgmma is issued by warpgroups, not by a warps() role.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: instruction.wgmma-unit
// EXPECT-GCC: array subscript value '-1'
// EXPECT-CLANG: in call to 'reject(0)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  k.role("math", warps(4), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.wgmma(acc, sA, sB);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
