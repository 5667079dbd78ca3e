#pragma once
// Programmatic dependent launch, statically (sync pass):
//
// A kernel built with k.programmatic_launch() is launched with programmatic stream serialization: it may
// start while the kernel before it in the stream is still running (as soon as every CTA of that grid has
// executed griddepcontrol.launch_dependents or exited). Only griddepcontrol.wait (r.griddep_wait()) orders
// a thread after the whole previous grid, its memory operations included (PTX ISA, griddepcontrol).
//
// sync.griddep-missing (error). In such a kernel, every op of a role that touches global memory (TMA loads
// and stores, cp.async, register loads and stores, atomic_add, scatter_add) must come after that role's
// griddep_wait on every path its threads can take: otherwise it may read what the previous grid has not
// written yet, or write what it still reads or writes. Paths follow the role's structured control: a wait
// inside a `when`, or inside a dynamic loop (which may run no trip), covers only the ops of that body; a
// wait inside a for_range (at least one trip) or the walk over the parallel space (at least one point per
// CTA; not in an alternating walk, where a unit may get none) also covers the ops after it. Each role needs
// its own wait: an access ordered after another role's wait only through a barrier is reported too
// (conservative; the fix costs one instruction per thread). Exempt: tensors declared with
// k.independent_of_previous_grid(t) (the previous kernel never writes them: weights, read while the
// previous layer finishes, are the point of the feature); prefetch of a tensor map (kernel parameters are
// not written by the previous grid). Reported once per role and tensor, at the first access.
//
// griddep_launch_dependents needs no rule for this kernel's correctness: a dependent grid that waits with
// griddepcontrol.wait waits for this whole grid to complete and flush, wherever the trigger was placed;
// the trigger only decides how early the dependent may start its prologue.
//
// sync.griddep-no-pdl (warning). griddep_wait in a kernel without programmatic_launch(): the launch is
// ordered after the previous grid anyway, so the wait returns at once. Harmless but says the schedule
// expects an overlap it does not get.
#include "context.hpp"

namespace cake::analysis {

namespace detail {

// The global tensor an op accesses (its tile-ref operand), and whether it writes it; -1 when none.
struct global_access {
  int tensor = -1;
  bool write = false;
};
constexpr global_access op_global_access(const program& p, const op& o) {
  // (a prefetch only warms L2, the point of coherence: the later load still reads what the previous grid wrote)
  if (o.kind == op_kind::tma_prefetch || o.kind == op_kind::tma_prefetch_tile) return {};
  if ((o.kind == op_kind::fetch_add || o.kind == op_kind::count_arrival) && o.a.kind == operand_kind::global)
    return {p.tile_refs[o.a.index].tensor, true};  // an atomic read-modify-write
  if (o.d.kind == operand_kind::global) return {p.tile_refs[o.d.index].tensor, true};
  if (o.a.kind == operand_kind::global) return {p.tile_refs[o.a.index].tensor, false};
  if (o.b.kind == operand_kind::global) return {p.tile_refs[o.b.index].tensor, false};
  return {};
}

constexpr bool has_body(op_kind k) { return k == op_kind::tile_loop || k == op_kind::loop || k == op_kind::when; }

// Does a control op run its body at least once whenever it is reached?
constexpr bool body_runs(const op& o) {
  switch (o.kind) {
    case op_kind::loop: return o.has(flag_static_trip) && o.imm[1] >= 1;
    case op_kind::tile_loop: return !o.has(flag_alternate);
    default: return false;  // when: the condition may be false
  }
}

constexpr bool is_ancestor(const program& p, int anc, int op_id) {
  for (int a = p.ops[op_id].parent; a >= 0; a = p.ops[a].parent)
    if (a == anc) return true;
  return false;
}

struct griddep_walk {
  context& c;
  int role;
  bool reported[capacity::tensors]{};

