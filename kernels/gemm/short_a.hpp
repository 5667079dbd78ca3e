#pragma once
// A's tile at small M, shared by the GEMM schedules (gemm_sm90, gemm_splitk_sm90). Both load A in boxes of
// the tile's rows (64 or 128), and at M <= 32 all but M of them lie past the tensor: TMA writes those
// zero-filled rows as it writes loaded ones, and at M <= 16 a 64-row box cost ~10% of the time of reading
// B (bench/h200/gemv_load_probe.cu, +A64 against +A8; docs/gemm.md, "Short A loads at small M").
#include <cake/cake.hpp>

namespace cake::kernels {

// The rows of A a stage loads for this M (the configs' a_rows): the fewest of 8, 16, 32 that hold M, or 0
// (the whole tile) past 32. cake::gemm derives it; it is not a tuning choice. Every consumer's row block
// is at least 64 rows, so any of these fits in one.
constexpr int short_a_rows(long long M) {
  for (int r : {8, 16, 32})
    if (M <= r) return r;
  return 0;
}

// Stage region `dst` (bm rows) from A's tile (m, kt): the whole tile, or with a_rows > 0 only the first
// a_rows rows of each of its `blocks` row blocks (one per consumer warpgroup that reads rows of its own).
// The MMAs read the rows no box fills; the output rows they make lie past M and are never stored
// (rest_unused). M <= a_rows, so m is 0 and the first block's rows hold every row of A; the other blocks'
// boxes lie past the tensor (zeros), so that each consumer reads rows some load fills.
template <class Dst, class A, class Mi, class Ki>
constexpr void load_a(role& r, Dst dst, A a, Mi m, Ki kt, int bm, int a_rows, int blocks) {
  if (a_rows == 0) {
    r.tma_load(dst, a.tile(m, kt));
    return;
  }
  const int parts = bm / a_rows, per_block = parts / blocks;
  for (int b = 0; b < blocks; ++b) r.tma_load(dst.rows(b * per_block, parts), a.tile(m * parts + b * per_block, kt)).rest_unused();
}

}  // namespace cake::kernels
