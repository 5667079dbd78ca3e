// Tensor memory: capacity, allocation and lifetime.
#pragma once
#include "corpus.hpp"

// memory.tmem-columns (builder): a TMEM region of 600 columns; tensor memory has 512.
// ALSO: resource.tmem-overflow
namespace verify_corpus::memory_tmem_columns {
constexpr program build(bool fixed) {
  auto k = kernel("tmem_columns").target(sm_100a);
  auto acc = k.tmem("acc", columns(fixed ? 256 : 600));  // EXPECT: memory.tmem-columns
  k.role("mma", warps(1), [&](role& r) {
    r.tmem_alloc(acc);
    r.tmem_dealloc(acc);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_tmem_columns
CAKE_VERIFY_CASE(memory_tmem_columns, "memory.tmem-columns")

// memory.tmem-alloc: the MMA warp uses the accumulator without tmem_alloc. The epilogue's reads and the
// dealloc are reported too. Fix: allocate first.
namespace verify_corpus::memory_tmem_alloc {
constexpr program build(bool fixed) {
  auto k = kernel("tmem_alloc").target(sm_100a).persistent();
  auto s = sm100_declare(k);
  sm100_epilogue(k, s);
  sm100_producer(k, s);
  k.role("mma", warps(1), [&](role& r) {
    if (fixed) r.tmem_alloc(s.acc);
    r.for_each(s.g.mn, [&](auto, auto) {
      auto a = r.acquire(s.accp);
      r.tcgen05_fence_after();
      r.loop(tiles(s.g.K, s.g.bk), [&](auto kt) {
        auto slot = r.wait(s.ab);
        r.tcgen05_fence_after();
        r.tcgen05_mma(a[s.acc], slot[s.sA], slot[s.sB]).overwrite_on_first(kt);  // EXPECT: memory.tmem-alloc
        r.release(s.ab, slot);
      });
      r.commit(s.accp, a);
    });
    r.acquire(s.accp);
    r.tmem_dealloc(s.acc);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_tmem_alloc
CAKE_VERIFY_CASE(memory_tmem_alloc, "memory.tmem-alloc")

// memory.tmem-dealloc: tensor memory is allocated and never freed. Fix: tmem_dealloc once the epilogue
// has drained the last tile.
namespace verify_corpus::memory_tmem_dealloc {
constexpr program build(bool fixed) {
  auto k = kernel("tmem_dealloc").target(sm_100a).persistent();
  auto s = sm100_declare(k);
  sm100_epilogue(k, s);
  sm100_producer(k, s);
  k.role("mma", warps(1), [&](role& r) {
    r.tmem_alloc(s.acc);  // EXPECT: memory.tmem-dealloc
    r.for_each(s.g.mn, [&](auto, auto) {
      auto a = r.acquire(s.accp);
      r.tcgen05_fence_after();
      r.loop(tiles(s.g.K, s.g.bk), [&](auto kt) {
        auto slot = r.wait(s.ab);
        r.tcgen05_fence_after();
        r.tcgen05_mma(a[s.acc], slot[s.sA], slot[s.sB]).overwrite_on_first(kt);
        r.release(s.ab, slot);
      });
      r.commit(s.accp, a);
    });
    if (fixed) {
      r.acquire(s.accp);
      r.tmem_dealloc(s.acc);
    }
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_tmem_dealloc
CAKE_VERIFY_CASE(memory_tmem_dealloc, "memory.tmem-dealloc")

// memory.tmem-lane-access: a 4-warp epilogue declared after the producer and MMA warps sits at warps
// 2..5; the warp at 2 reaches lanes 64..95 but loads lanes 0..31. Per-warp 32-row loads are not lowered
// (tmem_load is lowered for a warpgroup's 128 rows). Fix: a warpgroup epilogue declared first.
// ALSO: instruction.not-lowered
namespace verify_corpus::memory_tmem_lane_access {
constexpr program build(bool fixed) {
  auto k = kernel("tmem_lanes").target(sm_100a).persistent();
  auto s = sm100_declare(k, 32);
  if (fixed) sm100_epilogue(k, s);
  auto epilogue = [&] {
    k.role("epilogue", warps(4), [&](role& r) {
      auto frag = r.fragment<f32>("frag", {32, 32});
      r.for_each(s.g.mn, [&](auto m, auto n) {
        auto a = r.wait(s.accp);
        r.tcgen05_fence_after();
        r.tmem_load(frag, a[s.acc].rows(r.warp(), 4));  // EXPECT: memory.tmem-lane-access
        r.store(s.g.D.tile(m * 4 + r.warp(), n), r.convert<bf16>(frag));
        r.tcgen05_fence_before();
        r.release(s.accp, a);
      });
    });
  };
  sm100_producer(k, s);
  sm100_mma(k, s);
  if (!fixed) epilogue();
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::memory_tmem_lane_access
CAKE_VERIFY_CASE(memory_tmem_lane_access, "memory.tmem-lane-access")
