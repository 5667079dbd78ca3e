// memory.stage-index: stage kt - 1 is -1 on the first iteration. Fix: index stages with kt.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_stage_index {

constexpr program build(bool fixed) {
  auto k = kernel("stage_index").target(sm_80);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128, copies(2));
  k.role("copy", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto kt) {
      r.cp_async(sA.stage(fixed ? kt : kt - 1), g.A.tile(0, kt));  // EXPECT: memory.stage-index
      r.cp_async_commit();
      r.cp_async_wait(0);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::memory_stage_index
CAKE_VERIFY_CASE(memory_stage_index, "memory.stage-index")
