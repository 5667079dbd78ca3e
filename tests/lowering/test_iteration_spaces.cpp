// Parallel spaces of more than two axes lower to a walk over the plane of the first two axes (rasterized)
// and the outer axes (axis 2 fastest), and assemble with NVRTC: the sm_90a GEMM with a third axis, each(H)
// (a batched GEMM over rank-3 tensors) or split(2) (two K slices whose partial products go to D[s]).
#include <doctest/doctest.h>

#include <string>

#include <cake/cake.hpp>
#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>

namespace {

using namespace cake;

// The schedule of kernels/gemm/sm90_bf16.hpp (cluster of 2 along M, B multicast, persistent, two
// consumer warpgroups, stmatrix + TMA store epilogue) over a space with a third axis.
program three_axis_gemm(bool split_k, bool descending = false) {
  auto k = kernel(split_k ? "gemm_split_k_sm90" : "gemm_batched_sm90").target(sm_90a).cluster(2, 1);
  k.persistent(raster::along_m(8));
  auto [M, N, K, H] = k.dims("M", "N", "K", "H");  // H: the batch, or (split_k) one partial output per slice
  auto A = split_k ? k.input<bf16>("A", dims(M, K)) : k.input<bf16>("A", dims(H, M, K));
  auto B = split_k ? k.input<bf16>("B", dims(N, K)) : k.input<bf16>("B", dims(H, N, K));
  auto D = k.output<bf16>("D", dims(H, M, N));
  auto sp = split_k      ? k.parallel(tiles(M, 128), tiles(N, 256), split(2))
            : descending ? k.parallel(tiles(M, 128).descending(), tiles(N, 256), each(H).descending())
                         : k.parallel(tiles(M, 128), tiles(N, 256), each(H));
  const int chunks = 256 / 64;
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {256, 64}, swizzle::b128);
  auto sD = k.smem<bf16>("sD", {128, 64}, swizzle::b128, copies(2));
  auto ab = k.pipeline("ab", stages(4)).carries(sA, sB);
  auto epi = k.named_barrier("epi", per_unit);
  // Batched: every K block of batch entry z. Split-K: K blocks z, z + 2, z + 4, ... of slice z.
  auto k_loop = [&](role& r, index_expr z, auto body) {
    if (split_k) r.loop(z, tiles(K, 64), 2, body);
    else r.loop(tiles(K, 64), body);
  };
  k.role("producer", warpgroups(1), regs(40), [&](role& r) {
    r.for_each(sp, [&](auto m, auto n, auto z) {
      k_loop(r, z, [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], split_k ? A.tile(m, kt) : A.tile(z, m, kt));
        r.tma_load(s[sB], split_k ? B.tile(n, kt) : B.tile(z, n, kt)).multicast();
      });
    });
  });
  k.role("consumer", warpgroups(2), regs(232), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 256});
    r.for_each(sp, [&](auto m, auto n, auto z) {
      k_loop(r, z, [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      auto out = r.convert<bf16>(acc);
      r.bulk_wait_read(0);
      r.for_range(chunks, [&](auto ch) {
        auto buf = sD.stage(ch % 2).rows(r.warpgroup(), 2);
        r.bulk_wait_read(1);
        r.sync(epi);
        r.stmatrix(buf, out.cols(ch, chunks));
        r.fence_proxy_async();
        r.sync(epi);
        r.tma_store(D.tile(z, m * 2 + r.warpgroup(), n * chunks + ch), buf);
        r.bulk_commit();
      });
    });
  });
  return k.build();
}

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

