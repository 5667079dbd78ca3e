// ir.control-sanity (warning): control flow that says less than it seems to. A min() of the same bound
// twice (meant: min(q + 1, tiles(K, 64))), a loop up to warp - 4 in a role of 4 warps (at most -1: it
// never runs), and r.when(r.cluster_rank() == 0): C++ == compares the two index expressions while the
// schedule is built and records the constant false, so the store never runs. Fix: the bounds meant,
// and eq(r.cluster_rank(), 0).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::ir_control_sanity {
constexpr program build(bool fixed) {
  auto k = kernel("control_sanity").target(sm_90a).cluster(2);
  auto R = k.dim("R");
  auto K = k.dim("K");
  auto X = k.input<f32>("X", dims(R, K));
  auto Y = k.output<f32>("Y", dims(R, K));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(rows, [&](auto q) {
      r.loop(fixed ? min(q + 1, tiles(K, 64)) : min(tiles(K, 64), tiles(K, 64)), [&](auto j) {  // EXPECT: ir.control-sanity
        r.load(x, X.tile(q * 4 + r.warp(), j));
        r.store(Y.tile(q * 4 + r.warp(), j), x);
      });
      r.loop(fixed ? r.warp() + 1 : r.warp() - 4, [&](auto j) {  // EXPECT: ir.control-sanity
        r.load(x, X.tile(q * 4 + r.warp(), j));
        r.store(Y.tile(q * 4 + r.warp(), j), x);
      });
      r.when(fixed ? eq(r.cluster_rank(), 0) : rx(r.cluster_rank() == 0), [&] {  // EXPECT: ir.control-sanity
        r.store(Y.tile(q * 4 + r.warp(), 0), x);
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_control_sanity
CAKE_VERIFY_CASE(ir_control_sanity, "ir.control-sanity")
