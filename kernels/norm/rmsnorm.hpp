#pragma once
// RMSNorm: Y[r, :] = bf16(bf16(X[r, :] * rsqrt(mean(X[r, :]^2) + eps)) * W[:]), bf16 X [R, C], bf16
// weight W [C], f32 eps (a scalar parameter), bf16 Y [R, C]; f32 math.
//
// The normalized row is rounded to bf16 before it is multiplied by the weight: the rounding of Hugging
// Face's LlamaRMSNorm (`weight * hidden.to(input_dtype)`) and of vLLM's rms_norm kernel, and the cheaper
// form in registers (below). Against the exact x * rstd * w the result is within two bf16 roundings.
//
// One pass over memory with the row schedule of config.hpp: each unit loads whole rows into a register
// tile (columns past C are filled with 0, so they add nothing to the sum of squares), takes the row sum
// of x * x (the squares are computed inside the reduction: no tile holds them), turns it into
// rstd = rsqrt(sum / C + eps) per row, scales the rows by rstd in place, loads the weight as a column
// vector (one value per column the thread holds; it stays in L2, read once per CTA) and stores x * w.
// The kernel is bound by HBM bandwidth, like softmax.hpp.
//
// Registers: the bf16 -> f32 unpacking of x is shared by the squares and the scaling (the compiler
// keeps the unpacked values), so x costs E f32 registers from the sum to the scaling; scaling in place
// before the weight is loaded keeps the weight out of that span. Summing the squares inside the
// reduction saves no registers over a squares tile (ptxas 13.0 at E = 128: 233 against 227; at E = 64:
// 121 against 125), it saves the tile's declaration. Loading x a second time (from L2) after the sum
// made it worse (255 at E = 128: ptxas issues the second loads early). At 16384 columns the kernel runs
// at 2 CTAs per SM and about 80% of the copy bandwidth (docs/norm.md).
//
// The entry point cake::rmsnorm (kernels/norm/norm.hpp) picks the schedule with rmsnorm_config_for.
#include "config.hpp"

namespace cake::kernels {

using rmsnorm_config = norm_config;

// The schedule for rows of `cols` elements: the units of norm_units_for (config.hpp; softmax.hpp says
// why). f32_work says nothing here (no working tile); it stays true, so the name says "f32".
constexpr rmsnorm_config rmsnorm_config_for(long long cols) { return norm_units_for(cols); }

namespace norm_detail {
constexpr program rmsnorm_program(rmsnorm_config c) {
  c.f32_work = true;  // no working tile: one name for the schedule
  auto k = kernel(kernel_name("rmsnorm", c).view()).target(c.target);
  if (c.persistent) k.persistent();
  auto [R, C] = k.dims("R", spec("C"));
  auto X = k.input<bf16>("X", dims(R, C));
  auto Wt = k.input<bf16>("W", dims(C));
  auto Y = k.output<bf16>("Y", dims(R, C));
  auto eps = k.param<f32>("eps");
  auto rows = k.parallel(tiles(R, c.rows_per_cta()));
  auto body = [&](role& r) {
    // x: the rows as loaded and as stored (bf16 pairs: 16-byte vector loads and stores).
    auto x = r.fragment<bf16>("x", {c.rows, c.width});
    auto w = r.col_vector<bf16>("w", c.width);
    auto rstd = r.row_vector<f32>("rstd", c.rows);
    const index_expr unit = c.warp_units ? r.warp() : r.warpgroup();
    r.for_each(rows, [&](auto i) {
      const index_expr g = i * c.units + unit;  // this unit's block of rows
      r.load(x, X.tile(g, 0));                  // columns past C read as 0
      r.row_sum(rstd, x * x);
      r.set(rstd, rsqrt(rstd / C.extent() + eps));
      r.set(x, x * rstd);  // normalized, rounded to bf16
      r.load(w, Wt.tile(0));
      r.set(x, x * w);
      r.store(Y.tile(g, 0), x);
    });
  };
  if (c.warp_units) k.role("rows", warps(c.units), body);
  else k.role("rows", warpgroups(c.units), body);
  return k.build();
}
}  // namespace norm_detail

// The RMSNorm program for a schedule (any target the config names).
constexpr program rmsnorm_program(const rmsnorm_config& c) { return norm_detail::rmsnorm_program(c); }
// Hopper (sm_90a) and Ampere (sm_80) variants of the same schedule.
constexpr program rmsnorm_sm90(rmsnorm_config c = rmsnorm_config_for(1024)) {
  c.target = target_id::sm_90a;
  return rmsnorm_program(c);
}
constexpr program rmsnorm_sm80(rmsnorm_config c = rmsnorm_config_for(1024)) {
  c.target = target_id::sm_80;
  return rmsnorm_program(c);
}

}  // namespace cake::kernels
