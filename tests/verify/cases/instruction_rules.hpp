// Instructions: target admission and MMA shapes per unit.
#pragma once
#include "corpus.hpp"

// instruction.not-admitted: fence.proxy.async does not exist on sm_80.
namespace verify_corpus::instruction_not_admitted {
constexpr program build(bool fixed) {
  auto k = kernel("not_admitted").target(fixed ? sm_90a : sm_80);
  k.role("a", warps(1), [&](role& r) {
    r.fence_proxy_async();  // EXPECT: instruction.not-admitted
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_admitted
CAKE_VERIFY_CASE(instruction_not_admitted, "instruction.not-admitted")

// instruction.mma-shape: an accumulator of 32 rows per warpgroup; wgmma is m64. Fix: 64 rows.
// The bad twin's two warpgroups of 32 rows also store only half of each 128-row tile
// (memory.tile-coverage reports the gap).
// ALSO: memory.tile-coverage
namespace verify_corpus::instruction_mma_shape {
constexpr program build(bool fixed) {
  return sm90_with([&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
    const int parts = fixed ? 2 : 4;
    k.role("consumer", warpgroups(2), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {g.bm / parts, g.bn});
      r.for_each(g.mn, [&](auto m, auto n) {
        r.loop(tiles(g.K, g.bk), [&](auto kt) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          r.wgmma(acc, s[sA].rows(r.warpgroup(), parts), s[sB]).overwrite_on_first(kt);  // EXPECT: instruction.mma-shape
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(ab, s);
        });
        r.store(g.D.tile(m * parts + r.warpgroup(), n), r.convert<bf16>(acc));
      });
    });
  });
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_mma_shape
CAKE_VERIFY_CASE(instruction_mma_shape, "instruction.mma-shape")

// instruction.mma-k: a K tile of 24 bf16 elements; the instruction K is 16. Fix: K = 32 (in a 64B
// swizzle, one span per row). Every swizzle span holds a multiple of the instruction K, so the bad twin's
// unswizzled 48-byte rows are also not lowered (wgmma descriptors are lowered for swizzled rows only).
// ALSO: instruction.not-lowered
namespace verify_corpus::instruction_mma_k {
constexpr program build(bool fixed) {
  return sm90_with(
      [&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
        k.role("consumer", warpgroups(2), [&](role& r) {
          auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
          r.for_each(g.mn, [&](auto m, auto n) {
            r.loop(tiles(g.K, g.bk), [&](auto kt) {
              auto s = r.wait(ab);
              r.wgmma_fence();
              r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);  // EXPECT: instruction.mma-k
              r.wgmma_commit();
              r.wgmma_wait(0);
              r.release(ab, s);
            });
            r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
          });
        });
      },
      fixed ? 32 : 24, fixed ? swizzle::b64 : swizzle::none);
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_mma_k
CAKE_VERIFY_CASE(instruction_mma_k, "instruction.mma-k")

// instruction.wgmma-major: B is a tf32 tensor B[K, N], so its tile holds (K, N): the contracted K is its
// rows and the operand is MN-major (derived, nothing declares it); wgmma transposes only 16-bit operands.
// Fix: a K-major B (B[N, K]).
namespace verify_corpus::instruction_wgmma_major {
constexpr program build(bool fixed) {
  auto k = kernel("wgmma_major").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<tf32>("A", dims(M, K));
  auto B = fixed ? k.input<tf32>("B", dims(N, K)) : k.input<tf32>("B", dims(K, N));
  auto D = k.output<bf16>("D", dims(M, N));
  auto mn = k.parallel(tiles(M, 128), tiles(N, 32));
  auto sA = k.smem<tf32>("sA", {128, 32}, swizzle::b128);
  auto sB = k.smem<tf32>("sB", {32, 32}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 32), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], fixed ? B.tile(n, kt) : B.tile(kt, n));
      });
    });
  });
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 32});
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 32), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);  // EXPECT: instruction.wgmma-major
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_wgmma_major
CAKE_VERIFY_CASE(instruction_wgmma_major, "instruction.wgmma-major")

// instruction.wgmma-unit: wgmma from a role of 4 warps; wgmma is issued by warpgroups (and each warp would
// then hold a whole warpgroup's accumulator). The bad twin's 4 warps also all store the same 64 rows of
// each 128-row tile (memory.tile-coverage). Fix: the reference consumer, two warpgroups on halves of the
// tile (a single warpgroup on rows(0, 2), the earlier fixed twin, computed and stored only rows 0..63).
// ALSO: resource.register-tiles memory.tile-coverage
namespace verify_corpus::instruction_wgmma_unit {
constexpr program build(bool fixed) {
  return sm90_with([&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
    if (fixed) return wgmma_consumer(k, g, sA, sB, ab);
    k.role("consumer", warps(4), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {64, g.bn});
      r.for_each(g.mn, [&](auto m, auto n) {
        r.loop(tiles(g.K, g.bk), [&](auto kt) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          r.wgmma(acc, s[sA].rows(0, 2), s[sB]).overwrite_on_first(kt);  // EXPECT: instruction.wgmma-unit
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(ab, s);
        });
        r.store(g.D.tile(m * 2, n), r.convert<bf16>(acc));
      });
    });
  });
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_wgmma_unit
CAKE_VERIFY_CASE(instruction_wgmma_unit, "instruction.wgmma-unit")

