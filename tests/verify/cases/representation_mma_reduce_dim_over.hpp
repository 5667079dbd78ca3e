// representation.mma-reduce-dim, second form: over(dim) names a dim that an operand does not hold.
// (A separate file: the runner checks every `EXPECT:` line of a file against each bad twin in it.)
#pragma once
#include "corpus.hpp"

// D = A Bᵀ with A[M, K] and B[N, K], written .over(N): A holds (M, K), so N cannot be contracted.
// Fix: .over(K), the dim both operands hold.
namespace verify_corpus::representation_mma_reduce_dim_over {
constexpr program build(bool fixed) {
  return sm90_with([&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
    k.role("consumer", warpgroups(2), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
      r.for_each(g.mn, [&](auto m, auto n) {
        r.loop(tiles(g.K, g.bk), [&](auto kt) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt).over(fixed ? g.K : g.N);  // EXPECT: representation.mma-reduce-dim
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(ab, s);
        });
        r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
      });
    });
  });
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_mma_reduce_dim_over
CAKE_VERIFY_CASE(representation_mma_reduce_dim_over, "representation.mma-reduce-dim")
