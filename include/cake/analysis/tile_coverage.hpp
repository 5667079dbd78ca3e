#pragma once
// Coordinate semantics of global tiles (memory pass).
//
// memory.tile-coverage (warning). A global tile T.tile(c0, c1, ...) is in units of the tile that moves:
// along T's last dim a coordinate counts the moving tile's columns, along its row dim (the second-to-last,
// or rows_at(pos)) the tile's rows, along every other dim single elements (a rank-1 tensor: the rows of a
// row vector, else the columns). The parallel axes of k.parallel(...) say how the launch walks the dims:
// tiles(D, b) in blocks of b elements of D, each(D) one element at a time. For loads, stores, TMA loads and
// stores, cp.async and atomics, every coordinate term that is a parallel index (plain: no / or % on it) must
//   (1) index the dim its axis walks: tile.M as a coordinate of N (B.tile(tile.m, k) for a B over (N, K)) is
//       reported, and
//   (2) move the tile by exactly the axis's block per point: coefficient x the tile's extent along that dim
//       == the block. Otherwise consecutive points overlap (less) or skip elements (more): a 128-row vector
//       indexed by an each(B) index moves 128 rows of B per batch, and past the first batches every access
//       falls outside the tensor and is silently masked.
// For plain stores and TMA stores (outputs) whose coordinates pass (1) and (2), the tiles written over the
// launch must also cover every element of the dims the axes walk exactly once:
//   (3) every parallel axis appears in a coordinate (else every point along it writes the same tile; a
//       split(1) has one point), and
//   (4) inside one point, the tiles the role's units (warps or warpgroups; one unit per point for an
//       alternating walk) and the trips of enclosing for_range loops write are disjoint and, along the
//       walked dims, fill the axes' blocks exactly: `i * 2 + wg` with 64-row tiles under tiles(N, 128) and
//       two warpgroups covers; `i` alone overlaps; `i * 4 + wg` leaves gaps.
// Not modelled (coverage notes, rule partial): (1)-(4) for coordinates that divide or take a modulo of a
// parallel index or use an index value (r.read_index: an origin that is data; an output store whose remapped
// coordinates can be evaluated is enumerated by memory.output-coverage instead, output_coverage.hpp); (3)-(4) for stores under a when, inside a dynamic loop, whose coordinates use the cluster
// rank, the CTA index, a dim's extent, a warp index inside a warpgroup role or a unit index in an
// alternating walk, and for tensors that several ops write (coverage is checked per op); scatter_add (its
// rows are data: the index vector). Coverage is checked against the axes' blocks, not against the
// tensor's run-time extents (the ragged last block is masked by design).
#include "context.hpp"
#include "control.hpp"
#include "output_coverage_scope.hpp"
#include "../plan/fragments.hpp"
#include "../plan/operands.hpp"

