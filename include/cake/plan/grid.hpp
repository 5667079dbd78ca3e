#pragma once
// The grid: how many output tiles a problem has, how CTAs are grouped into clusters along the first
// parallel axis, and how many CTAs a launch needs (one per tile, or one per SM when persistent). The
// tile order (rasterization) is a pure function of the tile index, shared by lowering (which emits
// the same arithmetic) and the cost model.
#include "../ir/program.hpp"

namespace cake::plan {

struct grid_shape {
  long long tiles[2] = {1, 1};  // output tiles along the two parallel axes (padded to whole clusters)
  long long tile_count = 1;
  int cluster = 1;              // CTAs per cluster
  int cluster_shape[2] = {1, 1};      // CTAs of a cluster along the two parallel axes (k.cluster(x, y))
  long long cluster_tiles[2] = {1, 1};  // clusters along the two parallel axes (what raster_tile walks)
  long long clusters = 1;       // cluster-tiles in the problem
  long long ctas = 1;           // CTAs to launch
  long long k_iterations = 1;   // trips of the reduce loop
};

constexpr long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// dim_value(i) gives the runtime extent of program dim i.
template <class DimValue>
constexpr grid_shape plan_grid(const program& p, DimValue dim_value, int sm_count) {
  grid_shape g;
  g.cluster = p.launch.cluster_size();
  int parallel = 0;
  for (int i = 0; i < p.tile.count; ++i) {
    const auto& ax = p.tile.axes[i];
    const long long n = ceil_div(dim_value(ax.dim), ax.extent);
    if (ax.kind == axis_kind::reduce) g.k_iterations = n;
    else if (parallel < 2) g.tiles[parallel++] = n;
  }
  // Every CTA of a cluster gets a tile: pad each parallel axis to whole clusters along it.
  g.cluster_shape[0] = p.launch.cluster[0];
  g.cluster_shape[1] = p.launch.cluster[1];  // 1 today: the builder refuses clusters along other axes
  for (int a = 0; a < 2; ++a) {
    g.cluster_tiles[a] = ceil_div(g.tiles[a], g.cluster_shape[a]);
    g.tiles[a] = g.cluster_tiles[a] * g.cluster_shape[a];
  }
  g.tile_count = g.tiles[0] * g.tiles[1];
  g.clusters = g.cluster_tiles[0] * g.cluster_tiles[1];
  if (p.launch.persistent) {
    long long max_clusters = sm_count / g.cluster;
    if (max_clusters < 1) max_clusters = 1;
    g.ctas = (g.clusters < max_clusters ? g.clusters : max_clusters) * g.cluster;
  } else {
    g.ctas = g.tile_count;
  }
  return g;
}

// The cluster-tile a cluster works on at step `index` of the schedule, rasterized: clusters walk
// groups of `group` cluster-rows along axis 0, column by column, so that concurrently running CTAs
// share operand tiles in L2. Pass grid_shape::cluster_tiles. Returns {cluster-row, cluster-column};
// the CTA at (x, y) inside a cluster of shape (cx, cy) takes tile (row*cx + x, column*cy + y), which
// for the usual cluster(n) along the first axis is (row*n + rank, column).
struct tile_pos {
  long long m = 0, n = 0;
};
constexpr tile_pos raster_tile(long long index, long long cluster_rows, long long cols, raster r) {
  if (r.order == raster_order::along_n) {
    const long long t = cluster_rows;
    cluster_rows = cols;
    cols = t;
  }
  const long long g = r.group < 1 ? 1 : r.group;
  const long long per_group = g * cols;
  const long long group = index / per_group;
  const long long first_row = group * g;
  const long long rows_here = cluster_rows - first_row < g ? cluster_rows - first_row : g;
  const long long in_group = index % per_group;
  tile_pos t{first_row + in_group % rows_here, in_group / rows_here};
  if (r.order == raster_order::along_n) return {t.n, t.m};
  return t;
}

}  // namespace cake::plan
