// sync.missing-proxy-fence: stmatrix (generic proxy) writes the epilogue buffer that a TMA store (async
// proxy) then reads, with no fence.proxy.async in between. Fix: fence after the stmatrix.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_missing_proxy_fence {

constexpr program build(bool fixed) {
  auto k = kernel("proxy_fence").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto sD = k.smem<bf16>("sD", {g.bm, 64}, swizzle::b128, copies(2));
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  auto epi = k.named_barrier("epi", per_unit);
  tma_producer(k, g, sA, sB, ab);
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      auto out = r.convert<bf16>(acc);
      r.for_range(2, [&](auto ch) {
        auto buf = sD.stage(ch % 2).rows(r.warpgroup(), 2);
        r.bulk_wait_read(1);
        r.sync(epi);
        r.stmatrix(buf, out.cols(ch, 2));  // EXPECT: sync.missing-proxy-fence
        if (fixed) r.fence_proxy_async();
        r.sync(epi);
        r.tma_store(g.D.tile(m * 2 + r.warpgroup(), n * 2 + ch), buf);
        r.bulk_commit();
      });
    });
    r.bulk_wait_read(0);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_missing_proxy_fence
CAKE_VERIFY_CASE(sync_missing_proxy_fence, "sync.missing-proxy-fence")
