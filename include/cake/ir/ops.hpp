#pragma once
// Ops in four categories. An op is a plain record: kind, role, enclosing control op, up to three
// operands (destination first), a few immediates, flags and the source line of the builder call.
// The table op_table says, per kind, its printed name, category, the instruction family a target must
// admit, and which threads of a role's unit execute it.
#include <cstdint>
#include <string_view>

#include "../core/source_location.hpp"
#include "../target/target.hpp"
#include "index_expr.hpp"
#include "resources.hpp"

namespace cake {

enum class op_category : std::uint8_t { compute, memory, sync, control };
constexpr std::string_view to_string(op_category c) {
  return c == op_category::compute ? "compute" : c == op_category::memory ? "memory" : c == op_category::sync ? "sync" : "control";
}

// Who executes an op inside each unit (warp or warpgroup) of its role.
enum class issuer : std::uint8_t {
  leader,  // one elected thread of the unit
  all,     // every thread of the unit (collective instructions: .sync.aligned)
};

// Targets on which lowering emits an op (the "lowered" column of docs/language.md). Admission (the
// target's instruction families) says what the hardware has; this says what Cake's emitter implements.
// Forms of an op that are not lowered on an otherwise-lowered target are listed by
// lower/support.hpp; the analyzer reports both as instruction.not-lowered before lowering runs.
inline constexpr unsigned on_sm80 = 1u, on_sm90a = 2u, on_sm100a = 4u, on_all = 7u, on_none = 0u;
constexpr unsigned target_bit(target_id t) { return t == target_id::sm_80 ? on_sm80 : t == target_id::sm_90a ? on_sm90a : on_sm100a; }

// Columns: kind, category, instruction family a target must admit (count_ = generic code), issuer,
// targets it is lowered on, one-line description (docs).
#define CAKE_OP_KINDS(X)                                                                                                          \
  /* compute */                                                                                                                   \
  X(mma_sync, compute, mma_sync, all, on_all, "warp MMA (mma.sync m16n8k16), A/B from smem (ldmatrix) or registers")             \
  X(wgmma, compute, wgmma, all, on_sm90a, "warpgroup MMA (wgmma.mma_async), A from smem or registers, B from smem")             \
  X(tcgen05_mma, compute, tcgen05, leader, on_sm100a, "tensor-core MMA into tensor memory (tcgen05.mma), one thread issues")      \
  X(fill, compute, count_, all, on_all, "every element of a register tile = a constant")                                           \
  X(elementwise, compute, count_, all, on_all, "r.set(dst, expression): element-wise math over tiles, vectors, scalars, indices") \
  X(reduce_rows, compute, count_, all, on_all, "row max / sum / min of a register tile or expression into a row vector (across the row's threads)") \
  X(arg_reduce_rows, compute, count_, all, on_all, "row argmin / argmax of a register tile or expression: value and column index per row") \
  X(scan_rows, compute, count_, all, on_all, "row prefix sum (inclusive) of a register tile, across the threads that hold a row") \
  X(reduce_cols, compute, count_, all, on_all, "column sum / max / min of a register tile into a column vector (across the threads that hold a column)") \
  X(convert, compute, count_, all, on_all, "a register tile converted to another dtype")                                            \
  X(let_index, compute, count_, all, on_all, "r.let_index(e): an index expression evaluated once into an index value (a variable of later index expressions)") \
  X(topk_init, compute, count_, all, on_all, "empties the per-row top-k lists of an r.topk state (k 1..256, list in derived smem)") \
  X(topk_rows, compute, count_, all, on_all, "row top-k: the k smallest / largest values of a tile or expression and their column (or given) indices, folded into the lists") \
  /* memory */                                                                                                                    \
  X(tma_load, memory, tma, leader, on_sm90a | on_sm100a, "TMA tile load (cp.async.bulk.tensor) into smem, completing on an mbarrier") \
  X(tma_store, memory, tma, leader, on_sm90a | on_sm100a, "TMA tile store from smem (bulk group)")                                \
  X(tma_prefetch, memory, tma, leader, on_sm90a | on_sm100a, "prefetch of a tensor map")                                         \
  X(tma_prefetch_tile, memory, tma, leader, on_sm90a | on_sm100a, "L2 prefetch of the box a TMA load into the given smem region would move (cp.async.bulk.prefetch.tensor): no smem written, no barrier") \
  X(cp_async, memory, cp_async, all, on_all, "cooperative cp.async of an smem tile (16-byte chunks, zero-filled outside)")        \
  X(read_index, memory, count_, all, on_all, "r.read_index(T, coords...): one i32 element of a tensor read (ld.global) into an index value") \
  X(load_global, memory, count_, all, on_all, "register tile <- global tile (vectorized, bounds-checked per element)")             \
  X(store_global, memory, count_, all, on_all, "global tile <- register tile (bounds-checked per element)")                       \
  X(load_shared, memory, count_, all, on_all, "register tile <- smem tile")                                                        \
  X(store_shared, memory, count_, all, on_all, "smem tile <- register tile")                                                      \
  X(ldmatrix, memory, ldmatrix, all, on_all, "ldmatrix of a 16-bit smem tile into a register tile in the mma.sync layout")         \
  X(stmatrix, memory, stmatrix, all, on_sm90a | on_sm100a, "stmatrix of a 16-bit register tile into smem")                        \
  X(tmem_load, memory, tcgen05, all, on_sm100a, "tcgen05.ld: tensor memory -> registers")                                       \
  X(tmem_store, memory, tcgen05, all, on_sm100a, "tcgen05.st: registers -> tensor memory")                                      \
  X(tmem_alloc, memory, tcgen05, all, on_sm100a, "tcgen05.alloc of the kernel's tensor memory")                                 \
  X(tmem_dealloc, memory, tcgen05, all, on_sm100a, "tcgen05.dealloc")                                                           \
  X(atomic_add, memory, count_, all, on_all, "global tile += register tile, atomically per element (f32; bf16 pairs on sm_90a+)")  \
  X(scatter_add, memory, count_, all, on_all, "row i of a register tile atomically added to row idx[i] of a tensor")              \
  X(scatter_store, memory, count_, all, on_all, "row i of a register tile stored to row idx[i] of a tensor")                      \
  X(fetch_add, memory, count_, all, on_all, "per row i: old[i] = T[idx[i]], then T[idx[i]] += n, atomically (the slot of a counting sort)") \
  X(count_arrival, memory, count_, all, on_all, "r.count_arrival(T.at(...), n): the unit's global writes released (GPU scope), counter T[...] stepped 0..n-1 cyclically (atom.inc); the count before, to every thread, with the writes of earlier arrivals visible") \
  X(cluster_reduce, memory, cluster, all, on_sm90a | on_sm100a, "sum (or max) of a register tile over the CTAs of the cluster (DSMEM): every CTA gets it, or (a scattered sum) CTA q its q-th column block")    \
  X(topk_store, memory, count_, all, on_all, "the per-row top-k lists, best first, into a values and an i32 indices tensor (rows x k)") \
  /* sync */                                                                                                                      \
  X(mbarrier_init, sync, mbarrier, leader, on_all, "mbarrier.init")                                                 \
  X(mbarrier_arrive, sync, mbarrier, leader, on_all, "mbarrier.arrive (local or, .remote(), in every CTA)")       \
  X(mbarrier_expect_tx, sync, mbarrier_tx, leader, on_sm90a | on_sm100a, "mbarrier.expect_tx")                                    \
  X(mbarrier_arrive_expect_tx, sync, mbarrier_tx, leader, on_sm90a | on_sm100a, "mbarrier.arrive.expect_tx")                      \
  X(mbarrier_wait, sync, mbarrier, all, on_all, "mbarrier wait on the tracked phase")                               \
  X(named_barrier_sync, sync, named_barrier, all, on_all, "bar.sync on a named barrier")                                          \
  X(named_barrier_arrive, sync, named_barrier, all, on_all, "bar.arrive on a named barrier")                                      \
  X(fence_proxy_async, sync, fence_proxy_async, all, on_sm90a | on_sm100a, "fence.proxy.async.shared::cta")                      \
  X(fence_mbarrier_init, sync, cluster, leader, on_sm90a | on_sm100a, "fence.mbarrier_init.release.cluster")                      \
  X(tcgen05_fence_before, sync, tcgen05, all, on_sm100a, "tcgen05.fence::before_thread_sync")                                   \
  X(tcgen05_fence_after, sync, tcgen05, all, on_sm100a, "tcgen05.fence::after_thread_sync")                                     \
  X(cluster_arrive, sync, cluster, all, on_sm90a | on_sm100a, "barrier.cluster.arrive.release")                                   \
  X(cluster_wait, sync, cluster, all, on_sm90a | on_sm100a, "barrier.cluster.wait.acquire")                                       \
  X(wgmma_fence, sync, wgmma, all, on_sm90a, "wgmma.fence")                                                                      \
  X(wgmma_commit, sync, wgmma, all, on_sm90a, "wgmma.commit_group")                                                              \
  X(wgmma_wait, sync, wgmma, all, on_sm90a, "wgmma.wait_group n")                                                                \
  X(cp_async_commit, sync, cp_async, all, on_all, "cp.async.commit_group")                                                        \
  X(cp_async_wait, sync, cp_async, all, on_all, "cp.async.wait_group n")                                                          \
  X(bulk_commit, sync, tma, leader, on_sm90a | on_sm100a, "cp.async.bulk.commit_group")                                           \
  X(bulk_wait, sync, tma, leader, on_sm90a | on_sm100a, "cp.async.bulk.wait_group[.read] n")                                      \
  X(tcgen05_commit, sync, tcgen05, leader, on_sm100a, "tcgen05.commit to an mbarrier")                                          \
  X(pipeline_acquire, sync, mbarrier, leader, on_all, "producer takes a free stage (waits 'empty'; expects the TMA loads' bytes, or its cp.async copies arrive on 'full')")    \
  X(pipeline_wait, sync, mbarrier, all, on_all, "consumer waits for a filled stage ('full')")                       \
  X(pipeline_release, sync, mbarrier, leader, on_all, "consumer frees a stage ('empty'), optionally n iterations later") \
  X(pipeline_commit, sync, mbarrier, leader, on_all, "producer completes a stage by other means than TMA or cp.async")          \
  X(pipeline_held, sync, mbarrier, all, on_all, "the slot of the stage this role's last wait on the pipeline received (no wait)") \
  X(pipeline_flush, sync, mbarrier, leader, on_all, "frees the stages still held by deferred releases (.later(n))") \
  X(turn_take, sync, named_barrier, all, on_all, "waits until the previous unit of the role passed the turn (ordered sections)") \
  X(turn_pass, sync, named_barrier, all, on_all, "passes the turn to the next unit of the role")                                 \
  /* control */                                                                                                                   \
  X(tile_loop, control, count_, all, on_all, "the walk over the parallel iteration space")                                        \
  X(loop, control, count_, all, on_all, "a sequential loop (static: unrolled; dynamic: index-expression bounds)")                 \
  X(when, control, count_, all, on_all, "a body run only where a condition over uniform indices holds")                           \
  X(setmaxnreg, control, setmaxnreg, all, on_sm90a | on_sm100a, "setmaxnreg.inc/dec")                                             \
  X(griddep_wait, control, griddepcontrol, all, on_sm90a | on_sm100a, "griddepcontrol.wait")                                      \
  X(griddep_launch, control, griddepcontrol, all, on_sm90a | on_sm100a, "griddepcontrol.launch_dependents")

enum class op_kind : std::uint8_t {
#define CAKE_X(n, c, f, i, l, doc) n,
  CAKE_OP_KINDS(CAKE_X)
#undef CAKE_X
  count_
};
inline constexpr int op_kind_count = static_cast<int>(op_kind::count_);

struct op_info {
  std::string_view name;
  op_category category;
  feature needs;  // feature::count_ = generic code, admitted everywhere
  issuer who;
  unsigned lowered_on;  // on_sm80 | on_sm90a | on_sm100a
  std::string_view doc;
  constexpr bool lowered(target_id t) const { return (lowered_on & target_bit(t)) != 0; }
};
inline constexpr op_info op_table[op_kind_count] = {
#define CAKE_X(n, c, f, i, l, doc) {#n, op_category::c, feature::f, issuer::i, l, doc},
    CAKE_OP_KINDS(CAKE_X)
#undef CAKE_X
};
#undef CAKE_OP_KINDS

constexpr const op_info& info(op_kind k) { return op_table[static_cast<int>(k)]; }
constexpr std::string_view to_string(op_kind k) { return info(k).name; }

// ---- operands ------------------------------------------------------------------------------
enum class operand_kind : std::uint8_t { none, smem, tmem, reg, mbarrier, named_barrier, pipeline, global, tensor, scalar };
enum class stage_sel : std::uint8_t {
  none,  // a single-copy region, or the whole region
  slot,  // the stage held by a pipeline slot (slot_op = op id of the acquire/wait that produced it)
  expr,  // an explicit index (taken modulo the region's stages)
};
enum class part_axis : std::uint8_t { none, rows, cols };

struct operand {
  operand_kind kind = operand_kind::none;
  std::uint8_t index = no_index;  // resource index (smem/tmem/reg/barrier/pipeline) or tile-ref index (global)
  stage_sel sel = stage_sel::none;
  std::uint16_t slot_op = 0;
  index_expr stage{};           // for stage_sel::expr, and barrier arrays
  part_axis part = part_axis::none;
  std::uint8_t parts = 1;       // the region is cut into `parts` equal parts along `part`...
  index_expr part_index{};      // ...and this one is used

