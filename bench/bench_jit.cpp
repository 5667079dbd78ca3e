// NVRTC cold compile time and cache-hit time for the sm_90a GEMM (issue target: cold < 0.5 s, hit < 1 ms).
//   cake_bench_jit [google benchmark flags]
#include <benchmark/benchmark.h>

#include <filesystem>

#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

namespace {

const cake::lower::lowered_kernel& gemm() {
  static const auto k = cake::lower::lower(cake::kernels::gemm_bf16_sm90());
  return k;
}

// Lowering itself (Program -> CUDA source), for scale.
void lower_sm90_gemm(benchmark::State& state) {
  constexpr auto p = cake::kernels::gemm_bf16_sm90();
  for (auto _ : state) benchmark::DoNotOptimize(cake::lower::lower(p));
}

// A compile that finds nothing cached: NVRTC front end, PTX and ptxas to a CUBIN.
void nvrtc_cold_compile_sm90_gemm(benchmark::State& state) {
  const auto& k = gemm();
  for (auto _ : state) {
    auto r = cake::jit::compile(k.source, k.entry, cake::jit::arch::sm_90a);
    if (!r.ok) state.SkipWithError("compile failed");
    benchmark::DoNotOptimize(r);
  }
}

cake::jit::cache_config bench_cache_config() {
  cake::jit::cache_config c;
  c.dir = std::filesystem::temp_directory_path() / "cake-bench-jit-cache";
  c.enabled = true;
  return c;
}

// The process has built this kernel before: the in-memory cache answers.
void cache_hit_memory(benchmark::State& state) {
  const auto& k = gemm();
  cake::jit::cache c(bench_cache_config());
  c.build(k.source, k.entry, cake::jit::arch::sm_90a);
  for (auto _ : state) benchmark::DoNotOptimize(c.build(k.source, k.entry, cake::jit::arch::sm_90a));
}

// A new process finds the kernel on disk: read, verify checksums, no compile.
void cache_hit_disk(benchmark::State& state) {
  const auto& k = gemm();
  cake::jit::cache c(bench_cache_config());
  c.build(k.source, k.entry, cake::jit::arch::sm_90a);
  for (auto _ : state) {
    c.clear_memory();
    benchmark::DoNotOptimize(c.build(k.source, k.entry, cake::jit::arch::sm_90a));
  }
}

BENCHMARK(lower_sm90_gemm)->Unit(benchmark::kMillisecond);
BENCHMARK(nvrtc_cold_compile_sm90_gemm)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(cache_hit_memory)->Unit(benchmark::kMicrosecond);
BENCHMARK(cache_hit_disk)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
