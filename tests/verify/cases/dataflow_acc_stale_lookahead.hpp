// An accumulator initialized for the next point inside r.next_point (a lookahead).
#pragma once
#include "corpus.hpp"

// dataflow.acc-stale through r.next_point (the GEMM's lookahead): each tile's first K block is issued by the
// previous point, before that point's store, and the K loop starts at the second block; the wgmma issued
// there accumulates instead of overwriting, so the next tile adds onto this tile's result. Fix: .overwrite()
// in the next point's block (a write inside r.next_point initializes the register for the next point).
namespace verify_corpus::dataflow_acc_stale_lookahead {
constexpr program build(bool fixed) {
  return sm90_with([&](kernel_builder& k, const gemm_parts& g, smem_tile<bf16> sA, smem_tile<bf16> sB, pipeline_ref ab) {
    k.role("consumer", warpgroups(2), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
      r.for_each(g.mn, [&](auto m, auto n) {
        r.when(eq(r.walk_step(), 0), [&] {  // the CTA's first tile: its first block here
          auto s = r.wait(ab);
          r.wgmma_fence();
          r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite();
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(ab, s);
        });
        r.loop(index_expr(1), loop_extent(tiles(g.K, g.bk)), 1, [&](auto) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);  // EXPECT: dataflow.acc-stale
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(ab, s);
        });
        auto out = r.convert<bf16>(acc);
        const index_expr row = r.let_index(m * 2 + r.warpgroup()), col = r.let_index(n);
        r.next_point(g.mn, [&](auto, auto) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          auto first = r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);
          if (fixed) first.overwrite();
          r.wgmma_commit();
          r.store(g.D.tile(row, col), out);
          r.wgmma_wait(0);
          r.release(ab, s);
        });
        r.when(r.walk_step() + 1 >= r.walk_steps(), [&] { r.store(g.D.tile(row, col), out); });
      });
    });
  }, 64, swizzle::b128, true);
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::dataflow_acc_stale_lookahead
CAKE_VERIFY_CASE(dataflow_acc_stale_lookahead, "dataflow.acc-stale")
