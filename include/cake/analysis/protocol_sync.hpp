#pragma once
// Barrier semantics of the protocol executor: mbarrier phases (arrivals, tx bytes, parity waits with
// the aliasing check, manual initialization and its fences), named barriers and the cluster barrier.
#include "protocol_machine.hpp"

namespace cake::analysis::proto {

// The mbarrier object an operand names (user barrier element), or -1 after reporting a bad index.
constexpr int user_object(machine& m, int u, int id, const operand& o) {
  if (o.kind != operand_kind::mbarrier) return -1;
  const auto& decl = m.p.mbarriers[o.index];
  const long long e = m.eval(u, o.stage);
  if (e < 0 || e >= decl.count) {
    if (diagnostic* d = emit_op(m.c, rule_id::memory_stage_index, id)) {
      d->message << "barrier index " << e << " into '" << decl.nm.view() << "', an array of " << decl.count;
      d->num("index", e).num("count", decl.count);
      d->add_note(decl.loc) << "'" << decl.nm.view() << "' declared here";
    }
    return -1;
  }
  return m.B.user_base[o.index] + static_cast<int>(e);
}

constexpr void complete_phases(machine& m, int obj) {
  barrier_state& bs = m.bars[obj];
  for (int guard = 0; guard < 4 && bs.initialized && bs.init_count > 0 && bs.pending <= 0 && bs.tx == 0; ++guard) {
    ++bs.completed;
    int* done = m.bar_done(obj);
    int* acc = m.bar_acc(obj);
    for (int i = 0; i < m.C; ++i) done[i] = acc[i], acc[i] = 0;
    done[m.U + obj] = bs.completed;
    bs.pending += bs.init_count;
    bs.phase_expected = bs.phase_delivered = 0;
    bs.phase_arrived = 0;
  }
}

// Manual initialization: a use must be ordered after the init; the async proxy and other CTAs also
// need fence.mbarrier_init (and, across the cluster, a cluster barrier after it).
constexpr void check_ready(machine& m, int u, int obj, int id, bool async_use, bool remote_use) {
  const auto& ob = m.B.objects[obj];
  if (!m.manual || ob.origin != plan::barrier_origin::user || !m.has_init[ob.source]) return;
  barrier_state& bs = m.bars[obj];
  const auto& decl = m.p.mbarriers[ob.source];
  if (!bs.initialized || (bs.init_unit != u && !m.sees(u, {bs.init_unit, bs.init_clock}))) {
    if (diagnostic* d = emit_op(m.c, rule_id::sync_uninitialized_barrier, id)) {
      d->message << "this op uses ";
      write_barrier_object(d->message, m.p, m.B, obj);
      d->message << (bs.initialized ? " before its init is ordered before it" : " before any init of it ran");
      if (bs.init_op >= 0) d->add_note(m.p.ops[bs.init_op].loc) << "initialized here";
      else d->add_note(decl.loc) << "'" << decl.nm.view() << "' declared here";
      d->help << "initialize first, then fence_mbarrier_init and a barrier (cluster_sync) that every user passes";
    }
    return;
  }
  const bool fenced = bs.fence.valid() && m.sees(u, bs.fence);
  const bool cluster_ok = !remote_use || m.cluster < 2 || (bs.visible_gen >= 0 && m.units[u].cluster_passed > bs.visible_gen);
  if ((async_use || (remote_use && m.cluster > 1)) && (!fenced || !cluster_ok)) {
    if (diagnostic* d = emit_op(m.c, rule_id::sync_missing_fence_mbarrier_init, id)) {
      write_barrier_object(d->message, m.p, m.B, obj);
      d->message << " is used by " << (remote_use ? "another CTA" : "the async proxy") << " here, but "
                 << (!fenced ? "no fence.mbarrier_init after its init is ordered before this use" : "no cluster barrier after its fence is");
      if (bs.init_op >= 0) d->add_note(m.p.ops[bs.init_op].loc) << "initialized here";
      d->help << "after the inits: r.fence_mbarrier_init(); r.cluster_sync(); and cluster_sync in every role before first use";
    }
  }
}

constexpr void arrive(machine& m, int u, int obj, int count, int id, bool tc_commit) {
  barrier_state& bs = m.bars[obj];
  m.join(m.bar_acc(obj), m.vc(u));
  const unit_state& s = m.units[u];
  if (tc_commit && s.tc_agent >= 0 && m.bar_acc(obj)[s.tc_agent] < s.tc_issued) m.bar_acc(obj)[s.tc_agent] = s.tc_issued;
  bs.pending -= count;
  bs.last_arrive_op = id;
  bs.phase_arrived |= 1u << u;
  complete_phases(m, obj);
}

constexpr void expect(machine& m, int obj, int bytes, int id) {
  barrier_state& bs = m.bars[obj];
  bs.tx += bytes;
  bs.phase_expected += bytes;
  bs.last_expect_op = id;
  complete_phases(m, obj);
}

constexpr void deliver(machine& m, int obj, int bytes, int id) {
  barrier_state& bs = m.bars[obj];
  bs.tx -= bytes;
  bs.phase_delivered += bytes;
  bs.last_tx_op = id;
  complete_phases(m, obj);
}

// Wait for phase `k` of barrier object `obj` (k = -1: a fresh barrier, which passes). Returns false while
// the phase has not completed. A barrier two or more phases ahead makes the parity ambiguous.
constexpr bool wait_phase(machine& m, int u, int obj, int k, int id) {
  barrier_state& bs = m.bars[obj];
  unit_state& s = m.units[u];
  if (bs.completed <= k) {
    s.blocked = block_kind::mbarrier;
    s.blocked_obj = obj;
    s.blocked_phase = k;
    return false;
  }
  s.blocked = block_kind::none;
  if (bs.completed >= k + 2) {
    if (diagnostic* d = emit_op(m.c, rule_id::sync_phase_aliasing, id)) {
      m.write_unit(d->message, u);
      d->message << " waits for phase " << k << " of ";
      write_barrier_object(d->message, m.p, m.B, obj);
      d->message << ", but " << bs.completed << " phases have completed: a parity wait cannot tell phase " << k << " from phase " << k + 2;
      d->num("waited_phase", k).num("completed_phases", bs.completed);
      if (bs.last_arrive_op >= 0) d->add_note(m.p.ops[bs.last_arrive_op].loc) << "the arriving side ran ahead here";
      d->help << "make the arriving side wait for this one (a second barrier in the other direction, or a pipeline)";
    }
  }
  if (k >= 0) m.join(m.vc(u), m.bar_done(obj));
  s.tc_after_needed = true;
  return true;
}

// bar.sync (wait = true) and bar.arrive on a named-barrier instance; also the cluster barrier.
constexpr bool named_sync(machine& m, int u, int inst, bool wait) {
  named_state& n = m.named[inst];
  unit_state& s = m.units[u];
  if (s.sync_inst != inst) {
    m.join(m.named_acc(inst), m.vc(u));
    n.arrived += s.threads;
    s.sync_inst = inst;
    s.sync_gen = n.gen;
    if (n.expected > 0 && n.arrived >= n.expected) {
      ++n.gen;
      int* done = m.named_done(inst);
      int* acc = m.named_acc(inst);
      for (int i = 0; i < m.C; ++i) done[i] = acc[i], acc[i] = 0;
      n.arrived -= n.expected;
    }
  }
  if (!wait) {
    s.sync_inst = -1;
    return true;
  }
  if (n.gen <= s.sync_gen) {
    s.blocked = inst == m.cluster_inst ? block_kind::cluster : block_kind::named;
    s.blocked_obj = inst;
    return false;
  }
  s.blocked = block_kind::none;
  m.join(m.vc(u), m.named_done(inst));
  s.sync_inst = -1;
  s.tc_after_needed = true;
  return true;
}

}  // namespace cake::analysis::proto
