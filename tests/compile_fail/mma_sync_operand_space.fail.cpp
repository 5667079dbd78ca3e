// Compile-fail test: mma_sync reads B from shared memory or registers, not from tensor memory.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: [memory.operand-space] mma_sync reads B from shared memory or registers
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_100a);
  auto sA = k.smem<bf16>("sA", {16, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {16, 64}, swizzle::b128);
  auto t = k.tmem("t", columns(64));
  k.role("w", warps(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {16, 16});
    r.fill(acc, 0.0f);
    r.mma_sync(acc, sA, t);
    (void)sB;
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
