// Compile-fail test: wgmma reads A from shared memory or from registers, not from a global tile.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: [memory.operand-space] wgmma reads A from shared memory or registers
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128);
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    auto a = r.fragment<bf16>("a", {64, 64});
    r.load(a, sA);
    r.wgmma(acc, A.tile(0, 0), sB);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
