// instruction.not-lowered: the row top-k ops are lowered on sm_90a only; on sm_80 the analyzer refuses
// them before lowering runs (never a lowering failure after a clean check). Fix: target sm_90a.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::instruction_not_lowered_topk {
constexpr program build(bool fixed) {
  auto k = kernel("topk_sm80").target(fixed ? sm_90a : sm_80);
  auto [R, C, K] = k.dims("R", "C", "K");
  auto X = k.input<f32>("X", dims(R, C));
  auto Od = k.output<f32>("dist", dims(R, K));
  auto Oi = k.output<i32>("idx", dims(R, K));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    auto top = r.topk("top", 32, 10);
    r.for_each(rows, [&](auto i) {
      r.topk_init(top);  // EXPECT: instruction.not-lowered
      r.loop(tiles(C, 64), [&](auto j) {
        r.load(x, X.tile(i, j)).fill_outside(pos_inf);
        r.row_topk(top, x, j * 64);  // EXPECT: instruction.not-lowered
      });
      r.topk_store(Od.tile(i, 0), Oi.tile(i, 0), top);  // EXPECT: instruction.not-lowered
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_lowered_topk
CAKE_VERIFY_CASE(instruction_not_lowered_topk, "instruction.not-lowered")
