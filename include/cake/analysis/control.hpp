#pragma once
// Control flow, statically (sync pass):
//
// sync.cluster-sum-divergent (error). A cluster_sum is a rendezvous of every CTA of the cluster: each
// CTA arrives on every CTA's derived 'ready' barrier and waits for all of them (plan/barriers.hpp).
// The protocol checker runs the CTAs of a cluster in step, as rank 0, so it cannot see a CTA skip one.
// Here: a cluster_sum under r.when(cond) whose condition uses something that differs between the CTAs
// of a cluster (the cluster rank, the CTA index, the coordinate along the first parallel axis, which
// the cluster's CTAs split, or a loop counter that starts from one of those), or inside a dynamic loop
// whose trip count may differ between them (its bounds use those, and their difference does not cancel
// them out), is reached a different number of times by different CTAs: a hang. A cluster_sum in a kernel
// without a cluster is instruction.multicast-without-cluster (the builder's id, re-checked in
// instruction.hpp). Divergence between the units of one CTA (a condition on the warpgroup) is the
// protocol checker's: it runs every unit.
//
// ir.control-sanity (warning). A dynamic loop whose bound never exceeds its start for any value of the
// indices it uses (each index ranges over what it can take: a unit index over the role's units, the
// cluster rank over the cluster, a split axis over its slices, a loop counter over its loop's range,
// dims and tile coordinates from 0 up) runs for no point; a min() whose two sides are the same
// expression says one thing twice (usually a copy that should have named another bound); a when whose
// condition is a constant always or never runs its body: `r.cluster_rank() == 0` compares the two index
// expressions while the schedule is built (C++ ==) and records the constant false, where eq(a, b)
// records the comparison. Trip counts that differ between roles (a deadlock) are the protocol checker's;
// a step below 1 is refused by the builder (ir.loop-bound) and by the structure check (ir.malformed).
#include "context.hpp"

