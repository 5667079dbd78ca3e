// ir.index-value (error): an index value used where it does not exist. The offset is read inside the
// column loop (once per trip, a C++ variable of the loop's body) and then used by a when after the loop:
// lowering would name a variable out of scope, and the value is the last trip's anyway. Fix: read it at
// the top of the for_each body, before the loop and its use.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::ir_index_value_scope {
constexpr program build(bool fixed) {
  auto k = kernel("index_value_scope").target(sm_80);
  auto [R, C, N] = k.dims("R", "C", "N");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto Off = k.input<i32>("Off", dims(N));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(rows, [&](auto q) {
      index_expr first{};
      if (fixed) first = r.read_index(Off.at(q));
      r.loop(tiles(C, 64), [&](auto j) {
        if (!fixed) first = r.read_index(Off.at(q));
        r.load(x, X.tile(q * 4 + r.warp(), j));
      });
      r.when(first < 64, [&] {  // EXPECT: ir.index-value
        r.store(Y.tile(q * 4 + r.warp(), 0), x);
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_index_value_scope
CAKE_VERIFY_CASE(ir_index_value_scope, "ir.index-value")
