// memory.tile-coverage (warning): a unit's tile past the point's block. Two consumer warpgroups each hold
// 64 of the 128 rows of a tile and store them as D.tile(m * 2 + wg * 2, n): warpgroup 1's rows start 128
// rows into the block, on the next point's rows (that point's warpgroup 0 writes them too), and rows
// 64..127 of every block are never written. Fix: m * 2 + wg.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_tile_coverage_outside {
constexpr program build(bool fixed) {
  auto k = kernel("gemm_past").target(sm_90a);
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
      if (fixed) r.store(g.D.tile(m * 2 + r.warpgroup(), n), out);
      else r.store(g.D.tile(m * 2 + r.warpgroup() * 2, n), out);  // EXPECT: memory.tile-coverage
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_tile_coverage_outside
CAKE_VERIFY_CASE(memory_tile_coverage_outside, "memory.tile-coverage")
