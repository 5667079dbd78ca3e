// Builder findings: the schedule could not be recorded as written. Built at run time, each lands in
// program::errors and is reported with the line of the builder call; a constexpr schedule stops
// compiling at the same line instead (tests/compile_fail). When the builder reports an ir.* finding,
// the analyzer reports only the builder's findings.
#pragma once
#include "corpus.hpp"

namespace verify_corpus {
// The smallest schedule: one warp that fences.
constexpr void one_role(kernel_builder& k) {
  k.role("a", warps(1), [&](role& r) { r.fence_proxy_async(); });
}
}  // namespace verify_corpus

namespace verify_corpus::ir_name_too_long {
constexpr program build(bool fixed) {
  auto k = kernel(fixed ? "short_name" : "a_kernel_name_that_is_longer_than_31_chars").target(sm_90a);  // EXPECT: ir.name-too-long
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_name_too_long
CAKE_VERIFY_CASE(ir_name_too_long, "ir.name-too-long")

// ir.kernel-name: a name the analyzer would pass but NVRTC cannot compile as the entry symbol (a C++
// keyword; before this rule, "short" passed the analyzer and failed in NVRTC).
namespace verify_corpus::ir_kernel_name {
constexpr program build(bool fixed) {
  auto k = kernel(fixed ? "short_gemm" : "short").target(sm_90a);  // EXPECT: ir.kernel-name
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_kernel_name
CAKE_VERIFY_CASE(ir_kernel_name, "ir.kernel-name")

namespace verify_corpus::ir_capacity {
constexpr program build(bool fixed) {
  auto k = kernel("capacity").target(sm_90a);
  const char* names[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "s16"};
  for (int i = 0; i < (fixed ? 16 : 17); ++i) k.smem<bf16>(names[i], {8, 64});  // EXPECT: ir.capacity
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_capacity
CAKE_VERIFY_CASE(ir_capacity, "ir.capacity")

// ir.unknown-dim: an axis over a label that no tensor or k.dim declares (a typo: "m" for "M").
namespace verify_corpus::ir_unknown_dim {
constexpr program build(bool fixed) {
  auto k = kernel("unknown_dim").target(sm_90a);
  k.input<bf16>("A", dims("M", "K"));
  k.parallel(tiles(fixed ? "M" : "m", 128));  // EXPECT: ir.unknown-dim
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_unknown_dim
CAKE_VERIFY_CASE(ir_unknown_dim, "ir.unknown-dim")

// ir.tile-extent: blocks of 0 elements, as an axis of the parallel space and as a loop extent.
namespace verify_corpus::ir_tile_extent {
constexpr program build(bool fixed) {
  auto k = kernel("tile_extent").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  k.input<f32>("X", dims(M, N, K));  // sizes the dims at launch (ir.dim-unsized)
  auto mn = k.parallel(tiles(M, fixed ? 128 : 0), tiles(N, 128));  // EXPECT: ir.tile-extent
  k.role("a", warps(1), [&](role& r) {
    r.for_each(mn, [&](auto, auto) {
      r.loop(tiles(K, fixed ? 64 : 0), [&](auto) { r.fence_proxy_async(); });  // EXPECT: ir.tile-extent
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_tile_extent
CAKE_VERIFY_CASE(ir_tile_extent, "ir.tile-extent")

// ir.descending-loop: .descending() on a loop's extent; it orders a parallel axis' walk (the twin puts it
// on the space's axis, where it belongs).
namespace verify_corpus::ir_descending_loop {
constexpr program build(bool fixed) {
  auto k = kernel("descending_loop").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  k.input<f32>("X", dims(M, N, K));  // sizes the dims at launch (ir.dim-unsized)
  auto mn = k.parallel(fixed ? tiles(M, 128).descending() : tiles(M, 128), tiles(N, 128));
  k.role("a", warps(1), [&](role& r) {
    r.for_each(mn, [&](auto, auto) {
      r.loop(fixed ? tiles(K, 64) : tiles(K, 64).descending(), [&](auto) { r.fence_proxy_async(); });  // EXPECT: ir.descending-loop
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_descending_loop
CAKE_VERIFY_CASE(ir_descending_loop, "ir.descending-loop")

// ir.space-axes: six axes; a parallel space has one to five. (An argument that is not an axis is a
// static_assert under the same id: tests/compile_fail/space_axis_argument.)
namespace verify_corpus::ir_space_axes {
constexpr program build(bool fixed) {
  auto k = kernel("space_axes").target(sm_90a);
  auto [B, H, M, N] = k.dims("B", "H", "M", "N");
  k.input<f32>("X", dims(B, H, M, N));  // sizes the dims at launch (ir.dim-unsized)
  if (fixed) k.parallel(tiles(M, 128), tiles(N, 128), each(H), each(B), split(2));
  else k.parallel(tiles(M, 128), tiles(N, 128), each(H), each(B), split(2), split(2));  // EXPECT: ir.space-axes
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_space_axes
CAKE_VERIFY_CASE(ir_space_axes, "ir.space-axes")

// ir.space-redeclared: a second k.parallel(...); a kernel has one parallel iteration space.
namespace verify_corpus::ir_space_redeclared {
constexpr program build(bool fixed) {
  auto k = kernel("space_redeclared").target(sm_90a);
  auto [M, N] = k.dims("M", "N");
  k.input<f32>("X", dims(M, N));  // sizes the dims at launch (ir.dim-unsized)
  k.parallel(tiles(M, 128), tiles(N, 128));
  if (!fixed) k.parallel(tiles(N, 128));  // EXPECT: ir.space-redeclared
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_space_redeclared
CAKE_VERIFY_CASE(ir_space_redeclared, "ir.space-redeclared")

// ir.loop-bound: a loop with step 0 would never advance.
namespace verify_corpus::ir_loop_bound {
constexpr program build(bool fixed) {
  auto k = kernel("loop_bound").target(sm_90a);
  auto K = k.dim("K");
  k.input<f32>("X", dims(K));  // sizes the dim at launch (ir.dim-unsized)
  k.role("a", warps(1), [&](role& r) {
    r.loop(index_expr(0), tiles(K, 64), fixed ? 1 : 0, [&](auto) { r.fence_proxy_async(); });  // EXPECT: ir.loop-bound
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_loop_bound
CAKE_VERIFY_CASE(ir_loop_bound, "ir.loop-bound")

// ir.tile-rows: rows_at(2) on X[B, S, D] names the last dim, which the tile's columns already run along.
// Fix: rows along S, rows_at(1) (the default for a rank-3 tensor).
namespace verify_corpus::ir_tile_rows {
constexpr program build(bool fixed) {
  auto k = kernel("tile_rows").target(sm_90a);
  auto [B, S, D] = k.dims("B", "S", "D");
  auto X = k.input<bf16>("X", dims(B, S, D));
  auto sX = k.smem<bf16>("sX", {128, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, 16384);
    r.tma_load(sX, X.tile(0, 0, 0).rows_at(fixed ? 1 : 2), full);  // EXPECT: ir.tile-rows
  });
  k.role("consumer", warps(1), [&](role& r) { r.wait(full); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_tile_rows
CAKE_VERIFY_CASE(ir_tile_rows, "ir.tile-rows")

namespace verify_corpus::ir_smem_shape {
constexpr program build(bool fixed) {
  auto k = kernel("smem_shape").target(sm_90a);
  k.smem<bf16>("sX", {fixed ? 8 : 0, 64});  // EXPECT: ir.smem-shape
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_smem_shape
CAKE_VERIFY_CASE(ir_smem_shape, "ir.smem-shape")

namespace verify_corpus::ir_stages {
constexpr program build(bool fixed) {
  auto k = kernel("stages").target(sm_90a);
  auto sX = k.smem<bf16>("sX", {8, 64});
  k.pipeline("p", stages(fixed ? 2 : 0)).carries(sX);  // EXPECT: ir.stages
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_stages
CAKE_VERIFY_CASE(ir_stages, "ir.stages")

namespace verify_corpus::ir_barrier_array {
constexpr program build(bool fixed) {
  auto k = kernel("barrier_array").target(sm_90a);
  k.mbarrier("b", arrivals(1), fixed ? 2 : 40);  // EXPECT: ir.barrier-array
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_barrier_array
CAKE_VERIFY_CASE(ir_barrier_array, "ir.barrier-array")

namespace verify_corpus::ir_region_in_two_pipelines {
constexpr program build(bool fixed) {
  auto k = kernel("two_pipelines").target(sm_90a);
  auto sX = k.smem<bf16>("sX", {8, 64});
  auto sY = k.smem<bf16>("sY", {8, 64});
  k.pipeline("p", stages(2)).carries(sX);
  k.pipeline("q", stages(2)).carries(fixed ? sY : sX);  // EXPECT: ir.region-in-two-pipelines
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_region_in_two_pipelines
CAKE_VERIFY_CASE(ir_region_in_two_pipelines, "ir.region-in-two-pipelines")

namespace verify_corpus::ir_carried_copies {
constexpr program build(bool fixed) {
  auto k = kernel("carried_copies").target(sm_90a);
  auto sX = k.smem<bf16>("sX", {8, 64}, copies(fixed ? 1 : 3));
  k.pipeline("p", stages(2)).carries(sX);  // EXPECT: ir.carried-copies
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_carried_copies
CAKE_VERIFY_CASE(ir_carried_copies, "ir.carried-copies")

namespace verify_corpus::ir_duplicate_name {
constexpr program build(bool fixed) {
  auto k = kernel("duplicate").target(sm_90a);
  k.smem<bf16>("sX", {8, 64});
  k.smem<bf16>(fixed ? "sY" : "sX", {8, 64});  // EXPECT: ir.duplicate-name
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_duplicate_name
CAKE_VERIFY_CASE(ir_duplicate_name, "ir.duplicate-name")

namespace verify_corpus::ir_slot_region {
constexpr program build(bool fixed) {
  auto k = kernel("slot_region").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA);
  k.role("producer", warps(1), [&](role& r) {
    auto s = r.acquire(ab);  // EXPECT: ir.slot-region
    r.tma_load(s[fixed ? sA : sB], g.A.tile(0, 0));  // the builder points at the slot's acquire
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_slot_region
CAKE_VERIFY_CASE(ir_slot_region, "ir.slot-region")

namespace verify_corpus::ir_slot_pipeline {
constexpr program build(bool fixed) {
  auto k = kernel("slot_pipeline").target(sm_90a);
  auto sX = k.smem<bf16>("sX", {8, 64});
  auto sY = k.smem<bf16>("sY", {8, 64});
  auto p = k.pipeline("p", stages(2)).carries(sX);
  auto q = k.pipeline("q", stages(2)).carries(sY);
  k.role("producer", warps(1), [&](role& r) {
    auto s = r.acquire(p);
    r.commit(p, s);
  });
  k.role("consumer", warps(1), [&](role& r) {
    auto s = r.wait(p);
    r.release(fixed ? p : q, s);  // EXPECT: ir.slot-pipeline
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_slot_pipeline
CAKE_VERIFY_CASE(ir_slot_pipeline, "ir.slot-pipeline")

namespace verify_corpus::ir_modifier {
constexpr program build(bool fixed) {
  auto k = kernel("modifier").target(sm_90a).cluster(2);
  auto b = k.mbarrier("b");
  k.role("a", warps(1), [&](role& r) {
    if (fixed) r.arrive(b).remote();
    else r.wait(b).remote();  // EXPECT: ir.modifier
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_modifier
CAKE_VERIFY_CASE(ir_modifier, "ir.modifier")

namespace verify_corpus::ir_overwrite_first {
constexpr program build(bool fixed) {
  return sm90_with([&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
    k.role("consumer", warpgroups(2), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
      r.for_each(g.mn, [&](auto m, auto n) {
        r.loop(tiles(g.K, g.bk), [&](auto kt) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(fixed ? kt : r.warpgroup());  // EXPECT: ir.overwrite-first
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(ab, s);
        });
        r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
      });
    });
  });
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_overwrite_first
CAKE_VERIFY_CASE(ir_overwrite_first, "ir.overwrite-first")

// ir.no-space: r.for_each(...) walks the parallel space, which the kernel never declared.
namespace verify_corpus::ir_no_space {
constexpr program build(bool fixed) {
  auto k = kernel("no_space").target(sm_90a);
  auto M = k.dim("M");
  k.input<f32>("X", dims(M));  // sizes the dim at launch (ir.dim-unsized)
  space<1> sp{};
  if (fixed) sp = k.parallel(tiles(M, 128));
  k.role("a", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto) { r.fence_proxy_async(); });  // EXPECT: ir.no-space
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_no_space
CAKE_VERIFY_CASE(ir_no_space, "ir.no-space")

// ir.dim-unsized: the parallel space walks N, but no tensor has N (the output was declared over M only),
// so the launch cannot size it. Fix: declare the output over (M, N).
namespace verify_corpus::ir_dim_unsized {
constexpr program build(bool fixed) {
  auto k = kernel("dim_unsized").target(sm_90a);
  auto [M, N] = k.dims("M", "N");
  if (fixed) k.output<f32>("Y", dims(M, N));
  else k.output<f32>("Y", dims(M));
  k.parallel(tiles(M, 128), tiles(N, 128));  // EXPECT: ir.dim-unsized
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_dim_unsized
CAKE_VERIFY_CASE(ir_dim_unsized, "ir.dim-unsized")

namespace verify_corpus::ir_trip_count {
constexpr program build(bool fixed) {
  auto k = kernel("trip_count").target(sm_90a);
  k.role("a", warps(1), [&](role& r) {
    r.for_range(fixed ? 4 : 0, [&](auto) { r.fence_proxy_async(); });  // EXPECT: ir.trip-count
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_trip_count
CAKE_VERIFY_CASE(ir_trip_count, "ir.trip-count")

namespace verify_corpus::ir_wait_count {
constexpr program build(bool fixed) {
  auto k = kernel("wait_count").target(sm_90a);
  k.role("a", warpgroups(1), [&](role& r) {
    r.wgmma_wait(fixed ? 0 : 9);  // EXPECT: ir.wait-count
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_wait_count
CAKE_VERIFY_CASE(ir_wait_count, "ir.wait-count")

namespace verify_corpus::ir_tile_rank {
constexpr program build(bool fixed) {
  auto k = kernel("tile_rank").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, 16384);
    r.tma_load(sA, fixed ? g.A.tile(0, 0) : g.A.tile(0), full);  // EXPECT: ir.tile-rank
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_tile_rank
CAKE_VERIFY_CASE(ir_tile_rank, "ir.tile-rank")

namespace verify_corpus::ir_index_expr {
constexpr program build(bool fixed) {
  auto k = kernel("index_expr").target(sm_80);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128, copies(2));
  k.role("copy", warps(1), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto kt) {
      auto stage = fixed ? kt % 2 : (kt + 1) / 2 + kt;  // a divided sum plus a term: not representable
      r.cp_async(sA.stage(stage), g.A.tile(0, kt));  // EXPECT: ir.index-expr
      r.cp_async_commit();
      r.cp_async_wait(0);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_index_expr
CAKE_VERIFY_CASE(ir_index_expr, "ir.index-expr")

namespace verify_corpus::ir_part_count {
constexpr program build(bool fixed) {
  return sm90_with([&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
    k.role("consumer", warpgroups(2), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
      r.for_each(g.mn, [&](auto m, auto n) {
        r.loop(tiles(g.K, g.bk), [&](auto kt) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          r.wgmma(acc, s[sA].rows(r.warpgroup(), fixed ? 2 : 3), s[sB]).overwrite_on_first(kt);  // EXPECT: ir.part-count
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(ab, s);
        });
        r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
      });
    });
  });
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_part_count
CAKE_VERIFY_CASE(ir_part_count, "ir.part-count")

namespace verify_corpus::ir_reg_shape {
constexpr program build(bool fixed) {
  auto k = kernel("reg_shape").target(sm_90a);
  k.role("a", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, fixed ? 64 : 0});  // EXPECT: ir.reg-shape
    r.zero(acc);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_reg_shape
CAKE_VERIFY_CASE(ir_reg_shape, "ir.reg-shape")

namespace verify_corpus::ir_nested_role {
constexpr program build(bool fixed) {
  auto k = kernel("nested").target(sm_90a);
  k.role("outer", warps(1), [&](role& r) {
    r.fence_proxy_async();
    if (!fixed) k.role("inner", warps(1), [&](role& q) { q.fence_proxy_async(); });  // EXPECT: ir.nested-role
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_nested_role
CAKE_VERIFY_CASE(ir_nested_role, "ir.nested-role")

namespace verify_corpus::ir_role_size {
constexpr program build(bool fixed) {
  auto k = kernel("role_size").target(sm_90a);
  k.role("a", warps(fixed ? 1 : 0), [&](role& r) { r.fence_proxy_async(); });  // EXPECT: ir.role-size
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_role_size
CAKE_VERIFY_CASE(ir_role_size, "ir.role-size")

namespace verify_corpus::ir_dim_mode_conflict {
constexpr program build(bool fixed) {
  auto k = kernel("dim_mode").target(sm_90a);
  k.input<bf16>("A", dims(spec("M"), "K"));
  k.input<bf16>("B", dims(fixed ? spec("M") : dim_spec("M"), "K"));  // EXPECT: ir.dim-mode-conflict
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_dim_mode_conflict
CAKE_VERIFY_CASE(ir_dim_mode_conflict, "ir.dim-mode-conflict")

namespace verify_corpus::ir_tensor_rank {
constexpr program build(bool fixed) {
  auto k = kernel("tensor_rank").target(sm_90a);
  k.input<bf16>("A", fixed ? dims("M", "K") : dims());  // EXPECT: ir.tensor-rank
  one_role(k);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_tensor_rank
CAKE_VERIFY_CASE(ir_tensor_rank, "ir.tensor-rank")

namespace verify_corpus::ir_no_roles {
constexpr program build(bool fixed) {
  auto k = kernel("no_roles").target(sm_90a);
  if (fixed) one_role(k);
  return k.build();  // EXPECT: ir.no-roles
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_no_roles
CAKE_VERIFY_CASE(ir_no_roles, "ir.no-roles")

// ir.malformed: a Program whose op points at a role that does not exist (not something the builder
// makes; a tool editing Programs could). No other check runs on it.
namespace verify_corpus::ir_malformed {
constexpr program good() {
  auto k = kernel("malformed").target(sm_90a);
  k.role("a", warps(1), [&](role& r) {
    r.fence_proxy_async();  // EXPECT: ir.malformed
  });
  return k.build();
}
constexpr program bad() {
  auto p = good();
  p.ops[0].role = 5;
  return p;
}
}  // namespace verify_corpus::ir_malformed
CAKE_VERIFY_CASE(ir_malformed, "ir.malformed")

// ir.expr-size: one r.set of a polynomial of 8 terms is 31 nodes; an expression holds 24. Fix: two r.set.
namespace verify_corpus::ir_expr_size {
constexpr program build(bool fixed) {
  auto k = kernel("expr_size").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    auto y = r.fragment<f32>("y", {32, 64});
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0));
      if (fixed) {
        r.set(y, x * 1.0f + x * 2.0f + x * 3.0f + x * 4.0f);
        r.set(y, y + x * 5.0f + x * 6.0f + x * 7.0f + x * 8.0f);
      } else {
        r.set(y, x * 1.0f + x * 2.0f + x * 3.0f + x * 4.0f + x * 5.0f + x * 6.0f + x * 7.0f + x * 8.0f);  // EXPECT: ir.expr-size
      }
      r.store(Y.tile(i, 0), y);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_expr_size
CAKE_VERIFY_CASE(ir_expr_size, "ir.expr-size")

// ir.fma-share: exp2 with 5 of every 4 elements on the FMA pipe (a share past the whole); the twin computes
// 1 of every 4 there.
namespace verify_corpus::ir_fma_share {
constexpr program build(bool fixed) {
  auto k = kernel("fma_share").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto rows = k.parallel(tiles(R, 64));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0));
      if (fixed) r.set(x, exp2(x, fma_share{1, 4}));
      else r.set(x, exp2(x, fma_share{5, 4}));  // EXPECT: ir.fma-share
      r.store(Y.tile(i, 0), x);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_fma_share
CAKE_VERIFY_CASE(ir_fma_share, "ir.fma-share")

// ir.reduce-expr: the row sum of squares of a 64 x 128 tile into a 64-row vector, written over the
// tile's 1 x 128 column-vector weight only (w * w): an expression with no tile of the destination's
// rows has no per-row values to reduce. Fix: the squares of the tile itself (x * x).
namespace verify_corpus::ir_reduce_expr {
constexpr program build(bool fixed) {
  auto k = kernel("reduce_expr").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<bf16>("X", dims(R, C));
  auto W = k.input<bf16>("W", dims(C));
  auto S = k.output<f32>("S", dims(R));
  auto rows = k.parallel(tiles(R, 64));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 128});
    auto w = r.col_vector<bf16>("w", 128);
    auto s = r.row_vector<f32>("s", 64);
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0));
      r.load(w, W.tile(0));
      if (fixed) r.row_sum(s, x * x * w);
      else r.row_sum(s, w * w);  // EXPECT: ir.reduce-expr
      r.store(S.tile(i), s);
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_reduce_expr
CAKE_VERIFY_CASE(ir_reduce_expr, "ir.reduce-expr")

// ir.next-point: r.next_point in an alternating walk (two units take the CTA's points in turn, so a unit's
// next point is not the walk's next one); the twin walks every point in each unit.
namespace verify_corpus::ir_next_point {
constexpr program build(bool fixed) {
  auto k = kernel("next_point").target(sm_90a).persistent();
  auto [M, N] = k.dims("M", "N");
  k.input<f32>("X", dims(M, N));  // sizes the dims at launch (ir.dim-unsized)
  auto mn = k.parallel(tiles(M, 128), tiles(N, 128));
  k.role("a", warps(2), [&](role& r) {
    auto body = [&](auto, auto) { r.next_point(mn, [&](auto, auto) { r.fence_proxy_async(); }); };  // EXPECT: ir.next-point
    if (fixed) r.for_each(mn, body);
    else r.for_each(alternating(mn), body);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_next_point
CAKE_VERIFY_CASE(ir_next_point, "ir.next-point")

// ir.split-tail: a split tail (the last round's points split over a range) on a walk that is not persistent: a
// grid launches one CTA per point, so there is no round to split (the twin declares the walk persistent).
namespace verify_corpus::ir_split_tail {
constexpr program build(bool fixed) {
  auto k = kernel("split_tail").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  if (fixed) k.persistent();
  k.split_tail((C.extent() + 63) / 64, 4);  // EXPECT: ir.split-tail
  auto sp = k.parallel(tiles(R, 32));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    r.for_each(sp, [&](auto i) {
      r.loop(r.part_begin(), loop_extent(r.part_end()), 1, [&](auto j) {
        r.load(x, X.tile(i, j));
        r.store(Y.tile(i, j), x);
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_split_tail
CAKE_VERIFY_CASE(ir_split_tail, "ir.split-tail")
