// Compiles, but the analyzer rejects it: every wgmma accumulates (D += A*B) and nothing initializes the
// accumulator (dataflow.acc-uninitialized at the wgmma line).
#include <cake/cake.hpp>

using namespace cake;

constexpr program uninitialized_accumulator() {
  auto k = kernel("acc_uninit").target(sm_90a).persistent();
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto B = k.input<bf16>("B", dims("N", "K"));
  auto D = k.output<bf16>("D", dims("M", "N"));
  auto t = k.tile(128, 128, 64);
  auto sA = k.smem<bf16>("sA", {t.m, t.k}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {t.n, t.k}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each_tile(t, [&](auto tile) {
      r.for_each_k(t, [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(tile.m, kt));
        r.tma_load(s[sB], B.tile(tile.n, kt));
      });
    });
  });
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {t.m / 2, t.n});
    r.for_each_tile(t, [&](auto tile) {
      r.for_each_k(t, [&](auto) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(D.tile(tile.m * 2 + r.warpgroup(), tile.n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}

CAKE_EXPORT(acc_uninit, uninitialized_accumulator(), reference("gemm"), shape(256, 256, 256))
