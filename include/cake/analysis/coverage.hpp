#pragma once
// Honest coverage: constructs a Program uses that the analyzer does not model are reported as coverage
// notes. A note that names a rule turns that rule's verdict from "passed" into "partial"; it is never
// counted as passed. General notes (rule_id::count_) describe the bounds of the protocol run.
#include "context.hpp"

namespace cake::analysis {

constexpr void check_coverage(context& c) {
  const program& p = c.p;
  bool rank_var = false, warp_in_wg = false, reads_output = false;
  int rank_op = -1, warp_op = -1, output_op = -1;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    for (const operand* x : {&o.d, &o.a, &o.b}) {
      const bool rank = op_uses_var(*x, var_kind::cluster_rank) ||
                        (x->kind == operand_kind::global && [&] {
                          const auto& t = p.tile_refs[x->index];
                          for (int d = 0; d < t.rank; ++d)
                            if (t.coords[d].uses(var_kind::cluster_rank)) return true;
                          return false;
                        }());
      if (rank && !rank_var) rank_var = true, rank_op = static_cast<int>(i);
      if (p.roles[o.role].unit == role_unit::warpgroup && op_uses_var(*x, var_kind::warp) && !warp_in_wg)
        warp_in_wg = true, warp_op = static_cast<int>(i);
      if ((o.kind == op_kind::tma_load || o.kind == op_kind::load_global || o.kind == op_kind::cp_async) && x == &o.a &&
          x->kind == operand_kind::global && p.tensors[p.tile_refs[x->index].tensor].output && !reads_output)
        reads_output = true, output_op = static_cast<int>(i);
    }
  }
  if (rank_var)
    add_coverage(c, rule_id::dataflow_race, rank_op, p.ops[rank_op].loc,
                 "indices over the CTA's rank in its cluster are evaluated for rank 0 only");
  if (warp_in_wg)
    add_coverage(c, rule_id::dataflow_race, warp_op, p.ops[warp_op].loc,
                 "per-warp indices inside a warpgroup role are evaluated for the warpgroup's first warp only");
  if (p.launch.cluster_size() > 1)
    add_coverage(c, rule_id::dataflow_war, -1, p.loc,
                 "the CTAs of a cluster are modelled as running the same schedule in step (multicast and remote arrivals included); skew between CTAs is not explored");
  if (reads_output)
    add_coverage(c, rule_id::dataflow_race, output_op, p.ops[output_op].loc,
                 role_uses_kind(p, op_kind::count_arrival)
                     ? "an output tensor is also read: races through global memory are not modelled, except count_arrival's order (sync.counter-order)"
                     : "an output tensor is also read: races through global memory (between CTAs, or with TMA stores) are not modelled");
  // Programmatic launch is checked by sync.griddep-missing, which trusts k.independent_of_previous_grid(t).
  for (const auto& t : p.tensors)
    if (p.launch.pdl && t.independent) {
      fixed_text<232> n;
      n << "'" << t.nm.view() << "' is declared independent of the previous grid: accesses before griddep_wait are trusted, not checked";
      add_coverage(c, rule_id::sync_griddep_missing, -1, t.loc, n.view());
    }
  if (c.out.protocol_runs > 0 && has_dynamic_loop(p)) {
    fixed_text<232> t;
    t << "protocol: dims were given " << c.out.k_trips << (c.opt.single_trip_run && c.out.k_trips != 1 ? " and 1 blocks" : " blocks")
      << " (loops over tiles(dim, b) ran that many trips, bounds evaluated per tile)";
    if (p.launch.persistent) t << ", the persistent walk " << c.out.tiles << " points along axis 0";
    t << "; other extents are assumed to behave alike";
    add_coverage(c, rule_id::count_, -1, p.loc, t.view());
  }
}

}  // namespace cake::analysis
