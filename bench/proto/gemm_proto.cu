// bench/proto/gemm_proto.cu — harness for the prototype sm_90a bf16 GEMM (gemm_kernel.cuh):
// correctness on ragged shapes against an f32 reference, then timing of every variant against cuBLAS in
// the same process (L2 flushed before every run, CUDA events, median), a compact table and a JSON file.
//
// Build (bench/proto/run_on_h200.sh does all of this):
//   g++ -std=c++20 -I include bench/proto/gen_wgmma.cpp -o gen_wgmma && ./gen_wgmma build/proto/wgmma_bf16.cuh 256 192 176 128
//   nvcc -gencode arch=compute_90a,code=sm_90a -O3 -std=c++20 -I include -I bench/proto -I build/proto
//        bench/proto/gemm_proto.cu -o gemm_proto -lcublas
// Run:
//   gemm_proto [--debug] [--runs N] [--json PATH] [--driver VERSION] [--only SUBSTR] [--skip-timing]
//   --debug    builds with -DCAKE_PROTO_DEBUG=1 only: runs small ragged shapes with 2 s device-side
//              barrier timeouts (a hang prints the barrier and traps instead of stalling the GPU).
// Exit status: 0 all checks passed, 1 a correctness check failed, 2 setup error (no sm_90 GPU, ...),
// 3 a kernel faulted or (debug build) a barrier wait timed out: the CUDA context is lost, results stop there.
#include <cuda.h>  // CUtensorMap and the cuTensorMapEncodeTiled signature (resolved at run time, no -lcuda)
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#ifndef CAKE_PROTO_NO_CUBLAS
#include <cublas_v2.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "gemm_kernel.cuh"

#ifndef CAKE_PROTO_DEBUG
#define CAKE_PROTO_DEBUG 0
#endif

