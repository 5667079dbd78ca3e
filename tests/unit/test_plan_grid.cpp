// Unit tests for cake/plan/grid.hpp: tile counts, cluster padding, CTAs per launch (one per tile, or one
// per SM when persistent) and the rasterized tile order, which must be a bijection over the tiles.
#include <doctest/doctest.h>

#include <set>
#include <utility>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {
// Dims are M, K, N in declaration order for the reference schedules.
struct mkn {
  long long m, n, k;
  long long operator()(int dim) const { return dim == 0 ? m : dim == 1 ? k : n; }
};
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
  CHECK(g.k_iterations == 64);
  CHECK(plan::plan_grid(p, mkn{1, 1, 1}, 108).ctas == 1);
  CHECK(plan::plan_grid(p, mkn{128, 129, 65}, 108).tile_count == 2);
  CHECK(plan::plan_grid(p, mkn{128, 129, 65}, 108).k_iterations == 2);
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
  CHECK(g.k_iterations == 64);
}

TEST_CASE("grid: tile rows are padded to whole clusters; small problems launch fewer CTAs") {
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
  CHECK(g.k_iterations == 128);
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
