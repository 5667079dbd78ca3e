// Launch shape: threads, clusters, hardware barriers, TMA descriptors, TMEM.
#pragma once
#include "corpus.hpp"

// resource.threads-per-block: 9 warpgroups are 1152 threads; a block has at most 1024.
namespace verify_corpus::resource_threads_per_block {
constexpr program build(bool fixed) {
  auto k = kernel("threads").target(sm_90a);
  k.role("a", warpgroups(fixed ? 7 : 8), [&](role& r) { r.fence_proxy_async(); });
  k.role("b", warpgroups(1), [&](role& r) { r.fence_proxy_async(); });  // EXPECT: resource.threads-per-block
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_threads_per_block
CAKE_VERIFY_CASE(resource_threads_per_block, "resource.threads-per-block")

// resource.ctas-per-sm: two blocks of a GEMM with 5 stages of 24 KiB (120 KiB and the barriers, + 1 KiB each the
// driver reserves) need more than the 228 KiB of an sm_90a SM. The fixed twin keeps 4 stages.
namespace verify_corpus::resource_ctas_per_sm {
constexpr program build(bool fixed) {
  auto k = kernel("ctas_per_sm").target(sm_90a).ctas_per_sm(2);  // EXPECT: resource.ctas-per-sm
  // 128 x 64 tiles: two blocks of 384 threads hold 80 registers a thread, room for the 32 of a 64 x 64 f32
  // accumulator (a 64 x 128 one would spill: resource.register-tiles)
  auto g = gemm_tensors(k, 128, 64);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(fixed ? 4 : 5)).carries(sA, sB);
  tma_producer(k, g, sA, sB, ab);
  wgmma_consumer(k, g, sA, sB, ab);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_ctas_per_sm
CAKE_VERIFY_CASE(resource_ctas_per_sm, "resource.ctas-per-sm")

// resource.cluster-size: a cluster of 32 CTAs; sm_90a supports 16 (8 portable).
namespace verify_corpus::resource_cluster_size {
constexpr program build(bool fixed) {
  auto k = kernel("cluster_size").target(sm_90a).cluster(fixed ? 2 : 32);  // EXPECT: resource.cluster-size
  k.role("a", warps(1), [&](role& r) { r.fence_proxy_async(); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_cluster_size
CAKE_VERIFY_CASE(resource_cluster_size, "resource.cluster-size")

// resource.cluster-shape: cluster(1, 2) groups CTAs along the second axis.
namespace verify_corpus::resource_cluster_shape {
constexpr program build(bool fixed) {
  auto k = kernel("cluster_shape").target(sm_90a).cluster(fixed ? 2 : 1, fixed ? 1 : 2);  // EXPECT: resource.cluster-shape
  k.role("a", warps(1), [&](role& r) { r.fence_proxy_async(); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_cluster_shape
CAKE_VERIFY_CASE(resource_cluster_shape, "resource.cluster-shape")

// resource.cluster-nonportable (warning): 16 CTAs per cluster launch only with the non-portable attribute.
namespace verify_corpus::resource_cluster_nonportable {
constexpr program build(bool fixed) {
  auto k = kernel("cluster_16").target(sm_90a).cluster(fixed ? 8 : 16);  // EXPECT: resource.cluster-nonportable
  k.role("a", warps(1), [&](role& r) { r.fence_proxy_async(); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_cluster_nonportable
CAKE_VERIFY_CASE(resource_cluster_nonportable, "resource.cluster-nonportable")

// resource.named-barrier-count: a per-unit barrier in a role of 16 warps needs 16 hardware barriers,
// plus barrier 0: 17 > 16.
namespace verify_corpus::resource_named_barrier_count {
constexpr program build(bool fixed) {
  auto k = kernel("named_count").target(sm_90a);
  auto g = gemm_tensors(k);
  auto step = k.named_barrier("step", per_unit);  // EXPECT: resource.named-barrier-count
  k.role("math", warps(fixed ? 8 : 16), [&](role& r) {
    r.loop(tiles(g.K, g.bk), [&](auto) { r.sync(step); });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_named_barrier_count
CAKE_VERIFY_CASE(resource_named_barrier_count, "resource.named-barrier-count")

// resource.mbarrier-count: four arrays of 32 barriers are 128 objects; the barrier plan holds 96.
namespace verify_corpus::resource_mbarrier_count {
constexpr program build(bool fixed) {
  auto k = kernel("mbarrier_count").target(sm_90a);
  const int n = fixed ? 16 : 32;
  auto a = k.mbarrier("a", arrivals(1), n);  // EXPECT: resource.mbarrier-count
  auto b = k.mbarrier("b", arrivals(1), n);
  auto c = k.mbarrier("c", arrivals(1), n);
  auto d = k.mbarrier("d", arrivals(1), n);
  k.role("a", warps(1), [&](role& r) {
    for (auto bar : {a, b, c, d}) {
      r.arrive(bar[0]);
      r.wait(bar[0]);
    }
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_mbarrier_count
CAKE_VERIFY_CASE(resource_mbarrier_count, "resource.mbarrier-count")

// resource.tma-descriptor-count: nine different box shapes of A need nine descriptors; the plan holds 8.
namespace verify_corpus::resource_tma_descriptor_count {
constexpr program build(bool fixed) {
  auto k = kernel("tma_descriptors").target(sm_90a);
  auto g = gemm_tensors(k);
  auto full = k.mbarrier("full");
  smem_tile<bf16> regions[9]{};
  const char* names[9] = {"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"};
  int bytes = 0;
  const int count = fixed ? 8 : 9;
  for (int i = 0; i < count; ++i) {
    regions[i] = k.smem<bf16>(names[i], {8 * (i + 1), 64}, swizzle::b128);
    bytes += 8 * (i + 1) * 128;
  }
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, bytes);
    for (int i = 0; i < count; ++i) r.tma_load(regions[i], g.A.tile(i, 0), full);  // EXPECT: resource.tma-descriptor-count
  });
  k.role("consumer", warps(1), [&](role& r) { r.wait(full); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_tma_descriptor_count
CAKE_VERIFY_CASE(resource_tma_descriptor_count, "resource.tma-descriptor-count")

// resource.tmem-overflow: a 512-column accumulator in a 2-stage pipeline needs 1024 columns.
namespace verify_corpus::resource_tmem_overflow {
constexpr program build(bool fixed) {
  auto k = kernel("tmem_overflow").target(sm_100a);
  auto acc = k.tmem("acc", columns(fixed ? 256 : 512));  // EXPECT: resource.tmem-overflow
  k.pipeline("accp", stages(2)).carries(acc);
  k.role("mma", warps(1), [&](role& r) {
    r.tmem_alloc(acc);
    r.tmem_dealloc(acc);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_tmem_overflow
CAKE_VERIFY_CASE(resource_tmem_overflow, "resource.tmem-overflow")
