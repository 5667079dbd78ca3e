#pragma once
// memory.output-coverage (error): an output store whose tile coordinates remap the walk's indices (a division
// or a modulo of a parallel index, or an r.let_index value computed from them), or that runs under a when, is
// checked by running it. memory.tile-coverage checks coordinates term by term where they are affine in the
// parallel indices and stores outside any when; a remapped walk (tiles rotated or swapped inside groups, for L2
// locality or to spread DRAM channels) is correct only if it is a bijection of the tiles at every extent, and a
// division or modulo by a constant group size typically is one only where the tile count is a multiple of the
// group. So for such a store the launch is enumerated: every point of the parallel space, at tile counts 1..6
// along the first two tiles / each axes (1..3 along the others; a split(n) has its n), times the role's units
// and the trips of enclosing static for_range loops; each coordinate and enclosing when's condition is
// evaluated (let_index values through their definitions, a dim's extent as the axes' count times block) and
// the written tile is marked on a grid of tile-sized cells of the walked dims. A tile outside the dims'
// extents, a cell written twice, or a cell never written, at any of those extents, is an error naming the
// extent, the point and the tile.
// Not modelled (a coverage note): coordinates with r.read_index values (an origin that is data; the note is
// memory.tile-coverage's), the cluster rank, the CTA index, the walk step or a split tail's part (in a
// coordinate or a when's condition); conditions on register values; a coordinate on a dim no axis walks that
// is not a constant; stores in a dynamic loop, an alternating walk or an r.next_point body, of a tensor
// several ops write; tiles that do not divide the axis's block. Found by `cake evolve` as a failure class
// (docs/evolve.md, "A failure class from the GPU").
#include "index_condition.hpp"
#include "output_coverage_scope.hpp"
#include "tile_coverage.hpp"

