// How fast can a kernel read a paged KV cache on this GPU, by load path? (issue 12, decode: Cake's loads-only
// probe stays at 3.8-4.3 TB/s where cuDNN's cp.async kernel reads the same bytes at 4.3-4.6.) Hand-written
// minimal readers of decode's access pattern, no attention math, so that the load path's ceiling can be
// told apart from Cake's schedule:
//   tma      a producer thread issues TMA boxes of {64 columns, 1 head, 16 keys} (two per page and tensor, as
//            Cake's decode does) into a ring of `stages` stages of 64 keys (K and V: 32 KB), a consumer
//            warpgroup waits on each stage's full barrier and releases it (Cake's loads-only probe)
//   cpasync  the same ring filled by a producer warpgroup with 16-byte cp.async, each thread arriving on the
//            stage's full barrier with cp.async.mbarrier.arrive.noinc (cuDNN's load instruction, with
//            Cake's warp specialization)
//   ldg      no smem: every thread of 256 loads 16-byte vectors (8 in flight) and sums them (a plain read)
// each with one CTA per work item (request, KV head, slice) or persistent (a grid of SMs x CTAs per SM
// walking the items). Cache: K and V [pages][16][HK][128] bf16 with a shuffled page table, B requests of
// `ctx` keys. Built and run by step `decodeprobe` of bench/h200/session.sh:
//   nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o decode_load_probe decode_load_probe.cu -lcuda
//   decode_load_probe [B ctx splits [gap]]   (default 64 4096 4: issue 12's B 64, 4k-key row; gap: only the
//   TMA reader with Cake's decode features added one at a time (flags F_*), to find what Cake's probe pays)
// Prints one line per variant: ms (median of 20, L2 flushed before each) and GB/s of K and V bytes.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "probe_sync.cuh"

constexpr int PS = 16, HK = 8, D = 128, BN = 64, PPB = BN / PS;
constexpr int STAGE_BYTES = 2 * BN * D * 2;  // K and V of one 64-key block

struct problem {
  int B, ctx, splits, pages_per_req;
  const int* page_table;  // [B][pages_per_req]
  const void* k;
  const void* v;
};

__device__ __forceinline__ void tma_3d(void* dst, const CUtensorMap* map, u64* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(smem_u32(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(bar))
      : "memory");
}
__device__ __forceinline__ void tma_4d(void* dst, const CUtensorMap* map, u64* bar, int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(smem_u32(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_u32(bar))
      : "memory");
}
__device__ __forceinline__ void cp16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_arrive(u64* b) { asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(smem_u32(b)) : "memory"); }

// the work items: (slice, KV head, request), slice fastest (as Cake's split(), each(HK), each(B))
__device__ __forceinline__ void item_of(const problem& p, int it, int& s, int& h, int& b) {
  s = it % p.splits;
  h = (it / p.splits) % HK;
  b = it / (p.splits * HK);
}
// Cake's order: KV head fastest, then slice, then request
__device__ __forceinline__ void item_of_head_first(const problem& p, int it, int& s, int& h, int& b) {
  h = it % HK;
  s = (it / HK) % p.splits;
  b = it / (p.splits * HK);
}
// Item it's (slice, head, request) in the walk order asked for, and its number of key blocks: with `lens`,
// the request's length is read from memory first (a dependent load before the page reads, as Cake's)
__device__ __forceinline__ int walk_of(const problem& p, int it, int head_first, const int* lens, int blocks, int& s, int& h, int& b) {
  if (head_first) item_of_head_first(p, it, s, h, b);
  else item_of(p, it, s, h, b);
  return lens ? (__ldg(lens + b) + BN - 1) / BN : blocks;
}

// tma_reader's flags: Cake's decode features, one at a time or together, to find what its loads-only probe
// pays against this reader
enum : int { F_Q = 1, F_SPLIT_KV = 2, F_PREFETCH = 4, F_PDL = 8, F_SYNC_END = 16, F_ALL = 31, F_MAP4D = 32 };

