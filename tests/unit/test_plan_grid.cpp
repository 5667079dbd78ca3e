// Unit tests for cake/plan/grid.hpp: points per axis of the parallel space (tiles, each, split), cluster
// padding of axis 0, CTAs per launch (one per point, or one per SM when persistent), the rasterized tile
// order, which must be a bijection over the tiles, and plan::point_at, which must visit every point once.
#include <doctest/doctest.h>

#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <cake/plan/walk_balance.hpp>

#include "../../kernels/attention/prefill.hpp"
#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {
// Dims are M, N, K in declaration order for the reference schedules (k.dims("M", "N", "K")).
struct mkn {
  long long m, n, k;
  long long operator()(int dim) const { return dim == 0 ? m : dim == 1 ? n : k; }
};
// Trips of the first dynamic loop of a Program (the GEMM mainloop, r.loop(tiles(K, bk), ...)) for the
// given dim extents: the loop's bound evaluated as lowering evaluates it.
long long mainloop_trips(const program& p, mkn d) {
  REQUIRE_FALSE(p.loops.empty());
  return p.loops[0].hi.eval([&](const index_term& t) { return t.kind == var_kind::dim ? d(t.ref) : 0LL; });
}
}  // namespace

TEST_CASE("grid: one CTA per tile when not persistent (sm_80 GEMM)") {
  constexpr program p = kernels::gemm_bf16_sm80();
  const auto g = plan::plan_grid(p, mkn{1000, 1000, 4096}, 108);
  CHECK(g.tiles[0] == 8);  // ceil(1000 / 128)
  CHECK(g.tiles[1] == 8);
  CHECK(g.tile_count == 64);
  CHECK(g.cluster == 1);
  CHECK(g.clusters == 64);
  CHECK(g.ctas == 64);
  CHECK(g.axes == 2);
  CHECK(g.counts[0] == 8);
  CHECK(g.counts[1] == 8);
  CHECK(g.outer == 1);
  CHECK(mainloop_trips(p, mkn{1000, 1000, 4096}) == 64);  // the K loop is a loop bound now, not part of the grid
  CHECK(plan::plan_grid(p, mkn{1, 1, 1}, 108).ctas == 1);
  CHECK(plan::plan_grid(p, mkn{128, 129, 65}, 108).tile_count == 2);
  CHECK(mainloop_trips(p, mkn{128, 129, 65}) == 2);
}

TEST_CASE("grid: persistent with clusters of 2 (sm_90a GEMM): one cluster per pair of SMs") {
  constexpr program p = kernels::gemm_bf16_sm90();
  const auto g = plan::plan_grid(p, mkn{4096, 4096, 4096}, 132);
  CHECK(g.tiles[0] == 32);
  CHECK(g.tiles[1] == 16);
  CHECK(g.tile_count == 512);
  CHECK(g.cluster == 2);
  CHECK(g.cluster_shape[0] == 2);
  CHECK(g.cluster_shape[1] == 1);
  CHECK(g.cluster_tiles[0] == 16);
  CHECK(g.cluster_tiles[1] == 16);
  CHECK(g.clusters == 256);
  CHECK(g.ctas == 132);  // 66 clusters fill the 132 SMs
  CHECK(mainloop_trips(p, mkn{4096, 4096, 4096}) == 64);
}

TEST_CASE("grid: a persistent walk declared ctas_per_sm(2) launches two CTAs (here one cluster of 2) per SM") {
  constexpr program one = kernels::gemm_bf16_sm90();
  constexpr program two = [] {
    program q = kernels::gemm_bf16_sm90();
    q.launch.ctas_per_sm = 2;
    return q;
  }();
  CHECK(plan::plan_grid(one, mkn{4096, 4096, 4096}, 132).ctas == 132);
  CHECK(plan::plan_grid(two, mkn{4096, 4096, 4096}, 132).ctas == 264);
  CHECK(plan::plan_grid(two, mkn{1024, 1024, 64}, 132).ctas == 32);  // fewer points than CTAs: one per point
}

