// sync.arrival-count: 'ready' is declared for 2 arrivals per phase, but one warp arrives once per phase.
// Fix: declare the count the arrivals make (or let Cake derive it).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_arrival_count {

constexpr program build(bool fixed) {
  auto k = kernel("arrival_count").target(sm_90a);
  auto g = gemm_tensors(k);
  auto ready = k.mbarrier("ready", arrivals(fixed ? 1 : 2));
  auto done = k.mbarrier("done");
  k.role("producer", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) {
      r.arrive(ready);
      r.wait(done);
    });
  });
  k.role("consumer", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) {
      r.wait(ready);  // EXPECT: sync.arrival-count
      r.arrive(done);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_arrival_count
CAKE_VERIFY_CASE(sync_arrival_count, "sync.arrival-count")
