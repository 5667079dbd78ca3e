#pragma once
// Index values (sync pass): variables of index expressions defined by an op, r.read_index(T.at(...)) (an
// i32 read from a tensor) or r.let_index(e) (an expression evaluated once). Lowering declares each as a
// C++ variable at its op, so it exists after the op, in the op's role, inside the body that holds it.
//
// ir.index-value (error). An index value used where it is not defined: by an op of another role, by an
// op before it, or outside the loop / when / walk body that holds its op (each would be a C++ name out of
// scope, or worse a value from another point); as a bound of a dynamic loop directly inside an
// alternating walk (a unit that skips the point counts that loop's trips before the body, where the
// value does not exist yet); or read from a tensor that is not i32.
//
// ir.walk-index (error). r.walk_step() / r.walk_steps() (or a split tail's r.walk_part(), r.walk_parts(),
// r.part_begin(), r.part_end(), r.tail_unit()) used by an op that is not inside its role's walk (r.for_each):
// before or after the walk, or in a role that has none, the CTA has no step (and no point or part).
//
// ir.index-value-bound (warning). A dynamic loop whose trip count is negative where the tensors read
// hold non-decreasing values (the model: element c of a tensor read holds unit * (sum of c's
// coordinates), so cumulative offsets such as cu_seqlens[b + 1] - cu_seqlens[b] are positive), with the
// walk at its first point and enclosing loops at their starts: bounds written the wrong way round
// (cu[b] - cu[b + 1]). A start that reads no value counts as at most 0: a loop from a slice's second
// block (s + splits) below a short request's block count runs zero trips, which is no error. Not
// checked: the values themselves (run-time data; a cu_seqlens that decreases,
// or an offset past a tensor, is the caller's contract), and points other than the first.
#include "context.hpp"
#include "control.hpp"

