// memory.mask-coverage (warning): a softmax row kernel whose load fills the columns past C with the
// default 0: row_max of a row of negative values gives 0, and exp(x - 0) is not the softmax. The tile's
// 1024 columns need not divide C (a run-time value). Fix: fill with -inf, neutral for the max (and
// exp2(-inf) = 0 adds nothing to the row sum).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_mask_coverage {
constexpr program build(bool fixed) {
  auto k = kernel("mask_coverage").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<bf16>("X", dims(R, C));
  auto Y = k.output<bf16>("Y", dims(R, C));
  auto rows = k.parallel(tiles(R, 4));
  k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<bf16>("x", {1, 1024});
    auto e = r.fragment<f32>("e", {1, 1024});
    auto m = r.row_vector<f32>("m", 1);
    auto s = r.row_vector<f32>("s", 1);
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i * 4 + r.warp(), 0)).fill_outside(fixed ? neg_inf : 0.0f);
      r.row_max(m, x);  // EXPECT: memory.mask-coverage
      r.set(e, exp2((x - m) * 1.4426950408889634f));
      r.row_sum(s, e);
      r.set(x, e * rcp(s));
      r.store(Y.tile(i * 4 + r.warp(), 0), x);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_mask_coverage
CAKE_VERIFY_CASE(memory_mask_coverage, "memory.mask-coverage")
