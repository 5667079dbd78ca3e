#pragma once
// The row schedule shared by the row kernels of kernels/norm/ (softmax.hpp, rmsnorm.hpp): which rows a
// unit of threads holds in registers, how wide its register tile is, and how the units are grouped into
// CTAs. The chooser per row width lives next to each kernel (softmax_config_for, rmsnorm_config_for).
//
// A unit (one warp or one warpgroup) holds `rows` whole rows of `width` columns in one register tile.
// The layout of that tile is derived (plan/fragments.hpp, "blocked"): every row is cut into 16-byte
// vectors (8 bf16) spread over as few consecutive threads as let the unit's threads cover its rows in
// one pass. With warp units a row stays inside its warp (row reductions are shuffles only); a warpgroup
// unit holding one row spreads it over its 4 warps, and row reductions then also go through a derived
// shared-memory scratch between two syncs of the unit's derived named barrier.
//
//   elements per thread  E = rows * width / unit threads
//   registers            E / 2 for the loaded rows (bf16 pairs, loaded and stored as they are, in
//                        16-byte vectors), plus the working tile: E (f32) or E / 2 (bf16) or none
//
// The row dim C is specialized (baked in when the kernel is JIT-compiled); `width` is the register
// tile's width, the next supported width >= C. Columns C..width-1 are masked: loads fill them (with
// -inf for softmax, 0 for RMSNorm) and stores skip them. Rows past R are masked the same way.
#include <string_view>

#include <cake/cake.hpp>

namespace cake::kernels {

struct norm_config {
  int width = 1024;         // register tile columns: the widest row this kernel takes (C <= width)
  int rows = 1;             // rows per unit
  bool warp_units = true;   // a unit is one warp (true) or one warpgroup of 4 warps (false)
  int units = 4;            // units per CTA; a CTA takes rows * units consecutive rows per point
  bool f32_work = true;     // softmax's working tile (the exp values) is f32; false: softmax works in place
                            // in the loaded bf16 tile (the values rounded to bf16 once more). RMSNorm has
                            // no working tile (its squares are summed inside the reduction): ignored
  bool persistent = false;  // one CTA per SM walking the points (k.persistent()); default: one CTA per point
  target_id target = target_id::sm_90a;

  friend constexpr bool operator==(const norm_config&, const norm_config&) = default;
  constexpr int unit_threads() const { return warp_units ? 32 : 128; }
  constexpr int cta_threads() const { return units * unit_threads(); }
  constexpr int rows_per_cta() const { return rows * units; }
  constexpr int elements_per_thread() const { return rows * width / unit_threads(); }
};

// The registers per thread a CTA of this schedule may use: __launch_bounds__(threads, 1) caps them at
// 65536 / threads (at most 255), in multiples of 8. The analyzer's resource.register-tiles rule compares
// the register tiles of the role with the same number.
constexpr int norm_register_budget(const norm_config& c) {
  const int cap = 65536 / c.cta_threads();
  return (cap > 255 ? 255 : cap) / 8 * 8;
}
// What the row kernels' register tiles add up to per thread (the count that rule makes): the rows as
// loaded (bf16 pairs, E / 2); softmax's working tile (E in f32, E / 2 in bf16) and two row vectors;
// RMSNorm's weight (E / 2 at most: one value per column the thread holds) and one row vector (one
// register per row slot).
constexpr int norm_tile_registers(const norm_config& c, bool rmsnorm) {
  const int e = c.elements_per_thread();
  return e / 2 + (rmsnorm ? e / 2 + 1 : (c.f32_work ? e : e / 2) + 2);
}

// The widest row the row kernels hold in registers.
inline constexpr int norm_max_width = 16384;

// The register tile width for a row of `cols` elements: powers of two up to 2048, multiples of 1024
// above (so that 5000 runs in a 5120-wide tile rather than an 8192-wide one). 0 when cols is out of range.
constexpr int norm_width_for(long long cols) {
  if (cols < 1 || cols > norm_max_width) return 0;
  if (cols <= 2048) {
    int w = 128;
    while (w < cols) w *= 2;
    return w;
  }
  return static_cast<int>((cols + 1023) / 1024 * 1024);
}

// The units of the row kernels (softmax.hpp, rmsnorm.hpp) for rows of `cols` elements (the working
// tile f32, the default); the target is sm_90a (set .target = target_id::sm_80 for Ampere: the same schedule,
// register compute is generic CUDA). width 0 when cols is out of range.
//   width <= 1024: warp units holding 1024 / width rows (32 elements per thread), 4 warps per CTA
//   width 2048:    warp units, one row per warp (64 elements per thread), 4 warps per CTA
//   width >= 3072: warpgroup units, one warpgroup per CTA; a row spreads over the 4 warps, row reductions
//                  go through derived smem. Two rows per warpgroup up to 4096 (48 or 64 elements per
//                  thread), one above (width / 128: 40 .. 128)
// Why: softmax.hpp; the two rows at 3072-4096 from the H200 sweep (docs/norm.md: one row of 4096 per
// warpgroup ran at 80% of the copy, two at 97%).
constexpr norm_config norm_units_for(long long cols) {
  norm_config c;
  c.width = norm_width_for(cols);
  if (c.width == 0) return c;
  c.warp_units = c.width <= 2048;
  c.rows = c.width <= 1024 ? 1024 / c.width : c.warp_units || c.width > 4096 ? 1 : 2;
  c.units = c.warp_units ? 4 : 1;
  return c;
}

// Every width norm_width_for can return, narrowest first (tests lower each of them).
inline constexpr int norm_widths[] = {128,  256,  512,  1024, 2048,  3072,  4096,  5120,  6144,  7168,
                                      8192, 9216, 10240, 11264, 12288, 13312, 14336, 15360, 16384};

namespace norm_detail {
// A kernel name that says which schedule it is: "softmax_w1024_1x4w_f32" (31 characters at most).
constexpr name_builder kernel_name(std::string_view family, const norm_config& c) {
  name_builder b;
  b.put(family);
  b.put("_w");
  b.put(c.width);
  b.put("_");
  b.put(c.rows);
  b.put("x");
  b.put(c.units);
  b.put(c.warp_units ? "w" : "g");
  b.put(c.f32_work ? "_f32" : "_b16");
  if (c.persistent) b.put("_p");
  if (c.target == target_id::sm_80) b.put("_80");
  return b;
}
}  // namespace norm_detail

}  // namespace cake::kernels
