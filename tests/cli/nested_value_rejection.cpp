// A value-level rejection (later(9): a constant-expression failure) two loop bodies deep (issue 10,
// localization): reported at the op's own line, with g++ and with clang.
#include <cake/cake.hpp>

using namespace cake;

constexpr program nested() {
  auto k = kernel("nested").target(sm_90a);
  auto M = k.dim("M");
  auto K = k.dim("K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA);
  auto tm = k.parallel(tiles(M, 64));
  k.role("math", warpgroups(1), [&](role& r) {
    r.for_each(tm, [&](auto) {
      r.loop(tiles(K, 64), [&](auto) {
        auto s = r.wait(ab);
        r.release(ab, s).later(9);  // later(n) takes 1..4: the error is reported here
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

CAKE_EXPORT(nested_value_rejection, nested())
