// sync.slot-scope: a slot is the stage of one trip of the body that waited for it. A consumer that waits in
// its K loop but releases after the loop (once per tile, with a slot kept in a variable outside the loop)
// releases a stage no trip of the release's own body received, and the generated code has no such
// variable there. Fix: release inside the loop body, where the wait is.
// ALSO: sync.deadlock
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_slot_scope {

constexpr program build(bool fixed) {
  auto k = kernel("slot_scope").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  tma_producer(k, g, sA, sB, ab);
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      slot last;
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        if (fixed) r.release(ab, s);
        last = s;
      });
      if (!fixed) r.release(ab, last);  // EXPECT: sync.slot-scope
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_slot_scope
CAKE_VERIFY_CASE(sync_slot_scope, "sync.slot-scope")
