#pragma once
// The grid: how many points the parallel iteration space has along each axis, how CTAs are grouped into
// clusters along the first axis, and how many CTAs a launch needs (one per point, or one per SM when
// persistent). The order in which points are walked (rasterization of the first two axes, the others
// outermost) is a pure function of the point's linear index, shared by lowering (which emits the same
// arithmetic) and the cost model.
#include "../ir/program.hpp"

namespace cake::plan {

struct grid_shape {
  int axes = 0;
  long long counts[iteration_space::max_axes] = {1, 1, 1, 1, 1};  // points along each axis (axis 0 padded to whole clusters)
  long long tiles[2] = {1, 1};          // points along the first two axes (the rasterized plane)
  long long outer = 1;                  // points along the remaining axes (each is one plane)
  long long tile_count = 1;             // points of the whole space
  int cluster = 1;                      // CTAs per cluster
  int cluster_shape[2] = {1, 1};        // CTAs of a cluster along the first two axes (k.cluster(x, y))
  long long cluster_tiles[2] = {1, 1};  // clusters along the first two axes (what raster_tile walks)
  long long clusters = 1;               // cluster work items of the whole space (planes x outer)
  long long ctas = 1;                   // CTAs to launch
};

constexpr long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// Points along one axis for the given dim extents.
template <class DimValue>
constexpr long long axis_points(const parallel_axis& ax, DimValue dim_value) {
  switch (ax.kind) {
    case axis_kind::tiles: return ceil_div(dim_value(ax.dim), ax.extent);
    case axis_kind::each: return dim_value(ax.dim);
    default: return ax.extent;
  }
}

// dim_value(i) gives the runtime extent of program dim i. A kernel without a parallel space has one point.
template <class DimValue>
constexpr grid_shape plan_grid(const program& p, DimValue dim_value, int sm_count) {
  grid_shape g;
  g.cluster = p.launch.cluster_size();
  g.axes = p.space.count;
  for (int i = 0; i < p.space.count; ++i) g.counts[i] = axis_points(p.space.axes[i], dim_value);
  // Every CTA of a cluster gets a point: pad the first axis to whole clusters along it.
  g.cluster_shape[0] = p.launch.cluster[0];
  g.cluster_shape[1] = p.launch.cluster[1];  // 1 today: the builder refuses clusters along other axes
  for (int a = 0; a < 2; ++a) {
    g.cluster_tiles[a] = ceil_div(g.counts[a], g.cluster_shape[a]);
    g.tiles[a] = g.counts[a] = g.cluster_tiles[a] * g.cluster_shape[a];
  }
  for (int a = 2; a < g.axes; ++a) g.outer *= g.counts[a];
  g.tile_count = g.tiles[0] * g.tiles[1] * g.outer;
  g.clusters = g.cluster_tiles[0] * g.cluster_tiles[1] * g.outer;
  if (p.launch.persistent) {
    // (k.ctas_per_sm(n): n CTAs share each SM, so the walk launches n per SM)
    long long max_clusters = static_cast<long long>(sm_count) * (p.launch.ctas_per_sm > 1 ? p.launch.ctas_per_sm : 1) / g.cluster;
    if (max_clusters < 1) max_clusters = 1;
    g.ctas = (g.clusters < max_clusters ? g.clusters : max_clusters) * g.cluster;
  } else {
    g.ctas = g.tile_count;
  }
  return g;
}

// The cluster-tile a cluster works on at step `index` of the walk of one plane, rasterized: clusters
// walk groups of `group` cluster-rows along axis 0, column by column, so that concurrently running CTAs
// share operand tiles in L2. Pass grid_shape::cluster_tiles. Returns {cluster-row, cluster-column}; the
// CTA at rank r of a cluster of n along the first axis takes point (row * n + r, column). Indices past
// one plane continue in the next point of the outer axes (index / plane), axis 2 fastest.
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

// A persistent walk in rounds of one point per cluster: the linear index (what point_at reads) of the point
// that cluster `cta` of `ctas` visits at its step `step` (walk_order: strided, or serpentine with the odd
// rounds dealt in reverse). Lowering emits the same arithmetic.
constexpr long long walk_index(long long step, long long cta, long long ctas, walk_order o) {
  const long long in_round = o == walk_order::serpentine && step % 2 == 1 ? ctas - 1 - cta : cta;
  return step * ctas + in_round;
}
// The steps that cluster takes in a walk of `points` points: every whole round, and the last partial one
// where its place in that round falls inside it.
constexpr long long walk_steps(long long cta, long long ctas, long long points, walk_order o) {
  const long long rounds = points / ctas, rest = points % ctas;
  return rounds + (walk_index(rounds, cta, ctas, o) - rounds * ctas < rest ? 1 : 0);
}

// A split tail (k.split_tail(extent, n)): how many parts each point of the walk's last round is split into, 1 where
// it is not (no whole round before it, a last round that is full, or a range of one). Lowering emits the same
// arithmetic (emit_tile_loop); the host asks it to size what the parts leave (attention's tail workspace).
constexpr int split_tail_parts(long long points, long long ctas, long long extent, int n) {
  const long long rest = points > ctas && ctas > 0 ? points % ctas : 0;
  if (rest == 0) return 1;
  const long long most = ctas / rest < n ? ctas / rest : n;
  return static_cast<int>(extent < most ? (extent > 1 ? extent : 1) : most);
}

// The coordinates of the point a cluster visits at walk step `index` (the CTA's rank in the cluster is
// added to axis 0 by the caller): the plane is rasterized, the outer axes are row-major with axis 2
// fastest.
struct point {
  long long c[iteration_space::max_axes] = {0, 0, 0, 0, 0};
};
constexpr point point_at(long long index, const grid_shape& g, raster r) {
  point pt;
  const long long plane = g.cluster_tiles[0] * g.cluster_tiles[1];
  const auto t = raster_tile(index % plane, g.cluster_tiles[0], g.cluster_tiles[1], r);
  pt.c[0] = t.m * g.cluster_shape[0];
  pt.c[1] = t.n;
  long long outer = index / plane;
  for (int a = 2; a < g.axes; ++a) {
    pt.c[a] = outer % g.counts[a];
    outer /= g.counts[a];
  }
  return pt;
}
// A point's coordinates with the descending axes (.descending()) reversed: the walk's step `index`
// visits the point point_at gives, mirrored along those axes (axis 0 over its padded count, so the
// CTAs of a cluster stay adjacent; the caller adds the rank before mirroring: see lowering).
constexpr long long mirrored(const iteration_space& s, const grid_shape& g, int axis, long long c) {
  return axis < s.count && s.axes[axis].descending ? g.counts[axis] - 1 - c : c;
}

}  // namespace cake::plan
