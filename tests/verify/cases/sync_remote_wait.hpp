// sync.remote-wait: a wait on another CTA's barrier. The builder refuses remote() on a wait
// (ir.modifier), so the bad twin edits the built Program, as a tool producing Programs could.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_remote_wait {

constexpr program good() {
  auto k = kernel("remote_wait").target(sm_90a).cluster(2);
  auto g = gemm_tensors(k);
  auto ready = k.mbarrier("ready");
  auto done = k.mbarrier("done");
  k.role("producer", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) {
      r.arrive(ready).remote();
      r.wait(done);
    });
  });
  k.role("consumer", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) {
      r.wait(ready);  // EXPECT: sync.remote-wait
      r.arrive(done).remote();
    });
  });
  return k.build();
}
constexpr program bad() {
  auto p = good();
  for (auto& o : p.ops)
    if (o.kind == op_kind::mbarrier_wait && o.d.index == 0) o.flags |= flag_remote;
  return p;
}

}  // namespace verify_corpus::sync_remote_wait
CAKE_VERIFY_CASE(sync_remote_wait, "sync.remote-wait")
