// ir.modifier (error): a TMA load's out-of-bounds fill is the tensor map's, 0 or NaN (fill_outside(nan_value)),
// nothing else: here the producer asks for +inf past the tensor's edge. Fix: fill_outside(0.0f) (the default),
// or fill_outside(nan_value) where the padded elements must lose every comparison.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::ir_modifier_tma_fill {
constexpr program build(bool fixed) {
  auto k = kernel("gemm_tma_fill").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.acquire(ab);
        if (fixed) r.tma_load(s[sA], g.A.tile(m, kt)).fill_outside(0.0f);
        else r.tma_load(s[sA], g.A.tile(m, kt)).fill_outside(pos_inf);  // EXPECT: ir.modifier
        r.tma_load(s[sB], g.B.tile(n, kt));
      });
    });
  });
  wgmma_consumer(k, g, sA, sB, ab);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_modifier_tma_fill
CAKE_VERIFY_CASE(ir_modifier_tma_fill, "ir.modifier")
