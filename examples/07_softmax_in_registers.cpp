// Step 7: a memory-bound kernel whose math happens in registers (docs/getting-started.md, "A second
// kernel"). Row softmax, bf16 in and out, f32 math: load rows into a register tile, reduce, exponentiate,
// reduce, scale, store. The program is checked at compile time, analyzed, lowered and assembled with NVRTC
// (no GPU needed); the step prints the derived layout and the registers ptxas gives each thread.
#include <cstdio>

#include <cake/analysis/output.hpp>
#include <cake/cake.hpp>
#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>

using namespace cake;

constexpr program softmax(int width, int rows_per_warp) {
  auto k = kernel("softmax").target(sm_90a);
  auto [R, C] = k.dims("R", spec("C"));               // C is baked in at JIT time: tile widths are static
  auto X = k.input<bf16>("X", dims(R, C));
  auto Y = k.output<bf16>("Y", dims(R, C));
  auto rows = k.parallel(tiles(R, 4 * rows_per_warp)); // one point per CTA: 4 warps, each its rows
  k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<bf16>("x", {rows_per_warp, width});
    auto e = r.fragment<f32>("e", {rows_per_warp, width});
    auto m = r.row_vector<f32>("m", rows_per_warp);
    auto s = r.row_vector<f32>("s", rows_per_warp);
    r.for_each(rows, [&](index_expr i) {
      const index_expr g = i * 4 + r.warp();           // this warp's block of rows
      r.load(x, X.tile(g, 0)).fill_outside(neg_inf);   // columns past C add exp(-inf) = 0
      r.row_max(m, x);
      r.set(m, m * -1.4426950408889634f);
      r.set(e, exp2(fma(x, 1.4426950408889634f, m)));  // exp(x - max), one fused loop
      r.row_sum(s, e);
      r.set(s, rcp(s));                                 // once per row, not per element
      r.set(x, e * s);
      r.store(Y.tile(g, 0), x);                         // rows past R, columns past C: not written
    });
  });
  return k.build();
}

constexpr program p = softmax(1024, 1);
static_assert(cake::verify(p));  // the analyzer, at compile time

int main() {
  const auto plan = plan::make_plan(p);
  const auto& x = plan.frags.regs[0];
  std::printf("x: %s layout, %d elements per thread in vectors of %d, %d lanes per row\n", std::string(plan::to_string(x.f.kind)).c_str(), x.count,
              x.f.vec, x.f.tpr);
  lower::emit_options opt;
  opt.specialized = {{p.find_dim("C"), 1000}};  // a ragged width: the tile is 1024 wide, C = 1000
  const auto l = lower::lower(p, opt);
  if (!l.ok) {
    std::printf("%s\n", l.error.c_str());
    return 1;
  }
  const auto a = jit::build(l.source, l.entry, "sm_90a");
  if (!a.ok) {
    std::printf("%s\n", a.diagnostics().c_str());
    return 1;
  }
  const bool v4 = a.ptx.find("ld.global.v4") != std::string::npos, shfl = a.ptx.find("shfl.sync.bfly") != std::string::npos;
  std::printf("assembled for sm_90a: %d registers per thread, %d spill stores; 16-byte loads: %s; row reductions by shuffles: %s\n",
              a.resources.registers, a.resources.spill_stores, v4 ? "yes" : "no", shfl ? "yes" : "no");
  return a.resources.spill_stores == 0 && v4 && shfl ? 0 : 1;
}