// instruction.mma-sync-unit: mma_sync from a warpgroup role; mma.sync is issued per warp.
namespace verify_corpus::instruction_mma_sync_unit {
constexpr program build(bool fixed) {
  auto k = kernel("mma_sync_unit").target(sm_80);
  auto g = gemm_tensors(k, 64, 64, 32);
  auto sA = k.smem<bf16>("sA", {64, 32}, swizzle::b64);
  auto sB = k.smem<bf16>("sB", {64, 32}, swizzle::b64);
  auto cta = k.named_barrier("cta");
  k.role("mma", fixed ? warps(1) : warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    r.for_each(g.mn, [&](auto m, auto n) {
      r.zero(acc);
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        r.cp_async(sA, g.A.tile(m, kt));
        r.cp_async(sB, g.B.tile(n, kt));
        r.cp_async_commit();
        r.cp_async_wait(0);
        r.sync(cta);
        r.mma_sync(acc, sA, sB);  // EXPECT: instruction.mma-sync-unit
        r.sync(cta);
      });
      r.store(g.D.tile(m, n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_mma_sync_unit
CAKE_VERIFY_CASE(instruction_mma_sync_unit, "instruction.mma-sync-unit")

// instruction.tcgen05-single-issuer: tcgen05.mma from a role of 2 warps: each would issue the MMA.
namespace verify_corpus::instruction_tcgen05_single_issuer {
constexpr program build(bool fixed) {
  auto k = kernel("single_issuer").target(sm_100a).persistent();
  auto s = sm100_declare(k);
  sm100_epilogue(k, s);
  sm100_producer(k, s);
  k.role("mma", warps(fixed ? 1 : 2), [&](role& r) {
    r.tmem_alloc(s.acc);
    r.for_each(s.g.mn, [&](auto, auto) {
      auto a = r.acquire(s.accp);
      r.tcgen05_fence_after();
      r.loop(tiles(s.g.K, s.g.bk), [&](auto kt) {
        auto slot = r.wait(s.ab);
        r.tcgen05_fence_after();
        r.tcgen05_mma(a[s.acc], slot[s.sA], slot[s.sB]).overwrite_on_first(kt);  // EXPECT: instruction.tcgen05-single-issuer
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
}  // namespace verify_corpus::instruction_tcgen05_single_issuer
CAKE_VERIFY_CASE(instruction_tcgen05_single_issuer, "instruction.tcgen05-single-issuer")

// instruction.multicast-without-cluster: a multicast TMA load in a kernel without a cluster.
namespace verify_corpus::instruction_multicast_without_cluster {
constexpr program build(bool fixed) {
  auto k = kernel("multicast").target(sm_90a);
  if (fixed) k.cluster(2);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], g.A.tile(m, kt));
        r.tma_load(s[sB], g.B.tile(n, kt)).multicast();  // EXPECT: instruction.multicast-without-cluster
      });
    });
  });
  wgmma_consumer(k, g, sA, sB, ab);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_multicast_without_cluster
CAKE_VERIFY_CASE(instruction_multicast_without_cluster, "instruction.multicast-without-cluster")

// instruction.tmem-off-sm100a: tensor memory declared for sm_90a.
namespace verify_corpus::instruction_tmem_off_sm100a {
constexpr program build(bool fixed) {
  auto k = kernel("tmem_off").target(sm_90a);
  if (!fixed) k.tmem("acc", columns(128));  // EXPECT: instruction.tmem-off-sm100a
  k.role("a", warps(1), [&](role& r) { r.fence_proxy_async(); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_tmem_off_sm100a
CAKE_VERIFY_CASE(instruction_tmem_off_sm100a, "instruction.tmem-off-sm100a")

// instruction.mma-dtype-mismatch: A bf16 with B f16. The builder refuses it at compile time, so the
// bad twin edits B (tensor and tile) in the built Program.
namespace verify_corpus::instruction_mma_dtype_mismatch {
constexpr program good() {
  return sm90_with([&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
    k.role("consumer", warpgroups(2), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
      r.for_each(g.mn, [&](auto m, auto n) {
        r.loop(tiles(g.K, g.bk), [&](auto kt) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);  // EXPECT: instruction.mma-dtype-mismatch
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(ab, s);
        });
        r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
      });
    });
  });
}
constexpr program bad() {
  auto p = good();
  p.tensors[1].dt = dtype::f16;  // B
  p.smem[1].dt = dtype::f16;     // sB
  return p;
}
}  // namespace verify_corpus::instruction_mma_dtype_mismatch
CAKE_VERIFY_CASE(instruction_mma_dtype_mismatch, "instruction.mma-dtype-mismatch")

// instruction.not-lowered: an atomic_add of a bf16 tile into a bf16 tensor on sm_80, which has no
// red.add.bf16x2 (lower/support.hpp). Fix: the same schedule for sm_90a.
namespace verify_corpus::instruction_not_lowered {
constexpr program build(bool fixed) {
  auto k = kernel("not_lowered").target(fixed ? sm_90a : sm_80);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<bf16>("X", dims(R, C));
  auto S = k.output<bf16>("S", dims(R, C));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {32, 64});
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0));
      r.atomic_add(S.tile(i, 0), x);  // EXPECT: instruction.not-lowered
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_lowered
CAKE_VERIFY_CASE(instruction_not_lowered, "instruction.not-lowered")
