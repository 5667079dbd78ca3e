// memory.tile-coverage (warning): block size. Per point of tiles(N, 256) x each(B), two warpgroups each
// store the row sums of their 128 points into S[B, N] as S.tile(b, i * 2 + wg). A 128-row vector's rows
// run along S's row dim, which is B (the second-to-last), not N: b (each(B), a block of 1) moves the tile
// 128 rows of B per batch and i * 2 + wg counts single columns of N. For B > 1 most stores fall outside
// the tensor and are silently masked. Fix: S as [B, N, 1], whose row dim is N: S.tile(b, i * 2 + wg, 0).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_tile_coverage {
constexpr program build(bool fixed) {
  auto k = kernel("row_sums").target(sm_90a);
  auto [Bt, N, D] = k.dims("B", "N", "D");
  auto X = k.input<f32>("X", dims(Bt, N, D));
  auto S = fixed ? k.output<f32>("S", dims(Bt, N, k.dim("one"))) : k.output<f32>("S", dims(Bt, N));
  auto space = k.parallel(tiles(N, 256), each(Bt));
  k.role("rows", warpgroups(2), [&](role& r) {
    auto x = r.fragment<f32>("x", {128, 64});
    auto s = r.row_vector<f32>("s", 128);
    r.for_each(space, [&](auto i, auto b) {
      r.load(x, X.tile(b, i * 2 + r.warpgroup(), 0));
      r.row_sum(s, x);
      if (fixed) r.store(S.tile(b, i * 2 + r.warpgroup(), 0), s);
      else r.store(S.tile(b, i * 2 + r.warpgroup()), s);  // EXPECT: memory.tile-coverage
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_tile_coverage
CAKE_VERIFY_CASE(memory_tile_coverage, "memory.tile-coverage")
