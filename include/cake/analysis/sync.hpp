#pragma once
// Sync pass (the static part): facts about barriers that hold whatever the interleaving: waits on
// remote barriers, named-barrier thread counts vs the roles that use them, barriers initialized twice or
// never, init counts vs declarations, TMA loads with nothing to complete on. Phase-by-phase behaviour
// (arrivals, tx bytes, parity, deadlock) is the protocol executor's job (protocol.hpp).
#include "context.hpp"

namespace cake::analysis {

namespace detail {

constexpr bool uses_mbarrier(const op& o, int b) {
  if (o.d.kind == operand_kind::mbarrier && o.d.index == b) return true;
  return o.kind == op_kind::tma_load && o.b.kind == operand_kind::mbarrier && o.b.index == b;
}

}  // namespace detail

constexpr void check_sync_static(context& c) {
  const program& p = c.p;
  const bool manual = p.launch.manual_barrier_init;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    const int id = static_cast<int>(i);
    // A slot names the stage of the trip of the body that acquired (or waited for) it: an op outside that
    // body (after its loop, in another branch) has no such trip, and the generated code no such variable.
    for (const operand* x : {&o.d, &o.a, &o.b}) {
      if (x->sel != stage_sel::slot || x->slot_op >= p.ops.size() || x->slot_op >= i) continue;
      const int body = p.ops[x->slot_op].parent;  // -1: the role's top level
      bool inside = body < 0;
      for (int a = o.parent; a >= 0 && !inside; a = p.ops[a].parent) inside = a == body;
      if (inside) continue;
      if (diagnostic* d = emit_op(c, rule_id::sync_slot_scope, id)) {
        d->message << "slot#" << x->slot_op << " of '" << resource_name(p, p.ops[x->slot_op].d) << "' is used here, outside the "
                   << to_string(p.ops[body].kind) << " body (op#" << body << ") whose trip acquired it";
        d->num("slot_op", x->slot_op).num("body_op", body);
        d->add_note(p.ops[x->slot_op].loc) << "the slot comes from this op, inside op#" << body;
        d->add_note(p.ops[body].loc) << "the body starts here";
        d->help << "use the slot inside that body (release it there too), or acquire / wait where it is used";
      }
      break;
    }
    if (o.has(flag_remote) && (o.kind == op_kind::mbarrier_wait || o.kind == op_kind::pipeline_wait || o.kind == op_kind::pipeline_acquire))
      if (diagnostic* d = emit_op(c, rule_id::sync_remote_wait, id)) {
        d->message << "a wait on '" << resource_name(p, o.d) << "' of another CTA: a thread can only wait on barriers of its own CTA";
        d->help << "wait on the local barrier and let the other CTA arrive on it remotely (.remote() on the arrive)";
      }
    if (o.kind == op_kind::tma_load && o.b.kind != operand_kind::mbarrier && o.d.sel != stage_sel::slot)
      if (diagnostic* d = emit_op(c, rule_id::sync_tma_no_barrier, id)) {
        d->message << "this TMA load into '" << resource_name(p, o.d) << "' completes on no mbarrier, so nothing can wait for its bytes";
        d->help << "load into a pipeline slot (s[" << resource_name(p, o.d) << "]) or pass the barrier: r.tma_load(dst, src, bar)";
      }
    if (o.kind == op_kind::mbarrier_init && !manual)
      if (diagnostic* d = emit_op(c, rule_id::sync_double_init, id)) {
        d->message << "'" << resource_name(p, o.d) << "' is initialized by Cake at kernel start; initializing it again re-arms a live barrier";
        d->help << "drop the init, or call k.manual_barrier_init() and initialize every barrier yourself";
      }
    if (o.kind == op_kind::mbarrier_init && manual) {
      const auto& b = p.mbarriers[o.d.index];
      if (b.arrivals && b.arrivals != o.imm[0])
        if (diagnostic* d = emit_op(c, rule_id::sync_arrival_count, id)) {
          d->message << "'" << b.nm.view() << "' is declared with arrivals(" << b.arrivals << ") but initialized with count " << o.imm[0];
          d->num("declared", b.arrivals).num("init_count", o.imm[0]);
          d->add_note(b.loc) << "'" << b.nm.view() << "' declared here";
          d->help << "initialize with the declared count, or declare arrivals(" << o.imm[0] << ")";
        }
      if (o.imm[0] < 1 || o.imm[0] >= (1 << 20))
        if (diagnostic* d = emit_op(c, rule_id::sync_arrival_count, id)) {
          d->message << "init count " << o.imm[0] << " is outside 1..2^20-1";
          d->num("init_count", o.imm[0]);
        }
    }
  }
  // tcgen05.commit tracks the MMAs of the thread that issues it: from a role that issues none, while
  // another role issues them, it tracks nothing.
  int mma_role = -1;
  for (const auto& o : p.ops)
    if (o.kind == op_kind::tcgen05_mma) mma_role = o.role;
  for (std::size_t i = 0; i < p.ops.size() && mma_role >= 0; ++i) {
    const op& o = p.ops[i];
    bool tracks_mma = o.kind == op_kind::tcgen05_commit;
    if (o.kind == op_kind::pipeline_commit) {
      // a commit completes the stage for its consumers: does another role's MMA write that stage?
      const auto& pl = p.pipelines[o.d.index];
      for (const auto& w : p.ops)
        if (w.kind == op_kind::tcgen05_mma && w.role != o.role)
          for (int k = 0; k < pl.carried_count; ++k)
            if (pl.carried_tmem[k] && w.d.kind == operand_kind::tmem && w.d.index == pl.carried[k]) tracks_mma = true;
    }
    if (!tracks_mma || role_uses(p, o.role, op_kind::tcgen05_mma)) continue;
    if (diagnostic* d = emit_op(c, rule_id::sync_tcgen05_commit_issuer, static_cast<int>(i))) {
      d->message << "role '" << p.roles[o.role].nm.view() << "' issues no tcgen05.mma, so this commit tracks none of the MMAs role '"
                 << p.roles[mma_role].nm.view() << "' issues";
      for (std::size_t j = 0; j < p.ops.size(); ++j)
        if (p.ops[j].kind == op_kind::tcgen05_mma) {
          d->add_note(p.ops[j].loc) << "the MMA (op#" << j << ")";
          break;
        }
      d->help << "commit from the role (the thread) that issues the MMAs";
    }
  }
  // Barriers that are waited on but that nothing arrives on, and (manual mode) barriers without init.
  for (std::size_t b = 0; b < p.mbarriers.size(); ++b) {
    int first_use = -1, first_wait = -1, first_async = -1, inits = 0, fences = 0;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const op& o = p.ops[i];
      if (o.kind == op_kind::fence_mbarrier_init) ++fences;
      if (!detail::uses_mbarrier(o, static_cast<int>(b))) continue;
      if (o.kind == op_kind::mbarrier_init) {
        ++inits;
        continue;
      }
      if (first_use < 0) first_use = static_cast<int>(i);
      if (o.kind == op_kind::mbarrier_wait && first_wait < 0) first_wait = static_cast<int>(i);
      if ((o.kind == op_kind::tma_load || o.kind == op_kind::tcgen05_commit || o.has(flag_remote)) && first_async < 0) first_async = static_cast<int>(i);
    }
    const auto& decl = p.mbarriers[b];
    if (first_wait >= 0 && decl.arrivals == 0 && plan::derived_user_arrivals(p, static_cast<int>(b)) == 0)
      if (diagnostic* d = emit_op(c, rule_id::sync_arrival_count, first_wait)) {
        d->message << "nothing arrives on '" << decl.nm.view() << "' (no arrive, arrive_expect_tx or tcgen05_commit), so this wait never returns";
        d->num("arrivals", 0);
        d->add_note(decl.loc) << "'" << decl.nm.view() << "' declared here with derived arrivals";
        d->help << "arrive on it from the role that produces what this wait guards";
      }
    if (!manual || first_use < 0) continue;
    if (inits == 0) {
      if (diagnostic* d = emit_op(c, rule_id::sync_uninitialized_barrier, first_use)) {
        d->message << "with manual_barrier_init, '" << decl.nm.view() << "' is used but never initialized";
        d->add_note(decl.loc) << "'" << decl.nm.view() << "' declared here";
        d->help << "add r.init(" << decl.nm.view() << ", count) in one role, then fence_mbarrier_init and cluster_sync in every role";
      }
    } else if (fences == 0 && first_async >= 0) {
      if (diagnostic* d = emit_op(c, rule_id::sync_missing_fence_mbarrier_init, first_async)) {
        d->message << "'" << decl.nm.view() << "' is used by the async proxy (TMA / tcgen05.commit) or another CTA, but no fence.mbarrier_init"
                   << " makes its init visible there";
        d->help << "after the inits: r.fence_mbarrier_init(); r.cluster_sync(); (and cluster_sync in every other role)";
      }
    }
  }
  // Named barriers: a declared thread count must match the threads of the roles that use it.
  for (std::size_t b = 0; b < p.named_barriers.size(); ++b) {
    const auto& nb = p.named_barriers[b];
    if (nb.per_unit || nb.threads == 0) continue;
    int threads = 0, first = -1;
    for (std::size_t r = 0; r < p.roles.size(); ++r) {
      bool used = false;
      for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const op& o = p.ops[i];
        if (o.role == r && o.d.kind == operand_kind::named_barrier && o.d.index == b) {
          used = true;
          if (first < 0) first = static_cast<int>(i);
        }
      }
      if (used) threads += p.roles[r].threads();
    }
    if (first < 0 || threads == nb.threads) continue;
    if (diagnostic* d = emit_decl(c, rule_id::sync_named_barrier_count, nb.loc)) {
      d->message << "named barrier '" << nb.nm.view() << "' is declared for " << nb.threads << " threads, but the roles that use it have " << threads;
      d->num("declared", nb.threads).num("participants", threads);
      for (std::size_t r = 0; r < p.roles.size(); ++r)
        for (const auto& o : p.ops)
          if (o.role == r && o.d.kind == operand_kind::named_barrier && o.d.index == b) {
            d->add_note(p.roles[r].loc) << "role '" << p.roles[r].nm.view() << "': " << p.roles[r].threads() << " threads";
            break;
          }
      d->help << "declare it without a count (derived: " << threads << ") or with threads(" << threads << ")";
    }
  }
}

}  // namespace cake::analysis