namespace {

using bf16 = __nv_bfloat16;
using cake_proto::tensor_map_t;

#define CUDA_CHECK(expr)                                                                                  \
  do {                                                                                                    \
    cudaError_t e_ = (expr);                                                                              \
    if (e_ != cudaSuccess) {                                                                              \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      std::exit(2);                                                                                       \
    }                                                                                                     \
  } while (0)

static_assert(sizeof(tensor_map_t) == sizeof(CUtensorMap) && alignof(tensor_map_t) == alignof(CUtensorMap),
              "tensor_map_t must mirror CUtensorMap");

// ------------------------------------------------------------------------------------------------
// Device utilities: random normal fill, f32 reference GEMM, comparison.

__device__ __forceinline__ unsigned long long splitmix64(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// rows x cols logical values (standard normal), row stride ld; padding columns get NaN (0xFFFF) so a
// kernel that reads past the logical extent poisons its result.
__global__ void fill_normal_kernel(bf16* x, long long rows, long long cols, long long ld, unsigned long long seed) {
  const long long total = rows * ld;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    const long long c = i % ld;
    if (c < cols) {
      const unsigned long long h1 = splitmix64(seed ^ (2 * i)), h2 = splitmix64(seed ^ (2 * i + 1));
      const float u1 = ((h1 >> 40) + 0.5f) * (1.0f / 16777216.0f);
      const float u2 = (h2 >> 40) * (1.0f / 16777216.0f);
      x[i] = __float2bfloat16(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
    } else {
      x[i] = __ushort_as_bfloat16(0xFFFF);
    }
  }
}

// C[M,N] (f32, ldc = N) = A[M,K] . B[N,K]^T in f32 from bf16 inputs. 64 x 64 tile per 256 threads.
__global__ void reference_gemm_kernel(const bf16* A, int lda, const bf16* B, int ldb, float* C, int M, int N, int K) {
  __shared__ float As[16][64 + 1];
  __shared__ float Bs[16][64 + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int i = 0; i < 4; ++i) {
      const int idx = threadIdx.x + i * 256, r = idx / 16, kk = idx % 16;
      const int ga = row0 + r, gb = col0 + r, gk = k0 + kk;
      As[kk][r] = (ga < M && gk < K) ? __bfloat162float(A[(long long)ga * lda + gk]) : 0.f;
      Bs[kk][r] = (gb < N && gk < K) ? __bfloat162float(B[(long long)gb * ldb + gk]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = As[kk][ty * 4 + i], b[i] = Bs[kk][tx * 4 + i];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) C[(long long)r * N + c] = acc[i][j];
    }
}

struct error_stats {
  double sum_sq_diff, sum_sq_ref;
  unsigned long long non_finite;   // NaN/Inf in the logical M x N output (unwritten poison shows here)
  unsigned long long pad_written;  // padding columns [N, ldd) no longer holding the poison pattern
  unsigned max_abs_diff_bits, max_abs_ref_bits;  // non-negative floats compare as their bit patterns
};

__global__ void compare_kernel(const bf16* D, long long ldd, const float* R, long long M, long long N, error_stats* out) {
  double sq_diff = 0, sq_ref = 0;
  unsigned long long bad = 0, pad = 0;
  float max_diff = 0, max_ref = 0;
  const long long total = M * ldd;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    const long long r = i / ldd, c = i % ldd;
    if (c < N) {
      const float d = __bfloat162float(D[i]), ref = R[r * N + c];
      if (!isfinite(d)) {
        ++bad;
      } else {
        const double e = double(d) - double(ref);
        sq_diff += e * e;
        max_diff = fmaxf(max_diff, fabsf(d - ref));
      }
      sq_ref += double(ref) * ref;
      max_ref = fmaxf(max_ref, fabsf(ref));
    } else if (__bfloat16_as_ushort(D[i]) != 0xFFFF) {
      ++pad;
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    sq_diff += __shfl_down_sync(0xffffffffu, sq_diff, off);
    sq_ref += __shfl_down_sync(0xffffffffu, sq_ref, off);
    bad += __shfl_down_sync(0xffffffffu, bad, off);
    pad += __shfl_down_sync(0xffffffffu, pad, off);
    max_diff = fmaxf(max_diff, __shfl_down_sync(0xffffffffu, max_diff, off));
    max_ref = fmaxf(max_ref, __shfl_down_sync(0xffffffffu, max_ref, off));
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&out->sum_sq_diff, sq_diff);
    atomicAdd(&out->sum_sq_ref, sq_ref);
    atomicAdd(&out->non_finite, bad);
    atomicAdd(&out->pad_written, pad);
    atomicMax(&out->max_abs_diff_bits, __float_as_uint(max_diff));
    atomicMax(&out->max_abs_ref_bits, __float_as_uint(max_ref));
  }
}

// ------------------------------------------------------------------------------------------------
// Host: tensor maps, variants, launching.

using encode_tiled_fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

encode_tiled_fn encode_tiled() {
  static encode_tiled_fn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !p) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled not available from the driver (query result %d)\n", int(q));
      std::exit(2);
    }
    return reinterpret_cast<encode_tiled_fn>(p);
  }();
  return fn;
}

// 2-D bf16 tensor map: `inner` x `outer` elements, rows `row_bytes` apart, box box_inner x box_outer.
// On failure returns a zero map and appends the reason to `error` (the caller reports the check as failed).
tensor_map_t make_map(const void* base, unsigned long long inner, unsigned long long outer, unsigned long long row_bytes,
                      unsigned box_inner, unsigned box_outer, CUtensorMapSwizzle swizzle, const char* what,
                      std::string& error) {
  CUtensorMap m;
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_inner, box_outer};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box,
                                    elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  tensor_map_t t;
  if (r != CUDA_SUCCESS) {
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  "cuTensorMapEncodeTiled(%s) failed with %d: dims {%llu, %llu}, row stride %llu B, box {%u, %u}, "
                  "swizzle %d; ",
                  what, int(r), inner, outer, row_bytes, box_inner, box_outer, int(swizzle));
    std::fprintf(stderr, "  %s\n", msg);
    error += msg;
    std::memset(&t, 0, sizeof t);
    return t;
  }
  std::memcpy(&t, &m, sizeof m);
  return t;
}

CUtensorMapSwizzle swizzle_for_bytes(unsigned bytes) {
  return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_32B;
}

struct problem {
  int M = 0, N = 0, K = 0;
  int lda = 0, ldb = 0, ldd = 0;  // elements; multiples of 8 (TMA strides are multiples of 16 B)
  bf16 *A = nullptr, *B = nullptr, *D = nullptr;
};

using kernel_fn = void (*)(tensor_map_t, tensor_map_t, tensor_map_t, int, int, int);

