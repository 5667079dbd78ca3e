// Builder range checks on mbarrier counts (recorded in program::errors when built at run time).
#pragma once
#include "corpus.hpp"

// sync.tx-count-range: an expect_tx above 2^20-1 bytes; nothing delivers them either.
// ALSO: sync.expect-tx-mismatch
namespace verify_corpus::sync_tx_count_range {
constexpr program build(bool fixed) {
  auto k = kernel("tx_range").target(sm_90a);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, fixed ? 0 : 1 << 21);  // EXPECT: sync.tx-count-range
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::sync_tx_count_range
CAKE_VERIFY_CASE(sync_tx_count_range, "sync.tx-count-range")

// sync.arrival-count-range: an arrival count above 2^20-1 (one arrival then leaves the phase incomplete).
// ALSO: sync.arrival-count
namespace verify_corpus::sync_arrival_count_range {
constexpr program build(bool fixed) {
  auto k = kernel("arrival_range").target(sm_90a);
  auto b = k.mbarrier("b", arrivals(fixed ? 1 : 1 << 21));  // EXPECT: sync.arrival-count-range
  k.role("producer", warps(1), [&](role& r) { r.arrive(b); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::sync_arrival_count_range
CAKE_VERIFY_CASE(sync_arrival_count_range, "sync.arrival-count-range")
