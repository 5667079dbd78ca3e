// instruction.not-lowered: tcgen05.ld into a bf16 tile. The load writes one 32-bit register per TMEM column,
// and a 16-bit tile packs two columns into each of its registers, so the generated code wrote past the
// tile's registers (NVRTC accepted it: a silent overflow, found while reducing a builder-fuzzer case).
// Fix: load into an f32 tile and convert it.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::instruction_not_lowered_tmem_load {
constexpr program build(bool fixed) {
  auto k = kernel("tmem_load_bf16").target(sm_100a);
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<f32>("X", dims(M, N));
  auto Y = k.output<bf16>("Y", dims(M, N));
  auto tl = k.parallel(tiles(M, 128));
  auto t = k.tmem("t", columns(32));
  auto allocated = k.named_barrier("allocated");
  auto drained = k.named_barrier("drained");
  k.role("epi", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {128, 32});
    auto h = r.fragment<bf16>("h", {128, 32});
    r.sync(allocated);
    r.tcgen05_fence_after();
    r.for_each(tl, [&](index_expr m) {
      r.load(x, X.tile(m, 0));
      r.tmem_store(t, x);
      if (fixed) {
        r.tmem_load(x, t);
        r.store(Y.tile(m, 0), r.convert<bf16>(x));
      } else {
        r.tmem_load(h, t);  // EXPECT: instruction.not-lowered
        r.store(Y.tile(m, 0), h);
      }
    });
    r.tcgen05_fence_before();
    r.sync(drained);
  });
  k.role("alloc", warps(1), [&](role& r) {
    r.tmem_alloc(t);
    r.tcgen05_fence_before();
    r.sync(allocated);
    r.sync(drained);
    r.tcgen05_fence_after();
    r.tmem_dealloc(t);
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_lowered_tmem_load
CAKE_VERIFY_CASE(instruction_not_lowered_tmem_load, "instruction.not-lowered")
