#pragma once
#include "corpus.hpp"

// sync.griddep-no-pdl (warning): griddep_wait() in a kernel launched without programmatic_launch() waits for
// nothing. Fix: launch it programmatically (or drop the wait).
namespace verify_corpus::sync_griddep_no_pdl {
constexpr program build(bool pdl) {
  auto k = kernel("griddep_no_pdl").target(sm_90a);
  if (pdl) k.programmatic_launch();
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<f32>("X", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  auto rows = k.parallel(tiles(M, 64), tiles(N, 64));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.griddep_wait();  // EXPECT: sync.griddep-no-pdl
    r.for_each(rows, [&](auto m, auto n) {
      r.load(x, X.tile(m, n));
      r.store(Y.tile(m, n), x);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::sync_griddep_no_pdl
CAKE_VERIFY_CASE(sync_griddep_no_pdl, "sync.griddep-no-pdl")
