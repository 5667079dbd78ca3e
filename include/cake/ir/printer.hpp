#pragma once
// A stable textual form of a Program: what agents read back and what golden tests diff. The format is
// line-oriented, one declaration or op per line, ops numbered by their op id (the same number every
// diagnostic uses) and indented by loop depth. Locations are optional so that golden files do not
// depend on where a schedule lives.
#include <string>

#include "program.hpp"

namespace cake {

struct print_options {
  bool locations = false;  // append "  @ line N" to each declaration and op
};

namespace detail {

// The index of parallel axis `ax` as printed: tile.M for tiles(M, ..), the dim's label for each(H),
// split for split(n).
inline std::string axis_name(const program& p, int ax) {
  if (ax >= p.space.count) return "axis" + std::to_string(ax);
  const auto& a = p.space.axes[ax];
  if (a.kind == axis_kind::split) return "split";
  const std::string d = a.dim < p.dims.size() ? std::string(p.dims[a.dim].nm.view()) : "?";
  return a.kind == axis_kind::tiles ? "tile." + d : d;
}

inline std::string var_name(const program& p, const index_term& t) {
  switch (t.kind) {
    case var_kind::tile_coord: return axis_name(p, t.ref);
    case var_kind::loop: {
      const auto& lo = p.ops[t.ref];
      return std::string(lo.has(flag_static_trip) ? "i" : "k") + std::to_string(t.ref);
    }
    case var_kind::warpgroup: return "wg";
    case var_kind::warp: return "warp";
    case var_kind::cluster_rank: return "rank";
    case var_kind::cta: return "cta";
    case var_kind::dim: return t.ref < p.dims.size() ? std::string(p.dims[t.ref].nm.view()) : "dim?";
    case var_kind::elem_row: return "row";
    case var_kind::elem_col: return "col";
    case var_kind::value: return "v" + std::to_string(t.ref);
    case var_kind::walk_step: return "walk_step";
    case var_kind::walk_steps: return "walk_steps";
    case var_kind::walk_part: return "walk_part";
    case var_kind::walk_parts: return "walk_parts";
    case var_kind::part_begin: return "part_begin";
    case var_kind::part_end: return "part_end";
    case var_kind::tail_unit: return "tail_unit";
    default: return "?";
  }
}

inline std::string to_text(const program& p, const index_expr& e) {
  std::string s;
  for (int i = 0; i < e.term_count; ++i) {
    const auto& t = e.terms[i];
    if (t.coef == 0) continue;
    if (!s.empty()) s += t.coef < 0 ? " - " : " + ";
    else if (t.coef < 0) s += "-";
    const int c = t.coef < 0 ? -t.coef : t.coef;
    std::string v = var_name(p, t);
    if (t.div != 1) v += " / " + std::to_string(t.div);
    if (t.mod != 0) v = (t.div != 1 ? "(" + v + ")" : v) + " % " + std::to_string(t.mod);
    if (!t.plain() && (c != 1 || e.term_count > 1)) v = "(" + v + ")";
    s += v;
    if (c != 1) s += "*" + std::to_string(c);
  }
  if (e.constant != 0 || s.empty()) {
    if (s.empty()) s = std::to_string(e.constant);
    else s += (e.constant < 0 ? " - " : " + ") + std::to_string(e.constant < 0 ? -e.constant : e.constant);
  }
  if (e.div != 1) s = "(" + s + ") / " + std::to_string(e.div);
  if (e.mod != 0) s = "(" + s + ") % " + std::to_string(e.mod);
  if (!e.valid) s += " <invalid>";
  return s;
}

inline std::string to_text(const program& p, const operand& o) {
  std::string s;
  switch (o.kind) {
    case operand_kind::none: return "-";
    case operand_kind::smem: s = std::string(p.smem[o.index].nm.view()); break;
    case operand_kind::tmem: s = std::string(p.tmem[o.index].nm.view()); break;
    case operand_kind::reg: s = std::string(p.regs[o.index].nm.view()); break;
    case operand_kind::named_barrier: return std::string(p.named_barriers[o.index].nm.view());
    case operand_kind::tensor: return std::string(p.tensors[o.index].nm.view());
    case operand_kind::scalar: return std::string(p.scalars[o.index].nm.view());
    case operand_kind::pipeline:
      s = std::string(p.pipelines[o.index].nm.view());
      if (o.sel == stage_sel::slot) s += " slot#" + std::to_string(o.slot_op);
      return s;
    case operand_kind::mbarrier:
      s = std::string(p.mbarriers[o.index].nm.view());
      if (p.mbarriers[o.index].count > 1) s += "[" + to_text(p, o.stage) + "]";
      return s;
    case operand_kind::global: {
      const auto& r = p.tile_refs[o.index];
      s = std::string(p.tensors[r.tensor].nm.view()) + ".tile(";
      for (int i = 0; i < r.rank; ++i) s += (i ? ", " : "") + to_text(p, r.coords[i]);
      s += ")";
      // (golden files of schedules without these forms are unchanged)
      if (r.elements == (1u << r.rank) - 1u) s = std::string(p.tensors[r.tensor].nm.view()) + ".at" + s.substr(s.find('('));
      else
        for (int i = 0; i < r.rank; ++i)
          if (r.element_coord(i)) s += ".elements_at(" + std::to_string(i) + ")";
      if (r.has_limit()) s += ".limit(" + std::to_string(r.limit_pos) + ", " + to_text(p, r.limit) + ")";
      return s;
    }
  }
  if (o.sel == stage_sel::slot) s += "[slot#" + std::to_string(o.slot_op) + "]";
  if (o.sel == stage_sel::expr) s += "[stage " + to_text(p, o.stage) + "]";
  if (o.part != part_axis::none)
    s += std::string(o.part == part_axis::rows ? ".rows(" : ".cols(") + to_text(p, o.part_index) + " of " + std::to_string(o.parts) + ")";
  return s;
}

// lo..hi [step s]; tiles(K, 64) prints as ceil(K / 64).
inline std::string bound_text(const program& p, const loop_bound& b) {
  auto side = [&](const index_expr& e, bool tiles) {
    if (tiles && b.dim < p.dims.size()) return "ceil(" + std::string(p.dims[b.dim].nm.view()) + " / " + std::to_string(b.block) + ")";
    return to_text(p, e);
  };
  const index_expr tiles_hi = b.block > 0 ? (var_index(var_kind::dim, b.dim) + (b.block - 1)) / b.block : index_expr{};
  std::string hi = side(b.hi, b.block > 0 && b.hi == tiles_hi);
  if (b.has_hi2) hi = "min(" + hi + ", " + side(b.hi2, b.block > 0 && b.hi2 == tiles_hi) + ")";
  std::string s = to_text(p, b.lo) + ".." + hi;
  if (b.step != 1) s += " step " + std::to_string(b.step);
  return s;
}

inline std::string at(const program&, src_loc l, const print_options& opt) {
  return opt.locations && l.known() ? "  @ line " + std::to_string(l.line) : "";
}

// An expression tree, from its root node (program::exprs).
inline std::string expr_text(const program& p, int node) {
  if (node < 0 || node >= static_cast<int>(p.exprs.size())) return "?";
  const expr_node& n = p.exprs[node];
  switch (n.fn) {
    case math_fn::tile: return n.ref < p.regs.size() ? std::string(p.regs[n.ref].nm.view()) : "reg?";
    case math_fn::scalar: return n.ref < p.scalars.size() ? std::string(p.scalars[n.ref].nm.view()) : "scalar?";
    case math_fn::imm: {
      const float v = __builtin_bit_cast(float, n.bits);
      if (v == neg_inf) return "-inf";
      if (v == pos_inf) return "inf";
      std::string t = std::to_string(v);
      while (t.size() > 1 && t.back() == '0' && t[t.size() - 2] != '.') t.pop_back();
      return t;
    }
    case math_fn::index: return "[" + to_text(p, n.ix) + "]";
    default: break;
  }
  const auto& m = info(n.fn);
  auto kid = [&](int i) { return expr_text(p, n.kid[i]); };
  constexpr std::string_view infix[] = {"add", "+", "sub", "-", "mul", "*", "div", "/", "lt", "<", "le", "<=", "gt", ">", "ge", ">=", "eq", "==", "ne", "!=", "and", "&&", "or", "||"};
  if (m.arity == 2)
    for (int i = 0; i < 24; i += 2)
      if (m.name == infix[i]) return "(" + kid(0) + " " + std::string(infix[i + 1]) + " " + kid(1) + ")";
  std::string s = std::string(m.name) + "(";
  for (int i = 0; i < m.arity; ++i) s += (i ? ", " : "") + kid(i);
  if (const fma_share sh = fma_share_of(n); sh.n != 0 || sh.d != 1) s += ", fma " + std::to_string(sh.n) + "/" + std::to_string(sh.d);
  return s + ")";
}

inline std::string op_text(const program& p, int id) {
  const op& o = p.ops[id];
  std::string s = "#" + std::to_string(id) + " " + std::string(to_string(o.kind));
  auto operands = [&](std::string_view arrow) {
    s += " " + to_text(p, o.d);
    if (o.a.kind != operand_kind::none) s += std::string(arrow) + to_text(p, o.a);
    if (o.b.kind != operand_kind::none && o.kind != op_kind::tma_load) s += ", " + to_text(p, o.b);
  };
  switch (o.kind) {
    case op_kind::tile_loop: s += std::string(" over the parallel space") + (o.has(flag_alternate) ? ", units alternating" : ""); break;
    case op_kind::loop:
      if (o.has(flag_static_trip)) s += " i" + std::to_string(id) + " in 0.." + std::to_string(o.imm[1]);
      else if (const loop_bound* b = p.bound_of(id)) s += " k" + std::to_string(id) + " in " + bound_text(p, *b);
      else s += " k" + std::to_string(id) + " in ? (no bounds)";
      break;
    case op_kind::mma_sync:
    case op_kind::wgmma:
    case op_kind::tcgen05_mma:
      operands(" += ");
      if (o.has(flag_overwrite)) s += " overwrite";
      if (o.has(flag_overwrite_first)) s += " overwrite-on-first(k" + std::to_string(o.imm[2]) + ")";
      if (o.has(flag_over) && o.imm[1] >= 0 && o.imm[1] < static_cast<int>(p.dims.size())) s += " over " + std::string(p.dims[o.imm[1]].nm.view());
      break;
    case op_kind::pipeline_acquire:
    case op_kind::pipeline_wait:
    case op_kind::pipeline_held: s += " " + to_text(p, o.d) + " -> slot#" + std::to_string(id); break;
    case op_kind::pipeline_release:
    case op_kind::pipeline_commit:
      s += " " + to_text(p, o.a);
      if (o.has(flag_release_later)) s += " " + std::to_string(o.imm[1]) + " iteration(s) later";
      break;
    case op_kind::mbarrier_init: s += " " + to_text(p, o.d) + " count " + std::to_string(o.imm[0]); break;
    case op_kind::mbarrier_arrive_expect_tx:
    case op_kind::mbarrier_expect_tx: s += " " + to_text(p, o.d) + " bytes " + std::to_string(o.imm[0]); break;
    case op_kind::mbarrier_arrive:
    case op_kind::mbarrier_wait:
    case op_kind::tcgen05_commit:
    case op_kind::named_barrier_sync:
    case op_kind::named_barrier_arrive:
    case op_kind::turn_take:
    case op_kind::turn_pass:
    case op_kind::pipeline_flush:
    case op_kind::tmem_alloc:
    case op_kind::tmem_dealloc: s += " " + to_text(p, o.d); break;
    case op_kind::tma_prefetch: s += " " + to_text(p, o.a); break;
    case op_kind::tma_prefetch_tile: s += " " + to_text(p, o.a) + " (box of " + to_text(p, o.d) + ")"; break;
    case op_kind::wgmma_wait:
    case op_kind::cp_async_wait:
    case op_kind::bulk_wait: s += " " + std::to_string(o.imm[0]) + (o.has(flag_read_only) ? " read" : ""); break;
    case op_kind::setmaxnreg: s += " " + std::to_string(o.imm[0]); break;
    case op_kind::fill: s += " " + to_text(p, o.d) + " = " + std::to_string(__builtin_bit_cast(float, o.imm[0])); break;
    case op_kind::elementwise: s += " " + to_text(p, o.d) + " = " + expr_text(p, o.imm[0] + o.imm[1] - 1); break;
    case op_kind::when: s += (o.has(flag_next_point) ? " next point: " : " ") + expr_text(p, o.imm[0] + o.imm[1] - 1); break;
    case op_kind::reduce_rows: {
      const std::string src = o.has(flag_expr_src) ? expr_text(p, o.expr_first() + o.expr_count() - 1) : to_text(p, o.a);
      s += " " + to_text(p, o.d) + (o.has(flag_accumulate) ? " = " + std::string(to_string(static_cast<reduce_kind>(o.imm[0]))) + "(" + to_text(p, o.d) + ", " : " = ") +
           "row_" + std::string(to_string(static_cast<reduce_kind>(o.imm[0]))) + "(" + src + ")" + (o.has(flag_accumulate) ? ")" : "");
      break;
    }
    case op_kind::arg_reduce_rows: {
      const std::string src = o.has(flag_expr_src) ? expr_text(p, o.expr_first() + o.expr_count() - 1) : to_text(p, o.a);
      s += " (" + to_text(p, o.d) + ", " + to_text(p, o.b) + ") = row_" + std::string(to_string(static_cast<reduce_kind>(o.imm[0]))) + "(" + src +
           ", col0 " + to_text(p, o.ix) + ")" + (o.has(flag_accumulate) ? " accumulate" : "") + (o.has(flag_lazy_index) ? ", index found lazily" : "");
      break;
    }
    case op_kind::scatter_add: s += " " + to_text(p, o.d) + " rows " + to_text(p, o.b) + " += " + to_text(p, o.a); break;
    case op_kind::scatter_store: s += " " + to_text(p, o.d) + " rows " + to_text(p, o.b) + " = " + to_text(p, o.a); break;
    case op_kind::fetch_add:
      s += " " + to_text(p, o.d) + " = " + to_text(p, o.a) + " rows " + to_text(p, o.b) + ", then += " + std::to_string(o.imm[0]);
      break;
    case op_kind::scan_rows: s += " " + to_text(p, o.d) + " = row_scan(" + to_text(p, o.a) + ")"; break;
    case op_kind::reduce_cols: s += " " + to_text(p, o.d) + " = col_" + std::string(to_string(static_cast<reduce_kind>(o.imm[0]))) + "(" + to_text(p, o.a) + ")"; break;
    case op_kind::topk_init: s += " " + to_text(p, o.d) + " = empty"; break;
    case op_kind::topk_rows: {
      const std::string src = o.has(flag_expr_src) ? expr_text(p, o.expr_first() + o.expr_count() - 1) : to_text(p, o.a);
      s += " " + to_text(p, o.d) + " += row_topk(" + src + (o.b.kind == operand_kind::reg ? ", indices " + to_text(p, o.b) : ", col0 " + to_text(p, o.ix)) + ")";
      break;
    }
    case op_kind::topk_store: s += " " + to_text(p, o.d) + ", " + to_text(p, o.b) + " <- " + to_text(p, o.a); break;
    case op_kind::atomic_add: s += " " + to_text(p, o.d) + " += " + to_text(p, o.a); break;
    case op_kind::read_index: s += " v" + std::to_string(id) + " = " + to_text(p, o.a); break;
    case op_kind::count_arrival: s += " v" + std::to_string(id) + " = " + to_text(p, o.a) + ", then stepped mod " + (o.imm[0] > 0 ? std::to_string(o.imm[0]) : to_text(p, o.ix)); break;
    case op_kind::let_index:
      s += " v" + std::to_string(id) + " = " + (o.imm[0] == 1 ? "min(" + to_text(p, o.ix) + ", " + to_text(p, o.d.stage) + ")" : to_text(p, o.ix));
      break;
    case op_kind::cluster_reduce:
      s += " " + to_text(p, o.d) +
           (o.imm[0] == static_cast<int>(reduce_kind::max) ? " = max over the cluster"
            : o.has(flag_scatter)                           ? " = sum over the cluster, scattered by column block"
                                                            : " = sum over the cluster");
      break;
    default:
      if (o.d.kind != operand_kind::none) operands(" <- ");
      break;
  }
  if (o.kind == op_kind::tma_load && o.b.kind == operand_kind::mbarrier) s += " completes " + to_text(p, o.b);
  if (o.kind == op_kind::load_global && o.imm[2] != 0) {  // .fill_outside(v): what reads past the tensor give
    const float v = __builtin_bit_cast(float, o.imm[2]);
    s += " fill_outside " + (v == neg_inf ? std::string("-inf") : v == pos_inf ? std::string("inf") : std::to_string(v));
  }
  if (o.kind == op_kind::tma_load && o.has(flag_oob_nan)) s += " fill_outside nan";
  if (o.has(flag_multicast)) s += " multicast";
  if (o.has(flag_rest_unused)) s += " rest-unused";
  if (o.has(flag_remote)) s += " remote";
  return s;
}

}  // namespace detail

// A builder error on one line, for an exception's text: "[rule] message (what the value is: N) at file:line"
// (the entry points that build a schedule at run time throw it when the schedule is invalid).
inline std::string to_text(const build_error& e) {
  const value_note note = split_value_note(e.message);
  std::string s = "[" + std::string(e.rule) + "] ";
  s += note.what.empty() ? std::string(e.message) + " (value " + std::to_string(e.value) + ")"
                         : std::string(note.head) + "(" + std::string(note.what) + ": " + std::to_string(e.value) + ")";
  if (e.loc.file && *e.loc.file) s += " at " + std::string(e.loc.file) + ":" + std::to_string(e.loc.line);
  return s;
}

inline std::string to_text(const program& p, print_options opt = {}) {
  using detail::at;
  std::string s = "kernel " + std::string(p.kernel_name.view()) + " (" + std::string(to_string(p.target)) + ")" + at(p, p.loc, opt) + "\n";
  const auto& L = p.launch;
  s += "  launch: " + std::to_string(p.block_threads()) + " threads";
  if (L.cluster_size() > 1)
    s += ", cluster " + std::to_string(L.cluster[0]) + "x" + std::to_string(L.cluster[1]) + "x" + std::to_string(L.cluster[2]);
  if (L.persistent)
    s += std::string(", persistent, raster ") + (L.rast.order == raster_order::along_m ? "along_m(" : "along_n(") + std::to_string(L.rast.group) + ")" +
         (L.order == walk_order::serpentine ? ", serpentine" : "");
  if (L.tail_parts > 0) s += ", split tail: up to " + std::to_string(L.tail_parts) + " parts of " + detail::to_text(p, L.tail_extent);
  if (L.pdl) s += ", programmatic launch";
  if (L.manual_barrier_init) s += ", manual barrier init";
  s += "\n";
  for (const auto& d : p.dims) s += "  dim " + std::string(d.nm.view()) + (d.mode == dim_mode::dynamic ? ": dynamic\n" : ": specialized\n");
  for (const auto& t : p.tensors) {
    s += "  tensor " + std::string(t.nm.view()) + ": " + std::string(to_string(t.dt)) + " [";
    for (int i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::string(p.dims[t.dims[i]].nm.view());
    s += std::string("] ") + (t.output ? "output" : "input") + (t.independent ? ", independent of the previous grid" : "") + (t.streamed ? ", streamed" : "") + at(p, t.loc, opt) + "\n";
  }
  for (const auto& c : p.scalars) s += "  scalar " + std::string(c.nm.view()) + ": " + std::string(to_string(c.dt)) + at(p, c.loc, opt) + "\n";
  if (p.has_space()) {
    s += "  parallel:";
    for (int i = 0; i < p.space.count; ++i) {
      const auto& ax = p.space.axes[i];
      const std::string d = ax.dim < p.dims.size() ? std::string(p.dims[ax.dim].nm.view()) : "?";
      s += std::string(i ? "," : "") + " " +
           (ax.kind == axis_kind::tiles ? "tiles(" + d + ", " + std::to_string(ax.extent) + ")" : ax.kind == axis_kind::each ? "each(" + d + ")" : "split(" + std::to_string(ax.extent) + ")") +
           (ax.descending ? ".descending()" : "");
    }
    s += at(p, p.space.loc, opt) + "\n";
  }
  for (const auto& r : p.smem) {
    s += "  smem " + std::string(r.nm.view()) + ": " + std::string(to_string(r.dt)) + " [" + std::to_string(r.rows) + " x " + std::to_string(r.cols) + "]";
    if (r.mj_declared) s += std::string(" declared ") + to_string(r.mj);
    s += std::string(", swizzle ") + to_string(r.swz);
    if (r.stages > 1) s += ", x" + std::to_string(r.stages);
    if (r.pipeline != no_index) s += " (pipeline " + std::string(p.pipelines[r.pipeline].nm.view()) + ")";
    s += at(p, r.loc, opt) + "\n";
  }
  for (const auto& t : p.tmem)
    s += "  tmem " + std::string(t.nm.view()) + ": " + std::to_string(t.columns) + " columns x " + std::to_string(t.lanes) + " lanes" +
         (t.stages > 1 ? ", x" + std::to_string(t.stages) : std::string()) +
         (t.pipeline != no_index ? " (pipeline " + std::string(p.pipelines[t.pipeline].nm.view()) + ")" : std::string()) + at(p, t.loc, opt) + "\n";
  for (const auto& b : p.mbarriers) {
    s += "  mbarrier " + std::string(b.nm.view()) + ": " + (b.arrivals ? std::to_string(b.arrivals) + " arrivals" : std::string("arrivals derived"));
    if (b.count > 1) s += ", x" + std::to_string(b.count);
    s += at(p, b.loc, opt) + "\n";
  }
  for (const auto& b : p.named_barriers)
    s += "  named_barrier " + std::string(b.nm.view()) + ": " + (b.per_unit ? std::string("per unit") : b.threads ? std::to_string(b.threads) + " threads" : std::string("threads derived")) + at(p, b.loc, opt) + "\n";
  for (const auto& pl : p.pipelines) {
    s += "  pipeline " + std::string(pl.nm.view()) + ": " + std::to_string(pl.stages) + " stages, carries";
    for (int i = 0; i < pl.carried_count; ++i)
      s += std::string(i ? ", " : " ") + std::string(pl.carried_tmem[i] ? p.tmem[pl.carried[i]].nm.view() : p.smem[pl.carried[i]].nm.view());
    s += at(p, pl.loc, opt) + "\n";
  }
  for (std::size_t ri = 0; ri < p.roles.size(); ++ri) {
    const auto& r = p.roles[ri];
    s += "  role " + std::string(r.nm.view()) + ": " + std::to_string(r.count) + (r.unit == role_unit::warpgroup ? " warpgroup" : " warp") + (r.count > 1 ? "s" : "");
    if (r.regs) s += ", regs " + std::to_string(r.regs);
    s += at(p, r.loc, opt) + "\n";
    for (const auto& g : p.regs)
      if (g.role == ri)
        s += "    reg " + std::string(g.nm.view()) + ": " + std::string(to_string(g.dt)) + " [" + std::to_string(g.rows) + " x " + std::to_string(g.cols) + "]" +
             (g.accumulator ? " accumulator" : "") + (g.scope == role_unit::warpgroup ? " per warpgroup" : " per warp") + at(p, g.loc, opt) + "\n";
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      if (p.ops[i].role != ri) continue;
      s += std::string(4 + 2 * p.depth(static_cast<int>(i)), ' ') + detail::op_text(p, static_cast<int>(i)) + at(p, p.ops[i].loc, opt) + "\n";
    }
  }
  for (const auto& e : p.errors) s += "  build error [" + std::string(e.rule) + "] " + std::string(e.message) + " (value " + std::to_string(e.value) + ")\n";
  if (p.errors_dropped) s += "  ... and " + std::to_string(p.errors_dropped) + " more build errors\n";
  return s;
}

}  // namespace cake
