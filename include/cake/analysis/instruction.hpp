#pragma once
// Instruction pass: every op, flag and resource against the target's admission table, and MMA shapes
// per unit (target/ holds the shape rules; dtype_info holds the instruction K).
#include "../lower/support.hpp"
#include "compute.hpp"
#include "context.hpp"

namespace cake::analysis {

// M, N, K of an MMA as its operands give them (A: M x K, B: N x K after major-ness is applied).
struct mma_dims {
  int acc_rows = 0, acc_cols = 0;  // accumulator per unit (reg) or per TMEM part
  int a_m = 0, a_k = 0;
  int b_n = 0, b_k = 0;
};

constexpr mma_dims mma_dims_of(const program& p, const plan::kernel_plan& plan, int op_id) {
  const op& o = p.ops[op_id];
  mma_dims m;
  const auto acc = plan::shape_of(p, o.d);
  m.acc_rows = acc.rows, m.acc_cols = acc.cols;
  const auto a = plan::shape_of(p, o.a);
  const bool a_mn = o.a.kind == operand_kind::smem && plan::operand_major(plan.dims, op_id, 0) == major::mn;
  m.a_m = a_mn ? a.cols : a.rows;
  m.a_k = a_mn ? a.rows : a.cols;
  const auto b = plan::shape_of(p, o.b);
  const bool b_mn = o.b.kind == operand_kind::smem && plan::operand_major(plan.dims, op_id, 1) == major::mn;
  m.b_n = b_mn ? b.cols : b.rows;
  m.b_k = b_mn ? b.rows : b.cols;
  return m;
}

namespace detail {

constexpr void not_admitted(context& c, int op_id, feature f, std::string_view what) {
  if (diagnostic* d = emit_op(c, rule_id::instruction_not_admitted, op_id)) {
    d->message << what << " needs " << to_string(f) << ", which " << to_string(c.p.target) << " does not have";
    d->help << "retarget the kernel (k.target(...)) or use an op the target has";
  }
}

}  // namespace detail

constexpr void check_admission(context& c) {
  const program& p = c.p;
  const auto& t = p.arch();
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    const int id = static_cast<int>(i);
    const feature f = info(o.kind).needs;
    if (f != feature::count_ && !t.admitted(f)) detail::not_admitted(c, id, f, to_string(o.kind));
    // Dtypes of register compute and the shapes of moves have their own rules (compute.hpp): one report.
    else if (const char* why = lower::unsupported(p, c.plan, id); why && compute_dtype_problem(p, id).reg < 0 && !move_shapes_differ(p, id))
      if (diagnostic* d = emit_op(c, rule_id::instruction_not_lowered, id)) {
        d->message << to_string(o.kind) << " on " << to_string(p.target) << ": " << why;
        d->help << "see the lowered column of docs/language.md; rewrite the op in a lowered form or retarget the kernel";
      }
    if (o.has(flag_multicast) && !t.admitted(feature::tma_multicast)) detail::not_admitted(c, id, feature::tma_multicast, "a multicast load");
    if (o.has(flag_remote) && !t.admitted(feature::cluster)) detail::not_admitted(c, id, feature::cluster, "a remote arrive");
    if ((o.has(flag_multicast) || o.has(flag_remote)) && p.launch.cluster_size() < 2 && t.admitted(feature::cluster)) {
      if (diagnostic* d = emit_op(c, rule_id::instruction_multicast_without_cluster, id)) {
        d->message << (o.has(flag_multicast) ? "a multicast load" : "a remote arrive") << " in a kernel whose cluster has "
                   << p.launch.cluster_size() << " CTA";
        d->num("cluster_size", p.launch.cluster_size());
        d->help << "declare a cluster, e.g. k.cluster(2), or drop ." << (o.has(flag_multicast) ? "multicast()" : "remote()");
      }
    }
    // The builder refuses a cluster_sum / cluster_max without a cluster under the same id; re-checked for edited Programs.
    if (o.kind == op_kind::cluster_reduce && p.launch.cluster_size() < 2 && t.admitted(feature::cluster)) {
      if (diagnostic* d = emit_op(c, rule_id::instruction_multicast_without_cluster, id)) {
        d->message << cluster_reduce_call(o) << " of '" << resource_name(p, o.d) << "' reduces over the CTAs of the cluster, but the kernel's cluster has "
                   << p.launch.cluster_size() << " CTA";
        d->num("cluster_size", p.launch.cluster_size());
        d->help << "declare the cluster the reduction runs over, e.g. k.cluster(4), or drop the " << cluster_reduce_call(o);
      }
    }
  }
  for (std::size_t i = 0; i < p.roles.size(); ++i)
    if (p.roles[i].regs && !t.admitted(feature::setmaxnreg))
      if (diagnostic* d = emit_decl(c, rule_id::instruction_not_admitted, p.roles[i].loc, static_cast<int>(i))) {
        d->message << "regs(" << p.roles[i].regs << ") of role '" << p.roles[i].nm.view() << "' needs setmaxnreg, which "
                   << to_string(p.target) << " does not have";
        d->help << "drop regs(n): the compiler assigns registers on this target";
      }
  if (p.launch.cluster_size() > 1 && !t.admitted(feature::cluster))
    if (diagnostic* d = emit_decl(c, rule_id::instruction_not_admitted, p.loc)) {
      d->message << "a cluster of " << p.launch.cluster_size() << " CTAs needs clusters, which " << to_string(p.target) << " does not have";
      d->num("cluster_size", p.launch.cluster_size());
    }
  if (!p.tmem.empty() && !t.admitted(feature::tcgen05))
    if (diagnostic* d = emit_decl(c, rule_id::instruction_tmem_off_sm100a, p.tmem[0].loc)) {
      d->message << "tensor memory '" << p.tmem[0].nm.view() << "' is declared, but " << to_string(p.target) << " has no tensor memory";
      d->help << "keep the accumulator in registers (r.accumulator<...>) on this target";
    }
}

