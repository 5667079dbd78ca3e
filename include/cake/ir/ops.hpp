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

#define CAKE_OP_KINDS(X)                                                                   \
  /* compute */                                                                            \
  X(mma_sync, compute, mma_sync, all)                                                      \
  X(wgmma, compute, wgmma, all)                                                            \
  X(tcgen05_mma, compute, tcgen05, leader)                                                 \
  X(fill, compute, count_, all)                                                            \
  X(elementwise, compute, count_, all)                                                     \
  X(reduce_rows, compute, count_, all)                                                     \
  X(argmin_rows, compute, count_, all)                                                     \
  X(convert, compute, count_, all)                                                         \
  /* memory */                                                                             \
  X(tma_load, memory, tma, leader)                                                         \
  X(tma_store, memory, tma, leader)                                                        \
  X(tma_prefetch, memory, tma, leader)                                                     \
  X(cp_async, memory, cp_async, all)                                                       \
  X(load_global, memory, count_, all)                                                      \
  X(store_global, memory, count_, all)                                                     \
  X(load_shared, memory, count_, all)                                                      \
  X(store_shared, memory, count_, all)                                                     \
  X(ldmatrix, memory, ldmatrix, all)                                                       \
  X(stmatrix, memory, stmatrix, all)                                                       \
  X(tmem_load, memory, tcgen05, all)                                                       \
  X(tmem_store, memory, tcgen05, all)                                                      \
  X(tmem_alloc, memory, tcgen05, all)                                                      \
  X(tmem_dealloc, memory, tcgen05, all)                                                    \
  /* sync */                                                                               \
  X(mbarrier_init, sync, mbarrier, leader)                                                 \
  X(mbarrier_arrive, sync, mbarrier, leader)                                               \
  X(mbarrier_expect_tx, sync, mbarrier_tx, leader)                                         \
  X(mbarrier_arrive_expect_tx, sync, mbarrier_tx, leader)                                  \
  X(mbarrier_wait, sync, mbarrier, all)                                                    \
  X(named_barrier_sync, sync, named_barrier, all)                                          \
  X(named_barrier_arrive, sync, named_barrier, all)                                        \
  X(fence_proxy_async, sync, fence_proxy_async, all)                                       \
  X(fence_mbarrier_init, sync, cluster, leader)                                            \
  X(tcgen05_fence_before, sync, tcgen05, all)                                              \
  X(tcgen05_fence_after, sync, tcgen05, all)                                               \
  X(cluster_arrive, sync, cluster, all)                                                    \
  X(cluster_wait, sync, cluster, all)                                                      \
  X(wgmma_fence, sync, wgmma, all)                                                         \
  X(wgmma_commit, sync, wgmma, all)                                                        \
  X(wgmma_wait, sync, wgmma, all)                                                          \
  X(cp_async_commit, sync, cp_async, all)                                                  \
  X(cp_async_wait, sync, cp_async, all)                                                    \
  X(bulk_commit, sync, tma, leader)                                                        \
  X(bulk_wait, sync, tma, leader)                                                          \
  X(tcgen05_commit, sync, tcgen05, leader)                                                 \
  X(pipeline_acquire, sync, mbarrier, leader)                                              \
  X(pipeline_wait, sync, mbarrier, all)                                                    \
  X(pipeline_release, sync, mbarrier, leader)                                              \
  X(pipeline_commit, sync, mbarrier, leader)                                               \
  /* control */                                                                            \
  X(tile_loop, control, count_, all)                                                       \
  X(loop, control, count_, all)                                                            \
  X(setmaxnreg, control, setmaxnreg, all)                                                  \
  X(griddep_wait, control, griddepcontrol, all)                                            \
  X(griddep_launch, control, griddepcontrol, all)

enum class op_kind : std::uint8_t {
#define CAKE_X(n, c, f, i) n,
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
};
inline constexpr op_info op_table[op_kind_count] = {
#define CAKE_X(n, c, f, i) {#n, op_category::c, feature::f, issuer::i},
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
struct global_tile_ref {
  std::uint8_t tensor = no_index;
  std::uint8_t rank = 0;
  std::uint8_t row_pos = no_index;  // no_index: rank - 2
  index_expr coords[dim_list::max_rank]{};
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
};
enum class elementwise_op : std::uint8_t { add, sub, mul, max, min, scale, relu, exp2, neg };
constexpr std::string_view to_string(elementwise_op f) {
  constexpr std::string_view names[] = {"add", "sub", "mul", "max", "min", "scale", "relu", "exp2", "neg"};
  return static_cast<unsigned>(f) < 9 ? names[static_cast<int>(f)] : "?";
}
enum class reduce_kind : std::uint8_t { max, sum };

struct op {
  op_kind kind = op_kind::fill;
  std::uint8_t role = no_index;
  std::int16_t parent = -1;  // enclosing loop / tile_loop op, -1 at role level
  std::int16_t end = 0;      // control ops: one past the last op of the body
  operand d{}, a{}, b{};
  std::int32_t imm[3]{};
  std::uint16_t flags = 0;
  src_loc loc;

  constexpr bool has(op_flag f) const { return (flags & f) != 0; }
  constexpr op_category category() const { return info(kind).category; }
};

}  // namespace cake
