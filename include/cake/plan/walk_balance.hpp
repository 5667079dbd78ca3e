#pragma once
// How evenly a persistent walk deals its work to the CTAs, at given dim extents. A point's work is the trips
// of the loops inside the walk (directly, or inside an r.when of it), summed per role, of the role that has
// the most: a causal attention consumer walks q + 1 key blocks at query tile q. The CTAs take the points in
// rounds, strided or serpentine (plan::walk_index); the figure for each order is the busiest CTA's work over
// the mean work per CTA (wave quantization included: 200 equal points on 132 CTAs give 2 / 1.52). A loop
// bound that reads what only the run knows (r.read_index data, the CTA's step or index) cannot be evaluated
// per point: the walk is then not assessed, and `why` says which bound. A split tail (k.split_tail) deals its last
// round's points in parts (plan::split_tail_parts), each part's work its loops' trips over its range: what the
// split leaves of the last round's idle share (the merge of the parts is not counted).
#include <string>
#include <vector>

#include "grid.hpp"

namespace cake::plan {

struct walk_balance {
  bool assessed = false;
  std::string why;                       // when !assessed
  long long points = 0, ctas = 0;        // cluster work items, and the clusters walking them
  long long min_work = 0, max_work = 0;  // loop trips of one point (the role with the most)
  double strided = 1, serpentine = 1;    // busiest CTA's work over the mean, for each order
  int tail_parts = 1;                    // (k.split_tail) the parts each point of the last round is dealt in
  constexpr bool uneven() const { return assessed && min_work != max_work; }
};

namespace detail {
// Is loop op `id` in the walk `walk`'s body with only r.when blocks between?
constexpr bool loop_of_walk(const program& p, int id, int walk) {
  for (int a = p.ops[id].parent; a >= 0; a = p.ops[a].parent) {
    if (a == walk) return true;
    if (p.ops[a].kind != op_kind::when) return false;
  }
  return false;
}
}  // namespace detail

// dim_value(i): the extent of program dim i, or a negative value where it is not known.
template <class DimValue>
walk_balance assess_walk_balance(const program& p, DimValue dim_value, int sm_count, long long max_points = 1LL << 22) {
  walk_balance w;
  if (!p.launch.persistent) return w.why = "not a persistent walk (a grid launches one CTA per point)", w;
  if (p.space.count < 1) return w.why = "no parallel space", w;
  // the loops each role runs per point
  struct walk_loop {
    int op, role;
  };
  std::vector<walk_loop> loops;
  for (int i = 0; i < static_cast<int>(p.ops.size()); ++i)
    if (p.ops[i].kind == op_kind::tile_loop)
      for (int j = i + 1; j < p.ops[i].end; ++j)
        if (p.ops[j].kind == op_kind::loop && detail::loop_of_walk(p, j, i)) loops.push_back({j, p.ops[j].role});
  if (loops.empty()) return w.why = "no loop inside the walk: every point does the same work", w;
  // every dim a bound reads, and every axis's, must be known
  for (int d = 0; d < static_cast<int>(p.dims.size()); ++d) {
    bool used = false;
    for (int a = 0; a < p.space.count; ++a) used = used || (p.space.axes[a].kind != axis_kind::split && p.space.axes[a].dim == d);
    for (const auto& l : loops)
      if (const loop_bound* b = p.bound_of(l.op)) used = used || b->walks_dim(d);
    if (p.launch.split_tail()) used = used || p.launch.tail_extent.uses(var_kind::dim, d);  // (r.part_end())
    if (used && dim_value(d) < 0) return w.why = "dim " + std::string(p.dims[d].nm.view()) + " has no value", w;
  }
  const grid_shape g = plan_grid(p, [&](int d) { return dim_value(d) < 0 ? 1 : dim_value(d); }, sm_count);
  w.points = g.clusters;
  w.ctas = g.ctas / (g.cluster > 0 ? g.cluster : 1);
  if (w.points > max_points) return w.why = "the walk has " + std::to_string(w.points) + " points, more than the " + std::to_string(max_points) + " assessed", w;
  // A split tail (k.split_tail): the last round's points in parts (plan::split_tail_parts), dealt as units
  const long long extent = p.launch.split_tail() ? p.launch.tail_extent.eval([&](const index_term& x) { return x.kind == var_kind::dim ? dim_value(x.ref) : 0; }) : 0;
  const int parts = p.launch.split_tail() ? split_tail_parts(w.points, w.ctas, extent, p.launch.tail_parts) : 1;
  const long long whole = parts > 1 ? w.points - w.points % w.ctas : w.points, units = whole + (w.points - whole) * parts;
  w.tail_parts = parts;
  // one unit's work: the trips of each role's loops at its point (and part), the largest role sum
  std::vector<long long> work(static_cast<std::size_t>(units), 0);
  std::vector<long long> by_role(p.roles.size(), 0);
  for (long long u = 0; u < units; ++u) {
    const long long i = u < whole ? u : whole + (u - whole) / parts, part = u < whole ? 0 : (u - whole) % parts, of = u < whole ? 1 : parts;
    point pt = point_at(i, g, p.launch.rast);
    for (int a = 0; a < p.space.count; ++a) pt.c[a] = mirrored(p.space, g, a, pt.c[a]);
    std::string unknown;
    auto var = [&](const index_term& t) -> long long {
      switch (t.kind) {
        case var_kind::tile_coord: return t.ref < p.space.count ? pt.c[t.ref] : 0;
        case var_kind::dim: return dim_value(t.ref);
        case var_kind::warpgroup:
        case var_kind::warp:
        case var_kind::cluster_rank: return 0;  // the first unit's (a schedule splits work evenly among its units)
        case var_kind::none: return 0;
        // a split tail's part (the lowering's arithmetic: emitter.hpp var_text)
        case var_kind::walk_part: return part;
        case var_kind::walk_parts: return of;
        case var_kind::part_begin: return part * extent / of;
        case var_kind::part_end: return (part + 1) * extent / of;
        case var_kind::tail_unit: return u < whole ? 0 : u - whole;
        default:
          unknown = t.kind == var_kind::value ? "data read at run time (r.read_index)" : t.kind == var_kind::loop ? "an outer loop's index" : "the CTA's place in its walk";
          return 0;
      }
    };
    for (auto& r : by_role) r = 0;
    for (const auto& l : loops) {
      const op& o = p.ops[l.op];
      long long trips = 0;
      if (o.has(flag_static_trip)) {
        trips = o.imm[1];
      } else if (const loop_bound* b = p.bound_of(l.op)) {
        trips = b->trips(var);
      }
      if (!unknown.empty()) return w.why = "a loop bound inside the walk reads " + unknown + " (line " + std::to_string(o.loc.line) + ")", w;
      if (l.role < static_cast<int>(by_role.size())) by_role[static_cast<std::size_t>(l.role)] += trips;
    }
    long long most = 0;
    for (long long r : by_role) most = r > most ? r : most;
    work[static_cast<std::size_t>(u)] = most;
  }
  // (min and max over the whole points: a part's work is its share of its point's)
  w.min_work = w.max_work = work.empty() ? 0 : work[0];
  long long total = 0;
  for (long long u = 0; u < units; ++u) {
    const long long v = work[static_cast<std::size_t>(u)];
    total += v;
    if (parts > 1 && u >= whole) continue;
    w.min_work = v < w.min_work ? v : w.min_work;
    w.max_work = v > w.max_work ? v : w.max_work;
  }
  auto busiest = [&](walk_order order) {
    long long most = 0;
    for (long long cta = 0; cta < w.ctas; ++cta) {
      long long sum = 0;
      for (long long k = 0, n = walk_steps(cta, w.ctas, units, order); k < n; ++k) sum += work[static_cast<std::size_t>(walk_index(k, cta, w.ctas, order))];
      most = sum > most ? sum : most;
    }
    return total > 0 ? static_cast<double>(most) * static_cast<double>(w.ctas) / static_cast<double>(total) : 1.0;
  };
  w.strided = busiest(walk_order::strided);
  w.serpentine = busiest(walk_order::serpentine);
  w.assessed = true;
  return w;
}

}  // namespace cake::plan
