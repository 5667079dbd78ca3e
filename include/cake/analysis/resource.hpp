#pragma once
// Resource pass: what a block needs against what the target has. Every number comes from the plan
// (plan::plan_smem, plan::plan_warps, the barrier and TMA plans) and the target's limits; nothing is
// recomputed here. Overflows are itemised in notes, each pointing at the declaration it counts.
#include "context.hpp"
#include "liveness.hpp"

namespace cake::analysis {

namespace detail {

constexpr bool named_barrier_used_by(const program& p, int nb, int role) {
  for (const auto& o : p.ops)
    if (o.role == role && o.d.kind == operand_kind::named_barrier && o.d.index == nb &&
        (o.kind == op_kind::named_barrier_sync || o.kind == op_kind::named_barrier_arrive))
      return true;
  return false;
}

}  // namespace detail

constexpr void check_smem(context& c) {
  const program& p = c.p;
  const auto& L = c.plan.smem;
  if (L.fits()) return;
  // Point at what is most worth trimming: the deepest pipeline, else the largest region.
  int best = -1, best_bytes = 0;
  for (std::size_t i = 0; i < p.pipelines.size(); ++i) {
    const int b = p.pipeline_stage_bytes(static_cast<int>(i)) * p.pipelines[i].stages;
    if (b > best_bytes) best = static_cast<int>(i), best_bytes = b;
  }
  int largest = -1;
  for (std::size_t i = 0; i < p.smem.size(); ++i)
    if (largest < 0 || p.smem[i].bytes() > p.smem[largest].bytes()) largest = static_cast<int>(i);
  const src_loc at = best >= 0 ? p.pipelines[best].loc : largest >= 0 ? p.smem[largest].loc : p.loc;
  diagnostic* d = emit_decl(c, rule_id::resource_smem_overflow, at);
  if (!d) return;
  d->message << "the shared-memory plan needs " << L.total << " bytes per block; " << to_string(p.target) << " allows "
             << L.limit << " (over by " << (L.total - L.limit) << ")";
  d->num("needed_bytes", L.total).num("limit_bytes", L.limit);
  for (std::size_t i = 0; i < p.smem.size(); ++i) {
    const auto& r = p.smem[i];
    auto& n = d->add_note(r.loc);
    n << r.nm.view() << ": " << r.stages << " x " << L.regions[i].bytes_per_stage << " B (";
    write_dtype_shape(n, r.rows, r.cols, r.dt);
    n << ") at offset " << L.regions[i].offset;
  }
  d->add_note() << "mbarriers: " << L.barrier_count << " x 8 B at offset " << L.barrier_offset << "; alignment padding: " << L.padding << " B";
  if (best >= 0 && p.pipeline_stage_bytes(best) > 0) {
    const int stage = p.pipeline_stage_bytes(best);
    const int drop = (L.total - L.limit + stage - 1) / stage;
    d->help << "pipeline '" << p.pipelines[best].nm.view() << "' takes " << stage << " B per stage: use stages("
            << (p.pipelines[best].stages - drop) << ") or smaller tiles";
  } else {
    d->help << "use smaller tiles or fewer copies";
  }
}

namespace detail {

// Registers per thread role `i` holds once it has switched: regs(n), else its explicit setmaxnreg
// values (the largest, when it switches several times), else the entry cap. `how` names the source.
constexpr int role_held_regs(const program& p, const plan::warp_plan& W, int i, int* how = nullptr) {
  int held = W.roles[i].regs, src = held ? 1 : 0;
  for (const op& o : p.ops)
    if (o.role == i && o.kind == op_kind::setmaxnreg && o.imm[0] > held && o.imm[0] % 8 == 0 && o.imm[0] >= 24 && o.imm[0] <= 256)
      held = o.imm[0], src = 2;
  if (how) *how = src;
  return held ? held : W.entry_regs;
}

}  // namespace detail

// The setmaxnreg register pool. A block is launched with block threads x the entry cap registers
// (plan::entry_register_cap: what ptxas gives __launch_bounds__(threads, 1)); setmaxnreg.dec
// returns registers to the block's pool and setmaxnreg.inc blocks until it can take them from there,
// never from the rest of the register file. So threads x registers summed over the roles after they
// switch must fit in threads x entry cap; past it, the last warpgroup to increase waits forever.
constexpr void check_register_pool(context& c) {
  const program& p = c.p;
  const auto& W = c.plan.warps;
  if (W.role_count == 0 || W.block_threads == 0) return;
  long long held_sum = 0;
  bool switches = false;
  for (int i = 0; i < W.role_count; ++i) {
    int how = 0;
    held_sum += static_cast<long long>(W.roles[i].threads) * detail::role_held_regs(p, W, i, &how);
    switches = switches || how != 0;
  }
  if (!switches || held_sum <= W.regs_pool) return;
  // Point at the role that increases most: its setmaxnreg.inc is the one that waits.
  int at = 0, at_held = -1;
  for (int i = 0; i < W.role_count; ++i) {
    const int h = detail::role_held_regs(p, W, i);
    if (h > W.entry_regs && h > at_held) at = i, at_held = h;
  }
  diagnostic* d = emit_decl(c, rule_id::resource_register_file, p.roles[at].loc, at);
  if (!d) return;
  d->message << "the roles hold " << held_sum << " registers after setmaxnreg; the block's pool is " << W.block_threads << " threads x "
             << W.entry_regs << " (entry cap) = " << W.regs_pool << ", over by " << held_sum - W.regs_pool
             << ": setmaxnreg.inc only takes what setmaxnreg.dec released, so the last increase never returns";
  d->num("registers", held_sum).num("pool", W.regs_pool).num("threads", W.block_threads).num("entry_regs", W.entry_regs);
  long long others = 0;
  for (int i = 0; i < W.role_count; ++i) {
    int how = 0;
    const int h = detail::role_held_regs(p, W, i, &how);
    if (i != at) others += static_cast<long long>(W.roles[i].threads) * h;
    d->add_note(p.roles[i].loc) << "role '" << p.roles[i].nm.view() << "': " << W.roles[i].threads << " threads x " << h
                                << (how == 1 ? " (regs)" : how == 2 ? " (setmaxnreg)" : " (entry cap)") << " = " << W.roles[i].threads * h;
  }
  const long long fit = W.roles[at].threads > 0 ? (W.regs_pool - others) / W.roles[at].threads / 8 * 8 : 0;
  if (fit >= 24 && fit <= 256)
    d->help << "role '" << p.roles[at].nm.view() << "' can take at most regs(" << fit << ") with the other roles as they are ((" << W.regs_pool << " - "
            << others << ") / " << W.roles[at].threads << ", rounded down to 8); or lower regs(n) of the roles that need fewer (producers run on 24..40)";
  else
    d->help << "lower regs(n) of the roles that need fewer (producers run on 24..40), or use fewer threads";
}

constexpr void check_registers(context& c) {
  const program& p = c.p;
  const auto& W = c.plan.warps;
  check_register_pool(c);
  for (int i = 0; i < W.role_count; ++i) {
    const auto& r = p.roles[i];
    const auto& rp = W.roles[i];
    const int budget = rp.regs ? rp.regs : W.entry_regs;
    const reg_pressure rt = role_reg_pressure(p, c.plan.frags, i);
    const int available = budget - reg_overhead;
    if (rt.peak_op >= 0 && rt.peak > available) {
      if (diagnostic* d = emit_op(c, rule_id::resource_register_tiles, rt.peak_op)) {
        d->message << "role '" << r.nm.view() << "' holds " << rt.peak << " registers per thread in live register tiles here; its budget is "
                   << budget << (rp.regs ? " (regs)" : " (entry cap)") << " less " << reg_overhead << " for addresses and indices = " << available;
        d->num("live_tile_registers", rt.peak).num("budget", budget).num("overhead", reg_overhead).num("available", available);
        d->add_note(r.loc) << "role '" << r.nm.view() << "': " << (rp.regs ? "regs(" : "entry cap ") << budget << (rp.regs ? ")" : "") << ", "
                           << rp.threads_per_unit << " threads per unit";
        const int ctas = p.launch.ctas_per_sm;
        if (!rp.regs && ctas > 1) {  // the entry cap is what n blocks leave a thread: say so, and what one block would get
          const auto& lim = p.arch().limits;
          d->add_note(p.launch.ctas_loc.known() ? p.launch.ctas_loc : p.loc)
              << "ctas_per_sm(" << ctas << "): " << ctas << " blocks of " << (W.block_threads + 31) / 32 << " warps, counted as "
              << plan::register_counted_warps(lim, W.block_threads, ctas) << " (registers go to warps " << lim.reg_alloc_warps
              << " at a time), leave " << budget << " registers a thread; one block would have " << plan::entry_register_cap(lim, W.block_threads, 1);
          d->num("ctas_per_sm", ctas);
        }
        // The live tiles, largest first.
        std::uint32_t left = rt.live;
        while (left) {
          int best = -1, best_words = -1;
          for (int t = 0; t < static_cast<int>(p.regs.size()) && t < 32; ++t)
            if ((left & (1u << t)) && tile_words(p, c.plan.frags, t) > best_words) best = t, best_words = tile_words(p, c.plan.frags, t);
          if (best < 0) break;
          left &= ~(1u << best);
          const auto& g = p.regs[best];
          auto& n = d->add_note(g.loc);
          n << "'" << g.nm.view() << "' ";
          write_dtype_shape(n, g.rows, g.cols, g.dt);
          n << ", " << plan::to_string(c.plan.frags.regs[best].f.kind) << " layout: " << best_words << " registers per thread";
        }
        if (!rp.regs && p.launch.ctas_per_sm > 1)  // (regs(n) is refused beside ctas_per_sm: resource.ctas-per-sm)
          d->help << "declare fewer ctas_per_sm, load what is used later closer to its use, or use narrower tiles (fewer elements per thread)";
        else
          d->help << "raise regs(n), load what is used later closer to its use, or use narrower tiles (fewer elements per thread)";
      }
    }
    if (r.regs && (r.regs % 8 || r.regs < 24 || r.regs > 256)) {
      if (diagnostic* d = emit_decl(c, rule_id::resource_setmaxnreg_value, r.loc, i)) {
        d->message << "regs(" << r.regs << ") of role '" << r.nm.view() << "': setmaxnreg takes a multiple of 8 in 24..256";
        d->num("regs", r.regs);
        d->help << "use regs(" << (r.regs < 24 ? 24 : r.regs > 256 ? 256 : r.regs / 8 * 8) << ")";
      }
    }
    const bool whole = r.unit == role_unit::warpgroup ? rp.warpgroup_aligned : (rp.warpgroup_aligned && r.count % 4 == 0);
    if ((r.regs || role_uses(p, i, op_kind::setmaxnreg)) && !whole) {
      if (diagnostic* d = emit_decl(c, rule_id::resource_setmaxnreg_warpgroup, r.loc, i)) {
        d->message << "role '" << r.nm.view() << "' sets its registers with setmaxnreg but occupies warps " << rp.first_warp << ".."
                   << rp.first_warp + rp.warps - 1 << ", not whole warpgroups starting at a multiple of 4";
        d->num("first_warp", rp.first_warp).num("warps", rp.warps);
        d->help << "declare the role with warpgroups(n), and declare it before roles of single warps";
      }
    }
    if (role_uses(p, i, op_kind::wgmma) && !rp.warpgroup_aligned) {
      if (diagnostic* d = emit_decl(c, rule_id::resource_warpgroup_alignment, r.loc, i)) {
        d->message << "role '" << r.nm.view() << "' issues wgmma but starts at warp " << rp.first_warp << ", not a multiple of 4";
        d->num("first_warp", rp.first_warp);
        for (int j = 0; j < i; ++j)
          d->add_note(p.roles[j].loc) << "role '" << p.roles[j].nm.view() << "' occupies " << W.roles[j].warps << (W.roles[j].warps == 1 ? " warp" : " warps")
                                      << " before it";
        d->help << "declare warpgroup roles first, or make the roles before it a multiple of 4 warps";
      }
    }
  }
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.kind == op_kind::setmaxnreg && (o.imm[0] % 8 || o.imm[0] < 24 || o.imm[0] > 256)) {
      if (diagnostic* d = emit_op(c, rule_id::resource_setmaxnreg_value, static_cast<int>(i))) {
        d->message << "setmaxnreg " << o.imm[0] << ": the value must be a multiple of 8 in 24..256";
        d->num("regs", o.imm[0]);
      }
    }
  }
}