TEST_CASE("grid: tile rows are padded to whole clusters, small problems launch fewer CTAs") {
  constexpr program p = kernels::gemm_bf16_sm90();
  const auto odd = plan::plan_grid(p, mkn{1100, 256, 64}, 132);  // 9 tile rows -> 10
  CHECK(odd.tiles[0] == 10);
  CHECK(odd.tiles[1] == 1);
  CHECK(odd.clusters == 5);
  CHECK(odd.ctas == 10);
  CHECK(odd.ctas % odd.cluster == 0);
  const auto one_sm = plan::plan_grid(p, mkn{4096, 4096, 64}, 1);  // fewer SMs than a cluster
  CHECK(one_sm.ctas == 2);
}

TEST_CASE("grid: persistent without clusters (sm_100a GEMM)") {
  constexpr program p = kernels::gemm_bf16_sm100();
  const auto g = plan::plan_grid(p, mkn{8192, 8192, 8192}, 148);
  CHECK(g.tiles[0] == 64);
  CHECK(g.tiles[1] == 32);
  CHECK(g.ctas == 148);
  CHECK(mainloop_trips(p, mkn{8192, 8192, 8192}) == 128);
  CHECK(plan::ceil_div(7, 2) == 4);
  CHECK(plan::ceil_div(8, 2) == 4);
}

TEST_CASE("raster: along_m walks groups of rows column by column") {
  const raster r = raster::along_m(2);
  // 4 cluster rows x 3 columns, groups of 2 rows.
  const std::pair<long long, long long> expected[] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2},
                                                      {2, 0}, {3, 0}, {2, 1}, {3, 1}, {2, 2}, {3, 2}};
  for (int i = 0; i < 12; ++i) {
    const auto t = plan::raster_tile(i, 4, 3, r);
    CAPTURE(i);
    CHECK(t.m == expected[i].first);
    CHECK(t.n == expected[i].second);
  }
}

TEST_CASE("raster: a short last group and group 1 (plain row-major order)") {
  // 3 rows, groups of 2: the last group has one row.
  CHECK(plan::raster_tile(6, 3, 3, raster::along_m(2)).m == 2);
  CHECK(plan::raster_tile(6, 3, 3, raster::along_m(2)).n == 0);
  CHECK(plan::raster_tile(8, 3, 3, raster::along_m(2)).n == 2);
  for (int i = 0; i < 12; ++i) {
    const auto t = plan::raster_tile(i, 4, 3, raster::along_m(1));
    CHECK(t.m == i / 3);
    CHECK(t.n == i % 3);
  }
}

TEST_CASE("raster: along_n is the transpose of along_m") {
  for (long long rows : {1, 3, 8})
    for (long long cols : {1, 5, 16})
      for (int group : {1, 2, 8})
        for (long long i = 0; i < rows * cols; ++i) {
          const auto a = plan::raster_tile(i, rows, cols, raster::along_n(group));
          const auto b = plan::raster_tile(i, cols, rows, raster::along_m(group));
          CHECK(a.m == b.n);
          CHECK(a.n == b.m);
        }
}

TEST_CASE("raster: a bijection over all tiles for several shapes, groups and both orders") {
  for (long long rows : {1, 2, 3, 7, 16, 33})
    for (long long cols : {1, 4, 9, 32})
      for (int group : {0, 1, 2, 3, 8, 64})
        for (raster_order order : {raster_order::along_m, raster_order::along_n}) {
          const raster r{order, group};
          std::set<std::pair<long long, long long>> seen;
          bool in_range = true;
          for (long long i = 0; i < rows * cols; ++i) {
            const auto t = plan::raster_tile(i, rows, cols, r);
            in_range = in_range && t.m >= 0 && t.m < rows && t.n >= 0 && t.n < cols;
            seen.insert({t.m, t.n});
          }
          CAPTURE(rows);
          CAPTURE(cols);
          CAPTURE(group);
          CHECK(in_range);
          CHECK(seen.size() == static_cast<std::size_t>(rows * cols));
        }
}

