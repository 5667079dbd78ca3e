// sync.uninitialized-barrier: with manual_barrier_init, 'ready' is used but never initialized.
// Fix: init it in one role, fence, and cluster_sync in every role before the first use.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_uninitialized_barrier {

constexpr program build(bool fixed) {
  auto k = kernel("uninitialized").target(sm_90a).manual_barrier_init();
  auto g = gemm_tensors(k);
  auto ready = k.mbarrier("ready");
  k.role("producer", warps(1), [&](role& r) {
    if (fixed) {
      r.init(ready, 1);
      r.fence_mbarrier_init();
    }
    r.cluster_sync();
    r.arrive(ready);  // EXPECT: sync.uninitialized-barrier
  });
  k.role("consumer", warps(1), [&](role& r) {
    r.cluster_sync();
    r.wait(ready);
  });
  (void)g;
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_uninitialized_barrier
CAKE_VERIFY_CASE(sync_uninitialized_barrier, "sync.uninitialized-barrier")
