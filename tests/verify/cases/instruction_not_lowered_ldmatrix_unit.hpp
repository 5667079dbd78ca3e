// instruction.not-lowered: ldmatrix into a tile held per warpgroup. ldmatrix gives its tile the mma.sync
// layout of one warp's tile, which does not split over a warpgroup's 128 threads; no rule reported it and the
// lowering refused the kernel (found by the builder fuzzer). Fix: a warps(n) role, each warp reading its rows.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::instruction_not_lowered_ldmatrix_unit {
constexpr program build(bool fixed) {
  auto k = kernel("ldmatrix_unit").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<f32>("D", dims(M, N));
  auto tl = k.parallel(tiles(M, 64));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {32, 64}, swizzle::b128);
  auto cta = k.named_barrier("cta");
  auto body = [&](role& r) {
    auto a = r.fragment<bf16>("a", {fixed ? 16 : 64, 64});
    auto acc = r.accumulator<f32>("acc", {16, 32});
    r.for_each(tl, [&](index_expr m) {
      r.sync(cta);
      r.cp_async(sA, A.tile(m, 0));
      r.cp_async(sB, B.tile(0, 0));
      r.cp_async_commit();
      r.cp_async_wait(0);
      r.sync(cta);
      if (fixed) {
        r.ldmatrix(a, sA.rows(r.warp(), 4));
        r.mma_sync(acc, a, sB).overwrite();
        r.store(D.tile(m * 4 + r.warp(), 0), acc);
      } else {
        r.ldmatrix(a, sA);  // EXPECT: instruction.not-lowered
      }
    });
  };
  if (fixed) k.role("w", warps(4), body);
  else k.role("w", warpgroups(1), body);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_lowered_ldmatrix_unit
CAKE_VERIFY_CASE(instruction_not_lowered_ldmatrix_unit, "instruction.not-lowered")
