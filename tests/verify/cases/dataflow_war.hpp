// dataflow.war: the consumer releases the stage before wgmma_wait, so the producer refills it while the
// wgmma may still be reading it. Fix: wgmma_wait(0) before the release.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::dataflow_war {

constexpr program build(bool fixed) {
  auto k = kernel("war").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], g.A.tile(m, kt));  // EXPECT: dataflow.war
        r.tma_load(s[sB], g.B.tile(n, kt));
      });
    });
  });
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        if (fixed) r.wgmma_wait(0);
        r.release(ab, s);
        if (!fixed) r.wgmma_wait(0);
      });
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::dataflow_war
CAKE_VERIFY_CASE(dataflow_war, "dataflow.war")
