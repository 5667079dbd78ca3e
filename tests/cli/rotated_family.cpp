// A seeded failure class for `cake evolve` on a GPU (docs/evolve.md, "A failure class from the GPU"): a
// plain sm_90a GEMM (a TMA producer, two consumer warpgroups of 64 rows, stores from registers) over
// bn x stages x rotate. `rotate` remaps the walk for DRAM-channel spread: inside each group of 4 row
// tiles, column tile n takes the row tiles rotated by n, m -> (m / 4) * 4 + (m + n) % 4. That is a
// bijection of the tiles where the row-tile count is a multiple of 4 (4,096 rows: 32 tiles) and not
// elsewhere: in a last, partial group some tiles are written twice and others never, and the rotated
// index can land past the tensor, where TMA clips the store. Before memory.output-coverage the analyzer
// passed every point (memory.tile-coverage noted such coordinates as unchecked); on the GPU the run gate's
// ragged shape (300 x 200 x 1000: 3 row tiles) computes a wrong result. The accepted entry
// (tests/verify/accepted/rotated_tiles) pins the rule that now rejects them.
#include <cake/cake.hpp>

namespace rotated_test {

struct params {
  int bn = 128;
  int stages = 2;
  bool rotate = false;
};

constexpr cake::program generate(params p) {
  using namespace cake;
  auto k = kernel("gemm_rotated").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto mn = k.parallel(tiles(M, 128), tiles(N, p.bn));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {p.bn, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(p.stages)).carries(sA, sB);
  // The row tile a point works on: its own, or rotated inside its group of 4.
  auto row_tile = [&](role& r, auto m, auto n) { return p.rotate ? (m / 4) * 4 + r.let_index((m + n) % 4) : m; };
  k.role("producer", warpgroups(1), regs(40), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      auto mr = row_tile(r, m, n);
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(mr, kt));
        r.tma_load(s[sB], B.tile(n, kt));
      });
    });
  });
  k.role("consumer", warpgroups(2), regs(232), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, p.bn});
    r.for_each(mn, [&](auto m, auto n) {
      auto mr = row_tile(r, m, n);
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(D.tile(mr * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}

}  // namespace rotated_test

CAKE_EXPORT_FAMILY(rotated, rotated_test::generate, rotated_test::params{},
                   domain(axis("bn", &rotated_test::params::bn, {128, 256}), axis("stages", &rotated_test::params::stages, {2, 4}),
                          axis("rotate", &rotated_test::params::rotate, {false, true})),
                   reference("gemm"), peer("cublas"), shape(4096, 4096, 4096))
