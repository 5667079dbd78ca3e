#pragma once
// Which dims a tile holds, and what every MMA contracts. Dims are labels: nothing here looks at a name.
//
// - An smem region holds the dims of the tensor tiles copied into or out of it (TMA, cp.async): its
//   columns the tensor's last (contiguous) dim, its rows the tensor's row dim (global_tile_ref::row_pos).
// - A register tile written by an MMA holds (A's row dim, B's row dim) after contraction; one written by
//   a load from a tensor holds that tile's dims; converted and elementwise results keep their source's.
// - An MMA contracts the dim named by over(dim), or else the one dim that A and B hold in common.
//   An operand is K-major when that dim is its contiguous one (its columns) and MN-major when it is its
//   rows; an operand whose dims are unknown keeps the major-ness its region declares (major::k default).
//
// The builder's checks, the analyzer, the cost model and lowering all read operand major-ness from here.
#include "../ir/program.hpp"

namespace cake::plan {

struct dim_pair {
  std::uint8_t rows = no_index, cols = no_index;
  constexpr bool known() const { return rows != no_index && cols != no_index; }
  constexpr bool holds(std::uint8_t d) const { return d != no_index && (rows == d || cols == d); }
};

enum class contraction_status : std::uint8_t {
  ok,
  declared,       // dims unknown: the regions' declared major-ness is used
  ambiguous,      // A and B share both dims and no over(dim) was written
  none_shared,    // A and B share no dim and no over(dim) was written
  not_in_operand, // over(dim) names a dim one operand does not hold
};

struct contraction {
  std::uint8_t reduce = no_index;  // the contracted dim (no_index: unknown)
  major a = major::k, b = major::k;
  bool a_in_regs = false;
  contraction_status status = contraction_status::declared;
  std::uint8_t missing_in = 0;  // not_in_operand: 0 = A, 1 = B
};

struct dims_plan {
  dim_pair smem[capacity::smem]{};
  dim_pair regs[capacity::regs]{};
  contraction mma[capacity::ops]{};  // meaningful for MMA ops only
};

constexpr bool is_mma_kind(op_kind k) { return k == op_kind::wgmma || k == op_kind::mma_sync || k == op_kind::tcgen05_mma; }

// The dims of the tile a global tile ref moves: (row dim, last dim).
constexpr dim_pair dims_of_tile_ref(const program& p, const global_tile_ref& r) {
  if (r.tensor >= p.tensors.size()) return {};
  const auto& t = p.tensors[r.tensor];
  dim_pair d;
  if (t.rank >= 1) d.cols = t.dims[t.rank - 1];
  const int row = r.row_pos != no_index ? r.row_pos : t.rank - 2;
  if (row >= 0 && row < t.rank - 1) d.rows = t.dims[row];
  return d;
}

namespace detail {

constexpr dim_pair operand_dims(const program& p, const dims_plan& D, const operand& o) {
  if (o.kind == operand_kind::smem && o.index < p.smem.size()) return D.smem[o.index];
  if (o.kind == operand_kind::reg && o.index < p.regs.size()) return D.regs[o.index];
  if (o.kind == operand_kind::global && o.index < p.tile_refs.size()) return dims_of_tile_ref(p, p.tile_refs[o.index]);
  return {};
}

// The non-contracted dim of an operand (its M or N), no_index when unknown.
constexpr std::uint8_t other_dim(const dim_pair& d, std::uint8_t reduce) {
  if (!d.known() || reduce == no_index) return no_index;
  return d.cols == reduce ? d.rows : d.rows == reduce ? d.cols : no_index;
}

constexpr major declared_major(const program& p, const operand& o) {
  return o.kind == operand_kind::smem && o.index < p.smem.size() ? p.smem[o.index].mj : major::k;
}

constexpr contraction contract(const program& p, const dims_plan& D, const op& o) {
  contraction c;
  c.a_in_regs = o.a.kind == operand_kind::reg;
  c.a = declared_major(p, o.a);
  c.b = declared_major(p, o.b);
  const dim_pair a = operand_dims(p, D, o.a), b = operand_dims(p, D, o.b);
  if (o.has(flag_over)) {
    c.reduce = static_cast<std::uint8_t>(o.imm[1]);
    if ((a.known() && !a.holds(c.reduce)) || (b.known() && !b.holds(c.reduce))) {
      c.status = contraction_status::not_in_operand;
      c.missing_in = a.known() && !a.holds(c.reduce) ? 0 : 1;
      return c;
    }
  } else if (a.known() && b.known()) {
    const bool rr = a.rows == b.rows || a.rows == b.cols, cc = a.cols == b.rows || a.cols == b.cols;
    if (rr && cc) {
      c.status = contraction_status::ambiguous;
      return c;
    }
    if (!rr && !cc) {
      c.status = contraction_status::none_shared;
      return c;
    }
    c.reduce = cc ? a.cols : a.rows;
  } else {
    return c;  // declared major-ness
  }
  // A register A operand has no major-ness (its fragment layout is fixed by the instruction).
  if (a.known() && !c.a_in_regs) c.a = a.cols == c.reduce ? major::k : major::mn;
  if (b.known()) c.b = b.cols == c.reduce ? major::k : major::mn;
  c.status = (a.known() || c.a_in_regs) && b.known() ? contraction_status::ok : contraction_status::declared;
  return c;
}

}  // namespace detail

constexpr dims_plan plan_dims(const program& p) {
  dims_plan D;
  // Regions: the first copy that names a tensor tile decides.
  for (const auto& o : p.ops) {
    const bool copy = o.kind == op_kind::tma_load || o.kind == op_kind::tma_store || o.kind == op_kind::cp_async;
    if (!copy) continue;
    const operand& s = o.kind == op_kind::tma_store ? o.a : o.d;
    const operand& g = o.kind == op_kind::tma_store ? o.d : o.a;
    if (s.kind != operand_kind::smem || s.index >= p.smem.size() || g.kind != operand_kind::global || g.index >= p.tile_refs.size()) continue;
    if (!D.smem[s.index].known()) D.smem[s.index] = dims_of_tile_ref(p, p.tile_refs[g.index]);
  }
  // Register tiles: MMA results, loads, and whatever is computed from them. A register A operand may be
  // computed from an earlier MMA's result, so the walk repeats until nothing changes.
  for (int pass = 0; pass < 4; ++pass) {
    bool changed = false;
    auto set = [&](const operand& d, dim_pair v) {
      if (d.kind != operand_kind::reg || d.index >= p.regs.size() || !v.known() || D.regs[d.index].known()) return;
      D.regs[d.index] = v;
      changed = true;
    };
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const op& o = p.ops[i];
      if (is_mma_kind(o.kind)) {
        D.mma[i] = detail::contract(p, D, o);
        const std::uint8_t r = D.mma[i].reduce;
        set(o.d, {detail::other_dim(detail::operand_dims(p, D, o.a), r), detail::other_dim(detail::operand_dims(p, D, o.b), r)});
      } else if (o.kind == op_kind::load_global || o.kind == op_kind::load_shared) {
        set(o.d, detail::operand_dims(p, D, o.a));
      } else if (o.kind == op_kind::elementwise && o.d.kind == operand_kind::reg && o.d.index < p.regs.size()) {
        // r.set: the dims of a leaf of the destination's full shape (vectors hold only one of them).
        for (int e = o.imm[0]; e >= 0 && e < o.imm[0] + o.imm[1] && e < static_cast<int>(p.exprs.size()); ++e) {
          const expr_node& x = p.exprs[e];
          if (x.fn != math_fn::tile || x.ref >= p.regs.size()) continue;
          if (p.regs[x.ref].rows == p.regs[o.d.index].rows && p.regs[x.ref].cols == p.regs[o.d.index].cols && D.regs[x.ref].known()) {
            set(o.d, D.regs[x.ref]);
            break;
          }
        }
      } else if (o.kind == op_kind::convert) {
        const dim_pair a = detail::operand_dims(p, D, o.a);
        // A row or column vector holds one of its source's dims only; a full tile holds both.
        if (o.d.kind == operand_kind::reg && o.a.kind == operand_kind::reg && o.d.index < p.regs.size() && o.a.index < p.regs.size() &&
            p.regs[o.d.index].rows == p.regs[o.a.index].rows && p.regs[o.d.index].cols == p.regs[o.a.index].cols)
          set(o.d, a);
      }
    }
    if (!changed) break;
  }
  return D;
}

// Major-ness of an MMA's smem operand (which: 0 = A, 1 = B) as the instruction must be told.
constexpr major operand_major(const dims_plan& D, int mma_op, int which) { return which == 0 ? D.mma[mma_op].a : D.mma[mma_op].b; }

}  // namespace cake::plan