template <int STAGES>
__global__ void __launch_bounds__(160) tma_reader(problem p, const __grid_constant__ CUtensorMap mk, const __grid_constant__ CUtensorMap mv, int items,
                                                  int* sink, int head_first, const int* lens, int flags, const __grid_constant__ CUtensorMap mq,
                                                  const __grid_constant__ CUtensorMap mk4, const __grid_constant__ CUtensorMap mv4) {
  // (all in dynamic smem, as Cake's layout: the ring, Q's 16 KB, the barriers; no static smem, so that two
  // CTAs fit an SM as Cake's decode does: 112 KB each)
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* sq = smem + STAGES * STAGE_BYTES;  // Q: 16 KB after the ring
  u64* bars = reinterpret_cast<u64*>(sq + 16384);
  u64 *full = bars, *empty = bars + STAGES, *vfull = bars + 2 * STAGES, *vempty = bars + 3 * STAGES, &qfull = bars[4 * STAGES];
  const int tid = threadIdx.x;
  const bool split_kv = flags & F_SPLIT_KV;
  if (tid == 0) {
    for (int i = 0; i < STAGES; ++i) mbar_init(&full[i], 1), mbar_init(&empty[i], 1), mbar_init(&vfull[i], 1), mbar_init(&vempty[i], 1);
    mbar_init(&qfull, 1);
    asm volatile("fence.mbarrier_init.release.cluster;");
    if (flags & F_PREFETCH) {
      asm volatile("prefetch.tensormap [%0];" ::"l"(&mk) : "memory");
      asm volatile("prefetch.tensormap [%0];" ::"l"(&mv) : "memory");
      asm volatile("prefetch.tensormap [%0];" ::"l"(&mq) : "memory");
    }
  }
  __syncthreads();
  if (flags & F_PDL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int blocks = p.ctx / BN;
  if (tid > 128) {  // the producer warp's other lanes: nothing to do
  } else if (tid == 128) {  // producer
    u32 n = 0;
    for (int it = blockIdx.x; it < items; it += gridDim.x) {
      int s, h, b;
      const int nb = walk_of(p, it, head_first, lens, blocks, s, h, b);
      if (flags & F_Q) {  // Q's two 64-column boxes of 64 rows from row h * 4 (rows past H zero-filled), as Cake's
        mbar_expect_tx(&qfull, 2 * 64 * 128);
        for (int d = 0; d < 2; ++d) tma_3d(sq + d * 8192, &mq, &qfull, d * 64, h * 4, b);
      }
      for (int j = s; j < nb; j += p.splits, ++n) {
        const int st = n % STAGES;
        if (n >= STAGES) mbar_wait(&empty[st], ((n / STAGES) - 1) & 1);
        int page[PPB];
        for (int i = 0; i < PPB; ++i) page[i] = p.page_table[b * p.pages_per_req + j * PPB + i];
        unsigned char* base = smem + st * STAGE_BYTES;
        // one box: 16 keys x 64 columns of page i, part d, of K (v = 0) or V (v = 1); F_MAP4D: through Cake's
        // tensor map ([pages][page_size][HK][D], box {64, 1, 16, 1}) instead of the 3-D one
        auto box = [&](int v, int i, int d, u64* bar) {
          unsigned char* dst = base + v * (BN * D * 2) + d * (BN * 128) + i * (PS * 128);
          if (flags & F_MAP4D) tma_4d(dst, v ? &mv4 : &mk4, bar, d * 64, h, 0, page[i]);
          else tma_3d(dst, v ? &mv : &mk, bar, d * 64, h, page[i] * PS);
        };
        if (!split_kv) {  // K and V of the block in one stage, their boxes interleaved
          mbar_expect_tx(&full[st], STAGE_BYTES);
          for (int i = 0; i < PPB; ++i)
            for (int d = 0; d < 2; ++d) box(0, i, d, &full[st]), box(1, i, d, &full[st]);
        } else {  // Cake's order: every K box into the K stage, then the V stage acquired and its boxes
          mbar_expect_tx(&full[st], STAGE_BYTES / 2);
          for (int i = 0; i < PPB; ++i)
            for (int d = 0; d < 2; ++d) box(0, i, d, &full[st]);
          if (n >= STAGES) mbar_wait(&vempty[st], ((n / STAGES) - 1) & 1);
          mbar_expect_tx(&vfull[st], STAGE_BYTES / 2);
          for (int i = 0; i < PPB; ++i)
            for (int d = 0; d < 2; ++d) box(1, i, d, &vfull[st]);
        }
      }
    }
  } else {  // consumer warpgroup
    u32 n = 0;
    int acc = 0;
    for (int it = blockIdx.x; it < items; it += gridDim.x) {
      int s, h, b;
      const int nb = walk_of(p, it, head_first, lens, blocks, s, h, b);
      if (flags & F_Q) mbar_wait(&qfull, 0);
      for (int j = s; j < nb; j += p.splits, ++n) {
        const int st = n % STAGES;
        mbar_wait(&full[st], (n / STAGES) & 1);
        acc += reinterpret_cast<const int*>(smem + st * STAGE_BYTES)[tid];
        if (split_kv) {  // Cake's loads-only consumer: K released, then V waited for and released
          if (tid == 0) mbar_arrive(&empty[st]);
          mbar_wait(&vfull[st], (n / STAGES) & 1);
          acc += reinterpret_cast<const int*>(smem + st * STAGE_BYTES + STAGE_BYTES / 2)[tid];
          if (tid == 0) mbar_arrive(&vempty[st]);
          continue;
        }
        __syncwarp();
        asm volatile("bar.sync 1, 128;");
        if (tid == 0) mbar_arrive(&empty[st]);
      }
    }
    if (acc == 0x7fffffff) sink[0] = acc;
  }
  if (flags & F_SYNC_END) __syncthreads();
}

template <int STAGES>
__global__ void __launch_bounds__(256) cpasync_reader(problem p, int items, int* sink) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);  // 128-byte swizzle: 1024-aligned boxes
  __shared__ u64 full[STAGES], empty[STAGES];
  const int tid = threadIdx.x;
  if (tid == 0) {
    for (int i = 0; i < STAGES; ++i) mbar_init(&full[i], 128), mbar_init(&empty[i], 1);
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  const int blocks = p.ctx / BN;
  if (tid >= 128) {  // producer warpgroup: 2048 16-byte chunks per stage, 16 per thread
    const int t = tid - 128;
    u32 n = 0;
    for (int it = blockIdx.x; it < items; it += gridDim.x) {
      int s, h, b;
      item_of(p, it, s, h, b);
      for (int j = s; j < blocks; j += p.splits, ++n) {
        const int st = n % STAGES;
        if (n >= STAGES) mbar_wait(&empty[st], ((n / STAGES) - 1) & 1);
        unsigned char* base = smem + st * STAGE_BYTES;
        // chunk c of 1024 per tensor: key row r = c / 16 (64 rows), 16-byte column q = c % 16
        for (int u = 0; u < 8; ++u) {
          const int c = u * 128 + t, r = c / 16, q = c % 16;
          const int page = p.page_table[b * p.pages_per_req + j * PPB + r / PS];
          const size_t off = ((static_cast<size_t>(page) * PS + r % PS) * HK + h) * (D * 2) + q * 16;
          cp16(base + c * 16, static_cast<const char*>(p.k) + off);
          cp16(base + BN * D * 2 + c * 16, static_cast<const char*>(p.v) + off);
        }
        cp_arrive(&full[st]);
      }
    }
  } else {
    u32 n = 0;
    int acc = 0;
    for (int it = blockIdx.x; it < items; it += gridDim.x) {
      int s, h, b;
      item_of(p, it, s, h, b);
      for (int j = s; j < blocks; j += p.splits, ++n) {
        const int st = n % STAGES;
        mbar_wait(&full[st], (n / STAGES) & 1);
        acc += reinterpret_cast<const int*>(smem + st * STAGE_BYTES)[tid];
        asm volatile("bar.sync 1, 128;");
        if (tid == 0) mbar_arrive(&empty[st]);
      }
    }
    if (acc == 0x7fffffff) sink[0] = acc;
  }
}

