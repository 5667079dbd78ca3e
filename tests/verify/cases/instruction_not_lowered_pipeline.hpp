// instruction.not-lowered at a declaration: a pipeline declared on sm_80, where the mbarriers pipelines
// are made of are not lowered, even though no op uses it (the lowering still has to make its barriers;
// the builder fuzzer found the lowering refusing it after a clean check). Fix: drop the unused pipeline.
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
  if (!fixed) (void)k.pipeline("unused", stages(2)).carries(sX);  // EXPECT: instruction.not-lowered
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {32, 64});
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0));
      r.store(S.tile(i, 0), x);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_lowered_pipeline
CAKE_VERIFY_CASE(instruction_not_lowered_pipeline, "instruction.not-lowered")
