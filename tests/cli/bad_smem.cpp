// A schedule the builder rejects at compile time: eight 32 KiB copies of an smem tile need 262144 bytes,
// more than sm_90a's 232448 (resource.smem-overflow, reported at the k.build() call, value 262144).
#include <cake/cake.hpp>

using namespace cake;

constexpr program too_much_smem() {
  auto k = kernel("too_much_smem").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {256, 64}, swizzle::b128, copies(8));
  k.role("load", warps(1), [&](role& r) { r.tma_load(sA, A.tile(0, 0)); });
  return k.build();
}

CAKE_EXPORT(too_much_smem, too_much_smem())
