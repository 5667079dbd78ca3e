#pragma once
// The abstract machine of the protocol executor: setup from the Program and its plan, vector clocks,
// barrier phases, and the access history of smem/TMEM stages. The semantics of each op are in
// protocol_ops.hpp; scheduling and the deadlock report in protocol.hpp.
#include "index_condition.hpp"
#include "index_value.hpp"
#include "protocol_model.hpp"

namespace cake::analysis::proto {

struct machine {
  context& c;
  const program& p;
  const plan::barrier_plan& B;
  int k_trips = 1, tiles = 1;
  bool manual = false;
  int cluster = 1;

  int U = 0, NB = 0, NI = 0, C = 0, R = 0, slots = 0, mem_count = 0;
  unit_state units[max_units]{};
  int role_first[capacity::roles]{}, role_end[capacity::roles]{};
  int role_unit0[capacity::roles]{};  // index in units[] of each role's unit 0
  buffer<int> clocks;           // unit clocks, barrier acc/done, named acc/done (each C wide)
  buffer<barrier_state> bars;   // one per plan barrier object
  buffer<named_state> named;    // hardware named-barrier instances, then the cluster barrier
  buffer<int> named_inst;       // [named barrier * U + unit] -> instance
  int cluster_inst = -1;
  buffer<int> wait_count;       // [unit * NB + object]: waits done on a user barrier object
  buffer<int> pipe_count;       // [(unit * P + pipeline) * 2 + side]: acquires (0) and waits (1)
  buffer<int> slot_of_op;       // [op] -> slot index (pipeline acquire/wait ops), -1 otherwise
  buffer<int> slot_stage;       // [unit * slots + slot] -> stage handed out last, -1 none
  buffer<reg_state> regs;       // [unit * R + reg]
  buffer<memory_object> mem;    // smem stages, then TMEM stages
  // Inside a warpgroup: one elected thread issues TMA stores and bulk waits while every thread writes
  // smem (stmatrix, st.shared). Only a barrier of the whole warpgroup (bar.sync) orders the two; per
  // [unit * mem_count + object], the unit's barrier epoch + 1 of: its last whole-unit write, the end of
  // its stores' reads (a bulk wait that covered them, on the elected thread), and the bulk group of the
  // last store that read it.
  buffer<int> unit_write_epoch, store_done_epoch, store_group;
  int smem_base[capacity::smem]{}, tmem_base[capacity::tmem]{};
  bool has_init[capacity::mbarriers]{};
  // tensor memory allocation
  bool tmem_allocated = false, tmem_deallocated = false;
  int alloc_op = -1;
  stamp alloc_stamp{};
  long steps = 0;
  bool deadlocked = false;

  constexpr machine(context& ctx, int k, int t) : c(ctx), p(ctx.p), B(ctx.plan.barriers), k_trips(k), tiles(t) {}

  // ---- clocks --------------------------------------------------------------------------------
  constexpr int* vc(int u) { return clocks.data + u * C; }
  constexpr int* bar_acc(int b) { return clocks.data + (U + b) * C; }
  constexpr int* bar_done(int b) { return clocks.data + (U + NB + b) * C; }
  constexpr int* named_acc(int i) { return clocks.data + (U + 2 * NB + i) * C; }
  constexpr int* named_done(int i) { return clocks.data + (U + 2 * NB + NI + i) * C; }
  constexpr void join(int* dst, const int* src) {
    for (int i = 0; i < C; ++i)
      if (src[i] > dst[i]) dst[i] = src[i];
  }
  constexpr void clear(int* dst) {
    for (int i = 0; i < C; ++i) dst[i] = 0;
  }
  constexpr bool sees(int u, stamp s) { return s.valid() && vc(u)[s.comp] >= s.value; }
  constexpr void tick(int u) { ++vc(u)[u]; }
  constexpr stamp now(int u) { return {u, vc(u)[u]}; }
  constexpr void raise(int u, int comp, int value) {
    if (comp >= 0 && vc(u)[comp] < value) vc(u)[comp] = value;
  }

