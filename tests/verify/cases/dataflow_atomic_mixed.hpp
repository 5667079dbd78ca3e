// dataflow.atomic-mixed: every CTA adds its rows into S atomically, and also stores its own rows of S
// plainly: nothing orders one CTA's store against another's atomic add. Fix: store the rows into their
// own output Y.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::dataflow_atomic_mixed {
constexpr program build(bool fixed) {
  auto k = kernel("atomic_mixed").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<f32>("X", dims(R, C));
  auto S = k.output<f32>("S", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0));
      r.atomic_add(S.tile(0, 0), x);
      r.set(x, x * 2.0f);
      if (fixed) r.store(Y.tile(i, 0), x);
      else r.store(S.tile(i, 0), x);  // EXPECT: dataflow.atomic-mixed
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::dataflow_atomic_mixed
CAKE_VERIFY_CASE(dataflow_atomic_mixed, "dataflow.atomic-mixed")
