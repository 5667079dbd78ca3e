// Representation: producers and consumers of a tile agree on dtype, shape, major-ness and swizzle.
#pragma once
#include "corpus.hpp"

// representation.swizzle-span: 128 bf16 columns are 256 B per row; a 128B swizzle spans 128.
namespace verify_corpus::representation_swizzle_span {
constexpr program build(bool fixed) {
  auto k = kernel("swizzle_span").target(sm_90a);
  k.smem<bf16>("sX", {64, fixed ? 64 : 128}, swizzle::b128);  // EXPECT: representation.swizzle-span
  k.role("a", warps(1), [&](role& r) { r.fence_proxy_async(); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_swizzle_span
CAKE_VERIFY_CASE(representation_swizzle_span, "representation.swizzle-span")

// representation.inner-bytes: rows of 4 bf16 are 8 B; TMA and ldmatrix move 16-byte multiples.
namespace verify_corpus::representation_inner_bytes {
constexpr program build(bool fixed) {
  auto k = kernel("inner_bytes").target(sm_90a);
  k.smem<bf16>("sX", {64, fixed ? 8 : 4});  // EXPECT: representation.inner-bytes
  k.role("a", warps(1), [&](role& r) { r.fence_proxy_async(); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_inner_bytes
CAKE_VERIFY_CASE(representation_inner_bytes, "representation.inner-bytes")

// representation.swizzle-atom: 32-column bf16 tiles (64 B rows) in a 128B swizzle: the wgmma descriptor's
// layout needs rows of exactly 128 B. Fix: the 64B swizzle.
namespace verify_corpus::representation_swizzle_atom {
constexpr program build(bool fixed) {
  return sm90_with(
      [&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
        k.role("consumer", warpgroups(2), [&](role& r) {
          auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
          r.for_each(g.mn, [&](auto m, auto n) {
            r.loop(tiles(g.K, g.bk), [&](auto kt) {
              auto s = r.wait(ab);
              r.wgmma_fence();
              r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);  // EXPECT: representation.swizzle-atom
              r.wgmma_commit();
              r.wgmma_wait(0);
              r.release(ab, s);
            });
            r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
          });
        });
      },
      32, fixed ? swizzle::b64 : swizzle::b128);
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_swizzle_atom
CAKE_VERIFY_CASE(representation_swizzle_atom, "representation.swizzle-atom")

// representation.major-mismatch: B is B[K, N], so sB holds (K, N); the MMA contracts K, its rows, which
// makes sB MN-major, but sB declares major::k. Fix: declare what the dims say (major::mn), or nothing.
namespace verify_corpus::representation_major_mismatch {
constexpr program build(bool fixed) {
  auto k = kernel("major_mismatch").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(K, N));
  auto D = k.output<bf16>("D", dims(M, N));
  auto mn = k.parallel(tiles(M, 128), tiles(N, 64));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128, fixed ? major::mn : major::k);  // K rows, N columns
  auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(kt, n));
      });
    });
  });
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);  // EXPECT: representation.major-mismatch
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
}  // namespace verify_corpus::representation_major_mismatch
CAKE_VERIFY_CASE(representation_major_mismatch, "representation.major-mismatch")

