#pragma once
// A reference for D[M,N] = A[M,K] * B[N,K]^T on the GPU (f32 accumulation of 16-bit or fp8 inputs, f32
// output), compiled once through the JIT, and the comparison every GEMM check uses: relative Frobenius
// error against the reference, and a count of elements that are NaN or were never written (outputs are
// poisoned with NaN before the kernel under test runs).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../jit.hpp"
#include "random.hpp"

namespace cake::harness {

inline const char* gemm_reference_source = R"cake_ref(
extern "C" __global__ void cake_gemm_reference(const unsigned short* A, const unsigned short* B, float* D,
                                               long long M, long long N, long long K, long long lda, long long ldb,
                                               long long ldd, int kind) {
  // kind 0: bf16 inputs, 1: f16 inputs, 2: e4m3 inputs (bytes; lda/ldb in bytes)
  __shared__ float sa[16][17], sb[16][17];
  const long long m = blockIdx.y * 16 + threadIdx.y, n = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.f;
  for (long long k0 = 0; k0 < K; k0 += 16) {
    const long long ka = k0 + threadIdx.x, mb = blockIdx.y * 16 + threadIdx.y, nb = blockIdx.x * 16 + threadIdx.y;
    float a = 0.f, b = 0.f;
    if (kind == 2) {
      const unsigned char* A8 = reinterpret_cast<const unsigned char*>(A);
      const unsigned char* B8 = reinterpret_cast<const unsigned char*>(B);
      auto dec = [](unsigned char v) {
        const int s = v >> 7, e = (v >> 3) & 15, f = v & 7;
        if (e == 15 && f == 7) return __int_as_float(0x7fc00000);
        const float mag = e == 0 ? ldexpf((float)f, -9) : ldexpf(1.f + f / 8.f, e - 7);
        return s ? -mag : mag;
      };
      if (mb < M && ka < K) a = dec(A8[mb * lda + ka]);
      if (nb < N && ka < K) b = dec(B8[nb * ldb + ka]);
    } else {
      auto dec = [kind](unsigned short v) {
        if (kind == 0) return __uint_as_float((unsigned)v << 16);
        return __half2float(__ushort_as_half(v));
      };
      if (mb < M && ka < K) a = dec(A[mb * lda + ka]);
      if (nb < N && ka < K) b = dec(B[nb * ldb + ka]);
    }
    sa[threadIdx.y][threadIdx.x] = a;
    sb[threadIdx.y][threadIdx.x] = b;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) acc += sa[threadIdx.y][kk] * sb[threadIdx.x][kk];
    __syncthreads();
  }
  if (m < M && n < N) D[m * ldd + n] = acc;
}
)cake_ref";

struct comparison {
  double rel_err = 0;          // ||out - ref||_F / ||ref||_F over finite outputs
  long long nonfinite = 0;     // NaN/Inf outputs (unwritten elements stay NaN from the poison)
  double max_abs_err = 0;
  bool ok(double tolerance) const { return nonfinite == 0 && rel_err <= tolerance; }
};

class gemm_reference {
 public:
  explicit gemm_reference(int ordinal = 0) : ordinal_(ordinal) {
    jit::compile_options o;
    o.extra = {"-include", "cuda_fp16.h"};
    auto a = jit::build(gemm_reference_source, "cake_gemm_reference", "sm_80", o);
    if (!a.ok) throw jit::error("the GEMM reference kernel does not compile:\n" + a.diagnostics());
    module_ = jit::module::load(a, ordinal);
    kernel_ = module_.get_kernel("cake_gemm_reference");
  }
  // kind: 0 bf16, 1 f16, 2 e4m3. D is f32 M x N (ldd = N).
  void run(CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, long long M, long long N, long long K, long long lda, long long ldb, int kind,
           CUstream stream = nullptr) const {
    jit::launch_config c;
    c.grid = {static_cast<unsigned>((N + 15) / 16), static_cast<unsigned>((M + 15) / 16), 1};
    c.block = {16, 16, 1};
    c.stream = stream;
    long long ldd = N;
    void* args[] = {&A, &B, &D, &M, &N, &K, &lda, &ldb, &ldd, &kind};
    jit::launch(kernel_, c, args);
  }

 private:
  int ordinal_;
  jit::module module_;
  jit::kernel kernel_;
};

// Compare a bf16 (or f16) output against an f32 reference, both M x N row-major (ld = N).
inline comparison compare_16bit(const std::vector<std::uint16_t>& out, const std::vector<float>& ref, bool bf16 = true) {
  comparison c;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const float o = bf16 ? bf16_bits_to_float(out[i]) : f16_bits_to_float(out[i]);
    if (!std::isfinite(o)) {
      ++c.nonfinite;
      continue;
    }
    const double d = static_cast<double>(o) - ref[i];
    num += d * d;
    den += static_cast<double>(ref[i]) * ref[i];
    c.max_abs_err = std::max(c.max_abs_err, std::abs(d));
  }
  c.rel_err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return c;
}

}  // namespace cake::harness
