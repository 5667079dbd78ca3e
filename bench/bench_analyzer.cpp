// Time of cake::analyze (all passes, including two runs of the protocol executor) on the reference
// GEMM schedules. The sm_90a GEMM is the yardstick: well under 10 ms per analysis.
//   ./cake_bench_analyzer [--benchmark_filter=sm90]
#include <benchmark/benchmark.h>

#include <cake/cake.hpp>

#include "../kernels/gemm/sm100_bf16.hpp"
#include "../kernels/gemm/sm80_bf16.hpp"
#include "../kernels/gemm/sm90_bf16.hpp"

namespace {

void analyze_program(benchmark::State& state, const cake::program& p) {
  long steps = 0;
  int errors = 0;
  for (auto _ : state) {
    cake::analysis::report r;
    cake::analysis::analyze_into(p, r);
    benchmark::DoNotOptimize(r.errors);
    steps = r.protocol_steps;
    errors = r.errors;
  }
  state.counters["ops"] = static_cast<double>(p.ops.size());
  state.counters["protocol_steps"] = static_cast<double>(steps);
  state.counters["errors"] = errors;
}

void BM_analyze_gemm_sm90(benchmark::State& state) { analyze_program(state, cake::kernels::gemm_bf16_sm90()); }
void BM_analyze_gemm_sm80(benchmark::State& state) { analyze_program(state, cake::kernels::gemm_bf16_sm80()); }
void BM_analyze_gemm_sm100(benchmark::State& state) { analyze_program(state, cake::kernels::gemm_bf16_sm100()); }

// The protocol executor alone dominates; a longer K run shows how it scales with trips.
void BM_analyze_gemm_sm90_k_trips(benchmark::State& state) {
  const auto p = cake::kernels::gemm_bf16_sm90();
  cake::analysis::analysis_options opt;
  opt.k_trips = static_cast<int>(state.range(0));
  long steps = 0;
  for (auto _ : state) {
    cake::analysis::report r;
    cake::analysis::analyze_into(p, r, opt);
    benchmark::DoNotOptimize(r.errors);
    steps = r.protocol_steps;
  }
  state.counters["protocol_steps"] = static_cast<double>(steps);
}

}  // namespace

BENCHMARK(BM_analyze_gemm_sm90)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_analyze_gemm_sm80)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_analyze_gemm_sm100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_analyze_gemm_sm90_k_trips)->Arg(6)->Arg(24)->Arg(96)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
