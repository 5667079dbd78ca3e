#pragma once
// The cost model reads a Program as a tiled kernel: a (persistent) loop over output tiles, inside it a
// loop over the reduce axis in which a producer role fills a pipeline with TMA loads and a consumer
// role issues wgmma on each stage, then an epilogue that stores the tile. read_kernel_form extracts the
// numbers the model needs from the Program and its plan (what moves per K block, from where, into which
// stage, how much MMA work it feeds, what the epilogue writes) and says plainly when a Program is not of
// this form, rather than estimating something it does not model.
#include <algorithm>
#include <string>
#include <vector>

#include "../ir/program.hpp"
#include "../plan/operands.hpp"
#include "../plan/plan.hpp"

namespace cake::cost {

// One TMA load issued in every K iteration.
struct tma_stream {
  int op = -1;
  int tensor = -1;
  int axis = -1;                // parallel axis (0 or 1) whose tile coordinate selects its rows; -1 = none
  double bytes_received = 0;    // lands in this CTA's smem per K iteration (the whole box, multicast included)
  double bytes_issued = 0;      // requested from L2 by this CTA per K iteration (its share of a multicast box)
  bool multicast = false;
};

struct kernel_form {
  bool ok = false;
  std::string why;               // when !ok: what the Program lacks, in the schedule's terms
  int tile[2] = {0, 0};          // output tile extents along the two parallel axes (BM, BN)
  int axis_dim[2] = {-1, -1};    // program dim of each parallel axis
  int tile_k = 0;                // reduce-axis step (elements)
  int k_dim = -1;                // program dim of the reduce axis
  int k_step = 1;                // the K loop takes every k_step-th block (split-K: loop(s, tiles(K, bk), splits))
  int k_run = 1;                 // ... or every k_step-th run of k_run blocks (split-K's k_group)
  int split = 1;                 // points of a split(S) axis of the parallel space (1: none)
  double cluster_sum_bytes = 0;  // register bytes each CTA sums across its cluster after the K loop (cluster_sum)
  bool global_sum = false;       // split-K whose CTAs meet through global memory (r.count_arrival): every CTA
                                 // stores its part, the last of a tile's reads the others and stores the tile
  int stages = 0;                // depth of the pipeline the K loop consumes
  int pipeline = -1;
  double stage_bytes = 0;        // smem bytes of one stage of that pipeline
  // MMA work per K iteration, in units of the calibration's K block (2 warpgroups x m64 x N x 128 B).
  dtype mma_in = dtype::bf16;
  int mma_n = 0;
  double mma_blocks = 0;
  int consumer_warpgroups = 0;
  int mma_op = -1;
  // The consumer's units take whole tiles in turn (r.for_each(alternating(space), ...), "ping-pong"):
  // each tile's MMA is one unit's, and one unit's epilogue overlaps the other's mainloop.
  bool alternating = false;
  // Memory per K iteration.
  std::vector<tma_stream> loads;
  double bytes_received = 0, bytes_issued = 0, bytes_issued_multicast = 0;
  // Epilogue per output tile.
  double out_bytes_per_tile = 0;
  double stores_per_tile = 0;  // store instructions of the epilogue per unit (TMA stores: one per chunk)
  bool epilogue_tma_store = false, epilogue_direct = false;
  int out_tensor = -1;
  // Things the model assumes about the form (reported as notes with the estimate).
  std::vector<std::string> notes;
};

namespace detail {

constexpr bool inside(const program& p, int op_id, int loop) { return loop >= 0 && p.inside(op_id, loop); }

// The dim a dynamic loop walks in blocks (r.loop(tiles(K, 64), ...)), -1 if it is not written that way.
inline int loop_dim_of(const program& p, int loop) {
  const loop_bound* b = p.bound_of(loop);
  return b && b->block > 0 && !b->has_hi2 ? b->dim : -1;
}

// A run of a fixed number of blocks of the K loop `outer` (split-K's k_group: r.loop(g * G, min(g * G + G,
// tiles(K, b)), 1, ...) inside r.loop(s, tiles(K, b * G), S, ...)): G, where `loop` is such a run; else 1.
inline int run_length(const program& p, int loop, int outer) {
  const loop_bound* b = p.bound_of(loop);
  const loop_bound* o = p.bound_of(outer);
  if (!b || !o || b->step != 1 || !b->has_hi2 || b->block <= 0 || b->dim != o->dim) return 1;
  for (const index_expr* h : {&b->hi, &b->hi2}) {
    const index_expr len = *h - b->lo;  // (terms that cancel stay, at coefficient 0)
    bool constant = len.valid && len.linear();
    for (int t = 0; t < len.term_count; ++t) constant = constant && len.terms[t].coef == 0;
    if (constant && len.constant > 1 && len.constant * b->block == o->block) return len.constant;
  }
  return 1;
}

// The parallel axis (0 or 1) a global tile coordinate follows, -1 if it follows none.
inline int axis_of_coord(const index_expr& e) {
  for (int i = 0; i < e.term_count; ++i)
    if (e.terms[i].kind == var_kind::tile_coord) return e.terms[i].ref;
  return -1;
}

// Trip count of a static loop (for_range) enclosing op `id` inside `outer`, multiplied over nesting.
inline long long static_trips(const program& p, int id, int outer) {
  long long trips = 1;
  for (int q = p.ops[id].parent; q >= 0 && q != outer; q = p.ops[q].parent)
    if (p.ops[q].kind == op_kind::loop && p.ops[q].has(flag_static_trip)) trips *= p.ops[q].imm[1];
  return trips;
}

// The share of a tile's units that run op `id`: 1 / n under a when on a count_arrival(..., n) value (only
// the last arrival combines), else 1.
inline double arrival_share(const program& p, int id) {
  for (int q = p.ops[id].parent; q >= 0; q = p.ops[q].parent) {
    const op& w = p.ops[q];
    if (w.kind != op_kind::when) continue;
    for (int e = w.expr_first(); e < w.expr_first() + w.expr_count() && e < static_cast<int>(p.exprs.size()); ++e) {
      if (p.exprs[e].fn != math_fn::index) continue;
      const index_expr& ix = p.exprs[e].ix;
      for (int t = 0; t < ix.term_count; ++t)
        if (ix.terms[t].kind == var_kind::value && ix.terms[t].ref < p.ops.size() && p.ops[ix.terms[t].ref].kind == op_kind::count_arrival)
          return 1.0 / std::max(1, p.ops[ix.terms[t].ref].imm[0]);
    }
  }
  return 1.0;
}

// Whether op `id` runs under a when on the walk's step (r.when(eq(r.walk_step(), 0), ...), the last point's
// r.when(r.walk_step() + 1 >= r.walk_steps(), ...)): once per CTA, not per tile. The GEMM's lookahead stores a
// tile inside r.next_point and the CTA's last tile under such a when: only the first is the per-tile epilogue.
inline bool once_per_walk(const program& p, int id) {
  for (int q = p.ops[id].parent; q >= 0; q = p.ops[q].parent) {
    const op& w = p.ops[q];
    if (w.kind != op_kind::when || w.has(flag_next_point)) continue;  // (r.next_point's body: every point but the last)
    for (int e = w.expr_first(); e < w.expr_first() + w.expr_count() && e < static_cast<int>(p.exprs.size()); ++e)
      if (p.exprs[e].fn == math_fn::index && (p.exprs[e].ix.uses(var_kind::walk_step) || p.exprs[e].ix.uses(var_kind::walk_steps))) return true;
  }
  return false;
}

}  // namespace detail

inline kernel_form read_kernel_form(const program& p, const plan::kernel_plan& plan) {
  kernel_form f;
  auto fail = [&](std::string why) {
    f.ok = false;
    f.why = std::move(why);
    return f;
  };
  if (!p.errors.empty()) return fail("the schedule has build errors (run cake check)");
  // The parallel space: two tiles(...) axes, and at most one split(S) axis (split-K: the CTAs of a split
  // share an output tile and walk every S-th K block). form_axis: a program axis's place among the tiles.
  int parallel = 0;
  int form_axis[iteration_space::max_axes] = {-1, -1, -1, -1, -1};
  for (int i = 0; i < p.space.count; ++i) {
    const auto& ax = p.space.axes[i];
    if (ax.kind == axis_kind::split && f.split == 1) {
      f.split = ax.extent;
      continue;
    }
    if (ax.kind != axis_kind::tiles || parallel >= 2)
      return fail("the parallel space is not two tiles(dim, block) axes (and at most one split axis): the cost model covers tiled GEMM-like kernels");
    f.tile[parallel] = ax.extent;
    f.axis_dim[parallel] = ax.dim;
    form_axis[i] = parallel;
    ++parallel;
  }
  if (parallel == 0) return fail("the kernel has no parallel space of tiles (k.parallel(tiles(M, bm), tiles(N, bn))): the cost model covers tiled kernels");
  if (parallel == 1) {
    f.tile[1] = 1;
    f.notes.push_back("one parallel axis: the second is taken as 1 tile wide");
  }
  // The MMA: wgmma inside a loop over the reduce axis.
  auto k_loop_of = [&](const op& o) {
    for (int q = o.parent; q >= 0; q = p.ops[q].parent)
      if (detail::loop_dim_of(p, q) >= 0) return q;
    return -1;
  };
  bool any_in_loop = false;
  for (const op& o : p.ops) any_in_loop = any_in_loop || (o.kind == op_kind::wgmma && k_loop_of(o) >= 0);
  int k_loop_consumer = -1, first_block_op = -1;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.kind == op_kind::mma_sync || o.kind == op_kind::tcgen05_mma)
      return fail(std::string("the kernel uses ") + std::string(to_string(o.kind)) + ": the cost model is calibrated for wgmma (sm_90a) only");
    if (o.kind != op_kind::wgmma) continue;
    const int loop = k_loop_of(o);
    if (loop < 0 && any_in_loop) {
      // A K block issued before the K loop (the GEMM's lookahead: a tile's first block, in the CTA's prologue
      // or during the previous tile's stores; its K loop starts at the second block): the mainloop's cost per
      // block times the blocks of K covers it; the overlap with the stores is not modeled.
      if (first_block_op < 0) first_block_op = static_cast<int>(i);
      continue;
    }
    if (loop < 0) return fail("op#" + std::to_string(i) + " wgmma is not inside a loop over blocks of a dim (r.loop(tiles(K, bk), ...))");
    f.k_dim = detail::loop_dim_of(p, loop);
    f.tile_k = p.bound_of(loop)->block;
    f.k_step = std::max(1, p.bound_of(loop)->step);
    // Every S-th run of G blocks: K blocks of the run's block size, costed at the busiest CTA's (model.hpp).
    for (int q = o.parent; q >= 0 && q != loop; q = p.ops[q].parent)
      if (p.ops[q].kind == op_kind::loop && !p.ops[q].has(flag_static_trip))
        if (const int g = detail::run_length(p, q, loop); g > 1) {
          f.tile_k /= g;
          f.k_run = g;
          f.notes.push_back("the K loop takes one run of " + std::to_string(g) + " blocks in every " + std::to_string(f.k_step) +
                            ": costed at the busiest CTA's blocks (its runs, a partial last run at its length)");
        }
    if (k_loop_consumer >= 0 && loop != k_loop_consumer) return fail("wgmma ops in two different K loops: the cost model follows one mainloop");
    k_loop_consumer = loop;
    const plan::extent2 a = plan::shape_of(p, o.a), b = plan::shape_of(p, o.b);
    const dtype in = plan::dtype_of(p, o.a);
    const int role_wgs = p.roles[o.role].unit == role_unit::warpgroup ? p.roles[o.role].count : 1;
    for (int q = o.parent; q >= 0; q = p.ops[q].parent)
      if (p.ops[q].kind == op_kind::tile_loop && p.ops[q].has(flag_alternate)) f.alternating = true;
    // Warpgroups that share one tile's MMA: all of the role's, or one when they alternate tiles.
    const int tile_wgs = f.alternating ? 1 : role_wgs;
    const int k_bytes = a.cols * size_bits(in) / 8;
    const bool b_mn = plan::operand_major(plan.dims, static_cast<int>(i), 1) == major::mn;
    const int n = b_mn ? b.cols : b.rows;
    // Work per tile in calibration K blocks: (rows per warpgroup / 64) m64 blocks x the warpgroups on the
    // tile x (K bytes / 128), over 2 warpgroups.
    const double blocks = static_cast<double>(a.rows) / 64.0 * tile_wgs * (k_bytes / 128.0) / 2.0 *
                          static_cast<double>(detail::static_trips(p, static_cast<int>(i), loop));
    if (f.mma_op >= 0 && (n != f.mma_n || in != f.mma_in)) f.notes.push_back("several wgmma shapes: each is costed at its own N");
    f.mma_blocks += blocks;
    f.mma_n = n;
    f.mma_in = in;
    f.mma_op = static_cast<int>(i);
    f.consumer_warpgroups = role_wgs;
    if (b_mn) f.notes.push_back("MN-major B operand: costed as K-major");
  }
  if (f.mma_op < 0) return fail("the kernel issues no wgmma: the cost model covers tensor-core mainloops");
  if (first_block_op >= 0)
    f.notes.push_back("op#" + std::to_string(first_block_op) +
                      " wgmma before the K loop (a tile's first K block, issued ahead): costed as a block of the mainloop (the K blocks per tile come"
                      " from K), its overlap with the epilogue not modeled");
  if (f.alternating)
    f.notes.push_back("consumer warpgroups on alternate tiles: a tile's MMA is one warpgroup's (costed at the fitted ping-pong rate), its epilogue hidden behind the other's mainloop");
  else if (f.consumer_warpgroups != 2) f.notes.push_back("the MMA rate was calibrated with 2 consumer warpgroups; " + std::to_string(f.consumer_warpgroups) + " are scaled linearly");
  // The pipeline the consumer waits on in its K loop, and the TMA loads that fill it.
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.kind == op_kind::pipeline_wait && detail::inside(p, static_cast<int>(i), k_loop_consumer)) f.pipeline = o.d.index;
  }
  if (f.pipeline < 0) return fail("the K loop with the wgmma waits on no pipeline (r.wait(pipeline)): the cost model follows TMA -> wgmma pipelines");
  f.stages = p.pipelines[f.pipeline].stages;
  f.stage_bytes = p.pipeline_stage_bytes(f.pipeline);
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.kind == op_kind::cp_async) return fail("cp.async loads are not calibrated (the cost model follows TMA pipelines)");
    if (o.kind != op_kind::tma_load || o.d.kind != operand_kind::smem || p.smem[o.d.index].pipeline != f.pipeline) continue;
    tma_stream s;
    s.op = static_cast<int>(i);
    s.tensor = p.tile_refs[o.a.index].tensor;
    const auto& ref = p.tile_refs[o.a.index];
    for (int c = 0; c < ref.rank; ++c)
      if (int ax = detail::axis_of_coord(ref.coords[c]); ax >= 0 && ax < iteration_space::max_axes) s.axis = form_axis[ax];
    s.bytes_received = plan::bytes_of(p, o.d);
    const int split = plan.tma.split_of_op[i] > 0 ? plan.tma.split_of_op[i] : 1;
    s.bytes_issued = s.bytes_received / split;
    s.multicast = o.has(flag_multicast);
    f.bytes_received += s.bytes_received;
    if (s.multicast) f.bytes_issued_multicast += s.bytes_issued;
    f.bytes_issued += s.bytes_issued;
    f.loads.push_back(s);
  }
  if (f.loads.empty()) return fail("no TMA load fills pipeline '" + std::string(p.pipelines[f.pipeline].nm.view()) + "'");
  // The epilogue: what the consumer stores per tile after its K loop.
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.role != p.ops[f.mma_op].role || detail::inside(p, static_cast<int>(i), k_loop_consumer)) continue;
    if (detail::once_per_walk(p, static_cast<int>(i))) continue;  // a CTA's first or last point only
    if (o.kind == op_kind::cluster_reduce) {
      // A reduce-scatter reads 1/cluster of the tile from each peer.
      const double share = o.has(flag_scatter) ? 1.0 / p.launch.cluster_size() : 1.0;
      f.cluster_sum_bytes += static_cast<double>(plan::shape_of(p, o.d).rows) * plan::shape_of(p, o.d).cols * size_bits(plan::dtype_of(p, o.d)) / 8 *
                             detail::static_trips(p, static_cast<int>(i), -1) * share;
    } else if (o.kind == op_kind::tma_store && o.a.kind == operand_kind::smem) {
      f.out_bytes_per_tile += static_cast<double>(plan::bytes_of(p, o.a)) * detail::static_trips(p, static_cast<int>(i), -1) * p.roles[o.role].count;
      f.stores_per_tile += static_cast<double>(detail::static_trips(p, static_cast<int>(i), -1));
      f.epilogue_tma_store = true;
      f.out_tensor = p.tile_refs[o.d.index].tensor;
    } else if (o.kind == op_kind::store_global) {
      const double share = detail::arrival_share(p, static_cast<int>(i));
      f.out_bytes_per_tile += static_cast<double>(plan::bytes_of(p, o.a)) * detail::static_trips(p, static_cast<int>(i), -1) * p.roles[o.role].count * share;
      f.stores_per_tile += static_cast<double>(detail::static_trips(p, static_cast<int>(i), -1)) * share;
      f.epilogue_direct = true;
      f.out_tensor = p.tile_refs[o.d.index].tensor;
    } else if (o.kind == op_kind::count_arrival) {
      f.global_sum = true;
    } else if (o.kind == op_kind::load_global && o.d.kind == operand_kind::reg && detail::arrival_share(p, static_cast<int>(i)) < 1.0) {
      // the last arrival's reads of the other units' parts (in L2 after their stores): costed as stores
      const double share = detail::arrival_share(p, static_cast<int>(i));
      const double trips = static_cast<double>(detail::static_trips(p, static_cast<int>(i), -1));
      const double others = f.split > 1 ? (f.split - 1.0) / f.split : 1.0;  // a for_range over the splits skips its own
      f.out_bytes_per_tile += static_cast<double>(plan::shape_of(p, o.d).rows) * plan::shape_of(p, o.d).cols * 4 * trips * others * p.roles[o.role].count * share;
      f.stores_per_tile += trips * others * share;
    }
  }
  if (f.split > 1 && f.global_sum)
    f.notes.push_back("split-K over " + std::to_string(f.split) + " CTAs that meet through global memory: each stores its part, the last of a tile (1/" +
                      std::to_string(f.split) + " of them) reads the others and stores the tile; costed with the epilogue's calibration (per store, per KiB)");
  if (f.split > 1 && f.cluster_sum_bytes > 0) {
    // Split-K: the CTAs of a cluster sum their partial tiles, then each stores its share of the tile.
    f.out_bytes_per_tile /= f.split;
    f.stores_per_tile /= f.split;
    f.notes.push_back("split-K over a cluster of " + std::to_string(f.split) + ": each CTA walks every " + std::to_string(f.k_step) +
                      "th K block, the partial tiles meet in distributed shared memory (fitted per KiB read from the other CTAs) and each CTA stores 1/" +
                      std::to_string(f.split) + " of the tile; HBM traffic is every operand panel once");
  }
  if (f.epilogue_direct) f.notes.push_back("direct-store epilogue: costed with the TMA-store epilogue's calibration");
  if (!f.epilogue_tma_store && !f.epilogue_direct) f.notes.push_back("no epilogue store found: no epilogue cost");
  f.ok = true;
  return f;
}

}  // namespace cake::cost
