// The README's main job: check (the analyzer), lower and JIT-compile Cake's sm_90a GEMM schedule; on a machine with a
// GPU, run it on fresh random inputs against a reference and time it against cuBLAS (same process,
// L2 flushed before every run, median of many runs).
//
//   cake_demo [--runs N] [--quick]
// The GPU part goes through cake::gemm, which picks the tile width for each shape.
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cake/cake.hpp>
#include <cake/harness/gemm_check.hpp>
#include <cake/harness/timing.hpp>
#include <cake/gemm.hpp>

#include "kernels/gemm/sm80_bf16.hpp"
#include "kernels/gemm/sm90_bf16.hpp"

namespace {

struct shape {
  long long m, n, k;
};

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw cake::jit::error(std::string("cuBLAS failed: ") + what + " (status " + std::to_string(s) + ")");
}

// D = A * B^T with row-major A (M x K), B (N x K), D (M x N): column-major D^T = B * A^T ("TN").
void cublas_gemm(cublasHandle_t h, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, const shape& s, CUstream stream) {
  const float one = 1.f, zero = 0.f;
  check_cublas(cublasSetStream(h, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
  check_cublas(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.n), static_cast<int>(s.m), static_cast<int>(s.k), &one,
                            reinterpret_cast<void*>(B), CUDA_R_16BF, static_cast<int>(s.k), reinterpret_cast<void*>(A), CUDA_R_16BF,
                            static_cast<int>(s.k), &zero, reinterpret_cast<void*>(D), CUDA_R_16BF, static_cast<int>(s.n), CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}


}  // namespace

int run(int argc, char** argv) {
  int runs = 100;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
  }
  constexpr auto gemm = cake::kernels::gemm_bf16_sm90();
  std::printf("== schedule (kernels/gemm/sm90_bf16.hpp)\n%s\n", cake::to_text(gemm).c_str());

  const auto report = cake::analyze(gemm);
  std::printf("== analysis\n%s\n", cake::analysis::to_text(report).c_str());
  const auto lowered = cake::lower::lower(gemm);
  if (!lowered.ok) {
    std::fprintf(stderr, "%s\n", lowered.error.c_str());
    return 1;
  }
  const auto art = cake::jit::build(lowered.source, lowered.entry, "sm_90a");
  if (!art.ok) {
    std::fprintf(stderr, "%s\n", art.diagnostics().c_str());
    return 1;
  }
  std::printf("== lowered and compiled for sm_90a: %zu lines of CUDA, %zu B cubin, %d registers, %d B spills, %d B dynamic smem, "
              "%s %.0f ms\n",
              static_cast<std::size_t>(std::count(lowered.source.begin(), lowered.source.end(), '\n')), art.cubin.size(),
              art.resources.registers, art.resources.spill_stores, lowered.smem_bytes,
              art.origin == cake::jit::artifact_origin::compiled ? "NVRTC compile" : "JIT cache hit; its NVRTC compile took", art.compile_ms);

  if (!cake::jit::driver::available()) {
    std::printf("== no GPU run: %s\n", cake::jit::driver::unavailable_reason().c_str());
    return 0;
  }
  const auto& dev = cake::jit::driver::get().device(0);
  std::printf("== device: %s, %d SMs\n", dev.describe().c_str(), dev.sm_count);
  if (dev.cc_major != 9 || dev.cc_minor != 0) {
    std::printf("== no GPU run: sm_90a code needs a cc 9.0 device\n");
    return 0;
  }
  cake::harness::gemm_reference reference;
  auto rng = cake::harness::random_source::fresh();
  cublasHandle_t handle;
  check_cublas(cublasCreate(&handle), "cublasCreate");

  std::printf("== correctness (fresh normal inputs, output poisoned with NaN, relative Frobenius error vs f32 reference)\n");
  using cake::harness::gemm_problem;
  const std::vector<gemm_problem> checks =
      quick ? std::vector<gemm_problem>{{128, 256, 64}, {300, 200, 1000}, {4096, 2112, 7168}}
            : std::vector<gemm_problem>{{128, 256, 64}, {1, 8, 8}, {1, 1, 1}, {129, 257, 72}, {300, 200, 1000}, {777, 1111, 333},
                                        {1000, 1000, 1000, 1000, 1000, 1024}, {256, 512, 4096}, {4096, 2112, 7168}, {2048, 24576, 1536}};
  int failures = 0;
  for (const auto& pr : checks) {
    cake::harness::gemm_operands o(pr);
    const auto r = cake::harness::check_gemm(o, rng, reference, [&](cake::harness::gemm_operands& x) {
      const auto& q = x.p;
      cake::gemm(x.a.address(), x.b.address(), x.d.address(), q.m, q.n, q.k, q.lda, q.ldb, q.ldd);
    });
    const bool ok = r.ok(1e-2);
    failures += !ok;
    std::printf("  %-28s rel_err %.2e  nonfinite %lld  padding written %lld  %s\n", pr.describe().c_str(), r.cmp.rel_err, r.cmp.nonfinite,
                r.padding_written, ok ? "ok" : "FAILED");
  }

  std::printf("== timing vs cuBLAS (L2 flushed, median of %d)\n", runs);
  std::printf("  %-22s %10s %10s %9s %9s %7s\n", "M x N x K", "cake ms", "cublas ms", "cake TF", "cublas TF", "ratio");
  const std::vector<shape> timed = quick ? std::vector<shape>{{4096, 4096, 4096}}
                                         : std::vector<shape>{{8192, 8192, 8192}, {4096, 4096, 4096}, {4096, 7168, 2048},
                                                              {4096, 2112, 7168}, {2048, 24576, 1536}, {16384, 16384, 1024}};
  cake::harness::timing_options topt;
  topt.runs = runs;
  topt.warmup = 5;
  double log_sum = 0;
  for (const auto& s : timed) {
    cake::harness::gemm_operands buf(gemm_problem{s.m, s.n, s.k});
    buf.a.upload(cake::harness::random_vector<cake::harness::host_bf16>(s.m * s.k, rng));
    buf.b.upload(cake::harness::random_vector<cake::harness::host_bf16>(s.n * s.k, rng));
    const auto tc = cake::harness::time_gpu(
        [&](CUstream st) { cake::gemm(buf.a.address(), buf.b.address(), buf.d.address(), s.m, s.n, s.k, s.k, s.k, s.n, st); }, topt);
    const auto tb = cake::harness::time_gpu([&](CUstream st) { cublas_gemm(handle, buf.a.get(), buf.b.get(), buf.d.get(), s, st); }, topt);
    const double flop = 2.0 * s.m * s.n * s.k;
    const double ratio = tb.median_ms / tc.median_ms;
    log_sum += std::log(ratio);
    std::printf("  %6lld x %6lld x %6lld %10.4f %10.4f %9.1f %9.1f %7.3f  %s\n", s.m, s.n, s.k, tc.median_ms, tb.median_ms, flop / tc.median_ms / 1e9,
                flop / tb.median_ms / 1e9, ratio, cake::choose_gemm(s.m, s.n, s.k, dev.sm_count).why.c_str());
  }
  std::printf("  geometric-mean ratio (cuBLAS time / Cake time): %.3f\n", std::exp(log_sum / timed.size()));
  cublasDestroy(handle);
  return failures ? 2 : 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cake_demo: error: %s\n", e.what());
    return 1;
  }
}
