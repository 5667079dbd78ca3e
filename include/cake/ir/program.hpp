#pragma once
// The Program: one plain constexpr value holding everything a schedule declared. The analyzer, the cost
// model and lowering all read it (through the derivations in plan/); nothing else is passed around.
#include <cstdint>
#include <string_view>

#include "../core/static_vector.hpp"
#include "../target/targets.hpp"
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

namespace capacity {
inline constexpr std::size_t dims = 8, tensors = 8, scalars = 8, smem = 16, tmem = 4, mbarriers = 16,
                             named_barriers = 8, pipelines = 4, roles = 6, regs = 16, tile_refs = 48,
                             ops = 160, errors = 8, loops = 32;
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
  // Total smem bytes of a pipeline stage (all carried regions).
  constexpr int pipeline_stage_bytes(int pipe) const {
    int b = 0;
    for (int i = 0; i < pipelines[pipe].carried_count; ++i)
      if (!pipelines[pipe].carried_tmem[i]) b += smem[pipelines[pipe].carried[i]].bytes_per_stage();
    return b;
  }
};

}  // namespace cake
