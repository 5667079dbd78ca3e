// instruction.not-lowered: an 8-bit register tile loaded from a bf16 smem region (an 8-bit tile moves its bytes to
// and from smem of its own dtype only; the e4m3 stage was declared bf16 by mistake). Fix: declare the region e4m3 (or
// load the bf16 region into an f32 / 16-bit tile and convert).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::instruction_not_lowered_fp8 {
template <class Stage>
constexpr program build() {
  auto k = kernel("fp8_rows").target(sm_90a);
  auto [N, D] = k.dims("N", "D");
  auto X = k.input<Stage>("X", dims(N, D));
  auto Y = k.output<f32>("Y", dims(N, D));
  auto sx = k.smem<Stage>("sx", {64, 64});
  auto xp = k.pipeline("x", stages(2)).carries(sx);
  auto rows = k.parallel(tiles(N, 64));
  k.role("use", warpgroups(1), [&](role& r) {
    auto q = r.fragment<e4m3>("q", {64, 64});
    auto y = r.fragment<f32>("y", {64, 64});
    r.for_each(rows, [&](auto i) {
      auto s = r.wait(xp);
      r.load(q, s[sx]);  // EXPECT: instruction.not-lowered
      r.release(xp, s);
      r.convert(y, q);
      r.store(Y.tile(i, 0), y);
    });
  });
  k.role("load", warps(1), [&](role& r) {
    r.for_each(rows, [&](auto i) {
      auto s = r.acquire(xp);
      r.tma_load(s[sx], X.tile(i, 0));
    });
  });
  return k.build();
}
constexpr program bad() { return build<bf16>(); }
constexpr program good() { return build<e4m3>(); }
}  // namespace verify_corpus::instruction_not_lowered_fp8
CAKE_VERIFY_CASE(instruction_not_lowered_fp8, "instruction.not-lowered")
