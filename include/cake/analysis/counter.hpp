#pragma once
// Arrival counters (sync pass): r.count_arrival(Count.at(...), n) steps a counter that the units leaving
// parts of one result share; the unit that sees n - 1 (the last) combines the parts the others wrote
// before they arrived.
//
// sync.counter-arrivals (error). Per launch, exactly n units must step each counter element: with fewer,
// no unit ever sees n - 1 (the result is never combined, and the counter is left short of 0 for the next
// launch); with more, a second round starts and its last unit combines parts that are not all written (or
// are the first round's). The units that step one element are those whose counter coordinates agree:
// every point of a parallel axis that no coordinate uses, every unit of the role if no coordinate uses the
// warpgroup (or warp) index (one unit per point in an alternating walk), every trip of an enclosing static
// loop that no coordinate uses (outside the walk: every CTA). Checked where those are constants (split(S)
// axes, units, static loops); an unused tiles/each axis (its extent is a run-time dim), a dynamic loop, or
// coordinates that are data (index values) are not checked (a coverage note).
// Units that skip the arrival under a when are counted as arriving (a coverage note when there is one).
//
// sync.counter-order (error). The arrival publishes what the arriving role wrote before it (the release at
// GPU scope; the last unit's acquire). So (a) a tensor the role writes before an arrival, in the same walk
// body, is read only under a when on that arrival's count (elsewhere, other units' parts may not be written
// yet), and (b) what is read under that when is written before the arrival (a write after it is not
// published to the last unit).
//
// Not checked: that the when's condition selects the last arrival (eq(before, n - 1)); where a part read
// under it was written by the other units (the coordinates of the reads against those of the writes).
#include "context.hpp"

