// resource.smem-overflow: 8 stages of 32 KB (two 128x64 bf16 tiles) need 256 KB; sm_90a allows 227 KB.
// Fix: 4 stages.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::resource_smem_overflow {
constexpr program build(bool fixed) {
  auto k = kernel("smem_overflow").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(fixed ? 4 : 8)).carries(sA, sB);  // EXPECT: resource.smem-overflow
  tma_producer(k, g, sA, sB, ab);
  wgmma_consumer(k, g, sA, sB, ab);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_smem_overflow
CAKE_VERIFY_CASE(resource_smem_overflow, "resource.smem-overflow")
