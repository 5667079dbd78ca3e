// Unit tests for cake/cost/kernel_form.hpp: what the cost model reads from a Program (the mainloop's
// MMA work, the bytes each K iteration moves, the epilogue), and the plain refusals for Programs it
// does not model.
#include <doctest/doctest.h>

#include <cake/cost.hpp>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "../../kernels/gemm/sm90_splitk.hpp"

using namespace cake;

namespace {
cost::kernel_form form_of(const program& p) { return cost::read_kernel_form(p, plan::make_plan(p)); }
}  // namespace

TEST_CASE("cost form: the default sm_90a GEMM, per K iteration and per tile") {
  const auto f = form_of(kernels::gemm_bf16_sm90());
  REQUIRE(f.ok);
  CHECK(f.tile[0] == 128);
  CHECK(f.tile[1] == 256);
  CHECK(f.tile_k == 64);  // read from the mainloop's bound, r.loop(tiles(K, 64), ...)
  CHECK(f.k_dim == 2);     // K: dims are M, N, K
  CHECK(f.stages == 4);
  CHECK(f.stage_bytes == 49152);
  CHECK(f.mma_in == dtype::bf16);
  CHECK(f.mma_n == 256);
  CHECK(f.consumer_warpgroups == 2);
  CHECK(f.mma_blocks == doctest::Approx(1.0));  // 2 warpgroups x one m64 block x 128 B of K: one calibration block
  REQUIRE(f.loads.size() == 2);
  CHECK(f.loads[0].axis == 0);  // A follows the tile's rows
  CHECK(f.loads[1].axis == 1);  // B follows its columns
  CHECK(f.bytes_received == 16384 + 32768);
  CHECK(f.bytes_issued == 16384 + 16384);  // B multicast: each CTA of the pair requests half
  CHECK(f.bytes_issued_multicast == 16384);
  CHECK(f.out_bytes_per_tile == 128 * 256 * 2);
  CHECK(f.stores_per_tile == 4);  // four 64-column chunks per warpgroup
  CHECK(f.epilogue_tma_store);
  CHECK_FALSE(f.epilogue_direct);
}

TEST_CASE("cost form: cluster 1 requests the whole B tile, fp8 moves 128 K elements per step") {
  kernels::gemm_sm90_config c;
  c.cluster_m = 1;
  const auto f1 = form_of(kernels::gemm_bf16_sm90(c));
  REQUIRE(f1.ok);
  CHECK(f1.bytes_issued == 49152);
  CHECK(f1.bytes_issued_multicast == 0);
  const auto f8 = form_of(kernels::gemm_sm90<e4m3>());
  REQUIRE(f8.ok);
  CHECK(f8.mma_in == dtype::e4m3);
  CHECK(f8.tile_k == 128);
  CHECK(f8.bytes_received == 49152);
  CHECK(f8.mma_blocks == doctest::Approx(1.0));
}

