// A type-level rejection: the A and B operands of a wgmma have different dtypes (a static_assert whose
// message starts with [instruction.mma-dtype-mismatch]).
#include <cake/cake.hpp>

using namespace cake;

constexpr program mixed() {
  auto k = kernel("mixed").target(sm_90a);
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<f16>("sB", {128, 64}, swizzle::b128);
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.wgmma(acc, sA, sB);
  });
  return k.build();
}

CAKE_EXPORT(mixed_dtypes, mixed())
