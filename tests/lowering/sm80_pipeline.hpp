#pragma once
// An mbarrier pipeline on sm_80 filled by cp.async (issue 9), written with the public language; shared by
// the lowering tier (tests/lowering/test_sm80_pipeline.cpp) and the GPU tier (tests/gpu/test_sm80_pipeline.cpp).
//
//   Y[m, n] = 2 X[m, n] + 1   (f32)        S[m] = sum_n X[m, n]   (f32)        X bf16 [M, N]
//
// A producer warp copies 32 x 64 tiles of X with cp.async into the stages of a pipeline; its copies complete
// on the stage's 'full' barrier (each thread's cp.async.mbarrier.arrive.noinc, counted in the derived init
// count). Two consumer warps wait for a stage, load their 16 rows of it, release it, and compute. The walk is
// persistent and the stages few, so every barrier goes through many phases (parities wrap) on any shape
// with more than a few column tiles per CTA. Nothing here is sm_80-specific: the same schedule lowers for
// sm_90a (try_wait instead of test_wait).
#include <cake/cake.hpp>

namespace cake_tests {

// deferred: the consumers release each stage one trip later (r.release(p, s).later(1)) and free the last
// one after the loop (r.release_pending(p)), as an in-flight mainloop does.
constexpr cake::program sm80_cp_async_pipeline(cake::target_id target = cake::target_id::sm_80, int n_stages = 3, bool deferred = false) {
  using namespace cake;
  auto k = kernel(target == target_id::sm_80 ? (deferred ? "pipe80_rowsum_later" : "pipe80_rowsum") : (deferred ? "pipe90_rowsum_later" : "pipe90_rowsum"))
               .target(target)
               .persistent(raster::along_m(1));
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<bf16>("X", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  auto S = k.output<f32>("S", dims(M));
  auto rows = k.parallel(tiles(M, 32));
  auto sX = k.smem<bf16>("sX", {32, 64}, swizzle::b128);
  auto p = k.pipeline("p", stages(n_stages)).carries(sX);
  k.role("load", warps(1), [&](role& r) {
    r.for_each(rows, [&](auto m) {
      r.loop(tiles(N, 64), [&](auto j) {
        auto s = r.acquire(p);                // every thread waits for 'empty' (it writes the stage)
        r.cp_async(s[sX], X.tile(m, j));      // zero-filled past M and N; then each thread's noinc arrive on 'full'
      });
    });
  });
  k.role("sum", warps(2), [&](role& r) {
    auto x = r.fragment<bf16>("x", {16, 64});
    auto y = r.fragment<f32>("y", {16, 64});
    auto acc = r.row_vector<f32>("acc", 16);
    r.for_each(rows, [&](auto m) {
      r.zero(acc);
      r.loop(tiles(N, 64), [&](auto j) {
        auto s = r.wait(p);                   // test_wait.parity spin on 'full' (try_wait on sm_90a)
        r.load(x, s[sX].rows(r.warp(), 2));
        if (deferred) r.release(p, s).later(1);
        else r.release(p, s);                 // __syncwarp, then the leader's arrive on 'empty'
        r.set(y, x * 2.0f + 1.0f);
        r.store(Y.tile(m * 2 + r.warp(), j), y);
        r.row_sum(acc, x).accumulate();
      });
      if (deferred) r.release_pending(p);
      r.store(S.tile(m * 2 + r.warp()), acc);
    });
  });
  return k.build();
}

}  // namespace cake_tests