namespace cake::analysis {

namespace detail {

// ---- index expressions as the schedule wrote them (a constexpr form of ir/printer.hpp's) ----------
template <class Text>
constexpr void write_var(Text& t, const program& p, const index_term& v) {
  switch (v.kind) {
    case var_kind::tile_coord:
      if (v.ref < p.space.count && p.space.axes[v.ref].kind == axis_kind::split) t << "split";
      else if (v.ref < p.space.count && p.space.axes[v.ref].dim < p.dims.size())
        t << (p.space.axes[v.ref].kind == axis_kind::tiles ? "tile." : "") << p.dims[p.space.axes[v.ref].dim].nm.view();
      else t << "axis" << static_cast<int>(v.ref);
      break;
    case var_kind::loop: t << (v.ref < p.ops.size() && p.ops[v.ref].has(flag_static_trip) ? "i" : "k") << static_cast<int>(v.ref); break;
    case var_kind::warpgroup: t << "wg"; break;
    case var_kind::warp: t << "warp"; break;
    case var_kind::cluster_rank: t << "rank"; break;
    case var_kind::cta: t << "cta"; break;
    case var_kind::dim: t << (v.ref < p.dims.size() ? p.dims[v.ref].nm.view() : std::string_view{"dim?"}); break;
    case var_kind::elem_row: t << "row"; break;
    case var_kind::elem_col: t << "col"; break;
    case var_kind::value: t << 'v' << static_cast<int>(v.ref); break;
    case var_kind::walk_step: t << "walk_step"; break;
    case var_kind::walk_steps: t << "walk_steps"; break;
    case var_kind::walk_part: t << "walk_part"; break;
    case var_kind::walk_parts: t << "walk_parts"; break;
    case var_kind::part_begin: t << "part_begin"; break;
    case var_kind::part_end: t << "part_end"; break;
    case var_kind::tail_unit: t << "tail_unit"; break;
    default: t << '?';
  }
}
template <class Text>
constexpr void write_index(Text& t, const program& p, const index_expr& e) {
  const bool wrap = e.div != 1 || e.mod != 0;
  if (wrap) t << '(';
  bool any = false;
  for (int i = 0; i < e.term_count; ++i) {
    const auto& v = e.terms[i];
    if (v.coef == 0) continue;
    if (any) t << (v.coef < 0 ? " - " : " + ");
    else if (v.coef < 0) t << '-';
    any = true;
    const int c = v.coef < 0 ? -v.coef : v.coef;
    if (c != 1) t << c << '*';
    if (!v.plain()) t << '(';
    write_var(t, p, v);
    if (v.div != 1) t << " / " << static_cast<int>(v.div);
    if (v.mod != 0) t << " % " << static_cast<int>(v.mod);
    if (!v.plain()) t << ')';
  }
  if (e.constant != 0 || !any) {
    if (!any) t << e.constant;
    else t << (e.constant < 0 ? " - " : " + ") << (e.constant < 0 ? -static_cast<long long>(e.constant) : static_cast<long long>(e.constant));
  }
  if (wrap) t << ')';
  if (e.div != 1) t << " / " << static_cast<int>(e.div);
  if (e.mod != 0) t << " % " << static_cast<int>(e.mod);
}

// ---- values that differ between the CTAs of a cluster ----------------------------------------------
constexpr bool loop_start_varies(const program& p, int loop_op, int depth);
constexpr bool value_varies(const program& p, int value_op, int depth);
constexpr bool var_varies(const program& p, const index_term& v, int depth = 0) {
  if (p.launch.cluster_size() < 2) return false;
  switch (v.kind) {
    case var_kind::cluster_rank:
    case var_kind::cta: return true;
    case var_kind::tile_coord: return v.ref == 0;  // the cluster's CTAs take consecutive points along axis 0
    case var_kind::loop: return loop_start_varies(p, v.ref, depth + 1);
    case var_kind::value: return value_varies(p, v.ref, depth + 1);
    default: return false;
  }
}
constexpr bool expr_varies(const program& p, const index_expr& e, int depth = 0) {
  for (int i = 0; i < e.term_count; ++i)
    if (e.terms[i].coef != 0 && var_varies(p, e.terms[i], depth)) return true;
  return false;
}
constexpr bool loop_start_varies(const program& p, int loop_op, int depth) {
  if (depth > 8 || loop_op < 0 || loop_op >= static_cast<int>(p.ops.size()) || !p.has_bound(loop_op)) return false;
  return expr_varies(p, p.loops[p.ops[loop_op].imm[1]].lo, depth);
}
// An index value differs between the CTAs of a cluster when what it reads at (or evaluates) does.
constexpr bool value_varies(const program& p, int value_op, int depth) {
  if (depth > 8 || value_op < 0 || value_op >= static_cast<int>(p.ops.size())) return false;
  const op& o = p.ops[value_op];
  if (o.kind == op_kind::let_index) return expr_varies(p, o.ix, depth) || (o.imm[0] == 1 && expr_varies(p, o.d.stage, depth));
  if (o.kind == op_kind::count_arrival) return true;  // the order of arrival differs from CTA to CTA
  if (o.kind != op_kind::read_index || o.a.kind != operand_kind::global || o.a.index >= p.tile_refs.size()) return false;
  const auto& ref = p.tile_refs[o.a.index];
  for (int i = 0; i < ref.rank && i < dim_list::max_rank; ++i)
    if (expr_varies(p, ref.coords[i], depth)) return true;
  return false;
}
// Can the trip count of dynamic loop `loop_op` differ between the CTAs of a cluster? Uniform when each
// bound minus the start cancels whatever varies (loop(rank, rank + 4) runs 4 trips everywhere).
constexpr bool trips_vary(const program& p, int loop_op) {
  if (!p.has_bound(loop_op)) return false;
  const loop_bound& b = p.loops[p.ops[loop_op].imm[1]];
  auto side = [&](const index_expr& hi) {
    const index_expr diff = hi - b.lo;
    if (diff.valid) return expr_varies(p, diff);
    return expr_varies(p, hi) || expr_varies(p, b.lo);
  };
  return side(b.hi) || (b.has_hi2 && side(b.hi2));
}
// Which varying thing an expression uses, in words.
constexpr std::string_view what_varies(const program& p, const index_expr& e) {
  for (int i = 0; i < e.term_count; ++i) {
    const auto& v = e.terms[i];
    if (v.coef == 0 || !var_varies(p, v)) continue;
    switch (v.kind) {
      case var_kind::cluster_rank: return "the CTA's rank in its cluster";
      case var_kind::cta: return "the CTA's index in the grid";
      case var_kind::tile_coord: return "the coordinate along the first parallel axis, which the cluster's CTAs split";
      default: return "a loop counter whose start differs between the cluster's CTAs";
    }
  }
  return "something that differs between the cluster's CTAs";
}

// ---- ranges of index expressions ------------------------------------------------------------------
inline constexpr long long big = 1LL << 40;  // "unbounded": far beyond any extent, small enough not to overflow
struct range {
  long long lo = 0, hi = 0;
};
constexpr long long clamp_big(long long v) { return v > big ? big : v < -big ? -big : v; }
constexpr range range_of_expr(const program& p, const index_expr& e, int role, int depth);
constexpr range range_of_var(const program& p, const index_term& v, int role, int depth) {
  // (indices, not a pointer compared with nullptr: g++ 12 refuses that in constant evaluation)
  const bool has_role = role >= 0 && role < static_cast<int>(p.roles.size());
  const int units = has_role ? p.roles[role].count : 1;
  const bool wg = has_role && p.roles[role].unit == role_unit::warpgroup;
  switch (v.kind) {
    case var_kind::tile_coord:
      if (v.ref < p.space.count && p.space.axes[v.ref].kind == axis_kind::split) return {0, p.space.axes[v.ref].extent - 1};
      return {0, big};
    case var_kind::warpgroup: return {0, wg ? units - 1 : (units - 1) / 4};
    case var_kind::warp: return {0, wg ? 4 * units - 1 : units - 1};
    case var_kind::cluster_rank: return {0, p.launch.cluster_size() - 1};
    case var_kind::loop: {
      if (v.ref >= p.ops.size() || depth > 8) return {-big, big};
      const op& l = p.ops[v.ref];
      if (l.has(flag_static_trip)) return {0, l.imm[1] - 1};
      if (!p.has_bound(v.ref)) return {-big, big};
      const loop_bound& b = p.loops[l.imm[1]];
      const range lo = range_of_expr(p, b.lo, role, depth + 1);
      range hi = range_of_expr(p, b.hi, role, depth + 1);
      if (b.has_hi2) {
        const range h2 = range_of_expr(p, b.hi2, role, depth + 1);
        hi = {hi.lo < h2.lo ? hi.lo : h2.lo, hi.hi < h2.hi ? hi.hi : h2.hi};
      }
      return {lo.lo, hi.hi >= big ? big : (hi.hi - 1 > lo.lo ? hi.hi - 1 : lo.lo)};
    }
    case var_kind::dim:
    case var_kind::cta: return {0, big};
    case var_kind::value: return {-big, big};  // run-time data (i32, signed)
    case var_kind::walk_step: return {0, big};
    case var_kind::walk_steps: return {1, big};
    case var_kind::walk_parts: return {1, big};
    case var_kind::walk_part:
    case var_kind::part_begin:
    case var_kind::part_end:
    case var_kind::tail_unit: return {0, big};
    default: return {0, 0};
  }
}
constexpr range range_of_expr(const program& p, const index_expr& e, int role, int depth) {
  range s{e.constant, e.constant};
  for (int i = 0; i < e.term_count; ++i) {
    const auto& v = e.terms[i];
    range x = range_of_var(p, v, role, depth);
    if (v.div > 1) x = {x.lo / v.div, x.hi >= big ? big : x.hi / v.div};
    if (v.mod > 0) x = x.lo >= 0 ? range{x.lo, x.hi < v.mod ? x.hi : v.mod - 1} : range{-(v.mod - 1), v.mod - 1};
    const long long c = v.coef;
    const range y = c >= 0 ? range{clamp_big(x.lo * c), clamp_big(x.hi * c)} : range{clamp_big(x.hi * c), clamp_big(x.lo * c)};
    s = {clamp_big(s.lo + y.lo), clamp_big(s.hi + y.hi)};
  }
  if (e.div > 1) s = {s.lo / e.div, s.hi >= big ? big : s.hi / e.div};
  if (e.mod > 0) s = s.lo >= 0 ? range{s.lo, s.hi < e.mod ? s.hi : e.mod - 1} : range{-(e.mod - 1), e.mod - 1};
  return s;
}
// The largest value bound - start can take (the trip count is positive only when it is).
constexpr long long max_span(const program& p, const index_expr& hi, const index_expr& lo, int role) {
  const index_expr diff = hi - lo;
  if (diff.valid) return range_of_expr(p, diff, role, 0).hi;
  const range h = range_of_expr(p, hi, role, 0), l = range_of_expr(p, lo, role, 0);
  return h.hi >= big ? big : h.hi - l.lo;
}

}  // namespace detail

constexpr void check_loop_bounds(context& c) {
  const program& p = c.p;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const int id = static_cast<int>(i);
    if (!p.has_bound(id)) continue;
    const loop_bound& b = p.loops[p.ops[i].imm[1]];
    const int role = p.ops[i].role;
    if (b.has_hi2 && b.hi == b.hi2) {
      if (diagnostic* d = emit_op(c, rule_id::ir_control_sanity, id)) {
        d->message << "loop k" << id << " runs while k" << id << " < min(";
        detail::write_index(d->message, p, b.hi);
        d->message << ", ";
        detail::write_index(d->message, p, b.hi2);
        d->message << "): both sides are the same bound";
        d->help << "name the second bound (e.g. min(q + 1, tiles(T, 128))), or drop the min()";
      }
      continue;
    }
    const long long span = detail::max_span(p, b.hi, b.lo, role);
    const long long span2 = b.has_hi2 ? detail::max_span(p, b.hi2, b.lo, role) : detail::big;
    if (span > 0 && span2 > 0) continue;
    const index_expr& never = span <= 0 ? b.hi : b.hi2;
    if (diagnostic* d = emit_op(c, rule_id::ir_control_sanity, id)) {
      d->message << "loop k" << id << " starts at ";
      detail::write_index(d->message, p, b.lo);
      d->message << " and runs while below ";
      detail::write_index(d->message, p, never);
      d->message << ", which is at most " << (span <= 0 ? span : span2) << " above the start for every point: the loop never runs";
      d->num("max_trip_span", span <= 0 ? span : span2);
      d->help << "check the bound: a loop over a dim is r.loop(tiles(dim, block), ...) or r.loop(dim.extent() / n, ...)";
    }
  }
}

