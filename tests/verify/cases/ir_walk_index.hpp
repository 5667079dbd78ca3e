// ir.walk-index: a role that zeroes a counter row on its first point, with the condition written before
// the walk. r.walk_step() is the CTA's step in its walk over the parallel space: before the walk there is
// none, and the generated code named a variable that exists only in the walk's loop (NVRTC rejected the
// kernel after a clean check; found by the builder fuzzer). Fix: the condition inside the walk's body.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::ir_walk_index {
constexpr program build(bool fixed) {
  auto k = kernel("walk_index").target(sm_90a).persistent();
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<f32>("X", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  auto Z = k.output<f32>("Z", dims(M, N));
  auto tl = k.parallel(tiles(M, 64));
  k.role("rows", warps(2), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    auto z = r.fragment<f32>("z", {32, 64});
    r.zero(z);
    if (!fixed)
      r.when(eq(r.walk_step(), 0), [&] { r.store(Z.tile(r.cta() * 2 + r.warp(), 0), z); });  // EXPECT: ir.walk-index
    r.for_each(tl, [&](auto m) {
      if (fixed) r.when(eq(r.walk_step(), 0), [&] { r.store(Z.tile(r.cta() * 2 + r.warp(), 0), z); });
      r.load(x, X.tile(m * 2 + r.warp(), 0));
      r.store(Y.tile(m * 2 + r.warp(), 0), x);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_walk_index
CAKE_VERIFY_CASE(ir_walk_index, "ir.walk-index")
