// memory.output-coverage (error): a remapped walk that is not a bijection. The consumers store their tile at
// row tile (m / 4) * 4 + (m + n) % 4 (the rows of each group of 4 row tiles rotated by the column tile, for
// DRAM-channel spread): a bijection where the row-tile count is a multiple of 4, not elsewhere (at 1 row
// tile the point (M 0, N 1) writes row tile 1, outside the tensor). The class `cake evolve` found on the GPU
// (tests/cli/rotated_family.cpp). Fix: remap only what stays a bijection, here written as
// (m / 4) * 4 + m % 4 (the identity, through the same division, modulo and let_index: enumerated, clean).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_output_coverage {
constexpr program build(bool fixed) {
  auto k = kernel("gemm_rotated_store").target(sm_90a);
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
      auto rot = fixed ? r.let_index(m % 4) : r.let_index((m + n) % 4);
      auto mr = (m / 4) * 4 + rot;
      r.store(g.D.tile(mr * 2 + r.warpgroup(), n), out);  // EXPECT: memory.output-coverage
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_output_coverage
CAKE_VERIFY_CASE(memory_output_coverage, "memory.output-coverage")