constexpr void check_constant_conditions(context& c) {
  const program& p = c.p;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.kind != op_kind::when) continue;
    bool constant = true;
    for (int e = o.imm[0]; e < o.imm[0] + o.imm[1]; ++e) {
      const math_fn f = p.exprs[e].fn;
      constant = constant && (f == math_fn::imm || info(f).arity > 0 || (f == math_fn::index && p.exprs[e].ix.is_constant()));
    }
    if (!constant) continue;
    const expr_node& root = p.exprs[o.imm[0] + o.imm[1] - 1];
    if (diagnostic* d = emit_op(c, rule_id::ir_control_sanity, static_cast<int>(i))) {
      d->message << "the condition of this when depends on nothing";
      if (root.fn == math_fn::imm) {
        const float v = __builtin_bit_cast(float, root.bits);
        d->message << ": it is the constant " << (v != 0 ? "true" : "false") << ", so the body " << (v != 0 ? "always" : "never") << " runs";
        d->num("constant", v != 0 ? 1 : 0);
      }
      d->help << "compare index expressions with eq(a, b) / ne(a, b) or <, <=, >, >=: a == b on two index expressions is C++ equality of the"
              << " expressions, decided when the schedule is built";
    }
  }
}

constexpr void check_cluster_sum_divergence(context& c) {
  const program& p = c.p;
  if (p.launch.cluster_size() < 2) return;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.kind != op_kind::cluster_reduce) continue;
    for (int a = o.parent; a >= 0; a = p.ops[a].parent) {
      const op& q = p.ops[a];
      int why_node = -1;
      if (q.kind == op_kind::when) {
        for (int e = q.imm[0]; e < q.imm[0] + q.imm[1] && why_node < 0; ++e)
          if (p.exprs[e].fn == math_fn::index && detail::expr_varies(p, p.exprs[e].ix)) why_node = e;
        if (why_node < 0) continue;
      } else if (!(q.kind == op_kind::loop && detail::trips_vary(p, a))) {
        continue;
      }
      if (diagnostic* d = emit_op(c, rule_id::sync_cluster_sum_divergent, static_cast<int>(i))) {
        const int n = p.launch.cluster_size();
        d->message << cluster_reduce_call(o) << " of '" << resource_name(p, o.d) << "' ";
        if (q.kind == op_kind::when) {
          d->message << "runs under r.when (op#" << a << ") whose condition uses " << detail::what_varies(p, p.exprs[why_node].ix)
                     << ": a CTA where it is false never arrives on the sum's 'ready' barrier, which every CTA of the cluster (" << n
                     << ") waits for";
          d->add_note(q.loc) << "op#" << a << " when(...): its condition uses " << detail::what_varies(p, p.exprs[why_node].ix);
          d->help << "run the " << cluster_reduce_call(o) << " in every CTA (outside the when) and put only what uses its result under the condition";
        } else {
          const loop_bound& b = p.loops[q.imm[1]];
          const index_expr& uses = detail::expr_varies(p, b.lo) ? b.lo : detail::expr_varies(p, b.hi) ? b.hi : b.hi2;
          d->message << "runs in loop k" << a << ", whose trip count can differ between the CTAs of the cluster (its bounds use "
                     << detail::what_varies(p, uses) << "): a CTA that runs it more often than the others waits for partners"
                     << " that never come (the sum waits for all " << n << " CTAs each time)";
          auto& nt = d->add_note(q.loc);
          nt << "loop k" << a << ": from ";
          detail::write_index(nt, p, b.lo);
          nt << " while below ";
          detail::write_index(nt, p, b.hi);
          if (b.has_hi2) {
            nt << " and ";
            detail::write_index(nt, p, b.hi2);
          }
          d->help << "sum after the loop (each CTA accumulates its own trips first), or give the loop the same trip count in every CTA";
        }
        d->num("cluster_size", n).num("control_op", a);
      }
      break;
    }
  }
}

constexpr void check_control(context& c) {
  check_loop_bounds(c);
  check_constant_conditions(c);
  check_cluster_sum_divergence(c);
}

}  // namespace cake::analysis
