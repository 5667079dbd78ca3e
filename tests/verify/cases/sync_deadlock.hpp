// sync.deadlock: two roles each wait for the other before arriving, so neither ever arrives.
// Fix: one side arrives first.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_deadlock {

constexpr program build(bool fixed) {
  auto k = kernel("deadlock").target(sm_90a);
  auto g = gemm_tensors(k);
  auto ping = k.mbarrier("ping");
  auto pong = k.mbarrier("pong");
  k.role("left", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) {
      r.wait(pong);  // EXPECT: sync.deadlock
      r.arrive(ping);
    });
  });
  k.role("right", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) {
      if (!fixed) r.wait(ping);
      r.arrive(pong);
      if (fixed) r.wait(ping);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_deadlock
CAKE_VERIFY_CASE(sync_deadlock, "sync.deadlock")
