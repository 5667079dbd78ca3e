// resource.register-tiles with liveness: two 64x256 f32 tiles of a warpgroup (128 registers per thread
// each, blocked layout) against the entry cap of a 128-thread block (248) less 24 = 224. Live at once
// (a + b) they need 256; one after the other, 128 at most. Fix: use them in turn.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::resource_register_liveness {
constexpr program build(bool fixed) {
  auto k = kernel("register_liveness").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto A = k.input<f32>("A", dims(R, C));
  auto B = k.input<f32>("B", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto Z = k.output<f32>("Z", dims(R, C));
  auto rows = k.parallel(tiles(R, 64));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto a = r.fragment<f32>("a", {64, 256});
    auto b = r.fragment<f32>("b", {64, 256});
    r.for_each(rows, [&](auto i) {
      r.load(a, A.tile(i, 0));
      if (fixed) {
        r.set(a, a * 2.0f);
        r.store(Y.tile(i, 0), a);
        r.load(b, B.tile(i, 0));
        r.set(b, b * 2.0f);
        r.store(Z.tile(i, 0), b);
      } else {
        r.load(b, B.tile(i, 0));  // EXPECT: resource.register-tiles
        r.set(a, a * 2.0f);
        r.set(b, b * 2.0f);
        r.store(Y.tile(i, 0), a);
        r.store(Z.tile(i, 0), b);
      }
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_register_liveness
CAKE_VERIFY_CASE(resource_register_liveness, "resource.register-tiles")
