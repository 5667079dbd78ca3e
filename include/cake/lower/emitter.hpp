#pragma once
// The emitter's state and the helpers every op uses: names of generated variables, index expressions
// as C++ text, shared-memory and barrier addresses, and error reporting. Op emission is in
// emit_ops.hpp, the kernel frame (prologue, role dispatch, loops, teardown) in emit_kernel.hpp.
//
// Everything physical comes from the plan (plan/*.hpp): this layer only spells it out.
#include <string>
#include <vector>

#include "../ir/printer.hpp"
#include "../ir/program.hpp"
#include "../plan/plan.hpp"
#include "args_layout.hpp"
#include "writer.hpp"

namespace cake::lower {

struct emit_options {
  // Values of specialized dims (program::dims with dim_mode::specialized), by dim index; baked into the
  // generated code. Dynamic dims are read from the parameter block.
  std::vector<std::pair<int, long long>> specialized;
  // When > 0, every mbarrier wait traps after this many nanoseconds and prints the op id: a schedule
  // that would hang becomes an error (used by tests and `cake run`).
  unsigned long long hang_timeout_ns = 0;
  // Run the analyzer first and refuse a Program it finds errors in (the diagnostics are returned).
  bool analyze = true;
  // How a CTA of a cluster leaves. drain (the default): where the only traffic between the CTAs is multicast
  // pipelines and cluster sums (no remote arrive or cluster barrier of the schedule's own), each producer of
  // such a pipeline waits until every stage has been released by the consumers of every CTA (their last
  // arrivals on this CTA's barriers; the last multicast into this CTA precedes its own consumers' releases), as
  // CUTLASS's producer tail does, a cluster sum's role waits until every peer has read its last sum, and a CTA
  // barrier (no GPU-wide fence, no cluster round trip) ends the kernel; elsewhere it falls back to the barrier.
  // barrier: a cluster barrier at the end (barrier.cluster.arrive.release + wait; every thread pays a GPU-wide
  // MEMBAR after its stores), 1.8% slower on the GEMM's clusters of 2 and 2.3% on its cluster split-K
  // (docs/lowering.md). CAKE_CLUSTER_EXIT overrides it for the kernels the runtime builds (jit/env.hpp).
  enum class exit_mode { barrier, drain };
  exit_mode cluster_exit = exit_mode::drain;
};

class emitter {
 public:
  emitter(const program& p, emit_options opt)
      : p_(p), opt_(std::move(opt)), plan_(plan::make_plan(p)), args_(make_args_layout(p, plan_.tma)), reg_ids_(unique_reg_ids(p)),
        pipe_ids_(unique_ids(p.pipelines, "pl_")), dim_ids_(unique_ids(p.dims, "d_")) {}

  const plan::kernel_plan& plan() const { return plan_; }
  const args_layout& args() const { return args_; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

 protected:
  const program& p_;
  emit_options opt_;
  plan::kernel_plan plan_;
  args_layout args_;
  writer w_;
  std::string error_;
  int role_ = -1;
  // A split tail's whole rounds (emit_tile_loop): outside an r.next_point body every point there is whole, so its part
  // variables are constants (var_text) and the C++ compiler folds the branches on them away
  bool whole_rounds_ = false;
  // C++ identifiers of the register tiles, pipelines and dims, unique in the scope their variables share.
  std::vector<std::string> reg_ids_, pipe_ids_, dim_ids_;

  // ---- errors ----------------------------------------------------------------------------------
  void fail(int op_id, const std::string& why) {
    if (!error_.empty()) return;
    const src_loc l = op_id >= 0 ? p_.ops[op_id].loc : p_.loc;
    error_ = std::string(l.file) + ":" + std::to_string(l.line) + ":" + std::to_string(l.column) + ": error: [lower.unsupported] " + why;
    if (op_id >= 0) error_ += "\n  at op#" + std::to_string(op_id) + " " + detail::op_text(p_, op_id);
  }

  // ---- names ------------------------------------------------------------------------------------
  static std::string ident(std::string_view s) {
    std::string r;
    for (char c : s) r += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
    return r;
  }
  // Names map to identifiers character by character, so two can meet: two register tiles of one role with
  // the same name (the builder checks names unique per kind, not register tiles per role), or names that
  // differ only where ident() writes '_' ("a.b", "a_b"). The later one gets its index appended; every other
  // identifier is the name's (the fuzzer's NVRTC pass found a role declaring r_frag twice).
  template <class Vec>
  static std::vector<std::string> unique_ids(const Vec& v, const std::string& prefix, int (*scope)(const Vec&, std::size_t) = nullptr) {
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto taken = [&](const std::string& id) {
        for (std::size_t j = 0; j < i; ++j)
          if (ids[j] == id && (!scope || scope(v, j) == scope(v, i))) return true;
        return false;
      };
      std::string id = prefix + ident(v[i].nm.view());
      if (taken(id)) id += "_" + std::to_string(i);
      while (taken(id)) id += "_";
      ids.push_back(std::move(id));
    }
    return ids;
  }
  static std::vector<std::string> unique_reg_ids(const program& p) {
    // (register tiles of different roles are declared in different blocks: the same identifier is fine)
    return unique_ids(p.regs, "r_", +[](const decltype(p.regs)& v, std::size_t i) { return static_cast<int>(v[i].role); });
  }
  std::string reg_name(int reg) const { return reg_ids_[static_cast<std::size_t>(reg)]; }
  std::string pipe_name(int pl) const { return pipe_ids_[static_cast<std::size_t>(pl)]; }
  std::string dim_name(int d) const { return dim_ids_[static_cast<std::size_t>(d)]; }
  static std::string slot_name(int op_id) { return "slot" + std::to_string(op_id); }
  static std::string value_var(int op_id) { return "iv" + std::to_string(op_id); }  // read_index / let_index
  // The id of this role's unit's named barrier, `first` + the unit's index, as PTX operand text. A role of one
  // unit names it as a constant: where an id is a register ptxas reserves all 16 of the CTA's barriers ("used 16
  // barriers"), which the block scheduler may count against the CTAs an SM holds at once.
  std::string unit_barrier_id(int first) const {
    return p_.roles[role_].count > 1 ? std::to_string(first) + "u + unit" : std::to_string(first) + "u";
  }
  std::string loop_var(int op_id) const { return (p_.ops[op_id].has(flag_static_trip) ? "i" : "k") + std::to_string(op_id); }