  // ---- setup ---------------------------------------------------------------------------------
  constexpr void setup() {
    manual = p.launch.manual_barrier_init;
    cluster = p.launch.cluster_size() > 0 ? p.launch.cluster_size() : 1;
    const auto& W = c.plan.warps;
    bool truncated = false;
    for (std::size_t r = 0; r < p.roles.size(); ++r) {
      role_first[r] = -1;
      for (std::size_t i = 0; i < p.ops.size(); ++i)
        if (p.ops[i].role == r) {
          if (role_first[r] < 0) role_first[r] = static_cast<int>(i);
          role_end[r] = static_cast<int>(i) + 1;
        }
      if (role_first[r] < 0) role_first[r] = role_end[r] = 0;
      truncated = truncated || U + p.roles[r].count > max_units;
      role_unit0[r] = U;
      for (int i = 0; i < p.roles[r].count && U < max_units; ++i) {
        unit_state& s = units[U++];
        s.role = static_cast<int>(r);
        s.index = i;
        const bool wg = p.roles[r].unit == role_unit::warpgroup;
        s.first_warp = W.roles[r].first_warp + (wg ? 4 * i : i);
        s.threads = wg ? 128 : 32;
        s.pc = role_first[r];
        s.end = role_end[r];
      }
    }
    if (truncated) add_coverage(c, rule_id::sync_deadlock, -1, p.loc, "protocol: only the first 32 units of the roles are executed");
    NB = B.count;
    int agents = 0;
    for (int u = 0; u < U; ++u) {
      unit_state& s = units[u];
      for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const op& o = p.ops[i];
        if (o.role != s.role) continue;
        if (o.kind == op_kind::wgmma && s.wg_agent < 0) s.wg_agent = U + NB + agents++;
        if (o.kind == op_kind::cp_async && s.cp_agent < 0) s.cp_agent = U + NB + agents++;
        if (o.kind == op_kind::tma_store && s.bulk_agent < 0) s.bulk_agent = U + NB + agents++;
        if (o.kind == op_kind::tcgen05_mma && s.tc_agent < 0) s.tc_agent = U + NB + agents++;
        if (o.kind == op_kind::wgmma)
          for (const operand* x : {&o.d, &o.a})
            if (x->kind == operand_kind::reg && x->index < 32) s.wg_regs |= 1u << x->index;
      }
    }
    C = U + NB + agents;
    setup_named();
    clocks.reset((U + 2 * NB + 2 * NI) * C);
    setup_barriers();
    setup_slots();
    R = static_cast<int>(p.regs.size());
    regs.reset(U * R);
    for (std::size_t r = 0; r < p.smem.size(); ++r) smem_base[r] = mem_count, mem_count += p.smem[r].stages;
    for (std::size_t t = 0; t < p.tmem.size(); ++t) tmem_base[t] = mem_count, mem_count += p.tmem[t].stages;
    mem.reset(mem_count);
    unit_write_epoch.reset(U * mem_count);
    store_done_epoch.reset(U * mem_count);
    store_group.reset(U * mem_count);
  }

  constexpr bool role_uses_named(int role, int b) const {
    for (const auto& o : p.ops)
      if (o.role == role && o.d.kind == operand_kind::named_barrier && o.d.index == b &&
          (o.kind == op_kind::named_barrier_sync || o.kind == op_kind::named_barrier_arrive || o.kind == op_kind::turn_take ||
           o.kind == op_kind::turn_pass))
        return true;
    return false;
  }

  constexpr void setup_named() {
    const int nbs = static_cast<int>(p.named_barriers.size());
    named.reset(nbs * U + 1);
    named_inst.reset(nbs * U > 0 ? nbs * U : 1);
    for (int i = 0; i < named_inst.size; ++i) named_inst[i] = -1;
    for (int b = 0; b < nbs; ++b) {
      const auto& decl = p.named_barriers[b];
      int shared = -1;
      for (int u = 0; u < U; ++u) {
        if (!role_uses_named(units[u].role, b)) continue;
        if (decl.per_unit) {
          named[NI] = {units[u].threads * (decl.turns ? 2 : 1), 0, 0, 1u << u, b};
          named_inst[b * U + u] = NI++;
          continue;
        }
        if (shared < 0) {
          shared = NI++;
          named[shared] = {decl.threads, 0, 0, 0, b};
        }
        named[shared].users |= 1u << u;
        if (decl.threads == 0) named[shared].expected += units[u].threads;
        named_inst[b * U + u] = shared;
      }
    }
    // Turns: unit 0 holds the first turn, as if the role's last unit had passed it (derived prologue).
    for (int b = 0; b < nbs; ++b) {
      if (!p.named_barriers[b].turns) continue;
      for (std::size_t r = 0; r < p.roles.size(); ++r) {
        const int u0 = role_unit0[r], count = p.roles[r].count;
        if (count < 2 || !role_uses_named(static_cast<int>(r), b) || u0 + count > U) continue;
        const int inst = named_inst[b * U + u0];
        if (inst >= 0) named[inst].arrived += units[u0 + count - 1].threads;
        if (inst >= 0) named[inst].users |= 1u << (u0 + count - 1);
      }
    }
    cluster_inst = NI++;
    named[cluster_inst] = {0, 0, 0, 0, -1};
    for (int u = 0; u < U; ++u) {
      named[cluster_inst].expected += units[u].threads;
      named[cluster_inst].users |= 1u << u;
    }
  }

