// instruction.not-lowered: a row top-k whose source is one row (a 1 x 128 f32 tile: a row vector's shape,
// not a full tile), which the top-k emitter does not index; the analyzer passed it and the lowering refused
// it until the builder fuzzer found it. Fix: fold a tile of several rows (here 4 x 128, one state row each).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::instruction_not_lowered_topk {
constexpr program build(bool fixed) {
  const int rows = fixed ? 4 : 1;
  auto k = kernel("topk_one_row").target(sm_90a);
  auto [Q, N, Kk] = k.dims("Q", "N", "K");
  auto X = k.input<f32>("X", dims(Q, N));
  auto Vals = k.output<f32>("vals", dims(Q, Kk));
  auto Idx = k.output<i32>("idx", dims(Q, Kk));
  auto sp = k.parallel(tiles(Q, rows));
  k.role("scan", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {rows, 128});
    auto top = r.topk("top", rows, 8);
    r.for_each(sp, [&](auto q) {
      r.topk_init(top);
      r.loop(tiles(N, 128), [&](auto j) {
        r.load(x, X.tile(q, j)).fill_outside(pos_inf);
        r.row_topk(top, x, j * 128);  // EXPECT: instruction.not-lowered
      });
      r.topk_store(Vals.tile(q, 0), Idx.tile(q, 0), top);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_lowered_topk
CAKE_VERIFY_CASE(instruction_not_lowered_topk, "instruction.not-lowered")