struct launch_plan {
  tensor_map_t a, b, d;
  kernel_fn kernel = nullptr;
  unsigned grid = 0, cluster = 1, smem = 0;
  std::string error;  // non-empty: this problem cannot be launched with this variant (reason)
};

struct variant {
  std::string name;
  int bn, stages, cluster, group, epi_box, epi_chunk, epi_bufs, mma_in_flight;
  unsigned smem;
  // Tensor maps and grid for one problem; max_clusters > 0 caps the persistent grid (so small problems
  // still run several tiles per CTA and exercise the stage/phase carry-over between tiles).
  std::function<launch_plan(const problem&, int max_clusters)> plan;
};

int g_num_sms = 0;

template <class C>
launch_plan make_plan(const problem& p, int cluster_cap) {
  if (p.M < 1 || p.N < 1 || p.K < 1) {
    // Empty extents make invalid tensor maps; the caller handles them (K = 0 means D = 0) without a launch.
    std::fprintf(stderr, "make_plan: M, N and K must be >= 1 (got %d x %d x %d)\n", p.M, p.N, p.K);
    std::exit(2);
  }
  launch_plan lp;
  lp.a = make_map(p.A, p.K, p.M, 2ull * p.lda, C::BK, C::BM, CU_TENSOR_MAP_SWIZZLE_128B, "A", lp.error);
  lp.b = make_map(p.B, p.K, p.N, 2ull * p.ldb, C::BK, C::kBRowsPerCta, CU_TENSOR_MAP_SWIZZLE_128B, "B", lp.error);
  lp.d = make_map(p.D, p.N, p.M, 2ull * p.ldd, C::kEpiBoxCols, 64, swizzle_for_bytes(C::kEpiSwizzleBytes), "D",
                  lp.error);
  lp.kernel = cake_proto::gemm_bf16_sm90<C>;
  lp.smem = C::kSmemBytes;
  lp.cluster = C::kClusterM;
  static bool attr_set = false;
  if (!attr_set) {
    CUDA_CHECK(cudaFuncSetAttribute(lp.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(C::kSmemBytes)));
    attr_set = true;
  }
  const int m_tiles = (p.M + C::BM - 1) / C::BM, n_tiles = (p.N + C::BN - 1) / C::BN;
  const int cluster_tiles = ((m_tiles + C::kClusterM - 1) / C::kClusterM) * n_tiles;
  // Persistent grid: as many whole clusters as can be co-resident (one CTA per SM), at most one per tile.
  static int max_clusters = 0;
  if (max_clusters == 0) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(unsigned(g_num_sms / C::kClusterM * C::kClusterM));
    cfg.blockDim = dim3(C::kThreads);
    cfg.dynamicSmemBytes = C::kSmemBytes;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = C::kClusterM;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, lp.kernel, &cfg) != cudaSuccess || n <= 0) {
      (void)cudaGetLastError();
      n = g_num_sms / C::kClusterM;
    }
    max_clusters = n;
    std::printf("  [plan] BN %d, %d stages, cluster %d: at most %d co-resident clusters\n", C::BN, C::kStages,
                C::kClusterM, n);
  }
  const int clusters = std::min(cluster_cap > 0 ? std::min(cluster_cap, max_clusters) : max_clusters, cluster_tiles);
  lp.grid = unsigned(std::max(1, clusters) * C::kClusterM);
  return lp;
}

cudaError_t launch(const launch_plan& lp, const problem& p, cudaStream_t s) {
  if (!lp.error.empty()) return cudaErrorInvalidValue;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(lp.grid);
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = lp.smem;
  cfg.stream = s;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = lp.cluster;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, lp.kernel, lp.a, lp.b, lp.d, p.M, p.N, p.K);
}

template <int BN, int Stages, int ClusterM, int Group, int EpiBox, int EpiChunk, int EpiBufs, int InFlight>
variant make_variant() {
  using C = cake_proto::gemm_config<BN, Stages, ClusterM, Group, EpiBox, EpiChunk, EpiBufs, InFlight, 40, 232,
                                    CAKE_PROTO_DEBUG != 0>;
  char name[96];
  std::snprintf(name, sizeof name, "bn%d_s%d_c%d_g%d_e%d.%dx%d_w%d", BN, Stages, ClusterM, Group, EpiBox, EpiChunk,
                EpiBufs, InFlight);
  return variant{name, BN, Stages, ClusterM, Group, EpiBox, EpiChunk, EpiBufs, InFlight, C::kSmemBytes, &make_plan<C>};
}

