#pragma once
// The barrier plan: every mbarrier object of the kernel (user arrays, and a 'full' and an 'empty'
// barrier per pipeline stage), its place in shared memory and its expected arrivals per phase; and,
// per pipeline, the bytes a stage's 'full' barrier expects (tx-count). These are the numbers a
// hand-written kernel gets wrong most often (hardware-facts §1, "common hang causes").
#include <algorithm>

#include "../ir/program.hpp"
#include "operands.hpp"
#include "smem_plan.hpp"

namespace cake::plan {

// cluster_ready / cluster_done: the two derived barriers of a cluster sum (source = its op id): 'ready'
// completes when every unit of every CTA has written its scratch, 'done' when every one has read all of
// them (so a scratch is not overwritten while a peer still reads it).
enum class barrier_origin : std::uint8_t { user, pipeline_full, pipeline_empty, cluster_ready, cluster_done };

struct barrier_object {
  barrier_origin origin = barrier_origin::user;
  std::uint8_t source = 0;  // mbarrier or pipeline index
  int element = 0;          // array element or stage
  int arrivals = 0;         // init count
  bool derived = true;      // arrivals derived by Cake (false: declared by the user)
  int offset = 0;           // bytes into dynamic shared memory
};

struct pipeline_barriers {
  int full_base = 0, empty_base = 0;  // index of stage 0's barrier in barrier_plan::objects
  int full_arrivals = 0;              // per stage: producer units that acquire with TMA loads (each arrives once,
                                      // with expect_tx) or commit, plus every thread of the units whose
                                      // cp.async copies fill the stage (full_arrivals_per_unit)
  int empty_arrivals = 0;             // releasing units x CTAs that multicast into this CTA
  int tx_bytes = 0;                   // bytes each acquiring unit expects per stage: what its TMA loads deliver
                                      // to this CTA (full boxes, multicast included); with one producer
                                      // unit, the whole stage
  bool multicast = false;             // some load into the pipeline multicasts across the cluster
};

struct barrier_plan {
  static constexpr int max_objects = 96;
  barrier_object objects[max_objects]{};
  int count = 0;
  int user_base[capacity::mbarriers]{};
  pipeline_barriers pipelines[capacity::pipelines]{};
  std::int16_t cluster_ready[capacity::ops]{};  // per cluster_reduce op: its 'ready' object ('done' is the next), -1 otherwise
  bool overflow = false;  // more barrier objects than max_objects: the rest are missing (report it)
};

constexpr int units_of_role(const program& p, int role) { return role < static_cast<int>(p.roles.size()) ? p.roles[role].count : 0; }
// Units of its role that execute an op at each point of the walk: all of them, or one inside an
// alternating walk (the units take the points in turn).
constexpr int units_per_point(const program& p, int op_id) {
  for (int q = p.ops[op_id].parent; q >= 0; q = p.ops[q].parent)
    if (p.ops[q].kind == op_kind::tile_loop && p.ops[q].has(flag_alternate)) return 1;
  return units_of_role(p, p.ops[op_id].role);
}

// Bytes that the TMA loads issued into the stage handed out by acquire op `acquire_op` deliver to
// each CTA: full smem boxes (out-of-bounds fill included, hardware-facts §1), whole region with multicast.
// Every unit of the acquiring role runs these loads (on its own part, if it selects one) and expects
// this many bytes with its own arrive.expect_tx.
constexpr int tx_bytes_of_acquire(const program& p, int acquire_op) {
  int bytes = 0;
  for (const auto& o : p.ops)
    if (o.kind == op_kind::tma_load && o.d.sel == stage_sel::slot && o.d.slot_op == acquire_op) bytes += bytes_of(p, o.d);
  return bytes;
}

constexpr int threads_per_unit(const program& p, int role) {
  return role < static_cast<int>(p.roles.size()) ? (p.roles[role].unit == role_unit::warpgroup ? 128 : 32) : 0;
}

// The cp.async op after which the stage handed out by acquire op `acquire_op` is complete, or -1 when no
// cp.async writes into it: the last cp.async into the acquired slot. There every thread of the unit issues
// cp.async.mbarrier.arrive.noinc on the stage's 'full' barrier, whose arrive-on the hardware performs once
// all of that thread's earlier cp.async copies have completed; .noinc does not add to the pending count, so
// each of these arrivals is counted in the barrier's init count (hardware-facts §1 "Transaction counts",
// [PTX §9.7.13.15.15]). The stage completes without transaction bytes, so this form exists on sm_80 too.
constexpr int cp_async_fill_of_acquire(const program& p, int acquire_op) {
  int last = -1;
  if (acquire_op < 0 || acquire_op >= static_cast<int>(p.ops.size()) || p.ops[acquire_op].kind != op_kind::pipeline_acquire) return -1;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.kind == op_kind::cp_async && o.d.kind == operand_kind::smem && o.d.sel == stage_sel::slot && o.d.slot_op == acquire_op) last = static_cast<int>(i);
  }
  return last;
}

// Arrivals one unit makes per stage on the 'full' barrier through pipeline op `op_id`: a commit arrives once
// (its leader's arrive, or a tcgen05.commit); an acquire whose stage TMA loads fill once (its leader's
// arrive.expect_tx); an acquire whose stage cp.async fills once per thread of the unit (each thread's
// cp.async.mbarrier.arrive.noinc); any other op or acquire 0. The one count the barrier plan, the analyzer
// and the lowering use.
constexpr int full_arrivals_per_unit(const program& p, int op_id) {
  const op& o = p.ops[op_id];
  if (o.kind == op_kind::pipeline_commit) return 1;
  if (o.kind != op_kind::pipeline_acquire) return 0;
  if (cp_async_fill_of_acquire(p, op_id) >= 0) return threads_per_unit(p, o.role);
  return tx_bytes_of_acquire(p, op_id) > 0 ? 1 : 0;
}