// representation.mma-operand-shape: each warpgroup's accumulator has 64 rows but A is the whole 128-row
// tile. Fix: A's rows for the warpgroup.
namespace verify_corpus::representation_mma_operand_shape {
constexpr program build(bool fixed) {
  return sm90_with([&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
    k.role("consumer", warpgroups(2), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
      r.for_each(g.mn, [&](auto m, auto n) {
        r.loop(tiles(g.K, g.bk), [&](auto kt) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          auto a = fixed ? s[sA].rows(r.warpgroup(), 2) : s[sA];
          r.wgmma(acc, a, s[sB]).overwrite_on_first(kt);  // EXPECT: representation.mma-operand-shape
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
}  // namespace verify_corpus::representation_mma_operand_shape
CAKE_VERIFY_CASE(representation_mma_operand_shape, "representation.mma-operand-shape")

// representation.tma-box: a 320-row box; TMA boxes are at most 256 in each dimension.
namespace verify_corpus::representation_tma_box {
constexpr program build(bool fixed) {
  auto k = kernel("tma_box").target(sm_90a);
  auto g = gemm_tensors(k);
  const int rows = fixed ? 256 : 320;
  auto sX = k.smem<bf16>("sX", {rows, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, rows * 128);
    r.tma_load(sX, g.A.tile(0, 0), full);  // EXPECT: representation.tma-box
  });
  k.role("consumer", warps(1), [&](role& r) { r.wait(full); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_tma_box
CAKE_VERIFY_CASE(representation_tma_box, "representation.tma-box")

// representation.tma-dtype and representation.copy-dtype: a copy between an smem tile and a tensor of
// another dtype. The builder refuses both at compile time; the bad twins edit the tensor's dtype.
namespace verify_corpus::representation_tma_dtype {
constexpr program good() {
  auto k = kernel("tma_dtype").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sX = k.smem<bf16>("sX", {128, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, 16384);
    r.tma_load(sX, g.A.tile(0, 0), full);  // EXPECT: representation.tma-dtype
  });
  k.role("consumer", warps(1), [&](role& r) { r.wait(full); });
  return k.build();
}
constexpr program bad() {
  auto p = good();
  p.tensors[0].dt = dtype::f16;
  return p;
}
}  // namespace verify_corpus::representation_tma_dtype
CAKE_VERIFY_CASE(representation_tma_dtype, "representation.tma-dtype")

namespace verify_corpus::representation_copy_dtype {
constexpr program good() {
  auto k = kernel("copy_dtype").target(sm_80);
  auto g = gemm_tensors(k);
  auto sX = k.smem<bf16>("sX", {128, 64}, swizzle::b128);
  k.role("copy", warps(1), [&](role& r) {
    r.cp_async(sX, g.A.tile(0, 0));  // EXPECT: representation.copy-dtype
    r.cp_async_commit();
    r.cp_async_wait(0);
  });
  return k.build();
}
constexpr program bad() {
  auto p = good();
  p.tensors[0].dt = dtype::f16;
  return p;
}
}  // namespace verify_corpus::representation_copy_dtype
CAKE_VERIFY_CASE(representation_copy_dtype, "representation.copy-dtype")

// representation.accumulator-dtype: a bf16 MMA into an f16 accumulator (bf16 accumulates in f32 only).
// The builder refuses it at compile time; the bad twin edits the accumulator's dtype. wgmma is lowered
// with f32 accumulators only, so the bad twin is also not lowered.
// ALSO: instruction.not-lowered
namespace verify_corpus::representation_accumulator_dtype {
constexpr program good() {
  return sm90_with([&](kernel_builder& k, const gemm_parts& g, auto sA, auto sB, auto ab) {
    k.role("consumer", warpgroups(2), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
      r.for_each(g.mn, [&](auto m, auto n) {
        r.loop(tiles(g.K, g.bk), [&](auto kt) {
          auto s = r.wait(ab);
          r.wgmma_fence();
          r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);  // EXPECT: representation.accumulator-dtype
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
  p.regs[0].dt = dtype::f16;
  return p;
}
}  // namespace verify_corpus::representation_accumulator_dtype
CAKE_VERIFY_CASE(representation_accumulator_dtype, "representation.accumulator-dtype")

// representation.copy-shape: stmatrix of the whole 64x128 bf16 tile into a 64x64 buffer part.
// Fix: store one 64-column chunk at a time.
namespace verify_corpus::representation_copy_shape {
constexpr program build(bool fixed) {
  auto k = kernel("copy_shape").target(sm_90a);
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto sD = k.smem<bf16>("sD", {g.bm, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  auto epi = k.named_barrier("epi", per_unit);
  tma_producer(k, g, sA, sB, ab);
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      auto out = r.convert<bf16>(acc);
      r.for_range(2, [&](auto ch) {
        auto buf = sD.rows(r.warpgroup(), 2);
        r.bulk_wait_read(0);
        r.sync(epi);
        if (fixed) r.stmatrix(buf, out.cols(ch, 2));
        else r.stmatrix(buf, out);  // EXPECT: representation.copy-shape
        r.fence_proxy_async();
        r.sync(epi);
        r.tma_store(g.D.tile(m * 2 + r.warpgroup(), n * 2 + ch), buf);
        r.bulk_commit();
      });
    });
    r.bulk_wait_read(0);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::representation_copy_shape
CAKE_VERIFY_CASE(representation_copy_shape, "representation.copy-shape")