// The configurations one H200 run compares. Name: bn<BN>_s<stages>_c<cluster M>_g<raster group M-tiles>_
// e<TMA store box cols>.<staging chunk cols>x<staging buffers per consumer warpgroup>_w<wgmma groups in flight>.
std::vector<variant> all_variants() {
  return {
      make_variant<256, 4, 2, 8, 64, 64, 2, 1>(),    // TK/DeepGEMM-like 128x256 tile, B multicast across 2 CTAs
      make_variant<256, 4, 2, 8, 64, 64, 2, 0>(),    // ... releasing each stage right after its wgmmas
      make_variant<256, 4, 1, 8, 64, 64, 2, 1>(),    // ... without clusters
      make_variant<256, 4, 2, 16, 64, 64, 2, 1>(),   // ... wider raster group
      make_variant<256, 3, 2, 8, 64, 256, 1, 1>(),   // 3 stages + whole-tile staging (stores overlap next tile)
      make_variant<192, 4, 2, 8, 64, 64, 4, 1>(),    // N=2112 in 11 N-tiles
      make_variant<192, 4, 2, 8, 64, 192, 1, 0>(),   // ... whole-tile staging, release at once
      make_variant<176, 4, 2, 8, 16, 176, 1, 1>(),   // N=2112 in 12 N-tiles: 384 tiles = 2.9 waves of 132 SMs
      make_variant<176, 5, 2, 8, 16, 16, 4, 1>(),    // ... deeper pipeline, small staging ring
      make_variant<176, 5, 2, 8, 16, 16, 4, 0>(),    // ... release at once
      make_variant<128, 6, 2, 8, 64, 64, 2, 1>(),    // narrow tiles, deep pipeline
  };
}

// ------------------------------------------------------------------------------------------------
// Buffers, checks, timing.

struct buffers {
  problem p;
  float* ref = nullptr;
  error_stats* stats = nullptr;
  size_t d_bytes = 0;
  buffers(int M, int N, int K, unsigned long long seed) {
    p.M = M, p.N = N, p.K = K;
    p.lda = p.ldb = (K + 7) / 8 * 8;
    p.ldd = (N + 7) / 8 * 8;
    CUDA_CHECK(cudaMalloc(&p.A, size_t(M) * p.lda * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&p.B, size_t(N) * p.ldb * sizeof(bf16)));
    d_bytes = size_t(M) * p.ldd * sizeof(bf16);
    CUDA_CHECK(cudaMalloc(&p.D, d_bytes));
    CUDA_CHECK(cudaMalloc(&ref, size_t(M) * N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&stats, sizeof(error_stats)));
    fill_normal_kernel<<<1024, 256>>>(p.A, M, K, p.lda, seed * 2 + 1);
    fill_normal_kernel<<<1024, 256>>>(p.B, N, K, p.ldb, seed * 2 + 2);
    CUDA_CHECK(cudaGetLastError());
    reference_gemm_kernel<<<dim3((N + 63) / 64, (M + 63) / 64), 256>>>(p.A, p.lda, p.B, p.ldb, ref, M, N, K);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~buffers() {
    cudaFree(p.A), cudaFree(p.B), cudaFree(p.D), cudaFree(ref), cudaFree(stats);
  }
  void poison() { CUDA_CHECK(cudaMemset(p.D, 0xFF, d_bytes)); }  // bf16 0xFFFF = NaN
};

struct check_result {
  bool ok = false;
  double rel_fro = 0, max_rel = 0;
  unsigned long long non_finite = 0, pad_written = 0;
  std::string error;
};

check_result check_output(buffers& b) {
  check_result r;
  CUDA_CHECK(cudaMemset(b.stats, 0, sizeof(error_stats)));
  compare_kernel<<<1024, 256>>>(b.p.D, b.p.ldd, b.ref, b.p.M, b.p.N, b.stats);
  CUDA_CHECK(cudaGetLastError());
  error_stats s;
  CUDA_CHECK(cudaMemcpy(&s, b.stats, sizeof s, cudaMemcpyDeviceToHost));
  float max_diff, max_ref;
  std::memcpy(&max_diff, &s.max_abs_diff_bits, 4);
  std::memcpy(&max_ref, &s.max_abs_ref_bits, 4);
  r.rel_fro = s.sum_sq_ref > 0 ? std::sqrt(s.sum_sq_diff / s.sum_sq_ref) : std::sqrt(s.sum_sq_diff);
  r.max_rel = max_ref > 0 ? max_diff / max_ref : max_diff;
  r.non_finite = s.non_finite;
  r.pad_written = s.pad_written;
  r.ok = r.non_finite == 0 && r.pad_written == 0 && r.rel_fro <= 1e-2;
  return r;
}

// Debug builds: mapped host memory the kernel writes a hang report into before it traps.
unsigned* g_hang_report = nullptr;

void setup_hang_report() {
  CUDA_CHECK(cudaHostAlloc(&g_hang_report, 8 * sizeof(unsigned), cudaHostAllocMapped));
  std::memset(g_hang_report, 0, 8 * sizeof(unsigned));
  unsigned* dev = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&dev, g_hang_report, 0));
  CUDA_CHECK(cudaMemcpyToSymbol(cake_proto::debug_hang_report, &dev, sizeof dev));
}