namespace cake::analysis {

namespace detail {

// The unit of the analyzer's model of a tensor read: the largest block any loop or axis cuts a dim into
// (a length of one unit spans one block; the protocol executor multiplies it by its trip count).
constexpr long long value_model_block(const program& p) {
  long long block = 1;
  for (const auto& b : p.loops)
    if (b.block > block) block = b.block;
  for (int a = 0; a < p.space.count; ++a)
    if (p.space.axes[a].kind == axis_kind::tiles && p.space.axes[a].extent > block) block = p.space.axes[a].extent;
  return block;
}

constexpr bool defines_value(op_kind k) { return k == op_kind::read_index || k == op_kind::let_index || k == op_kind::count_arrival; }

// The model's value of the index value defined by op `def`: a read of T at c is unit * (c0 + c1 + ...),
// non-decreasing along every coordinate; a let is its expression. value_of gives every other variable.
template <class F>
constexpr long long model_value(const program& p, int def, long long unit, const F& value_of, int depth = 0) {
  if (def < 0 || def >= static_cast<int>(p.ops.size()) || depth > 8) return 0;
  const op& o = p.ops[def];
  auto inner = [&](const index_term& t) -> long long { return t.kind == var_kind::value ? model_value(p, t.ref, unit, value_of, depth + 1) : value_of(t); };
  if (o.kind == op_kind::let_index) {
    const long long a = o.ix.eval(inner);
    if (o.imm[0] != 1) return a;
    const long long b = o.d.stage.eval(inner);  // let_min
    return a < b ? a : b;
  }
  // A count_arrival is modelled as the last arrival (n - 1): its unit takes the path that combines.
  if (o.kind == op_kind::count_arrival) return (o.imm[0] > 0 ? o.imm[0] : o.ix.eval(inner)) - 1;
  if (o.kind != op_kind::read_index || o.a.kind != operand_kind::global || o.a.index >= p.tile_refs.size()) return 0;
  const auto& ref = p.tile_refs[o.a.index];
  long long s = 0;
  for (int i = 0; i < ref.rank && i < dim_list::max_rank; ++i) s += ref.coords[i].eval(inner);
  return unit * s;
}

// Every index expression an op reads (operands, tile coordinates and limits, loop bounds, expressions).
template <class F>
constexpr void for_each_index(const program& p, int id, const F& f) {
  const op& o = p.ops[id];
  f(o.ix);
  for (const operand* x : {&o.d, &o.a, &o.b}) {
    f(x->stage);
    f(x->part_index);
    if (x->kind == operand_kind::global && x->index < p.tile_refs.size()) {
      const auto& ref = p.tile_refs[x->index];
      for (int i = 0; i < ref.rank && i < dim_list::max_rank; ++i) f(ref.coords[i]);
      if (ref.has_limit()) f(ref.limit);
    }
  }
  if (p.has_bound(id)) {
    const loop_bound& b = p.loops[o.imm[1]];
    f(b.lo);
    f(b.hi);
    if (b.has_hi2) f(b.hi2);
  }
  const int first = o.expr_first(), count = o.expr_count();
  for (int e = first; e < first + count && e < static_cast<int>(p.exprs.size()); ++e)
    if (p.exprs[e].fn == math_fn::index) f(p.exprs[e].ix);
}

// Why the value defined by op `def` is not defined at op `use` ("" when it is).
constexpr std::string_view value_scope_error(const program& p, int def, int use) {
  const op& d = p.ops[def];
  const op& u = p.ops[use];
  if (d.role != u.role) return "it is defined in another role";
  if (def >= use) return "it is used before (or by) the op that defines it";
  if (d.parent >= 0 && (use <= d.parent || use >= p.ops[d.parent].end)) return "it is used outside the loop, when or walk body that holds its op";
  if (u.kind == op_kind::loop && u.parent >= 0 && p.ops[u.parent].kind == op_kind::tile_loop && p.ops[u.parent].has(flag_alternate) &&
      p.roles[u.role].count > 1)
    return "it bounds a loop directly inside an alternating walk, whose trips the units that skip the point count before the body defines it";
  return {};
}

}  // namespace detail

constexpr void check_index_values(context& c) {
  const program& p = c.p;
  const int n = static_cast<int>(p.ops.size());
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    if ((o.kind == op_kind::read_index || o.kind == op_kind::count_arrival) && o.a.kind == operand_kind::global) {
      const tensor_param& t = p.tensors[p.tile_refs[o.a.index].tensor];
      if (t.dt != dtype::i32)
        if (diagnostic* d = emit_op(c, rule_id::ir_index_value, i)) {
          d->message << to_string(o.kind) << " reads tensor '" << t.nm.view() << "' of dtype " << to_string(t.dt) << ": an index value is an i32 read";
          d->num("dtype", static_cast<int>(t.dt));
          d->help << "declare the offsets tensor as k.input<i32>(...) (FlashAttention's cu_seqlens and page tables are int32)";
        }
    }
    bool reported = false;
    detail::for_each_index(p, i, [&](const index_expr& e) {
      for (int k = 0; k < e.term_count && !reported; ++k) {
        const index_term& v = e.terms[k];
        if (v.kind != var_kind::value || v.coef == 0) continue;
        const std::string_view why = v.ref < n && detail::defines_value(p.ops[v.ref].kind) ? detail::value_scope_error(p, v.ref, i) : "no op defines it";
        if (why.empty()) continue;
        reported = true;
        if (diagnostic* d = emit_op(c, rule_id::ir_index_value, i)) {
          d->message << "index value v" << v.ref << " (op#" << v.ref << ") is used here, but " << why;
          d->num("value_op", v.ref);
          if (v.ref < n) d->add_note(p.ops[v.ref].loc) << "op#" << v.ref << " " << to_string(p.ops[v.ref].kind) << " defines v" << v.ref;
          d->help << "read (or let) the value in the same role, before its uses, at the level of the body that uses it"
                  << " (e.g. at the top of the for_each body)";
        }
      }
    });
  }
  // r.walk_step() / r.walk_steps(): the CTA's step in its walk and how many it takes exist inside the
  // role's walk only (lowering defines them in the walk's loop; before or after it, or in a role without a
  // walk, the generated code names a variable that does not exist: found by the builder fuzzer's NVRTC pass).
  for (int i = 0; i < n; ++i) {
    int walk = -1;
    for (int a = p.ops[i].parent; a >= 0 && a < n; a = p.ops[a].parent)
      if (p.ops[a].kind == op_kind::tile_loop) {
        walk = a;
        break;
      }
    if (walk >= 0) continue;
    // (the first of the walk's variables the op uses, as the schedule wrote it)
    std::string_view used{};
    detail::for_each_index(p, i, [&](const index_expr& e) {
      constexpr std::pair<var_kind, std::string_view> walk_vars[] = {
          {var_kind::walk_step, "walk_step()"}, {var_kind::walk_steps, "walk_steps()"}, {var_kind::walk_part, "walk_part()"}, {var_kind::walk_parts, "walk_parts()"},
          {var_kind::part_begin, "part_begin()"}, {var_kind::part_end, "part_end()"}, {var_kind::tail_unit, "tail_unit()"}};
      for (const auto& [k, nm] : walk_vars)
        if (used.empty() && e.uses(k)) used = nm;
    });
    if (used.empty()) continue;
    int role_walk = -1;  // the role's walk, if it has one (the fix's place)
    for (int j = 0; j < n && role_walk < 0; ++j)
      if (p.ops[j].kind == op_kind::tile_loop && p.ops[j].role == p.ops[i].role) role_walk = j;
    if (diagnostic* d = emit_op(c, rule_id::ir_walk_index, i)) {
      d->message << to_string(p.ops[i].kind) << " (op#" << i << ") uses r." << used << " outside the walk over the parallel space";
      if (role_walk >= 0) d->message << " (role '" << p.roles[p.ops[i].role].nm.view() << "' walks it at op#" << role_walk << ")";
      else d->message << " (role '" << p.roles[p.ops[i].role].nm.view() << "' has no walk)";
      d->message << ": the CTA's step in its walk exists only inside the walk";
      d->num("op", i).num("walk_op", role_walk);
      if (role_walk >= 0) d->add_note(p.ops[role_walk].loc) << "op#" << role_walk << " the role's walk (r.for_each)";
      d->help << "move the op into the body of r.for_each(...) (the first point: r.when(eq(r.walk_step(), 0), ...) inside it); "
                 "for a choice per CTA outside the walk use r.cta()";
    }
  }
  // Loop bounds under the model: every tensor read non-decreasing, the walk at its first point.
  const long long unit = detail::value_model_block(p);
  for (int i = 0; i < n; ++i) {
    if (!p.has_bound(i)) continue;
    const loop_bound& b = p.loops[p.ops[i].imm[1]];
    if (!(b.lo.uses(var_kind::value) || b.hi.uses(var_kind::value) || (b.has_hi2 && b.hi2.uses(var_kind::value)))) continue;
    auto base = [&](const index_term& t) -> long long {
      if (t.kind == var_kind::dim) return unit;
      if (t.kind == var_kind::loop && p.has_bound(t.ref)) return p.loops[p.ops[t.ref].imm[1]].lo.is_constant() ? p.loops[p.ops[t.ref].imm[1]].lo.constant : 0;
      return 0;
    };
    auto val = [&](const index_expr& e) { return e.eval([&](const index_term& t) { return t.kind == var_kind::value ? detail::model_value(p, t.ref, unit, base) : base(t); }); };
    // A start that reads no value (a slice's own first block plus its stride, say) may well lie past a
    // short range's end: zero trips, not reversed bounds. Only the value-dependent part is judged then.
    const long long lo0 = val(b.lo), lo = b.lo.uses(var_kind::value) || lo0 < 0 ? lo0 : 0;
    const long long hi = val(b.hi), hi2 = b.has_hi2 ? val(b.hi2) : hi;
    const long long span = (hi < hi2 ? hi : hi2) - lo;
    if (span >= 0) continue;
    if (diagnostic* d = emit_op(c, rule_id::ir_index_value_bound, i)) {
      const index_expr& neg = !b.has_hi2 || hi <= hi2 ? b.hi : b.hi2;
      d->message << "loop k" << i << " runs from ";
      detail::write_index(d->message, p, b.lo);
      d->message << " while below ";
      detail::write_index(d->message, p, neg);
      d->message << ": where the tensors it reads hold non-decreasing values (cumulative offsets, " << unit
                 << " apart per index in the model) and the walk is at its first point, that is " << span << " trips";
      d->num("model_span", span);
      d->help << "a length is end - start: read_index(T.at(b + 1)) - read_index(T.at(b)), not the other way round";
    }
  }
}

}  // namespace cake::analysis
