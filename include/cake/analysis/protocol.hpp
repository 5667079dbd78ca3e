#pragma once
// The protocol checker: runs every unit (warp or warpgroup) of every role as a process over its op list,
// loops unrolled (dynamic K loops for the deepest ring + 2 trips, and once more with a single trip;
// persistent tile loops for 2 tiles), communicating through barrier phases and stage ownership.
// Scheduling is eager: each unit runs until it blocks, in role order, so producers run as far ahead as
// the barriers let them. Ordering facts do not depend on that choice (they are tracked with vector
// clocks, see protocol_model.hpp); the schedule only decides which blocking wait is retried first.
//
// Found here: deadlock (no unit can progress and not all have finished: each blocked op and what it
// waits for), arrival counts per phase vs init counts, expect_tx vs delivered bytes, phase aliasing,
// races (reads not ordered after their write), WAR (overwrites not ordered after earlier reads), missing
// proxy fences, accumulator hazards, wgmma/tcgen05 group and fence discipline, TMEM lifetime.
#include "protocol_ops.hpp"

namespace cake::analysis {

namespace proto {

// The stages a point of an alternating walk consumes, for the unit that skips it (same rule as lowering:
// pipeline ops at the walk's level once, those in a dynamic loop directly inside it once per trip).
constexpr void skip_point(machine& m, int u, int tile_op) {
  const program& p = m.p;
  const int P = static_cast<int>(p.pipelines.size());
  for (int i = tile_op + 1; i < p.ops[tile_op].end; ++i) {
    const op& o = p.ops[i];
    if (o.role != m.units[u].role || (o.kind != op_kind::pipeline_acquire && o.kind != op_kind::pipeline_wait)) continue;
    long long n = 0;
    if (o.parent == tile_op) n = 1;
    else if (o.parent >= 0 && p.has_bound(o.parent) && p.ops[o.parent].parent == tile_op) n = m.trips_of(u, p.loops[p.ops[o.parent].imm[1]]);
    else add_coverage(m.c, rule_id::count_, i, o.loc, "protocol: a pipeline op nested deeper inside an alternating walk is not skipped");
    m.pipe_count[(u * P + o.d.index) * 2 + (o.kind == op_kind::pipeline_acquire ? 0 : 1)] += static_cast<int>(n);
  }
}

// 0: blocked, 1: advanced, 2: finished
constexpr int step(machine& m, int u) {
  unit_state& s = m.units[u];
  const program& p = m.p;
  while (s.depth > 0) {
    frame& f = s.stack[s.depth - 1];
    if (s.pc < p.ops[f.op].end) break;
    if (++f.iter < f.trips) {
      s.pc = f.op + 1;
      if (p.ops[f.op].kind == op_kind::tile_loop) s.tile_iter = f.iter;
      continue;
    }
    s.pc = p.ops[f.op].end;
    --s.depth;
    s.tile_iter = -1;
    for (int d = s.depth - 1; d >= 0 && s.tile_iter < 0; --d)
      if (p.ops[s.stack[d].op].kind == op_kind::tile_loop) s.tile_iter = s.stack[d].iter;
  }
  if (s.pc >= s.end) {
    s.finished = true;
    return 2;
  }
  // An alternating walk: at the start of an iteration that belongs to another unit of the role, skip it
  // and move past the stages that point consumes.
  if (s.depth > 0) {
    frame& f = s.stack[s.depth - 1];
    const op& lo = p.ops[f.op];
    const int count = p.roles[s.role].count;
    if (lo.kind == op_kind::tile_loop && lo.has(flag_alternate) && count > 1 && s.pc == f.op + 1 && f.iter % count != s.index) {
      skip_point(m, u, f.op);
      s.pc = lo.end;
      return 1;
    }
  }
  const op& o = p.ops[s.pc];
  if (o.role != s.role) {
    ++s.pc;
    return 1;
  }
  if (o.kind == op_kind::when) {
    // Run the body only where the condition holds for this unit's indices.
    if (!m.condition(u, o.imm[0] + o.imm[1] - 1)) s.pc = o.end;
    else ++s.pc;
    return 1;
  }
  if (o.kind == op_kind::tile_loop || o.kind == op_kind::loop) {
    int trips = 1;
    if (o.kind == op_kind::tile_loop) trips = p.launch.persistent ? m.tiles : 1;
    else if (o.has(flag_static_trip)) trips = o.imm[1];
    else {
      // Dynamic bounds are evaluated with the unit's indices (a causal loop runs tile + 1 trips).
      const long long t = p.has_bound(s.pc) ? m.trips_of(u, p.loops[o.imm[1]]) : m.k_trips;
      constexpr long long cap = 64;
      if (t > cap) add_coverage(m.c, rule_id::count_, s.pc, o.loc, "protocol: a loop whose bounds evaluate past 64 trips is run for 64");
      trips = static_cast<int>(t > cap ? cap : t);
    }
    if (trips <= 0 || s.depth == max_depth) {
      if (s.depth == max_depth) add_coverage(m.c, rule_id::count_, s.pc, o.loc, "protocol: loops nested deeper than 8 are skipped");
      s.pc = o.end;
      return 1;
    }
    s.stack[s.depth++] = {s.pc, 0, trips};
    if (o.kind == op_kind::tile_loop) s.tile_iter = 0;
    ++s.pc;
    return 1;
  }
  if (!exec(m, u, s.pc)) return 0;
  ++s.pc;
  return 1;
}

// Checks when a unit has run its last op.
constexpr void finish_unit(machine& m, int u) {
  unit_state& s = m.units[u];
  if (s.last_wgmma >= 0 && (s.wg_open > 0 || (s.wg_agent >= 0 && m.vc(u)[s.wg_agent] < s.wg_committed)))
    if (diagnostic* d = emit_op(m.c, rule_id::sync_wgmma_commit, s.last_wgmma)) {
      m.write_unit(d->message, u);
      d->message << " ends with wgmma ops " << (s.wg_open > 0 ? "never committed" : "committed but never waited for");
      d->help << "end the MMA loop with r.wgmma_commit(); r.wgmma_wait(0);";
    }
  // Lowering ends every role that issued TMA stores with cp.async.bulk.wait_group 0, which covers the
  // committed groups only: a store never committed may still read shared memory when the CTA exits.
  if (s.last_store >= 0 && s.bulk_open > 0)
    if (diagnostic* d = emit_op(m.c, rule_id::dataflow_store_pending_at_exit, s.last_store)) {
      m.write_unit(d->message, u);
      d->message << " ends with this TMA store never committed, so the exit drain does not wait for it to read shared memory";
      d->help << "follow the last tma_store with r.bulk_commit()";
    }
}

template <class Text>
constexpr void write_blocked(Text& t, machine& m, int u) {
  const unit_state& s = m.units[u];
  m.write_unit(t, u);
  t << " at op#" << s.pc << ' ' << to_string(m.p.ops[s.pc].kind) << " waits for ";
  if (s.blocked == block_kind::mbarrier) {
    const barrier_state& bs = m.bars[s.blocked_obj];
    t << "phase " << s.blocked_phase << " of ";
    write_barrier_object(t, m.p, m.B, s.blocked_obj);
    if (!bs.initialized) {
      t << " (never initialized)";
      return;
    }
    t << " (" << (bs.pending > 0 ? bs.init_count - bs.pending : bs.init_count) << " of " << bs.init_count << " arrivals";
    if (bs.phase_expected || bs.phase_delivered) t << ", " << bs.phase_delivered << " of " << bs.phase_expected << " bytes";
    t << ')';
  } else if (s.blocked == block_kind::named) {
    const named_state& n = m.named[s.blocked_obj];
    t << "named barrier '" << m.p.named_barriers[n.decl].nm.view() << "' (" << n.arrived << " of " << n.expected << " threads)";
  } else {
    t << "the cluster barrier (" << m.named[m.cluster_inst].arrived << " of " << m.named[m.cluster_inst].expected
      << " threads arrived; every thread of every CTA must arrive)";
  }
}

constexpr bool all_done_or_blocked_on(machine& m, unsigned users, block_kind k, int obj) {
  for (int v = 0; v < m.U; ++v) {
    if (!(users >> v & 1u) || m.units[v].finished) continue;
    if (m.units[v].blocked != k || m.units[v].blocked_obj != obj) return false;
  }
  return true;
}

constexpr void add_blocked_notes(machine& m, diagnostic* d, int except) {
  for (int v = 0; v < m.U; ++v) {
    if (v == except || m.units[v].finished) continue;
    auto& n = d->add_note(m.p.ops[m.units[v].pc].loc);
    write_blocked(n, m, v);
  }
}

// Why Cake derived a barrier's init count, in the schedule's terms: the roles (pipelines) or ops (user
// barriers) that arrive on it each phase, e.g. "count 3 derived: 1 unit of role 'load' (op#4) + 2 of
// 'math' (op#9)".
template <class Text>
constexpr void write_derived_count(Text& t, const program& p, const plan::barrier_plan& B, const plan::barrier_object& ob) {
  t << "count " << ob.arrivals << " derived:";
  bool first = true;
  auto term = [&](int units, int role, int op_id, bool threads = false) {
    const char* what = threads ? (units == 1 ? " thread" : " threads") : (units == 1 ? " unit" : " units");
    t << (first ? " " : " + ") << units << (first || threads ? what : "") << (first ? " of role '" : " of '") << p.roles[role].nm.view() << "' (op#" << op_id << ")";
    first = false;
  };
  if (ob.origin == plan::barrier_origin::pipeline_full || ob.origin == plan::barrier_origin::pipeline_empty) {
    const auto a = plan::role_arrivals(p, ob.source, ob.origin == plan::barrier_origin::pipeline_full);
    bool threads = false;
    for (int r = 0; r < static_cast<int>(p.roles.size()) && r < capacity::roles; ++r)
      if (a.arrivals[r] > 0) term(a.arrivals[r], r, a.first_op[r], a.per_thread[r]), threads = threads || a.per_thread[r];
    if (ob.origin == plan::barrier_origin::pipeline_empty && B.pipelines[ob.source].multicast) t << ", x " << p.launch.cluster_size() << " CTAs (multicast)";
    if (first) t << " no op arrives on it";
    t << (ob.origin == plan::barrier_origin::pipeline_full
              ? (threads ? " (each acquiring unit arrives once per stage; each thread whose cp.async copies fill it, once per stage)" : " (each acquiring unit arrives once per stage)")
              : " (each releasing unit once per stage)");
  } else {
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const op& o = p.ops[i];
      if (o.d.kind != operand_kind::mbarrier || o.d.index != ob.source) continue;
      if (o.kind == op_kind::mbarrier_arrive || o.kind == op_kind::mbarrier_arrive_expect_tx || o.kind == op_kind::tcgen05_commit)
        term(plan::units_of_role(p, o.role) * (o.has(flag_remote) ? p.launch.cluster_size() : 1), o.role, static_cast<int>(i));
    }
    if (first) t << " no op arrives on it";
    else t << " (one arrival per unit per arrive op)";
  }
}

constexpr void report_deadlock(machine& m) {
  bool explained = false;
  int first = -1;
  for (int u = 0; u < m.U; ++u) {
    const unit_state& s = m.units[u];
    if (s.finished) continue;
    if (first < 0) first = u;
    if (s.blocked == block_kind::mbarrier) {
      const barrier_state& bs = m.bars[s.blocked_obj];
      if (!bs.initialized) {
        explained = true;  // reported by the sync pass (never initialized) or at the use
        continue;
      }
      if (bs.init_count == 0) {
        const auto& ob = m.B.objects[s.blocked_obj];
        if (diagnostic* d = emit_op(m.c, rule_id::sync_arrival_count, s.pc)) {
          d->message << "nothing ever arrives on ";
          write_barrier_object(d->message, m.p, m.B, s.blocked_obj);
          if (ob.origin == plan::barrier_origin::pipeline_empty)
            d->message << ": no role releases the stages of pipeline '" << m.p.pipelines[ob.source].nm.view() << "', so this acquire waits forever";
          else if (ob.origin == plan::barrier_origin::pipeline_full)
            d->message << ": no role fills pipeline '" << m.p.pipelines[ob.source].nm.view() << "' (acquire with TMA loads, or commit), so this wait waits forever";
          else
            d->message << " (its count is derived from the ops that arrive on it, and there are none)";
          d->num("init_count", 0);
          d->add_note(barrier_object_loc(m.p, m.B, s.blocked_obj)) << "declared here";
          add_blocked_notes(m, d, u);
          d->help << (ob.origin == plan::barrier_origin::pipeline_empty ? "release every slot the consumer waits for: r.release(pipe, slot)"
                                                                        : "arrive on it from the role that produces what this wait guards");
        }
        explained = true;
        continue;
      }
      if (bs.pending <= 0 && bs.tx != 0) {
        const int at = bs.last_expect_op >= 0 ? bs.last_expect_op : s.pc;
        if (diagnostic* d = emit_op(m.c, rule_id::sync_expect_tx_mismatch, at)) {
          write_barrier_object(d->message, m.p, m.B, s.blocked_obj);
          d->message << " expects " << bs.phase_expected << " bytes in phase " << bs.completed << ", but the TMA loads that complete on it deliver "
                     << bs.phase_delivered << "; the phase never completes";
          d->num("expected_bytes", bs.phase_expected).num("delivered_bytes", bs.phase_delivered);
          if (bs.last_tx_op >= 0) d->add_note(m.p.ops[bs.last_tx_op].loc) << "a TMA load completing on it (op#" << bs.last_tx_op << ")";
          add_blocked_notes(m, d, -1);
          d->help << "expect exactly the bytes of the full boxes loaded per phase (a pipeline acquire derives them)";
        }
        explained = true;
      } else if (bs.pending > 0 && (bs.arrivers == 0 || (bs.arrivers & ~bs.phase_arrived) == 0 ||
                                    all_done_or_blocked_on(m, bs.arrivers, block_kind::mbarrier, s.blocked_obj))) {
        const auto& ob = m.B.objects[s.blocked_obj];
        if (diagnostic* d = emit_op(m.c, rule_id::sync_arrival_count, s.pc)) {
          write_barrier_object(d->message, m.p, m.B, s.blocked_obj);
          d->message << " is initialized for " << bs.init_count << " arrivals per phase, but phase " << bs.completed << " gets only "
                     << bs.init_count - bs.pending << ": every role that arrives on it has arrived or finished";
          d->num("init_count", bs.init_count).num("arrivals", bs.init_count - bs.pending);
          if (bs.init_op >= 0) d->add_note(m.p.ops[bs.init_op].loc) << "initialized here with count " << bs.init_count;
          else if (!ob.derived) d->add_note(barrier_object_loc(m.p, m.B, s.blocked_obj)) << "count declared here";
          else write_derived_count(d->add_note(barrier_object_loc(m.p, m.B, s.blocked_obj)), m.p, m.B, ob);
          if (bs.last_arrive_op >= 0) d->add_note(m.p.ops[bs.last_arrive_op].loc) << "the last arrival (op#" << bs.last_arrive_op << ")";
          add_blocked_notes(m, d, u);
          d->help << "make the init count equal the arrivals of one phase (one per arriving unit, x CTAs for remote arrivals)";
        }
        explained = true;
      }
    } else if (s.blocked == block_kind::named) {
      const named_state& n = m.named[s.blocked_obj];
      if (all_done_or_blocked_on(m, n.users, block_kind::named, s.blocked_obj)) {
        if (diagnostic* d = emit_op(m.c, rule_id::sync_named_barrier_count, s.pc)) {
          d->message << "named barrier '" << m.p.named_barriers[n.decl].nm.view() << "' waits for " << n.expected << " threads, but only "
                     << n.arrived << " reach it";
          d->num("expected_threads", n.expected).num("arrived_threads", n.arrived);
          d->add_note(m.p.named_barriers[n.decl].loc) << "declared here";
          add_blocked_notes(m, d, u);
          d->help << "let Cake derive the count (named_barrier(name)) or sync it from every participating role the same number of times";
        }
        explained = true;
      }
    }
  }
  if (explained || first < 0) return;
  if (diagnostic* d = emit_op(m.c, rule_id::sync_deadlock, m.units[first].pc)) {
    d->message << "no role can make progress: ";
    write_blocked(d->message, m, first);
    add_blocked_notes(m, d, first);
    d->help << "each wait needs a matching arrive that is not itself behind this wait; follow the notes around the cycle";
  }
}

constexpr void report_exit(machine& m) {
  if (m.tmem_allocated && !m.tmem_deallocated && m.alloc_op >= 0)
    if (diagnostic* d = emit_op(m.c, rule_id::memory_tmem_dealloc, m.alloc_op)) {
      d->message << "tensor memory allocated here is never deallocated; the kernel must free it before exit";
      d->help << "r.tmem_dealloc(region) in the allocating warp after every user is done";
    }
  for (int b = 0; b < m.NB; ++b) {
    const barrier_state& bs = m.bars[b];
    if (!bs.initialized) continue;
    if (bs.tx != 0) {
      const int at = bs.last_expect_op >= 0 ? bs.last_expect_op : bs.last_tx_op;
      if (at >= 0)
        if (diagnostic* d = emit_op(m.c, rule_id::sync_expect_tx_mismatch, at)) {
          write_barrier_object(d->message, m.p, m.B, b);
          d->message << " ends phase " << bs.completed << " expecting " << bs.phase_expected << " bytes with " << bs.phase_delivered
                     << " delivered: the phases did not balance";
          d->num("expected_bytes", bs.phase_expected).num("delivered_bytes", bs.phase_delivered);
          if (bs.last_tx_op >= 0 && bs.last_tx_op != at) d->add_note(m.p.ops[bs.last_tx_op].loc) << "a TMA load completing on it";
          d->help << "expect exactly the bytes of the full boxes loaded per phase";
        }
    } else if (bs.pending > 0 && bs.pending < bs.init_count && bs.last_arrive_op >= 0) {
      if (diagnostic* d = emit_op(m.c, rule_id::sync_arrival_count, bs.last_arrive_op)) {
        write_barrier_object(d->message, m.p, m.B, b);
        d->message << " ends with phase " << bs.completed << " incomplete: " << bs.init_count - bs.pending << " of " << bs.init_count
                   << " arrivals; the arrivals per phase do not match the init count";
        d->num("init_count", bs.init_count).num("arrivals", bs.init_count - bs.pending);
        d->add_note(barrier_object_loc(m.p, m.B, b)) << "the barrier";
      }
    }
  }
}

constexpr void run_once(context& c, int k_trips, int tiles) {
  machine m(c, k_trips, tiles);
  m.setup();
  bool stopped = false;
  for (;;) {
    bool progress = false, all = true;
    for (int u = 0; u < m.U; ++u) {
      if (m.units[u].finished) continue;
      all = false;
      while (!m.units[u].finished && m.steps < c.opt.max_steps) {
        const int r = step(m, u);
        if (r == 0) break;
        progress = true;
        ++m.steps;
        if (r == 2) finish_unit(m, u);
      }
    }
    if (all) break;
    if (m.steps >= c.opt.max_steps) {
      add_coverage(c, rule_id::sync_deadlock, -1, c.p.loc, "protocol: stopped at the step budget (analysis_options::max_steps) before every role finished");
      stopped = true;
      break;
    }
    if (!progress) {
      report_deadlock(m);
      m.deadlocked = true;
      break;
    }
  }
  c.out.protocol_steps += m.steps;
  ++c.out.protocol_runs;
  if (!m.deadlocked && !stopped) report_exit(m);
}

}  // namespace proto

constexpr void check_protocol(context& c) {
  if (c.plan.barriers.overflow || c.plan.smem.barrier_count > plan::barrier_plan::max_objects) {
    add_coverage(c, rule_id::sync_deadlock, -1, c.p.loc, "protocol: not run, the barrier plan overflowed (resource.mbarrier-count)");
    return;
  }
  const int k = c.opt.k_trips > 0 ? c.opt.k_trips : deepest_ring(c.p) + 2;
  int tiles = c.opt.tiles < 2 ? 2 : c.opt.tiles;
  // An alternating walk needs two rounds of its units to exercise the hand-over of pipeline positions.
  for (const auto& o : c.p.ops)
    if (o.kind == op_kind::tile_loop && o.has(flag_alternate) && 2 * c.p.roles[o.role].count > tiles) tiles = 2 * c.p.roles[o.role].count;
  c.out.k_trips = k;
  c.out.tiles = c.p.launch.persistent ? tiles : 1;
  proto::run_once(c, k, tiles);
  if (c.opt.single_trip_run && k != 1 && has_dynamic_loop(c.p)) proto::run_once(c, 1, tiles);
}

}  // namespace cake::analysis
