// representation.copy-shape: r.convert(dst, src) into a tile declared before with another shape (a 64 x 64 f16 block
// for a 128-row fp8 block: the tile was declared for another key block). Fix: declare the destination of the
// source's shape. The same mistake also gives the two tiles no common layout, and the store of the short tile leaves
// half of each 128-row point's rows to no one.
// ALSO: representation.layout-conflict memory.tile-coverage
#pragma once
#include "corpus.hpp"

namespace verify_corpus::representation_convert_shape {
constexpr program build(bool fixed) {
  auto k = kernel("convert_shape").target(sm_90a);
  auto [N, D] = k.dims("N", "D");
  auto Y = k.output<f16>("Y", dims(N, D));
  auto rows = k.parallel(tiles(N, 128));
  k.role("use", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {128, 64});
    auto h = r.fragment<f16>("h", {fixed ? 128 : 64, 64});
    r.for_each(rows, [&](auto i) {
      r.fill(x, 1.0f);
      r.convert(h, x);  // EXPECT: representation.copy-shape
      r.store(Y.tile(i, 0), h);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_convert_shape
CAKE_VERIFY_CASE(representation_convert_shape, "representation.copy-shape")
