// Compile-fail test: tcgen05 instructions are not admitted by sm_90a.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: instruction.not-admitted
// EXPECT: tcgen05 and tensor memory exist only on sm_100a
// EXPECT-GCC: array subscript value '-1'
// EXPECT-CLANG: in call to 'reject(0)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  k.role("load", warpgroups(1), [&](role& r) {
    r.tcgen05_fence_before();
    r.fence_proxy_async();
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
