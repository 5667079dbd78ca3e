// memory.tile-coverage (warning): an axis no coordinate uses. Two slices (split(2)) each sum half of a
// row's 2048 columns and store the partial sum as Y.tile(i * 4 + warp): both slices write the same
// element, and one partial sum is lost. Fix: add the slices' sums atomically (atomic_add).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_tile_coverage_axis {
constexpr program build(bool fixed) {
  auto k = kernel("split_rows").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R));
  auto space = k.parallel(split(2), tiles(R, 4));
  k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<f32>("x", {1, 1024});
    auto s = r.row_vector<f32>("s", 1);
    r.for_each(space, [&](auto half, auto i) {
      r.load(x, X.tile(i * 4 + r.warp(), half));
      r.row_sum(s, x);
      if (fixed) r.atomic_add(Y.tile(i * 4 + r.warp()), s);
      else r.store(Y.tile(i * 4 + r.warp()), s);  // EXPECT: memory.tile-coverage
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_tile_coverage_axis
CAKE_VERIFY_CASE(memory_tile_coverage_axis, "memory.tile-coverage")
