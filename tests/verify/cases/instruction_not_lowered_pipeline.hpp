// instruction.not-lowered at a pipeline op: on sm_80 a pipeline whose stages TMA loads fill. sm_80 lowers
// mbarrier pipelines, but a TMA-filled stage completes on transaction bytes (mbarrier expect_tx), which
// sm_80 does not have, so the acquire of such a stage is refused (with the TMA load itself, which sm_80 does
// not admit: instruction.not-admitted). Fix: fill the stage with cp.async, whose copies complete on the
// stage's 'full' barrier (cp.async.mbarrier.arrive.noinc), as the good twin does.
// ALSO: instruction.not-admitted
#pragma once
#include "corpus.hpp"

namespace verify_corpus::instruction_not_lowered_pipeline {
constexpr program build(bool fixed) {
  auto k = kernel("pipe_sm80").target(sm_80);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<bf16>("X", dims(R, C));
  auto S = k.output<bf16>("S", dims(R, C));
  auto rows = k.parallel(tiles(R, 32));
  auto sX = k.smem<bf16>("sX", {32, 64}, swizzle::b128);
  auto p = k.pipeline("p", stages(2)).carries(sX);
  k.role("load", warps(1), [&](role& r) {
    r.for_each(rows, [&](auto i) {
      r.loop(tiles(C, 64), [&](auto j) {
        auto s = r.acquire(p);  // EXPECT: instruction.not-lowered
        if (fixed) r.cp_async(s[sX], X.tile(i, j));
        else r.tma_load(s[sX], X.tile(i, j));
      });
    });
  });
  k.role("rows", warps(2), [&](role& r) {
    auto x = r.fragment<bf16>("x", {16, 64});
    r.for_each(rows, [&](auto i) {
      r.loop(tiles(C, 64), [&](auto j) {
        auto s = r.wait(p);
        r.load(x, s[sX].rows(r.warp(), 2));
        r.release(p, s);
        r.store(S.tile(i * 2 + r.warp(), j), x);
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_lowered_pipeline
CAKE_VERIFY_CASE(instruction_not_lowered_pipeline, "instruction.not-lowered")
