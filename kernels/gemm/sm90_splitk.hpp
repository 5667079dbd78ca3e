#pragma once
// D[M,N] = A[M,K] * B[N,K]^T for small M (<= 64 rows per tile) on Hopper (sm_90a), split along K over
// the CTAs of a cluster: CTA r of a cluster of S takes K blocks r, r + S, r + 2S, ... of the same output
// tile, and the partial sums meet in distributed shared memory (cluster_sum); each CTA then stores 1/S of
// the tile's columns. One producer warp issues TMA, one consumer warpgroup issues wgmma. Used when M is
// too small to give every SM an output tile.
#include <compare>

#include <cake/cake.hpp>

namespace cake::kernels {

struct gemm_splitk_config {
  int bn = 128;      // output tile columns (the tile is 64 rows)
  int splits = 4;    // CTAs per cluster sharing one output tile, each on every splits-th K block
  int stages = 6;
  // Ordered field by field (cake::gemm's kernel table keys on the configuration).
  friend constexpr auto operator<=>(const gemm_splitk_config&, const gemm_splitk_config&) = default;
};

constexpr program gemm_splitk_sm90(gemm_splitk_config c = {}) {
  auto k = kernel("gemm_bf16_splitk_sm90").target(sm_90a).cluster(c.splits);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  // The split axis first: clusters group CTAs along it.
  auto work = k.parallel(split(c.splits), tiles(M, 64), tiles(N, c.bn));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {c.bn, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(c.stages)).carries(sA, sB);

  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, c.bn});
    r.for_each(work, [&](auto s, auto m, auto n) {
      r.fill(acc, 0.0f);  // a split with no K block still adds its zeros
      r.loop(s, tiles(K, 64), c.splits, [&](auto kt) {
        auto st = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, st[sA], st[sB]);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, st);
        (void)kt;
      });
      r.cluster_sum(acc);
      // Every CTA holds the whole sum; CTA `rank` stores the rank-th of `splits` column blocks (each block
      // a static part, so that its registers are indexed by constants).
      auto out = r.convert<bf16>(acc);
      r.for_range(c.splits, [&](auto q) {
        r.when(eq(r.cluster_rank(), q), [&] { r.store(D.tile(m, n * c.splits + q), out.cols(q, c.splits)); });
      });
    });
  });

  k.role("load", warps(1), [&](role& r) {
    r.for_each(work, [&](auto s, auto m, auto n) {
      r.loop(s, tiles(K, 64), c.splits, [&](auto kt) {
        auto st = r.acquire(ab);
        r.tma_load(st[sA], A.tile(m, kt));
        r.tma_load(st[sB], B.tile(n, kt));
      });
    });
  });
  return k.build();
}

}  // namespace cake::kernels
