// sync.named-barrier-count: 'step' is declared for 64 threads but used by a warpgroup of 128, so it
// releases before all threads arrive. Fix: declare 128 threads, or let Cake derive the count.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_named_barrier_count {

constexpr program build(bool fixed) {
  auto k = kernel("named_count").target(sm_90a);
  auto g = gemm_tensors(k);
  auto step = k.named_barrier("step", threads(fixed ? 128 : 64));  // EXPECT: sync.named-barrier-count
  k.role("math", warpgroups(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) { r.sync(step); });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_named_barrier_count
CAKE_VERIFY_CASE(sync_named_barrier_count, "sync.named-barrier-count")
