#pragma once
// A test kernel for k.split_tail (the lowering and GPU tiers share it): column-block sums of X [R, C] (f32),
//   Y[r, c] = sum_j X[r, j * 64 + c]   (Y [R, 64]),
// one point per 32 rows, walked persistently; where the walk's last round is partial its points are split
// over the 64-column blocks (extent ceil(C / 64)). A whole point stores its sum; a part stores its sum in
// Part [NU, 32, 64] at its tail unit, arrives on its point's counter (Count [NU], at the point's first unit;
// zero before the launch, and left at zero) and the last to arrive adds the others' sums and stores Y.
// NU: at least the CTAs launched (the tail has at most one unit per CTA).
#include <cake/cake.hpp>

namespace cake_test {

constexpr cake::program split_tail_sum(cake::target_id t, int max_parts = 8, bool serpentine = false, bool warpgroup = false) {
  using namespace cake;
  auto k = kernel(warpgroup ? "split_tail_sum_wg" : "split_tail_sum").target(t);
  auto [R, C, NU, RT] = k.dims("R", "C", "NU", "RT");
  const dim_ref W = k.dim("W");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, W));
  auto Part = k.output<f32>("part", dims(NU, RT, W));
  auto Count = k.output<i32>("count", dims(NU));
  const int rows = warpgroup ? 64 : 32;
  k.persistent(raster::along_m(1), serpentine ? walk_order::serpentine : walk_order::strided).split_tail((C.extent() + 63) / 64, max_parts);
  auto sp = k.parallel(tiles(R, rows));
  auto body = [&](role& r) {
    auto x = r.fragment<f32>("x", {rows, 64});
    auto acc = r.fragment<f32>("acc", {rows, 64});
    r.for_each(sp, [&](auto i) {
      r.fill(acc, 0.0f);
      r.loop(r.part_begin(), loop_extent(r.part_end()), 1, [&](auto j) {
        r.load(x, X.tile(i, j)).fill_outside(0.0f);
        r.set(acc, acc + x);
      });
      r.when(eq(r.walk_parts(), 1), [&] { r.store(Y.tile(i, 0), acc); });
      r.when(r.walk_parts() > 1, [&] {
        const index_expr first = r.tail_unit() - r.walk_part();  // the point's first part
        r.store(Part.tile(r.tail_unit(), 0, 0).rows_at(1), acc);
        auto before = r.count_arrival(Count.at(first), r.walk_parts());
        r.when(eq(before, r.walk_parts() - 1), [&] {
          r.loop(loop_extent(r.walk_parts()), [&](auto q) {
            r.when(ne(q, r.walk_part()), [&] { r.load_add(acc, Part.tile(first + q, 0, 0).rows_at(1)); });
          });
          r.store(Y.tile(i, 0), acc);
        });
      });
    });
  };
  if (warpgroup) k.role("rows", warpgroups(1), body);
  else k.role("rows", warps(1), body);
  return k.build();
}

}  // namespace cake_test
