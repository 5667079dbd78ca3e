// Compile-fail test: stmatrix stores 16-bit elements unchanged: convert first.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: [representation.stmatrix-dtype]
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto D = k.output<bf16>("D", dims("M", "N"));
  auto sD = k.smem<bf16>("sD", {64, 64}, swizzle::b128);
  k.role("epilogue", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    auto out = r.convert<bf16>(acc);
    r.stmatrix(sD, acc);
    r.fence_proxy_async();
    r.tma_store(D.tile(0, 0), sD);
    r.bulk_commit();
    r.bulk_wait(0);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
