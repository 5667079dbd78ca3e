// sync.tcgen05-commit-issuer: a 'signal' warp commits 'acc_full' for the epilogue, but the MMAs were
// issued by the 'mma' warp; tcgen05.commit only tracks the calling thread's MMAs, so the epilogue reads
// the accumulator early, before the allocation is ordered before it, and the MMA warp deallocates with
// its own MMAs untracked. Fix: commit from the mma warp.
// ALSO: dataflow.acc-read-before-complete dataflow.war memory.tmem-alloc memory.tmem-dealloc
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_tcgen05_commit_issuer {

constexpr program build(bool fixed) {
  auto k = kernel("commit_issuer").target(sm_100a);
  auto g = gemm_tensors(k, 128, 128, 64);
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto acc = k.tmem("acc", columns(128));
  auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
  auto acc_full = k.mbarrier("acc_full");
  auto acc_empty = k.mbarrier("acc_empty");
  k.role("epilogue", warpgroups(1), [&](role& r) {
    auto frag = r.fragment<f32>("frag", {128, 32});
    r.for_each(g.mn, [&](auto m, auto n) {
      r.wait(acc_full);
      r.tcgen05_fence_after();
      r.for_range(4, [&](auto ch) {
        r.tmem_load(frag, acc.cols(ch, 4));
        r.store(g.D.tile(m, n * 4 + ch), r.convert<bf16>(frag));
      });
      r.tcgen05_fence_before();
      r.arrive(acc_empty);
    });
  });
  k.role("producer", warps(1), [&](role& r) {
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], g.A.tile(m, kt));
        r.tma_load(s[sB], g.B.tile(n, kt));
      });
    });
  });
  k.role("mma", warps(1), [&](role& r) {
    r.tmem_alloc(acc);
    r.for_each(g.mn, [&](auto, auto) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.tcgen05_fence_after();
        r.tcgen05_mma(acc, s[sA], s[sB]).overwrite_on_first(kt);
        r.release(ab, s);
      });
      if (fixed) r.tcgen05_commit(acc_full);
    });
    r.wait(acc_empty);
    r.tmem_dealloc(acc);
  });
  if (!fixed)
    k.role("signal", warps(1), [&](role& r) {
      r.for_each(g.mn, [&](auto, auto) {
        r.tcgen05_commit(acc_full);  // EXPECT: sync.tcgen05-commit-issuer
      });
    });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_tcgen05_commit_issuer
CAKE_VERIFY_CASE(sync_tcgen05_commit_issuer, "sync.tcgen05-commit-issuer")
