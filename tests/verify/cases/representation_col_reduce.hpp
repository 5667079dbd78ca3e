// representation.broadcast: a column sum (one value per column of the tile) written into a row vector.
// The sum over a segment's rows is a 1 x C column vector. Fix: declare the destination r.col_vector.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::representation_col_reduce {
constexpr program build(bool fixed) {
  auto k = kernel("segment_sums").target(sm_90a);
  auto [G, N, D, Two] = k.dims("G", "N", "D", "two");
  auto X = k.input<bf16>("X", dims(N, D));
  auto Seg = k.input<i32>("segments", dims(G, Two));  // rows [start, end) of segment g
  auto Sums = k.output<f32>("sums", dims(G, D));
  auto segs = k.parallel(tiles(G, 1));
  k.role("segments", warps(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {8, 128});
    auto acc = r.fragment<f32>("acc", {8, 128});
    r.for_each(segs, [&](auto g) {
      const index_expr y0 = r.read_index(Seg.at(g, 0)), y1 = r.read_index(Seg.at(g, 1));
      r.zero(acc);
      r.loop(y0, loop_extent(y1), 8, [&](auto y) {
        r.load(x, X.tile(y, 0).elements_at(0).limit(0, y1));
        r.set(acc, acc + x);
      });
      if (fixed) {
        auto sum = r.col_vector<f32>("sum", 128);
        r.col_sum(sum, acc);
        r.store(Sums.tile(g, 0), sum);
      } else {
        auto sum = r.row_vector<f32>("sum", 8);
        r.col_sum(sum, acc);  // EXPECT: representation.broadcast
      }
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_col_reduce
CAKE_VERIFY_CASE(representation_col_reduce, "representation.broadcast")
