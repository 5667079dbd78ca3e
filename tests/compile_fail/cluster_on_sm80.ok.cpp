// Compile-fail test: sm_80 has no thread-block clusters.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: instruction.not-admitted
// EXPECT: clusters need sm_90a or sm_100a
// EXPECT-GCC: array subscript value '2'
// EXPECT-CLANG: in call to 'reject(2)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_80);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  k.role("copy", warps(1), [&](role& r) {
    r.cp_async(sA, A.tile(0, 0));
    r.cp_async_commit();
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
