// dataflow.race: the consumer reads sA without waiting for the barrier its TMA load completes on.
// Fix: wait first.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::dataflow_race {

constexpr program build(bool fixed) {
  auto k = kernel("race").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, 8192);
    r.tma_load(sA, g.A.tile(0, 0), full);
  });
  k.role("consumer", warps(1), [&](role& r) {
    auto frag = r.fragment<bf16>("frag", {64, 64});
    if (fixed) r.wait(full);
    r.load(frag, sA);  // EXPECT: dataflow.race
    r.store(g.D.tile(0, 0), frag);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::dataflow_race
CAKE_VERIFY_CASE(dataflow_race, "dataflow.race")
