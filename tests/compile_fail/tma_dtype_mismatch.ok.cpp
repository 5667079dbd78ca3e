// Compile-fail test: a TMA load copies bytes: smem tile and tensor must have the same dtype.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: [representation.tma-dtype]
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  k.role("load", warps(1), [&](role& r) {
    r.tma_load(sA, A.tile(0, 0));
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