// Derived arrivals per phase for a user barrier: one per unit of every role that arrives on it
// (times the cluster size for remote arrivals). Assumes one arrive op per unit per phase; the
// analyzer's protocol checker verifies the actual count phase by phase.
constexpr int derived_user_arrivals(const program& p, int barrier) {
  int n = 0;
  for (const auto& o : p.ops) {
    if (o.d.kind != operand_kind::mbarrier || o.d.index != barrier) continue;
    if (o.kind == op_kind::mbarrier_arrive || o.kind == op_kind::mbarrier_arrive_expect_tx || o.kind == op_kind::tcgen05_commit)
      n += units_of_role(p, o.role) * (o.has(flag_remote) ? p.launch.cluster_size() : 1);
  }
  return n;
}

// The arrivals of each role per phase on a pipeline's full barriers (acquires that load with TMA, commits:
// one per unit; acquires whose stage cp.async fills: one per thread of each unit) or its empty barriers
// (releases: one per unit). Each unit arrives once per stage it takes, whichever of its role's ops takes
// it: a role that acquires (or releases) in several ops (a prologue and a loop, parts of one tile) counts
// its units once. The derived init count is the sum over the roles (times the cluster's CTAs for the empty
// barriers of a multicast pipeline); the analyzer's sync.arrival-count explains a mismatch with these terms.
struct pipeline_role_arrivals {
  int arrivals[capacity::roles]{};
  bool per_thread[capacity::roles]{};  // the role's arrivals are its threads' (cp.async.mbarrier.arrive.noinc)
  int first_op[capacity::roles]{};     // an op of the role that arrives (for notes); -1: none
};
constexpr pipeline_role_arrivals role_arrivals(const program& p, int pipeline, bool full) {
  pipeline_role_arrivals a;
  for (int r = 0; r < capacity::roles; ++r) a.first_op[r] = -1;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.d.kind != operand_kind::pipeline || o.d.index != pipeline || o.role >= capacity::roles) continue;
    const int per_unit = full ? full_arrivals_per_unit(p, static_cast<int>(i)) : o.kind == op_kind::pipeline_release ? 1 : 0;
    if (per_unit == 0) continue;
    a.arrivals[o.role] = std::max(a.arrivals[o.role], units_per_point(p, static_cast<int>(i)) * per_unit);
    a.per_thread[o.role] = a.per_thread[o.role] || per_unit > 1;
    if (a.first_op[o.role] < 0) a.first_op[o.role] = static_cast<int>(i);
  }
  return a;
}

constexpr barrier_plan plan_barriers(const program& p) {
  barrier_plan B;
  const smem_layout L = plan_smem(p);
  auto add = [&](barrier_origin origin, int source, int element, int arrivals, bool derived) {
    if (B.count == barrier_plan::max_objects) {
      B.overflow = true;
      return;
    }
    B.objects[B.count] = {origin, static_cast<std::uint8_t>(source), element, arrivals, derived, L.barrier_offset + 8 * B.count};
    ++B.count;
  };
  for (std::size_t i = 0; i < p.mbarriers.size(); ++i) {
    const auto& b = p.mbarriers[i];
    B.user_base[i] = B.count;
    const bool derived = b.arrivals == 0;
    const int arrivals = derived ? derived_user_arrivals(p, static_cast<int>(i)) : b.arrivals;
    for (int e = 0; e < b.count; ++e) add(barrier_origin::user, static_cast<int>(i), e, arrivals, derived);
  }
  for (std::size_t pi = 0; pi < p.pipelines.size(); ++pi) {
    pipeline_barriers& pb = B.pipelines[pi];
    pipeline_role_arrivals full_by_role = role_arrivals(p, static_cast<int>(pi), true), empty_by_role = role_arrivals(p, static_cast<int>(pi), false);
    for (int r = 0; r < capacity::roles; ++r) pb.full_arrivals += full_by_role.arrivals[r], pb.empty_arrivals += empty_by_role.arrivals[r];
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const op& o = p.ops[i];
      if (o.d.kind == operand_kind::pipeline && o.d.index == pi && o.kind == op_kind::pipeline_acquire && pb.tx_bytes == 0)
        pb.tx_bytes = tx_bytes_of_acquire(p, static_cast<int>(i));
    }
    for (const auto& o : p.ops)
      if (o.kind == op_kind::tma_load && o.has(flag_multicast) && o.d.kind == operand_kind::smem && p.smem[o.d.index].pipeline == pi) pb.multicast = true;
    if (pb.multicast) pb.empty_arrivals *= p.launch.cluster_size();
    const int stages = p.pipelines[pi].stages;
    pb.full_base = B.count;
    for (int s = 0; s < stages; ++s) add(barrier_origin::pipeline_full, static_cast<int>(pi), s, pb.full_arrivals, true);
    pb.empty_base = B.count;
    for (int s = 0; s < stages; ++s) add(barrier_origin::pipeline_empty, static_cast<int>(pi), s, pb.empty_arrivals, true);
  }
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    B.cluster_ready[i] = -1;
    if (p.ops[i].kind != op_kind::cluster_reduce) continue;
    // Every unit of the role in every CTA of the cluster arrives on each CTA's barriers once per use.
    const int arrivals = units_per_point(p, static_cast<int>(i)) * p.launch.cluster_size();
    B.cluster_ready[i] = static_cast<std::int16_t>(B.count);
    add(barrier_origin::cluster_ready, static_cast<int>(i), 0, arrivals, true);
    add(barrier_origin::cluster_done, static_cast<int>(i), 0, arrivals, true);
  }
  return B;
}

}  // namespace cake::plan
