// Candidates that fail on the GPU, for `cake run` (on an H200): each must come back as a structured
// failure while the tool survives.
//   hang          the consumers never release a stage, so the producer's acquire waits forever: the
//                 analyzer rejects it (run it with --force), and on the GPU the wait traps after the hang
//                 timeout, naming the op.
//   past_n        the TMA-store epilogue on N = 100: TMA clips stores at 16-byte granularity, so columns
//                 100..103 of every row are written past N -- caught as lost poison in the row padding.
//   no_reference  declares no reference: reported as unsupported, never as passed.
#include <cake/cake.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

using namespace cake;

constexpr program never_releases() {
  auto k = kernel("gemm_hang").target(sm_90a).cluster(2, 1);
  k.persistent(raster::along_m(8));
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto mn = k.parallel(tiles(M, 128), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
  k.role("producer", warpgroups(1), regs(40), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt)).multicast();
      });
    });
  });
  k.role("consumer", warpgroups(2), regs(232), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);  // and no r.release(ab, s): the stage is never freed
      });
      r.store(D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}

CAKE_EXPORT(hang, never_releases(), reference("gemm"), shape(512, 512, 1024))
CAKE_EXPORT(past_n, cake::kernels::gemm_bf16_sm90(), reference("gemm"), shape(256, 100, 256))
CAKE_EXPORT(no_reference, cake::kernels::gemm_bf16_sm90(), shape(256, 256, 256))
