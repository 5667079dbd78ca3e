// sync.phase-aliasing: the producer arrives on 'ready' every iteration without waiting for the consumer,
// so it runs phases ahead and the consumer's parity names the wrong phase. Fix: a 'done' barrier back.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_phase_aliasing {

constexpr program build(bool fixed) {
  auto k = kernel("aliasing").target(sm_90a);
  auto g = gemm_tensors(k);
  auto ready = k.mbarrier("ready");
  auto done = k.mbarrier("done");
  k.role("producer", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) {
      r.arrive(ready);
      if (fixed) r.wait(done);
    });
  });
  k.role("consumer", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) {
      r.wait(ready);  // EXPECT: sync.phase-aliasing
      if (fixed) r.arrive(done);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_phase_aliasing
CAKE_VERIFY_CASE(sync_phase_aliasing, "sync.phase-aliasing")
