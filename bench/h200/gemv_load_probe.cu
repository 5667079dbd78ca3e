// How fast can a small-M GEMM read its weights on this GPU, by tile shape and split order? (issue 14: at
// M <= 32, cake::gemm's split-K kernels read B [N, K] at 1.4-3.6 TB/s where cuBLAS reaches 1.7-3.9.)
// Hand-written minimal readers of the split-K kernel's access pattern, no math, so that the access pattern's
// ceiling can be told apart from the schedule:
//   a producer thread issues TMA boxes of {64 columns (128 bytes), R rows} of B, P consecutive 64-column
//   chunks per stage, into a ring of `stages` stages; a consumer warpgroup waits on each stage and releases
//   it (as gemm_splitk_sm90 with its wgmma removed). A CTA takes one (split, R-row tile) item, splits
//   fastest, as cake's split(S), tiles(M), tiles(N) walk. Its K chunks: interleaved (groups of P chunks s,
//   s + S, s + 2S, ...: gemm_splitk_sm90's order at P = 1) or contiguous (the split's own 1/S of K).
// and cuBLAS (cublasGemmEx, bf16, f32 compute) on the same shape in the same process: the peer.
// Built and run by step `gemvprobe` of bench/h200/session.sh:
//   nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o gemv_load_probe gemv_load_probe.cu -lcuda -lcublas
//   gemv_load_probe M N K [a]   (a: only the variants that also load A's box, to see what its zero-filled
//   rows past M cost)
// Prints one line per variant: ms (median of 20, L2 flushed before each) and GB/s of B's bytes (A and D are
// at most M x K and M x N).
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "probe_sync.cuh"

__device__ __forceinline__ void tma_2d(void* dst, const CUtensorMap* map, u64* bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_u32(dst)), "l"(map),
               "r"(c0), "r"(c1), "r"(smem_u32(bar))
               : "memory");
}

struct shape {
  int R, P, S, contiguous, nk;  // rows per box, chunks per stage, splits, K order, K chunks of 64 columns
  int a_rows;                   // > 0: also one box {64 columns, a_rows rows} of A [M, K] per chunk (rows past M
                                // zero-filled), as gemm_splitk_sm90 loads its 64-row A tile
};

// The chunk group (of P chunks) that stage i of split s reads, and how many groups the split has.
__device__ __forceinline__ int groups_of(const shape& c, int s) {
  const int ng = c.nk / c.P;
  if (c.contiguous) {
    const int per = (ng + c.S - 1) / c.S, lo = s * per, hi = min(ng, lo + per);
    return hi > lo ? hi - lo : 0;
  }
  return ng > s ? (ng - s + c.S - 1) / c.S : 0;
}
__device__ __forceinline__ int group_at(const shape& c, int s, int i) {
  const int ng = c.nk / c.P;
  return c.contiguous ? s * ((ng + c.S - 1) / c.S) + i : s + i * c.S;
}

__global__ void __launch_bounds__(160) tma_reader(const __grid_constant__ CUtensorMap mb, shape c, int stages, int items, int* sink,
                                                  const __grid_constant__ CUtensorMap ma) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const int a_bytes = c.a_rows * 128 * c.P, stage_bytes = c.R * 128 * c.P + a_bytes;
  u64* full = reinterpret_cast<u64*>(smem + stages * stage_bytes);
  u64* empty = full + stages;
  const int tid = threadIdx.x;
  if (tid == 0) {
    for (int i = 0; i < stages; ++i) mbar_init(&full[i], 1), mbar_init(&empty[i], 1);
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (tid > 128) {
  } else if (tid == 128) {  // producer
    u32 n = 0;
    for (int it = blockIdx.x; it < items; it += gridDim.x) {
      const int s = it % c.S, t = it / c.S, ng = groups_of(c, s);
      for (int i = 0; i < ng; ++i, ++n) {
        const int st = n % stages, g = group_at(c, s, i);
        if (n >= static_cast<u32>(stages)) mbar_wait(&empty[st], ((n / stages) - 1) & 1);
        mbar_expect_tx(&full[st], stage_bytes);
        for (int p = 0; p < c.P; ++p) tma_2d(smem + st * stage_bytes + p * c.R * 128, &mb, &full[st], (g * c.P + p) * 64, t * c.R);
        for (int p = 0; p < c.P && c.a_rows; ++p) tma_2d(smem + st * stage_bytes + c.P * c.R * 128 + p * c.a_rows * 128, &ma, &full[st], (g * c.P + p) * 64, 0);
      }
    }
  } else {  // consumer warpgroup
    u32 n = 0;
    int acc = 0;
    for (int it = blockIdx.x; it < items; it += gridDim.x) {
      const int s = it % c.S, ng = groups_of(c, s);
      for (int i = 0; i < ng; ++i, ++n) {
        const int st = n % stages;
        mbar_wait(&full[st], (n / stages) & 1);
        acc += reinterpret_cast<const int*>(smem + st * stage_bytes)[tid];
        asm volatile("bar.sync 1, 128;");
        if (tid == 0) mbar_arrive(&empty[st]);
      }
    }
    if (acc == 0x7fffffff) sink[0] = acc;
  }
}

