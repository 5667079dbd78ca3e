// Unit tests for cake/cost/traffic.hpp: HBM reads from the tile schedule with an LRU of operand panels.
#include <doctest/doctest.h>

#include <cake/cost/traffic.hpp>

using namespace cake;

namespace {
plan::grid_shape grid(long long rows, long long cols) {
  plan::grid_shape g;
  g.tiles[0] = g.cluster_tiles[0] = rows;
  g.tiles[1] = g.cluster_tiles[1] = cols;
  g.tile_count = g.clusters = rows * cols;
  return g;
}
const std::vector<cost::panel_stream> ab = {{0, 0, 1000}, {1, 1, 2000}};  // an A panel per tile row, a B panel per column
}  // namespace

TEST_CASE("cost traffic: with room in L2 every panel is read once") {
  const auto t = cost::simulate_traffic(grid(8, 4), raster::along_m(2), 8, ab, 500, 1e9);
  CHECK(t.compulsory_read_bytes == 8 * 1000 + 4 * 2000);
  CHECK(t.hbm_read_bytes == t.compulsory_read_bytes);
  CHECK(t.hbm_write_bytes == 500);
  CHECK(t.waves == 4);
}

TEST_CASE("cost traffic: a small L2 re-reads panels across waves, and the raster order decides how many") {
  // 8 x 8 tiles, 4 at a time, room for 3 panels: walking down a column (group of 8 rows) re-reads every
  // A panel for every column; plain row-major order (group 1) keeps B panels... each order misses somewhere.
  const auto column_walk = cost::simulate_traffic(grid(8, 8), raster::along_m(8), 4, ab, 0, 5000);
  const auto row_walk = cost::simulate_traffic(grid(8, 8), raster::along_m(1), 4, ab, 0, 5000);
  CHECK(column_walk.hbm_read_bytes > column_walk.compulsory_read_bytes);
  CHECK(row_walk.hbm_read_bytes > row_walk.compulsory_read_bytes);
  CHECK(column_walk.hbm_read_bytes != row_walk.hbm_read_bytes);
  // Enough capacity for everything: no difference and nothing re-read.
  const auto big = cost::simulate_traffic(grid(8, 8), raster::along_m(8), 4, ab, 0, 1e9);
  CHECK(big.hbm_read_bytes == big.compulsory_read_bytes);
}

TEST_CASE("cost traffic: panels shared inside one wave are read once") {
  // One wave covers the whole 2 x 2 grid: 2 A panels + 2 B panels, even with no cache at all.
  const auto t = cost::simulate_traffic(grid(2, 2), raster::along_m(2), 4, ab, 0, 0);
  CHECK(t.waves == 1);
  CHECK(t.hbm_read_bytes == 2 * 1000 + 2 * 2000);
}
