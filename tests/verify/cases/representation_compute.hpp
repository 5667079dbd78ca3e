// Register compute: what r.set, the row reductions and scatters may combine (shapes), what they compute
// on (dtypes), and the fragment layouts the plan derives for register tiles.
#pragma once
#include "corpus.hpp"

// representation.broadcast: m has 16 rows, but x (32x64) gives one value per row for 32 rows; w is a
// 1x32 column vector against x's 64 columns. Fix: m of 32 rows, w of 64 columns.
namespace verify_corpus::representation_broadcast {
constexpr program build(bool fixed) {
  auto k = kernel("broadcast").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<f32>("X", dims(R, C));
  auto W = k.input<f32>("W", dims(C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    auto m = r.row_vector<f32>("m", fixed ? 32 : 16);
    auto w = r.col_vector<f32>("w", fixed ? 64 : 32);
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0)).fill_outside(neg_inf);
      r.load(w, W.tile(0));
      r.row_max(m, x);        // EXPECT: representation.broadcast
      r.set(x, x - m + w);    // EXPECT: representation.broadcast
      r.store(Y.tile(i, 0), x);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_broadcast
CAKE_VERIFY_CASE(representation_broadcast, "representation.broadcast")

// representation.compute-dtype: r.set into an e4m3 tile (8-bit tiles are only converted, never computed
// on), and a row argmin whose index vector is f32 (column indices are i32). Fix: compute in f32, i32
// indices.
namespace verify_corpus::representation_compute_dtype {
template <class Index, class Work>
constexpr program build() {
  auto k = kernel("compute_dtype").target(sm_90a);
  auto [N, K] = k.dims("N", "K");
  auto X = k.input<f32>("X", dims(N, K));
  auto Idx = k.output<i32>("idx", dims(N));
  auto pts = k.parallel(tiles(N, 32));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    auto w = r.fragment<Work>("w", {32, 64});
    auto best = r.row_vector<f32>("best", 32);
    auto arg = r.row_vector<Index>("arg", 32);
    r.for_each(pts, [&](auto i) {
      r.load(x, X.tile(i, 0)).fill_outside(pos_inf);
      r.set(w, x * 2.0f);             // EXPECT: representation.compute-dtype
      r.row_argmin(best, arg, x, 0);  // EXPECT: representation.compute-dtype
      r.store(Idx.tile(i), arg);
    });
  });
  return k.build();
}
constexpr program bad() { return build<f32, e4m3>(); }
constexpr program good() { return build<i32, f32>(); }
}  // namespace verify_corpus::representation_compute_dtype
CAKE_VERIFY_CASE(representation_compute_dtype, "representation.compute-dtype")

// representation.layout-conflict: rows of 48 f32 in a warpgroup: 12 16-byte vectors per row cannot be
// spread over the 16 threads that would cover the tile's 8 rows in one pass (12 is not a multiple of
// 16), so the blocked layout leaves threads without a whole row part. Fix: rows of 64.
namespace verify_corpus::representation_layout_conflict {
constexpr program build(bool fixed) {
  auto k = kernel("layout_conflict").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto rows = k.parallel(tiles(R, 8));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, fixed ? 64 : 48});  // EXPECT: representation.layout-conflict
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0));
      r.set(x, x * 2.0f);
      r.store(Y.tile(i, 0), x);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_layout_conflict
CAKE_VERIFY_CASE(representation_layout_conflict, "representation.layout-conflict")
