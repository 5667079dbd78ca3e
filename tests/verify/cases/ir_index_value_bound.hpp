// ir.index-value-bound (warning): a loop over one entry of a packed batch runs from its first offset to
// the next: the length is Off[b + 1] - Off[b]. Written the other way round it is negative wherever the
// offsets increase (every valid cumulative-offsets tensor), and the loop never runs. Fix: end - start.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::ir_index_value_bound {
constexpr program build(bool fixed) {
  auto k = kernel("index_value_bound").target(sm_80);
  auto [R, C, N] = k.dims("R", "C", "N");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto Off = k.input<i32>("Off", dims(N));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(rows, [&](auto q) {
      const index_expr start = r.read_index(Off.at(q)), end = r.read_index(Off.at(q + 1));
      r.loop(fixed ? (end - start + 63) / 64 : start - end, [&](auto j) {  // EXPECT: ir.index-value-bound
        r.load(x, X.tile(q * 4 + r.warp(), j));
        r.store(Y.tile(q * 4 + r.warp(), j), x);
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_index_value_bound
CAKE_VERIFY_CASE(ir_index_value_bound, "ir.index-value-bound")
