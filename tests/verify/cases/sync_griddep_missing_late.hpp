// sync.griddep-missing, the wait placed after the first access: weights W are declared independent of the
// previous grid (k.independent_of_previous_grid) and loaded before the wait, overlapping the previous
// kernel's tail; X is what the previous kernel writes, and its load comes before griddep_wait().
#pragma once
#include "corpus.hpp"

namespace verify_corpus {

// One role over rows: weights W (declared independent of the previous grid, so loaded before the wait,
// overlapping the previous kernel's tail) times X into Y. `late` puts the wait after the load of X.
constexpr program griddep_rows(bool late) {
  auto k = kernel("griddep_rows").target(sm_90a).programmatic_launch();
  auto [M, N] = k.dims("M", "N");
  auto W = k.input<f32>("W", dims(M, N));
  auto X = k.input<f32>("X", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  k.independent_of_previous_grid(W);
  auto rows = k.parallel(tiles(M, 64), tiles(N, 64));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto w = r.fragment<f32>("w", {64, 64});
    auto x = r.fragment<f32>("x", {64, 64});
    r.for_each(rows, [&](auto m, auto n) {
      r.load(w, W.tile(m, n));
      if (!late) r.griddep_wait();
      r.load(x, X.tile(m, n));  // EXPECT: sync.griddep-missing
      if (late) r.griddep_wait();
      r.set(x, x * w);
      r.store(Y.tile(m, n), x);
    });
  });
  return k.build();
}

}  // namespace verify_corpus

// The wait is there but after the first access of the tensor the previous kernel writes.
namespace verify_corpus::sync_griddep_missing_late {
constexpr program bad() { return griddep_rows(true); }
constexpr program good() { return griddep_rows(false); }
}  // namespace verify_corpus::sync_griddep_missing_late
CAKE_VERIFY_CASE(sync_griddep_missing_late, "sync.griddep-missing")

