#pragma once
// Register compute, the representation side: what r.set(...), the row reductions, convert, fill and the
// register loads and stores may combine. Three rules, each the one owner of its facts:
//   representation.broadcast        shapes: the leaves of an expression against its destination, a row
//                                   reduction's source against its vectors, a scatter's index vector
//   representation.compute-dtype    dtypes: what is computed on (f32, i32, bf16, f16), the 32-bit
//                                   vectors reductions write, i32 index vectors; tf32 and i64 register
//                                   tiles
//   representation.layout-conflict  fragment layouts (plan/fragments.hpp): two layouts meet in one op, or
//                                   a tile cannot be laid out over the threads of its unit
// lower/support.hpp also refuses some of these forms (8-bit compute, non-32-bit reduction vectors, a
// non-i32 argmin index); the instruction pass leaves an op whose dtypes this file reports to
// representation.compute-dtype (compute_dtype_problem below), so that one fact is reported once.
#include "context.hpp"

namespace cake::analysis {

// ---- dtypes ---------------------------------------------------------------------------------------

// Register tiles are computed on in these dtypes (16-bit ones are unpacked to f32 and packed back).
constexpr bool computed_dtype(dtype d) { return d == dtype::f32 || d == dtype::i32 || d == dtype::bf16 || d == dtype::f16; }

// What is wrong with the dtypes of op `id`, if anything: the register tile concerned and why.
struct dtype_problem {
  int reg = -1;  // -1: nothing wrong
  const char* why = "";
  const char* help = "";
};

constexpr dtype_problem compute_dtype_problem(const program& p, int id) {
  const op& o = p.ops[id];
  auto reg = [&](const operand& x) { return x.kind == operand_kind::reg && x.index < p.regs.size() ? static_cast<int>(x.index) : -1; };
  auto dt = [&](int r) { return p.regs[r].dt; };
  constexpr const char* tf32_why = "tf32 is an MMA operand format in shared memory; register tiles are not held, loaded or stored as tf32";
  constexpr const char* tf32_help = "hold the values as f32 (the MMA reads tf32 from smem)";
  constexpr const char* eight_why = "8-bit register tiles are not computed on; they are only converted (r.convert) to and from a computed dtype";
  constexpr const char* eight_help = "compute in f32 (or bf16/f16) and convert to the 8-bit dtype where it is stored";
  constexpr const char* i64_why = "i64 is a storage dtype of global tensors (exact sums): register tiles are not i64";
  constexpr const char* i64_help = "hold the values as f32: atomic_add / scatter_add of an f32 tile into an i64 tensor adds them rounded to integers, "
                                   "and r.load of an i64 tensor into an f32 tile converts them back";
  auto computed = [&](int r) -> dtype_problem {
    if (r < 0 || computed_dtype(dt(r))) return {};
    if (dt(r) == dtype::tf32) return {r, tf32_why, tf32_help};
    if (dt(r) == dtype::i64) return {r, i64_why, i64_help};
    return {r, eight_why, eight_help};
  };
  auto not_tf32 = [&](int r) -> dtype_problem {
    if (r >= 0 && dt(r) == dtype::tf32) return {r, tf32_why, tf32_help};
    if (r >= 0 && dt(r) == dtype::i64) return {r, i64_why, i64_help};
    return {};
  };
  switch (o.kind) {
    case op_kind::fill: return computed(reg(o.d));
    case op_kind::elementwise: {
      if (auto q = computed(reg(o.d)); q.reg >= 0) return q;
      for (int i = o.imm[0]; i < o.imm[0] + o.imm[1] && i < static_cast<int>(p.exprs.size()); ++i)
        if (p.exprs[i].fn == math_fn::tile && p.exprs[i].ref < p.regs.size())
          if (auto q = computed(p.exprs[i].ref); q.reg >= 0) return q;
      return {};
    }
    case op_kind::reduce_rows:
    case op_kind::arg_reduce_rows:
    case op_kind::topk_rows: {
      if (auto q = computed(reg(o.a)); q.reg >= 0) return q;
      for (int i = o.expr_first(); i < o.expr_first() + o.expr_count() && i < static_cast<int>(p.exprs.size()); ++i)
        if (p.exprs[i].fn == math_fn::tile && p.exprs[i].ref < p.regs.size())
          if (auto q = computed(p.exprs[i].ref); q.reg >= 0) return q;
      const int d = reg(o.d);
      if (d >= 0 && dt(d) != dtype::f32 && dt(d) != dtype::i32)
        return {d, "a row reduction writes a 32-bit vector (f32, or i32 for integer results)", "reduce into an f32 row vector and convert it if needed"};
      const int b = reg(o.b);
      if (o.kind == op_kind::arg_reduce_rows && b >= 0 && dt(b) != dtype::i32)
        return {b, "the index vector of a row argmin / argmax holds column indices: it is i32", "declare the index vector r.row_vector<i32>(...)"};
      return {};
    }
    case op_kind::convert:
      if (auto q = not_tf32(reg(o.a)); q.reg >= 0) return q;
      return not_tf32(reg(o.d));
    case op_kind::load_global:
    case op_kind::load_shared: return not_tf32(reg(o.d));
    case op_kind::store_global:
    case op_kind::store_shared:
    case op_kind::atomic_add: return not_tf32(reg(o.a));
    case op_kind::scatter_add:
    case op_kind::scatter_store: {
      if (auto q = not_tf32(reg(o.a)); q.reg >= 0) return q;
      const int b = reg(o.b);
      if (b >= 0 && dt(b) != dtype::i32)
        return {b, "the index vector of a scatter holds row indices of the tensor: it is i32", "declare the index vector r.row_vector<i32>(...)"};
      return {};
    }
    case op_kind::fetch_add: {
      const int b = reg(o.b), d = reg(o.d);
      if (b >= 0 && dt(b) != dtype::i32)
        return {b, "the index vector of a fetch_add holds row indices of the counter: it is i32", "declare the index vector r.row_vector<i32>(...)"};
      if (d >= 0 && dt(d) != dtype::i32 && dt(d) != dtype::f32)
        return {d, "fetch_add writes the counters' old values into a 32-bit vector (i32, or f32)", "declare it r.row_vector<i32>(...)"};
      return {};
    }
    case op_kind::scan_rows:
    case op_kind::reduce_cols: {
      if (auto q = computed(reg(o.a)); q.reg >= 0) return q;
      const int d = reg(o.d);
      if (d >= 0 && dt(d) != dtype::f32 && dt(d) != dtype::i32)
        return {d, o.kind == op_kind::scan_rows ? "a row scan writes a 32-bit tile (f32, or i32 for integer results)" : "a column reduction writes a 32-bit vector (f32, or i32 for integer results)",
                "scan / reduce into an f32 tile and convert it if needed"};
      return {};
    }
    default: return {};
  }
}

// ---- shapes ---------------------------------------------------------------------------------------

// A move inside the CTA (registers, smem, TMEM) whose two sides have different shapes after part
// selection: representation.copy-shape's fact (lower/support.hpp's "equal shapes" forms are left to it).
constexpr bool move_shapes_differ(const program& p, int id) {
  const op& o = p.ops[id];
  switch (o.kind) {
    case op_kind::ldmatrix:
    case op_kind::stmatrix:
    case op_kind::load_shared:
    case op_kind::store_shared:
    case op_kind::tmem_load:
    case op_kind::tmem_store:
    case op_kind::convert: break;
    default: return false;
  }
  if (o.d.kind == operand_kind::none || o.a.kind == operand_kind::none) return false;
  const auto ds = plan::shape_of(p, o.d), as = plan::shape_of(p, o.a);
  return ds.rows != as.rows || ds.cols != as.cols;
}

namespace detail {

template <class Text>
constexpr void write_reg(Text& t, const program& p, int r) {
  const auto& g = p.regs[r];
  t << '\'' << g.nm.view() << "' (" << g.rows << 'x' << g.cols << ' ' << to_string(g.dt) << ')';
}

template <class Text>
constexpr void write_frame(Text& t, const plan::frame& f) {
  if (f.kind == plan::frag_kind::none) {
    t << "no layout yet";
    return;
  }
  t << plan::to_string(f.kind) << " layout over " << f.rows << 'x' << f.cols;
  if (f.kind == plan::frag_kind::blocked) t << " (" << f.vec << "-element vectors, " << f.tpr << " threads per row)";
}

// Can a leaf of shape lr x lc take part in an element-wise op whose destination is dr x dc?
constexpr bool broadcasts(int lr, int lc, int dr, int dc) {
  if (lr == 1 && lc == 1) return true;
  if (lr == dr && lc == dc) return true;
  const bool dst_full = dr > 1 && dc > 1;
  return dst_full && ((lr == dr && lc == 1) || (lr == 1 && lc == dc));
}

}  // namespace detail

constexpr void check_broadcast(context& c) {
  const program& p = c.p;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    const int id = static_cast<int>(i);
    // The leaves of an expression against its shape: r.set's destination, or a reduced expression's lead leaf.
    const bool reduced_expr = o.has(flag_expr_src) && o.a.kind == operand_kind::reg;
    if ((o.kind == op_kind::elementwise && o.d.kind == operand_kind::reg) || reduced_expr) {
      const int shape_reg = reduced_expr ? o.a.index : o.d.index;
      const auto& D = p.regs[shape_reg];
      for (int e = o.expr_first(); e < o.expr_first() + o.expr_count(); ++e) {
        const expr_node& x = p.exprs[e];
        if (x.fn != math_fn::tile || detail::broadcasts(p.regs[x.ref].rows, p.regs[x.ref].cols, D.rows, D.cols)) continue;
        bool seen = false;  // one finding per leaf tile
        for (int f = o.expr_first(); f < e; ++f) seen = seen || (p.exprs[f].fn == math_fn::tile && p.exprs[f].ref == x.ref);
        if (seen) continue;
        const auto& L = p.regs[x.ref];
        if (diagnostic* d = emit_op(c, rule_id::representation_broadcast, id)) {
          if (reduced_expr) d->message << "row_" << to_string(static_cast<reduce_kind>(o.imm[0])) << " of an expression over ";
          else d->message << "r.set into ";
          detail::write_reg(d->message, p, shape_reg);
          d->message << " reads ";
          detail::write_reg(d->message, p, x.ref);
          const bool dst_vector = D.rows == 1 || D.cols == 1;
          if (dst_vector && L.rows > 1 && L.cols > 1)
            d->message << ": a full tile cannot be assigned into a vector (reduce it first)";
          else
            d->message << ": a leaf is the destination's shape, its " << D.rows << "x1 row vector, its 1x" << D.cols << " column vector, or 1x1";
          d->num("dst_rows", D.rows).num("dst_cols", D.cols).num("leaf_rows", L.rows).num("leaf_cols", L.cols);
          d->add_note(L.loc) << "'" << L.nm.view() << "' declared here";
          d->add_note(D.loc) << "'" << D.nm.view() << "' declared here";
          if (dst_vector && L.rows > 1 && L.cols > 1) d->help << "reduce '" << L.nm.view() << "' into the vector with r.row_max / r.row_sum / r.row_min";
          else d->help << "declare '" << L.nm.view() << "' as " << D.rows << "x" << D.cols << ", r.row_vector(" << D.rows << ") or r.col_vector(" << D.cols << ")";
        }
      }
      if (!reduced_expr) continue;  // a reduced expression's destination vectors are checked below
    }
    const bool reduction = o.kind == op_kind::reduce_rows || o.kind == op_kind::arg_reduce_rows;
    if (reduction && o.a.kind == operand_kind::reg) {
      const auto& S = p.regs[o.a.index];
      for (const operand* v : {&o.d, &o.b}) {
        if (v->kind != operand_kind::reg || (v == &o.b && o.kind != op_kind::arg_reduce_rows)) continue;
        const auto& V = p.regs[v->index];
        if (V.rows == S.rows && V.cols == 1) continue;
        if (diagnostic* d = emit_op(c, rule_id::representation_broadcast, id)) {
          d->message << "row_" << to_string(static_cast<reduce_kind>(o.imm[0])) << " of ";
          detail::write_reg(d->message, p, o.a.index);
          d->message << " gives one value per row, a " << S.rows << "x1 vector; " << (v == &o.b ? "the index vector " : "the destination ");
          detail::write_reg(d->message, p, v->index);
          d->message << " is not";
          d->num("src_rows", S.rows).num("dst_rows", V.rows).num("dst_cols", V.cols);
          d->add_note(V.loc) << "'" << V.nm.view() << "' declared here";
          d->help << "declare '" << V.nm.view() << "' as r.row_vector<...>(\"" << V.nm.view() << "\", " << S.rows << ")";
        }
        break;
      }
      continue;
    }
    // A scan writes the source's shape; a column reduction its 1 x C column vector.
    if ((o.kind == op_kind::scan_rows || o.kind == op_kind::reduce_cols) && o.a.kind == operand_kind::reg && o.d.kind == operand_kind::reg) {
      const auto& S = p.regs[o.a.index];
      const auto& V = p.regs[o.d.index];
      const bool scan = o.kind == op_kind::scan_rows;
      if (scan ? (V.rows == S.rows && V.cols == S.cols) : (V.rows == 1 && V.cols == S.cols)) continue;
      if (diagnostic* d = emit_op(c, rule_id::representation_broadcast, id)) {
        if (scan) d->message << "row_scan of ";
        else d->message << "col_" << to_string(static_cast<reduce_kind>(o.imm[0])) << " of ";
        detail::write_reg(d->message, p, o.a.index);
        if (scan) d->message << " writes a tile of its shape, " << S.rows << "x" << S.cols;
        else d->message << " gives one value per column, a 1x" << S.cols << " vector";
        d->message << "; the destination ";
        detail::write_reg(d->message, p, o.d.index);
        d->message << " is not";
        d->num("src_rows", S.rows).num("src_cols", S.cols).num("dst_rows", V.rows).num("dst_cols", V.cols);
        d->add_note(V.loc) << "'" << V.nm.view() << "' declared here";
        if (scan) d->help << "declare '" << V.nm.view() << "' as r.fragment<...>(\"" << V.nm.view() << "\", {" << S.rows << ", " << S.cols << "})";
        else d->help << "declare '" << V.nm.view() << "' as r.col_vector<...>(\"" << V.nm.view() << "\", " << S.cols << ")";
      }
      continue;
    }
    // fetch_add: the old values and the index vector are row vectors of the same rows.
    if (o.kind == op_kind::fetch_add && o.d.kind == operand_kind::reg && o.b.kind == operand_kind::reg) {
      const auto& V = p.regs[o.d.index];
      const auto& I = p.regs[o.b.index];
      if (V.rows == I.rows && V.cols == 1 && I.cols == 1) continue;
      if (diagnostic* d = emit_op(c, rule_id::representation_broadcast, id)) {
        d->message << "fetch_add gives row i of ";
        detail::write_reg(d->message, p, o.d.index);
        d->message << " the old count at row index[i] of ";
        detail::write_reg(d->message, p, o.b.index);
        d->message << ": both must be row vectors of the same rows";
        d->num("old_rows", V.rows).num("old_cols", V.cols).num("index_rows", I.rows).num("index_cols", I.cols);
        d->add_note(V.loc) << "'" << V.nm.view() << "' declared here";
        d->help << "declare both r.row_vector<i32>(name, " << I.rows << ")";
      }
      continue;
    }
    if ((o.kind == op_kind::scatter_add || o.kind == op_kind::scatter_store) && o.a.kind == operand_kind::reg && o.b.kind == operand_kind::reg) {
      const auto& S = p.regs[o.a.index];
      const auto& V = p.regs[o.b.index];
      if (V.rows == S.rows && V.cols == 1) continue;
      if (diagnostic* d = emit_op(c, rule_id::representation_broadcast, id)) {
        d->message << to_string(o.kind) << (o.kind == op_kind::scatter_add ? " adds" : " stores") << " row i of ";
        detail::write_reg(d->message, p, o.a.index);
        d->message << " at row index[i]: the index vector ";
        detail::write_reg(d->message, p, o.b.index);
        d->message << " must be " << S.rows << "x1";
        d->num("src_rows", S.rows).num("index_rows", V.rows).num("index_cols", V.cols);
        d->add_note(V.loc) << "'" << V.nm.view() << "' declared here";
        d->help << "declare the index vector r.row_vector<i32>(\"" << V.nm.view() << "\", " << S.rows << ")";
      }
    }
  }
}

