// Compile-fail test: a TMEM region holds 1..512 columns.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: memory.tmem-columns
// EXPECT-GCC: array subscript value '640'
// EXPECT-CLANG: in call to 'reject(640)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_100a);
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto acc = k.tmem("acc", columns(640));
  k.role("mma", warps(1), [&](role& r) {
    r.tmem_alloc(acc);
    r.tcgen05_mma(acc, sA, sB);
    r.tmem_dealloc(acc);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