  constexpr bool is(operand_kind k) const { return kind == k; }
};

// A tile of a global tensor, in units of the tile that moves (the smem region's shape, i.e. one box).
// The region's columns hold the tensor's last (contiguous) dim; its rows hold the dim at `row_pos`
// (default: the second-to-last); every other dim is a box of extent 1.
// A coordinate whose bit is set in `elements` counts elements, not tiles (.elements_at(pos): a tile
// that starts inside a block, e.g. at a sequence offset read from a tensor). `limit` (when limit_pos is
// a dim position) ends the tensor early along that dim for register loads and stores: elements at or past
// it are outside (loads fill, stores skip), e.g. the end of one sequence in a packed batch.
struct global_tile_ref {
  std::uint8_t tensor = no_index;
  std::uint8_t rank = 0;
  std::uint8_t row_pos = no_index;  // no_index: rank - 2
  std::uint8_t elements = 0;        // bit i: coords[i] is an element index
  std::uint8_t limit_pos = no_index;
  index_expr coords[dim_list::max_rank]{};
  index_expr limit{};
  constexpr bool element_coord(int i) const { return (elements >> i) & 1u; }
  constexpr bool has_limit() const { return limit_pos != no_index; }
};

// ---- flags and immediates -------------------------------------------------------------------
enum op_flag : std::uint16_t {
  flag_multicast = 1u << 0,        // tma_load: to every CTA of the cluster
  flag_read_only = 1u << 1,        // bulk_wait: .read (source smem reusable), not full completion
  flag_overwrite = 1u << 2,        // MMA: D = A*B (scale-d = 0)
  flag_overwrite_first = 1u << 3,  // MMA: D = A*B on the first iteration of loop imm[2], else D += A*B
  flag_remote = 1u << 4,           // mbarrier_arrive: on the barrier of every CTA of the cluster
  flag_static_trip = 1u << 5,      // loop: trip count imm[1] is a compile-time constant (unrolled); else imm[1]
                                   // indexes program::loops
  flag_over = 1u << 6,             // MMA: contracts dim imm[1] (over(dim)); else the dim A and B share
  flag_accumulate = 1u << 7,       // reductions: combine with the destination's current value; load_global:
                                   // add the loaded values to it (r.load_add)
  flag_release_later = 1u << 8,    // pipeline_release: imm[1] iterations of the enclosing loop later
  flag_alternate = 1u << 9,        // tile_loop: the role's units take the CTA's points in turn (ping-pong)
  flag_expr_src = 1u << 10,        // reduce_rows / arg_reduce_rows / topk_rows: the reduced values are an
                                   // expression (nodes imm[1] .. imm[1] + imm[2]); a is its lead full-tile leaf
  flag_scatter = 1u << 11,         // cluster_reduce: reduce-scatter (CTA rank q ends with column block q of the sum)
  flag_lazy_index = 1u << 12,      // arg_reduce_rows (accumulating): min/max per element, the index found only for
                                   // rows whose value beats the running one (lazy_index())
  flag_rest_unused = 1u << 13,     // tma_load into a part of a region: what the rest of the region holds is
                                   // read but never used (rest_unused(); dataflow.partial-fill)
  flag_next_point = 1u << 14,      // when: r.next_point(...): runs where the CTA's walk has a next point, and
                                   // the walk's coordinates inside it are that point's
  flag_oob_nan = 1u << 15,         // tma_load: elements outside the tensor arrive as NaN, not 0 (fill_outside(nan):
                                   // the tensor map's other out-of-bounds fill)
};
// reduce_rows, reduce_cols: imm[0]; arg_reduce_rows: imm[0] (argmin or argmax). A row reduction may
// reduce an expression (flag_expr_src, op::expr_first / expr_count).
// scan_rows: d = the scanned tile, a = the source (same shape). scatter_store: d = the tensor's tile (its
// row coordinate ignored), a = the rows, b = the i32 index vector. fetch_add: d = the old values (a row
// vector), a = the counter tensor's tile (its row coordinate ignored), b = the i32 index vector, imm[0] =
// the increment.
enum class reduce_kind : std::uint8_t { max, sum, min, argmin, argmax };
constexpr std::string_view to_string(reduce_kind k) {
  constexpr std::string_view names[] = {"max", "sum", "min", "argmin", "argmax"};
  return static_cast<unsigned>(k) < 5 ? names[static_cast<int>(k)] : "?";
}

// let_index: the value is ix, or (imm[0] == 1, let_min) the smaller of ix and d.stage.
// topk_rows: d = the r.topk state, a = the source tile (or the expression's lead leaf), b = an i32 index
// tile of the source's shape (or none: the index is ix + the element's column). topk_store: d = the
// values tile, b = the indices tile (both global, rows x k), a = the state.
// elementwise: the expression's nodes are program::exprs[imm[0] .. imm[0] + imm[1]), its root last.
// when: the condition likewise. arg_reduce_rows: d = value vector, b = index vector, ix = the column
// index of the tile's column 0. load_global: imm[2] = the bits of the float filled in outside the tensor.
struct op {
  op_kind kind = op_kind::fill;
  std::uint8_t role = no_index;
  std::int16_t parent = -1;  // enclosing loop / tile_loop / when op, -1 at role level
  std::int16_t end = 0;      // control ops: one past the last op of the body
  operand d{}, a{}, b{};
  std::int32_t imm[3]{};
  index_expr ix{};
  std::uint16_t flags = 0;
  src_loc loc;

  constexpr bool has(op_flag f) const { return (flags & f) != 0; }
  // The expression an op evaluates per element, as [first, first + count) of program::exprs (count 0:
  // none): elementwise and when keep it in imm[0..1], a reduction of an expression in imm[1..2].
  constexpr int expr_first() const {
    return kind == op_kind::elementwise || kind == op_kind::when ? imm[0] : has(flag_expr_src) ? imm[1] : 0;
  }
  constexpr int expr_count() const {
    return kind == op_kind::elementwise || kind == op_kind::when ? imm[1] : has(flag_expr_src) ? imm[2] : 0;
  }
  constexpr op_category category() const { return info(kind).category; }
};

// What the schedule wrote for a cluster_reduce op (its diagnostics name it so).
constexpr std::string_view cluster_reduce_call(const op& o) {
  return o.imm[0] == static_cast<int>(reduce_kind::max) ? "cluster_max" : o.has(flag_scatter) ? "cluster_sum_scatter" : "cluster_sum";
}

}  // namespace cake
