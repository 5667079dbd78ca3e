#pragma once
// Before any pass (or the plan) reads a Program, its indices must be consistent: every operand points
// into its table, every op into a role, every loop body nests. The builder guarantees this; a Program
// edited or assembled by other means may not, and then reading it would go out of bounds. A failure
// here is reported as ir.malformed and no other pass runs.
#include "context.hpp"

namespace cake::analysis {

namespace detail {

struct malformed {
  int op = -1;
  std::string_view what{};
  long long value = 0;
  rule_id rule = rule_id::ir_malformed;
};

constexpr bool operand_ok(const program& p, const operand& o) {
  switch (o.kind) {
    case operand_kind::none: return true;
    case operand_kind::smem: return o.index < p.smem.size();
    case operand_kind::tmem: return o.index < p.tmem.size();
    case operand_kind::reg: return o.index < p.regs.size();
    case operand_kind::mbarrier: return o.index < p.mbarriers.size();
    case operand_kind::named_barrier: return o.index < p.named_barriers.size();
    case operand_kind::pipeline: return o.index < p.pipelines.size();
    case operand_kind::global: return o.index < p.tile_refs.size() && p.tile_refs[o.index].tensor < p.tensors.size();
    case operand_kind::tensor: return o.index < p.tensors.size();
    case operand_kind::scalar: return o.index < p.scalars.size();
  }
  return false;
}

// An index expression every reader can evaluate: valid, no division by zero, variables inside their tables.
constexpr bool expr_ok(const program& p, const index_expr& e) {
  bool ok = e.valid && e.div != 0 && e.mod >= 0 && e.term_count <= index_expr::max_terms;
  for (int t = 0; t < e.term_count && ok; ++t) {
    const index_term& v = e.terms[t];
    ok = v.div != 0 && v.mod >= 0;
    if (v.kind == var_kind::dim) ok = ok && v.ref < p.dims.size();
    if (v.kind == var_kind::tile_coord) ok = ok && v.ref < iteration_space::max_axes;
    if (v.kind == var_kind::loop) ok = ok && v.ref < p.ops.size() && p.ops[v.ref].kind == op_kind::loop;
    if (v.kind == var_kind::value)
      ok = ok && v.ref < p.ops.size() && (p.ops[v.ref].kind == op_kind::read_index || p.ops[v.ref].kind == op_kind::let_index ||
                                     p.ops[v.ref].kind == op_kind::count_arrival);
  }
  return ok;
}

constexpr malformed find_malformed(const program& p) {
  for (const auto& r : p.smem)
    if (r.stages < 1 || r.rows < 1 || r.cols < 1 || (r.pipeline != no_index && r.pipeline >= p.pipelines.size())) return {-1, "an smem region's shape, stages or pipeline", 0};
  for (const auto& t : p.tmem)
    if (t.stages < 1 || t.columns < 1 || t.lanes < 1) return {-1, "a TMEM region's shape or stages", 0};
  for (const auto& pl : p.pipelines) {
    if (pl.stages < 1 || pl.carried_count < 0 || pl.carried_count > 4) return {-1, "a pipeline's stages or carried regions", pl.stages};
    for (int i = 0; i < pl.carried_count; ++i)
      if (pl.carried_tmem[i] ? pl.carried[i] >= p.tmem.size() : pl.carried[i] >= p.smem.size()) return {-1, "a pipeline's carried region", i};
  }
  for (const auto& b : p.mbarriers)
    if (b.count < 1) return {-1, "an mbarrier array size", b.count};
  for (const auto& r : p.roles)
    if (r.count < 1) return {-1, "a role's unit count", r.count};
  for (const auto& g : p.regs)
    if (g.role >= p.roles.size()) return {-1, "a register tile's role", g.role};
  if (p.space.count < 0 || p.space.count > iteration_space::max_axes) return {-1, "the parallel space's axis count", p.space.count};
  for (int i = 0; i < p.space.count; ++i) {
    const auto& ax = p.space.axes[i];
    if ((ax.kind != axis_kind::split && ax.dim >= p.dims.size()) || ax.extent < 1) return {-1, "a parallel axis", i};
  }
  for (const auto& t : p.tensors)
    for (int d = 0; d < t.rank && d < dim_list::max_rank; ++d)
      if (t.dims[d] >= p.dims.size()) return {-1, "a tensor's dim", d};
  const int n = static_cast<int>(p.ops.size());
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    if (static_cast<int>(o.kind) >= op_kind_count) return {i, "the op kind", static_cast<int>(o.kind)};
    if (o.role >= p.roles.size()) return {i, "the op's role", o.role};
    if (o.parent >= i || o.parent < -1) return {i, "the op's enclosing loop", o.parent};
    if (o.parent >= 0) {
      const op& par = p.ops[o.parent];
      if (!p.is_control(par.kind) || par.end <= i || par.role != o.role) return {i, "the op's enclosing loop", o.parent};
    }
    if (p.is_control(o.kind) && (o.end <= i || o.end > n)) return {i, "the loop's end", o.end};
    if (o.kind == op_kind::elementwise || o.kind == op_kind::when || o.has(flag_expr_src)) {
      const int first = o.expr_first(), count = o.expr_count();
      if (first < 0 || count < 1 || first + count > static_cast<int>(p.exprs.size())) return {i, "the op's expression", first};
      for (int e = first; e < first + count; ++e) {
        const expr_node& x = p.exprs[e];
        if (static_cast<int>(x.fn) >= math_fn_count) return {i, "an expression node's function", e};
        for (int k = 0; k < info(x.fn).arity; ++k)
          if (x.kid[k] < first || x.kid[k] >= e) return {i, "an expression node's operand", e};
        if (x.fn == math_fn::tile && x.ref >= p.regs.size()) return {i, "an expression's register tile", x.ref};
        if (x.fn == math_fn::scalar && x.ref >= p.scalars.size()) return {i, "an expression's scalar", x.ref};
        if (x.fn == math_fn::index && !expr_ok(p, x.ix)) return {i, "an index in an expression", 0, rule_id::ir_index_expr};
      }
    }
    if (o.kind == op_kind::read_index && o.a.kind != operand_kind::global) return {i, "a read_index's tensor element", 0};
    if (o.kind == op_kind::count_arrival && (o.a.kind != operand_kind::global || (o.imm[0] < 1 && o.ix.is_constant()))) return {i, "a count_arrival's counter or count", o.imm[0]};
    if (o.kind == op_kind::let_index && !expr_ok(p, o.ix)) return {i, "a let_index expression", 0, rule_id::ir_index_expr};
    for (const operand* x : {&o.d, &o.a, &o.b})
      if (x->kind == operand_kind::global && x->index < p.tile_refs.size()) {
        const auto& ref = p.tile_refs[x->index];
        for (int k = 0; k < ref.rank && k < dim_list::max_rank; ++k)
          if (!expr_ok(p, ref.coords[k])) return {i, "a tile coordinate", k, rule_id::ir_index_expr};
        if (ref.has_limit() && (ref.limit_pos >= ref.rank || !expr_ok(p, ref.limit))) return {i, "a tile limit", ref.limit_pos, rule_id::ir_index_expr};
      }
    if (o.kind == op_kind::loop && !o.has(flag_static_trip)) {
      if (!p.has_bound(i)) return {i, "the loop's bounds", o.imm[1]};
      const loop_bound& b = p.loops[o.imm[1]];
      if (b.step < 1) return {i, "the loop's step", b.step};
      for (const index_expr* e : {&b.lo, &b.hi, &b.hi2})
        if (!expr_ok(p, *e)) return {i, "a loop bound", 0, rule_id::ir_index_expr};
    }
    for (const operand* x : {&o.d, &o.a, &o.b}) {
      if (!operand_ok(p, *x)) return {i, "an operand's resource index", x->index};
      if (x->sel == stage_sel::slot) {
        if (x->slot_op >= n) return {i, "a slot's op", x->slot_op};
        const op_kind k = p.ops[x->slot_op].kind;
        if (k != op_kind::pipeline_acquire && k != op_kind::pipeline_wait && k != op_kind::pipeline_held) return {i, "a slot's op", x->slot_op};
      }
      if (x->part != part_axis::none && x->parts < 1) return {i, "an operand's part count", x->parts};
      for (const index_expr* e : {&x->stage, &x->part_index})
        if (!expr_ok(p, *e)) return {i, "a stage or part index expression", 0, rule_id::ir_index_expr};
    }
    const bool pipe_op = o.kind == op_kind::pipeline_acquire || o.kind == op_kind::pipeline_wait || o.kind == op_kind::pipeline_held || o.kind == op_kind::pipeline_release ||
                         o.kind == op_kind::pipeline_commit || o.kind == op_kind::pipeline_flush;
    if (pipe_op && o.d.kind != operand_kind::pipeline) return {i, "a pipeline op's pipeline", 0};
    if ((o.kind == op_kind::pipeline_release || o.kind == op_kind::pipeline_commit) && o.a.sel != stage_sel::slot) return {i, "a release's slot", 0};
    const bool bar_op = o.kind == op_kind::mbarrier_init || o.kind == op_kind::mbarrier_arrive || o.kind == op_kind::mbarrier_expect_tx ||
                        o.kind == op_kind::mbarrier_arrive_expect_tx || o.kind == op_kind::mbarrier_wait || o.kind == op_kind::tcgen05_commit;
    if (bar_op && o.d.kind != operand_kind::mbarrier) return {i, "a barrier op's barrier", 0};
    if ((o.kind == op_kind::named_barrier_sync || o.kind == op_kind::named_barrier_arrive || o.kind == op_kind::turn_take || o.kind == op_kind::turn_pass) &&
        o.d.kind != operand_kind::named_barrier)
      return {i, "a named-barrier op's barrier", 0};
    if (is_mma(o.kind) && (o.d.kind == operand_kind::none || o.a.kind == operand_kind::none || o.b.kind == operand_kind::none))
      return {i, "an MMA's operands", 0};
    if (plan::is_tma_move(o.kind) && (plan::tma_smem_side(o).kind != operand_kind::smem || plan::tma_global_side(o).kind != operand_kind::global))
      return {i, "a TMA op's operands", 0};
  }
  return {-2};
}

}  // namespace detail

// True when the Program can be analyzed; otherwise reports ir.malformed.
constexpr bool check_structure(context& c) {
  const auto m = detail::find_malformed(c.p);
  if (m.op == -2) return true;
  diagnostic* d = m.op >= 0 ? emit(c, m.rule, m.op, c.p.ops[m.op].loc, false) : emit_decl(c, m.rule, c.p.loc);
  if (d) {
    if (m.op >= 0) d->path << c.p.kernel_name.view() << " \u203a op#" << m.op;
    if (m.rule == rule_id::ir_index_expr) {
      d->message << m.what << " cannot be represented as ((c + sum coef*var) / div) % mod; no other check ran";
      d->help << "divide or reduce a single loop variable (kt / 2, kt % 2), or a whole sum once";
    } else {
      d->message << "the Program is inconsistent: " << m.what << " (value " << m.value << ") points outside its table; no other check ran";
      d->num("value", m.value);
      d->help << "build the Program with cake::kernel(...) and its builders, or fix the edit that produced it";
    }
  }
  return false;
}

}  // namespace cake::analysis