constexpr void check_compute_dtype(context& c) {
  const program& p = c.p;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const dtype_problem q = compute_dtype_problem(p, static_cast<int>(i));
    if (q.reg < 0) continue;
    const auto& g = p.regs[q.reg];
    if (diagnostic* d = emit_op(c, rule_id::representation_compute_dtype, static_cast<int>(i))) {
      d->message << to_string(p.ops[i].kind) << " on ";
      detail::write_reg(d->message, p, q.reg);
      d->message << ": " << q.why;
      d->num("dtype_bits", size_bits(g.dt)).num("rows", g.rows).num("cols", g.cols);
      d->add_note(g.loc) << "'" << g.nm.view() << "' declared " << to_string(g.dt) << " here";
      d->help << q.help;
    }
  }
}

// The first conflict the fragment plan recorded. A shape that does not broadcast is
// representation.broadcast's finding; what is reported here is two valid shapes whose layouts differ.
constexpr void check_layout_conflict(context& c) {
  const program& p = c.p;
  const auto& F = c.plan.frags;
  if (F.conflict_op == -1 || F.conflict_a < 0 || F.conflict_a >= static_cast<int>(p.regs.size())) return;
  for (const auto& d : c.out.diagnostics)
    if (d.rule == rule_id::representation_broadcast && d.op == F.conflict_op) return;
  const int a = F.conflict_a, b = F.conflict_b;
  const auto& A = p.regs[a];
  if (F.conflict_op == -2) {
    // An accumulator layout that does not fit its unit comes from an MMA, ldmatrix or tmem_load whose own
    // rules report the shape or the unit (instruction.mma-shape, instruction.wgmma-unit, ...): only the
    // layout the plan chose by itself, blocked, is this rule's, unless no error was reported before this
    // pass (the lowering refuses every conflict of the plan, so a clean check must not leave one; the
    // builder fuzzer found an ldmatrix into a warpgroup's tile that no rule reported).
    const bool blocked = F.conflict_frame_a.kind == plan::frag_kind::blocked;
    bool reported = !p.errors.empty() || c.out.diagnostics_dropped > 0;
    for (const auto& d : c.out.diagnostics) reported = reported || d.sev() == severity::error;
    if (!blocked && reported) return;
    if (diagnostic* d = emit_decl(c, rule_id::representation_layout_conflict, A.loc, A.role)) {
      d->message << "register tile ";
      detail::write_reg(d->message, p, a);
      d->message << " held by each " << (A.scope == role_unit::warpgroup ? "warpgroup (128 threads)" : "warp (32 threads)") << " in the ";
      detail::write_frame(d->message, F.conflict_frame_a);
      d->message << ": " << F.conflict_why;
      const int threads = plan::unit_threads(A);
      d->num("rows", A.rows).num("cols", A.cols).num("threads", threads);
      // The blocked layout spreads a row over t threads, t the fewest that let the unit cover the rows in
      // whole passes (plan::blocked_frame): the columns must fill t vectors, the rows whole passes.
      int t = 1;
      while (t < threads && threads / t > A.rows) t *= 2;
      const int vec = F.conflict_frame_a.vec > 0 ? F.conflict_frame_a.vec : 1;
      if (blocked)
        d->help << "with " << A.rows << " rows a row is spread over " << t << " threads: use a multiple of " << t * vec << " columns and of "
                << threads / t << " rows, or hold the rows in " << (A.scope == role_unit::warpgroup ? "warp units" : "fewer threads");
      else
        d->help << "the op that gives the tile this layout fixes its shape per unit: declare the tile in a role of that op's unit (warps(n) for "
                   "mma.sync and ldmatrix, warpgroups(n) for wgmma and tmem_load) with that op's shape";
    }
    return;
  }
  if (F.conflict_op < 0 || F.conflict_op >= static_cast<int>(p.ops.size())) return;
  if (diagnostic* d = emit_op(c, rule_id::representation_layout_conflict, F.conflict_op)) {
    auto has = [&](const plan::frame& f) {
      d->message << (f.kind == plan::frag_kind::none ? " has " : " has the ");
      detail::write_frame(d->message, f);
    };
    d->message << to_string(p.ops[F.conflict_op].kind) << ": ";
    detail::write_reg(d->message, p, a);
    has(F.conflict_frame_a);
    if (b >= 0 && b < static_cast<int>(p.regs.size())) {
      d->message << ", ";
      detail::write_reg(d->message, p, b);
      has(F.conflict_frame_b);
      d->add_note(p.regs[b].loc) << "'" << p.regs[b].nm.view() << "' declared here";
    } else {
      d->message << ", this op gives it the ";
      detail::write_frame(d->message, F.conflict_frame_b);
    }
    // The plan's "do not broadcast" is about layouts here: the shapes passed representation.broadcast.
    const bool one_unset = F.conflict_frame_a.kind == plan::frag_kind::none || F.conflict_frame_b.kind == plan::frag_kind::none;
    if (one_unset && b >= 0) d->message << " (no layout of that kind over the other tile's shape keeps the vector's slots and splits over its unit)";
    else d->message << " (" << F.conflict_why << ')';
    d->num("rows", A.rows).num("cols", A.cols);
    if (b >= 0 && b < static_cast<int>(p.regs.size())) d->num("other_rows", p.regs[b].rows).num("other_cols", p.regs[b].cols);
    d->add_note(A.loc) << "'" << A.nm.view() << "' declared here";
    d->help << "combine tiles whose layouts come from the same kind of op (one MMA, one tmem_load, or plain loads), or move the data through shared memory";
  }
}