TEST_CASE("raster: consecutive CTAs of a group share a column (L2 reuse of the B tile)") {
  // With along_m(8), the first 8 indices cover rows 0..7 of column 0.
  for (int i = 0; i < 8; ++i) {
    const auto t = plan::raster_tile(i, 16, 16, raster::along_m(8));
    CHECK(t.n == 0);
    CHECK(t.m == i);
  }
}

// ---- N-axis spaces ----------------------------------------------------------------------------------

namespace {
// A kernel over dims M, N, H, B (indices 0..3) with the given parallel space and launch.
template <class... Axes>
program space_kernel(int cluster, bool persistent, Axes... axes) {
  auto k = kernel("space").target(sm_90a).cluster(cluster);
  if (persistent) k.persistent(raster::along_m(2));
  k.dims("M", "N", "H", "B");
  k.parallel(axes...);
  k.role("r", warps(1), [&](role& r) { r.fence_proxy_async(); });
  return k.build();
}
struct mnhb {
  long long m, n, h, b;
  long long operator()(int dim) const { return dim == 0 ? m : dim == 1 ? n : dim == 2 ? h : b; }
};
}  // namespace

TEST_CASE("grid: one axis (tiles): the second plane axis is one point wide") {
  const program p = space_kernel(1, false, tiles("M", 64));
  REQUIRE(p.errors.empty());
  const auto g = plan::plan_grid(p, mnhb{1000, 1, 1, 1}, 132);
  CHECK(g.axes == 1);
  CHECK(g.counts[0] == 16);  // ceil(1000 / 64)
  CHECK(g.counts[1] == 1);
  CHECK(g.tiles[0] == 16);
  CHECK(g.tiles[1] == 1);
  CHECK(g.outer == 1);
  CHECK(g.tile_count == 16);
  CHECK(g.ctas == 16);
  // Clusters of 2 along axis 0: 15 blocks are padded to 16.
  const program c = space_kernel(2, false, tiles("M", 64));
  const auto gc = plan::plan_grid(c, mnhb{900, 1, 1, 1}, 132);
  CHECK(gc.counts[0] == 16);
  CHECK(gc.cluster_tiles[0] == 8);
  CHECK(gc.clusters == 8);
  CHECK(gc.ctas == 16);
}

TEST_CASE("grid: two axes (tiles and each): each(H) has one point per element of H") {
  const program p = space_kernel(1, false, tiles("M", 128), each("H"));
  const auto g = plan::plan_grid(p, mnhb{1000, 1, 3, 1}, 132);
  CHECK(g.axes == 2);
  CHECK(g.counts[0] == 8);
  CHECK(g.counts[1] == 3);
  CHECK(g.tiles[1] == 3);
  CHECK(g.outer == 1);
  CHECK(g.tile_count == 24);
  CHECK(g.ctas == 24);
}

TEST_CASE("grid: three axes (tiles, tiles, split): the third is outer, cluster padding and persistence") {
  const program p = space_kernel(1, false, tiles("M", 128), tiles("N", 256), split(4));
  const auto g = plan::plan_grid(p, mnhb{1000, 1000, 1, 1}, 132);
  CHECK(g.axes == 3);
  CHECK(g.counts[0] == 8);
  CHECK(g.counts[1] == 4);
  CHECK(g.counts[2] == 4);  // split(4): the slice count, whatever the dims
  CHECK(g.outer == 4);
  CHECK(g.tile_count == 128);
  CHECK(g.clusters == 128);
  CHECK(g.ctas == 128);
  // Clusters of 2: axis 0 goes from 9 blocks to 10; every plane is padded alike.
  const program c = space_kernel(2, false, tiles("M", 128), tiles("N", 256), split(4));
  const auto gc = plan::plan_grid(c, mnhb{1100, 1000, 1, 1}, 132);
  CHECK(gc.counts[0] == 10);
  CHECK(gc.tiles[0] == 10);
  CHECK(gc.cluster_tiles[0] == 5);
  CHECK(gc.cluster_tiles[1] == 4);
  CHECK(gc.clusters == 5 * 4 * 4);
  CHECK(gc.tile_count == 10 * 4 * 4);
  CHECK(gc.ctas == 160);
  // Persistent: one cluster per pair of SMs, never more clusters than work items.
  const program pp = space_kernel(2, true, tiles("M", 128), tiles("N", 256), split(4));
  CHECK(plan::plan_grid(pp, mnhb{1100, 1000, 1, 1}, 132).ctas == 132);
  CHECK(plan::plan_grid(pp, mnhb{256, 256, 1, 1}, 132).ctas == 2 * 4);  // 1 x 1 clusters x 4 slices
  CHECK(plan::plan_grid(pp, mnhb{256, 256, 1, 1}, 1).ctas == 2);        // fewer SMs than a cluster
}

