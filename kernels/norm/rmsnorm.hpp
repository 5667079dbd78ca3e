#pragma once
// RMSNorm: Y[r, :] = bf16(bf16(X[r, :] * rsqrt(mean(X[r, :]^2) + eps)) * W[:]), bf16 X [R, C], bf16
// weight W [C], f32 eps (a scalar parameter), bf16 Y [R, C]; f32 math.
//
// The normalized row is rounded to bf16 before it is multiplied by the weight: the rounding of Hugging
// Face's LlamaRMSNorm (`weight * hidden.to(input_dtype)`) and of vLLM's rms_norm kernel, and the cheaper
// form in registers (below). Against the exact x * rstd * w the result is within two bf16 roundings.
//
// One pass over memory with the row schedule of config.hpp: each unit loads whole rows into a register
// tile (columns past C are filled with 0, so they add nothing to the sum of squares), squares them into
// a working tile, takes the row sum, turns it into rstd = rsqrt(sum / C + eps) per row, scales the rows
// by rstd in place, loads the weight as a column vector (one value per column the thread holds; it
// stays in L2, read once per CTA) and stores x * w. The kernel is bound by HBM bandwidth, like
// softmax.hpp.
//
// Registers: the bf16 -> f32 unpacking of x is shared by the squares and the scaling (the compiler
// keeps the unpacked values), so x costs E f32 registers from the squares to the scaling; scaling in
// place before the weight is loaded keeps the weight out of that span. Measured with NVRTC 13.0
// (sm_90a, 1024-wide rows per warp, E = 32): 55 registers this way, 72 with x * rstd * w in one
// expression; E = 64: 118 against 150.
//
// The entry point cake::rmsnorm (kernels/norm/norm.hpp) picks the schedule with rmsnorm_config_for.
#include "config.hpp"

namespace cake::kernels {

using rmsnorm_config = norm_config;

// The schedule for rows of `cols` elements: the units of norm_units_for (config.hpp; softmax.hpp says
// why). Squares in f32 where x, the squares and the weight fit the register budget (2 E + 1
// registers); at 16384 (E = 128) they are bf16 (their sum stays f32).
constexpr rmsnorm_config rmsnorm_config_for(long long cols) {
  rmsnorm_config c = norm_units_for(cols);
  if (c.width != 0) c.f32_work = norm_tile_registers(c, true) <= norm_register_budget(c);
  return c;
}

namespace norm_detail {
template <class T>
constexpr program rmsnorm_program(const rmsnorm_config& c) {
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
    auto sq = r.fragment<T>("sq", {c.rows, c.width});  // the squares (working tile: f32_work)
    auto w = r.col_vector<bf16>("w", c.width);
    auto rstd = r.row_vector<f32>("rstd", c.rows);
    const index_expr unit = c.warp_units ? r.warp() : r.warpgroup();
    r.for_each(rows, [&](auto i) {
      const index_expr g = i * c.units + unit;  // this unit's block of rows
      r.load(x, X.tile(g, 0));                  // columns past C read as 0
      r.set(sq, x * x);
      r.row_sum(rstd, sq);
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
constexpr program rmsnorm_program(const rmsnorm_config& c) {
  return c.f32_work ? norm_detail::rmsnorm_program<f32>(c) : norm_detail::rmsnorm_program<bf16>(c);
}
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
