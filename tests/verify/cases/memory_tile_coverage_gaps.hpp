// memory.tile-coverage (warning): gaps. The consumer stores its 64 x 128 accumulator in 4 column parts
// of 32, D.tile(m * 2 + wg, n * 4 + ch), but its for_range runs 2 trips: columns 64..127 of every tile
// are never written. Fix: for_range(4).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_tile_coverage_gaps {
constexpr program build(bool fixed) {
  auto k = kernel("gemm_chunks").target(sm_90a);
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
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      auto out = r.convert<bf16>(acc);
      r.for_range(fixed ? 4 : 2, [&](auto ch) {
        r.store(g.D.tile(m * 2 + r.warpgroup(), n * 4 + ch), out.cols(ch, 4));  // EXPECT: memory.tile-coverage
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_tile_coverage_gaps
CAKE_VERIFY_CASE(memory_tile_coverage_gaps, "memory.tile-coverage")
