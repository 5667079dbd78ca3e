// sync.griddep-missing: kernels launched with programmatic_launch() (issue 10, blind spot 7). The kernel may
// start while the previous kernel in the stream still runs; only griddep_wait() orders a role after it.
#pragma once
#include "corpus.hpp"

namespace verify_corpus {

// A TMA GEMM whose producer loads A and B and whose consumer stores D. `wait` puts griddep_wait() at the top
// of both roles; without it the producer's loads (A and B: one finding per tensor) and the consumer's store
// of D (the previous kernel may still read or write D) all race with the previous kernel.
constexpr program griddep_gemm(bool wait) {
  auto k = kernel("griddep_gemm").target(sm_90a).programmatic_launch();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    if (wait) r.griddep_wait();
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], g.A.tile(m, kt));  // EXPECT: sync.griddep-missing
        r.tma_load(s[sB], g.B.tile(n, kt));  // EXPECT: sync.griddep-missing
      });
    });
  });
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    if (wait) r.griddep_wait();
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));  // EXPECT: sync.griddep-missing
    });
    r.griddep_launch_dependents();  // placement does not matter for this kernel's correctness
  });
  return k.build();
}

}  // namespace verify_corpus

namespace verify_corpus::sync_griddep_missing {
constexpr program bad() { return griddep_gemm(false); }
constexpr program good() { return griddep_gemm(true); }
}  // namespace verify_corpus::sync_griddep_missing
CAKE_VERIFY_CASE(sync_griddep_missing, "sync.griddep-missing")

