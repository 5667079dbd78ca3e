// The row top-k (r.topk, r.row_topk, r.topk_store): what the state is, its k, and what folds into it.
#pragma once
#include "corpus.hpp"

// representation.topk: ops on a plain row vector (not an r.topk state) and on a state of k = 300 (past
// 256; every op on it is reported). Fix: an r.topk state, k = 32. (The operands of a fold:
// representation_topk_operands.hpp.)
namespace verify_corpus::representation_topk {
template <class Index>
constexpr program build(bool fixed) {
  auto k = kernel("topk").target(sm_90a);
  auto [R, C, K] = k.dims("R", "C", "K");
  auto X = k.input<f32>("X", dims(R, C));
  auto I = k.input<Index>("I", dims(R, C));
  auto Od = k.output<f32>("dist", dims(R, K));
  auto Oi = k.output<i32>("idx", dims(R, K));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    auto ix = r.fragment<Index>("ix", {32, 64});
    auto plain = fixed ? r.topk("plain", 32, 8) : r.row_vector<f32>("plain", 32);
    auto top = r.topk("top", 32, fixed ? 32 : 300);
    r.for_each(rows, [&](auto i) {
      r.topk_init(plain);                   // EXPECT: representation.topk
      r.topk_init(top);                     // EXPECT: representation.topk
      r.loop(tiles(C, 64), [&](auto j) {
        r.load(x, X.tile(i, j)).fill_outside(pos_inf);
        r.load(ix, I.tile(i, j));
        r.row_topk(plain, x, j * 64);       // EXPECT: representation.topk
        r.row_topk(top, x, ix);             // EXPECT: representation.topk
      });
      r.topk_store(Od.tile(i, 0), Oi.tile(i, 0), top);    // EXPECT: representation.topk
      r.topk_store(Od.tile(i, 0), Oi.tile(i, 0), plain);  // EXPECT: representation.topk
    });
  });
  return k.build();
}
constexpr program bad() { return build<i32>(false); }
constexpr program good() { return build<i32>(true); }
}  // namespace verify_corpus::representation_topk
CAKE_VERIFY_CASE(representation_topk, "representation.topk")
