// The row top-k: the operands of a fold (its index tile, its rows).
#pragma once
#include "corpus.hpp"

// ALSO: representation.layout-conflict (a 64-row state cannot take the layout of a 32-row source)
// representation.topk: a fold whose index tile is f32 (indices are i32), and one whose source has other
// rows than the state. Fix: i32 indices, a state of the source's rows.
namespace verify_corpus::representation_topk_operands {
template <class Index>
constexpr program build(bool fixed) {
  auto k = kernel("topk_operands").target(sm_90a);
  auto [R, C, K] = k.dims("R", "C", "K");
  auto X = k.input<f32>("X", dims(R, C));
  auto I = k.input<Index>("I", dims(R, C));
  auto Od = k.output<f32>("dist", dims(R, K));
  auto Oi = k.output<i32>("idx", dims(R, K));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    auto ix = r.fragment<Index>("ix", {32, 64});
    auto top = r.topk("top", 32, 16);
    auto other = r.topk("other", fixed ? 32 : 64, 16);
    r.for_each(rows, [&](auto i) {
      r.topk_init(top);
      r.topk_init(other);
      r.loop(tiles(C, 64), [&](auto j) {
        r.load(x, X.tile(i, j)).fill_outside(pos_inf);
        r.load(ix, I.tile(i, j));
        r.row_topk(top, x, ix);       // EXPECT: representation.topk
        r.row_topk(other, x, j * 64);  // EXPECT: representation.topk
      });
      r.topk_store(Od.tile(i, 0), Oi.tile(i, 0), top);
      r.topk_store(Od.tile(i, 0), Oi.tile(i, 0), other);
    });
  });
  return k.build();
}
constexpr program bad() { return build<f32>(false); }
constexpr program good() { return build<i32>(true); }
}  // namespace verify_corpus::representation_topk_operands
CAKE_VERIFY_CASE(representation_topk_operands, "representation.topk")
