// sync.wgmma-fence: the consumer issues wgmma without wgmma_fence (needed before a warpgroup's first
// wgmma and after other code touched the accumulator). Fix: wgmma_fence before the wgmma.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_wgmma_fence {

constexpr program build(bool fixed) {
  auto k = kernel("wgmma_fence").target(sm_90a).persistent();
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
        if (fixed) r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);  // EXPECT: sync.wgmma-fence
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

}  // namespace verify_corpus::sync_wgmma_fence
CAKE_VERIFY_CASE(sync_wgmma_fence, "sync.wgmma-fence")
