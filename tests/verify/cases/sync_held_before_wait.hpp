// sync.held-before-wait: r.held(pipeline) names the stage the role's last wait received; a schedule that
// waits for a point's first stage in the previous point's r.next_point body must also wait for it at the
// CTA's first point, which has no previous one. Fix: the first point's prologue,
// r.when(eq(r.walk_step(), 0), [&] { r.wait(ab); }).
// ALSO: memory.stage-index
// ALSO: dataflow.race
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_held_before_wait {

constexpr program build(bool fixed) {
  auto k = kernel("held_before_wait").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  tma_producer(k, g, sA, sB, ab);
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      // the point's first K block: waited for by the previous point (below), or here at the CTA's first
      if (fixed) r.when(eq(r.walk_step(), 0), [&] { r.wait(ab); });
      auto s0 = r.held(ab);  // EXPECT: sync.held-before-wait
      r.wgmma_fence();
      r.wgmma(acc, s0[sA].rows(r.warpgroup(), 2), s0[sB]).overwrite();
      r.wgmma_commit();
      r.wgmma_wait(0);
      r.release(ab, s0);
      r.loop(1, tiles(g.K, g.bk), 1, [&](auto) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.next_point(g.mn, [&](auto, auto) { r.wait(ab); });  // the next point's first block, before this epilogue
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_held_before_wait
CAKE_VERIFY_CASE(sync_held_before_wait, "sync.held-before-wait")
