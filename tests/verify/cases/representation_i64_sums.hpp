// representation.compute-dtype for i64 (a storage dtype of global tensors): exact per-cluster sums
// written with the scaled values converted to i64 in registers first (register tiles are not i64).
// Fix: keep the scaled values in an f32 tile and scatter_add it into the i64 tensor, which rounds each
// element to the nearest integer (the k-means update's deterministic sums, kernels/kmeans/update.hpp).
// (A plain store into an i64 tensor is instruction.not-lowered: tests/unit/test_lower_support.cpp.)
namespace verify_corpus::representation_i64_sums {
constexpr program build(bool fixed) {
  auto k = kernel("i64_sums").target(sm_90a);
  auto [N, BK, D] = k.dims("N", "BK", "D");
  auto X = k.input<f32>("X", dims(N, D));
  auto I = k.input<i32>("idx", dims(N));
  auto Sums = k.output<i64>("sums", dims(BK, D));
  auto scale = k.param<f32>("scale");
  auto pts = k.parallel(tiles(N, 16));
  k.role("points", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {16, 64});
    auto idx = r.row_vector<i32>("idx", 16);
    r.for_each(pts, [&](auto i) {
      r.load(x, X.tile(i, 0));
      r.load(idx, I.tile(i)).fill_outside(-1.0f);
      if (fixed) {
        r.set(x, x * scale);
        r.scatter_add(Sums.tile(0, 0), x, idx);
      } else {
        auto q = r.fragment<i64>("q", {16, 64});
        r.set(q, x * scale);                     // EXPECT: representation.compute-dtype
        r.scatter_add(Sums.tile(0, 0), q, idx);  // EXPECT: representation.compute-dtype
      }
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_i64_sums
CAKE_VERIFY_CASE(representation_i64_sums, "representation.compute-dtype")