TEST_CASE("grid: five axes (tiles, tiles, each, each, split)") {
  const program p = space_kernel(1, true, tiles("M", 64), tiles("N", 32), each("H"), each("B"), split(3));
  REQUIRE(p.errors.empty());
  const auto g = plan::plan_grid(p, mnhb{256, 100, 5, 2}, 100);
  CHECK(g.axes == 5);
  CHECK(g.counts[0] == 4);
  CHECK(g.counts[1] == 4);  // ceil(100 / 32)
  CHECK(g.counts[2] == 5);
  CHECK(g.counts[3] == 2);
  CHECK(g.counts[4] == 3);
  CHECK(g.outer == 5 * 2 * 3);
  CHECK(g.tile_count == 4 * 4 * 30);
  CHECK(g.clusters == 480);
  CHECK(g.ctas == 100);  // persistent: one CTA per SM
}

TEST_CASE("grid: a kernel without a parallel space has one point") {
  auto k = kernel("none").target(sm_90a);
  k.role("r", warps(1), [&](role& r) { r.fence_proxy_async(); });
  const auto g = plan::plan_grid(k.build(), mnhb{1, 1, 1, 1}, 132);
  CHECK(g.axes == 0);
  CHECK(g.tile_count == 1);
  CHECK(g.ctas == 1);
}

TEST_CASE("point_at: a 3-axis space is covered exactly once, in range, for clusters, rasters and persistence") {
  for (int cluster : {1, 2})
    for (raster r : {raster::along_m(2), raster::along_n(3), raster::along_m(1)}) {
      const program p = space_kernel(cluster, true, tiles("M", 64), tiles("N", 64), each("H"));
      const auto g = plan::plan_grid(p, mnhb{300, 130, 3, 1}, 8);  // 5 (padded to 6 with clusters of 2) x 3 x 3
      CAPTURE(cluster);
      CAPTURE(r.group);
      CHECK(g.counts[0] == (cluster == 1 ? 5 : 6));
      CHECK(g.counts[1] == 3);
      CHECK(g.counts[2] == 3);
      std::set<std::tuple<long long, long long, long long>> seen;
      bool in_range = true;
      long long visits = 0;
      // Walk steps are cluster work items; each CTA of a cluster adds its rank along axis 0.
      for (long long i = 0; i < g.clusters; ++i) {
        const auto pt = plan::point_at(i, g, r);
        for (int rank = 0; rank < g.cluster_shape[0]; ++rank) {
          const long long c0 = pt.c[0] + rank;
          in_range = in_range && c0 >= 0 && c0 < g.counts[0] && pt.c[1] >= 0 && pt.c[1] < g.counts[1] && pt.c[2] >= 0 && pt.c[2] < g.counts[2];
          seen.insert({c0, pt.c[1], pt.c[2]});
          ++visits;
        }
      }
      CHECK(in_range);
      CHECK(visits == g.tile_count);
      CHECK(seen.size() == static_cast<std::size_t>(g.tile_count));
      // Axis 2 is outer: the first plane is walked completely before H moves.
      const long long plane = g.cluster_tiles[0] * g.cluster_tiles[1];
      CHECK(plan::point_at(plane - 1, g, r).c[2] == 0);
      CHECK(plan::point_at(plane, g, r).c[2] == 1);
    }
}

