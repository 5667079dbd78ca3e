// memory.foreign-registers: the 'epilogue' role zeroes the accumulator declared by 'consumer'; registers
// belong to the warps that declare them. Fix: the epilogue declares its own tile.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::memory_foreign_registers {

constexpr program build(bool fixed) {
  auto k = kernel("foreign_registers").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  tma_producer(k, g, sA, sB, ab);
  reg_tile<f32> shared{};
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    shared = acc;
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  k.role("epilogue", warpgroups(1), [&](role& r) {
    auto own = r.fragment<f32>("own", {64, 128});
    r.zero(fixed ? own : shared);  // EXPECT: memory.foreign-registers
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::memory_foreign_registers
CAKE_VERIFY_CASE(memory_foreign_registers, "memory.foreign-registers")