namespace cake::analysis {

namespace detail {

// Does the expression use index value v (count_arrival op v)?
constexpr bool uses_value(const index_expr& e, int v) { return e.uses(var_kind::value, v); }

// Does the condition of `when` op w read count_arrival op v's value?
constexpr bool when_reads_value(const program& p, int w, int v) {
  const op& o = p.ops[w];
  for (int i = o.expr_first(); i < o.expr_first() + o.expr_count() && i < static_cast<int>(p.exprs.size()); ++i)
    if (p.exprs[i].fn == math_fn::index && uses_value(p.exprs[i].ix, v)) return true;
  return false;
}

// The when enclosing op `id` whose condition reads v, or -1.
constexpr int gate_of(const program& p, int id, int v) {
  for (int a = p.ops[id].parent; a >= 0; a = p.ops[a].parent)
    if (p.ops[a].kind == op_kind::when && a > v && when_reads_value(p, a, v)) return a;
  return -1;
}

// The innermost walk (tile_loop) around op `id`, or -1.
constexpr int walk_of(const program& p, int id) {
  for (int a = p.ops[id].parent; a >= 0; a = p.ops[a].parent)
    if (p.ops[a].kind == op_kind::tile_loop) return a;
  return -1;
}

// The global tensor an op writes with a plain or atomic store of a register tile (not a counter), or -1.
constexpr int written_tensor(const program& p, const op& o) {
  switch (o.kind) {
    case op_kind::store_global:
    case op_kind::atomic_add:
    case op_kind::scatter_add:
    case op_kind::scatter_store:
    case op_kind::tma_store: return o.d.kind == operand_kind::global && o.d.index < p.tile_refs.size() ? p.tile_refs[o.d.index].tensor : -1;
    default: return -1;
  }
}
constexpr int loaded_tensor(const program& p, const op& o) {
  return o.kind == op_kind::load_global && o.a.kind == operand_kind::global && o.a.index < p.tile_refs.size() ? p.tile_refs[o.a.index].tensor : -1;
}

// Arrivals on one counter element per launch, as far as constants tell: `known` false where a factor is a
// run-time value (`why` says which).
struct arrivals {
  long long count = 1;
  bool known = true;
  std::string_view why{};
  bool under_when = false;
};
constexpr arrivals arrivals_of(const program& p, int v) {
  const op& o = p.ops[v];
  arrivals a;
  const auto& ref = p.tile_refs[o.a.index];
  auto coords_use = [&](var_kind k, int r) {
    for (int i = 0; i < ref.rank && i < dim_list::max_rank; ++i)
      if (r < 0 ? ref.coords[i].uses(k) : ref.coords[i].uses(k, r)) return true;
    return false;
  };
  auto unknown = [&](std::string_view why) {
    if (a.known) a.why = why;
    a.known = false;
  };
  if (coords_use(var_kind::value, -1)) unknown("its coordinates are data (an index value)");
  if (coords_use(var_kind::cta, -1) || coords_use(var_kind::cluster_rank, -1) || coords_use(var_kind::walk_step, -1))
    unknown("its coordinates use the CTA's index, cluster rank or walk step");
  if (coords_use(var_kind::tail_unit, -1) || coords_use(var_kind::walk_part, -1))
    unknown("its coordinates name a split tail's part (its parts are counted at run time)");
  if (o.imm[0] < 1) unknown("its arrival count is a run-time value");
  // (outside the walk no coordinate can name an axis: every CTA arrives, as every point of every axis)
  const int walk = walk_of(p, v);
  for (int x = 0; x < p.space.count; ++x) {
    if (coords_use(var_kind::tile_coord, x)) continue;
    const auto& ax = p.space.axes[x];
    if (ax.kind == axis_kind::split) a.count *= ax.extent;
    else unknown("a parallel axis over a run-time dim is not among its coordinates");
  }
  // Every unit of the role arrives at each point, unless the units take the points in turn (an
  // alternating walk: one unit per point).
  const auto& role = p.roles[o.role];
  const bool alternating = walk >= 0 && p.ops[walk].has(flag_alternate);
  if (role.count > 1 && !alternating && !coords_use(var_kind::warpgroup, -1) && !coords_use(var_kind::warp, -1)) a.count *= role.count;
  for (int x = o.parent; x >= 0 && x != walk; x = p.ops[x].parent) {
    const op& c = p.ops[x];
    if (c.kind == op_kind::when) a.under_when = true;
    if (c.kind != op_kind::loop || coords_use(var_kind::loop, x)) continue;
    if (c.has(flag_static_trip)) a.count *= c.imm[1];
    else unknown("an enclosing dynamic loop's index is not among its coordinates");
  }
  return a;
}

}  // namespace detail

constexpr void check_counters(context& c) {
  const program& p = c.p;
  const int n = static_cast<int>(p.ops.size());
  for (int v = 0; v < n; ++v) {
    const op& o = p.ops[v];
    if (o.kind != op_kind::count_arrival || o.a.kind != operand_kind::global || o.a.index >= p.tile_refs.size()) continue;
    const auto& counter = p.tensors[p.tile_refs[o.a.index].tensor];
    // ---- sync.counter-arrivals
    const detail::arrivals a = detail::arrivals_of(p, v);
    if (!a.known) {
      std::string_view why = a.why;
      add_coverage(c, rule_id::sync_counter_arrivals, v, o.loc,
                   why == "its coordinates are data (an index value)" ? "sync.counter-arrivals: a counter whose coordinates are data: arrivals per element not counted"
                   : why == "a parallel axis over a run-time dim is not among its coordinates"
                       ? "sync.counter-arrivals: a counter shared along a parallel axis over a run-time dim: arrivals per element not counted"
                       : "sync.counter-arrivals: a counter indexed by the CTA's place or shared across a dynamic loop: arrivals per element not counted");
    } else if (a.count != o.imm[0]) {
      if (diagnostic* d = emit_op(c, rule_id::sync_counter_arrivals, v)) {
        d->message << "count_arrival on '" << counter.nm.view() << "' waits for " << o.imm[0] << " arrivals per element, but " << a.count
                   << (a.count == 1 ? " unit steps" : " units step") << " each element per launch: "
                   << (a.count < o.imm[0] ? "no unit sees the last count (the parts are never combined, and the counter is left short of 0)"
                                          : "the count wraps, and a second unit combines parts that are not all written");
        d->num("n", o.imm[0]).num("arrivals", a.count);
        d->help << "count the units that share one counter element (the points of every parallel axis its coordinates leave out, the role's "
                << p.roles[o.role].count << " unit(s) unless a coordinate uses r.warpgroup() / r.warp()) and pass that: count_arrival(..., " << a.count
                << "), or index the counter by what tells the results apart";
      }
    } else if (a.under_when) {
      add_coverage(c, rule_id::sync_counter_arrivals, v, o.loc, "sync.counter-arrivals: a count_arrival under a when: every unit is counted as arriving");
    }
    // ---- sync.counter-order
    const int walk = detail::walk_of(p, v);
    bool published[capacity::tensors]{}, written_after[capacity::tensors]{};
    int write_op[capacity::tensors]{};
    for (int i = 0; i < n; ++i) {
      const op& w = p.ops[i];
      const int t = detail::written_tensor(p, w);
      if (t < 0 || w.role != o.role || detail::walk_of(p, i) != walk) continue;
      if (i < v) published[t] = true;
      else if (!published[t]) written_after[t] = true, write_op[t] = i;
    }
    for (int i = 0; i < n; ++i) {
      const int t = detail::loaded_tensor(p, p.ops[i]);
      if (t < 0) continue;
      const int gate = detail::gate_of(p, i, v);
      if (published[t] && gate < 0) {
        if (diagnostic* d = emit_op(c, rule_id::sync_counter_order, i)) {
          d->message << "'" << p.tensors[t].nm.view() << "' is written before the arrival on '" << counter.nm.view() << "' (op#" << v
                     << ") and read here outside the when on its count: the other units' parts may not be written yet";
          d->num("arrival_op", v);
          d->add_note(o.loc) << "op#" << v << " count_arrival: the units publish their parts here";
          d->help << "read the parts only where the count says every unit has arrived: r.when(eq(before, " << o.imm[0] - 1 << "), [&] { ... })";
        }
      } else if (gate >= 0 && written_after[t]) {
        if (diagnostic* d = emit_op(c, rule_id::sync_counter_order, i)) {
          d->message << "'" << p.tensors[t].nm.view() << "' is read under the when on the arrival count of '" << counter.nm.view() << "' (op#" << v
                     << "), but the arriving role writes it after the arrival (op#" << write_op[t]
                     << "): the arrival publishes only what was written before it";
          d->num("arrival_op", v).num("write_op", write_op[t]);
          d->add_note(p.ops[write_op[t]].loc) << "op#" << write_op[t] << " writes '" << p.tensors[t].nm.view() << "' after the arrival";
          d->help << "store the part before r.count_arrival(...) (line " << o.loc.line << ")";
        }
      }
    }
  }
}

}  // namespace cake::analysis