constexpr void check_mma(context& c) {
  const program& p = c.p;
  const auto& t = p.arch();
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (!is_mma(o.kind)) continue;
    const int id = static_cast<int>(i);
    const auto& role = p.roles[o.role];
    const mma_dims m = mma_dims_of(p, c.plan, id);
    const dtype adt = plan::dtype_of(p, o.a), bdt = plan::dtype_of(p, o.b);
    if (adt != bdt)
      if (diagnostic* d = emit_op(c, rule_id::instruction_mma_dtype_mismatch, id)) {
        d->message << "A is " << to_string(adt) << " but B is " << to_string(bdt) << "; an MMA takes one operand dtype";
      }
    if (o.kind == op_kind::wgmma) {
      if (role.unit != role_unit::warpgroup)
        if (diagnostic* d = emit_op(c, rule_id::instruction_wgmma_unit, id)) {
          d->message << "wgmma is issued by warpgroups; role '" << role.nm.view() << "' is declared with warps(" << role.count << ")";
          d->help << "declare the role with warpgroups(n)";
        }
      const bool i8_n = adt == dtype::i8 && m.acc_cols > 32 && m.acc_cols % 16;  // i8: N 8..32 by 8, then by 16
      if (t.admitted(feature::wgmma) && (m.acc_rows % 64 || m.acc_rows == 0 || !mma_shape_legal(t, unit_wgmma, 64, m.acc_cols) || i8_n))
        if (diagnostic* d = emit_op(c, rule_id::instruction_mma_shape, id)) {
          d->message << "wgmma accumulator " << m.acc_rows << 'x' << m.acc_cols
                     << " per warpgroup: rows must be a multiple of 64 and N (columns) 8..256 in steps of 8 (16 above 32 for i8)";
          d->num("m", m.acc_rows).num("n", m.acc_cols);
        }
      for (const operand* x : {&o.a, &o.b})
        if (x->kind == operand_kind::smem && plan::operand_major(c.plan.dims, id, x == &o.a ? 0 : 1) == major::mn && !is_16bit_float(p.smem[x->index].dt))
          if (diagnostic* d = emit_op(c, rule_id::instruction_wgmma_major, id)) {
            d->message << "'" << p.smem[x->index].nm.view() << "' is " << to_string(p.smem[x->index].dt)
                       << " and mn-major; wgmma transposes only f16/bf16 operands";
            d->add_note(p.smem[x->index].loc) << "'" << p.smem[x->index].nm.view() << "' declared here";
            d->help << "store the tile K-major (major::k), transposing when it is loaded";
          }
    } else if (o.kind == op_kind::mma_sync) {
      if (role.unit != role_unit::warp)
        if (diagnostic* d = emit_op(c, rule_id::instruction_mma_sync_unit, id)) {
          d->message << "mma_sync is issued per warp; role '" << role.nm.view() << "' is declared with warpgroups(" << role.count << ")";
          d->help << "declare the role with warps(n)";
        }
      if (m.acc_rows % 16 || m.acc_cols % 8 || m.acc_rows == 0 || m.acc_cols == 0)
        if (diagnostic* d = emit_op(c, rule_id::instruction_mma_shape, id)) {
          d->message << "mma.sync accumulator " << m.acc_rows << 'x' << m.acc_cols << " per warp is not a multiple of 16x8";
          d->num("m", m.acc_rows).num("n", m.acc_cols);
        }
    } else {
      if (t.admitted(feature::tcgen05) && !mma_shape_legal(t, unit_tcgen05, m.a_m, m.b_n))
        if (diagnostic* d = emit_op(c, rule_id::instruction_mma_shape, id)) {
          d->message << "tcgen05.mma cta_group::1 shape M=" << m.a_m << " N=" << m.b_n << ": M must be 64 or 128 and N 8..256 in steps of 8";
          d->num("m", m.a_m).num("n", m.b_n);
        }
      const bool partitioned = op_uses_var(o.d, var_kind::warp) || op_uses_var(o.d, var_kind::warpgroup);
      if (role.count > 1 && !partitioned)
        if (diagnostic* d = emit_op(c, rule_id::instruction_tcgen05_single_issuer, id)) {
          d->message << "role '" << role.nm.view() << "' has " << role.count << " units; each would issue this tcgen05.mma into the same accumulator";
          d->num("units", role.count);
          d->help << "issue tcgen05.mma from a role of one warp";
        }
    }
    const int k_step = info(adt).mma_k;
    if (k_step > 0 && (m.a_k % k_step || m.a_k == 0))
      if (diagnostic* d = emit_op(c, rule_id::instruction_mma_k, id)) {
        d->message << "the K extent " << m.a_k << " is not a multiple of the " << to_string(adt) << " instruction K " << k_step;
        d->num("k", m.a_k).num("instruction_k", k_step);
        d->help << "make the K tile a multiple of " << k_step;
      }
  }
}

constexpr void check_instruction(context& c) {
  check_admission(c);
  check_mma(c);
}

}  // namespace cake::analysis
