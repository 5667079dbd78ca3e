// A type-level rejection (an MMA of bf16 x f16 operands: a static_assert) three loop bodies deep
// (issue 10, localization): reported at the op's own line, not at an enclosing for_each / loop /
// for_range, with g++ and with clang.
#include <cake/cake.hpp>

using namespace cake;

constexpr program nested() {
  auto k = kernel("nested").target(sm_90a);
  auto M = k.dim("M");
  auto K = k.dim("K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<f16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA);
  auto tm = k.parallel(tiles(M, 64));
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(tm, [&](auto) {
      r.loop(tiles(K, 64), [&](auto) {
        auto s = r.wait(ab);
        r.for_range(2, [&](auto) {
          r.wgmma(acc, s[sA], sB);  // bf16 x f16: the error is reported here
        });
        r.release(ab, s);
      });
    });
  });
  k.role("load", warps(1), [&](role& r) {
    r.for_each(tm, [&](auto m) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
      });
    });
  });
  return k.build();
}

CAKE_EXPORT(nested_type_rejection, nested())
