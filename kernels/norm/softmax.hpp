#pragma once
// Row softmax: Y[r, :] = exp(X[r, :] - max_r) / sum_r exp(X[r, :] - max_r), bf16 in and out, f32 math.
//
// One pass over memory: each unit (warp or warpgroup, config.hpp) loads whole rows into a register tile
// (16-byte vector loads; columns past C are filled with -inf so they add exp(-inf) = 0), takes the row
// max, replaces every element by exp2((x - max) * log2 e), takes the row sum and scales by its
// reciprocal, and stores the rows (columns past C and rows past R are not written). Reads 2 bytes and
// writes 2 bytes per element: the kernel is bound by HBM bandwidth, so the schedule's job is to keep
// enough 16-byte loads in flight per SM with few registers per thread (occupancy), not to save math.
//
// The entry point cake::softmax (kernels/norm/norm.hpp) picks the schedule with softmax_config_for.
#include "config.hpp"

namespace cake::kernels {

using softmax_config = norm_config;

// The schedule for rows of `cols` elements (cols <= norm_max_width): the units of norm_units_for
// (config.hpp), with an f32 working tile.
// Why those units: 16-byte loads, 3 to 16 of them in flight per thread, and rows inside a warp whenever
// one warp can hold them (shuffle-only reductions). Registers grow with E, the elements per thread (about
// 1.3 E + 8, measured: 48 at E = 32, 96 at E = 64, 167 at E = 128), and decide how many CTAs an SM runs at
// once; E = 32 keeps about 10 CTAs of 4 warps per SM with 64 bytes of loads in flight per thread. A row
// that spreads over a warpgroup also waits at the unit's barrier twice per reduction; there the H200 wanted
// more bytes in flight per SM (E = 48..64: two rows per warpgroup up to 4096 columns). One CTA
// per point (not persistent): a point costs no set-up (no barriers to initialize, no descriptors), so
// the hardware's block scheduler filling every SM to its register limit is the better walk; a
// persistent grid has one CTA per SM and would need 512-1024-thread CTAs to reach the same occupancy.
// The exp values are kept in f32 (f32_work): a bf16 working tile saves no registers (the unpacked
// inputs are kept by the compiler either way) and rounds once more.
constexpr softmax_config softmax_config_for(long long cols) { return norm_units_for(cols); }

namespace norm_detail {
constexpr program softmax_program(const softmax_config& c) {
  auto k = kernel(kernel_name("softmax", c).view()).target(c.target);
  if (c.persistent) k.persistent();
  auto [R, C] = k.dims("R", spec("C"));
  auto X = k.input<bf16>("X", dims(R, C));
  auto Y = k.output<bf16>("Y", dims(R, C));
  auto rows = k.parallel(tiles(R, c.rows_per_cta()));
  constexpr float log2e = 1.4426950408889634f;
  auto body = [&](role& r) {
    // x: the rows as loaded and as stored (bf16 pairs: 16-byte vector loads and stores).
    auto x = r.fragment<bf16>("x", {c.rows, c.width});
    auto m = r.row_vector<f32>("m", c.rows);
    auto s = r.row_vector<f32>("s", c.rows);
    const index_expr unit = c.warp_units ? r.warp() : r.warpgroup();
    r.for_each(rows, [&](auto i) {
      const index_expr g = i * c.units + unit;  // this unit's block of rows
      r.load(x, X.tile(g, 0)).fill_outside(neg_inf);
      r.row_max(m, x);
      r.set(m, m * -log2e);  // exp(x - max) = exp2(x * log2e - max * log2e): one fma per element
      if (c.f32_work) {
        auto e = r.fragment<f32>("e", {c.rows, c.width});  // exp values, f32
        r.set(e, exp2(fma(x, log2e, m)));
        r.row_sum(s, e);
        r.set(s, rcp(s));  // once per row
        r.set(x, e * s);   // rounded to bf16 once
      } else {
        r.set(x, exp2(fma(x, log2e, m)));  // in place: exp values rounded to bf16
        r.row_sum(s, x);
        r.set(s, rcp(s));
        r.set(x, x * s);
      }
      r.store(Y.tile(g, 0), x);
    });
  };
  if (c.warp_units) k.role("rows", warps(c.units), body);
  else k.role("rows", warpgroups(c.units), body);
  return k.build();
}
}  // namespace norm_detail

// The softmax program for a schedule (any target the config names).
constexpr program softmax_program(const softmax_config& c) { return norm_detail::softmax_program(c); }
// Hopper (sm_90a) and Ampere (sm_80) variants of the same schedule.
constexpr program softmax_sm90(softmax_config c = softmax_config_for(1024)) {
  c.target = target_id::sm_90a;
  return softmax_program(c);
}
constexpr program softmax_sm80(softmax_config c = softmax_config_for(1024)) {
  c.target = target_id::sm_80;
  return softmax_program(c);
}

}  // namespace cake::kernels
