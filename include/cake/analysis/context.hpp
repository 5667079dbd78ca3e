#pragma once
// What every pass sees: the Program, its plan (computed once; passes read it, never recompute it), the
// options, and the report being filled. Also the helpers every pass uses to emit a diagnostic with its
// path (`kernel › role › loop › op#N kind(resource)`) and to name things the way the schedule does.
#include <string_view>

#include "../ir/program.hpp"
#include "../plan/plan.hpp"
#include "diagnostic.hpp"

namespace cake::analysis {

struct analysis_options {
  // Trips of loops whose count is only known at launch (for_each_k). 0 = the deepest ring (pipeline
  // stages or smem copies) + 2, so that every stage is reused at least twice.
  int k_trips = 0;
  // Also run the protocol with a single trip of each dynamic loop (K no larger than one tile).
  bool single_trip_run = true;
  // Tile-loop iterations of a persistent kernel (a non-persistent CTA runs exactly one tile).
  int tiles = 2;
  // Upper bound on ops executed by one protocol run; past it the run stops with a coverage note.
  long max_steps = 200000;
};

struct context {
  const program& p;
  const plan::kernel_plan& plan;
  const analysis_options& opt;
  report& out;
};

// ---- naming ------------------------------------------------------------------------------------

template <class Text>
constexpr void write_loop_name(Text& t, const program& p, int op_id) {
  const op& o = p.ops[op_id];
  if (o.kind == op_kind::tile_loop) t << "tiles";
  else t << "loop " << (o.has(flag_static_trip) ? "i" : "k") << op_id;
}

// The resource an op is about, as the schedule names it ("" when none).
constexpr std::string_view resource_name(const program& p, const operand& o) {
  switch (o.kind) {
    case operand_kind::smem: return p.smem[o.index].nm.view();
    case operand_kind::tmem: return p.tmem[o.index].nm.view();
    case operand_kind::reg: return p.regs[o.index].nm.view();
    case operand_kind::mbarrier: return p.mbarriers[o.index].nm.view();
    case operand_kind::named_barrier: return p.named_barriers[o.index].nm.view();
    case operand_kind::pipeline: return p.pipelines[o.index].nm.view();
    case operand_kind::global: return p.tensors[p.tile_refs[o.index].tensor].nm.view();
    case operand_kind::tensor: return p.tensors[o.index].nm.view();
    case operand_kind::scalar: return p.scalars[o.index].nm.view();
    default: return {};
  }
}

constexpr std::string_view op_resource(const program& p, const op& o) {
  // A TMA store is about the smem tile it stores; everything else names its destination, else its source.
  if (o.kind == op_kind::tma_store) return resource_name(p, o.a);
  if (o.kind == op_kind::tma_prefetch_tile) return resource_name(p, o.a);  // (the smem tile only gives the box)
  const auto n = resource_name(p, o.d);
  return n.empty() ? resource_name(p, o.a) : n;
}

// `kernel › role R › tiles › loop k1 › op#3 tma_load(sA)`
template <class Text>
constexpr void write_op_path(Text& t, const program& p, int op_id) {
  const op& o = p.ops[op_id];
  t << p.kernel_name.view();
  if (o.role < p.roles.size()) t << " \u203a role " << p.roles[o.role].nm.view();
  int chain[16]{};
  int n = 0;
  for (int a = o.parent; a >= 0 && n < 16; a = p.ops[a].parent) chain[n++] = a;
  while (n) {
    t << " \u203a ";
    write_loop_name(t, p, chain[--n]);
  }
  t << " \u203a op#" << op_id << ' ' << to_string(o.kind);
  const auto res = op_resource(p, o);
  if (!res.empty()) t << '(' << res << ')';
}

template <class Text>
constexpr void write_role_path(Text& t, const program& p, int role) {
  t << p.kernel_name.view();
  if (role >= 0 && role < static_cast<int>(p.roles.size())) t << " \u203a role " << p.roles[role].nm.view();
}

// Names of barrier objects as the schedule knows them: "bar", "bar[2]", "ab.full[1]", "ab.empty[3]".
template <class Text>
constexpr void write_barrier_object(Text& t, const program& p, const plan::barrier_plan& B, int obj) {
  const auto& b = B.objects[obj];
  if (b.origin == plan::barrier_origin::user) {
    t << '\'' << p.mbarriers[b.source].nm.view();
    if (p.mbarriers[b.source].count > 1) t << '[' << b.element << ']';
    t << '\'';
    return;
  }
  if (b.origin == plan::barrier_origin::cluster_ready || b.origin == plan::barrier_origin::cluster_done) {
    t << "the cluster sum's '" << (b.origin == plan::barrier_origin::cluster_ready ? "ready" : "done") << "' barrier (op#" << b.source << ")";
    return;
  }
  t << '\'' << p.pipelines[b.source].nm.view() << (b.origin == plan::barrier_origin::pipeline_full ? ".full[" : ".empty[") << b.element << "]'";
}

constexpr src_loc barrier_object_loc(const program& p, const plan::barrier_plan& B, int obj) {
  const auto& b = B.objects[obj];
  return b.origin == plan::barrier_origin::user ? p.mbarriers[b.source].loc : p.pipelines[b.source].loc;
}

template <class Text>
constexpr void write_dtype_shape(Text& t, int rows, int cols, dtype dt) {
  t << rows << 'x' << cols << ' ' << to_string(dt);
}

// ---- emission ----------------------------------------------------------------------------------

constexpr bool same_loc(const src_loc& a, const src_loc& b) {
  return a.line == b.line && a.column == b.column && std::string_view{a.file} == std::string_view{b.file};
}

// Starts a diagnostic without any filtering (build errors use it directly).
constexpr diagnostic* push_diagnostic(context& c, rule_id r, int op_id, src_loc at, bool with_path = true) {
  if (c.out.diagnostics.full()) {
    ++c.out.diagnostics_dropped;
    return nullptr;
  }
  diagnostic d;
  d.rule = r;
  d.op = op_id;
  d.loc = at;
  c.out.diagnostics.push_back(d);
  diagnostic& out = c.out.diagnostics.back();
  if (op_id >= 0 && with_path) write_op_path(out.path, c.p, op_id);
  return &out;
}

// Starts a diagnostic; returns nullptr when the same rule was already reported at the same op and
// place (a loop unrolled by the protocol reports each finding once) or when the report is full.
constexpr diagnostic* emit(context& c, rule_id r, int op_id, src_loc at, bool with_path = true) {
  for (auto& d : c.out.diagnostics)
    if (d.rule == r && d.op == op_id && same_loc(d.loc, at)) return nullptr;
  return push_diagnostic(c, r, op_id, at, with_path);
}
constexpr diagnostic* emit_op(context& c, rule_id r, int op_id) { return emit(c, r, op_id, c.p.ops[op_id].loc); }
// A finding about a declaration or the kernel as a whole; `role` (or -1) goes into the path.
constexpr diagnostic* emit_decl(context& c, rule_id r, src_loc at, int role = -1) {
  diagnostic* d = emit(c, r, -1, at);
  if (d) write_role_path(d->path, c.p, role);
  return d;
}

constexpr void add_coverage(context& c, rule_id r, int op_id, src_loc at, std::string_view text) {
  for (const auto& n : c.out.coverage)
    if (n.rule == r && n.text.view() == text) return;
  if (c.out.coverage.full()) {
    ++c.out.coverage_dropped;
    return;
  }
  coverage_note n;
  n.rule = r;
  n.op = op_id;
  n.loc = at;
  n.text << text;
  c.out.coverage.push_back(n);
}

// ---- small facts many passes need ----------------------------------------------------------------

constexpr bool is_mma(op_kind k) { return k == op_kind::wgmma || k == op_kind::mma_sync || k == op_kind::tcgen05_mma; }

// Does any role run an op of this kind?
constexpr bool role_uses_kind(const program& p, op_kind k) {
  for (const auto& o : p.ops)
    if (o.kind == k) return true;
  return false;
}
// Does the role run at least one op of this kind?
constexpr bool role_uses(const program& p, int role, op_kind k) {
  for (const auto& o : p.ops)
    if (o.role == role && o.kind == k) return true;
  return false;
}

constexpr int deepest_ring(const program& p) {
  int s = 1;
  for (const auto& pl : p.pipelines) s = pl.stages > s ? pl.stages : s;
  for (const auto& r : p.smem) s = r.stages > s ? r.stages : s;
  for (const auto& t : p.tmem) s = t.stages > s ? t.stages : s;
  return s;
}

constexpr bool has_dynamic_loop(const program& p) {
  for (const auto& o : p.ops)
    if (o.kind == op_kind::loop && !o.has(flag_static_trip)) return true;
  return false;
}

constexpr bool op_uses_var(const operand& o, var_kind k) {
  if (o.stage.uses(k) || o.part_index.uses(k)) return true;
  return false;
}

}  // namespace cake::analysis