  // ---- index expressions ------------------------------------------------------------------------
  std::string var_text(const index_term& t) const {
    switch (t.kind) {
      case var_kind::tile_coord: return "ax" + std::to_string(t.ref);
      case var_kind::dim: return dim_name(t.ref);
      case var_kind::cta: return "(long long)blockIdx.x";
      case var_kind::elem_row: return "(long long)er";  // set by the element loop of a mask
      case var_kind::elem_col: return "(long long)ec";
      case var_kind::loop: return "(long long)" + loop_var(t.ref);
      case var_kind::warpgroup: return "(long long)warpgroup_in_role";
      case var_kind::warp: return "(long long)warp_in_role";
      case var_kind::cluster_rank: return "(long long)cta_rank";
      case var_kind::value: return value_var(t.ref);
      case var_kind::walk_step: return "(long long)t_step";  // emit_tile_loop defines both
      case var_kind::walk_steps: return "(long long)t_steps";
      // a split tail: of t_unit, t_whole and t_parts (emit_tile_loop, emit_point_coords); constants at a whole round's point
      case var_kind::walk_part: return whole_rounds_ ? "0LL" : "(long long)(t_unit >= t_whole ? (t_unit - t_whole) % t_parts : 0)";
      case var_kind::walk_parts: return whole_rounds_ ? "1LL" : "(long long)(t_unit >= t_whole ? t_parts : 1)";
      // (the extent from the dims, which live in the kernel's parameters, not in registers)
      case var_kind::part_begin: return whole_rounds_ ? "0LL" : "(t_unit >= t_whole ? (long long)((t_unit - t_whole) % t_parts) * (" + expr(p_.launch.tail_extent) + ") / t_parts : 0LL)";
      case var_kind::part_end:
        if (whole_rounds_) return "(" + expr(p_.launch.tail_extent) + ")";
        return "(t_unit >= t_whole ? (long long)((t_unit - t_whole) % t_parts + 1) * (" + expr(p_.launch.tail_extent) + ") / t_parts : (" + expr(p_.launch.tail_extent) + "))";
      case var_kind::tail_unit: return whole_rounds_ ? "0LL" : "(long long)(t_unit >= t_whole ? t_unit - t_whole : 0)";
      default: return "0";
    }
  }
  std::string expr(const index_expr& e) const {
    std::string s;
    for (int i = 0; i < e.term_count; ++i) {
      const auto& t = e.terms[i];
      std::string v = var_text(t);
      if (t.div != 1) v = "(" + v + " / " + std::to_string(t.div) + ")";
      if (t.mod != 0) v = "(" + v + " % " + std::to_string(t.mod) + ")";
      if (t.coef != 1) v = std::to_string(t.coef) + " * " + v;
      s += (s.empty() ? "" : " + ") + v;
    }
    if (e.constant != 0 || s.empty()) s += (s.empty() ? "" : " + ") + std::string("(") + std::to_string(e.constant) + ")";
    if (e.div != 1) s = "(" + s + ") / " + std::to_string(e.div);
    if (e.mod != 0) s = "(" + s + ") % " + std::to_string(e.mod);
    return "(" + s + ")";
  }

