#pragma once
// The one list of Cake's rules. Every diagnostic names one of these ids; docs/diagnostics.md is
// generated from this table (tests/unit/test_analysis_docs.cpp fails when the two disagree), the
// verify corpus (tests/verify) holds a failing and a fixed schedule for every rule it can trigger, and
// static_assert(cake::verify(p)) dispatches on it to name the failing rule in the compiler's error.
//
// Columns: enumerator, id (`category.name`, stable: agents match on it), category, severity, the pass
// that reports it, one-line doc.
// Passes: `structure`  the Program's indices, checked before anything else reads them
//         `builder`    recorded by the builder in program::errors (a compile error for constexpr schedules)
//         `type`       a static_assert in the builder: the schedule does not compile (no runtime form)
//         `resource`, `instruction`, `representation`, `memory`, `sync`: static passes of the analyzer
//         `protocol`   found by the abstract executor (analysis/protocol.hpp)
// A rule with an analyzer pass may also be recorded by the builder under the same id; the analyzer
// re-checks it so that Programs built or edited by other means are covered too.
#include <cstdint>
#include <string_view>

namespace cake::analysis {

enum class category : std::uint8_t { sync, memory, dataflow, resource, instruction, representation, ir };
enum class severity : std::uint8_t { error, warning, note };
enum class pass_id : std::uint8_t { structure, builder, type, resource, instruction, representation, memory, sync, protocol, coverage };

constexpr std::string_view to_string(category c) {
  constexpr std::string_view names[] = {"sync", "memory", "dataflow", "resource", "instruction", "representation", "ir"};
  return names[static_cast<int>(c)];
}
constexpr std::string_view to_string(severity s) {
  return s == severity::error ? "error" : s == severity::warning ? "warning" : "note";
}
constexpr std::string_view to_string(pass_id p) {
  constexpr std::string_view names[] = {"structure", "builder", "type", "resource", "instruction", "representation", "memory", "sync", "protocol", "coverage"};
  return names[static_cast<int>(p)];
}

// clang-format off
#define CAKE_RULES(X)                                                                                          \
  /* ---- sync ------------------------------------------------------------------------------------ */        \
  X(sync_deadlock, "sync.deadlock", sync, error, protocol,                                                    \
    "No role can make progress and not all have finished; each blocked op and what it waits for is listed")   \
  X(sync_arrival_count, "sync.arrival-count", sync, error, protocol,                                          \
    "A barrier phase receives a different number of arrivals than the barrier's init count")                  \
  X(sync_expect_tx_mismatch, "sync.expect-tx-mismatch", sync, error, protocol,                                \
    "The bytes a phase expects (expect_tx) differ from the bytes its TMA loads deliver (full boxes, per receiving CTA)") \
  X(sync_phase_aliasing, "sync.phase-aliasing", sync, error, protocol,                                        \
    "A barrier ran two or more phases ahead of a waiter, so the parity the waiter tests is ambiguous")        \
  X(sync_remote_wait, "sync.remote-wait", sync, error, sync,                                                  \
    "A wait on a barrier of another CTA; only arrive/expect_tx/complete_tx may target a remote barrier")      \
  X(sync_uninitialized_barrier, "sync.uninitialized-barrier", sync, error, sync,                          \
    "With manual_barrier_init, a barrier is used without an init, or before its init is ordered before the use") \
  X(sync_double_init, "sync.double-init", sync, error, sync,                                                  \
    "mbarrier.init on a live barrier (Cake initializes barriers itself unless manual_barrier_init is set)")   \
  X(sync_missing_fence_mbarrier_init, "sync.missing-fence-mbarrier-init", sync, error, sync,              \
    "A schedule-initialized barrier is used by TMA, tcgen05.commit or another CTA before fence.mbarrier_init and a cluster sync") \
  X(sync_wgmma_fence, "sync.wgmma-fence", sync, error, protocol,                                              \
    "wgmma without a wgmma_fence before the warpgroup's first wgmma or after its registers were touched by other code") \
  X(sync_wgmma_commit, "sync.wgmma-commit", sync, error, protocol,                                            \
    "wgmma ops not closed by wgmma_commit before a wgmma_wait, or still in flight when the role ends")        \
  X(sync_held_before_wait, "sync.held-before-wait", sync, error, protocol,                                  \
    "r.held(pipeline) where the role has not waited on that pipeline yet: there is no stage to hold")        \
  X(sync_slot_scope, "sync.slot-scope", sync, error, sync,                                                    \
    "A pipeline slot used outside the loop / walk / when body whose acquire or wait produced it (the slot is one trip's stage)") \
  X(sync_tcgen05_commit_issuer, "sync.tcgen05-commit-issuer", sync, error, sync,                          \
    "tcgen05.commit issued by a thread other than the one that issued the MMAs it must track")               \
  X(sync_tcgen05_fence, "sync.tcgen05-fence", sync, error, protocol,                                          \
    "A tcgen05 op after a thread sync without tcgen05_fence_after, or a thread sync after tcgen05.ld/st without tcgen05_fence_before") \
  X(sync_named_barrier_count, "sync.named-barrier-count", sync, error, sync,                                  \
    "A named barrier's thread count differs from the threads of the roles that use it")                       \
  X(sync_missing_proxy_fence, "sync.missing-proxy-fence", sync, error, protocol,                              \
    "Generic smem writes (st.shared, stmatrix, cp.async) read by the async proxy (TMA store, wgmma, tcgen05.mma) without fence.proxy.async") \
  X(sync_tma_no_barrier, "sync.tma-no-barrier", sync, error, sync,                                            \
    "A TMA load completes on no mbarrier: it neither fills a pipeline slot nor names a barrier")              \
  X(sync_tx_count_range, "sync.tx-count-range", sync, error, builder,                                         \
    "An mbarrier tx-count outside 0..2^20-1 bytes")                                                           \
  X(sync_arrival_count_range, "sync.arrival-count-range", sync, error, builder,                               \
    "An mbarrier arrival count outside 1..2^20-1")                                                            \
  X(sync_cluster_sum_divergent, "sync.cluster-sum-divergent", sync, error, sync,                              \
    "A cluster_sum that CTAs of one cluster may reach a different number of times (under a when or in a loop whose bounds differ per CTA): a hang") \
  X(sync_counter_arrivals, "sync.counter-arrivals", sync, error, sync,                                        \
    "count_arrival(T.at(...), n) where the units that step one counter element per launch are not n (fewer: never combined; more: combined twice)") \
  X(sync_counter_order, "sync.counter-order", sync, error, sync,                                              \
    "A part published by count_arrival read outside the when on its count, or read under it but written after the arrival") \
  X(sync_griddep_missing, "sync.griddep-missing", sync, error, sync,                                          \
    "With programmatic_launch(), a global-memory access its role may reach before griddep_wait(): the previous grid may still be writing it") \
  X(sync_griddep_no_pdl, "sync.griddep-no-pdl", sync, warning, sync,                                          \
    "griddep_wait() in a kernel without programmatic_launch(): it waits for nothing (the launch already ordered the previous grid)") \
  /* ---- memory ----------------------------------------------------------------------------------- */       \
  X(memory_smem_bounds, "memory.smem-bounds", memory, error, memory,                                          \
    "A part index outside the parts of its region (a constant one, or a loop/unit index when it runs)")                         \
  X(memory_stage_index, "memory.stage-index", memory, error, protocol,                                        \
    "A negative stage index, a barrier-array index past the array, or a slot used by a role it was not handed to") \
  X(memory_tma_alignment, "memory.tma-alignment", memory, error, memory,                                      \
    "A TMA smem box does not start on 128 B (1024/512/256 B for 128B/64B/32B swizzle)")                       \
  X(memory_tmem_columns, "memory.tmem-columns", memory, error, builder,                                       \
    "A TMEM region asks for a column count outside 1..512")                                                   \
  X(memory_tmem_alloc, "memory.tmem-alloc", memory, error, protocol,                                          \
    "Tensor memory used without tmem_alloc, or before the alloc is ordered before the use")                   \
  X(memory_tmem_dealloc, "memory.tmem-dealloc", memory, error, protocol,                                      \
    "TMEM not deallocated before its role exits, deallocated while others may use it, or used after dealloc") \
  X(memory_tmem_lane_access, "memory.tmem-lane-access", memory, error, memory,                                \
    "A tcgen05.ld/st by warp w touches lanes outside 32*(w%4)..32*(w%4)+31")                                  \
  X(memory_foreign_registers, "memory.foreign-registers", memory, error, memory,                              \
    "An op uses a register tile declared by another role (registers belong to the warps that declare them)")  \
  X(memory_operand_space, "memory.operand-space", memory, error, type,                                        \
    "An op's operand lives in the wrong memory space (e.g. wgmma B from registers)")                          \
  X(memory_mask_coverage, "memory.mask-coverage", memory, warning, memory,                                    \
    "A load's out-of-tensor fill value (fill_outside, default 0) reaches a row reduction it is not neutral for (row_max of 0s)") \
  X(memory_tile_coverage, "memory.tile-coverage", memory, warning, memory,                                    \
    "A tile coordinate indexes a dim with a parallel index of another dim or steps by other than the axis's block, or an output's tiles miss or overlap elements of the walked dims") \
  X(memory_output_coverage, "memory.output-coverage", memory, error, memory,                                 \
    "An output whose tile coordinates remap the walk (a division or modulo of a parallel index, a let_index of one) leaves a tile unwritten, writes one twice or writes outside the tensor at some extent (enumerated)") \
  /* ---- dataflow --------------------------------------------------------------------------------- */       \
  X(dataflow_race, "dataflow.race", dataflow, error, protocol,                                                \
    "A read of smem/TMEM not ordered after the write that fills it (e.g. a stage read before its full barrier completed)") \
  X(dataflow_partial_fill, "dataflow.partial-fill", dataflow, warning, protocol,                              \
    "A read of smem rows (or columns) that no write fills while others of the read are filled, and no load says the rest is unused (.rest_unused())") \
  X(dataflow_war, "dataflow.war", dataflow, error, protocol,                                                  \
    "A stage overwritten before every consumer that read it released it")                                     \
  X(dataflow_acc_read_before_complete, "dataflow.acc-read-before-complete", dataflow, error, protocol,        \
    "An accumulator read or overwritten while an MMA that writes it may still be in flight")                  \
  X(dataflow_operand_in_flight, "dataflow.operand-in-flight", dataflow, error, protocol,                      \
    "A register tile overwritten while a wgmma that reads it as its A operand may still be in flight")       \
  X(dataflow_acc_uninitialized, "dataflow.acc-uninitialized", dataflow, error, protocol,                      \
    "An MMA accumulates into, or an op reads, an accumulator that nothing has written")                       \
  X(dataflow_acc_stale, "dataflow.acc-stale", dataflow, error, protocol,                                      \
    "An MMA accumulates onto a value initialized in a previous tile, so the result includes that tile")      \
  X(dataflow_dead_accumulation, "dataflow.dead-accumulation", dataflow, error, protocol,                      \
    "An MMA result overwritten before any op read it: an MMA with overwrite (e.g. on every K step), a fill, a set or a load into its accumulator") \
  X(dataflow_store_source_reuse, "dataflow.store-source-reuse", dataflow, error, protocol,                    \
    "The smem source of a TMA store is overwritten before a bulk_wait_read covers the store")                 \
  X(dataflow_store_pending_at_exit, "dataflow.store-pending-at-exit", dataflow, error, protocol,              \
    "A role ends with TMA stores never committed (bulk_commit); lowering drains only committed groups at exit") \
  X(dataflow_atomic_mixed, "dataflow.atomic-mixed", dataflow, error, memory,                                  \
    "A tensor written both atomically (atomic_add, scatter_add, fetch_add) and by plain stores (store, scatter_store) in one kernel: unordered without a grid-wide sync") \
  X(dataflow_cluster_scatter_read, "dataflow.cluster-scatter-read", dataflow, error, representation,        \
    "After cluster_sum_scatter a CTA holds the sum only in its own column block (cluster_rank() of S): a read of the whole tile, or of a block not selected by r.when(eq(r.cluster_rank(), q)), reads partial sums") \
  /* ---- resource --------------------------------------------------------------------------------- */       \
  X(resource_smem_overflow, "resource.smem-overflow", resource, error, resource,                              \
    "The shared-memory plan needs more bytes than the target allows per block")                               \
  X(resource_register_file, "resource.register-file", resource, error, resource,                              \
    "Threads x registers after setmaxnreg summed over roles exceed the block's pool, threads x the entry cap (setmaxnreg.inc only takes what .dec released)") \
  X(resource_register_tiles, "resource.register-tiles", resource, warning, resource,                          \
    "A role's live register tiles need more registers per thread than its budget less 24 for addresses and indices (spills)") \
  X(resource_setmaxnreg_value, "resource.setmaxnreg-value", resource, error, resource,                        \
    "A setmaxnreg value that is not a multiple of 8 in 24..256")                                              \
  X(resource_setmaxnreg_warpgroup, "resource.setmaxnreg-warpgroup", resource, error, resource,                \
    "A role with regs(n) is not made of whole, aligned warpgroups (setmaxnreg applies per warpgroup)")        \
  X(resource_threads_per_block, "resource.threads-per-block", resource, error, resource,                      \
    "The roles add up to more threads than a block may have")                                                 \
  X(resource_ctas_per_sm, "resource.ctas-per-sm", resource, error, resource,                                  \
    "k.ctas_per_sm(n): n blocks' shared memory or threads do not fit an SM, n is outside 1..the target's blocks per SM, or a role re-balances registers with setmaxnreg (which assumes one block per SM)") \
  X(resource_cluster_size, "resource.cluster-size", resource, error, resource,                                \
    "A cluster dimension below 1, or more CTAs per cluster than the target supports (16 non-portable)")       \
  X(resource_cluster_nonportable, "resource.cluster-nonportable", resource, warning, resource,                \
    "A cluster of more than 8 CTAs: launches only with the non-portable cluster size attribute")              \
  X(resource_tmem_overflow, "resource.tmem-overflow", resource, error, resource,                              \
    "TMEM regions (columns x stages) need more than the 512 columns of tensor memory")                        \
  X(resource_cluster_shape, "resource.cluster-shape", resource, error, resource,                              \
    "A cluster shaped along a second or third axis; CTAs are grouped along the first parallel axis only")     \
  X(resource_warpgroup_alignment, "resource.warpgroup-alignment", resource, error, resource,                  \
    "A role that issues wgmma does not start at a warp index divisible by 4")                                 \
  X(resource_named_barrier_count, "resource.named-barrier-count", resource, error, resource,                  \
    "More hardware named barriers than the target has (barrier 0 is reserved for the block)")                 \
  X(resource_mbarrier_count, "resource.mbarrier-count", resource, error, resource,                            \
    "More mbarrier objects than the barrier plan holds")                                                      \
  X(resource_tma_descriptor_count, "resource.tma-descriptor-count", resource, error, resource,                \
    "More distinct TMA descriptors than the TMA plan holds")                                                  \
  /* ---- instruction ------------------------------------------------------------------------------ */       \
  X(instruction_not_admitted, "instruction.not-admitted", instruction, error, instruction,                    \
    "An op, flag or resource needs an instruction family the kernel's target does not have")                  \
  X(instruction_not_lowered, "instruction.not-lowered", instruction, error, instruction,                      \
    "An op, or a form of an op, that Cake does not lower for the kernel's target (reported here, never as a lowering failure)") \
  X(instruction_mma_shape, "instruction.mma-shape", instruction, error, instruction,                          \
    "An MMA shape the unit does not have (wgmma m64 x N 8..256/8; tcgen05 M 64|128, N 8..256/8; mma.sync 16x8)") \
  X(instruction_mma_k, "instruction.mma-k", instruction, error, instruction,                                  \
    "An MMA's K extent is not a multiple of the instruction K for its dtype")                                 \
  X(instruction_wgmma_major, "instruction.wgmma-major", instruction, error, instruction,                      \
    "An MN-major wgmma operand that is not f16/bf16 in smem (fp8, tf32 and i8 are K-major only)")             \
  X(instruction_wgmma_unit, "instruction.wgmma-unit", instruction, error, instruction,                        \
    "wgmma issued by a role whose units are warps, not warpgroups")                                           \
  X(instruction_mma_sync_unit, "instruction.mma-sync-unit", instruction, error, instruction,                  \
    "mma_sync issued by a role whose units are warpgroups, not warps")                                        \
  X(instruction_tcgen05_single_issuer, "instruction.tcgen05-single-issuer", instruction, error, instruction,  \
    "tcgen05.mma issued by a role of several units into one accumulator: every unit would issue it")         \
  X(instruction_multicast_without_cluster, "instruction.multicast-without-cluster", instruction, error, instruction, \
    "A multicast TMA load, remote arrive or cluster_sum in a kernel without a cluster of 2 or more CTAs")     \
  X(instruction_tmem_off_sm100a, "instruction.tmem-off-sm100a", instruction, error, instruction,              \
    "Tensor memory declared for a target that has none")                                                      \
  X(instruction_mma_operand_dtype, "instruction.mma-operand-dtype", instruction, error, type,                \
    "An MMA operand dtype the unit does not take (e.g. fp8 for mma.sync)")                                    \
  X(instruction_mma_dtype_mismatch, "instruction.mma-dtype-mismatch", instruction, error, instruction,        \
    "The A and B operands of an MMA have different dtypes")                                                   \
  /* ---- representation --------------------------------------------------------------------------- */       \
  X(representation_swizzle_span, "representation.swizzle-span", representation, error, representation,       \
    "A tile's inner extent is wider than its swizzle span")                                                   \
  X(representation_inner_bytes, "representation.inner-bytes", representation, error, representation,         \
    "An smem tile row is not a multiple of 16 bytes")                                                         \
  X(representation_swizzle_atom, "representation.swizzle-atom", representation, error, representation,       \
    "An MMA operand in a swizzled region whose row does not fill the swizzle atom exactly")                   \
  X(representation_major_mismatch, "representation.major-mismatch", representation, error, representation,   \
    "A major-ness declared on a region disagrees with the one derived from the dim an MMA contracts")          \
  X(representation_mma_reduce_dim, "representation.mma-reduce-dim", representation, error, representation,   \
    "An MMA whose contracted dim is ambiguous, absent from an operand, or shared by neither (write .over(dim))") \
  X(representation_mma_operand_shape, "representation.mma-operand-shape", representation, error, representation, \
    "MMA operands disagree on M, N or K (A rows = accumulator rows, B rows = N, equal K extents)")             \
  X(representation_tma_box, "representation.tma-box", representation, error, representation,                 \
    "A TMA box dimension outside 1..256, or a multicast box whose rows do not split across the cluster")      \
  X(representation_tma_dtype, "representation.tma-dtype", representation, error, representation,            \
    "A TMA copy between an smem tile and a tensor of different dtypes")                                       \
  X(representation_copy_dtype, "representation.copy-dtype", representation, error, representation,          \
    "A cp.async copy between an smem tile and a tensor of different dtypes")                                  \
  X(representation_accumulator_dtype, "representation.accumulator-dtype", representation, error, representation, \
    "An accumulator dtype that is not legal for the operands (bf16/tf32 -> f32; f16/fp8 -> f16|f32; i8 -> i32)") \
  X(representation_copy_shape, "representation.copy-shape", representation, error, representation,          \
    "The source and destination of a register/smem/TMEM move have different shapes")                          \
  X(representation_ldmatrix_dtype, "representation.ldmatrix-dtype", representation, error, type,            \
    "ldmatrix between tiles of different element widths")                                                     \
  X(representation_stmatrix_dtype, "representation.stmatrix-dtype", representation, error, type,            \
    "stmatrix from a register tile of another dtype than the smem tile")                                      \
  X(representation_broadcast, "representation.broadcast", representation, error, representation,           \
    "An r.set leaf that is not the destination's shape, its R x 1 or 1 x C vector or 1 x 1; a row reduction or scatter whose vectors are not R x 1") \
  X(representation_compute_dtype, "representation.compute-dtype", representation, error, representation,   \
    "Register compute on a dtype it does not take (f32/i32/bf16/f16; 8-bit only through convert; tf32 and i64 not in registers; i32 index vectors)") \
  X(representation_topk, "representation.topk", representation, error, representation,                     \
    "A row top-k into a tile that is not an r.topk state, with k outside 1..256, a source of other rows than the state, or an index tile that is not i32 of the source's shape") \
  X(representation_layout_conflict, "representation.layout-conflict", representation, error, representation, \
    "Two fragment layouts meet in one op, or a register tile does not split evenly over the threads of its unit") \
  /* ---- ir: the builder could not record the schedule as written --------------------------------- */      \
  X(ir_name_too_long, "ir.name-too-long", ir, error, builder, "A name longer than 31 characters")             \
  X(ir_kernel_name, "ir.kernel-name", ir, error, builder, "A kernel name that cannot be its entry symbol: not letters, digits and '_' from a letter, or a C++ keyword") \
  X(ir_capacity, "ir.capacity", ir, error, builder, "More items of one kind than a Program holds")            \
  X(ir_unknown_dim, "ir.unknown-dim", ir, error, builder, "An axis, loop or over() names a dim label no tensor or k.dim declares") \
  X(ir_space_axes, "ir.space-axes", ir, error, builder, "k.parallel(...) with more than 5 axes, or an argument that is not an axis") \
  X(ir_space_redeclared, "ir.space-redeclared", ir, error, builder, "k.parallel(...) called twice: a kernel has one parallel iteration space") \
  X(ir_tile_extent, "ir.tile-extent", ir, error, builder, "An axis block size or slice count that is not positive") \
  X(ir_next_point, "ir.next-point", ir, error, builder, "r.next_point(...) outside a walk (r.for_each), or in an alternating walk, whose units do not take consecutive points (value: 0, or the walk's op#)") \
  X(ir_split_tail, "ir.split-tail", ir, error, builder, "k.split_tail(extent, n) with n outside 2..1024, an extent that is not an expression of dims, without k.persistent(...), or with a cluster") \
  X(ir_descending_loop, "ir.descending-loop", ir, error, builder, "tiles(dim, block).descending() given to a loop: descending orders a parallel axis' walk, a loop runs upward (value: the block size)") \
  X(ir_expr_size, "ir.expr-size", ir, error, builder, "An r.set, when or reduced expression of more than 24 nodes (split it into several r.set)") \
  X(ir_fma_share, "ir.fma-share", ir, error, builder, "exp2(x, fma_share{n, d}) with d outside 1..32 or n outside 0..d (value: d)") \
  X(ir_reduce_expr, "ir.reduce-expr", ir, error, builder, "A row reduction of an expression with no register tile leaf of the destination's rows and more than one column") \
  X(ir_loop_bound, "ir.loop-bound", ir, error, builder, "A loop bound that is min() of more than two, a step outside 1..32767, or depends on an element's row/column") \
  X(ir_tile_rows, "ir.tile-rows", ir, error, builder, "tensor.tile(...).rows_at(pos) with pos at or after the tensor's last dim") \
  X(ir_smem_shape, "ir.smem-shape", ir, error, builder, "An smem tile without positive rows and columns")     \
  X(ir_stages, "ir.stages", ir, error, builder, "Stages or copies outside 1..16 (pipelines) or 1..32 (copies)") \
  X(ir_barrier_array, "ir.barrier-array", ir, error, builder, "An mbarrier array size outside 1..32")         \
  X(ir_region_in_two_pipelines, "ir.region-in-two-pipelines", ir, error, builder,                             \
    "A region carried by two pipelines")                                                                       \
  X(ir_carried_copies, "ir.carried-copies", ir, error, builder,                                               \
    "A region with copies(n) carried by a pipeline of a different stage count")                               \
  X(ir_duplicate_name, "ir.duplicate-name", ir, error, builder, "Two resources of one kind with the same name") \
  X(ir_modifier, "ir.modifier", ir, error, builder,                                                           \
    "A modifier on an op it does not apply to (multicast() off a tma_load, remote() off an arrive, overwrite() off an MMA)") \
  X(ir_part_count, "ir.part-count", ir, error, memory, "rows(i, n) / cols(i, n) with an n that does not divide the extent") \
  X(ir_slot_region, "ir.slot-region", ir, error, builder, "slot[region] with a region its pipeline does not carry") \
  X(ir_slot_pipeline, "ir.slot-pipeline", ir, error, builder, "release/commit of a slot from another pipeline") \
  X(ir_overwrite_first, "ir.overwrite-first", ir, error, builder, "overwrite_on_first given something other than a loop variable") \
  X(ir_no_space, "ir.no-space", ir, error, builder, "r.for_each(...) without k.parallel(...)")              \
  X(ir_dim_unsized, "ir.dim-unsized", ir, error, memory,                                                      \
    "The parallel space or a loop bound walks a dim that no tensor has: the launch sizes dims from its tensors, so it has no extent (kernels without tensors: refused at launch)") \
  X(ir_when_condition, "ir.when-condition", ir, error, type,                                                 \
    "r.when(...) given a C++ bool (a == b on index expressions compares the expressions): write eq(a, b) / ne(a, b)") \
  X(ir_trip_count, "ir.trip-count", ir, error, builder, "for_range with a count outside 1..1024")             \
  X(ir_wait_count, "ir.wait-count", ir, error, builder, "A wait_group count outside 0..7")                    \
  X(ir_tile_rank, "ir.tile-rank", ir, error, builder, "tensor.tile(...) with a coordinate count other than the tensor's rank") \
  X(ir_index_expr, "ir.index-expr", ir, error, builder, "An index expression that cannot be represented")     \
  X(ir_reg_shape, "ir.reg-shape", ir, error, builder, "A register tile without positive rows and columns")    \
  X(ir_nested_role, "ir.nested-role", ir, error, builder, "A role declared inside another role's body")       \
  X(ir_role_size, "ir.role-size", ir, error, builder, "A role with no warps or warpgroups")                   \
  X(ir_dim_mode_conflict, "ir.dim-mode-conflict", ir, error, builder, "A dim dynamic in one tensor and specialized in another") \
  X(ir_tensor_rank, "ir.tensor-rank", ir, error, builder, "A tensor with no dims or more than 4")             \
  X(ir_no_roles, "ir.no-roles", ir, error, builder, "A kernel without roles")                               \
  X(ir_smem_option, "ir.smem-option", ir, error, type, "k.smem(...) given an option it does not take (e.g. stages(n))")                               \
  X(ir_index_value, "ir.index-value", ir, error, sync,                                                        \
    "An index value (read_index / let_index / count_arrival) used where it is not defined (another role, before its op, outside its body), or read from a tensor that is not i32") \
  X(ir_index_value_bound, "ir.index-value-bound", ir, warning, sync,                                          \
    "A loop whose trip count is negative where the tensors read by read_index hold non-decreasing values (bounds the wrong way round)") \
  X(ir_walk_index, "ir.walk-index", ir, error, sync,                                                          \
    "r.walk_step() / r.walk_steps() used by an op outside its role's walk over the parallel space (r.for_each), where the CTA has no step") \
  X(ir_control_sanity, "ir.control-sanity", ir, warning, sync,                                                 \
    "A dynamic loop that runs for no point, a min() bound with two identical sides, or a when whose condition is a constant (== on index expressions)") \
  X(ir_malformed, "ir.malformed", ir, error, structure,                                                      \
    "The Program's indices are inconsistent (an operand, role or loop points outside its table); nothing else is checked")
// clang-format on

enum class rule_id : std::uint8_t {
#define CAKE_X(e, id, c, s, p, doc) e,
  CAKE_RULES(CAKE_X)
#undef CAKE_X
      count_
};
inline constexpr int rule_count = static_cast<int>(rule_id::count_);

struct rule_info {
  rule_id rule;
  std::string_view id;
  category cat;
  severity sev;
  pass_id pass;
  std::string_view doc;
};

inline constexpr rule_info rule_table[rule_count] = {
#define CAKE_X(e, id, c, s, p, doc) {rule_id::e, id, category::c, severity::s, pass_id::p, doc},
    CAKE_RULES(CAKE_X)
#undef CAKE_X
};

constexpr const rule_info& info(rule_id r) { return rule_table[static_cast<int>(r)]; }
constexpr std::string_view to_string(rule_id r) { return info(r).id; }

// The rule with this id, or rule_id::count_ when there is none.
constexpr rule_id find_rule(std::string_view id) {
  for (const auto& r : rule_table)
    if (r.id == id) return r.rule;
  return rule_id::count_;
}

}  // namespace cake::analysis