  // Walks ops [first, last) of the role with `waited` (a wait ran on every path so far); returns the
  // state after them.
  constexpr bool run(int first, int last, bool waited) {
    const program& p = c.p;
    for (int i = first; i < last;) {
      const op& o = p.ops[i];
      if (o.role != role) {
        ++i;
        continue;
      }
      if (has_body(o.kind)) {
        const bool after_body = run(i + 1, o.end, waited);
        if (body_runs(o)) waited = after_body;
        i = o.end > i ? o.end : i + 1;
        continue;
      }
      if (o.kind == op_kind::griddep_wait) waited = true;
      const global_access g = op_global_access(p, o);
      if (!waited && g.tensor >= 0 && !p.tensors[g.tensor].independent && !reported[g.tensor]) {
        reported[g.tensor] = true;
        report(i, g);
      }
      ++i;
    }
    return waited;
  }

  constexpr void report(int id, global_access g) {
    const program& p = c.p;
    const op& o = p.ops[id];
    const auto role_name = p.roles[role].nm.view();
    const auto tensor_name = p.tensors[g.tensor].nm.view();
    diagnostic* d = emit_op(c, rule_id::sync_griddep_missing, id);
    if (!d) return;
    d->message << "role '" << role_name << "' " << (g.write ? "writes" : "reads") << " '" << tensor_name << "' (op#" << id << ' '
               << to_string(o.kind) << ") before griddep_wait(); with programmatic_launch() the previous kernel in the stream may still be "
               << (g.write ? "reading or writing it" : "writing it");
    d->num("op", id).num("line", static_cast<long long>(o.loc.line));
    d->add_note(p.loc) << "kernel '" << p.kernel_name.view() << "' (declared here) has programmatic_launch()";
    // A wait the role has that does not run first on every path: say why.
    for (std::size_t w = 0; w < p.ops.size(); ++w) {
      const op& x = p.ops[w];
      if (x.kind != op_kind::griddep_wait || x.role != role) continue;
      if (static_cast<int>(w) > id) {
        d->add_note(x.loc) << "the role's griddep_wait (op#" << w << ") runs after this access";
      } else {
        int cut = -1;  // the outermost construct around the wait, not around the access, that may not run
        for (int a = x.parent; a >= 0; a = p.ops[a].parent)
          if (!is_ancestor(p, a, id) && a != id && !body_runs(p.ops[a])) cut = a;
        if (cut >= 0) {
          auto& t = d->add_note(x.loc);
          t << "the role's griddep_wait (op#" << w << ") is inside ";
          if (p.ops[cut].kind == op_kind::when) t << "a when (op#" << cut << ") whose condition may be false";
          else if (p.ops[cut].kind == op_kind::tile_loop) t << "an alternating walk (op#" << cut << ") that may give this unit no point";
          else t << "a dynamic loop (op#" << cut << ") that may run no trip";
        }
      }
      break;
    }
    d->help << "call r.griddep_wait() in role '" << role_name << "' before op#" << id << " (line " << o.loc.line << ")";
    d->help << ", or declare k.independent_of_previous_grid(" << tensor_name << ") if the previous kernel "
            << (g.write ? "neither reads nor writes it" : "never writes it");
  }
};

}  // namespace detail

constexpr void check_griddep(context& c) {
  const program& p = c.p;
  if (!p.launch.pdl) {
    for (std::size_t i = 0; i < p.ops.size(); ++i)
      if (p.ops[i].kind == op_kind::griddep_wait)
        if (diagnostic* d = emit_op(c, rule_id::sync_griddep_no_pdl, static_cast<int>(i))) {
          d->message << "griddep_wait() in kernel '" << p.kernel_name.view()
                     << "', which is not launched with programmatic_launch(): the launch already waits for the previous kernel, so this waits for nothing";
          d->help << "add .programmatic_launch() to the kernel to let it start during the previous kernel's tail, or drop the call";
        }
    return;
  }
  for (std::size_t r = 0; r < p.roles.size(); ++r) {
    detail::griddep_walk w{c, static_cast<int>(r)};
    int first = -1, last = -1;
    for (std::size_t i = 0; i < p.ops.size(); ++i)
      if (p.ops[i].role == r) {
        if (first < 0) first = static_cast<int>(i);
        last = static_cast<int>(i) + 1;
      }
    if (first >= 0) w.run(first, last, false);
  }
}

}  // namespace cake::analysis
