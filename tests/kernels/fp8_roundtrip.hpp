#pragma once
// A test kernel for 8-bit float register tiles (the lowering and GPU tiers share it): per 16 x 64 tile of X [N, 64]
// (f32), the values converted to e4m3 (or e5m2) in registers, stored to shared memory and loaded back as bytes, then
// converted out three ways:
//   Y32 = f32(q), Y16 = f16(q) (one conversion per pair), Ybf = bf16(q)   with q = fp8(X) (round to nearest even,
//   saturated to the largest finite value; NaN stays NaN).
// Every e4m3 and e5m2 value is exact in f32, f16 and bf16, so all three outputs equal the host's quantization of X
// exactly. On sm_80 the conversions are the device helpers' integer arithmetic, on sm_90a (and sm_100a) cvt with
// .e4m3x2 / .e5m2x2: the same bits either way.
#include <cake/cake.hpp>

namespace cake_test {

template <class F8>
constexpr cake::program fp8_roundtrip(cake::target_id t) {
  using namespace cake;
  kernel_builder k = kernel(std::is_same_v<F8, e4m3> ? "fp8_roundtrip_e4m3" : "fp8_roundtrip_e5m2");
  k.target(t);
  auto [N, D] = k.dims("N", spec("D"));
  auto X = k.input<f32>("X", dims(N, D));
  auto Y32 = k.output<f32>("Y32", dims(N, D));
  auto Y16 = k.output<f16>("Y16", dims(N, D));
  auto Ybf = k.output<bf16>("Ybf", dims(N, D));
  auto s8 = k.smem<F8>("s8", {16, 64});
  auto b = k.named_barrier("b");
  auto rows = k.parallel(tiles(N, 16));
  auto body = [&](role& r) {
    auto x = r.fragment<f32>("x", {16, 64});
    auto q = r.fragment<F8>("q", {16, 64});
    auto y16 = r.fragment<f16>("y16", {16, 64});
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i, 0)).fill_outside(0.0f);
      r.convert(q, x);
      r.sync(b);  // (the tile before is read back by every thread)
      r.store(s8, q);
      r.sync(b);
      r.load(q, s8);
      r.convert(x, q);
      r.store(Y32.tile(i, 0), x);
      r.convert(y16, q);
      r.store(Y16.tile(i, 0), y16);
      r.store(Ybf.tile(i, 0), r.convert<bf16>(q));
    });
  };
  if (t == sm_80) k.role("rows", warps(1), body);
  else k.role("rows", warpgroups(1), body);
  return k.build();
}

}  // namespace cake_test