__global__ void __launch_bounds__(256) ldg_reader(problem p, int items, int* sink) {
  const int blocks = p.ctx / BN, t = threadIdx.x;
  u32 acc = 0;
  for (int it = blockIdx.x; it < items; it += gridDim.x) {
    int s, h, b;
    item_of(p, it, s, h, b);
    for (int j = s; j < blocks; j += p.splits) {
      // 64 keys x 256 bytes x (K, V) = 2048 16-byte vectors: 8 per thread, all in flight together
      uint4 x[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int c = (u % 4) * 256 + t, r = c / 16, q = c % 16;
        const int page = __ldg(p.page_table + b * p.pages_per_req + j * PPB + r / PS);
        const size_t off = ((static_cast<size_t>(page) * PS + r % PS) * HK + h) * (D * 2) + q * 16;
        const char* src = static_cast<const char*>(u < 4 ? p.k : p.v) + off;
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(x[u].x), "=r"(x[u].y), "=r"(x[u].z), "=r"(x[u].w) : "l"(src));
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) acc += x[u].x ^ x[u].y ^ x[u].z ^ x[u].w;
    }
  }
  if (acc == 0x7fffffffu) sink[0] = static_cast<int>(acc);
}

static CUtensorMap make_map4(const void* base, int pages) {
  CUtensorMap m;
  const cuuint64_t dims[4] = {D, HK, PS, static_cast<cuuint64_t>(pages)};
  const cuuint64_t strides[3] = {D * 2, static_cast<cuuint64_t>(HK) * D * 2, static_cast<cuuint64_t>(PS) * HK * D * 2};
  const cuuint32_t box[4] = {64, 1, PS, 1}, es[4] = {1, 1, 1, 1};
  CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<void*>(base), dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) std::fprintf(stderr, "cuTensorMapEncodeTiled (4-D): %d\n", static_cast<int>(r)), std::exit(1);
  return m;
}
static CUtensorMap make_map(const void* base, int pages) {
  CUtensorMap m;
  const cuuint64_t dims[3] = {D, HK, static_cast<cuuint64_t>(pages) * PS};
  const cuuint64_t strides[2] = {D * 2, static_cast<cuuint64_t>(HK) * D * 2};
  const cuuint32_t box[3] = {64, 1, PS}, es[3] = {1, 1, 1};
  CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) std::fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", static_cast<int>(r)), std::exit(1);
  return m;
}