TEST_CASE("point_at: outer axes are row-major with axis 2 fastest") {
  const program p = space_kernel(1, false, tiles("M", 64), tiles("N", 64), each("H"), each("B"), split(2));
  const auto g = plan::plan_grid(p, mnhb{64, 64, 3, 2}, 132);  // a plane of one point
  REQUIRE(g.clusters == 12);
  for (long long i = 0; i < 12; ++i) {
    const auto pt = plan::point_at(i, g, raster::along_m(8));
    CAPTURE(i);
    CHECK(pt.c[0] == 0);
    CHECK(pt.c[1] == 0);
    CHECK(pt.c[2] == i % 3);
    CHECK(pt.c[3] == (i / 3) % 2);
    CHECK(pt.c[4] == i / 6);
  }
}

TEST_CASE("mirrored: a descending axis visits its points last to first, the others are unchanged") {
  const program p = space_kernel(2, true, tiles("M", 64).descending(), tiles("N", 64), each("H").descending());
  REQUIRE(p.errors.empty());
  const auto g = plan::plan_grid(p, mnhb{300, 130, 3, 1}, 8);  // 5 tile rows, padded to 6 for clusters of 2
  REQUIRE(g.counts[0] == 6);
  // the first step of the walk takes the last (padded) tile rows and the last H; a permutation of the points
  const auto first = plan::point_at(0, g, raster::along_m(2));
  CHECK(plan::mirrored(p.space, g, 0, first.c[0] + 0) == 5);
  CHECK(plan::mirrored(p.space, g, 0, first.c[0] + 1) == 4);  // the cluster's CTAs stay adjacent
  CHECK(plan::mirrored(p.space, g, 1, first.c[1]) == first.c[1]);
  CHECK(plan::mirrored(p.space, g, 2, first.c[2]) == 2);
  std::set<std::tuple<long long, long long, long long>> seen;
  for (long long i = 0; i < g.clusters; ++i) {
    const auto pt = plan::point_at(i, g, raster::along_m(2));
    for (int rank = 0; rank < 2; ++rank)
      seen.insert({plan::mirrored(p.space, g, 0, pt.c[0] + rank), plan::mirrored(p.space, g, 1, pt.c[1]), plan::mirrored(p.space, g, 2, pt.c[2])});
  }
  CHECK(seen.size() == static_cast<std::size_t>(g.tile_count));
  CHECK(std::get<0>(*seen.begin()) == 0);
  CHECK(std::get<0>(*seen.rbegin()) == 5);
}

TEST_CASE("persistent walk: strided and serpentine each visit every point once, serpentine evens out work that grows along the walk") {
  for (auto order : {walk_order::strided, walk_order::serpentine})
    for (long long ctas : {1, 3, 132})
      for (long long points : {0, 1, 2, 131, 132, 133, 263, 264, 1000, 4096}) {
        CAPTURE(ctas);
        CAPTURE(points);
        std::vector<int> seen(static_cast<std::size_t>(points), 0);
        long long steps = 0;
        for (long long cta = 0; cta < ctas; ++cta) {
          const long long n = plan::walk_steps(cta, ctas, points, order);
          steps += n;
          for (long long k = 0; k < n; ++k) {
            const long long i = plan::walk_index(k, cta, ctas, order);
            REQUIRE(i >= 0);
            REQUIRE(i < points);
            ++seen[static_cast<std::size_t>(i)];
            CHECK(i / ctas == k);  // step k takes a point of round k
          }
          CHECK(plan::walk_index(n, cta, ctas, order) >= points);  // the step after the last is past the walk
        }
        CHECK(steps == points);
        for (int v : seen) CHECK(v == 1);
      }
  // strided: CTA i takes point i of every round; serpentine: of the odd rounds, point G - 1 - i
  CHECK(plan::walk_index(0, 5, 132, walk_order::serpentine) == 5);
  CHECK(plan::walk_index(1, 5, 132, walk_order::serpentine) == 132 + 126);
  CHECK(plan::walk_index(1, 5, 132, walk_order::strided) == 132 + 5);
  // causal attention at S = 1k: 8 query tiles per (head, batch), tile q costs q + 1 key blocks, 512 heads x
  // batches, q fastest, 132 CTAs. Strided, CTA i meets only tiles i % 4 and i % 4 + 4 (132 = 4 mod 8): the
  // busiest CTA has 1.37x the mean; serpentine: within 4%.
  auto busiest_over_mean = [](walk_order order) {
    const long long ctas = 132, points = 8 * 512;
    long long total = 0, most = 0;
    for (long long cta = 0; cta < ctas; ++cta) {
      long long work = 0;
      for (long long k = 0; k < plan::walk_steps(cta, ctas, points, order); ++k) work += plan::walk_index(k, cta, ctas, order) % 8 + 1;
      total += work;
      most = work > most ? work : most;
    }
    return static_cast<double>(most) * ctas / static_cast<double>(total);
  };
  CHECK(busiest_over_mean(walk_order::strided) > 1.3);
  CHECK(busiest_over_mean(walk_order::serpentine) < 1.04);
}

