// ir.index-value (error): read_index reads an integer offset; a tensor of f32 holds none (its bits would
// be read as an int). Fix: the offsets tensor is i32 (FlashAttention's cu_seqlens, vLLM's page tables).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::ir_index_value_dtype {
template <class T>
constexpr program build() {
  auto k = kernel("index_value_dtype").target(sm_80);
  auto [R, C, N] = k.dims("R", "C", "N");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto Off = k.input<T>("Off", dims(N));
  auto rows = k.parallel(tiles(R, 32));
  k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(rows, [&](auto q) {
      const index_expr first = r.read_index(Off.at(q));  // EXPECT: ir.index-value
      r.load(x, X.tile(q * 4 + r.warp(), 0));
      r.when(first < 64, [&] { r.store(Y.tile(q * 4 + r.warp(), 0), x); });
    });
  });
  return k.build();
}
constexpr program bad() { return build<f32>(); }
constexpr program good() { return build<i32>(); }
}  // namespace verify_corpus::ir_index_value_dtype
CAKE_VERIFY_CASE(ir_index_value_dtype, "ir.index-value")