void print_hang_report() {
  if (!g_hang_report) return;
  volatile unsigned* r = g_hang_report;
  if (r[0] == 0xDEADu)
    std::fprintf(stderr,
                 "  HANG REPORT: block %u thread %u timed out on %s[%u] waiting for parity %u (tile %u, k-block %u)\n",
                 r[1], r[2], r[3] == 0 ? "full" : "empty", r[4], r[5], r[6], r[7]);
}

// Run one GEMM on poisoned output and check it. Launch/runtime errors are reported, not fatal.
check_result run_and_check(buffers& b, const std::function<cudaError_t()>& run) {
  b.poison();
  cudaError_t e = run();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    check_result r;
    r.error = cudaGetErrorString(e);
    std::fprintf(stderr, "  launch/run failed: %s\n", r.error.c_str());
    print_hang_report();
    if (e != cudaErrorInvalidValue && e != cudaErrorInvalidConfiguration) {
      std::fprintf(stderr, "  sticky CUDA error (kernel fault or hang trap); stopping.\n");
      std::exit(3);
    }
    (void)cudaGetLastError();  // clear the non-sticky launch error so later checks do not trip on it
    return r;
  }
  return check_output(b);
}

struct timer {
  void* flush = nullptr;
  size_t flush_bytes = size_t(256) << 20;  // 256 MiB > 60 MiB L2
  timer() { CUDA_CHECK(cudaMalloc(&flush, flush_bytes)); }
  ~timer() { cudaFree(flush); }
  // Median over `runs` of the kernel alone (events around it), each run preceded by an L2 flush.
  double median_ms(const std::function<void()>& run, int runs) {
    for (int i = 0; i < 3; ++i) run();  // warm-up (module load, cuBLAS heuristics)
    std::vector<cudaEvent_t> start(runs), stop(runs);
    for (int i = 0; i < runs; ++i) {
      CUDA_CHECK(cudaEventCreate(&start[i]));
      CUDA_CHECK(cudaEventCreate(&stop[i]));
    }
    for (int i = 0; i < runs; ++i) {
      CUDA_CHECK(cudaMemsetAsync(flush, i & 0xff, flush_bytes));
      CUDA_CHECK(cudaEventRecord(start[i]));
      run();
      CUDA_CHECK(cudaEventRecord(stop[i]));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> ms(runs);
    for (int i = 0; i < runs; ++i) {
      CUDA_CHECK(cudaEventElapsedTime(&ms[i], start[i], stop[i]));
      cudaEventDestroy(start[i]);
      cudaEventDestroy(stop[i]);
    }
    std::nth_element(ms.begin(), ms.begin() + runs / 2, ms.end());
    return ms[runs / 2];
  }
};

#ifndef CAKE_PROTO_NO_CUBLAS
struct cublas {
  cublasHandle_t h = nullptr;
  cublas() {
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublasCreate failed\n");
      std::exit(2);
    }
  }
  ~cublas() { cublasDestroy(h); }
  // Row-major D[M,N] = A[M,K] . B[N,K]^T is column-major D^T[N,M] = op_T(B)[N,K] . A^T[K,M] ("TN").
  cudaError_t gemm(const problem& p) {
    const float alpha = 1.f, beta = 0.f;
    const cublasStatus_t s =
        cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p.N, p.M, p.K, &alpha, p.B, CUDA_R_16BF, p.ldb, p.A, CUDA_R_16BF,
                     p.lda, &beta, p.D, CUDA_R_16BF, p.ldd, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
  }
};
#endif