TEST_CASE("cost form: ping-pong consumers take whole tiles, so a tile's MMA is one warpgroup's") {
  kernels::gemm_sm90_config c;
  c.bn = 128;
  c.stages = 5;
  const auto halves = form_of(kernels::gemm_bf16_sm90(c));
  REQUIRE(halves.ok);
  CHECK_FALSE(halves.alternating);
  CHECK(halves.mma_blocks == doctest::Approx(1.0));  // two warpgroups x 64 rows of one 128-row tile
  c.pingpong = true;
  c.in_flight = 1;
  const auto pp = form_of(kernels::gemm_bf16_sm90(c));
  REQUIRE(pp.ok);
  CHECK(pp.alternating);
  CHECK(pp.consumer_warpgroups == 2);
  CHECK(pp.mma_blocks == doctest::Approx(1.0));  // one warpgroup x 128 rows: the same work per tile, not twice it
  c.bm = 64;
  c.cluster_m = 1;
  const auto pp64 = form_of(kernels::gemm_bf16_sm90(c));
  REQUIRE(pp64.ok);
  CHECK(pp64.alternating);
  CHECK(pp64.mma_blocks == doctest::Approx(0.5));
  bool noted = false;
  for (const auto& n : pp.notes) noted = noted || n.find("alternate tiles") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("cost form: split-K over a cluster reads the split, the K stride and the cluster sum") {
  kernels::gemm_splitk_config c;
  c.bn = 128;
  c.splits = 4;
  const auto f = form_of(kernels::gemm_splitk_sm90(c));
  REQUIRE(f.ok);
  CHECK(f.split == 4);
  CHECK(f.k_step == 4);  // loop(s, tiles(K, 64), 4, ...)
  CHECK(f.tile[0] == 64);
  CHECK(f.tile[1] == 128);
  CHECK(f.consumer_warpgroups == 1);
  CHECK_FALSE(f.alternating);
  CHECK(f.mma_blocks == doctest::Approx(0.5));  // one warpgroup x m64 x 128 B of K
  REQUIRE(f.loads.size() == 2);
  CHECK(f.loads[0].axis == 0);  // A follows the M tiles though the split axis comes first in the space
  CHECK(f.loads[1].axis == 1);
  CHECK(f.cluster_sum_bytes == 64 * 128 * 4 / 4);  // a reduce-scatter: each CTA reads its quarter of the tile from each peer
  CHECK(f.out_bytes_per_tile == doctest::Approx(64 * 128 * 2 / 4.0));  // each CTA stores its quarter
  // The estimate: K blocks split 4 ways, every CTA of a cluster on one tile.
  const auto e = cost::estimate(kernels::gemm_splitk_sm90(c), {{"M", 16}, {"N", 8192}, {"K", 8192}});
  REQUIRE(e.ok);
  CHECK(e.k_iterations == 32);  // 128 K blocks / 4
  CHECK(e.tiles == 4 * 64);     // split x M tiles x N tiles
  CHECK(e.compulsory_read_bytes == doctest::Approx(64.0 * 8192 * 2 + 8192.0 * 8192 * 2));
  bool noted = false;
  for (const auto& n : e.notes) noted = noted || n.find("split-K over a cluster of 4") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("cost form: split-K through global memory counts every CTA's part and the last one's reads and store") {
  kernels::gemm_splitk_config c;
  c.global_sum = true;
  c.bm = 128, c.bn = 192, c.splits = 3, c.stages = 5;
  const auto f = form_of(kernels::gemm_splitk_sm90(c));
  REQUIRE(f.ok);
  CHECK(f.global_sum);
  CHECK(f.split == 3);
  CHECK(f.k_step == 3);
  CHECK(f.cluster_sum_bytes == 0);
  // per CTA: two warpgroups' 64 x 192 f32 parts stored; a third of the CTAs (the last of each tile) read the
  // other two parts and store the bf16 tile
  const double part = 2 * 64 * 192 * 4.0;
  CHECK(f.out_bytes_per_tile == doctest::Approx(part + part * 2.0 / 3.0 + 2 * 64 * 192 * 2.0 / 3.0));
  const auto e = cost::estimate(kernels::gemm_splitk_sm90(c), {{"M", 512}, {"N", 2112}, {"K", 7168}});
  REQUIRE(e.ok);
  CHECK(e.k_iterations == 38);  // 112 K blocks / 3
  CHECK(e.tiles == 3 * 4 * 11);
  bool noted = false;
  for (const auto& n : e.notes) noted = noted || n.find("meet through global memory") != std::string::npos;
  CHECK(noted);
  // the same tiles and splits over a cluster's sum: clusters of 3 hold 117 CTAs of the H200 at once (the
  // calibration's measured concurrency), so its 132 CTAs take two waves, where the global form's take one
  kernels::gemm_splitk_config k = c;
  k.global_sum = false, k.stages = 3;
  const auto ek = cost::estimate(kernels::gemm_splitk_sm90(k), {{"M", 512}, {"N", 2112}, {"K", 7168}});
  REQUIRE(ek.ok);
  INFO("global " << e.time_us << " us, cluster " << ek.time_us << " us");
  CHECK(e.time_us < ek.time_us);
}

TEST_CASE("cost form: split-K in runs of K blocks costs the busiest CTA's blocks") {
  kernels::gemm_splitk_config c;
  c.global_sum = true;
  c.bn = 192, c.splits = 3, c.stages = 6;
  kernels::gemm_splitk_config g = c;
  g.k_group = 8;
  const auto f1 = form_of(kernels::gemm_splitk_sm90(c));
  const auto fg = form_of(kernels::gemm_splitk_sm90(g));
  REQUIRE(f1.ok);
  REQUIRE(fg.ok);
  CHECK(fg.tile_k == f1.tile_k);
  CHECK(fg.k_step == 3);
  CHECK(fg.mma_blocks == doctest::Approx(f1.mma_blocks));
  CHECK(fg.bytes_received == f1.bytes_received);
  CHECK(fg.k_run == 8);
  CHECK(f1.k_run == 1);
  bool noted = false;
  for (const auto& n : fg.notes) noted = noted || n.find("one run of 8 blocks in every 3") != std::string::npos;
  CHECK(noted);
  auto iterations = [](const kernels::gemm_splitk_config& x, long long K) {
    const auto e = cost::estimate(kernels::gemm_splitk_sm90(x), {{"M", 32}, {"N", 8192}, {"K", K}});
    REQUIRE(e.ok);
    return e.k_iterations;
  };
  CHECK(iterations(c, 28672) == 150);  // 448 K blocks, every 3rd: 150
  CHECK(iterations(g, 28672) == 152);  // 56 runs of 8, every 3rd: 19 runs for the first CTA
  CHECK(iterations(g, 64 * 436) == 148);  // 436 blocks: 55 runs, the last (4 blocks) the first CTA's: 18 x 8 + 4
  CHECK(iterations(g, 64 * 444) == 152);  // 444 blocks: 56 runs, the partial last the second CTA's: the first's 19 x 8
  CHECK(iterations(g, 64 * 17) == 8);  // 17 blocks: runs of 8, 8 and 1
  g.k_group = 150;
  CHECK(iterations(g, 28672) == 150);  // one run per split: 150, 150, 148
  CHECK(iterations(g, 4096) == 64);    // 64 blocks: one partial run, two splits with none
  CHECK(iterations(c, 4096) == 22);
}

TEST_CASE("cost form: narrower tiles and the direct-store epilogue") {
  kernels::gemm_sm90_config c;
  c.bn = 176;
  c.stages = 5;
  const auto f = form_of(kernels::gemm_bf16_sm90(c));
  REQUIRE(f.ok);
  CHECK(f.mma_n == 176);
  CHECK(f.stores_per_tile == 11);  // 16-column chunks
  c.direct_store = true;
  const auto d = form_of(kernels::gemm_bf16_sm90(c));
  REQUIRE(d.ok);
  CHECK(d.epilogue_direct);
  CHECK(d.out_bytes_per_tile == 128 * 176 * 2);
  bool noted = false;
  for (const auto& n : d.notes) noted = noted || n.find("direct-store") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("cost form: the lookahead's first K block before the loop, and its two store paths counted once per tile") {
  for (bool whole : {false, true}) {
    kernels::gemm_sm90_config c;
    c.whole_tile_staging = whole;
    c.stages = whole ? 3 : 4;
    const auto base = form_of(kernels::gemm_bf16_sm90(c));
    c.lookahead = true;
    const auto f = form_of(kernels::gemm_bf16_sm90(c));
    INFO("whole-tile staging " << whole);
    REQUIRE(base.ok);
    REQUIRE_MESSAGE(f.ok, f.why);  // (it was refused: "op#9 wgmma is not inside a loop over blocks of a dim")
    // the mainloop's work per K block and its blocks per tile are the plain form's (the K loop from the second
    // block plus the block issued ahead)
    CHECK(f.mma_blocks == doctest::Approx(base.mma_blocks));
    CHECK(f.tile_k == base.tile_k);
    // stores inside r.next_point are the per-tile epilogue; the same stores under the walk's last-point when
    // run once per CTA and are not counted again
    CHECK(f.out_bytes_per_tile == base.out_bytes_per_tile);
    CHECK(f.stores_per_tile == base.stores_per_tile);
    bool noted = false;
    for (const auto& n : f.notes) noted = noted || n.find("before the K loop") != std::string::npos;
    CHECK(noted);
  }
}

TEST_CASE("cost form: kernels outside the model are refused with the reason") {
  const auto f80 = form_of(kernels::gemm_bf16_sm80());
  CHECK_FALSE(f80.ok);
  CHECK(f80.why.find("mma_sync") != std::string::npos);
  const auto f100 = form_of(kernels::gemm_bf16_sm100());
  CHECK_FALSE(f100.ok);
  CHECK(f100.why.find("tcgen05") != std::string::npos);
  // A tiled copy: a parallel space of tiles but no MMA mainloop.
  constexpr program copy = [] {
    auto k = kernel("copy").target(sm_90a);
    auto [M, N] = k.dims("M", "N");
    auto A = k.input<bf16>("A", dims(M, N));
    auto mn = k.parallel(tiles(M, 128), tiles(N, 64));
    auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
    k.role("load", warps(1), [&](role& r) { r.for_each(mn, [&](auto m, auto n) { r.tma_load(sA, A.tile(m, n)); }); });
    return k.build();
  }();
  const auto fc = form_of(copy);
  CHECK_FALSE(fc.ok);
  CHECK(fc.why.find("no wgmma") != std::string::npos);
  // A space that is not two tiles(...) axes and a split (heads as a second axis).
  const auto heads = [] {
    auto k = kernel("heads").target(sm_90a);
    auto [S, H] = k.dims("S", "H");
    auto sp = k.parallel(tiles(S, 128), each(H));
    k.role("r", warps(1), [&](role& r) { r.for_each(sp, [&](auto, auto) { r.fence_proxy_async(); }); });
    return k.build();
  }();
  const auto fh = form_of(heads);
  CHECK_FALSE(fh.ok);
  CHECK(fh.why.find("not two tiles(dim, block) axes") != std::string::npos);
  // No parallel space at all.
  const auto bare = [] {
    auto k = kernel("bare").target(sm_90a);
    k.role("r", warps(1), [&](role& r) { r.fence_proxy_async(); });
    return k.build();
  }();
  CHECK(form_of(bare).why.find("no parallel space") != std::string::npos);
  // A wgmma whose loop is not written over blocks of a dim (a loop up to K / 64 is an index expression).
  const auto unblocked = [] {
    auto k = kernel("unblocked").target(sm_90a);
    auto [M, N, K] = k.dims("M", "N", "K");
    auto mn = k.parallel(tiles(M, 128), tiles(N, 128));
    auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
    auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
    k.role("c", warpgroups(2), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {64, 128});
      r.for_each(mn, [&](auto, auto) {
        r.loop(K.extent() / 64, [&](auto) { r.wgmma(acc, sA.rows(r.warpgroup(), 2), sB); });
      });
    });
    return k.build();
  }();
  const auto fu = form_of(unblocked);
  CHECK_FALSE(fu.ok);
  CHECK(fu.why.find("not inside a loop over blocks of a dim") != std::string::npos);
}
