// sync.wgmma-commit: wgmma_wait(0) without a wgmma_commit before it waits for nothing: the wgmma is still
// reading the stage when it is released (dataflow.war) and writing the accumulator when it is read
// (dataflow.acc-read-before-complete). Fix: commit the group before waiting.
// ALSO: dataflow.war dataflow.acc-read-before-complete
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_wgmma_commit {

constexpr program build(bool fixed) {
  auto k = kernel("wgmma_commit").target(sm_90a).persistent();
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
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        if (fixed) r.wgmma_commit();
        r.wgmma_wait(0);  // EXPECT: sync.wgmma-commit
        r.release(ab, s);
      });
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_wgmma_commit
CAKE_VERIFY_CASE(sync_wgmma_commit, "sync.wgmma-commit")
