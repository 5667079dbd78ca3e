#pragma once
// Memory semantics of the protocol executor: which stage and rectangle of a region an operand touches
// for a given unit, the race / WAR / proxy-fence checks on every smem and TMEM access, and the state
// of register tiles (accumulators) per unit.
#include "protocol_sync.hpp"

namespace cake::analysis::proto {

struct place {
  int first = 0, count = 0;  // memory objects (stages) touched
  rect area{};
};

// Which stage(s) and which rectangle of a region `o` touches when unit `u` runs op `id`.
constexpr place locate(machine& m, int u, int id, const operand& o) {
  place pl;
  if (o.kind != operand_kind::smem && o.kind != operand_kind::tmem) return pl;
  const bool sm = o.kind == operand_kind::smem;
  const int stages = sm ? m.p.smem[o.index].stages : m.p.tmem[o.index].stages;
  const int base = sm ? m.smem_base[o.index] : m.tmem_base[o.index];
  pl.first = base;
  pl.count = 1;
  if (o.sel == stage_sel::none) {
    pl.count = stages;
  } else if (o.sel == stage_sel::slot) {
    const int slot = o.slot_op < m.slot_of_op.size ? m.slot_of_op[o.slot_op] : -1;
    const int st = slot >= 0 ? m.slot_stage[u * m.slots + slot] : -1;
    if (st < 0) {
      if (diagnostic* d = emit_op(m.c, rule_id::memory_stage_index, id)) {
        d->message << "slot#" << o.slot_op << " is used by ";
        m.write_unit(d->message, u);
        d->message << ", which has not received it from its acquire/wait";
        if (o.slot_op < m.p.ops.size()) d->add_note(m.p.ops[o.slot_op].loc) << "the slot comes from this op";
        d->help << "use a slot in the role (and loop) whose acquire/wait produced it";
      }
    } else {
      pl.first = base + st;
    }
  } else {
    const long long v = m.eval(u, o.stage);
    if (v < 0) {
      if (diagnostic* d = emit_op(m.c, rule_id::memory_stage_index, id)) {
        d->message << "stage index " << v << " of '" << resource_name(m.p, o) << "' is negative";
        d->num("index", v).num("stages", stages);
        d->help << "keep stage expressions non-negative (e.g. kt + stages - 1 rather than kt - 1)";
      }
    }
    pl.first = base + static_cast<int>(((v % stages) + stages) % stages);
  }
  const auto full = plan::full_shape(m.p, o);
  pl.area = {0, full.rows, 0, full.cols};
  if (o.part != part_axis::none && o.parts > 0) {
    long long idx = m.eval(u, o.part_index);
    if (idx < 0 || idx >= o.parts) {
      if (diagnostic* d = emit_op(m.c, rule_id::memory_smem_bounds, id)) {
        d->message << "part " << idx << " of " << static_cast<int>(o.parts) << " of '" << resource_name(m.p, o) << "' does not exist (";
        m.write_unit(d->message, u);
        d->message << ')';
        d->num("index", idx).num("parts", o.parts);
      }
      idx = idx < 0 ? 0 : o.parts - 1;
    }
    const int i = static_cast<int>(idx);
    if (o.part == part_axis::rows) {
      const int step = full.rows / o.parts;
      pl.area.r0 = i * step, pl.area.r1 = (i + 1) * step;
    } else {
      const int step = full.cols / o.parts;
      pl.area.c0 = i * step, pl.area.c1 = (i + 1) * step;
    }
  }
  return pl;
}

constexpr void push_record(machine& m, memory_object& obj, const access_rec& r) {
  if (obj.count == max_records) {
    for (int i = 1; i < obj.count; ++i) obj.recs[i - 1] = obj.recs[i];
    --obj.count;
    add_coverage(m.c, rule_id::dataflow_race, -1, m.p.loc, "protocol: the access history of a stage overflowed; the oldest accesses were forgotten");
  }
  obj.recs[obj.count++] = r;
}

constexpr void remove_record(memory_object& obj, int i) {
  for (int j = i + 1; j < obj.count; ++j) obj.recs[j - 1] = obj.recs[j];
  --obj.count;
}

template <class Text>
constexpr void write_unit_and_read(const machine& m, Text& t, int u, int o) {
  m.write_unit(t, u);
  t << " reads ";
  m.write_object(t, o);
}

// An op that writes the region of memory object `o` (the first one), -1 if none does.
constexpr int writer_of(const machine& m, bool tmem, int o) {
  int region = -1;
  if (tmem) {
    for (std::size_t r = 0; r < m.p.tmem.size(); ++r)
      if (o >= m.tmem_base[r] && o < m.tmem_base[r] + m.p.tmem[r].stages) region = static_cast<int>(r);
  } else {
    for (std::size_t r = 0; r < m.p.smem.size(); ++r)
      if (o >= m.smem_base[r] && o < m.smem_base[r] + m.p.smem[r].stages) region = static_cast<int>(r);
  }
  const operand_kind k = tmem ? operand_kind::tmem : operand_kind::smem;
  for (std::size_t i = 0; i < m.p.ops.size(); ++i) {
    const op& w = m.p.ops[i];
    const bool writes = w.kind == op_kind::tma_load || w.kind == op_kind::cp_async || w.kind == op_kind::stmatrix || w.kind == op_kind::store_shared ||
                        w.kind == op_kind::tcgen05_mma || w.kind == op_kind::tmem_store;
    if (writes && w.d.kind == k && w.d.index == region) return static_cast<int>(i);
  }
  return -1;
}

// The acquire / wait op whose slot an op reads through (its smem / TMEM operand `slot[region]`), or -1.
constexpr int slot_read_by(const program& p, int op_id) {
  const op& o = p.ops[op_id];
  for (const operand* x : {&o.a, &o.b, &o.d})
    if ((x->kind == operand_kind::smem || x->kind == operand_kind::tmem) && x->sel == stage_sel::slot) return x->slot_op;
  return -1;
}

// Likely causes of a hazard on a pipeline stage, named as the ops the user wrote (issue 10: a misplaced
// sync op must be named, not only the conflicting pair): the reader's own release of that slot written
// before the read, or a slot taken with acquire (which waits for an empty stage) by a role that reads it.
template <class Diag>
constexpr void note_misplaced_sync(const program& p, Diag* d, int reader_op) {
  const int slot = slot_read_by(p, reader_op);
  if (slot < 0) return;
  const op& so = p.ops[slot];
  if (so.kind == op_kind::pipeline_acquire) {
    d->add_note(so.loc) << "likely cause: op#" << slot << " takes this stage with acquire, which waits for an empty stage (the producer's side); a role that reads the data waits with r.wait(pipeline)";
    return;
  }
  for (std::size_t i = 0; i < p.ops.size() && static_cast<int>(i) < reader_op; ++i) {
    const op& rel = p.ops[i];
    if (rel.kind == op_kind::pipeline_release && rel.a.sel == stage_sel::slot && rel.a.slot_op == slot && !rel.has(flag_release_later)) {
      d->add_note(rel.loc) << "likely cause: op#" << i << " releases the stage before this read (op#" << reader_op << ") in program order; release it after the read"
                           << (p.ops[reader_op].kind == op_kind::wgmma ? " (after wgmma_wait)" : "");
      return;
    }
  }
}

// dataflow.partial-fill: the writes of object `o` that overlap a read of `area` leave part of it unfilled
// (a load of 8 rows into a 64-row region that an MMA reads whole), and none of them says the rest is
// unused (rest_unused()). The read is cut into cells at every write's edges; the first cell no write covers
// is named. More than 16 overlapping writes: not checked.
constexpr void check_partial_fill(machine& m, int u, int id, int o, rect area) {
  const memory_object& obj = m.mem[o];
  constexpr int max_writes = 16;
  rect ws[max_writes]{};
  int n = 0, writer = -1;
  for (int i = 0; i < obj.count; ++i) {
    const access_rec& w = obj.recs[i];
    if (!w.is(acc_write) || !w.area.overlaps(area)) continue;
    if (w.op >= 0 && m.p.ops[w.op].has(flag_rest_unused)) return;
    if (n == max_writes) return;
    if (writer < 0) writer = w.op;
    ws[n++] = w.area;
  }
  if (n == 0) return;
  int rows[2 * max_writes + 2]{}, cols[2 * max_writes + 2]{}, nr = 0, nc = 0;
  auto add = [](int* v, int& k, int x) {
    for (int i = 0; i < k; ++i)
      if (v[i] == x) return;
    int i = k++;
    for (; i > 0 && v[i - 1] > x; --i) v[i] = v[i - 1];
    v[i] = x;
  };
  add(rows, nr, area.r0), add(rows, nr, area.r1), add(cols, nc, area.c0), add(cols, nc, area.c1);
  for (int i = 0; i < n; ++i) {
    if (ws[i].r0 > area.r0 && ws[i].r0 < area.r1) add(rows, nr, ws[i].r0);
    if (ws[i].r1 > area.r0 && ws[i].r1 < area.r1) add(rows, nr, ws[i].r1);
    if (ws[i].c0 > area.c0 && ws[i].c0 < area.c1) add(cols, nc, ws[i].c0);
    if (ws[i].c1 > area.c0 && ws[i].c1 < area.c1) add(cols, nc, ws[i].c1);
  }
  for (int a = 0; a + 1 < nr; ++a)
    for (int b = 0; b + 1 < nc; ++b) {
      const rect cell{rows[a], rows[a + 1], cols[b], cols[b + 1]};
      bool covered = false;
      for (int i = 0; i < n && !covered; ++i) covered = ws[i].covers(cell);
      if (covered) continue;
      if (diagnostic* d = emit_op(m.c, rule_id::dataflow_partial_fill, id)) {
        write_unit_and_read(m, d->message, u, o);
        d->message << " rows " << area.r0 << ".." << area.r1 - 1 << ", columns " << area.c0 << ".." << area.c1 - 1 << "; no write fills rows " << cell.r0
                   << ".." << cell.r1 - 1 << ", columns " << cell.c0 << ".." << cell.c1 - 1 << " of it";
        if (writer >= 0) {
          d->add_note(m.p.ops[writer].loc) << "a write that fills part of it (op#" << writer << ")";
          d->help << "fill the rest too, or, if what the unfilled part produces is never used (e.g. output rows past M that are never stored), say so: "
                     "r.tma_load(...).rest_unused() on the partial load";
        } else {
          d->help << "fill the rest too";
        }
      }
      return;
    }
}

// A read by unit `u` of `area` in object `o`. `async`: read by the async proxy (needs proxy fences
// after generic writes); `done`: when the read is over (for later writers).
constexpr void read_access(machine& m, int u, int id, int o, rect area, std::uint8_t flags, stamp done) {
  memory_object& obj = m.mem[o];
  obj.unread_mma = -1;  // any read of an accumulator stage reads its MMA result (dataflow.dead-accumulation)
  const bool async_read = (flags & acc_async) != 0;
  bool written = false;
  for (int i = 0; i < obj.count; ++i) {
    const access_rec& w = obj.recs[i];
    if (!w.is(acc_write) || !w.area.overlaps(area)) continue;
    written = true;
    if (w.unit == u && !w.is(acc_async) && !async_read) continue;  // own synchronous write: program order
    if (w.is(acc_pending) || !m.sees(u, w.done)) {
      const bool war = !w.is(acc_pending) && w.prev.valid() && m.sees(u, w.prev);
      const rule_id r = war ? rule_id::dataflow_war : w.is(acc_mma) ? rule_id::dataflow_acc_read_before_complete : rule_id::dataflow_race;
      const int at = war ? w.op : id;
      if (diagnostic* d = emit_op(m.c, r, at)) {
        if (war) {
          d->message << "overwrites ";
          m.write_object(d->message, o);
          d->message << " while ";
          m.write_unit(d->message, u);
          d->message << " still has to read the data it waited for";
          d->add_note(m.p.ops[id].loc) << "the read that loses its data (op#" << id << ")";
          if (w.prev_op >= 0) d->add_note(m.p.ops[w.prev_op].loc) << "the write it waited for (op#" << w.prev_op << ")";
          d->help << "the overwrite must wait until every consumer has released the stage: check the release and the barrier's arrival count";
        } else {
          write_unit_and_read(m, d->message, u, o);
          if (w.is(acc_pending)) d->message << " before unit " << static_cast<int>(w.unit) << " of the same role wrote its share of it";
          else if (w.is(acc_mma)) d->message << " before the MMA that writes it completed";
          else d->message << " that is not ordered after the write that fills it";
          d->add_note(m.p.ops[w.op].loc) << "the write (op#" << w.op << ")";
          note_misplaced_sync(m.p, d, id);
          d->help << (w.is(acc_mma) ? "wait on the barrier the MMAs commit to (tcgen05_commit / pipeline commit) before reading"
                                    : w.is(acc_async) ? "wait on the barrier (or wait_group) that completes the write before reading"
                                                      : "put a barrier between the write and the read");
        }
      }
      continue;
    }
    if (async_read && w.is(acc_generic) && !m.sees(u, w.fence)) {
      if (diagnostic* d = emit_op(m.c, rule_id::sync_missing_proxy_fence, w.op)) {
        d->message << "this generic-proxy write to ";
        m.write_object(d->message, o);
        d->message << " is read by the async proxy (op#" << id << " " << to_string(m.p.ops[id].kind) << ") without fence.proxy.async in between";
        d->add_note(m.p.ops[id].loc) << "the async-proxy read";
        d->help << "add r.fence_proxy_async() after the write, before the barrier that hands the data over";
      }
    }
  }
  if (written && !m.is_tmem_object(o)) check_partial_fill(m, u, id, o, area);
  if (!written) {
    // Whether anything will write it decides the finding, not which unit the scheduler ran first.
    const bool tmem = m.is_tmem_object(o);
    const int writer = writer_of(m, tmem, o);
    const rule_id r = !tmem ? rule_id::dataflow_race : writer >= 0 ? rule_id::dataflow_acc_read_before_complete : rule_id::dataflow_acc_uninitialized;
    if (diagnostic* d = emit_op(m.c, r, id)) {
      write_unit_and_read(m, d->message, u, o);
      if (writer >= 0) {
        d->message << (tmem ? " before the MMA that writes it completed" : " that is not ordered after the write that fills it");
        d->add_note(m.p.ops[writer].loc) << "the write (op#" << writer << ")";
        note_misplaced_sync(m.p, d, id);
        d->help << (tmem ? "wait on the barrier the MMAs commit to (pipeline wait / mbarrier wait) before reading"
                         : "wait on the barrier (or wait_group) that completes the write before reading");
      } else {
        d->message << ", which nothing writes";
        d->help << (tmem ? "write the accumulator first (an MMA with overwrite)" : "fill it first (TMA load, cp.async or a store)");
      }
    }
  }
  for (int i = 0; i < obj.count; ++i) {
    access_rec& r = obj.recs[i];
    if (!r.is(acc_write) && r.unit == u && r.area == area && r.gen == obj.gen && r.flags == flags) {
      r.op = static_cast<std::int16_t>(id);
      r.done = done;
      return;
    }
  }
  access_rec r;
  r.op = static_cast<std::int16_t>(id);
  r.unit = static_cast<std::uint8_t>(u);
  r.flags = flags;
  r.area = area;
  r.done = done;
  r.gen = obj.gen;
  push_record(m, obj, r);
}

constexpr void check_war(machine& m, int u, int id, int o, rect area, int gen) {
  memory_object& obj = m.mem[o];
  for (int i = 0; i < obj.count; ++i) {
    const access_rec& r = obj.recs[i];
    if (r.is(acc_write) || r.gen >= gen || !r.area.overlaps(area)) continue;
    if (r.unit == u && !r.is(acc_async)) continue;
    if (m.sees(u, r.done)) continue;
    const bool store = r.is(acc_store_read);
    const op_kind reader = m.p.ops[r.op].kind;
    if (diagnostic* d = emit_op(m.c, store ? rule_id::dataflow_store_source_reuse : rule_id::dataflow_war, id)) {
      d->message << "overwrites ";
      m.write_object(d->message, o);
      d->message << " while ";
      m.write_unit(d->message, r.unit);
      d->message << (store ? " may still be storing it with a TMA store" : " may still be reading it") << " (op#" << r.op << ' ' << to_string(reader) << ')';
      d->add_note(m.p.ops[r.op].loc) << (store ? "the TMA store reading it" : "the read");
      if (!store) note_misplaced_sync(m.p, d, r.op);
      if (store) d->help << "bulk_wait_read(n) so that the store that last read this buffer is done before overwriting it";
      else if (reader == op_kind::wgmma) d->help << "the wgmma may still read the stage after it is released: wgmma_commit() and wgmma_wait(0) before the release";
      else if (reader == op_kind::tcgen05_mma) d->help << "release the stage from the role that issues the MMAs (its release is a tcgen05.commit)";
      else d->help << "the writer must wait until every reader released the stage (its release / arrive, and a wait on that barrier here)";
    }
  }
}

constexpr void drop_old_reads(memory_object& obj, rect area, int gen) {
  for (int i = obj.count - 1; i >= 0; --i) {
    const access_rec& r = obj.recs[i];
    if (!r.is(acc_write) && r.gen < gen && area.covers(r.area)) remove_record(obj, i);
  }
}

// A write by unit `u`. `joint`: every unit of the role writes its share of the same tile (a collective
// copy); readers need all shares.
constexpr void write_access(machine& m, int u, int id, int o, rect area, std::uint8_t flags, stamp done, bool joint) {
  memory_object& obj = m.mem[o];
  const int inst = joint ? m.instance(u) : 0;
  if (joint) {
    for (int i = 0; i < obj.count; ++i) {
      access_rec& w = obj.recs[i];
      if (!w.is(acc_pending) || w.unit != u || w.op != id || w.instance != inst || !(w.area == area)) continue;
      check_war(m, u, id, o, area, w.gen);
      w.flags = static_cast<std::uint8_t>(flags | acc_write);
      w.done = done;
      bool last = true;
      for (int j = 0; j < obj.count; ++j)
        if (obj.recs[j].is(acc_pending) && obj.recs[j].op == id && obj.recs[j].instance == inst) last = false;
      if (last) drop_old_reads(obj, area, w.gen);
      return;
    }
  }
  const int gen = ++obj.gen;
  check_war(m, u, id, o, area, gen);
  stamp prev{};
  int prev_op = -1;
  for (int i = obj.count - 1; i >= 0; --i) {
    const access_rec& w = obj.recs[i];
    if (!w.is(acc_write) || !area.covers(w.area)) continue;
    if (!prev.valid() && !w.is(acc_pending)) prev = w.done, prev_op = w.op;
    remove_record(obj, i);
  }
  bool partners = false;
  if (joint)
    for (int v = 0; v < m.U; ++v) partners = partners || (v != u && m.units[v].role == m.units[u].role);
  if (!partners) drop_old_reads(obj, area, gen);
  access_rec r;
  r.op = static_cast<std::int16_t>(id);
  r.unit = static_cast<std::uint8_t>(u);
  r.flags = static_cast<std::uint8_t>(flags | acc_write);
  r.area = area;
  r.done = done;
  r.prev = prev;
  r.prev_op = static_cast<std::int16_t>(prev_op);
  r.gen = gen;
  r.instance = inst;
  push_record(m, obj, r);
  if (!partners) return;
  for (int v = 0; v < m.U; ++v) {
    if (v == u || m.units[v].role != m.units[u].role) continue;
    access_rec share = r;
    share.unit = static_cast<std::uint8_t>(v);
    share.flags = static_cast<std::uint8_t>(acc_write | acc_pending);
    share.done = {};
    push_record(m, obj, share);
  }
}

// ---- dead accumulation ---------------------------------------------------------------------------
// An MMA result is "read" by any op that takes its accumulator as a source (an accumulating MMA, r.set
// expressions, reductions, convert, stores, stmatrix, tmem_load, an MMA's A operand); it is lost when
// an op overwrites the whole accumulator first (an MMA with overwrite, fill, set, convert/load into it,
// tmem_store). Accumulators written or overwritten by part (acc.cols(i, n)) are not tracked.

// The innermost loop that runs `later` (which comes before `earlier` in program order) again after
// `earlier`: the loop that carries the overwrite into the next trip. -1: none.
constexpr int carrying_loop(const program& p, int later, int earlier) {
  if (later > earlier) return -1;
  for (int l = p.ops[later].parent; l >= 0; l = p.ops[l].parent)
    if ((p.ops[l].kind == op_kind::loop || p.ops[l].kind == op_kind::tile_loop) && l < earlier && earlier < p.ops[l].end) return l;
  return -1;
}

constexpr void report_dead_accumulation(machine& m, int u, int id, int mma, std::string_view acc_name, src_loc decl) {
  diagnostic* d = emit_op(m.c, rule_id::dataflow_dead_accumulation, id);
  if (!d) return;
  const program& p = m.p;
  const op& o = p.ops[id];
  const bool by_mma = o.kind == op_kind::wgmma || o.kind == op_kind::mma_sync || o.kind == op_kind::tcgen05_mma;
  const int loop = carrying_loop(p, id, mma);
  d->message << (by_mma ? "this MMA overwrites '" : "overwrites '") << acc_name << "' before anything read the result of ";
  if (mma == id) d->message << "its own previous trip";
  else d->message << "the MMA op#" << mma;
  if (loop >= 0) {
    d->message << " (";
    write_loop_name(d->message, p, loop);
    d->message << (mma == id ? ": every trip discards the partial sums of the one before)" : " carries it into the next trip)");
  }
  d->message << " in ";
  m.write_unit(d->message, u);
  d->num("mma_op", mma).num("loop_op", loop);
  d->add_note(p.ops[mma].loc) << "the MMA whose result is lost (op#" << mma << ")";
  if (loop >= 0) {
    auto& n = d->add_note(p.ops[loop].loc);
    n << "the loop (";
    write_loop_name(n, p, loop);
    n << ")";
  }
  d->add_note(decl) << "'" << acc_name << "' declared here";
  if (by_mma && o.has(flag_overwrite) && loop >= 0)
    d->help << "accumulate over the loop: .overwrite_on_first(<this loop's variable>) instead of .overwrite(), or move the overwrite out of the loop (zero '"
            << acc_name << "' before it and drop .overwrite())";
  else if (by_mma)
    d->help << "let this MMA accumulate onto the earlier result (drop .overwrite() / overwrite_on_first), or read '" << acc_name
            << "' (store, convert, reduce) before it";
  else
    d->help << "read '" << acc_name << "' (store, convert, reduce, stmatrix) before overwriting it, or drop the MMA";
}

// ---- register tiles ------------------------------------------------------------------------------

constexpr reg_state& reg_of(machine& m, int u, int reg) { return m.regs[u * m.R + reg]; }

constexpr void touch_wgmma_regs(machine& m, int u, const operand& o) {
  if (o.kind == operand_kind::reg && o.index < 32 && (m.units[u].wg_regs >> o.index & 1u)) m.units[u].wg_fenced = false;
}

constexpr bool wgmma_pending(machine& m, int u, const reg_state& r) {
  return r.wg_group > 0 && m.units[u].wg_agent >= 0 && m.vc(u)[m.units[u].wg_agent] < r.wg_group;
}

constexpr void report_pending_acc(machine& m, int u, int id, const operand& o, bool write) {
  if (diagnostic* d = emit_op(m.c, rule_id::dataflow_acc_read_before_complete, id)) {
    d->message << (write ? "overwrites '" : "reads '") << m.p.regs[o.index].nm.view() << "' while a wgmma writing it may still be in flight";
    if (m.units[u].last_wgmma >= 0) d->add_note(m.p.ops[m.units[u].last_wgmma].loc) << "the wgmma (op#" << m.units[u].last_wgmma << ")";
    d->help << "wgmma_commit() then wgmma_wait(0) before touching the accumulator";
  }
}

constexpr void reg_read(machine& m, int u, int id, const operand& o, bool by_wgmma = false) {
  if (o.kind != operand_kind::reg) return;
  if (!by_wgmma) touch_wgmma_regs(m, u, o);
  reg_state& r = reg_of(m, u, o.index);
  r.unread_mma = -1;
  if (wgmma_pending(m, u, r) && !by_wgmma) {
    report_pending_acc(m, u, id, o, false);
  } else if (!r.written && m.p.regs[o.index].accumulator) {
    if (diagnostic* d = emit_op(m.c, rule_id::dataflow_acc_uninitialized, id)) {
      d->message << "reads accumulator '" << m.p.regs[o.index].nm.view() << "', which nothing has written";
      d->add_note(m.p.regs[o.index].loc) << "declared here";
      d->help << "zero it (r.zero) or let the first MMA overwrite it (.overwrite_on_first(kt))";
    }
  }
}

// A wgmma with its A operand in registers reads them while it runs: writing them before the group is
// waited for changes what the MMA multiplies (ptxas serializes around it or the result is wrong).
constexpr void report_operand_in_flight(machine& m, int u, int id, const operand& o, const reg_state& r) {
  if (diagnostic* d = emit_op(m.c, rule_id::dataflow_operand_in_flight, id)) {
    const auto nm = m.p.regs[o.index].nm.view();
    d->message << "overwrites '" << nm << "' while the wgmma op#" << r.wg_reader << " that reads it as its A operand may still be in flight (its group "
               << r.wg_read_group << " is not covered by a wgmma_wait in ";
    m.write_unit(d->message, u);
    d->message << ")";
    d->num("wgmma_op", r.wg_reader).num("group", r.wg_read_group);
    if (r.wg_reader >= 0) d->add_note(m.p.ops[r.wg_reader].loc) << "the wgmma reading '" << nm << "' (op#" << r.wg_reader << ")";
    d->help << "write '" << nm << "' after a wgmma_wait(n) that covers that wgmma's group (e.g. wgmma_wait(0)), or into another register tile";
  }
}

constexpr void reg_write(machine& m, int u, int id, const operand& o) {
  if (o.kind != operand_kind::reg) return;
  touch_wgmma_regs(m, u, o);
  reg_state& r = reg_of(m, u, o.index);
  if (wgmma_pending(m, u, r)) report_pending_acc(m, u, id, o, true);
  if (r.wg_read_group > 0 && m.units[u].wg_agent >= 0 && m.vc(u)[m.units[u].wg_agent] < r.wg_read_group) report_operand_in_flight(m, u, id, o, r);
  r.wg_read_group = 0;
  if (r.unread_mma >= 0 && o.part == part_axis::none) report_dead_accumulation(m, u, id, r.unread_mma, m.p.regs[o.index].nm.view(), m.p.regs[o.index].loc);
  r.unread_mma = -1;
  r.written = true;
  r.init_tile = m.write_tile(u, id);
  r.wg_group = 0;
}

// Does this execution of an MMA overwrite its accumulator (D = A*B) rather than accumulate?
constexpr bool mma_overwrites(const machine& m, int u, const op& o) {
  if (o.has(flag_overwrite)) return true;
  if (!o.has(flag_overwrite_first)) return false;
  const unit_state& s = m.units[u];
  for (int d = s.depth - 1; d >= 0; --d)
    if (s.stack[d].op == o.imm[2]) return s.stack[d].iter == 0;
  return true;
}

// Accumulate (D += A*B) into an accumulator whose state is (written, init_tile).
constexpr void check_accumulate(machine& m, int u, int id, bool written, int init_tile, std::string_view acc_name, src_loc decl) {
  const int tile = m.units[u].tile_iter;
  if (!written) {
    if (diagnostic* d = emit_op(m.c, rule_id::dataflow_acc_uninitialized, id)) {
      d->message << "accumulates into '" << acc_name << "', which nothing has initialized";
      d->add_note(decl) << "declared here";
      d->help << "let the first MMA overwrite it: .overwrite_on_first(kt), or zero it before the loop";
    }
  } else if (tile >= 0 && init_tile != tile && (init_tile >= 0 || tile > 0) && !(init_tile == m.write_tile(u, id) && init_tile == tile + 1)) {
    // (inside r.next_point an MMA may accumulate onto what an overwrite there started for the next point)
    // initialized in an earlier tile, or once before the tile loop and now in a later tile
    if (diagnostic* d = emit_op(m.c, rule_id::dataflow_acc_stale, id)) {
      d->message << "accumulates onto '" << acc_name << "' as ";
      if (init_tile >= 0) d->message << "left by tile iteration " << init_tile;
      else d->message << "initialized once before the tile loop";
      d->message << ", in tile iteration " << tile << ": the previous tile's result is added in";
      d->num("tile", tile).num("initialized_in_tile", init_tile);
      d->help << "re-initialize it for every tile: .overwrite_on_first(kt), or r.zero(acc) inside for_each_tile";
    }
  }
}

}  // namespace cake::analysis::proto