constexpr void check_launch(context& c) {
  const program& p = c.p;
  const auto& lim = p.arch().limits;
  const auto& W = c.plan.warps;
  if (W.block_threads > lim.max_threads_per_block) {
    int role = W.role_count - 1;
    for (int i = 0; i < W.role_count; ++i)
      if (W.roles[i].first_thread + W.roles[i].threads > lim.max_threads_per_block) {
        role = i;
        break;
      }
    if (diagnostic* d = emit_decl(c, rule_id::resource_threads_per_block, role >= 0 ? p.roles[role].loc : p.loc, role)) {
      d->message << "the roles add up to " << W.block_threads << " threads; a block has at most " << lim.max_threads_per_block;
      d->num("threads", W.block_threads).num("limit", lim.max_threads_per_block);
      for (int i = 0; i < W.role_count; ++i) d->add_note(p.roles[i].loc) << "role '" << p.roles[i].nm.view() << "': " << W.roles[i].threads << " threads";
    }
  }
  const auto& L = p.launch;
  const int size = L.cluster_size();
  const src_loc cl = L.cluster_loc.known() ? L.cluster_loc : p.loc;
  if (L.cluster[0] >= 1 && L.cluster[1] >= 1 && L.cluster[2] >= 1 && (L.cluster[1] != 1 || L.cluster[2] != 1)) {
    if (diagnostic* d = emit_decl(c, rule_id::resource_cluster_shape, cl)) {
      d->message << "cluster " << L.cluster[0] << 'x' << L.cluster[1] << 'x' << L.cluster[2]
                 << ": the grid and multicast group a cluster's CTAs along the first parallel axis only";
      d->num("y", L.cluster[1]).num("z", L.cluster[2]);
      d->help << "write cluster(" << size << ")";
    }
  } else if (L.cluster[0] < 1 || L.cluster[1] < 1 || L.cluster[2] < 1 || size > lim.max_cluster_nonportable) {
    if (diagnostic* d = emit_decl(c, rule_id::resource_cluster_size, cl)) {
      d->message << "cluster " << L.cluster[0] << 'x' << L.cluster[1] << 'x' << L.cluster[2] << ": " << to_string(p.target)
                 << " supports 1.." << lim.max_cluster_nonportable << " CTAs per cluster (" << lim.max_cluster_portable << " portable)";
      d->num("cluster_size", size).num("limit", lim.max_cluster_nonportable);
    }
  } else if (size > lim.max_cluster_portable && lim.max_cluster_portable > 1) {
    if (diagnostic* d = emit_decl(c, rule_id::resource_cluster_nonportable, cl)) {
      d->message << "a cluster of " << size << " CTAs is above the portable " << lim.max_cluster_portable
                 << ": the launch must set the non-portable cluster size attribute";
      d->num("cluster_size", size).num("portable", lim.max_cluster_portable);
    }
  }
  // Hardware named barriers: one per declaration, or one per unit of each role that uses a per-unit one.
  int used = 1;  // barrier 0: the block-wide barrier (__syncthreads, Cake's own setup sync)
  for (std::size_t b = 0; b < p.named_barriers.size(); ++b) {
    if (!p.named_barriers[b].per_unit) {
      ++used;
      continue;
    }
    for (std::size_t r = 0; r < p.roles.size(); ++r)
      if (detail::named_barrier_used_by(p, static_cast<int>(b), static_cast<int>(r))) used += p.roles[r].count;
  }
  if (used > lim.named_barriers) {
    if (diagnostic* d = emit_decl(c, rule_id::resource_named_barrier_count, p.named_barriers.empty() ? p.loc : p.named_barriers[0].loc)) {
      d->message << "the schedule needs " << used << " hardware named barriers (barrier 0 included); " << to_string(p.target) << " has "
                 << lim.named_barriers;
      d->num("barriers", used).num("limit", lim.named_barriers);
      d->help << "share one barrier between units, or use mbarriers";
    }
  }
  if (c.plan.smem.barrier_count > plan::barrier_plan::max_objects) {
    if (diagnostic* d = emit_decl(c, rule_id::resource_mbarrier_count, p.mbarriers.empty() ? p.loc : p.mbarriers[0].loc)) {
      d->message << "the schedule needs " << c.plan.smem.barrier_count << " mbarrier objects; the barrier plan holds "
                 << plan::barrier_plan::max_objects;
      d->num("mbarriers", c.plan.smem.barrier_count).num("limit", plan::barrier_plan::max_objects);
    }
  }
  if (c.plan.tma.overflow) {
    int first = -1;
    for (std::size_t i = 0; i < p.ops.size() && first < 0; ++i)
      if (plan::is_tma_move(p.ops[i].kind) && c.plan.tma.of_op[i] < 0) first = static_cast<int>(i);
    diagnostic* d = first >= 0 ? emit_op(c, rule_id::resource_tma_descriptor_count, first) : emit_decl(c, rule_id::resource_tma_descriptor_count, p.loc);
    if (d) {
      d->message << "the TMA ops need more than " << plan::tma_plan::max_descriptors << " distinct descriptors (tensor, box, swizzle)";
      d->num("limit", plan::tma_plan::max_descriptors);
      d->help << "move the same box shape for each tensor";
    }
  }
}

