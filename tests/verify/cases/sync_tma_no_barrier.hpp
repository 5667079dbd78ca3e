// sync.tma-no-barrier: a TMA load into a plain region with no barrier to complete on: nothing can wait
// for its bytes. Fix: pass the barrier the consumer waits on.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_tma_no_barrier {

constexpr program build(bool fixed) {
  auto k = kernel("tma_no_barrier").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, fixed ? 16384 : 0);
    if (fixed) r.tma_load(sA, g.A.tile(0, 0), full);
    else r.tma_load(sA, g.A.tile(0, 0));  // EXPECT: sync.tma-no-barrier
  });
  k.role("consumer", warps(1), [&](role& r) { r.wait(full); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_tma_no_barrier
CAKE_VERIFY_CASE(sync_tma_no_barrier, "sync.tma-no-barrier")
