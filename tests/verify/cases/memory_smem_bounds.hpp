// memory.smem-bounds: the consumer selects part 2 of sA cut into 2 parts; only parts 0 and 1 exist.
// Fix: select the warpgroup's part.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_smem_bounds {

constexpr program build(bool fixed) {
  auto k = kernel("smem_bounds").target(sm_90a).persistent();
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
        auto part = fixed ? r.warpgroup() : index_expr(2);
        r.wgmma(acc, s[sA].rows(part, 2), s[sB]).overwrite_on_first(kt);  // EXPECT: memory.smem-bounds
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

}  // namespace verify_corpus::memory_smem_bounds
CAKE_VERIFY_CASE(memory_smem_bounds, "memory.smem-bounds")
