// The register cap the plan derives for a launch (plan::entry_register_cap: the analyzer's budgets, the entry cap
// setmaxnreg re-balances, the lowering's batch sizes) against what ptxas gives __launch_bounds__(threads, n): a
// kernel that wants about 210 registers is assembled by NVRTC at block sizes and blocks per SM where the cap is
// lower, and ptxas must stop exactly at the plan's cap (registers go to warps four at a time: 13 warps count as
// 16, two blocks of 5 warps as 12).
#include <doctest/doctest.h>

#include <string>

#include <cake/jit.hpp>
#include <cake/plan/warps.hpp>
#include <cake/target/sm100a.hpp>
#include <cake/target/sm80.hpp>
#include <cake/target/sm90a.hpp>

namespace {

std::string hungry_kernel(int threads, int ctas) {
  return "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(threads) + ", " + std::to_string(ctas) +
         ") hungry(const float* __restrict__ in, float* out, int n) {\n"
         "  float r[200];\n"
         "#pragma unroll\n"
         "  for (int i = 0; i < 200; ++i) r[i] = in[threadIdx.x + i * 1024];\n"
         "  for (int it = 0; it < n; ++it) {\n"
         "#pragma unroll\n"
         "    for (int i = 0; i < 200; ++i) r[i] = r[i] * r[(i + 7) % 200] + r[(i + 13) % 200];\n"
         "  }\n"
         "  float s = 0;\n"
         "#pragma unroll\n"
         "  for (int i = 0; i < 200; ++i) s += r[i] * (i + 1);\n"
         "  out[threadIdx.x] = s;\n"
         "}\n";
}

void check_cap(const cake::target_info& t, int threads, int ctas) {
  const int cap = cake::plan::entry_register_cap(t.limits, threads, ctas);
  CAPTURE(t.name);
  CAPTURE(threads);
  CAPTURE(ctas);
  REQUIRE(cap < 200);  // (below what the kernel wants, so that ptxas stops at its cap)
  const auto art = cake::jit::build(hungry_kernel(threads, ctas), "hungry", std::string(t.name));
  REQUIRE_MESSAGE(art.ok, art.diagnostics());
  CHECK(art.resources.registers == cap);
}

}  // namespace

TEST_CASE("register cap: the plan's entry cap is ptxas's for __launch_bounds__(threads, ctas_per_sm)") {
  for (auto [threads, ctas] : {std::pair{384, 1}, {416, 1}, {288, 1}, {480, 1}, {160, 2}, {160, 3}, {320, 2}, {96, 4}})
    check_cap(cake::targets::sm90a, threads, ctas);
  check_cap(cake::targets::sm80, 416, 1);
  check_cap(cake::targets::sm100a, 160, 2);
}
