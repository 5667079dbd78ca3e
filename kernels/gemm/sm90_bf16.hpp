#pragma once
// D[M,N] = A[M,K] * B[N,K]^T: bf16 in, f32 accumulate, bf16 out, on Hopper (sm_90a).
// One producer warpgroup issues TMA; two consumer warpgroups issue wgmma, each on half the rows of the
// tile. Persistent over tiles with a rasterized schedule; B is multicast to the CTAs of a cluster along
// M (they share the N tile). The epilogue goes through stmatrix into a double-buffered smem chunk and a
// TMA store, while the producer already loads the next tile.
#include <cake/cake.hpp>

namespace cake::kernels {

struct gemm_sm90_config {
  int bm = 128, bn = 256, bk = 64;  // output tile and K step
  int stages = 4;                   // depth of the TMA -> wgmma pipeline
  int cluster_m = 2;                // CTAs per cluster along M sharing (multicasting) the B tile
  int raster_group = 8;             // tiles per rasterization group along M
  int producer_regs = 40, consumer_regs = 232;
};

constexpr program gemm_bf16_sm90(gemm_sm90_config c = {}) {
  auto k = kernel("gemm_bf16_sm90").target(sm_90a).cluster(c.cluster_m, 1).persistent(raster::along_m(c.raster_group));
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto B = k.input<bf16>("B", dims("N", "K"));
  auto D = k.output<bf16>("D", dims("M", "N"));
  auto t = k.tile(c.bm, c.bn, c.bk);
  const int chunks = t.n / 64;  // the epilogue stores 64-column chunks (one 128B swizzle span)

  auto sA = k.smem<bf16>("sA", {t.m, t.k}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {t.n, t.k}, swizzle::b128);
  auto sD = k.smem<bf16>("sD", {t.m, 64}, swizzle::b128, copies(2));
  auto ab = k.pipeline("ab", stages(c.stages)).carries(sA, sB);
  auto epi = k.named_barrier("epi", per_unit);

  k.role("producer", warpgroups(1), regs(c.producer_regs), [&](role& r) {
    r.for_each_tile(t, [&](auto tile) {
      r.for_each_k(t, [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(tile.m, kt));
        r.tma_load(s[sB], B.tile(tile.n, kt)).multicast();
      });
    });
  });

  k.role("consumer", warpgroups(2), regs(c.consumer_regs), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {t.m / 2, t.n});
    r.for_each_tile(t, [&](auto tile) {
      r.for_each_k(t, [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      auto out = r.convert<bf16>(acc);
      r.for_range(chunks, [&](auto ch) {
        auto buf = sD.stage(ch % 2).rows(r.warpgroup(), 2);
        r.bulk_wait_read(1);  // the store that last read this buffer is done reading it
        r.sync(epi);
        r.stmatrix(buf, out.cols(ch, chunks));
        r.fence_proxy_async();
        r.sync(epi);
        r.tma_store(D.tile(tile.m * 2 + r.warpgroup(), tile.n * chunks + ch), buf);
        r.bulk_commit();
      });
    });
  });
  return k.build();
}

}  // namespace cake::kernels
