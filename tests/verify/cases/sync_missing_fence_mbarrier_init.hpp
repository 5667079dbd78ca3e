// sync.missing-fence-mbarrier-init: the schedule initializes 'full' itself and a TMA load completes on
// it, but no fence.mbarrier_init makes the init visible to the async proxy. Fix: fence after the init.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_missing_fence_mbarrier_init {

constexpr program build(bool fixed) {
  auto k = kernel("missing_fence").target(sm_90a).manual_barrier_init();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.init(full, 1);
    if (fixed) r.fence_mbarrier_init();
    r.cluster_sync();
    r.arrive_expect_tx(full, 16384);
    r.tma_load(sA, g.A.tile(0, 0), full);  // EXPECT: sync.missing-fence-mbarrier-init
  });
  k.role("consumer", warps(1), [&](role& r) {
    r.cluster_sync();
    r.wait(full);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_missing_fence_mbarrier_init
CAKE_VERIFY_CASE(sync_missing_fence_mbarrier_init, "sync.missing-fence-mbarrier-init")