// Row top-k (topk_init, topk_rows, topk_store): the state is an r.topk(...) of k in 1..256 (a merge's
// cost and the lists' smem grow with k; the smem is derived and resource.smem-overflow reports what does
// not fit); a fold's source has the state's rows; its index tile is i32 of the source's shape.
inline constexpr int topk_max_k = 256;
constexpr void check_topk(context& c) {
  const program& p = c.p;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.kind != op_kind::topk_init && o.kind != op_kind::topk_rows && o.kind != op_kind::topk_store) continue;
    const operand& st = o.kind == op_kind::topk_store ? o.a : o.d;
    if (st.kind != operand_kind::reg || st.index >= p.regs.size()) continue;
    const auto& S = p.regs[st.index];
    diagnostic* d = nullptr;
    if (S.topk == 0) {
      if ((d = emit_op(c, rule_id::representation_topk, static_cast<int>(i)))) {
        d->message << to_string(o.kind) << " on ";
        detail::write_reg(d->message, p, st.index);
        d->message << ", which is not a top-k state";
        d->num("rows", S.rows).num("cols", S.cols);
        d->add_note(S.loc) << "'" << S.nm.view() << "' declared here";
        d->help << "declare the state with r.topk(\"" << S.nm.view() << "\", rows, k) (or r.topk_largest)";
      }
      continue;
    }
    if (S.topk < 1 || S.topk > topk_max_k) {
      if ((d = emit_op(c, rule_id::representation_topk, static_cast<int>(i)))) {
        d->message << "top-k state ";
        detail::write_reg(d->message, p, st.index);
        d->message << " keeps k = " << (S.topk < 0 ? 0 : S.topk) << " values per row: k must be 1.." << topk_max_k;
        d->num("k", S.topk < 0 ? 0 : S.topk).num("max_k", topk_max_k);
        d->add_note(S.loc) << "'" << S.nm.view() << "' declared here";
        d->help << "ask for 1.." << topk_max_k << " values per row; a larger k is a sort, not a top-k";
      }
      continue;
    }
    if (o.kind != op_kind::topk_rows || o.a.kind != operand_kind::reg || o.a.index >= p.regs.size()) continue;
    const auto& A = p.regs[o.a.index];
    if (A.rows != S.rows) {
      if ((d = emit_op(c, rule_id::representation_topk, static_cast<int>(i)))) {
        d->message << "row_topk of ";
        detail::write_reg(d->message, p, o.a.index);
        d->message << " (" << A.rows << " rows) into ";
        detail::write_reg(d->message, p, st.index);
        d->message << " (" << S.rows << " rows): a fold adds one candidate row per row of the state";
        d->num("src_rows", A.rows).num("state_rows", S.rows);
        d->add_note(S.loc) << "'" << S.nm.view() << "' declared here";
        d->help << "declare the state with the source's " << A.rows << " rows";
      }
      continue;
    }
    if (o.b.kind == operand_kind::reg && o.b.index < p.regs.size()) {
      const auto& B = p.regs[o.b.index];
      if (B.dt != dtype::i32 || B.rows != A.rows || B.cols != A.cols) {
        if ((d = emit_op(c, rule_id::representation_topk, static_cast<int>(i)))) {
          d->message << "row_topk's index tile ";
          detail::write_reg(d->message, p, o.b.index);
          d->message << ": a fold takes one i32 index per element of its " << A.rows << "x" << A.cols << " source";
          d->num("index_rows", B.rows).num("index_cols", B.cols).num("src_rows", A.rows).num("src_cols", A.cols);
          d->add_note(B.loc) << "'" << B.nm.view() << "' declared here";
          d->help << "declare it r.fragment<i32>(\"" << B.nm.view() << "\", {" << A.rows << ", " << A.cols << "})";
        }
      }
    }
  }
}

