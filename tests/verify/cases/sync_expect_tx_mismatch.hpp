// sync.expect-tx-mismatch: the producer expects 8192 bytes, but the 128 x 64 bf16 box it loads delivers
// 16384, so the phase never completes. Fix: expect the full box.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_expect_tx_mismatch {

constexpr program build(bool fixed) {
  auto k = kernel("expect_tx").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, fixed ? 16384 : 8192);  // EXPECT: sync.expect-tx-mismatch
    r.tma_load(sA, g.A.tile(0, 0), full);
  });
  k.role("consumer", warps(1), [&](role& r) { r.wait(full); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::sync_expect_tx_mismatch
CAKE_VERIFY_CASE(sync_expect_tx_mismatch, "sync.expect-tx-mismatch")
