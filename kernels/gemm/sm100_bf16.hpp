#pragma once
// D[M,N] = A[M,K] * B[N,K]^T: bf16 in, f32 accumulate in tensor memory, bf16 out, on Blackwell (sm_100a).
// One warp issues TMA, one warp issues tcgen05.mma (a single thread per MMA) into a TMEM accumulator,
// one warpgroup drains the accumulator (tcgen05.ld) and stores the tile. Stages are freed by
// tcgen05.commit when the MMAs that read them complete; the accumulator is handed to the epilogue and
// back through a one-stage pipeline.
#include <cake/cake.hpp>

namespace cake::kernels {

struct gemm_sm100_config {
  int bm = 128, bn = 256, bk = 64;
  int stages = 4;
  int raster_group = 8;
  int drain_cols = 32;  // accumulator columns the epilogue moves per tcgen05.ld
};

constexpr program gemm_bf16_sm100(gemm_sm100_config c = {}) {
  auto k = kernel("gemm_bf16_sm100").target(sm_100a).persistent(raster::along_m(c.raster_group));
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto tiles_mn = k.parallel(tiles(M, c.bm), tiles(N, c.bn));
  const int chunks = c.bn / c.drain_cols;

  auto sA = k.smem<bf16>("sA", {c.bm, c.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {c.bn, c.bk}, swizzle::b128);
  auto tacc = k.tmem("acc", columns(c.bn));  // 128 lanes (rows) x N f32 columns
  auto ab = k.pipeline("ab", stages(c.stages)).carries(sA, sB);
  auto accp = k.pipeline("accp", stages(1)).carries(tacc);

  // Declared first, so that its warps are 0..3: tcgen05.ld lets warp w reach TMEM lanes 32*(w%4)..+31
  // only, and roles are laid out in declaration order (warps 2..5 would each miss their lanes).
  k.role("epilogue", warpgroups(1), [&](role& r) {
    auto frag = r.fragment<f32>("frag", {c.bm, c.drain_cols});  // warp w holds lanes 32w..32w+31
    r.for_each(tiles_mn, [&](auto m, auto n) {
      auto a = r.wait(accp);
      r.tcgen05_fence_after();
      r.for_range(chunks, [&](auto ch) {
        r.tmem_load(frag, a[tacc].cols(ch, chunks));
        auto out = r.convert<bf16>(frag);
        r.store(D.tile(m, n * chunks + ch), out);
      });
      r.tcgen05_fence_before();
      r.release(accp, a);
    });
  });

  k.role("producer", warps(1), [&](role& r) {
    r.for_each(tiles_mn, [&](auto m, auto n) {
      r.loop(tiles(K, c.bk), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt));
      });
    });
  });

  k.role("mma", warps(1), [&](role& r) {
    r.tmem_alloc(tacc);
    r.for_each(tiles_mn, [&](auto, auto) {
      auto a = r.acquire(accp);  // the epilogue has drained the accumulator
      r.tcgen05_fence_after();
      r.loop(tiles(K, c.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.tcgen05_fence_after();
        r.tcgen05_mma(a[tacc], s[sA], s[sB]).overwrite_on_first(kt);
        r.release(ab, s);  // tcgen05.commit: the stage is free once these MMAs have read it
      });
      r.commit(accp, a);  // tcgen05.commit: the accumulator is complete
    });
    r.acquire(accp);  // the epilogue has drained the last tile
    r.tmem_dealloc(tacc);
  });
  return k.build();
}

}  // namespace cake::kernels
