// Dead accumulation: a zero moved into the K loop.
#pragma once
#include "corpus.hpp"

// dataflow.dead-accumulation: r.zero(acc) at the top of the K loop instead of before it. From the
// second trip on, the zero discards the previous trip's wgmma result before anything read it. Fix:
// zero once per tile, before the K loop.
namespace verify_corpus::dataflow_dead_accumulation_fill {
constexpr program build(bool fixed) {
  auto k = kernel("dead_acc_fill").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  tma_producer(k, g, sA, sB, ab);
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      if (fixed) r.zero(acc);
      r.loop(tiles(g.K, g.bk), [&](auto) {
        auto s = r.wait(ab);
        if (!fixed) r.zero(acc);  // EXPECT: dataflow.dead-accumulation
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);
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
}  // namespace verify_corpus::dataflow_dead_accumulation_fill
CAKE_VERIFY_CASE(dataflow_dead_accumulation_fill, "dataflow.dead-accumulation")
