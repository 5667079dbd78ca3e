// Compile-fail test: the TMEM regions of all stages need more than 512 columns.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: resource.tmem-overflow
// EXPECT-GCC: array subscript value '1024'
// EXPECT-CLANG: in call to 'reject(1024)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_100a);
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto acc = k.tmem("acc", columns(256));
  auto acc2 = k.tmem("acc2", columns(256));
  k.pipeline("accp", stages(1)).carries(acc, acc2);
  k.role("mma", warps(1), [&](role& r) {
    r.tmem_alloc(acc);
    r.tcgen05_mma(acc, sA, sB);
    r.tmem_dealloc(acc);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
