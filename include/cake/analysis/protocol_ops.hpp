#pragma once
// What each op does in the protocol executor. exec() returns false when the op cannot proceed yet (a
// wait whose phase has not completed); it is then retried when the unit is scheduled again, with no
// effect having happened.
#include "protocol_memory.hpp"

namespace cake::analysis::proto {

namespace detail {

// Do all units of the role write (their share of) this operand together? Not inside an alternating walk,
// where one unit runs each point, nor when the operand is selected by the unit's own index.
constexpr bool collective(const machine& m, int u, const operand& o) {
  const unit_state& s = m.units[u];
  for (int d = 0; d < s.depth; ++d)
    if (m.p.ops[s.stack[d].op].kind == op_kind::tile_loop && m.p.ops[s.stack[d].op].has(flag_alternate)) return false;
  return m.p.roles[s.role].count > 1 && !op_uses_var(o, var_kind::warp) && !op_uses_var(o, var_kind::warpgroup);
}

constexpr void tc_fence_after_check(machine& m, int u, int id) {
  unit_state& s = m.units[u];
  if (!s.tc_after_needed) return;
  s.tc_after_needed = false;
  if (diagnostic* d = emit_op(m.c, rule_id::sync_tcgen05_fence, id)) {
    d->message << "this tcgen05 op follows a thread synchronization without tcgen05_fence_after, so it may be ordered before it";
    d->help << "r.tcgen05_fence_after() right after the wait";
  }
}

// A thread synchronization that hands work to other threads: earlier tcgen05.ld/st need a fence before.
constexpr void tc_fence_before_check(machine& m, int u, int id, bool commit_like) {
  unit_state& s = m.units[u];
  if (!s.tc_before_needed) return;
  s.tc_before_needed = false;
  if (commit_like) return;  // tcgen05.commit implies tcgen05.fence::before_thread_sync
  if (diagnostic* d = emit_op(m.c, rule_id::sync_tcgen05_fence, id)) {
    d->message << "this synchronization follows tcgen05.ld/st without tcgen05_fence_before, so they may be ordered after it";
    d->help << "r.tcgen05_fence_before() before the arrive / release";
  }
}

constexpr void tmem_use(machine& m, int u, int id) {
  if (!m.tmem_allocated || (m.alloc_stamp.comp != u && !m.sees(u, m.alloc_stamp))) {
    if (diagnostic* d = emit_op(m.c, rule_id::memory_tmem_alloc, id)) {
      d->message << "uses tensor memory " << (m.tmem_allocated ? "before the tmem_alloc is ordered before it" : "before any tmem_alloc");
      if (m.alloc_op >= 0) d->add_note(m.p.ops[m.alloc_op].loc) << "allocated here";
      d->help << "r.tmem_alloc(region) in one warp before the first use, and a barrier between it and the users";
    }
  }
  if (m.tmem_deallocated)
    if (diagnostic* d = emit_op(m.c, rule_id::memory_tmem_dealloc, id)) {
      d->message << "uses tensor memory after it was deallocated";
      if (m.alloc_op >= 0) d->add_note(m.p.ops[m.alloc_op].loc) << "allocated here";
    }
}

// The stage a pipeline op's slot refers to for unit u, -1 if the unit never received it.
constexpr int slot_stage_of(const machine& m, int u, int slot_op) {
  const int slot = slot_op < m.slot_of_op.size ? m.slot_of_op[slot_op] : -1;
  return slot >= 0 ? m.slot_stage[u * m.slots + slot] : -1;
}

// Does another unit have uncommitted tcgen05 MMAs touching the stage objects of this pipeline stage?
constexpr int foreign_tc_mma(machine& m, int u, int pipe, int stage) {
  const auto& pl = m.p.pipelines[pipe];
  for (int i = 0; i < pl.carried_count; ++i) {
    const int o = (pl.carried_tmem[i] ? m.tmem_base[pl.carried[i]] : m.smem_base[pl.carried[i]]) + stage;
    const memory_object& obj = m.mem[o];
    for (int j = 0; j < obj.count; ++j) {
      const access_rec& r = obj.recs[j];
      if (r.unit == u || !r.done.valid()) continue;
      const unit_state& v = m.units[r.unit];
      if (v.tc_agent >= 0 && r.done.comp == v.tc_agent && r.done.value > v.tc_committed) return r.op;
    }
  }
  return -1;
}

constexpr void commit_issuer_check(machine& m, int u, int id, int mma_op) {
  if (mma_op < 0) return;
  if (diagnostic* d = emit_op(m.c, rule_id::sync_tcgen05_commit_issuer, id)) {
    m.write_unit(d->message, u);
    d->message << " commits, but the tcgen05.mma ops it should track were issued by another thread; a commit only tracks its own thread's MMAs";
    d->add_note(m.p.ops[mma_op].loc) << "the MMA (op#" << mma_op << ")";
    d->help << "commit (or release the stage) from the role that issues the MMAs";
  }
}

constexpr void mem_read(machine& m, int u, int id, const operand& o, std::uint8_t flags, stamp done) {
  const place pl = locate(m, u, id, o);
  for (int i = 0; i < pl.count; ++i) read_access(m, u, id, pl.first + i, pl.area, flags, done);
}
constexpr void mem_write(machine& m, int u, int id, const operand& o, std::uint8_t flags, stamp done, bool joint) {
  const place pl = locate(m, u, id, o);
  for (int i = 0; i < pl.count; ++i) write_access(m, u, id, pl.first + i, pl.area, flags, done, joint);
}

// The consumer frees `stage` of pipeline `pipe` (release op `id`): an arrival on its 'empty' barrier (in
// every CTA of the cluster for a multicast ring), or a tcgen05.commit when the unit issued tcgen05 MMAs.
constexpr void free_stage(machine& m, int u, int id, int pipe, int stage) {
  unit_state& s = m.units[u];
  const auto& pb = m.B.pipelines[pipe];
  const bool tc = s.tc_issued > 0;
  if (!tc) commit_issuer_check(m, u, id, foreign_tc_mma(m, u, pipe, stage));
  tc_fence_before_check(m, u, id, tc);
  arrive(m, u, pb.empty_base + stage, pb.multicast ? m.cluster : 1, id, tc);
  if (tc) s.tc_committed = s.tc_issued;
}

constexpr bool exec_pipeline(machine& m, int u, int id) {
  const op& o = m.p.ops[id];
  unit_state& s = m.units[u];
  const int pipe = o.d.index;
  const int stages = m.p.pipelines[pipe].stages;
  const auto& pb = m.B.pipelines[pipe];
  const int P = static_cast<int>(m.p.pipelines.size());
  if (o.kind == op_kind::pipeline_acquire || o.kind == op_kind::pipeline_wait) {
    const bool acquire = o.kind == op_kind::pipeline_acquire;
    int& count = m.pipe_count[(u * P + pipe) * 2 + (acquire ? 0 : 1)];
    const int stage = count % stages, round = count / stages;
    // producers start on a fresh 'empty' (parity 1 passes at once); consumers wait 'full' from phase 0
    const int obj = (acquire ? pb.empty_base : pb.full_base) + stage;
    if (!wait_phase(m, u, obj, acquire ? round - 1 : round, id)) return false;
    m.tick(u);
    ++count;
    m.slot_stage[u * m.slots + m.slot_of_op[id]] = stage;
    if (acquire) {
      const int tx = plan::tx_bytes_of_acquire(m.p, id);
      if (tx > 0) {
        tc_fence_before_check(m, u, id, false);
        expect(m, pb.full_base + stage, tx, id);
        arrive(m, u, pb.full_base + stage, 1, id, false);
      }
    }
    return true;
  }
  if (o.kind == op_kind::pipeline_held) {
    // the stage this unit's last wait on the pipeline received (lowering: the one before its position)
    const int count = m.pipe_count[(u * P + pipe) * 2 + 1];
    m.tick(u);
    if (count == 0) {
      if (diagnostic* d = emit_op(m.c, rule_id::sync_held_before_wait, id)) {
        m.write_unit(d->message, u);
        d->message << " takes r.held('" << m.p.pipelines[pipe].nm.view() << "') before any wait on that pipeline: no stage is held";
        d->num("waits", 0);
        d->help << "wait for the stage first (r.wait), e.g. in the first point's prologue: r.when(eq(r.walk_step(), 0), [&] { r.wait(...); ... })";
      }
      return true;
    }
    m.slot_stage[u * m.slots + m.slot_of_op[id]] = (count - 1) % stages;
    return true;
  }
  if (o.kind == op_kind::pipeline_flush) {
    m.tick(u);
    for (int q = 0; q < s.npend; ++q)
      if (s.pend_pipe[q] == pipe) {
        free_stage(m, u, s.pend_op[q], pipe, s.pend_stage[q]);
        for (int r = q + 1; r < s.npend; ++r) s.pend_op[r - 1] = s.pend_op[r], s.pend_pipe[r - 1] = s.pend_pipe[r], s.pend_stage[r - 1] = s.pend_stage[r];
        --s.npend, --q;
      }
    return true;
  }
  // release / commit of a slot
  m.tick(u);
  const int stage = slot_stage_of(m, u, o.a.slot_op);
  if (stage < 0) {
    if (diagnostic* d = emit_op(m.c, rule_id::memory_stage_index, id)) {
      d->message << "releases slot#" << o.a.slot_op << ", which ";
      m.write_unit(d->message, u);
      d->message << " has not received";
      d->help << "release the slot in the role (and loop) whose acquire/wait produced it";
    }
    return true;
  }
  if (o.kind == op_kind::pipeline_release && o.has(flag_release_later)) {
    // Held until n more releases of this op: then the oldest is freed, now.
    if (s.npend == unit_state::max_pending) {
      add_coverage(m.c, rule_id::count_, id, o.loc, "protocol: more than 8 stages held by deferred releases; the oldest is freed early");
      free_stage(m, u, s.pend_op[0], s.pend_pipe[0], s.pend_stage[0]);
      for (int r = 1; r < s.npend; ++r) s.pend_op[r - 1] = s.pend_op[r], s.pend_pipe[r - 1] = s.pend_pipe[r], s.pend_stage[r - 1] = s.pend_stage[r];
      --s.npend;
    }
    s.pend_op[s.npend] = id, s.pend_pipe[s.npend] = pipe, s.pend_stage[s.npend] = stage, ++s.npend;
    int held = 0;
    for (int q = 0; q < s.npend; ++q) held += s.pend_op[q] == id;
    if (held > o.imm[1])
      for (int q = 0; q < s.npend; ++q)
        if (s.pend_op[q] == id) {
          free_stage(m, u, id, pipe, s.pend_stage[q]);
          for (int r = q + 1; r < s.npend; ++r) s.pend_op[r - 1] = s.pend_op[r], s.pend_pipe[r - 1] = s.pend_pipe[r], s.pend_stage[r - 1] = s.pend_stage[r];
          --s.npend;
          break;
        }
    return true;
  }
  if (o.kind == op_kind::pipeline_release) return free_stage(m, u, id, pipe, stage), true;
  const bool tc = s.tc_issued > 0;
  if (!tc) commit_issuer_check(m, u, id, foreign_tc_mma(m, u, pipe, stage));
  tc_fence_before_check(m, u, id, tc);
  arrive(m, u, pb.full_base + stage, 1, id, tc);
  if (tc) s.tc_committed = s.tc_issued;
  return true;
}

// ---- elected thread vs whole warpgroup (issue 10, blind spot 1) ---------------------------------
// A TMA store and the bulk waits run on one elected thread of a warpgroup; stmatrix and st.shared on all
// 128. The unit executes as one process here, so the clocks alone would order them; a barrier of the whole
// warpgroup (bar.sync: r.sync(b), a turn, a cluster wait) is what orders them on the hardware. Warp units
// are not modelled (inside one warp the order depends on the lowering's warp-level code, which this model
// does not see; docs/diagnostics.md lists it as not checked).
constexpr bool elected_model(const machine& m, int u) { return m.units[u].threads == 128; }

constexpr void elected_store_read(machine& m, int u, int id, const operand& src) {
  unit_state& s = m.units[u];
  if (!elected_model(m, u)) return;
  const place pl = locate(m, u, id, src);
  for (int i = 0; i < pl.count; ++i) {
    const int obj = pl.first + i, at = u * m.mem_count + obj;
    m.store_group[at] = s.bulk_committed + 1;
    if (m.unit_write_epoch[at] != s.unit_epoch + 1) continue;
    if (diagnostic* d = emit_op(m.c, rule_id::dataflow_race, id)) {
      d->message << "the TMA store reads ";
      m.write_object(d->message, obj);
      d->message << " from one elected thread of ";
      m.write_unit(d->message, u);
      d->message << ", but the warpgroup's 128 threads wrote it (stmatrix / st.shared) with no barrier of the whole warpgroup since: the other "
                    "warps may not have written their part yet";
      d->help << "r.sync(<a named barrier of this warpgroup>) after the smem writes (and fence_proxy_async), before the TMA store";
    }
    m.unit_write_epoch[at] = 0;  // reported once
  }
}

constexpr void elected_bulk_wait(machine& m, int u, int keep) {
  unit_state& s = m.units[u];
  if (!elected_model(m, u)) return;
  const int done = s.bulk_committed - keep;  // groups 1..done have finished reading
  for (int obj = 0; obj < m.mem_count; ++obj) {
    const int at = u * m.mem_count + obj;
    if (m.store_group[at] > 0 && m.store_group[at] <= done) m.store_done_epoch[at] = s.unit_epoch + 1, m.store_group[at] = 0;
  }
}

constexpr void elected_unit_write(machine& m, int u, int id, const operand& dst) {
  unit_state& s = m.units[u];
  if (!elected_model(m, u)) return;
  const place pl = locate(m, u, id, dst);
  for (int i = 0; i < pl.count; ++i) {
    const int obj = pl.first + i, at = u * m.mem_count + obj;
    if (m.store_done_epoch[at] == s.unit_epoch + 1)
      if (diagnostic* d = emit_op(m.c, rule_id::dataflow_store_source_reuse, id)) {
        d->message << "overwrites ";
        m.write_object(d->message, obj);
        d->message << " after the bulk wait that ended a TMA store's read of it, but that wait ran on one elected thread of ";
        m.write_unit(d->message, u);
        d->message << " and no barrier of the whole warpgroup followed: the other warps may write while the store still reads";
        d->help << "r.sync(<a named barrier of this warpgroup>) after the bulk_wait_read, before writing the buffer";
      }
    m.store_done_epoch[at] = 0;
    m.unit_write_epoch[at] = s.unit_epoch + 1;
  }
}

constexpr void exec_mma(machine& m, int u, int id) {
  const op& o = m.p.ops[id];
  unit_state& s = m.units[u];
  const auto& accd = o.d;
  if (o.kind == op_kind::wgmma) {
    if (!s.wg_fenced)
      if (diagnostic* d = emit_op(m.c, rule_id::sync_wgmma_fence, id)) {
        d->message << "wgmma without a wgmma_fence " << (s.last_wgmma < 0 ? "before the warpgroup's first wgmma" : "after its registers were touched by other code");
        d->help << "r.wgmma_fence() before the wgmma (once per batch of wgmma ops)";
      }
    s.wg_fenced = true;
    const stamp st{s.wg_agent, s.wg_committed + 1};
    if (o.a.kind == operand_kind::smem) mem_read(m, u, id, o.a, acc_async, st);
    else if (o.a.kind == operand_kind::reg) {
      reg_read(m, u, id, o.a, true);
      if (o.a.index < m.R) {  // A from registers: read by the tensor cores until the group completes
        reg_state& a = reg_of(m, u, o.a.index);
        a.wg_read_group = s.wg_committed + 1;
        a.wg_reader = id;
      }
    }
    mem_read(m, u, id, o.b, acc_async, st);
  } else if (o.kind == op_kind::tcgen05_mma) {
    tc_fence_after_check(m, u, id);
    tmem_use(m, u, id);
    ++s.tc_issued;
    const stamp st{s.tc_agent, s.tc_issued};
    mem_read(m, u, id, o.a, acc_async, st);
    mem_read(m, u, id, o.b, acc_async, st);
    const place pl = locate(m, u, id, accd);
    const bool over = mma_overwrites(m, u, o);
    for (int i = 0; i < pl.count; ++i) {
      memory_object& obj = m.mem[pl.first + i];
      if (!over) check_accumulate(m, u, id, obj.written, obj.init_tile, m.p.tmem[accd.index].nm.view(), m.p.tmem[accd.index].loc);
      if (over) obj.written = true, obj.init_tile = m.write_tile(u, id);
      // Another unit's MMA into the same stage is instruction.tcgen05-single-issuer's finding, not this one.
      if (over && obj.unread_mma >= 0 && obj.unread_unit == u && accd.part == part_axis::none)
        report_dead_accumulation(m, u, id, obj.unread_mma, m.p.tmem[accd.index].nm.view(), m.p.tmem[accd.index].loc);
      obj.unread_mma = accd.part == part_axis::none ? id : -1;
      obj.unread_unit = u;
      write_access(m, u, id, pl.first + i, pl.area, acc_async | acc_mma, st, false);
    }
    s.last_tc_mma = id;
    return;
  } else {
    mem_read(m, u, id, o.a, 0, m.now(u));
    reg_read(m, u, id, o.a);
    mem_read(m, u, id, o.b, 0, m.now(u));
    reg_read(m, u, id, o.b);
  }
  // register accumulator (wgmma, mma_sync)
  if (accd.kind != operand_kind::reg) return;
  reg_state& r = reg_of(m, u, accd.index);
  const bool over = mma_overwrites(m, u, o);
  if (!over) check_accumulate(m, u, id, r.written, r.init_tile, m.p.regs[accd.index].nm.view(), m.p.regs[accd.index].loc);
  if (over) r.written = true, r.init_tile = m.write_tile(u, id);
  // Accumulating reads the previous result; overwriting the whole tile discards one nothing has read.
  if (over && r.unread_mma >= 0 && accd.part == part_axis::none)
    report_dead_accumulation(m, u, id, r.unread_mma, m.p.regs[accd.index].nm.view(), m.p.regs[accd.index].loc);
  r.unread_mma = accd.part == part_axis::none ? id : -1;
  if (o.kind == op_kind::wgmma) {
    r.wg_group = s.wg_committed + 1;
    ++s.wg_open;
    s.last_wgmma = id;
  } else {
    touch_wgmma_regs(m, u, accd);
  }
}

}  // namespace detail

constexpr bool exec(machine& m, int u, int id) {
  using namespace detail;
  const op& o = m.p.ops[id];
  unit_state& s = m.units[u];
  // Every register source of the op reads it (also those of ops that do not call reg_read below).
  m.p.reg_reads(id, [&](const operand& x) {
    if (x.index < m.R) reg_of(m, u, x.index).unread_mma = -1;
  });
  switch (o.kind) {
    // ---- waits: no effect until they pass ----
    case op_kind::pipeline_acquire:
    case op_kind::pipeline_wait:
    case op_kind::pipeline_held:
    case op_kind::pipeline_release:
    case op_kind::pipeline_commit:
    case op_kind::pipeline_flush: return exec_pipeline(m, u, id);
    case op_kind::mbarrier_wait: {
      const int obj = user_object(m, u, id, o.d);
      if (obj < 0) break;
      int& k = m.wait_count[u * m.NB + obj];
      if (!wait_phase(m, u, obj, k, id)) return false;
      ++k;
      check_ready(m, u, obj, id, false, false);
      break;
    }
    case op_kind::turn_take:
    case op_kind::turn_pass: {
      // take: this unit's barrier; pass: the next unit's (round robin inside the role).
      const int count = m.p.roles[s.role].count;
      const int v = o.kind == op_kind::turn_take ? u : m.role_unit0[s.role] + (s.index + 1) % count;
      if (count < 2 || v >= m.U) break;
      const int inst = m.named_inst[o.d.index * m.U + v];
      if (inst < 0) break;
      if (o.kind == op_kind::turn_pass) m.named[inst].users |= 1u << u;
      if (!named_sync(m, u, inst, o.kind == op_kind::turn_take)) return false;
      if (o.kind == op_kind::turn_take) ++s.unit_epoch;
      break;
    }
    case op_kind::named_barrier_sync:
    case op_kind::named_barrier_arrive: {
      const int inst = m.named_inst[o.d.index * m.U + u];
      if (inst < 0) break;
      if (s.sync_inst != inst) tc_fence_before_check(m, u, id, false);
      if (!named_sync(m, u, inst, o.kind == op_kind::named_barrier_sync)) return false;
      if (o.kind == op_kind::named_barrier_sync) ++s.unit_epoch;
      break;
    }
    case op_kind::cluster_arrive: {
      tc_fence_before_check(m, u, id, false);
      const int gen = m.named[m.cluster_inst].gen;
      for (int b = 0; b < m.NB; ++b) {
        barrier_state& bs = m.bars[b];
        if (bs.initialized && bs.init_unit == u && bs.fence.valid() && bs.visible_gen < 0) bs.visible_gen = gen;
      }
      named_sync(m, u, m.cluster_inst, false);
      s.cluster_gen = gen;
      break;
    }
    case op_kind::cluster_wait: {
      if (s.cluster_gen < 0 || m.named[m.cluster_inst].gen <= s.cluster_gen) {
        s.blocked = block_kind::cluster;
        s.blocked_obj = m.cluster_inst;
        return false;
      }
      s.blocked = block_kind::none;
      m.join(m.vc(u), m.named_done(m.cluster_inst));
      s.cluster_passed = m.named[m.cluster_inst].gen;
      s.cluster_gen = -1;
      ++s.unit_epoch;
      s.tc_after_needed = true;
      break;
    }
    // ---- compute ----
    case op_kind::mma_sync:
    case op_kind::wgmma:
    case op_kind::tcgen05_mma: exec_mma(m, u, id); break;
    case op_kind::fill: reg_write(m, u, id, o.d); break;
    case op_kind::cluster_reduce: {
      // Derived protocol (lowering): wait 'done' of the previous use, write, arrive 'ready' in every CTA,
      // wait 'ready', read every CTA's scratch, arrive 'done' in every CTA. CTAs run in step here, so
      // one arrival stands for the same unit of every CTA. (Where a role's scratch has several writers the
      // lowering waits on the 'done' of the role's last cluster reduction instead, whichever op; in step,
      // that wait is already satisfied, so it is not modelled apart.)
      const int ready = m.B.cluster_ready[id];
      if (ready < 0) break;
      int& uses = m.wait_count[u * m.NB + ready];
      if (!s.cr_arrived) {
        if (uses > 0 && !wait_phase(m, u, ready + 1, uses - 1, id)) return false;
        m.tick(u);
        arrive(m, u, ready, m.cluster, id, false);
        s.cr_arrived = true;
      }
      if (!wait_phase(m, u, ready, uses, id)) return false;
      s.cr_arrived = false;
      ++uses;
      m.p.reg_reads(id, [&](const operand& x) { reg_read(m, u, id, x); });
      m.p.reg_writes(id, [&](const operand& x) { reg_write(m, u, id, x); });
      m.tick(u);
      arrive(m, u, ready + 1, m.cluster, id, false);
      break;
    }
    case op_kind::elementwise:
    case op_kind::reduce_rows:
    case op_kind::arg_reduce_rows:
    case op_kind::topk_init:
    case op_kind::topk_rows:
    case op_kind::topk_store:
    case op_kind::convert:
    case op_kind::scan_rows:
    case op_kind::reduce_cols:
    case op_kind::fetch_add:
      m.p.reg_reads(id, [&](const operand& x) { reg_read(m, u, id, x); });
      m.p.reg_writes(id, [&](const operand& x) { reg_write(m, u, id, x); });
      break;
    case op_kind::atomic_add:
    case op_kind::scatter_add:
    case op_kind::scatter_store: m.p.reg_reads(id, [&](const operand& x) { reg_read(m, u, id, x); }); break;
    // ---- memory ----
    case op_kind::tma_load: {
      int bar = -1;
      if (o.b.kind == operand_kind::mbarrier) bar = user_object(m, u, id, o.b);
      else if (o.d.sel == stage_sel::slot && o.d.slot_op < m.p.ops.size()) {
        const int st = slot_stage_of(m, u, o.d.slot_op);
        if (st >= 0) bar = m.B.pipelines[m.p.ops[o.d.slot_op].d.index].full_base + st;
      }
      const stamp st = bar >= 0 ? stamp{m.U + bar, m.bars[bar].completed + 1} : stamp{};
      m.tick(u);
      mem_write(m, u, id, o.d, acc_async, st, false);
      if (bar >= 0) {
        check_ready(m, u, bar, id, true, o.has(flag_multicast));
        deliver(m, bar, plan::bytes_of(m.p, o.d), id);
      }
      return true;
    }
    case op_kind::tma_store:
      m.tick(u);
      elected_store_read(m, u, id, o.a);
      mem_read(m, u, id, o.a, acc_async | acc_store_read, stamp{s.bulk_agent, s.bulk_committed + 1});
      ++s.bulk_open;
      s.last_store = id;
      return true;
    case op_kind::cp_async: {
      m.tick(u);
      // Copies into a stage an acquire handed out complete on the stage's 'full' barrier: each thread's
      // cp.async.mbarrier.arrive.noinc after the last of them (plan::cp_async_fill_of_acquire) arrives once
      // its copies have landed, so the data is ready when that phase completes, as a TMA load's is.
      const int acq = o.d.sel == stage_sel::slot ? o.d.slot_op : -1;
      const int last = plan::cp_async_fill_of_acquire(m.p, acq);
      const int st = last >= 0 ? slot_stage_of(m, u, acq) : -1;
      const int bar = st >= 0 ? m.B.pipelines[m.p.ops[acq].d.index].full_base + st : -1;
      mem_write(m, u, id, o.d, acc_async | acc_generic, bar >= 0 ? stamp{m.U + bar, m.bars[bar].completed + 1} : stamp{s.cp_agent, s.cp_committed + 1},
                collective(m, u, o.d));
      if (bar >= 0 && last == id) arrive(m, u, bar, s.threads, id, false);
      return true;
    }
    case op_kind::load_global:
      if (o.has(flag_accumulate)) reg_read(m, u, id, o.d);  // r.load_add
      reg_write(m, u, id, o.d);
      break;
    case op_kind::store_global: reg_read(m, u, id, o.a); break;
    case op_kind::load_shared:
    case op_kind::ldmatrix:
      m.tick(u);
      mem_read(m, u, id, o.a, 0, m.now(u));
      reg_write(m, u, id, o.d);
      return true;
    case op_kind::store_shared:
    case op_kind::stmatrix:
      m.tick(u);
      reg_read(m, u, id, o.a);
      elected_unit_write(m, u, id, o.d);
      mem_write(m, u, id, o.d, acc_generic, m.now(u), collective(m, u, o.d));
      return true;
    case op_kind::tmem_load:
      m.tick(u);
      tc_fence_after_check(m, u, id);
      tmem_use(m, u, id);
      mem_read(m, u, id, o.a, 0, m.now(u));
      reg_write(m, u, id, o.d);
      s.tc_before_needed = true;
      return true;
    case op_kind::tmem_store:
      m.tick(u);
      tc_fence_after_check(m, u, id);
      tmem_use(m, u, id);
      reg_read(m, u, id, o.a);
      if (o.d.part == part_axis::none) {  // a whole-stage tcgen05.st discards an MMA result nothing has read
        const place pl = locate(m, u, id, o.d);
        for (int i = 0; i < pl.count; ++i) {
          memory_object& obj = m.mem[pl.first + i];
          if (obj.unread_mma >= 0) report_dead_accumulation(m, u, id, obj.unread_mma, m.p.tmem[o.d.index].nm.view(), m.p.tmem[o.d.index].loc);
          obj.unread_mma = -1;
        }
      }
      mem_write(m, u, id, o.d, 0, m.now(u), false);
      s.tc_before_needed = true;
      return true;
    case op_kind::tmem_alloc:
      m.tick(u);
      m.tmem_allocated = true;
      m.tmem_deallocated = false;
      m.alloc_op = id;
      m.alloc_stamp = m.now(u);
      return true;
    case op_kind::tmem_dealloc: {
      m.tick(u);
      if (!m.tmem_allocated) {
        tmem_use(m, u, id);
        return true;
      }
      for (int o2 = 0; o2 < m.mem_count && !m.tmem_deallocated; ++o2) {
        if (!m.is_tmem_object(o2)) continue;
        const memory_object& obj = m.mem[o2];
        for (int j = 0; j < obj.count; ++j) {
          const access_rec& r = obj.recs[j];
          if (r.is(acc_pending) || (r.unit == u && !r.is(acc_async)) || m.sees(u, r.done)) continue;
          if (diagnostic* d = emit_op(m.c, rule_id::memory_tmem_dealloc, id)) {
            d->message << "deallocates tensor memory while ";
            if (r.unit == u) d->message << "this role's own tcgen05 ops (op#" << r.op << ") may still be in flight: nothing it waited for tracks them";
            else {
              m.write_unit(d->message, r.unit);
              d->message << " may still use it (op#" << r.op << ")";
            }
            d->add_note(m.p.ops[r.op].loc) << "the use";
            d->help << "wait until every user is done (e.g. acquire the accumulator pipeline once more) before tmem_dealloc";
          }
          break;
        }
      }
      m.tmem_deallocated = true;
      return true;
    }
    // ---- explicit mbarrier protocol ----
    case op_kind::mbarrier_init: {
      const int obj = user_object(m, u, id, o.d);
      if (obj < 0 || !m.manual) break;
      barrier_state& bs = m.bars[obj];
      if (bs.initialized && bs.init_op >= 0) {
        if (diagnostic* d = emit_op(m.c, rule_id::sync_double_init, id)) {
          write_barrier_object(d->message, m.p, m.B, obj);
          d->message << " is initialized again while live (first init: op#" << bs.init_op << ')';
          d->add_note(m.p.ops[bs.init_op].loc) << "first initialized here";
          d->help << "initialize each barrier once, outside loops, in one role";
        }
        break;
      }
      m.tick(u);
      bs.initialized = true;
      bs.init_count = o.imm[0];
      bs.pending = o.imm[0];
      bs.tx = 0;
      bs.init_op = id;
      bs.init_unit = u;
      bs.init_clock = m.vc(u)[u];
      return true;
    }
    case op_kind::mbarrier_arrive:
    case op_kind::mbarrier_expect_tx:
    case op_kind::mbarrier_arrive_expect_tx:
    case op_kind::tcgen05_commit: {
      const int obj = user_object(m, u, id, o.d);
      if (obj < 0) break;
      m.tick(u);
      const bool commit = o.kind == op_kind::tcgen05_commit;
      const bool remote = o.has(flag_remote);
      check_ready(m, u, obj, id, commit, remote);
      if (commit && s.tc_issued == 0) {
        int other = -1;
        for (int v = 0; v < m.U && other < 0; ++v)
          if (v != u && m.units[v].tc_issued > m.units[v].tc_committed) other = m.units[v].last_tc_mma;
        commit_issuer_check(m, u, id, other);
      }
      if (o.kind != op_kind::mbarrier_expect_tx) tc_fence_before_check(m, u, id, commit);
      if (o.kind == op_kind::mbarrier_expect_tx || o.kind == op_kind::mbarrier_arrive_expect_tx) expect(m, obj, o.imm[0], id);
      if (o.kind != op_kind::mbarrier_expect_tx) arrive(m, u, obj, remote ? m.cluster : 1, id, commit);
      if (commit) s.tc_committed = s.tc_issued;
      return true;
    }
    // ---- fences and async groups ----
    case op_kind::fence_proxy_async: {
      m.tick(u);
      const stamp f = m.now(u);
      for (int o2 = 0; o2 < m.mem_count; ++o2) {
        memory_object& obj = m.mem[o2];
        for (int j = 0; j < obj.count; ++j) {
          access_rec& r = obj.recs[j];
          if (r.unit == u && r.is(acc_generic) && r.is(acc_write) && !r.fence.valid()) r.fence = f;
        }
      }
      return true;
    }
    case op_kind::fence_mbarrier_init:
      m.tick(u);
      for (int b = 0; b < m.NB; ++b)
        if (m.bars[b].initialized && m.bars[b].init_unit == u) m.bars[b].fence = m.now(u);
      return true;
    case op_kind::tcgen05_fence_before: s.tc_before_needed = false; break;
    case op_kind::tcgen05_fence_after: s.tc_after_needed = false; break;
    case op_kind::wgmma_fence: s.wg_fenced = true; break;
    case op_kind::wgmma_commit:
      ++s.wg_committed;
      s.wg_open = 0;
      break;
    case op_kind::wgmma_wait:
      if (s.wg_open > 0)
        if (diagnostic* d = emit_op(m.c, rule_id::sync_wgmma_commit, id)) {
          d->message << "wgmma_wait(" << o.imm[0] << ") does not wait for the " << s.wg_open << " wgmma op(s) issued since the last wgmma_commit";
          d->num("uncommitted", s.wg_open);
          if (s.last_wgmma >= 0) d->add_note(m.p.ops[s.last_wgmma].loc) << "the uncommitted wgmma";
          d->help << "r.wgmma_commit() after the wgmma ops, before the wait";
        }
      m.raise(u, s.wg_agent, s.wg_committed - o.imm[0]);
      break;
    case op_kind::cp_async_commit: ++s.cp_committed; break;
    case op_kind::cp_async_wait: m.raise(u, s.cp_agent, s.cp_committed - o.imm[0]); break;
    case op_kind::bulk_commit:
      ++s.bulk_committed;
      s.bulk_open = 0;
      break;
    case op_kind::bulk_wait:
      m.raise(u, s.bulk_agent, s.bulk_committed - o.imm[0]);
      elected_bulk_wait(m, u, o.imm[0]);
      break;
    default: break;  // tma_prefetch, setmaxnreg, griddep: no protocol effect
  }
  m.tick(u);
  return true;
}

}  // namespace cake::analysis::proto
