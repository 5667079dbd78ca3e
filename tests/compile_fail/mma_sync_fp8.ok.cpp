// Compile-fail test: mma.sync on sm_80 has no fp8 operands.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: [instruction.mma-operand-dtype]
#include <cake/cake.hpp>

using namespace cake;

using T = bf16;
using ACC = f32;
constexpr program schedule() {
  auto k = kernel("k").target(sm_80);
  auto sA = k.smem<T>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<T>("sB", {64, 64}, swizzle::b128);
  k.role("mma", warps(4), [&](role& r) {
    auto acc = r.accumulator<ACC>("acc", {32, 32});
    r.mma_sync(acc, sA.rows(r.warp() / 2, 2), sB.rows(r.warp() % 2, 2));
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