TEST_CASE("walk balance: the loop trips per point, each order's busiest CTA, and what cannot be assessed") {
  // causal prefill at S = 1k: 8 query tiles per head, tile q: q + 1 key blocks (the producer), q + 2 (the consumer's masked block and the rest)
  kernels::attention_prefill_config c;
  c.parts = 1, c.causal = true, c.turns = false, c.persistent = true;
  const program p = kernels::attention_prefill_sm90(c);
  auto dims = [&](long long s) {
    return [&p, s](int d) -> long long {
      const std::string_view n = p.dims[d].nm.view();
      return n == "B" ? 16384 / s : n == "S" || n == "T" ? s : n == "H" ? 32 : n == "D" ? 64 : n == "one" ? 1 : -1;
    };
  };
  const auto w = plan::assess_walk_balance(p, dims(1024), 132);
  REQUIRE(w.assessed);
  CHECK(w.points == 8 * 32 * 16);
  CHECK(w.ctas == 132);
  CHECK(w.min_work == 1);  // tile 0: its one (masked) block
  CHECK(w.max_work == 8);  // tile 7
  CHECK(w.uneven());
  CHECK(w.strided > 1.3);
  CHECK(w.serpentine < 1.05);
  // longer sequences: more tiles per head, milder imbalance
  const auto w16 = plan::assess_walk_balance(p, dims(16384), 132);
  REQUIRE(w16.assessed);
  CHECK(w16.strided < w.strided);
  CHECK(w16.serpentine < 1.04);  // (4096 points on 132 CTAs: 32 against a mean of 31.03 is 1.031 already)
  // not persistent, a dim without a value, a point count past the cap: not assessed, with the reason
  kernels::attention_prefill_config g = c;
  g.persistent = false;
  CHECK(plan::assess_walk_balance(kernels::attention_prefill_sm90(g), dims(1024), 132).why.find("not a persistent walk") != std::string::npos);
  // (causal: the key blocks are the query tile's, T is not read; S sizes the walk)
  CHECK(plan::assess_walk_balance(p, [&](int d) { return p.dims[d].nm.view() == "T" ? -1LL : dims(1024)(d); }, 132).assessed);
  const auto no_s = plan::assess_walk_balance(p, [&](int d) { return p.dims[d].nm.view() == "S" ? -1LL : dims(1024)(d); }, 132);
  CHECK_FALSE(no_s.assessed);
  CHECK(no_s.why == "dim S has no value");
  CHECK(plan::assess_walk_balance(p, dims(1024), 132, 100).why.find("4096 points") != std::string::npos);
  // varlen: the key blocks depend on data read at run time
  kernels::attention_prefill_config v = c;
  v.varlen = true;
  const program pv = kernels::attention_prefill_sm90(v);
  const auto wv = plan::assess_walk_balance(pv, [&](int d) { return pv.dims[d].nm.view() == "two" ? 2LL : dims(1024)(d) < 0 ? 1024LL : dims(1024)(d); }, 132);
  CHECK_FALSE(wv.assessed);
  CHECK(wv.why.find("r.read_index") != std::string::npos);
}
