// Cake's GEMMs against cuBLAS (bf16) and cuBLASLt (fp8 e4m3) on the same GPU, in the same process:
// L2 flushed before every run, CUDA events, median of --runs (>= 100) runs; each shape is also checked
// for correctness against the f32 reference before it is timed. Writes the results in the format of
// docs/benchmarks.md to --json.
//
//   cake_bench_gemm [--runs N] [--json FILE] [--driver VERSION] [--quick] [google benchmark flags]
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cublas_v2.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cake/gemm.hpp>
#include <cake/harness/gemm_check.hpp>
#include <cake/harness/timing.hpp>

namespace {

struct shape {
  long long m, n, k;
};
struct row {
  std::string dtype, peer, config;
  shape s;
  double cake_ms = 0, peer_ms = 0, max_rel_err = 0;
  bool ok = false;
};

int g_runs = 100;
std::vector<row> g_rows;

void cublas_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw cake::jit::error(std::string(what) + " failed with cuBLAS status " + std::to_string(s));
}

struct peers {
  cublasHandle_t blas{};
  cublasLtHandle_t lt{};
  cake::jit::device_buffer workspace{64u << 20};
  cake::jit::device_buffer scales{16};
  peers() {
    cublas_check(cublasCreate(&blas), "cublasCreate");
    cublas_check(cublasLtCreate(&lt), "cublasLtCreate");
  }
  // Row-major D = A * B^T is column-major D^T = B * A^T: "TN" with B as the first operand.
  void bf16(CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, const shape& s, CUstream st) {
    const float one = 1.f, zero = 0.f;
    cublas_check(cublasSetStream(blas, reinterpret_cast<cudaStream_t>(st)), "cublasSetStream");
    cublas_check(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(s.n), int(s.m), int(s.k), &one, reinterpret_cast<void*>(B), CUDA_R_16BF, int(s.k),
                              reinterpret_cast<void*>(A), CUDA_R_16BF, int(s.k), &zero, reinterpret_cast<void*>(D), CUDA_R_16BF, int(s.n),
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
  }
  // cuBLASLt fp8: e4m3 inputs, per-tensor scales (device pointers), bf16 output, f32 compute.
  struct fp8_plan {
    cublasLtMatmulDesc_t op{};
    cublasLtMatrixLayout_t a{}, b{}, d{};
    cublasLtMatmulHeuristicResult_t algo{};
  };
  fp8_plan plan_fp8(const shape& s, float scale) {
    fp8_plan p;
    cublas_check(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n);
    const float host_scales[2] = {scale, 1.f};
    scales.upload(std::span<const float>(host_scales, 2));
    void* sa = scales.address();
    void* sb = static_cast<char*>(scales.address()) + 4;
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa);
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb);
    cublas_check(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, s.k, s.n, s.k), "layout A");
    cublas_check(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, s.k, s.m, s.k), "layout B");
    cublas_check(cublasLtMatrixLayoutCreate(&p.d, CUDA_R_16BF, s.n, s.m, s.n), "layout D");
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    const std::size_t ws = workspace.size();
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    int found = 0;
    cublas_check(cublasLtMatmulAlgoGetHeuristic(lt, p.op, p.a, p.b, p.d, p.d, pref, 1, &p.algo, &found), "cublasLtMatmulAlgoGetHeuristic");
    cublasLtMatmulPreferenceDestroy(pref);
    if (!found) throw cake::jit::error("cuBLASLt has no fp8 algorithm for this shape");
    return p;
  }
  void fp8(const fp8_plan& p, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream st) {
    const float one = 1.f, zero = 0.f;
    cublas_check(cublasLtMatmul(lt, p.op, &one, reinterpret_cast<void*>(B), p.a, reinterpret_cast<void*>(A), p.b, &zero, reinterpret_cast<void*>(D), p.d,
                                reinterpret_cast<void*>(D), p.d, &p.algo.algo, workspace.address(), workspace.size(), reinterpret_cast<cudaStream_t>(st)),
                 "cublasLtMatmul");
  }
};

peers& the_peers() {
  static peers p;
  return p;
}
cake::harness::gemm_reference& the_reference() {
  static cake::harness::gemm_reference r;
  return r;
}

void bench_shape(benchmark::State& state, shape s, bool fp8) {
  auto& P = the_peers();
  auto rng = cake::harness::random_source::fresh();
  cake::harness::gemm_problem pr{s.m, s.n, s.k};
  pr.fp8 = fp8;
  pr.scale = fp8 ? 0.5f : 1.0f;
  cake::harness::gemm_operands o(pr);
  row r;
  r.dtype = fp8 ? "e4m3" : "bf16";
  r.peer = fp8 ? "cublasLt" : "cublas";
  r.s = s;
  r.config = cake::choose_gemm(s.m, s.n, s.k, cake::jit::driver::get().device(0).sm_count, fp8 ? cake::gemm_input::e4m3 : cake::gemm_input::bf16).why;
  auto run_cake = [&](CUstream st) {
    if (fp8) cake::gemm_fp8(o.a.address(), o.b.address(), o.d.address(), s.m, s.n, s.k, o.p.lda, o.p.ldb, o.p.ldd, pr.scale, st);
    else cake::gemm(o.a.address(), o.b.address(), o.d.address(), s.m, s.n, s.k, o.p.lda, o.p.ldb, o.p.ldd, st);
  };
  const auto check = cake::harness::check_gemm(o, rng, the_reference(), [&](cake::harness::gemm_operands&) { run_cake(nullptr); });
  r.max_rel_err = check.cmp.rel_err;
  r.ok = check.ok(fp8 ? 3e-2 : 1e-2);
  peers::fp8_plan plan;
  if (fp8) plan = P.plan_fp8(s, pr.scale);
  cake::harness::timing_options topt;
  topt.runs = g_runs;
  topt.warmup = 10;
  for (auto _ : state) {
    const auto tc = cake::harness::time_gpu(run_cake, topt);
    const auto tp = cake::harness::time_gpu(
        [&](CUstream st) {
          if (fp8) P.fp8(plan, o.a.get(), o.b.get(), o.d.get(), st);
          else P.bf16(o.a.get(), o.b.get(), o.d.get(), s, st);
        },
        topt);
    r.cake_ms = tc.median_ms;
    r.peer_ms = tp.median_ms;
    state.SetIterationTime(tc.median_ms / 1e3);
  }
  const double flop = 2.0 * s.m * s.n * s.k;
  state.counters["cake_TFLOPs"] = flop / r.cake_ms / 1e9;
  state.counters["peer_TFLOPs"] = flop / r.peer_ms / 1e9;
  state.counters["ratio"] = r.peer_ms / r.cake_ms;
  state.counters["rel_err"] = r.max_rel_err;
  if (!r.ok) state.SkipWithError("correctness check failed");
  g_rows.push_back(r);
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char b[16];
  std::strftime(b, sizeof b, "%Y-%m-%d", std::gmtime(&t));
  return b;
}

