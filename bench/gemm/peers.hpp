#pragma once
// The peers Cake's GEMM benchmarks time against, in the same process: cuBLAS (bf16), cuBLASLt (fp8 e4m3
// with per-tensor scales; bf16 with the GELU + bias epilogue). Shared by cake_bench_gemm,
// cake_bench_gemm_sweep and cake_bench_gemm_score.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <cake/jit/device_memory.hpp>
#include <cake/jit/driver.hpp>

namespace cake_bench {

struct shape {
  long long m, n, k;
};

void cublas_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw cake::jit::error(std::string(what) + " failed with cuBLAS status " + std::to_string(s));
}

struct peers {
  cublasHandle_t blas{};
  cublasLtHandle_t lt{};
  cake::jit::device_buffer workspace{64u << 20};
  cake::jit::device_buffer scales{512};
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
  // cuBLASLt bf16 with the fused epilogue D = GELU(A B^T + bias) (CUBLASLT_EPILOGUE_GELU_BIAS, the tanh
  // form; bias bf16 per column of row-major D, i.e. per row of the column-major D^T Lt computes).
  struct lt_plan {
    cublasLtMatmulDesc_t op{};
    cublasLtMatrixLayout_t a{}, b{}, d{};
    cublasLtMatmulHeuristicResult_t algo{};
  };
  lt_plan plan_gelu_bias(const shape& s, CUdeviceptr bias) {
    lt_plan p;
    cublas_check(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n);
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    cublas_check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "EPILOGUE");
    const void* bp = reinterpret_cast<const void*>(bias);
    cublas_check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp), "BIAS_POINTER");
    const cudaDataType bt = CUDA_R_16BF;
    cublas_check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt), "BIAS_DATA_TYPE");
    cublas_check(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, s.k, s.n, s.k), "layout A");
    cublas_check(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16BF, s.k, s.m, s.k), "layout B");
    cublas_check(cublasLtMatrixLayoutCreate(&p.d, CUDA_R_16BF, s.n, s.m, s.n), "layout D");
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    const std::size_t ws = workspace.size();
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    int found = 0;
    cublas_check(cublasLtMatmulAlgoGetHeuristic(lt, p.op, p.a, p.b, p.d, p.d, pref, 1, &p.algo, &found), "cublasLtMatmulAlgoGetHeuristic (GELU_BIAS)");
    cublasLtMatmulPreferenceDestroy(pref);
    if (found == 0) throw cake::jit::error("cuBLASLt offers no algorithm for GELU_BIAS at this shape");
    return p;
  }
  void gelu_bias(const lt_plan& p, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream st) {
    const float one = 1.f, zero = 0.f;
    cublas_check(cublasLtMatmul(lt, p.op, &one, reinterpret_cast<void*>(B), p.a, reinterpret_cast<void*>(A), p.b, &zero, reinterpret_cast<void*>(D), p.d,
                                reinterpret_cast<void*>(D), p.d, &p.algo.algo, reinterpret_cast<void*>(workspace.get()), workspace.size(),
                                reinterpret_cast<cudaStream_t>(st)),
                 "cublasLtMatmul (GELU_BIAS)");
  }
  // cuBLASLt fp8: e4m3 inputs, per-tensor scales (device pointers), bf16 output, f32 compute.
  struct fp8_plan {
    cublasLtMatmulDesc_t op{};
    cublasLtMatrixLayout_t a{}, b{}, c{}, d{};
    cublasLtMatmulHeuristicResult_t algo{};
  };
  // fast_accum: accumulate in the tensor core's native fp8 accumulator (what a plain wgmma with f32
  // accumulators does, and what Cake's kernel does); without it cuBLASLt promotes partial sums.
  fp8_plan plan_fp8(const shape& s, float scale, bool fast_accum, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D) {
    fp8_plan p;
    cublas_check(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n);
    // Per-tensor scales as device pointers, each on its own 256-byte line.
    const float host_scales[128] = {scale};
    std::vector<float> lines(128, 1.f);
    lines[0] = host_scales[0];
    scales.upload(std::span<const float>(lines));
    void* sa = scales.address();
    void* sb = static_cast<char*>(scales.address()) + 256;
    cublas_check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa), "A_SCALE_POINTER");
    cublas_check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb), "B_SCALE_POINTER");
    const std::int8_t fast = fast_accum ? 1 : 0;
    cublas_check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), "FAST_ACCUM");
    cublas_check(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, s.k, s.n, s.k), "layout A");
    cublas_check(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, s.k, s.m, s.k), "layout B");
    cublas_check(cublasLtMatrixLayoutCreate(&p.d, CUDA_R_16BF, s.n, s.m, s.n), "layout D");
    cublas_check(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_16BF, s.n, s.m, s.n), "layout C");
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    const std::size_t ws = workspace.size();
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    int found = 0;
    cublasLtMatmulHeuristicResult_t results[16] = {};
    cublas_check(cublasLtMatmulAlgoGetHeuristic(lt, p.op, p.a, p.b, p.c, p.d, pref, 16, results, &found), "cublasLtMatmulAlgoGetHeuristic");
    cublasLtMatmulPreferenceDestroy(pref);
    // Take the best-ranked algorithm that actually runs (the heuristic can return ones that do not).
    std::string tried;
    for (int i = 0; i < found; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
      p.algo = results[i];
      const float one = 1.f, zero = 0.f;
      const auto st = cublasLtMatmul(lt, p.op, &one, reinterpret_cast<void*>(B), p.a, reinterpret_cast<void*>(A), p.b, &zero, reinterpret_cast<void*>(D),
                                     p.c, reinterpret_cast<void*>(D), p.d, &p.algo.algo, workspace.address(), workspace.size(), nullptr);
      if (st == CUBLAS_STATUS_SUCCESS) return p;
      tried += " " + std::to_string(st);
    }
    throw cake::jit::error("cuBLASLt fp8: none of " + std::to_string(found) + " heuristic algorithms runs (statuses:" + tried + ")");
  }
  void fp8(const fp8_plan& p, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream st) {
    const float one = 1.f, zero = 0.f;
    cublas_check(cublasLtMatmul(lt, p.op, &one, reinterpret_cast<void*>(B), p.a, reinterpret_cast<void*>(A), p.b, &zero, reinterpret_cast<void*>(D), p.c,
                                reinterpret_cast<void*>(D), p.d, &p.algo.algo, workspace.address(), workspace.size(), reinterpret_cast<cudaStream_t>(st)),
                 "cublasLtMatmul");
  }
};

}  // namespace cake_bench
