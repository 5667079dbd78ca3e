// Accumulator initialization.
#pragma once
#include "corpus.hpp"

// dataflow.acc-uninitialized: every wgmma accumulates (D += A*B) and nothing ever set the accumulator.
// Fix: overwrite on the first K step.
namespace verify_corpus::dataflow_acc_uninitialized {
constexpr program build(bool fixed) {
  auto k = kernel("acc_uninit").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  tma_producer(k, g, sA, sB, ab);
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        auto mma = r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);  // EXPECT: dataflow.acc-uninitialized
        if (fixed) mma.overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::dataflow_acc_uninitialized
CAKE_VERIFY_CASE(dataflow_acc_uninitialized, "dataflow.acc-uninitialized")

// dataflow.acc-stale: the accumulator is zeroed once, before the persistent tile loop, so the second
// tile adds onto the first tile's result. Fix: zero it inside the tile loop.
namespace verify_corpus::dataflow_acc_stale {
constexpr program build(bool fixed) {
  auto k = kernel("acc_stale").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  tma_producer(k, g, sA, sB, ab);
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    if (!fixed) r.zero(acc);
    r.for_each(g.mn, [&](auto m, auto n) {
      if (fixed) r.zero(acc);
      r.loop(tiles(g.K, g.bk), [&](auto) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);  // EXPECT: dataflow.acc-stale
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::dataflow_acc_stale
CAKE_VERIFY_CASE(dataflow_acc_stale, "dataflow.acc-stale")