int main(int argc, char** argv) {
  const bool gap = argc > 4 && std::string(argv[4]) == "gap";
  const int B = argc > 1 ? std::atoi(argv[1]) : 64, ctx = argc > 2 ? std::atoi(argv[2]) : 4096, splits = argc > 3 ? std::atoi(argv[3]) : 4;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const int ppr = ctx / PS, pages = B * ppr;
  const size_t bytes = static_cast<size_t>(pages) * PS * HK * D * 2;
  std::vector<int> pt(pages);
  std::iota(pt.begin(), pt.end(), 0);
  std::shuffle(pt.begin(), pt.end(), std::mt19937(7));
  int *dpt, *sink;
  void *dk, *dv, *flush;
  CK(cudaMalloc(&dpt, pages * 4));
  CK(cudaMalloc(&dk, bytes));
  CK(cudaMalloc(&dv, bytes));
  CK(cudaMalloc(&sink, 4));
  const size_t flush_bytes = 256u << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemcpy(dpt, pt.data(), pages * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(dk, 1, bytes));
  CK(cudaMemset(dv, 2, bytes));
  problem p{B, ctx, splits, ppr, dpt, dk, dv};
  const CUtensorMap mk = make_map(dk, pages), mv = make_map(dv, pages), mk4 = make_map4(dk, pages), mv4 = make_map4(dv, pages);
  void* dq;
  CK(cudaMalloc(&dq, static_cast<size_t>(B) * 32 * D * 2));
  CK(cudaMemset(dq, 0, static_cast<size_t>(B) * 32 * D * 2));
  CUtensorMap mq;
  {
    const cuuint64_t dims[3] = {D, 32, static_cast<cuuint64_t>(B)};
    const cuuint64_t strides[2] = {D * 2, 32 * D * 2};
    const cuuint32_t box[3] = {64, 64, 1}, es[3] = {1, 1, 1};
    if (cuTensorMapEncodeTiled(&mq, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, dq, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      std::fprintf(stderr, "cuTensorMapEncodeTiled (Q) failed\n"), std::exit(1);
  }
  const int items = splits * HK * B;
  std::vector<int> lens_h(B, ctx);
  int* dlens;
  CK(cudaMalloc(&dlens, B * 4));
  CK(cudaMemcpy(dlens, lens_h.data(), B * 4, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto time = [&](const char* name, int grid, auto launch) {
    std::vector<float> ms;
    for (int r = 0; r < 23; ++r) {
      CK(cudaMemsetAsync(flush, r, flush_bytes));
      CK(cudaEventRecord(e0));
      launch(grid);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float t;
      CK(cudaEventElapsedTime(&t, e0, e1));
      if (r >= 3) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    std::printf("probe B%-4d ctx%-6d splits %-3d %-34s grid %-6d %8.4f ms %7.1f GB/s\n", B, ctx, splits, name, grid, med, 2.0 * bytes / (med * 1e-3) / 1e9);
    std::fflush(stdout);
  };
  auto tma = [&](auto stages_c, int per_sm, bool persistent, int head_first = 0, const int* lens = nullptr, int flags = 0) {
    constexpr int S = decltype(stages_c)::value;
    const int smem = S * STAGE_BYTES + 16384 + 8 * (4 * S + 1);  // the ring, Q's 16 KB (as Cake's), the barriers
    CK(cudaFuncSetAttribute(tma_reader<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    char name[112];
    std::snprintf(name, sizeof name, "tma stages %d%s%s%s%s%s%s%s%s%s", S, persistent ? (per_sm == 1 ? " persistent 1/SM" : " persistent 2/SM") : "",
                  head_first ? " head-first" : "", lens ? " len-read" : "", flags & F_Q ? " +q" : "", flags & F_SPLIT_KV ? " +kv" : "",
                  flags & F_PREFETCH ? " +prefetch" : "", flags & F_PDL ? " +pdl" : "", flags & F_SYNC_END ? " +sync" : "", flags & F_MAP4D ? " +4d" : "");
    time(name, persistent ? sms * per_sm : items, [&](int g) { tma_reader<S><<<g, 160, smem>>>(p, mk, mv, items, sink, head_first, lens, flags, mq, mk4, mv4); });
  };
  auto cpa = [&](auto stages_c, int per_sm, bool persistent) {
    constexpr int S = decltype(stages_c)::value;
    const int smem = S * STAGE_BYTES + 1024;
    CK(cudaFuncSetAttribute(cpasync_reader<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    char name[64];
    std::snprintf(name, sizeof name, "cpasync stages %d%s", S, persistent ? (per_sm == 1 ? " persistent 1/SM" : " persistent 2/SM") : "");
    time(name, persistent ? sms * per_sm : items, [&](int g) { cpasync_reader<S><<<g, 256, smem>>>(p, items, sink); });
  };
  using s2 = std::integral_constant<int, 2>;
  using s3 = std::integral_constant<int, 3>;
  using s4 = std::integral_constant<int, 4>;
  using s6 = std::integral_constant<int, 6>;
  if (gap) {  // Cake's decode features one at a time, then together (with its walk order and length read)
    for (int f : {0, int(F_MAP4D), int(F_Q), int(F_SPLIT_KV), int(F_PREFETCH), int(F_PDL), int(F_SYNC_END), int(F_ALL)})
      tma(std::integral_constant<int, 3>{}, 2, false, 0, nullptr, f);
    tma(std::integral_constant<int, 3>{}, 2, false, 1, dlens, F_ALL | F_MAP4D);
    return 0;
  }
  tma(s3{}, 2, false);
  tma(s3{}, 2, false, 1);
  tma(s3{}, 2, false, 0, dlens);
  tma(s3{}, 2, false, 1, dlens);
  tma(s2{}, 2, false);
  tma(s4{}, 2, false);
  tma(s3{}, 2, true);
  tma(s6{}, 1, true);
  cpa(s3{}, 2, false);
  cpa(s2{}, 2, false);
  cpa(s4{}, 2, false);
  cpa(s3{}, 2, true);
  cpa(s6{}, 1, true);
  time("ldg one CTA per item", items, [&](int g) { ldg_reader<<<g, 256>>>(p, items, sink); });
  time("ldg persistent 4/SM", sms * 4, [&](int g) { ldg_reader<<<g, 256>>>(p, items, sink); });
  time("ldg persistent 8/SM", sms * 8, [&](int g) { ldg_reader<<<g, 256>>>(p, items, sink); });
  return 0;
}
