// dataflow.cluster-scatter-read: a split-K GEMM whose CTAs meet their partial sums with
// cluster_sum_scatter (each CTA sums only its own column block), then store the whole tile: every CTA
// writes the other blocks from its own partial sums. Fix: store only the CTA's block, selected by
// r.when(eq(r.cluster_rank(), q)) (kernels/gemm/sm90_splitk.hpp), or sum with cluster_sum.
namespace verify_corpus::dataflow_cluster_scatter_read {
constexpr program build(bool fixed) {
  auto k = kernel("scatter_read").target(sm_90a).cluster(2);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto work = k.parallel(split(2), tiles(M, 64), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(4)).carries(sA, sB);
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(work, [&](auto s, auto m, auto n) {
      r.fill(acc, 0.0f);
      r.loop(s, tiles(K, 64), 2, [&](auto) {
        auto st = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, st[sA], st[sB]);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, st);
      });
      r.cluster_sum_scatter(acc);
      auto out = r.convert<bf16>(acc);
      if (fixed) {
        r.for_range(2, [&](auto q) { r.when(eq(r.cluster_rank(), q), [&] { r.store(D.tile(m, n * 2 + q), out.cols(q, 2)); }); });
      } else {
        r.when(eq(r.cluster_rank(), 0), [&] { r.store(D.tile(m, n), out); });  // EXPECT: dataflow.cluster-scatter-read
      }
    });
  });
  k.role("load", warps(1), [&](role& r) {
    r.for_each(work, [&](auto s, auto m, auto n) {
      r.loop(s, tiles(K, 64), 2, [&](auto kt) {
        auto st = r.acquire(ab);
        r.tma_load(st[sA], A.tile(m, kt));
        r.tma_load(st[sB], B.tile(n, kt));
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::dataflow_cluster_scatter_read
CAKE_VERIFY_CASE(dataflow_cluster_scatter_read, "dataflow.cluster-scatter-read")
