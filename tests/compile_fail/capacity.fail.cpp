// Compile-fail test: more named barriers than a Program holds.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: ir.capacity
// EXPECT-GCC: array subscript value '8'
// EXPECT-CLANG: in call to 'reject(8)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  constexpr const char* names[] = {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"};
  for (int i = 0; i < 9; ++i) k.named_barrier(names[i]);
  k.role("load", warps(1), [&](role& r) {
    r.tma_load(sA, A.tile(0, 0));
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