namespace cake::analysis {

namespace output_cov {

inline constexpr int max_vars = 8;
inline constexpr int max_cells = 4096;

// What one evaluation needs: the point's axis indices, the enumerated variables' values, the dims' extents.
struct env {
  long long axis[iteration_space::max_axes]{};
  long long dim_extent[capacity::dims]{};
  bool dim_known[capacity::dims]{};
  var_kind var[max_vars]{};
  int var_ref[max_vars]{};
  long long var_val[max_vars]{};
  int nvars = 0;
};

// Whether an expression can be evaluated from the point, the enumerated variables and the dims' extents
// (let_index values through their definitions, at most `depth` deep).
constexpr bool evaluable(const program& p, const index_expr& x, const env& e, int depth = 4) {
  if (!x.valid || depth < 0) return false;
  for (int k = 0; k < x.term_count; ++k) {
    const index_term& v = x.terms[k];
    switch (v.kind) {
      case var_kind::tile_coord:
        if (v.ref >= p.space.count) return false;
        break;
      case var_kind::dim:
        if (v.ref >= capacity::dims || !e.dim_known[v.ref]) return false;
        break;
      case var_kind::value: {
        if (v.ref >= p.ops.size()) return false;
        const op& def = p.ops[v.ref];
        if (def.kind != op_kind::let_index || !evaluable(p, def.ix, e, depth - 1)) return false;
        if (def.imm[0] == 1 && !evaluable(p, def.d.stage, e, depth - 1)) return false;  // let_min
        break;
      }
      case var_kind::loop:
      case var_kind::warpgroup:
      case var_kind::warp: {
        bool known = false;
        for (int q = 0; q < e.nvars; ++q) known = known || (e.var[q] == v.kind && (v.kind != var_kind::loop || e.var_ref[q] == v.ref));
        if (!known) return false;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

constexpr long long eval(const program& p, const index_expr& x, const env& e, int depth = 4);

constexpr long long term_value(const program& p, const index_term& v, const env& e, int depth) {
  switch (v.kind) {
    case var_kind::tile_coord: return e.axis[v.ref];
    case var_kind::dim: return e.dim_extent[v.ref];
    case var_kind::value: {
      const op& def = p.ops[v.ref];
      const long long a = eval(p, def.ix, e, depth - 1);
      if (def.imm[0] != 1) return a;
      const long long b = eval(p, def.d.stage, e, depth - 1);
      return a < b ? a : b;
    }
    default:
      for (int q = 0; q < e.nvars; ++q)
        if (e.var[q] == v.kind && (v.kind != var_kind::loop || e.var_ref[q] == v.ref)) return e.var_val[q];
      return 0;
  }
}

constexpr long long eval(const program& p, const index_expr& x, const env& e, int depth) {
  return x.eval([&](const index_term& v) { return term_value(p, v, e, depth); });
}

// A when's condition (expression nodes of index leaves, comparisons, && || !, + - * min max): whether every leaf
// can be evaluated, and its value at a point.
constexpr bool condition_evaluable(const program& p, int n, const env& e) {
  return is_index_condition(p, n, [&](const index_expr& ix) { return evaluable(p, ix, e); });
}
constexpr long long node_value(const program& p, int n, const env& e) {
  return index_condition_value(p, n, [&](const index_expr& ix) { return eval(p, ix, e); });
}

}  // namespace output_cov

constexpr void check_output_coverage(context& c) {
  using namespace output_cov;
  const program& p = c.p;
  const rule_id rule = rule_id::memory_output_coverage;
  const int n = static_cast<int>(p.ops.size());
  int unmodelled_op = -1;
  const char* unmodelled_why = nullptr;
  for (int i = 0; i < n; ++i) {
    if (!output_coverage_enumerable(p, i)) continue;
    const op& o = p.ops[i];
    const auto& ref = p.tile_refs[o.d.index];
    const auto& t = p.tensors[ref.tensor];
    int ext[dim_list::max_rank]{};
    detail::tile_extents(p, o, o.d, o.a, ext);
    auto not_modelled = [&](const char* why) {
      if (unmodelled_op < 0) unmodelled_op = i, unmodelled_why = why;
    };

    // The enumerated variables: the role's unit, the trips of enclosing static loops.
    env e;
    const role_decl& rd = p.roles[o.role];
    constexpr int max_whens = 4;
    int whens[max_whens]{}, nwhens = 0;  // the condition roots of the enclosing whens
    for (int a = o.parent; a >= 0 && e.nvars < max_vars - 1; a = p.ops[a].parent) {
      const op& ctl = p.ops[a];
      if (ctl.kind == op_kind::tile_loop) break;
      if (ctl.kind == op_kind::when) {
        if (nwhens < max_whens) whens[nwhens++] = ctl.imm[0] + ctl.imm[1] - 1;
        else whens[0] = -1;  // more whens than followed: not evaluable below
        continue;
      }
      e.var[e.nvars] = var_kind::loop, e.var_ref[e.nvars] = a, e.var_val[e.nvars] = ctl.imm[1], ++e.nvars;  // var_val: the count, for now
    }
    e.var[e.nvars] = rd.unit == role_unit::warpgroup ? var_kind::warpgroup : var_kind::warp, e.var_ref[e.nvars] = 0, e.var_val[e.nvars] = rd.count, ++e.nvars;
    long long var_count[max_vars]{}, combos = 1;
    for (int q = 0; q < e.nvars; ++q) var_count[q] = e.var_val[q] > 0 ? e.var_val[q] : 1, combos *= var_count[q];

    if (ref.elements != 0 || ref.has_limit()) {  // a tile at an element offset or cut by a limit: its cells are not whole tiles
      not_modelled("an output store that remaps the walk's tiles or runs under a when, at element coordinates or with a limit (elements_at, limit): its coverage is not enumerated");
      continue;
    }
    // The walked dims of the tensor and their blocks; every dim an axis walks has a known extent.
    int axis_of[dim_list::max_rank]{};
    long long block_of[dim_list::max_rank]{};
    bool ok = true;
    for (int j = 0; j < ref.rank; ++j) {
      axis_of[j] = -1;
      for (int a = 0; a < p.space.count; ++a) {
        const auto& ax = p.space.axes[a];
        if (ax.kind != axis_kind::split && ax.dim == t.dims[j]) axis_of[j] = a, block_of[j] = ax.kind == axis_kind::tiles ? ax.extent : 1;
      }
      if (axis_of[j] < 0 && !ref.coords[j].is_constant()) ok = false;
      if (axis_of[j] >= 0 && (ext[j] <= 0 || block_of[j] % ext[j] != 0)) ok = false;
    }
    if (!ok) {
      not_modelled("an output store that remaps the walk's tiles or runs under a when has a coordinate on a dim no axis walks, or a tile that does not divide the axis's block: its coverage is not enumerated");
      continue;
    }
    for (int a = 0; a < p.space.count; ++a)
      if (p.space.axes[a].kind != axis_kind::split && p.space.axes[a].dim < capacity::dims) e.dim_known[p.space.axes[a].dim] = true;
    bool eval_ok = combos <= 64;
    for (int j = 0; j < ref.rank && eval_ok; ++j) eval_ok = evaluable(p, ref.coords[j], e);
    if (!eval_ok) {
      not_modelled("an output store that remaps the walk's tiles or runs under a when uses the cluster rank, the CTA index, the walk step, a split tail's part or a dim no axis walks, or has over 64 units x trips: not enumerated");
      continue;
    }
    bool cond_ok = true;
    for (int w = 0; w < nwhens && cond_ok; ++w) cond_ok = condition_evaluable(p, whens[w], e);
    if (!cond_ok) {
      not_modelled("an output store under a when whose condition is not a question about the walk's indices (the walk step, a register value, ...) is not enumerated");
      continue;
    }

    // Tile counts to try per axis: 1..6 along the first two dim axes, 1..3 along the others.
    int tries[iteration_space::max_axes]{};
    int dim_axes = 0;
    for (int a = 0; a < p.space.count; ++a)
      tries[a] = p.space.axes[a].kind == axis_kind::split ? 1 : (dim_axes++ < 2 ? 6 : 3);
    long long count_combos = 1;
    for (int a = 0; a < p.space.count; ++a) count_combos *= tries[a];

    bool reported = false;
    long long budget = 200000;  // evaluations per store: enough for two axes of 6 x units x trips, bounded for constexpr use
    for (long long cc = 0; cc < count_combos && !reported && budget > 0; ++cc) {
      long long count[iteration_space::max_axes]{}, points = 1;
      long long rest = cc;
      for (int a = 0; a < p.space.count; ++a) {
        const auto& ax = p.space.axes[a];
        count[a] = ax.kind == axis_kind::split ? ax.extent : 1 + rest % tries[a];
        if (ax.kind != axis_kind::split) rest /= tries[a];
        points *= count[a];
      }
      for (int a = 0; a < p.space.count; ++a) {
        const auto& ax = p.space.axes[a];
        if (ax.kind != axis_kind::split && ax.dim < capacity::dims) e.dim_extent[ax.dim] = count[a] * (ax.kind == axis_kind::tiles ? ax.extent : 1);
      }
      // cells along the walked dims, in tiles
      long long cells_along[dim_list::max_rank]{}, cells = 1;
      for (int j = 0; j < ref.rank; ++j) {
        cells_along[j] = axis_of[j] >= 0 ? count[axis_of[j]] * block_of[j] / ext[j] : 1;
        cells *= cells_along[j];
      }
      if (cells > max_cells || points * combos > 65536) continue;
      budget -= points * combos;
      int written[max_cells]{};
      int first_point[max_cells]{};
      long long bad_point = -1, bad_combo = 0, bad_cell = -1, other_point = -1;
      long long at[dim_list::max_rank]{};
      int what = 0;  // 1 outside, 2 twice, 3 never
      for (long long pt = 0; pt < points && what == 0; ++pt) {
        long long r2 = pt;
        for (int a = 0; a < p.space.count; ++a) e.axis[a] = r2 % count[a], r2 /= count[a];
        for (long long cb = 0; cb < combos && what == 0; ++cb) {
          long long r3 = cb;
          for (int q = 0; q < e.nvars; ++q) e.var_val[q] = r3 % var_count[q], r3 /= var_count[q];
          bool runs = true;  // the enclosing whens hold at this point, unit and trip
          for (int w = 0; w < nwhens && runs; ++w) runs = node_value(p, whens[w], e) != 0;
          if (!runs) continue;
          long long cell = 0;
          bool inside = true;
          for (int j = 0; j < ref.rank; ++j) {
            const long long v = eval(p, ref.coords[j], e);
            at[j] = v * ext[j];
            if (axis_of[j] < 0) continue;
            if (v < 0 || v >= cells_along[j]) inside = false;
            cell = cell * cells_along[j] + (v >= 0 && v < cells_along[j] ? v : 0);
          }
          if (!inside) {
            what = 1, bad_point = pt, bad_combo = cb;
          } else if (written[cell]++ > 0) {
            what = 2, bad_point = pt, bad_combo = cb, bad_cell = cell, other_point = first_point[cell];
          } else {
            first_point[cell] = static_cast<int>(pt);
          }
        }
      }
      if (what == 0)
        for (long long cell = 0; cell < cells; ++cell)
          if (written[cell] == 0) {
            what = 3, bad_cell = cell;
            long long r4 = cell;
            for (int j = ref.rank - 1; j >= 0; --j) {
              if (axis_of[j] < 0) continue;
              at[j] = (r4 % cells_along[j]) * ext[j];
              r4 /= cells_along[j];
            }
            break;
          }
      if (what == 0) continue;
      reported = true;
      diagnostic* d = emit_op(c, rule, i);
      if (!d) break;
      auto write_counts = [&](auto& txt) {
        bool first = true;
        for (int a = 0; a < p.space.count; ++a) {
          const auto& ax = p.space.axes[a];
          if (ax.kind == axis_kind::split) continue;
          txt << (first ? "" : ", ") << detail::dim_name(p, ax.dim) << " = " << count[a] * (ax.kind == axis_kind::tiles ? ax.extent : 1);
          if (ax.kind == axis_kind::tiles) txt << " (" << count[a] << (count[a] == 1 ? " block of " : " blocks of ") << ax.extent << ')';
          first = false;
        }
      };
      auto write_point = [&](auto& txt, long long pt) {
        txt << "the point (";
        long long r5 = pt;
        for (int a = 0; a < p.space.count; ++a) {
          txt << (a ? ", " : "") << (p.space.axes[a].kind == axis_kind::split ? std::string_view{"split"} : detail::dim_name(p, p.space.axes[a].dim)) << ' '
              << r5 % count[a];
          r5 /= count[a];
        }
        txt << ')';
      };
      auto write_tile = [&](auto& txt) {
        bool first = true;
        for (int j = 0; j < ref.rank; ++j) {
          if (axis_of[j] < 0) continue;
          txt << (first ? "" : ", ") << detail::dim_name(p, t.dims[j]) << ' ' << at[j] << ".." << at[j] + ext[j] - 1;
          first = false;
        }
      };
      d->message << t.nm.view() << ": at ";
      write_counts(d->message);
      d->message << ", ";
      if (what == 1) {
        write_point(d->message, bad_point);
        d->message << " stores ";
        detail::write_tile_ref(d->message, p, ref);
        d->message << " at ";
        write_tile(d->message);
        d->message << ", outside the tensor's extent: the store is clipped, and the tile that point should have written is left as it was";
      } else if (what == 2) {
        write_point(d->message, bad_point);
        d->message << " and ";
        write_point(d->message, other_point);
        d->message << " both write ";
        write_tile(d->message);
        d->message << ": one result is lost";
      } else {
        d->message << "no point writes ";
        write_tile(d->message);
        d->message << " (of ";
        for (int j = 0, first = 1; j < ref.rank; ++j)
          if (axis_of[j] >= 0) d->message << (first ? "" : " x ") << cells_along[j] << " tiles of " << ext[j], first = 0;
        d->message << "): it keeps whatever the output held";
      }
      // kind: 1 outside the tensor, 2 written twice, 3 never written; then each axis's count (as many as fit)
      d->num("kind", what).num("points", points).num("tiles", cells);
      constexpr std::string_view count_key[] = {"axis0_count", "axis1_count", "axis2_count", "axis3_count", "axis4_count"};
      for (int a = 0; a < p.space.count; ++a) d->num(count_key[a], count[a]);
      (void)bad_combo;
      (void)bad_cell;
      {
        auto& nt = d->add_note(o.loc);
        nt << "the coordinates ";
        detail::write_tile_ref(nt, p, ref);
        nt << " remap the walk's indices (a division or modulo of a parallel index, or an r.let_index value); enumerated over every point, unit and for_range trip";
      }
      for (int j = 0; j < ref.rank; ++j)
        for (int k = 0; k < ref.coords[j].term_count; ++k)
          if (ref.coords[j].terms[k].kind == var_kind::value) {
            const op& def = p.ops[ref.coords[j].terms[k].ref];
            auto& nt = d->add_note(def.loc);
            nt << "the index value is ";
            detail::write_index(nt, p, def.ix);
          }
      d->help << "a remapping of the walk's tiles must be a bijection at every extent: a division or modulo by a group size is one only where the "
                 "tile count is a multiple of it; walk the points in the parallel space's own order (k.persistent(raster::along_m(g)) groups tiles "
                 "for L2 reuse and handles the last partial group), or remap only inside whole groups";
    }
  }
  if (unmodelled_op >= 0) add_coverage(c, rule, unmodelled_op, p.ops[unmodelled_op].loc, unmodelled_why ? unmodelled_why : "not modelled");
}

}  // namespace cake::analysis
