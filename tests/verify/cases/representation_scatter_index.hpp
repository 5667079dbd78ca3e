// representation.compute-dtype: a counting sort's placement whose bucket indices are held as f32. The
// index vector of fetch_add (the slot in a bucket) and of scatter_store (the row each row goes to) holds
// row indices: it is i32. Fix: declare both vectors r.row_vector<i32>.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::representation_scatter_index {
constexpr program build(bool fixed) {
  auto k = kernel("bucket_place").target(sm_90a);
  auto [N, K, D, One] = k.dims("N", "K", "D", "one");
  auto X = k.input<bf16>("X", dims(N, D));
  auto I = k.input<i32>("bucket", dims(N, One));
  auto Cursor = k.output<i32>("cursor", dims(K, One));
  auto Sorted = k.output<bf16>("sorted", dims(N, D));
  auto pts = k.parallel(tiles(N, 16));
  k.role("points", warps(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {16, 64});
    r.for_each(pts, [&](auto t) {
      r.load(x, X.tile(t, 0));
      if (fixed) {
        auto b = r.row_vector<i32>("b", 16);
        auto pos = r.row_vector<i32>("pos", 16);
        r.load(b, I.tile(t, 0)).fill_outside(-1.0f);
        r.fetch_add(pos, Cursor.tile(0, 0), b);
        r.scatter_store(Sorted.tile(0, 0), x, pos);
      } else {
        auto b = r.row_vector<f32>("b", 16);
        auto pos = r.row_vector<f32>("pos", 16);
        r.load(b, I.tile(t, 0)).fill_outside(-1.0f);
        r.fetch_add(pos, Cursor.tile(0, 0), b);      // EXPECT: representation.compute-dtype
        r.scatter_store(Sorted.tile(0, 0), x, pos);  // EXPECT: representation.compute-dtype
      }
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_scatter_index
CAKE_VERIFY_CASE(representation_scatter_index, "representation.compute-dtype")
