#pragma once
// The peers `cake bench` times a kernel against, loaded with dlopen so that the tool runs (check, lower,
// estimate) where cuBLAS is not installed: cuBLAS (bf16 GEMM through cublasGemmEx) and cuBLASLt (e4m3 GEMM
// with per-tensor scales, bf16 output, fast accumulation: the same arithmetic as a plain wgmma kernel).
// D[M,N] = A[M,K] * B[N,K]^T in row-major is D^T = B * A^T in cuBLAS's column-major ("TN").
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>
#include <vector>

#include <cake/jit/device_memory.hpp>
#include <cake/jit/error.hpp>

namespace cake_cli {

class gemm_peer {
 public:
  // "cublas" (bf16 inputs) or "cublaslt" (e4m3 inputs). Throws cake::jit::error when the library is missing.
  explicit gemm_peer(const std::string& which) : lt_(which == "cublaslt") {
    if (which != "cublas" && which != "cublaslt") throw cake::jit::error("unknown peer '" + which + "': cake bench knows cublas (bf16 GEMM) and cublaslt (e4m3 GEMM)");
    if (!lt_) {
      lib_ = open({"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
      create_ = sym<decltype(&cublasCreate_v2)>("cublasCreate_v2");
      destroy_ = sym<decltype(&cublasDestroy_v2)>("cublasDestroy_v2");
      set_stream_ = sym<decltype(&cublasSetStream_v2)>("cublasSetStream_v2");
      gemm_ex_ = sym<gemm_ex_t>("cublasGemmEx");
      check(create_(&blas_), "cublasCreate");
    } else {
      lib_ = open({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
      lt_create_ = sym<decltype(&cublasLtCreate)>("cublasLtCreate");
      lt_destroy_ = sym<decltype(&cublasLtDestroy)>("cublasLtDestroy");
      desc_create_ = sym<decltype(&cublasLtMatmulDescCreate)>("cublasLtMatmulDescCreate");
      desc_set_ = sym<decltype(&cublasLtMatmulDescSetAttribute)>("cublasLtMatmulDescSetAttribute");
      layout_create_ = sym<decltype(&cublasLtMatrixLayoutCreate)>("cublasLtMatrixLayoutCreate");
      pref_create_ = sym<decltype(&cublasLtMatmulPreferenceCreate)>("cublasLtMatmulPreferenceCreate");
      pref_set_ = sym<decltype(&cublasLtMatmulPreferenceSetAttribute)>("cublasLtMatmulPreferenceSetAttribute");
      pref_destroy_ = sym<decltype(&cublasLtMatmulPreferenceDestroy)>("cublasLtMatmulPreferenceDestroy");
      heuristic_ = sym<decltype(&cublasLtMatmulAlgoGetHeuristic)>("cublasLtMatmulAlgoGetHeuristic");
      matmul_ = sym<decltype(&cublasLtMatmul)>("cublasLtMatmul");
      check(lt_create_(&lt_handle_), "cublasLtCreate");
      workspace_ = cake::jit::device_buffer(64u << 20);
      scales_ = cake::jit::device_buffer(512);
    }
  }
  gemm_peer(const gemm_peer&) = delete;
  gemm_peer& operator=(const gemm_peer&) = delete;
  ~gemm_peer() {
    if (blas_ && destroy_) destroy_(blas_);
    if (lt_handle_ && lt_destroy_) lt_destroy_(lt_handle_);
  }

  std::string name() const { return lt_ ? "cublasLt" : "cublas"; }

  // Prepares a problem (cuBLASLt picks its algorithm here). Leading dims in elements.
  void prepare(CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, long long m, long long n, long long k, long long lda, long long ldb, long long ldd, float scale) {
    A_ = A, B_ = B, D_ = D, m_ = m, n_ = n, k_ = k, lda_ = lda, ldb_ = ldb, ldd_ = ldd;
    if (!lt_) return;
    check(desc_create_(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
    desc_set_(op_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
    desc_set_(op_, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof nn);
    std::vector<float> lines(128, 1.f);
    lines[0] = scale;
    scales_.upload(std::span<const float>(lines));
    void* sa = scales_.address();
    void* sb = static_cast<char*>(scales_.address()) + 256;
    check(desc_set_(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa), "A_SCALE_POINTER");
    check(desc_set_(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb), "B_SCALE_POINTER");
    const std::int8_t fast = 1;
    check(desc_set_(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), "FAST_ACCUM");
    check(layout_create_(&la_, CUDA_R_8F_E4M3, k, n, ldb), "layout B");
    check(layout_create_(&lb_, CUDA_R_8F_E4M3, k, m, lda), "layout A");
    check(layout_create_(&ld_, CUDA_R_16BF, n, m, ldd), "layout D");
    check(layout_create_(&lc_, CUDA_R_16BF, n, m, ldd), "layout C");
    cublasLtMatmulPreference_t pref;
    check(pref_create_(&pref), "cublasLtMatmulPreferenceCreate");
    const std::size_t ws = workspace_.size();
    pref_set_(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t results[16] = {};
    int found = 0;
    const auto hs = heuristic_(lt_handle_, op_, la_, lb_, lc_, ld_, pref, 16, results, &found);
    pref_destroy_(pref);
    check(hs, "cublasLtMatmulAlgoGetHeuristic");
    for (int i = 0; i < found; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
      algo_ = results[i];
      if (run_lt(nullptr) == CUBLAS_STATUS_SUCCESS) return;
    }
    throw cake::jit::error("cuBLASLt: none of its " + std::to_string(found) + " heuristic algorithms runs this e4m3 GEMM");
  }

  void run(CUstream stream) {
    if (lt_) {
      check(run_lt(stream), "cublasLtMatmul");
      return;
    }
    const float one = 1.f, zero = 0.f;
    check(set_stream_(blas_, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
    check(gemm_ex_(blas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_), static_cast<int>(m_), static_cast<int>(k_), &one, reinterpret_cast<void*>(B_),
                   CUDA_R_16BF, static_cast<int>(ldb_), reinterpret_cast<void*>(A_), CUDA_R_16BF, static_cast<int>(lda_), &zero,
                   reinterpret_cast<void*>(D_), CUDA_R_16BF, static_cast<int>(ldd_), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  }

 private:
  bool lt_ = false;
  void* lib_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t lt_handle_ = nullptr;
  decltype(&cublasCreate_v2) create_ = nullptr;
  decltype(&cublasDestroy_v2) destroy_ = nullptr;
  decltype(&cublasSetStream_v2) set_stream_ = nullptr;
  // cublasGemmEx has a C++ overload (64-bit sizes): name the C entry point's type.
  using gemm_ex_t = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*, cudaDataType, int,
                                       const void*, cudaDataType, int, const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  gemm_ex_t gemm_ex_ = nullptr;
  decltype(&cublasLtCreate) lt_create_ = nullptr;
  decltype(&cublasLtDestroy) lt_destroy_ = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create_ = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set_ = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create_ = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create_ = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set_ = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy_ = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic_ = nullptr;
  decltype(&cublasLtMatmul) matmul_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr, ld_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_{};
  cake::jit::device_buffer workspace_, scales_;
  CUdeviceptr A_ = 0, B_ = 0, D_ = 0;
  long long m_ = 0, n_ = 0, k_ = 0, lda_ = 0, ldb_ = 0, ldd_ = 0;

  static void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw cake::jit::error(std::string(what) + " failed with cuBLAS status " + std::to_string(static_cast<int>(s)));
  }
  static void* open(std::initializer_list<const char*> names) {
    std::string tried;
    for (const char* n : names) {
      if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
      tried += std::string(tried.empty() ? "" : ", ") + n;
    }
    for (const char* n : names)
      if (void* h = dlopen((std::string("/usr/local/cuda/lib64/") + n).c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    throw cake::jit::error("the peer library is not installed (tried " + tried + "; add its folder to LD_LIBRARY_PATH)");
  }
  template <class F>
  F sym(const char* name) {
    void* p = dlsym(lib_, name);
    if (!p) throw cake::jit::error(std::string("the cuBLAS library lacks ") + name);
    return reinterpret_cast<F>(p);
  }
  cublasStatus_t run_lt(CUstream stream) {
    const float one = 1.f, zero = 0.f;
    return matmul_(lt_handle_, op_, &one, reinterpret_cast<void*>(B_), la_, reinterpret_cast<void*>(A_), lb_, &zero, reinterpret_cast<void*>(D_), lc_,
                   reinterpret_cast<void*>(D_), ld_, &algo_.algo, workspace_.address(), workspace_.size(), reinterpret_cast<cudaStream_t>(stream));
  }
};

}  // namespace cake_cli
