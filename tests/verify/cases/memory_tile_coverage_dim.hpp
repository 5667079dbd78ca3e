// memory.tile-coverage (warning): an index of another dim (issue 10's example). D = A * B^T with B over
// (N, K): the producer loads B.tile(m, kt), the index of tiles(M, 128) as a coordinate of N. With square
// tiles nothing else notices (the box is the same size); every CTA multiplies by the wrong rows of B.
// Fix: B.tile(n, kt).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_tile_coverage_dim {
constexpr program build(bool fixed) {
  auto k = kernel("gemm_b_rows").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], g.A.tile(m, kt));
        if (fixed) r.tma_load(s[sB], g.B.tile(n, kt));
        else r.tma_load(s[sB], g.B.tile(m, kt));  // EXPECT: memory.tile-coverage
      });
    });
  });
  wgmma_consumer(k, g, sA, sB, ab);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_tile_coverage_dim
CAKE_VERIFY_CASE(memory_tile_coverage_dim, "memory.tile-coverage")
