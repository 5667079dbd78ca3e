// instruction.not-lowered: an op on a region of several copies that does not say which copy (found by the
// builder fuzzer: the lowering refused it after a clean check). Fix: name the stage, region.stage(i).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::instruction_not_lowered_stage {
constexpr program build(bool fixed) {
  auto k = kernel("stage_unnamed").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<bf16>("X", dims(R, C));
  auto S = k.output<bf16>("S", dims(R, C));
  auto rows = k.parallel(tiles(R, 64));
  auto sS = k.smem<bf16>("sS", {64, 64}, swizzle::b128, copies(2));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 64});
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0));
      if (fixed) r.store(sS.stage(i), x);
      else r.store(sS, x);  // EXPECT: instruction.not-lowered
      r.sync(k.named_barrier("staged"));
    });
  });
  (void)S;
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_lowered_stage
CAKE_VERIFY_CASE(instruction_not_lowered_stage, "instruction.not-lowered")