struct check_row {
  int M, N, K, cluster_cap;
  std::string variant;
  check_result r;
};

struct row {
  int M, N, K;
  std::string variant;
  bool ok;
  double ms, tflops, peer_ms, peer_tflops, ratio, rel_fro, max_rel;
  unsigned smem;
};

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  bool debug = CAKE_PROTO_DEBUG != 0, skip_timing = false;
  int runs = 200;
  std::string json_path, driver = "unknown", only;
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--debug") debug = true;
    else if (a == "--skip-timing") skip_timing = true;
    else if (a == "--runs") runs = std::max(10, std::atoi(next().c_str()));
    else if (a == "--json") json_path = next();
    else if (a == "--driver") driver = next();
    else if (a == "--only") only = next();
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (debug && !CAKE_PROTO_DEBUG) {
    std::fprintf(stderr, "--debug needs the binary built with -DCAKE_PROTO_DEBUG=1 (run_on_h200.sh builds gemm_proto_debug)\n");
    return 2;
  }
  if (json_path.empty()) {
    const char* out = std::getenv("OUT");
    json_path = std::string(out && *out ? out : ".") + (debug ? "/gemm_proto_debug.json" : "/gemm_proto.json");
  }

  int dev = 0;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  if (prop.major != 9 || prop.minor != 0) {
    std::fprintf(stderr, "needs a cc 9.0 GPU (sm_90a code); found %s cc %d.%d\n", prop.name, prop.major, prop.minor);
    return 2;
  }
  g_num_sms = prop.multiProcessorCount;
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  std::printf("GPU %s, %d SMs, L2 %d MiB, smem opt-in %zu B, runtime %d, driver API %d%s\n", prop.name, g_num_sms,
              prop.l2CacheSize >> 20, size_t(prop.sharedMemPerBlockOptin), rt, drv, debug ? "  [DEBUG build]" : "");

  std::vector<variant> variants;
  for (auto& v : all_variants())
    if (only.empty() || v.name.find(only) != std::string::npos) variants.push_back(v);
  for (const auto& v : variants) {
    if (v.smem > prop.sharedMemPerBlockOptin) {
      std::fprintf(stderr, "variant %s needs %u B smem > opt-in %zu\n", v.name.c_str(), v.smem,
                   size_t(prop.sharedMemPerBlockOptin));
      return 2;
    }
  }
  std::printf("%zu variants\n", variants.size());
  if (debug) setup_hang_report();
#ifndef CAKE_PROTO_NO_CUBLAS
  cublas blas;
#else
  std::printf("built without cuBLAS (CAKE_PROTO_NO_CUBLAS): no peer timings\n");