static CUtensorMap make_map(const void* base, int N, int K, int R, CUtensorMapL2promotion promo = CU_TENSOR_MAP_L2_PROMOTION_NONE) {
  CUtensorMap m;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(K), static_cast<cuuint64_t>(N)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(K) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(R)}, es[2] = {1, 1};
  CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, promo, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) std::fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", static_cast<int>(r)), std::exit(1);
  return m;
}

int main(int argc, char** argv) {
  const bool only_a = argc > 4 && std::string(argv[4]) == "a";  // only the variants with A's box
  const int M = argc > 1 ? std::atoi(argv[1]) : 1, N = argc > 2 ? std::atoi(argv[2]) : 8192, K = argc > 3 ? std::atoi(argv[3]) : 28672;
  if (N % 128 || K % 256) return std::fprintf(stderr, "N must be a multiple of 128, K of 256\n"), 1;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const size_t bytes = static_cast<size_t>(N) * K * 2;
  void *db, *da, *dd, *flush;
  int* sink;
  CK(cudaMalloc(&db, bytes));
  CK(cudaMalloc(&da, static_cast<size_t>(M) * K * 2));
  CK(cudaMalloc(&dd, static_cast<size_t>(M) * N * 2));
  CK(cudaMalloc(&sink, 4));
  const size_t flush_bytes = 256u << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemset(db, 0, bytes));
  CK(cudaMemset(da, 0, static_cast<size_t>(M) * K * 2));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto time = [&](const char* name, int grid, auto launch) {
    std::vector<float> ms;
    for (int r = 0; r < 23; ++r) {
      CK(cudaMemsetAsync(flush, r, flush_bytes));
      CK(cudaEventRecord(e0));
      launch();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float t;
      CK(cudaEventElapsedTime(&t, e0, e1));
      if (r >= 3) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    std::printf("gemv M%-3d N%-6d K%-6d %-44s grid %-5d %8.4f ms %7.1f GB/s\n", M, N, K, name, grid, med, bytes / (med * 1e-3) / 1e9);
    std::fflush(stdout);
  };
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return std::fprintf(stderr, "cublasCreate failed\n"), 1;
  const float alpha = 1, beta = 0;
  // row-major D[M,N] = A[M,K] B[N,K]^T is column-major D^T[N,M] = B^T' A^T' with B, A read as K x N, K x M
  time("cublasGemmEx (the peer)", 0, [&] {
    if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, db, CUDA_R_16BF, K, da, CUDA_R_16BF, K, &beta, dd, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
      std::fprintf(stderr, "cublasGemmEx failed\n"), std::exit(1);
  });
  struct variant {
    int R, P, S, contiguous, stages;
    bool promo256;
    int a_rows = 0;
  };
  // (R 128, P 1, S 2, interleaved, 6 stages: gemm_splitk_sm90's sk2_bn128_s6, the dispatcher's usual plan at M <= 16)
  const variant vs[] = {
      {128, 1, 2, 0, 6, false}, {128, 1, 2, 0, 6, true}, {128, 1, 2, 1, 6, false}, {128, 1, 4, 0, 6, false}, {128, 1, 4, 1, 6, false},
      {64, 2, 2, 1, 6, false},  {64, 2, 2, 0, 6, false}, {64, 4, 2, 1, 4, false},  {64, 2, 4, 1, 6, false},  {32, 4, 2, 1, 6, false},
      {32, 8, 2, 1, 4, false},  {64, 2, 2, 1, 3, false}, {64, 4, 1, 1, 3, false},  {32, 4, 4, 1, 3, false},  {128, 2, 2, 1, 3, false},
      // with A's box per chunk: 64 rows (gemm_splitk_sm90's), 16 and 8 rows
      {128, 1, 2, 0, 6, false, 64}, {128, 1, 2, 0, 6, true, 64}, {128, 1, 2, 0, 6, false, 16}, {128, 1, 2, 0, 6, false, 8},
  };
  for (const auto& v : vs) {
    if (only_a && !v.a_rows) continue;
    shape c{v.R, v.P, v.S, v.contiguous, K / 64, v.a_rows};
    if ((K / 64) % v.P || N % v.R) continue;
    const CUtensorMap mb = make_map(db, N, K, v.R, v.promo256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_NONE);
    const CUtensorMap ma = make_map(da, M, K, v.a_rows ? v.a_rows : 8, v.promo256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_NONE);
    const int stage_bytes = (v.R + v.a_rows) * 128 * v.P, smem = v.stages * stage_bytes + 16 * v.stages;
    CK(cudaFuncSetAttribute(tma_reader, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tma_reader, 160, smem));
    const int items = N / v.R * v.S;
    char name[96];
    std::snprintf(name, sizeof name, "R%d P%d S%d %s st%d (%d KB)%s %d/SM", v.R, v.P, v.S, v.contiguous ? "contig" : "inter ", v.stages, smem / 1024,
                  v.promo256 ? " L2-256" : "", per_sm);
    if (v.a_rows) std::snprintf(name + std::strlen(name), sizeof name - std::strlen(name), " +A%d", v.a_rows);
    time(name, items, [&] { tma_reader<<<items, 160, smem>>>(mb, c, v.stages, items, sink, ma); });
  }
  cublasDestroy(h);
  return 0;
}