namespace cake::analysis {

namespace detail {

// The moving tile's extent along each dim of a global tile ref (elements per coordinate unit).
constexpr void tile_extents(const program& p, const op& o, const operand& g, const operand& s, int (&e)[dim_list::max_rank]) {
  const auto& ref = p.tile_refs[g.index];
  const plan::extent2 sh = plan::shape_of(p, s);
  for (int j = 0; j < dim_list::max_rank; ++j) e[j] = 1;
  if (ref.rank == 1) {
    // lowering (emit_compute.hpp tile_dims): a rank-1 tensor holds a row vector's rows, else a tile's columns
    const bool row_vec = s.kind == operand_kind::reg && plan::class_of(p.regs[s.index]) == plan::shape_class::row_vec;
    e[0] = row_vec ? sh.rows : sh.cols;
    return;
  }
  (void)o;
  const int row = ref.row_pos != no_index ? ref.row_pos : ref.rank - 2;
  e[ref.rank - 1] = sh.cols;
  if (row >= 0 && row < ref.rank - 1) e[row] = sh.rows;
  for (int j = 0; j < ref.rank; ++j)
    if (ref.element_coord(j)) e[j] = 1;  // .elements_at(j): the coordinate counts elements
}

// What extent j of a tile is, in the schedule's words.
constexpr std::string_view extent_word(const global_tile_ref& ref, int j) {
  const int row = ref.row_pos != no_index ? ref.row_pos : ref.rank - 2;
  if (ref.rank == 1) return "length";
  if (j == ref.rank - 1) return "columns";
  if (j == row) return "rows";
  return "extent (1: not the tile's row or column dim)";
}

template <class Text>
constexpr void write_axis(Text& t, const program& p, int a) {
  const auto& ax = p.space.axes[a];
  const std::string_view d = ax.dim < p.dims.size() ? p.dims[ax.dim].nm.view() : std::string_view{"?"};
  if (ax.kind == axis_kind::tiles) t << "tiles(" << d << ", " << ax.extent << ')';
  else if (ax.kind == axis_kind::each) t << "each(" << d << ')';
  else t << "split(" << ax.extent << ')';
  t << " (axis " << a << ')';
}

template <class Text>
constexpr void write_tile_ref(Text& t, const program& p, const global_tile_ref& ref) {
  t << p.tensors[ref.tensor].nm.view() << ".tile(";
  for (int j = 0; j < ref.rank; ++j) {
    if (j) t << ", ";
    detail::write_index(t, p, ref.coords[j]);
  }
  t << ')';
}

constexpr std::string_view dim_name(const program& p, int d) { return d >= 0 && d < static_cast<int>(p.dims.size()) ? p.dims[d].nm.view() : std::string_view{"?"}; }

constexpr bool is_tile_access(op_kind k) {
  return k == op_kind::load_global || k == op_kind::store_global || k == op_kind::atomic_add || k == op_kind::tma_load || k == op_kind::tma_store ||
         k == op_kind::cp_async;
}
constexpr bool global_is_dest(op_kind k) { return k == op_kind::store_global || k == op_kind::atomic_add || k == op_kind::tma_store; }

// An index variable the coverage check enumerates: a unit index or an enclosing for_range's counter.
struct enum_var {
  var_kind kind = var_kind::none;
  int ref = 0;
  int count = 1;
};

}  // namespace detail

constexpr void check_tile_coverage(context& c) {
  const program& p = c.p;
  const int n = static_cast<int>(p.ops.size());
  const rule_id rule = rule_id::memory_tile_coverage;
  int nonaffine_op = -1, unmodelled_op = -1, scatter_op = -1, shared_op = -1;
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    if ((o.kind == op_kind::scatter_add || o.kind == op_kind::scatter_store || o.kind == op_kind::fetch_add) && scatter_op < 0) scatter_op = i;
    if (!detail::is_tile_access(o.kind)) continue;
    const bool dest = detail::global_is_dest(o.kind);
    const operand& g = dest ? o.d : o.a;
    const operand& s = dest ? o.a : o.d;
    if (g.kind != operand_kind::global || (s.kind != operand_kind::reg && s.kind != operand_kind::smem)) continue;
    const auto& ref = p.tile_refs[g.index];
    const auto& t = p.tensors[ref.tensor];
    int ext[dim_list::max_rank]{};
    detail::tile_extents(p, o, g, s, ext);

    // ---- (1), (2): every plain parallel index term indexes its axis's dim and moves the tile by its block
    bool affine = true, used_axis[iteration_space::max_axes]{};
    int walked_block[dim_list::max_rank]{};  // the block of the axis that walks dim j in this tile (0: none)
    diagnostic* d = nullptr;
    int findings = 0;
    for (int j = 0; j < ref.rank; ++j) {
      const index_expr& x = ref.coords[j];
      if (!x.valid || x.uses(var_kind::value)) {  // an origin read from a tensor is data: not modelled
        affine = false;
        continue;
      }
      for (int k = 0; k < x.term_count; ++k) {
        const index_term& v = x.terms[k];
        if (v.kind != var_kind::tile_coord || v.coef == 0) continue;
        if (!x.linear() || !v.plain() || v.ref >= p.space.count) {
          affine = false;
          continue;
        }
        const int a = v.ref;
        used_axis[a] = true;
        const auto& ax = p.space.axes[a];
        if (ax.kind == axis_kind::split) continue;  // no dim: what a slice index means is not known
        const int block = ax.kind == axis_kind::tiles ? ax.extent : 1;
        const long long step = static_cast<long long>(v.coef) * ext[j];
        const bool other_dim = ax.dim != t.dims[j];
        if (!other_dim && step == block) {
          walked_block[j] = block;
          continue;
        }
        ++findings;
        if (findings == 1) {
          d = emit_op(c, rule, i);
          if (!d) break;
          d->message << p.tensors[ref.tensor].nm.view() << "'s " << detail::dim_name(p, t.dims[j]) << " is indexed by ";
          detail::write_index(d->message, p, x);
          if (other_dim) {
            d->message << ", whose index of ";
            detail::write_axis(d->message, p, a);
            d->message << " walks " << detail::dim_name(p, ax.dim) << ", not " << detail::dim_name(p, t.dims[j]);
          } else {
            d->message << ": each point of ";
            detail::write_axis(d->message, p, a);
            d->message << " moves the tile " << step << " elements (" << v.coef << " x its " << ext[j] << ' ' << detail::extent_word(ref, j)
                       << ") where the axis's block is " << block << (step > block ? ": elements between the tiles are skipped" : ": consecutive points overlap");
          }
          d->num("dim", t.dims[j]).num("axis", a).num("axis_block", block).num("tile_extent", ext[j]).num("step", step);
          auto& nt = d->add_note(o.loc);
          nt << "the tile ";
          detail::write_tile_ref(nt, p, ref);
          nt << " moves a " << plan::shape_of(p, s).rows << 'x' << plan::shape_of(p, s).cols << " '" << resource_name(p, s) << "': ";
          if (ref.rank == 1) nt << "its " << ext[0] << ' ' << detail::extent_word(ref, 0) << " along " << detail::dim_name(p, t.dims[0]);
          else {
            const int row = ref.row_pos != no_index ? ref.row_pos : ref.rank - 2;
            nt << "rows along " << detail::dim_name(p, t.dims[row]) << ", columns along " << detail::dim_name(p, t.dims[ref.rank - 1]);
          }
          {
            auto& ns = d->add_note(p.space.loc);
            ns << "the parallel space: ";
            detail::write_axis(ns, p, a);
            ns << " walks " << detail::dim_name(p, ax.dim) << " in blocks of " << block;
          }
          if (other_dim) {
            d->help << "index " << detail::dim_name(p, t.dims[j]) << " with the index that walks it (or a loop over it) and "
                    << detail::dim_name(p, ax.dim) << " with this one; if the tile's rows are meant to run along another dim, say so with .rows_at(pos)"
                    << " or a trailing unit dim";
          } else {
            if (ext[j] > 0 && block % ext[j] == 0) {
              d->help << "scale the index so that one point moves " << block << " elements: coefficient " << block / ext[j] << " for a tile of " << ext[j]
                      << ", the units or a for_range filling the block (e.g. i * " << block / ext[j] << " + wg)";
            } else {
              d->help << "the tile's " << ext[j] << ' ' << detail::extent_word(ref, j) << " do not fit a block of " << block << " of "
                      << detail::dim_name(p, t.dims[j]) << ": lay the tensor out so that they run along the dim walked in blocks of them"
                      << " (a trailing unit dim, [.., N, 1], puts a row vector's rows on N; or .rows_at(pos))";
            }
          }
        } else if (d) {
          auto& nt = d->add_note(o.loc);
          nt << "also " << detail::dim_name(p, t.dims[j]) << ": ";
          detail::write_index(nt, p, x);
          if (other_dim) nt << " uses the index of " << detail::dim_name(p, ax.dim) << "'s axis " << a;
          else nt << " moves " << step << " elements per point of axis " << a << " (block " << block << ')';
        }
      }
    }
    if (!affine) {
      if (nonaffine_op < 0 && !output_coverage_enumerable(p, i)) nonaffine_op = i;  // else memory.output-coverage runs the remapping
      continue;
    }
    if (findings > 0) continue;

    // ---- (3), (4): outputs written exactly once over the launch --------------------------------------
    if (o.kind != op_kind::store_global && o.kind != op_kind::tma_store) continue;
    int writers = 0;
    for (int j2 = 0; j2 < n; ++j2) {
      const op& w = p.ops[j2];
      if ((w.kind == op_kind::store_global || w.kind == op_kind::tma_store) && w.d.kind == operand_kind::global && p.tile_refs[w.d.index].tensor == ref.tensor)
        ++writers;
    }
    if (writers > 1) {
      if (shared_op < 0) shared_op = i;
      continue;
    }
    // The enclosing tile loop; no when or dynamic loop between it and the op.
    int walk = -1;
    bool modelled = true;
    detail::enum_var vars[8]{};
    int nvars = 0;
    for (int a = o.parent; a >= 0; a = p.ops[a].parent) {
      const op& ctl = p.ops[a];
      if (ctl.kind == op_kind::tile_loop) {
        walk = a;
        break;
      }
      if (ctl.kind == op_kind::when || (ctl.kind == op_kind::loop && !ctl.has(flag_static_trip))) modelled = false;
      else if (ctl.kind == op_kind::loop && nvars < 7) vars[nvars++] = {var_kind::loop, a, ctl.imm[1]};
      else modelled = false;
    }
    if (walk < 0) continue;  // outside the walk: no parallel index to check against
    const role_decl& rd = p.roles[o.role];
    const bool alternate = p.ops[walk].has(flag_alternate);
    const var_kind unit_var = rd.unit == role_unit::warpgroup ? var_kind::warpgroup : var_kind::warp;
    vars[nvars++] = {unit_var, 0, alternate ? 1 : rd.count};
    long long combos = 1;
    for (int k = 0; k < nvars; ++k) {
      if (vars[k].count < 1) modelled = false;
      combos *= vars[k].count > 0 ? vars[k].count : 1;
    }
    for (int j = 0; j < ref.rank && modelled; ++j) {
      const index_expr& x = ref.coords[j];
      for (int k = 0; k < x.term_count; ++k) {
        const index_term& v = x.terms[k];
        if (v.kind == var_kind::tile_coord) continue;
        bool known = false;
        for (int q = 0; q < nvars; ++q) known = known || (vars[q].kind == v.kind && (v.kind != var_kind::loop || vars[q].ref == v.ref));
        if (!known || (alternate && v.kind == unit_var)) modelled = false;
      }
    }
    if (!modelled || combos > 256) {
      if (unmodelled_op < 0 && !output_coverage_enumerable(p, i)) unmodelled_op = i;  // else memory.output-coverage runs it
      continue;
    }
    // (3) every axis is used
    int unused = -1;
    for (int a = 0; a < p.space.count && unused < 0; ++a)
      if (!used_axis[a] && !(p.space.axes[a].kind == axis_kind::split && p.space.axes[a].extent <= 1)) unused = a;  // split(1): one point
    if (unused >= 0) {
      if (diagnostic* e = emit_op(c, rule, i)) {
        e->message << "every point along ";
        detail::write_axis(e->message, p, unused);
        e->message << " writes the same tile ";
        detail::write_tile_ref(e->message, p, ref);
        e->message << ": no coordinate uses that axis's index, so " << p.tensors[ref.tensor].nm.view() << " is written once per point of it";
        e->num("axis", unused);
        e->add_note(p.space.loc) << "the parallel space has " << p.space.count << " axes; the store's coordinates use the others";
        if (p.space.axes[unused].kind == axis_kind::split)
          e->help << "give each slice its own part of the output (a coordinate of the slice index), or add the slices atomically (atomic_add)";
        else
          e->help << "index " << p.tensors[ref.tensor].nm.view() << "'s " << detail::dim_name(p, p.space.axes[unused].dim)
                  << " with that axis's index, or store from one point only";
      }
      continue;
    }
    // (4) the tiles of one point: offsets per enumerated combination
    constexpr int max_combos = 256;
    long long lo[max_combos][dim_list::max_rank]{};
    int vals[8]{};
    auto value_of = [&](const index_term& v) -> long long {
      for (int q = 0; q < nvars; ++q)
        if (vars[q].kind == v.kind && (v.kind != var_kind::loop || vars[q].ref == v.ref)) return vals[q];
      return 0;
    };
    const int nc = static_cast<int>(combos);
    for (int cidx = 0; cidx < nc; ++cidx) {
      int rest = cidx;
      for (int q = 0; q < nvars; ++q) vals[q] = rest % vars[q].count, rest /= vars[q].count;
      for (int j = 0; j < ref.rank; ++j) {
        const index_expr& x = ref.coords[j];
        long long v = x.constant;
        for (int k = 0; k < x.term_count; ++k)
          if (x.terms[k].kind != var_kind::tile_coord) v += static_cast<long long>(x.terms[k].coef) * x.terms[k].value(value_of);
        lo[cidx][j] = v * ext[j];
      }
    }
    auto describe = [&](auto& txt, int cidx) {
      int rest = cidx;
      bool first = true;
      for (int q = 0; q < nvars; ++q) {
        const int val = rest % vars[q].count;
        rest /= vars[q].count;
        if (vars[q].count <= 1) continue;
        txt << (first ? "" : ", ");
        first = false;
        if (vars[q].kind == var_kind::loop) txt << 'i' << vars[q].ref << " = " << val;
        else txt << (vars[q].kind == var_kind::warpgroup ? "warpgroup " : "warp ") << val;
      }
      if (first) txt << "the role's only unit";
    };
    // (4a) inside the block along every walked dim
    int outside = -1, out_dim = -1;
    for (int cidx = 0; cidx < nc && outside < 0; ++cidx)
      for (int j = 0; j < ref.rank; ++j)
        if (walked_block[j] > 0 && (lo[cidx][j] < 0 || lo[cidx][j] + ext[j] > walked_block[j])) {
          outside = cidx, out_dim = j;
          break;
        }
    // (4b) disjoint
    int ov_a = -1, ov_b = -1;
    for (int x1 = 0; x1 < nc && ov_a < 0; ++x1)
      for (int x2 = x1 + 1; x2 < nc; ++x2) {
        bool meet = true;
        for (int j = 0; j < ref.rank; ++j) meet = meet && lo[x1][j] < lo[x2][j] + ext[j] && lo[x2][j] < lo[x1][j] + ext[j];
        if (meet) {
          ov_a = x1, ov_b = x2;
          break;
        }
      }
    // (4c) the walked dims' blocks filled: a grid compressed to the tiles' edges, every cell inside some tile
    long long gap_at[dim_list::max_rank]{};
    int gap_dim = -1;
    if (outside < 0 && ov_a < 0) {
      int wd[dim_list::max_rank]{}, nw = 0;
      for (int j = 0; j < ref.rank; ++j)
        if (walked_block[j] > 0) wd[nw++] = j;
      long long edges[dim_list::max_rank][2 * max_combos + 2]{};
      int ne[dim_list::max_rank]{};
      for (int w = 0; w < nw; ++w) {
        const int j = wd[w];
        auto add = [&](long long e) {
          for (int q = 0; q < ne[w]; ++q)
            if (edges[w][q] == e) return;
          int q = ne[w]++;
          while (q > 0 && edges[w][q - 1] > e) edges[w][q] = edges[w][q - 1], --q;
          edges[w][q] = e;
        };
        add(0);
        add(walked_block[j]);
        for (int cidx = 0; cidx < nc; ++cidx) add(lo[cidx][j]), add(lo[cidx][j] + ext[j]);
      }
      long long cells = 1;
      for (int w = 0; w < nw; ++w) cells *= ne[w] - 1;
      for (long long cell = 0; cell < cells && cells <= 65536 && gap_dim < 0; ++cell) {
        long long rest = cell, at[dim_list::max_rank]{};
        for (int w = 0; w < nw; ++w) {
          at[w] = edges[w][rest % (ne[w] - 1)];
          rest /= ne[w] - 1;
        }
        bool covered = false;
        for (int cidx = 0; cidx < nc && !covered; ++cidx) {
          bool in = true;
          for (int w = 0; w < nw; ++w) in = in && lo[cidx][wd[w]] <= at[w] && at[w] < lo[cidx][wd[w]] + ext[wd[w]];
          covered = in;
        }
        if (!covered) {
          gap_dim = wd[0];
          for (int w = 0; w < nw; ++w) gap_at[wd[w]] = at[w];
        }
      }
    }
    if (outside < 0 && ov_a < 0 && gap_dim < 0) continue;
    diagnostic* e = emit_op(c, rule, i);
    if (!e) continue;
    detail::write_tile_ref(e->message, p, ref);
    if (outside >= 0) {
      const int j = out_dim;
      e->message << " for ";
      describe(e->message, outside);
      e->message << " starts " << lo[outside][j] << " elements into the point's block of " << detail::dim_name(p, t.dims[j]) << " and spans " << ext[j]
                 << ", past the block of " << walked_block[j] << ": it writes a neighbouring point's elements (or outside the tensor)";
      e->num("dim", t.dims[j]).num("offset", lo[outside][j]).num("tile_extent", ext[j]).num("axis_block", walked_block[j]);
    } else if (ov_a >= 0) {
      e->message << ": ";
      describe(e->message, ov_a);
      e->message << " and ";
      describe(e->message, ov_b);
      e->message << " write the same elements of " << p.tensors[ref.tensor].nm.view() << " (tiles at";
      for (int j = 0; j < ref.rank; ++j) e->message << (j ? ", " : " ") << lo[ov_a][j];
      e->message << ')';
      e->num("units", rd.count).num("combinations", nc);
    } else {
      e->message << " leaves elements of each point's block unwritten: nothing writes the element at";
      for (int j = 0; j < ref.rank; ++j)
        if (walked_block[j] > 0) e->message << ' ' << detail::dim_name(p, t.dims[j]) << ' ' << gap_at[j];
      e->message << " of the block";
      e->num("dim", t.dims[gap_dim]).num("offset", gap_at[gap_dim]).num("axis_block", walked_block[gap_dim]).num("combinations", nc);
    }
    {
      auto& nt = e->add_note(o.loc);
      nt << "per point, " << nc << (nc == 1 ? " tile" : " tiles") << " of ";
      bool first = true;
      for (int j = 0; j < ref.rank; ++j)
        if (ext[j] > 1 || walked_block[j] > 0) nt << (first ? "" : " x ") << ext[j] << ' ' << detail::dim_name(p, t.dims[j]), first = false;
      nt << " (" << rd.count << (rd.unit == role_unit::warpgroup ? " warpgroup(s)" : " warp(s)") << (alternate ? " taking points in turn" : "")
         << " of role " << rd.nm.view() << (nvars > 1 ? ", for_range trips" : "") << ')';
    }
    {
      auto& nt = e->add_note(p.space.loc);
      nt << "blocks per point:";
      for (int j = 0; j < ref.rank; ++j)
        if (walked_block[j] > 0) nt << ' ' << detail::dim_name(p, t.dims[j]) << ' ' << walked_block[j];
    }
    e->help << "give every unit and for_range trip its own tile of the point's block (e.g. `i * u + wg` for u units of block/u rows each), and tiles that together fill the block";
  }
  if (nonaffine_op >= 0)
    add_coverage(c, rule, nonaffine_op, p.ops[nonaffine_op].loc,
                 "a tile coordinate that divides or takes a modulo of a parallel index, or uses an index value (run-time data), is not checked against the axes' blocks");
  if (unmodelled_op >= 0)
    add_coverage(c, rule, unmodelled_op, p.ops[unmodelled_op].loc,
                 "an output tile under a when, in a dynamic loop, or indexed by the cluster rank, CTA index, a dim's extent or a warp of a warpgroup: checked for dims and blocks, not for exactly-once coverage");
  if (shared_op >= 0)
    add_coverage(c, rule, shared_op, p.ops[shared_op].loc,
                 "a tensor written by several store ops: each is checked for dims and blocks, their union is not checked for exactly-once coverage");
  if (scatter_op >= 0)
    add_coverage(c, rule, scatter_op, p.ops[scatter_op].loc, "rows of a scatter_add, scatter_store or fetch_add are data (the index vector): their coverage is not checked");
}

