// representation.mma-reduce-dim: what an MMA contracts must be clear from its operands' dims (plan/dims.hpp).
#pragma once
#include "corpus.hpp"

// A Gram matrix G = X Xᵀ: both operands are tiles of X[T, K], so A and B share both T and K and the
// contracted dim is ambiguous. Fix: name it, .over(K).
namespace verify_corpus::representation_mma_reduce_dim {
constexpr program build(bool fixed) {
  auto k = kernel("gram").target(sm_90a);
  auto [T, K] = k.dims("T", "K");
  auto X = k.input<bf16>("X", dims(T, K));
  auto G = k.output<bf16>("G", dims(T, T));
  auto tt = k.parallel(tiles(T, 128), tiles(T, 128));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(tt, [&](auto i, auto j) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], X.tile(i, kt));
        r.tma_load(s[sB], X.tile(j, kt));
      });
    });
  });
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(tt, [&](auto i, auto j) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        auto mma = r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);  // EXPECT: representation.mma-reduce-dim
        if (fixed) mma.over(K);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(G.tile(i * 2 + r.warpgroup(), j), r.convert<bf16>(acc));
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_mma_reduce_dim
CAKE_VERIFY_CASE(representation_mma_reduce_dim, "representation.mma-reduce-dim")