// k.ctas_per_sm(n): n blocks must fit an SM by shared memory (each with the driver's reserved bytes) and threads;
// registers are the compiler's to cap (__launch_bounds__(threads, n)), which setmaxnreg would undo.
constexpr void check_ctas_per_sm(context& c) {
  const program& p = c.p;
  const int n = p.launch.ctas_per_sm;
  if (n == 1) return;
  const auto& lim = p.arch().limits;
  const src_loc at = p.launch.ctas_loc.known() ? p.launch.ctas_loc : p.loc;
  const int threads = c.plan.warps.block_threads;
  const long long smem = c.plan.smem.total + lim.smem_reserved_per_block;
  int sets_regs = -1;
  for (std::size_t i = 0; i < p.roles.size(); ++i)
    if (p.roles[i].regs && sets_regs < 0) sets_regs = static_cast<int>(i);
  diagnostic* d = nullptr;
  if (n < 1 || n > lim.max_blocks_per_sm) {
    if ((d = emit_decl(c, rule_id::resource_ctas_per_sm, at))) {
      d->message << "ctas_per_sm(" << n << "): " << to_string(p.target) << " holds 1 to " << lim.max_blocks_per_sm << " blocks per SM";
      d->num("ctas_per_sm", n).num("limit", lim.max_blocks_per_sm);
      d->help << "declare a count from 1 to " << lim.max_blocks_per_sm;
    }
  } else if (n * smem > lim.smem_per_sm) {
    if ((d = emit_decl(c, rule_id::resource_ctas_per_sm, at))) {
      d->message << "ctas_per_sm(" << n << "): " << n << " blocks of " << c.plan.smem.total << " B of shared memory (+ " << lim.smem_reserved_per_block
                 << " B the driver reserves per block) need " << n * smem << " B; an SM of " << to_string(p.target) << " has " << lim.smem_per_sm;
      d->num("ctas_per_sm", n).num("bytes_per_block", smem).num("smem_per_sm", lim.smem_per_sm);
      const int fit = static_cast<int>(lim.smem_per_sm / smem);
      const long long room = lim.smem_per_sm / n - lim.smem_reserved_per_block;  // a block's share
      // the deepest pipeline, and the stages that would fit in a block's share
      int best = -1, best_bytes = 0;
      for (std::size_t i = 0; i < p.pipelines.size(); ++i) {
        const int b = p.pipeline_stage_bytes(static_cast<int>(i)) * p.pipelines[i].stages;
        if (b > best_bytes) best = static_cast<int>(i), best_bytes = b;
      }
      if (fit >= 2) d->help << "declare ctas_per_sm(" << fit << "), or ";
      d->help << "trim each block's shared memory to " << room << " B";
      if (best >= 0 && p.pipeline_stage_bytes(best) > 0) {
        const int stage = p.pipeline_stage_bytes(best);
        const long long drop = (c.plan.smem.total - room + stage - 1) / stage;
        d->add_note(p.pipelines[best].loc) << "pipeline '" << p.pipelines[best].nm.view() << "': " << p.pipelines[best].stages << " x " << stage << " B";
        if (drop < p.pipelines[best].stages) d->help << ": stages(" << p.pipelines[best].stages - drop << ") for '" << p.pipelines[best].nm.view() << "'";
      } else {
        d->help << " (smaller tiles)";
      }
    }
  } else if (n * threads > lim.max_threads_per_sm) {
    if ((d = emit_decl(c, rule_id::resource_ctas_per_sm, at))) {
      d->message << "ctas_per_sm(" << n << "): " << n << " blocks of " << threads << " threads need " << n * threads << "; an SM holds "
                 << lim.max_threads_per_sm;
      d->num("ctas_per_sm", n).num("threads", threads).num("limit", lim.max_threads_per_sm);
      d->help << "declare ctas_per_sm(" << lim.max_threads_per_sm / threads << ") or fewer threads per block";
    }
  } else if (sets_regs >= 0) {
    if ((d = emit_decl(c, rule_id::resource_ctas_per_sm, at))) {
      d->message << "ctas_per_sm(" << n << ") with role '" << p.roles[sets_regs].nm.view()
                 << "' re-balancing registers (regs(" << p.roles[sets_regs].regs << ")): setmaxnreg divides one block's share of the register file";
      d->num("ctas_per_sm", n).num("regs", p.roles[sets_regs].regs);
      d->add_note(p.roles[sets_regs].loc) << "role '" << p.roles[sets_regs].nm.view() << "' declares regs(" << p.roles[sets_regs].regs << ")";
      d->help << "drop regs(n) from the roles, or ctas_per_sm";
    }
  }
}

constexpr void check_resource(context& c) {
  check_smem(c);
  check_registers(c);
  check_launch(c);
  check_ctas_per_sm(c);
}

}  // namespace cake::analysis