void check_three_axis(const program& p, const std::string& n_ax2) {
  REQUIRE(p.errors.empty());
  REQUIRE(p.space.count == 3);
  const auto l = lower::lower(p);  // runs the analyzer first: the schedule must be clean
  REQUIRE_MESSAGE(l.ok, l.error);
  // The walk: counts per axis (in 64 bits), the rasterized plane of axes 0 and 1, axis 2 outermost; the
  // walk itself in 32 bits, behind a trap for a space that 32 bits cannot count.
  CHECK(has(l.source, "const long long n_ax0_64 = (d_M + 127) / 128;"));
  CHECK(has(l.source, "const long long n_ax1_64 = (d_N + 255) / 256;"));
  CHECK(has(l.source, "const long long n_ax2_64 = " + n_ax2 + ";"));
  CHECK(has(l.source, "const long long walk64 = cluster_rows64 * n_ax1_64 * n_ax2_64;"));
  CHECK(has(l.source, "if (walk64 > 2147483647LL - (long long)gridDim.x) cake_dev::trap();"));
  CHECK(has(l.source, "const int walk = (int)walk64;"));
  CHECK(has(l.source, "const int t_first = (int)blockIdx.x / 2, t_stride = (int)gridDim.x / 2;"));  // persistent, clusters of 2
  CHECK(has(l.source, "t_iter < walk; t_iter += t_stride, ++t_step)"));
  CHECK(has(l.source, "const long long ax2 = (t_outer) % n_ax2;"));
  const auto art = jit::build(l.source, l.entry, "sm_90a");
  REQUIRE_MESSAGE(art.ok, art.diagnostics());
  CHECK(has(art.ptx, ".target sm_90a"));
  CHECK(has(art.ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
  CHECK(has(art.ptx, "cp.async.bulk.tensor.3d.global.shared::cta"));  // the rank-3 output
  CHECK(art.resources.spill_stores == 0);
  CHECK(l.block_threads == 384);
  CHECK(l.cluster[0] == 2);
}

}  // namespace

TEST_CASE("a batched sm_90a GEMM (tiles, tiles, each(H)) lowers to a 3-axis walk and assembles") {
  const program p = three_axis_gemm(false);
  check_three_axis(p, "d_H");
  const auto l = lower::lower(p);
  REQUIRE(l.ok);
  // Rank-3 operands: the batch index is the outermost coordinate, B is multicast across the pair.
  CHECK(has(l.source, "tma_load_3d_multicast"));
  const auto art = jit::build(l.source, l.entry, "sm_90a");
  REQUIRE(art.ok);
  CHECK(has(art.ptx, "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"));
}

TEST_CASE("a split-K sm_90a GEMM (tiles, tiles, split(2)) lowers to a 3-axis walk and assembles") {
  const program p = three_axis_gemm(true);
  check_three_axis(p, "2LL");
  const auto l = lower::lower(p);
  REQUIRE(l.ok);
  // The K loop of slice z starts at z and steps by 2; the accumulator is overwritten on its first trip.
  CHECK(has(l.source, " = (ax2), "));
  CHECK(has(l.source, " += 2)"));
  CHECK(has(l.source, " != (ax2) || kk > 0"));
  // The grid covers the two slices: one CTA per point when not limited by the SM count.
  const auto g = plan::plan_grid(p, [](int d) { return d == 0 ? 256LL : d == 1 ? 256LL : 4096LL; }, 132);
  CHECK(g.counts[2] == 2);
  CHECK(g.tile_count == 2 * 1 * 2);
  CHECK(g.ctas == 4);
}

TEST_CASE("descending parallel axes: the walk mirrors their coordinates (axis 0 over its count padded to whole clusters)") {
  const program p = three_axis_gemm(false, true);
  REQUIRE(p.errors.empty());
  CHECK(p.space.axes[0].descending);
  CHECK_FALSE(p.space.axes[1].descending);
  CHECK(p.space.axes[2].descending);
  const auto l = lower::lower(p);
  REQUIRE_MESSAGE(l.ok, l.error);
  // the cluster's two CTAs stay adjacent: rank r of cluster-row cm takes 2 * rows - 1 - (2 cm + r)
  CHECK(has(l.source, "const long long ax0 = cluster_rows * 2 - 1 - (cm * 2 + (int)cta_rank), ax1 = cn;"));
  CHECK(has(l.source, "const long long ax2 = n_ax2 - 1 - ((t_outer) % n_ax2);"));
  const auto art = jit::build(l.source, l.entry, "sm_90a");
  REQUIRE_MESSAGE(art.ok, art.diagnostics());
  CHECK(art.resources.spill_stores == 0);
  CHECK(art.resources.stack_frame == 0);
}