// ir.dim-unsized: the runtime takes every dim's extent from the tensors it is given (a dim is as long as
// the tensor axes that have it), so a dim that the parallel space or a loop bound walks but no tensor has
// would launch a zero grid or a loop of unknown trip count. Reported once per dim, at its first walker.
constexpr void check_dims_sized(context& c) {
  const program& p = c.p;
  // A kernel without tensors reads and writes nothing: a protocol sketch (analyzer tests), not a kernel
  // anyone launches with data; the runtime still refuses to launch it with the dim's name.
  if (p.tensors.empty()) return;
  for (std::size_t d = 0; d < p.dims.size(); ++d) {
    bool in_tensor = false;
    for (const auto& t : p.tensors)
      for (int i = 0; i < t.rank; ++i) in_tensor = in_tensor || t.dims[i] == static_cast<int>(d);
    if (in_tensor) continue;
    if (!p.walks_dim(static_cast<int>(d))) continue;
    // where: the axis that walks it, else the first loop whose bounds do
    int axis = -1, loop_op = -1;
    for (int a = 0; a < p.space.count && axis < 0; ++a)
      if (p.space.axes[a].kind != axis_kind::split && p.space.axes[a].dim == static_cast<int>(d)) axis = a;
    if (axis < 0)
      for (int i = 0; i < static_cast<int>(p.ops.size()) && loop_op < 0; ++i)
        // has_bound, not bound_of() != nullptr: g++ 12 does not take that comparison in constant evaluation
        if (p.has_bound(i) && p.loops[p.ops[i].imm[1]].walks_dim(static_cast<int>(d))) loop_op = i;
    if (axis < 0 && loop_op < 0) continue;
    diagnostic* dg = loop_op >= 0 ? emit_op(c, rule_id::ir_dim_unsized, loop_op) : emit_decl(c, rule_id::ir_dim_unsized, p.space.loc);
    if (!dg) return;
    dg->message << "dim " << p.dims[d].nm.view() << " is walked by ";
    if (axis >= 0) {
      dg->message << "axis " << axis << " of the parallel space";
    } else {
      dg->message << "this loop's bound";
    }
    dg->message << ", but no tensor has it: the launch takes each dim's extent from its tensors, so " << p.dims[d].nm.view()
                << " would have none (" << p.tensors.size() << " tensor(s) declared)";
    dg->num("dim", static_cast<long long>(d)).num("axis", axis).num("tensors", static_cast<long long>(p.tensors.size()));
    dg->help << "declare the input or output that has " << p.dims[d].nm.view() << " (e.g. k.output<f32>(\"Y\", dims("
             << p.dims[d].nm.view() << ", ...))), or walk a dim a tensor has";
  }
}

}  // namespace cake::analysis
