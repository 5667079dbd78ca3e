// instruction.not-lowered: a row scan over a row held by a whole warpgroup (1 x 1,024 f32 spread over 128
// threads: the rows leave the warp, and row_scan is lowered with shuffles inside one warp). Fix: scan the
// row in a warp's tile (32 lanes, 32 values each), as the k-means offsets kernel does.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::instruction_not_lowered_scan {
constexpr program build(bool fixed) {
  auto k = kernel("prefix_rows").target(sm_90a);
  auto [B, K] = k.dims("B", "K");
  auto Counts = k.input<f32>("counts", dims(B, K));
  auto Offsets = k.output<i32>("offsets", dims(B, K));
  auto rows = k.parallel(tiles(B, 1), tiles(K, 1024));
  auto body = [&](role& r) {
    auto c = r.fragment<f32>("c", {1, 1024});
    auto s = r.fragment<f32>("s", {1, 1024});
    r.for_each(rows, [&](auto b, auto j) {
      r.load(c, Counts.tile(b, j));
      r.row_scan(s, c);  // EXPECT: instruction.not-lowered
      r.set(s, s - c);
      r.store(Offsets.tile(b, j), s);
    });
  };
  if (fixed) k.role("scan", warps(1), body);
  else k.role("scan", warpgroups(1), body);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::instruction_not_lowered_scan
CAKE_VERIFY_CASE(instruction_not_lowered_scan, "instruction.not-lowered")
