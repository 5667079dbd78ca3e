// Registers: the register file, per-role budgets, setmaxnreg values and warpgroups.
#pragma once
#include "corpus.hpp"

namespace verify_corpus {
// The clean sm_90a schedule with the producer and consumer register budgets and unit shapes as given.
constexpr program regs_kernel(units_t producer_units, int producer_regs, int consumer_regs, src_loc at = src_loc::current()) {
  auto k = kernel("registers").target(sm_90a).persistent();
  auto g = gemm_tensors(k, 128, 256, 64);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  k.role("producer", producer_units, regs(producer_regs), [&](role& r) {
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], g.A.tile(m, kt));
        r.tma_load(s[sB], g.B.tile(n, kt));
      });
    });
  }, at);
  k.role("consumer", warpgroups(2), regs(consumer_regs), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);  // EXPECT: resource.register-tiles
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  }, at);
  return k.build();
}
}  // namespace verify_corpus

// resource.register-file: 128 x 40 + 256 x 256 = 70656 registers > the pool of 384 x 168 = 64512 (and > 65536).
// Fix: regs(232) for the consumer.
namespace verify_corpus::resource_register_file {
constexpr program bad() { return regs_kernel(warpgroups(1), 40, 256); }  // EXPECT: resource.register-file
constexpr program good() { return regs_kernel(warpgroups(1), 40, 232); }
}  // namespace verify_corpus::resource_register_file
CAKE_VERIFY_CASE(resource_register_file, "resource.register-file")

// resource.register-tiles (warning): the consumer keeps a 64x256 f32 accumulator (128 registers per
// thread) live through its loops, with a budget of regs(128) less 24 = 104 (its bf16 copy is converted
// where it is stored and costs nothing). It peaks at the first op of the mainloop. Fix: regs(232).
namespace verify_corpus::resource_register_tiles {
constexpr program bad() { return regs_kernel(warpgroups(1), 40, 128); }
constexpr program good() { return regs_kernel(warpgroups(1), 40, 232); }
}  // namespace verify_corpus::resource_register_tiles
CAKE_VERIFY_CASE(resource_register_tiles, "resource.register-tiles")

// resource.setmaxnreg-value: regs(36) is not a multiple of 8. Fix: regs(40).
namespace verify_corpus::resource_setmaxnreg_value {
constexpr program bad() { return regs_kernel(warpgroups(1), 36, 232); }  // EXPECT: resource.setmaxnreg-value
constexpr program good() { return regs_kernel(warpgroups(1), 40, 232); }
}  // namespace verify_corpus::resource_setmaxnreg_value
CAKE_VERIFY_CASE(resource_setmaxnreg_value, "resource.setmaxnreg-value")

// resource.setmaxnreg-warpgroup: a producer of one warp with regs(40): setmaxnreg sets a whole
// warpgroup's registers. Fix: a warpgroup producer. (Its 9 warps also count as 12 for the entry cap, 168: the
// consumers' regs(232) exceed the pool.)
// ALSO: resource.warpgroup-alignment resource.register-file
namespace verify_corpus::resource_setmaxnreg_warpgroup {
constexpr program bad() { return regs_kernel(warps(1), 40, 232); }  // EXPECT: resource.setmaxnreg-warpgroup
constexpr program good() { return regs_kernel(warpgroups(1), 40, 232); }
}  // namespace verify_corpus::resource_setmaxnreg_warpgroup
CAKE_VERIFY_CASE(resource_setmaxnreg_warpgroup, "resource.setmaxnreg-warpgroup")

// resource.warpgroup-alignment: a one-warp role declared first puts the wgmma consumer at warp 1.
// Fix: declare the consumer first.
namespace verify_corpus::resource_warpgroup_alignment {
constexpr program build(bool fixed) {
  auto k = kernel("wg_alignment").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  auto producer = [&] {
    k.role("producer", warps(1), [&](role& r) {
      r.for_each(g.mn, [&](auto m, auto n) {
        r.loop(tiles(g.K, g.bk), [&](auto kt) {
          auto s = r.acquire(ab);
          r.tma_load(s[sA], g.A.tile(m, kt));
          r.tma_load(s[sB], g.B.tile(n, kt));
        });
      });
    });
  };
  if (!fixed) producer();
  k.role("consumer", warpgroups(2), [&](role& r) {  // EXPECT: resource.warpgroup-alignment
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
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  if (fixed) producer();
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::resource_warpgroup_alignment
CAKE_VERIFY_CASE(resource_warpgroup_alignment, "resource.warpgroup-alignment")