namespace detail {
// Whether op `op_id` reads `x` as the column block of its own CTA after a cluster_sum_scatter over `S`
// CTAs: x is the part .cols(q, S), and an r.when around the op compares cluster_rank() with that q
// (eq(r.cluster_rank(), q), either side).
constexpr bool reads_own_block(const program& p, int op_id, const operand& x, int S) {
  if (x.part != part_axis::cols || x.parts != S) return false;
  for (int a = p.ops[op_id].parent; a >= 0; a = p.ops[a].parent) {
    const op& w = p.ops[a];
    if (w.kind != op_kind::when) continue;
    for (int e = w.imm[0]; e < w.imm[0] + w.imm[1] && e < static_cast<int>(p.exprs.size()); ++e) {
      const expr_node& n = p.exprs[e];
      if (n.fn != math_fn::eq || n.kid[0] < 0 || n.kid[1] < 0) continue;
      const expr_node& l = p.exprs[n.kid[0]];
      const expr_node& r = p.exprs[n.kid[1]];
      if (l.fn != math_fn::index || r.fn != math_fn::index) continue;
      if ((l.ix.uses(var_kind::cluster_rank) && r.ix == x.part_index) || (r.ix.uses(var_kind::cluster_rank) && l.ix == x.part_index)) return true;
    }
  }
  return false;
}
}  // namespace detail

