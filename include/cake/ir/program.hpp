#pragma once
// The Program: one plain constexpr value holding everything a schedule declared. The analyzer, the cost
// model and lowering all read it (through the derivations in plan/); nothing else is passed around.
#include <cstdint>
#include <string_view>

#include "../core/static_vector.hpp"
#include "../target/targets.hpp"
#include "expr.hpp"
#include "ops.hpp"
#include "resources.hpp"

namespace cake {

// A finding of the builder at run time (outside constant evaluation the same checks that are compile
// errors in a constexpr schedule are recorded here; the analyzer reports them as diagnostics).
struct build_error {
  std::string_view rule;
  std::string_view message;
  long long value = 0;
  src_loc loc;
};

// Builder messages end in "(value: what the value is)"; a report shows the value there, "(what the value is: N)".
struct value_note {
  std::string_view head, what;  // the message before the note, and what the value is (empty: no note)
};
constexpr value_note split_value_note(std::string_view message) {
  const auto at = message.rfind("(value: ");
  if (at == std::string_view::npos || message.empty() || message.back() != ')') return {message, {}};
  return {message.substr(0, at), message.substr(at + 8, message.size() - at - 9)};
}

namespace capacity {
inline constexpr std::size_t dims = 10, tensors = 12, scalars = 8, smem = 16, tmem = 4, mbarriers = 16,
                             named_barriers = 8, pipelines = 4, roles = 6, regs = 20, tile_refs = 64,
                             ops = 160, errors = 8, loops = 32, exprs = 192;
}

struct program {
  name kernel_name;
  target_id target = target_id::sm_90a;
  launch_decl launch{};
  iteration_space space{};
  static_vector<dim_decl, capacity::dims> dims;
  static_vector<tensor_param, capacity::tensors> tensors;
  static_vector<scalar_param, capacity::scalars> scalars;
  static_vector<smem_region, capacity::smem> smem;
  static_vector<tmem_region, capacity::tmem> tmem;
  static_vector<mbarrier_decl, capacity::mbarriers> mbarriers;
  static_vector<named_barrier_decl, capacity::named_barriers> named_barriers;
  static_vector<pipeline_decl, capacity::pipelines> pipelines;
  static_vector<role_decl, capacity::roles> roles;
  static_vector<reg_decl, capacity::regs> regs;
  static_vector<global_tile_ref, capacity::tile_refs> tile_refs;
  static_vector<op, capacity::ops> ops;
  static_vector<loop_bound, capacity::loops> loops;  // bounds of dynamic loops (op::imm[1] indexes them)
  static_vector<expr_node, capacity::exprs> exprs;   // expression nodes of elementwise / when ops
  static_vector<build_error, capacity::errors> errors;
  int errors_dropped = 0;  // build errors beyond the capacity of `errors` (counted, never silently lost)
  src_loc loc;

  constexpr const target_info& arch() const { return target_of(target); }
  constexpr bool has_space() const { return space.count > 0; }

