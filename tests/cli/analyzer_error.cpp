// Compiles, but the analyzer rejects it: every wgmma accumulates (D += A*B) and nothing initializes the
// accumulator (dataflow.acc-uninitialized at the wgmma line).
#include <cake/cake.hpp>

using namespace cake;

constexpr program uninitialized_accumulator() {
  auto k = kernel("acc_uninit").target(sm_90a).persistent();
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto mn = k.parallel(tiles(M, 128), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt));
      });
    });
  });
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}

CAKE_EXPORT(acc_uninit, uninitialized_accumulator(), reference("gemm"), shape(256, 256, 256))
