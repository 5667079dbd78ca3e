#pragma once
// D[M,N] = A[M,K] * B[N,K]^T: bf16 in, f32 accumulate, bf16 out, on Ampere (sm_80).
// The classic multistage kernel: every warp both copies (cp.async, stages-1 K tiles in flight) and
// computes (ldmatrix + mma.sync on its warp tile); one CTA barrier per K step separates the reads of
// stage kt from the overwrite of the stage that was read one step earlier.
#include <cake/cake.hpp>

namespace cake::kernels {

struct gemm_sm80_config {
  int bm = 128, bn = 128, bk = 64;
  int stages = 4;
  int warps_m = 2, warps_n = 2;  // warp grid over the output tile
};

constexpr program gemm_bf16_sm80(gemm_sm80_config c = {}) {
  auto k = kernel("gemm_bf16_sm80").target(sm_80);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto tiles_mn = k.parallel(tiles(M, c.bm), tiles(N, c.bn));

  auto sA = k.smem<bf16>("sA", {c.bm, c.bk}, swizzle::b128, copies(c.stages));
  auto sB = k.smem<bf16>("sB", {c.bn, c.bk}, swizzle::b128, copies(c.stages));
  auto cta = k.named_barrier("cta");
  const int lookahead = c.stages - 1;  // K tiles in flight

  k.role("mma", warps(c.warps_m * c.warps_n), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {c.bm / c.warps_m, c.bn / c.warps_n});
    auto wm = r.warp() / c.warps_n;
    auto wn = r.warp() % c.warps_n;
    r.for_each(tiles_mn, [&](auto m, auto n) {
      r.zero(acc);
      r.for_range(lookahead, [&](auto s) {
        r.cp_async(sA.stage(s), A.tile(m, s));
        r.cp_async(sB.stage(s), B.tile(n, s));
        r.cp_async_commit();
      });
      r.loop(tiles(K, c.bk), [&](auto kt) {
        r.cp_async_wait(lookahead - 1);  // K tile kt has landed
        r.sync(cta);                     // ...for every warp; and everyone is done with tile kt-1
        r.mma_sync(acc, sA.stage(kt).rows(wm, c.warps_m), sB.stage(kt).rows(wn, c.warps_n));
        r.cp_async(sA.stage(kt + lookahead), A.tile(m, kt + lookahead));
        r.cp_async(sB.stage(kt + lookahead), B.tile(n, kt + lookahead));
        r.cp_async_commit();
      });
      r.cp_async_wait(0);
      r.sync(cta);  // no warp may still be reading before the next tile's prologue overwrites stages
      auto out = r.convert<bf16>(acc);
      r.store(D.tile(m * c.warps_m + wm, n * c.warps_n + wn), out);
    });
  });
  return k.build();
}

}  // namespace cake::kernels
