// sync.tcgen05-fence: the epilogue reads TMEM right after waiting for the accumulator, without
// tcgen05_fence_after, so the tcgen05.ld may be ordered before the wait. Fix: fence after the wait.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_tcgen05_fence {

constexpr program build(bool fixed) {
  auto k = kernel("tcgen05_fence").target(sm_100a).persistent();
  auto s = sm100_declare(k);
  k.role("epilogue", warpgroups(1), [&](role& r) {
    auto frag = r.fragment<f32>("frag", {s.g.bm, 32});
    r.for_each(s.g.mn, [&](auto m, auto n) {
      auto a = r.wait(s.accp);
      if (fixed) r.tcgen05_fence_after();
      r.for_range(s.chunks, [&](auto ch) {
        r.tmem_load(frag, a[s.acc].cols(ch, s.chunks));  // EXPECT: sync.tcgen05-fence
        r.store(s.g.D.tile(m, n * s.chunks + ch), r.convert<bf16>(frag));
      });
      r.tcgen05_fence_before();
      r.release(s.accp, a);
    });
  });
  sm100_producer(k, s);
  sm100_mma(k, s);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_tcgen05_fence
CAKE_VERIFY_CASE(sync_tcgen05_fence, "sync.tcgen05-fence")