  // ---- shared memory ------------------------------------------------------------------------------
  // Byte offset (from the start of dynamic smem) of the stage an smem or TMEM operand names, as C++ text.
  std::string stage_index(const operand& o, int stages, int op_id) {
    switch (o.sel) {
      case stage_sel::slot: return slot_name(o.slot_op);
      case stage_sel::expr: return stages > 1 ? "(u32)(" + expr(o.stage) + " % " + std::to_string(stages) + ")" : "0u";
      default:
        if (stages > 1) fail(op_id, "a region with " + std::to_string(stages) + " stages is used without naming a stage");
        return "0u";
    }
  }
  std::string part_index(const operand& o) const { return o.part == part_axis::none ? "0" : "(u32)" + expr(o.part_index); }

  // smem + offset of (stage, part) of an smem operand.
  std::string smem_addr(const operand& o, int op_id) {
    const auto& slot = plan_.smem.regions[o.index];
    const int stride = plan::align_up(slot.bytes_per_stage, slot.alignment);
    std::string a = "smem + " + std::to_string(slot.offset) + "u";
    if (p_.smem[o.index].stages > 1) a += " + " + stage_index(o, p_.smem[o.index].stages, op_id) + " * " + std::to_string(stride) + "u";
    if (o.part != part_axis::none) {
      const int step = plan::part_offset_bytes(p_, o, 1);
      a += " + " + part_index(o) + " * " + std::to_string(step) + "u";
    }
    return "(" + a + ")";
  }

  // Address of a barrier object: a pipeline's full/empty barrier for a slot, or a user barrier element.
  std::string pipeline_barrier(int pl, bool full, const std::string& stage) const {
    const auto& pb = plan_.barriers.pipelines[pl];
    const int base = plan_.barriers.objects[full ? pb.full_base : pb.empty_base].offset;
    return "(smem + " + std::to_string(base) + "u + 8u * " + stage + ")";
  }
  std::string user_barrier(const operand& o) const {
    const int base = plan_.barriers.objects[plan_.barriers.user_base[o.index]].offset;
    if (p_.mbarriers[o.index].count == 1) return "(smem + " + std::to_string(base) + "u)";
    return "(smem + " + std::to_string(base) + "u + 8u * (u32)" + expr(o.stage) + ")";
  }

  // The swizzle applied to a byte offset inside one stage (hardware-facts §2: 16-byte chunk j of row y
  // goes to j ^ (y % 8) for 128B; the same XOR on address bits [4, 4+log2(span/16)) from bits [7, ...)).
  static std::string swizzled(swizzle s, const std::string& byte_offset) {
    switch (s) {
      case swizzle::b128: return "cake_swz<7u>(" + byte_offset + ")";
      case swizzle::b64: return "cake_swz<3u>(" + byte_offset + ")";
      case swizzle::b32: return "cake_swz<1u>(" + byte_offset + ")";
      default: return "(" + byte_offset + ")";
    }
  }

  // The TMEM base address written by tcgen05.alloc; read where used (ordered after the pipeline wait
  // or the allocating warp's own fences).
  std::string tmem_base() const { return "(*reinterpret_cast<volatile u32*>(cake_smem + " + std::to_string(plan_.smem.tmem_slot_offset) + "))"; }

  // ---- misc -------------------------------------------------------------------------------------------
  const role_decl& role_decl_() const { return p_.roles[role_]; }
  const plan::role_placement& placement() const { return plan_.warps.roles[role_]; }
  int cluster() const { return p_.launch.cluster_size(); }
  bool tensor_dim_known(int dim) const {
    for (const auto& [d, v] : opt_.specialized)
      if (d == dim) return true;
    return false;
  }
  void annotate(int op_id) {
    const op& o = p_.ops[op_id];
    w_.line("// @op " + std::to_string(op_id) + " " + std::string(o.loc.file) + ":" + std::to_string(o.loc.line) + "  " + detail::op_text(p_, op_id));
  }
  // Does the current role issue a tcgen05.mma that reads a stage of pipeline `pl`?
  bool role_mma_reads_pipeline(int pl) const {
    for (const auto& o : p_.ops)
      if (o.role == role_ && o.kind == op_kind::tcgen05_mma)
        for (const operand* x : {&o.a, &o.b})
          if (x->kind == operand_kind::smem && p_.smem[x->index].pipeline == pl) return true;
    return false;
  }
  bool role_issues_tcgen05() const {
    for (const auto& o : p_.ops)
      if (o.role == role_ && o.kind == op_kind::tcgen05_mma) return true;
    return false;
  }
};

}  // namespace cake::lower
