// Dead accumulation (issue 10, blind spot 4): an MMA result overwritten before anything read it.
#pragma once
#include "corpus.hpp"

// dataflow.dead-accumulation: .overwrite() on every K step. Each trip's wgmma discards the partial sums
// of the trip before, so the stored tile holds the last K block's product only. Fix: overwrite on the
// first K step only (.overwrite_on_first(kt)).
namespace verify_corpus::dataflow_dead_accumulation {
constexpr program build(bool fixed) {
  auto k = kernel("dead_acc").target(sm_90a).persistent();
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
        auto mma = r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);  // EXPECT: dataflow.dead-accumulation
        if (fixed) mma.overwrite_on_first(kt);
        else mma.overwrite();
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
}  // namespace verify_corpus::dataflow_dead_accumulation
CAKE_VERIFY_CASE(dataflow_dead_accumulation, "dataflow.dead-accumulation")
