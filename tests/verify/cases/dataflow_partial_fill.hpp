// dataflow.partial-fill: a TMA load fills 8 of sA's 64 rows and the consumer reads the whole region (the
// split-K GEMM's short A load at small M, without saying that the rest is unused). Fix: say so with
// .rest_unused() on the load (the rows it does not fill make output that is never used).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::dataflow_partial_fill {

constexpr program build(bool fixed) {
  auto k = kernel("partial_fill").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, 8 * 128);
    auto ld = r.tma_load(sA.rows(0, 8), g.A.tile(0, 0), full);
    if (fixed) ld.rest_unused();
  });
  k.role("consumer", warps(1), [&](role& r) {
    auto frag = r.fragment<bf16>("frag", {64, 64});
    r.wait(full);
    r.load(frag, sA);  // EXPECT: dataflow.partial-fill
    r.store(g.D.tile(0, 0), frag);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::dataflow_partial_fill
CAKE_VERIFY_CASE(dataflow_partial_fill, "dataflow.partial-fill")
