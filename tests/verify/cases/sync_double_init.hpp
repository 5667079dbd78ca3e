// sync.double-init: Cake initializes barriers at kernel start; the schedule initializes 'ready' again.
// Fix: drop the init (or take over with manual_barrier_init).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_double_init {

constexpr program build(bool fixed) {
  auto k = kernel("double_init").target(sm_90a);
  auto ready = k.mbarrier("ready");
  k.role("producer", warps(1), [&](role& r) {
    if (!fixed) r.init(ready, 1);  // EXPECT: sync.double-init
    r.arrive(ready);
  });
  k.role("consumer", warps(1), [&](role& r) { r.wait(ready); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_double_init
CAKE_VERIFY_CASE(sync_double_init, "sync.double-init")