  constexpr int block_threads() const {
    int t = 0;
    for (const auto& r : roles) t += r.threads();
    return t;
  }
  constexpr int find_dim(std::string_view n) const {
    for (std::size_t i = 0; i < dims.size(); ++i)
      if (dims[i].nm == n) return static_cast<int>(i);
    return -1;
  }
  // The parallel axis that walks a dim, -1 if none.
  constexpr int axis_of_dim(int dim) const {
    for (int i = 0; i < space.count; ++i)
      if (space.axes[i].kind != axis_kind::split && space.axes[i].dim == dim) return i;
    return -1;
  }
  // Whether the parallel space (a tiles/each axis) or a dynamic loop's bounds (tiles(dim, b), or a bound
  // that reads the dim's extent) walk dim `d`: the launch must then know its extent (ir.dim-unsized).
  constexpr bool walks_dim(int d) const {
    for (int a = 0; a < space.count; ++a)
      if (space.axes[a].kind != axis_kind::split && space.axes[a].dim == d) return true;
    for (const auto& b : loops)
      if (b.walks_dim(d)) return true;
    return false;
  }
  // Whether a loop op is dynamic with bounds in `loops` (false for a static loop or a malformed index).
  // Code that runs in constant evaluation asks this rather than comparing bound_of() with nullptr: g++ 12
  // does not treat that comparison as a constant expression when the Program is a temporary.
  constexpr bool has_bound(int loop_op) const {
    const op& o = ops[loop_op];
    return o.kind == op_kind::loop && !o.has(flag_static_trip) && o.imm[1] >= 0 && o.imm[1] < static_cast<int>(loops.size());
  }
  // The bounds of a dynamic loop op (nullptr for a static loop or a malformed index).
  constexpr const loop_bound* bound_of(int loop_op) const { return has_bound(loop_op) ? &loops[ops[loop_op].imm[1]] : nullptr; }
  // Ops of the body of a control op, or of a role (parent == -1): iterate i from first to end.
  constexpr bool inside(int op_id, int ancestor) const {
    for (int p = ops[op_id].parent; p >= 0; p = ops[p].parent)
      if (p == ancestor) return true;
    return false;
  }
  constexpr int depth(int op_id) const {
    int d = 0;
    for (int p = ops[op_id].parent; p >= 0; p = ops[p].parent) ++d;
    return d;
  }
  constexpr bool is_control(op_kind k) const { return k == op_kind::loop || k == op_kind::tile_loop || k == op_kind::when; }
  // The register tiles an op reads: its source operands, the leaves of its expression, the destination
  // of an accumulating reduction. f(operand) is called once per mention.
  template <class F>
  constexpr void reg_reads(int op_id, F&& f) const {
    const op& o = ops[op_id];
    auto reg = [&](int index) {
      operand x;
      x.kind = operand_kind::reg;
      x.index = static_cast<std::uint8_t>(index);
      f(x);
    };
    switch (o.kind) {
      case op_kind::elementwise:
        for (int i = o.imm[0]; i < o.imm[0] + o.imm[1] && i < static_cast<int>(exprs.size()); ++i)
          if (exprs[i].fn == math_fn::tile) reg(exprs[i].ref);
        return;
      case op_kind::when: return;
      case op_kind::reduce_rows:
      case op_kind::arg_reduce_rows:
        if (o.has(flag_expr_src)) {  // every tile leaf of the expression (the lead leaf o.a among them)
          for (int i = o.expr_first(); i < o.expr_first() + o.expr_count() && i < static_cast<int>(exprs.size()); ++i)
            if (exprs[i].fn == math_fn::tile) reg(exprs[i].ref);
        } else if (o.a.kind == operand_kind::reg) {
          f(o.a);
        }
        if (o.has(flag_accumulate)) {
          if (o.d.kind == operand_kind::reg) f(o.d);
          if (o.kind == op_kind::arg_reduce_rows && o.b.kind == operand_kind::reg) f(o.b);
        }
        return;
      case op_kind::cluster_reduce:
        if (o.d.kind == operand_kind::reg) f(o.d);
        return;
      case op_kind::topk_rows:  // the source (or the expression's leaves), the index tile, and the state it folds into
        if (o.has(flag_expr_src)) {
          for (int i = o.expr_first(); i < o.expr_first() + o.expr_count() && i < static_cast<int>(exprs.size()); ++i)
            if (exprs[i].fn == math_fn::tile) reg(exprs[i].ref);
        } else if (o.a.kind == operand_kind::reg) {
          f(o.a);
        }
        if (o.b.kind == operand_kind::reg) f(o.b);
        if (o.d.kind == operand_kind::reg) f(o.d);
        return;
      case op_kind::topk_init: return;
      case op_kind::load_global:  // r.load_add: the destination is read too
        if (o.has(flag_accumulate) && o.d.kind == operand_kind::reg) f(o.d);
        return;
      case op_kind::topk_store:
        if (o.a.kind == operand_kind::reg) f(o.a);
        return;
      case op_kind::mma_sync:
      case op_kind::wgmma:
        if (o.a.kind == operand_kind::reg) f(o.a);
        if (o.b.kind == operand_kind::reg) f(o.b);
        return;
      default:
        if (o.a.kind == operand_kind::reg) f(o.a);
        if (o.b.kind == operand_kind::reg) f(o.b);
        return;
    }
  }
  // The register tiles an op writes (destinations; an argmin's index vector too).
  template <class F>
  constexpr void reg_writes(int op_id, F&& f) const {
    const op& o = ops[op_id];
    if (o.d.kind == operand_kind::reg) f(o.d);
    if (o.kind == op_kind::arg_reduce_rows && o.b.kind == operand_kind::reg) f(o.b);
    if (o.kind == op_kind::topk_store && o.a.kind == operand_kind::reg) f(o.a);  // merges pending candidates first
  }
  // Total smem bytes of a pipeline stage (all carried regions).
  constexpr int pipeline_stage_bytes(int pipe) const {
    int b = 0;
    for (int i = 0; i < pipelines[pipe].carried_count; ++i)
      if (!pipelines[pipe].carried_tmem[i]) b += smem[pipelines[pipe].carried[i]].bytes_per_stage();
    return b;
  }
};

}  // namespace cake