  // Units whose role has an op arriving on mbarrier `b` (any element).
  constexpr unsigned user_arrivers(int b) const {
    unsigned m = 0;
    for (const auto& o : p.ops) {
      const bool arrive = o.kind == op_kind::mbarrier_arrive || o.kind == op_kind::mbarrier_arrive_expect_tx || o.kind == op_kind::tcgen05_commit;
      if (!arrive || o.d.kind != operand_kind::mbarrier || o.d.index != b) continue;
      for (int u = 0; u < U; ++u)
        if (units[u].role == o.role) m |= 1u << u;
    }
    return m;
  }
  constexpr unsigned pipeline_arrivers(int pipe, bool full) const {
    unsigned m = 0;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const op& o = p.ops[i];
      if (o.d.kind != operand_kind::pipeline || o.d.index != pipe) continue;
      const bool arrives = full ? plan::full_arrivals_per_unit(p, static_cast<int>(i)) > 0 : o.kind == op_kind::pipeline_release;
      if (!arrives) continue;
      for (int u = 0; u < U; ++u)
        if (units[u].role == o.role) m |= 1u << u;
    }
    return m;
  }

  constexpr void setup_barriers() {
    bars.reset(NB);
    for (const auto& o : p.ops)
      if (o.kind == op_kind::mbarrier_init && o.d.kind == operand_kind::mbarrier) has_init[o.d.index] = true;
    for (int i = 0; i < NB; ++i) {
      const auto& ob = B.objects[i];
      barrier_state& bs = bars[i];
      const bool user = ob.origin == plan::barrier_origin::user;
      bs.initialized = !(user && manual);
      bs.init_count = bs.initialized ? ob.arrivals : 0;
      bs.pending = bs.init_count;
      const bool cluster_sum = ob.origin == plan::barrier_origin::cluster_ready || ob.origin == plan::barrier_origin::cluster_done;
      if (cluster_sum) {
        bs.arrivers = 0;
        for (int v = 0; v < U; ++v)
          if (ob.source < p.ops.size() && units[v].role == p.ops[ob.source].role) bs.arrivers |= 1u << v;
      } else {
        bs.arrivers = user ? user_arrivers(ob.source) : pipeline_arrivers(ob.source, ob.origin == plan::barrier_origin::pipeline_full);
      }
    }
  }

  constexpr void setup_slots() {
    slot_of_op.reset(static_cast<int>(p.ops.size()) + 1);
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const op_kind k = p.ops[i].kind;
      slot_of_op[static_cast<int>(i)] = (k == op_kind::pipeline_acquire || k == op_kind::pipeline_wait || k == op_kind::pipeline_held) ? slots++ : -1;
    }
    slot_stage.reset(U * slots);
    for (int i = 0; i < slot_stage.size; ++i) slot_stage[i] = -1;
    const int P = static_cast<int>(p.pipelines.size());
    pipe_count.reset(U * P * 2);
    wait_count.reset(U * NB);
  }

  // ---- index values seen by a unit ---------------------------------------------------------------
  constexpr long long var_value(int u, const index_term& t) const {
    const unit_state& s = units[u];
    const bool wg = p.roles[s.role].unit == role_unit::warpgroup;
    switch (t.kind) {
      case var_kind::tile_coord: {
        // the walk runs along axis 0; inside r.next_point the coordinates are the next point's
        const long long at = s.tile_iter > 0 ? s.tile_iter : 0;
        return t.ref == 0 ? at + (in_next_point(s.pc) ? 1 : 0) : 0;
      }
      case var_kind::walk_step: return s.tile_iter > 0 ? s.tile_iter : 0;
      case var_kind::walk_steps: return p.launch.persistent ? tiles : 1;
      // a split tail (k.split_tail): the executor walks every point whole (part 0 of 1, the whole range)
      case var_kind::walk_parts: return 1;
      case var_kind::part_end: return p.launch.tail_extent.eval([&](const index_term& x) { return x.kind == var_kind::dim ? var_value(u, x) : 0; });
      case var_kind::walk_part:
      case var_kind::part_begin:
      case var_kind::tail_unit: return 0;
      case var_kind::dim: return t.ref < p.dims.size() ? dim_value(t.ref) : 0;
      case var_kind::loop:
        for (int d = s.depth - 1; d >= 0; --d)
          if (s.stack[d].op == t.ref) return s.stack[d].iter;
        return 0;
      case var_kind::warpgroup: return wg ? s.index : s.index / 4;
      case var_kind::warp: return wg ? 4 * s.index : s.index;
      case var_kind::value:  // the model of index_value.hpp: tensor reads non-decreasing, one unit = k_trips blocks
        return detail::model_value(p, t.ref, k_trips * detail::value_model_block(p), [&](const index_term& x) { return var_value(u, x); });
      default: return 0;  // cluster_rank, cta: the executor models CTA rank 0 of CTA 0 (coverage note)
    }
  }
  // Is op `id` inside the body of an r.next_point?
  constexpr bool in_next_point(int id) const {
    if (id < 0 || id >= static_cast<int>(p.ops.size())) return false;
    for (int a = p.ops[id].parent; a >= 0; a = p.ops[a].parent)
      if (p.ops[a].kind == op_kind::when && p.ops[a].has(flag_next_point)) return true;
    return false;
  }
  // The tile iteration a write of op `id` by unit u initializes for: inside r.next_point, the next point's (a
  // lookahead's first MMA overwrites the accumulator for the tile after this one; an accumulation there may
  // still be this point's, onto what this point initialized: check_accumulate takes either).
  constexpr int write_tile(int u, int id) const { return units[u].tile_iter + (units[u].tile_iter >= 0 && in_next_point(id) ? 1 : 0); }
  // The extent the executor gives a dim: k_trips blocks of the largest block any loop or axis cuts it
  // into, so that a loop over tiles(dim, that block) runs k_trips times (1 in the single-trip run).
  constexpr long long dim_value(int d) const {
    long long block = 1;
    for (const auto& b : p.loops)
      if (b.block > 0 && b.dim == d && b.block > block) block = b.block;
    for (int a = 0; a < p.space.count; ++a)
      if (p.space.axes[a].kind == axis_kind::tiles && p.space.axes[a].dim == d && p.space.axes[a].extent > block) block = p.space.axes[a].extent;
    return k_trips * block;
  }
  // Trips of a dynamic loop for unit u at the loop's start: ceil((min(hi, hi2) - lo) / step), at least 0.
  constexpr long long trips_of(int u, const loop_bound& b) const {
    return b.trips([&](const index_term& t) { return var_value(u, t); });
  }
  // A uniform condition (r.when): comparisons of index expressions combined with and/or/not.
  constexpr long long node_value(int u, int n) const {
    return index_condition_value(p, n, [&](const index_expr& e) { return eval(u, e); });
  }
  constexpr bool condition(int u, int root) const { return node_value(u, root) != 0; }
  constexpr long long eval(int u, const index_expr& e) const {
    return e.eval([&](const index_term& t) { return var_value(u, t); });
  }
  // Which execution of an op this is, for joint writes (all units of a role writing one tile).
  constexpr int instance(int u) const {
    unsigned key = 0;
    for (int d = 0; d < units[u].depth; ++d) key = key * 1000003u + static_cast<unsigned>(units[u].stack[d].iter + 1);
    return static_cast<int>(key & 0x3fffffffu);
  }

  // ---- naming for messages -----------------------------------------------------------------------
  template <class Text>
  constexpr void write_unit(Text& t, int u) const {
    const unit_state& s = units[u];
    const auto& r = p.roles[s.role];
    t << "role '" << r.nm.view() << "'";
    if (r.count > 1) t << (r.unit == role_unit::warpgroup ? " warpgroup " : " warp ") << s.index;
  }
  template <class Text>
  constexpr void write_object(Text& t, int obj) const {
    for (std::size_t r = 0; r < p.smem.size(); ++r)
      if (obj >= smem_base[r] && obj < smem_base[r] + p.smem[r].stages) {
        t << '\'' << p.smem[r].nm.view() << '\'';
        if (p.smem[r].stages > 1) t << " stage " << obj - smem_base[r];
        return;
      }
    for (std::size_t r = 0; r < p.tmem.size(); ++r)
      if (obj >= tmem_base[r] && obj < tmem_base[r] + p.tmem[r].stages) {
        t << "TMEM '" << p.tmem[r].nm.view() << '\'';
        if (p.tmem[r].stages > 1) t << " stage " << obj - tmem_base[r];
        return;
      }
  }
  constexpr bool is_tmem_object(int obj) const { return !p.tmem.empty() && obj >= tmem_base[0]; }
};

}  // namespace cake::analysis::proto
