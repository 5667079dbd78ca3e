// memory.tma-alignment: sA (64 x 64 bf16, 128B swizzle) is loaded in 16 boxes of 4 rows = 512 B; a
// 128B-swizzled box must start on 1024 B. Fix: 4 boxes of 16 rows.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_tma_alignment {

constexpr program build(bool fixed) {
  auto k = kernel("tma_alignment").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  const int boxes = fixed ? 4 : 16;
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, 8192);
    r.for_range(boxes, [&](auto i) {
      r.tma_load(sA.rows(i, boxes), g.A.tile(i, 0), full);  // EXPECT: memory.tma-alignment
    });
  });
  k.role("consumer", warps(1), [&](role& r) { r.wait(full); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::memory_tma_alignment
CAKE_VERIFY_CASE(memory_tma_alignment, "memory.tma-alignment")