void write_json(const std::string& path, const std::string& command, const std::string& driver) {
  const auto& dev = cake::jit::driver::get().device(0);
  std::ostringstream j;
  j.setf(std::ios::fixed);
  j << "{\n  \"gpu\": \"" << dev.name << "\", \"sm\": \"sm_90a\", \"driver\": \"" << driver << "\", \"cuda\": \"" << dev.driver_version / 1000 << "."
    << dev.driver_version % 1000 / 10 << "\", \"date\": \"" << today() << "\",\n  \"command\": \"" << command << "\",\n"
    << "  \"method\": \"CUDA events, L2 flushed before each run, median of " << g_runs << "; Cake and the peer timed in the same process on the same buffers\",\n"
    << "  \"rows\": [\n";
  double log_bf16 = 0, log_fp8 = 0;
  int n_bf16 = 0, n_fp8 = 0;
  for (std::size_t i = 0; i < g_rows.size(); ++i) {
    const auto& r = g_rows[i];
    const double flop = 2.0 * r.s.m * r.s.n * r.s.k;
    j.precision(4);
    j << "    {\"kernel\": \"gemm\", \"dtype\": \"" << r.dtype << "\", \"shape\": {\"M\": " << r.s.m << ", \"N\": " << r.s.n << ", \"K\": " << r.s.k
      << "}, \"cake_ms\": " << r.cake_ms << ", \"peer\": \"" << r.peer << "\", \"peer_ms\": " << r.peer_ms;
    if (r.ok) j << ", \"ratio\": " << r.peer_ms / r.cake_ms;
    j.precision(1);
    j << ", \"cake_tflops\": " << flop / r.cake_ms / 1e9 << ", \"peer_tflops\": " << flop / r.peer_ms / 1e9;
    j.precision(5);
    j << ", \"max_rel_err\": " << r.max_rel_err << ", \"ok\": " << (r.ok ? "true" : "false") << ", \"config\": \"" << r.config << "\"}"
      << (i + 1 < g_rows.size() ? "," : "") << "\n";
    if (r.ok) (r.dtype == "bf16" ? log_bf16 : log_fp8) += std::log(r.peer_ms / r.cake_ms), ++(r.dtype == "bf16" ? n_bf16 : n_fp8);
  }
  j.precision(4);
  j << "  ],\n  \"summary\": {\"bf16_geomean_ratio\": " << (n_bf16 ? std::exp(log_bf16 / n_bf16) : 0.0)
    << ", \"fp8_geomean_ratio\": " << (n_fp8 ? std::exp(log_fp8 / n_fp8) : 0.0) << "}\n}\n";
  std::ofstream(path) << j.str();
  std::printf("%s", j.str().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string json = "gemm.json", driver = "unknown", command = "cake_bench_gemm";
  bool quick = false;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    command += std::string(" ") + argv[i];
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) g_runs = std::atoi(argv[++i]), command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i], command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--driver") && i + 1 < argc) driver = argv[++i], command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else rest.push_back(argv[i]);
  }
  try {
    if (!cake::jit::driver::available()) {
      std::printf("cake_bench_gemm: no GPU: %s\n", cake::jit::driver::unavailable_reason().c_str());
      return 0;
    }
    const std::vector<shape> bf16 = quick ? std::vector<shape>{{4096, 4096, 4096}}
                                          : std::vector<shape>{{8192, 8192, 8192}, {4096, 4096, 4096}, {4096, 7168, 2048},
                                                               {4096, 2112, 7168}, {2048, 24576, 1536}, {16384, 16384, 1024}};
    const std::vector<shape> fp8 = quick ? std::vector<shape>{{4096, 4096, 4096}}
                                         : std::vector<shape>{{8192, 8192, 8192}, {4096, 7168, 2048}, {4096, 4096, 4096}};
    for (const auto& s : bf16)
      benchmark::RegisterBenchmark(("gemm_bf16/" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k)).c_str(),
                                   [s](benchmark::State& st) { bench_shape(st, s, false); })
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    for (const auto& s : fp8)
      benchmark::RegisterBenchmark(("gemm_e4m3/" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k)).c_str(),
                                   [s](benchmark::State& st) { bench_shape(st, s, true); })
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    int bargc = static_cast<int>(rest.size());
    benchmark::Initialize(&bargc, rest.data());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    write_json(json, command, driver);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cake_bench_gemm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