#endif
  bool all_ok = true;
  std::vector<check_row> checks;

  // ---- correctness on ragged shapes (all variants) ----
  struct shape {
    int M, N, K;
    int cluster_cap = 0;  // > 0: persistent grid capped to this many clusters (several tiles per CTA)
  };
  const std::vector<shape> check_shapes =
      debug ? std::vector<shape>{{300, 200, 1000}, {129, 257, 65}, {1, 1, 1}, {1000, 1000, 1000, 3},
                                 {777, 1111, 333, 2}, {2048, 2048, 512}}
            : std::vector<shape>{{128, 256, 64},      {1, 1, 1},         {129, 257, 65},   {300, 200, 1000},
                                 {1000, 1000, 1000},  {1000, 1000, 1000, 3}, {2, 3, 4096}, {777, 1111, 333, 2},
                                 {4096, 2112, 7168},  {1024, 1536, 96}};
  unsigned long long seed = 1234;
  std::printf("\n== correctness (relative Frobenius error vs f32 reference; output poisoned with NaN first) ==\n");
  for (const auto& s : check_shapes) {
    buffers b(s.M, s.N, s.K, ++seed);
    for (const auto& v : variants) {
      const launch_plan lp = v.plan(b.p, s.cluster_cap);
      check_result r = run_and_check(b, [&] { return launch(lp, b.p, 0); });
      if (!lp.error.empty()) r.error = lp.error;
      all_ok &= r.ok;
      checks.push_back({s.M, s.N, s.K, s.cluster_cap, v.name, r});
      std::printf("  %5d x %5d x %5d  %-29s grid %3u  rel %.2e  max %.2e  nonfinite %llu  pad %llu  %s\n", s.M, s.N,
                  s.K, v.name.c_str(), lp.grid, r.rel_fro, r.max_rel, r.non_finite, r.pad_written,
                  r.ok ? "ok" : ("FAIL " + r.error).c_str());
    }
#ifndef CAKE_PROTO_NO_CUBLAS
    const check_result r = run_and_check(b, [&] { return blas.gemm(b.p); });
    checks.push_back({s.M, s.N, s.K, 0, "cublas", r});
    std::printf("  %5d x %5d x %5d  %-29s           rel %.2e  max %.2e  nonfinite %llu  pad %llu  %s\n", s.M, s.N, s.K,
                "cublas", r.rel_fro, r.max_rel, r.non_finite, r.pad_written, r.ok ? "ok" : "FAIL");
#endif
  }
  auto write_checks = [&](FILE* f) {
    std::fprintf(f, "  \"checks\": [\n");
    for (size_t i = 0; i < checks.size(); ++i) {
      const check_row& c = checks[i];
      std::fprintf(f,
                   "    {\"variant\": \"%s\", \"shape\": {\"M\": %d, \"N\": %d, \"K\": %d}, \"cluster_cap\": %d, "
                   "\"ok\": %s, \"rel_fro_err\": %.3e, \"max_abs_err_over_max_abs_ref\": %.3e, \"non_finite\": %llu, "
                   "\"pad_written\": %llu}%s\n",
                   c.variant.c_str(), c.M, c.N, c.K, c.cluster_cap, c.r.ok ? "true" : "false", c.r.rel_fro, c.r.max_rel,
                   c.r.non_finite, c.r.pad_written, i + 1 < checks.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n");
  };
  if (debug) {
    if (FILE* f = std::fopen(json_path.c_str(), "w")) {
      std::fprintf(f, "{\n  \"gpu\": \"%s\", \"debug\": true,\n", json_escape(prop.name).c_str());
      write_checks(f);
      std::fprintf(f, "  \"all_ok\": %s\n}\n", all_ok ? "true" : "false");
      std::fclose(f);
    }
    std::printf("\nDEBUG run %s (no hang: every barrier wait finished within its 2 s timeout)\n",
                all_ok ? "passed" : "FAILED");
    return all_ok ? 0 : 1;
  }

  // ---- timing ----
  std::vector<row> rows;
  const std::vector<shape> timed = {{8192, 8192, 8192}, {4096, 4096, 4096}, {4096, 7168, 2048},
                                    {4096, 2112, 7168}, {2048, 24576, 1536}, {16384, 16384, 1024}};
  if (!skip_timing) {
    timer t;
    std::printf("\n== timing (median of %d runs, L2 flushed before each) ==\n", runs);
    for (const auto& s : timed) {
      buffers b(s.M, s.N, s.K, ++seed);
      const double flop = 2.0 * s.M * s.N * s.K;
      double peer_ms = 0;
#ifndef CAKE_PROTO_NO_CUBLAS
      {
        const check_result r = run_and_check(b, [&] { return blas.gemm(b.p); });
        if (!r.ok) std::printf("  cublas check failed on %dx%dx%d (rel %.2e)\n", s.M, s.N, s.K, r.rel_fro);
        peer_ms = t.median_ms([&] { blas.gemm(b.p); }, runs);
        std::printf("  %5d x %5d x %5d  %-29s %8.4f ms %7.1f TFLOP/s\n", s.M, s.N, s.K, "cublas", peer_ms,
                    flop / peer_ms * 1e-9);
      }
#endif
      for (const auto& v : variants) {
        const launch_plan lp = v.plan(b.p, 0);
        check_result r = run_and_check(b, [&] { return launch(lp, b.p, 0); });
        if (!lp.error.empty()) r.error = lp.error;
        all_ok &= r.ok;
        row rw{s.M, s.N, s.K, v.name, r.ok, 0, 0, peer_ms, peer_ms > 0 ? flop / peer_ms * 1e-9 : 0, 0, r.rel_fro,
               r.max_rel, v.smem};
        if (r.ok) {
          rw.ms = t.median_ms([&] { (void)launch(lp, b.p, 0); }, runs);
          rw.tflops = flop / rw.ms * 1e-9;
          rw.ratio = peer_ms > 0 ? peer_ms / rw.ms : 0;
        }
        std::printf("  %5d x %5d x %5d  %-29s %8.4f ms %7.1f TFLOP/s  x%.3f vs cublas  rel %.1e %s\n", s.M, s.N, s.K,
                    v.name.c_str(), rw.ms, rw.tflops, rw.ratio, r.rel_fro, r.ok ? "" : "FAILED CHECK");
        rows.push_back(rw);
      }
    }
  }

  // ---- JSON ----
  {
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    FILE* f = std::fopen(json_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
    } else {
      std::fprintf(f, "{\n  \"gpu\": \"%s\", \"sm\": \"sm_90a\", \"driver\": \"%s\", \"cuda\": \"%d.%d\", \"date\": \"%s\",\n",
                   json_escape(prop.name).c_str(), json_escape(driver).c_str(), rt / 1000, (rt % 1000) / 10, date);
      std::fprintf(f, "  \"command\": \"%s\",\n", json_escape(command).c_str());
      std::fprintf(f,
                   "  \"method\": \"CUDA events around each launch, 256 MiB L2 flush before each, median of %d after 3 "
                   "warm-ups; peer cublasGemmEx bf16 in/out, f32 compute, same layout; max_rel_err is the relative "
                   "Frobenius error vs an f32 reference\",\n",
                   runs);
      write_checks(f);
      std::fprintf(f, "  \"rows\": [\n");
      for (size_t i = 0; i < rows.size(); ++i) {
        const row& r = rows[i];
        std::fprintf(f,
                     "    {\"kernel\": \"gemm\", \"dtype\": \"bf16\", \"variant\": \"%s\", \"shape\": {\"M\": %d, \"N\": "
                     "%d, \"K\": %d}, \"smem_bytes\": %u, ",
                     r.variant.c_str(), r.M, r.N, r.K, r.smem);
        if (r.ok)
          std::fprintf(f,
                       "\"cake_ms\": %.5f, \"peer\": \"cublas\", \"peer_ms\": %.5f, \"ratio\": %.4f, \"cake_tflops\": %.1f, "
                       "\"peer_tflops\": %.1f, \"max_rel_err\": %.3e}",
                       r.ms, r.peer_ms, r.ratio, r.tflops, r.peer_tflops, r.rel_fro);
        else
          std::fprintf(f, "\"ok\": false, \"peer\": \"cublas\", \"peer_ms\": %.5f, \"max_rel_err\": %.3e}", r.peer_ms,
                       r.rel_fro);
        std::fprintf(f, "%s\n", i + 1 < rows.size() ? "," : "");
      }
      std::fprintf(f, "  ]\n}\n");
      std::fclose(f);
      std::printf("\nwrote %s\n", json_path.c_str());
    }
  }

  // ---- compact table last ----
  if (!rows.empty()) {
    std::printf("\n%-20s %-29s %9s %8s %9s %7s %9s\n", "shape (MxNxK)", "variant", "ms", "TFLOP/s", "cuBLAS ms", "ratio",
                "rel err");
    for (const auto& s : timed) {
      const row* best = nullptr;
      for (const auto& r : rows) {
        if (r.M != s.M || r.N != s.N || r.K != s.K) continue;
        char shp[32];
        std::snprintf(shp, sizeof shp, "%dx%dx%d", r.M, r.N, r.K);
        std::printf("%-20s %-29s %9.4f %8.1f %9.4f %7.3f %9.1e%s\n", shp, r.variant.c_str(), r.ms, r.tflops, r.peer_ms,
                    r.ratio, r.rel_fro, r.ok ? "" : "  FAILED");
        if (r.ok && (!best || r.ms < best->ms)) best = &r;
      }
      if (best) std::printf("%-20s %-29s %9.4f %8.1f %9.4f %7.3f   <- best\n", "", best->variant.c_str(), best->ms,
                            best->tflops, best->peer_ms, best->ratio);
    }
  }
  std::printf("\n%s\n", all_ok ? "ALL CHECKS PASSED" : "SOME CHECKS FAILED");
  return all_ok ? 0 : 1;
}