// dataflow.cluster-scatter-read: after r.cluster_sum_scatter(t), CTA q of a cluster of S holds the sum
// only in column block q of S of t; the other blocks keep its own partial values. Element-wise ops
// (r.set, convert, r.scale) carry that state to the tiles they write; any other read of such a tile must
// be its part .cols(q, S) under an r.when that compares cluster_rank() with q. An op that writes the
// tile without reading it (fill, load, an overwriting MMA) ends the state. Program order within the
// role: a read in a later trip of a loop, before the scatter in program order, is not seen.
constexpr void check_cluster_scatter_reads(context& c) {
  const program& p = c.p;
  const int S = p.launch.cluster_size();
  const int n = static_cast<int>(p.ops.size());
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    if (o.kind != op_kind::cluster_reduce || !o.has(flag_scatter) || o.d.kind != operand_kind::reg || o.d.index >= p.regs.size()) continue;
    bool partial[capacity::regs]{};
    partial[o.d.index] = true;
    for (int j = i + 1; j < n; ++j) {
      const op& q = p.ops[j];
      if (q.role != o.role) continue;
      const bool elementwise = q.kind == op_kind::elementwise || q.kind == op_kind::convert;
      bool reads_partial = false;
      int bad = -1;
      operand bad_x{};
      p.reg_reads(j, [&](const operand& x) {
        if (x.index >= p.regs.size() || !partial[x.index]) return;
        reads_partial = true;
        if (!elementwise && bad < 0 && !detail::reads_own_block(p, j, x, S)) bad = x.index, bad_x = x;
      });
      if (bad >= 0) {
        if (diagnostic* d = emit_op(c, rule_id::dataflow_cluster_scatter_read, j)) {
          d->message << to_string(q.kind) << " reads ";
          detail::write_reg(d->message, p, bad);
          if (bad_x.part == part_axis::cols) d->message << " (column block of " << static_cast<int>(bad_x.parts) << ")";
          else if (bad_x.part == part_axis::rows) d->message << " (a row part)";
          else d->message << " whole";
          d->message << ", which after the cluster_sum_scatter of '" << p.regs[o.d.index].nm.view() << "' (op#" << i << ") holds the cluster's sum only in"
                     << " column block cluster_rank() of " << S << "; its other columns are this CTA's partial sums";
          d->num("cluster_size", S).num("scatter_op", i).num("parts", bad_x.part == part_axis::cols ? bad_x.parts : 0);
          d->add_note(o.loc) << "op#" << i << " cluster_sum_scatter of '" << p.regs[o.d.index].nm.view() << "'";
          d->help << "read only the CTA's own block: r.for_range(" << S << ", [&](auto q) { r.when(eq(r.cluster_rank(), q), [&] { ... "
                  << p.regs[bad].nm.view() << ".cols(q, " << S << ") ... }); }), or use cluster_sum (every CTA gets the whole sum)";
        }
      }
      const bool overwrites = q.kind == op_kind::fill || (q.kind == op_kind::load_global && !q.has(flag_accumulate)) || q.kind == op_kind::load_shared ||
                              ((q.kind == op_kind::wgmma || q.kind == op_kind::mma_sync) && q.has(flag_overwrite)) || (elementwise && !reads_partial);
      p.reg_writes(j, [&](const operand& x) {
        if (x.index >= p.regs.size() || x.part != part_axis::none) return;
        if (elementwise && reads_partial) partial[x.index] = true;
        else if (overwrites) partial[x.index] = false;
      });
    }
  }
}

constexpr void check_compute_representation(context& c) {
  check_topk(c);
  check_broadcast(c);
  check_compute_dtype(c);
  check_layout_conflict(c);
  check_cluster_scatter_reads(c);
}

}  // namespace cake::analysis
