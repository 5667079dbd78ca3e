// Dead accumulation in tensor memory (sm_100a).
#pragma once
#include "corpus.hpp"

// dataflow.dead-accumulation: the MMA warp's tcgen05.mma overwrites the TMEM accumulator on every K
// step, so the epilogue reads the last K block's product only. Fix: .overwrite_on_first(kt).
namespace verify_corpus::dataflow_dead_accumulation_tmem {
constexpr program build(bool fixed) {
  auto k = kernel("dead_acc_tmem").target(sm_100a).persistent();
  auto s = sm100_declare(k);
  sm100_epilogue(k, s);
  sm100_producer(k, s);
  k.role("mma", warps(1), [&](role& r) {
    r.tmem_alloc(s.acc);
    r.for_each(s.g.mn, [&](auto, auto) {
      auto a = r.acquire(s.accp);
      r.tcgen05_fence_after();
      r.loop(tiles(s.g.K, s.g.bk), [&](auto kt) {
        auto slot = r.wait(s.ab);
        r.tcgen05_fence_after();
        auto mma = r.tcgen05_mma(a[s.acc], slot[s.sA], slot[s.sB]);  // EXPECT: dataflow.dead-accumulation
        if (fixed) mma.overwrite_on_first(kt);
        else mma.overwrite();
        r.release(s.ab, slot);
      });
      r.commit(s.accp, a);
    });
    r.acquire(s.accp);
    r.tmem_dealloc(s.acc);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::dataflow_dead_accumulation_tmem
CAKE_VERIFY_CASE(dataflow_dead_accumulation_tmem, "dataflow.dead-accumulation")
