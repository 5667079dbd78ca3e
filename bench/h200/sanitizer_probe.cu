// What compute-sanitizer's racecheck and synccheck make of the synchronization patterns Cake lowers to
// (issue 10, blind spot 8: the four "sanitizer only" rows of the corpus cross-check). Each kernel is a
// minimal hand-written form of one pattern, checked for its result on the host, so that a report can be
// told apart from a wrong answer. Built and run by step `sanprobe` of bench/h200/session.sh:
//   nvcc -std=c++17 -arch=sm_90a -o sanitizer_probe sanitizer_probe.cu
//   sanitizer_probe [kernel]            (no argument: every kernel, one line each)
// Cluster barriers (PTX ISA, barrier.cluster: ".aligned: all threads in the warp must execute the same
// barrier.cluster instruction"; per warp, not per CTA):
//   split_aligned   two warps, each in its own branch (as two warp roles are), .aligned arrive + wait
//   same_aligned    the same, one instruction for the whole CTA
//   split_plain     two branches, without .aligned
//   split_leader    split_aligned after an elected thread's mbarrier.init + fence.mbarrier_init (Cake's
//                   manual_barrier_init prologue)
//   split_barsync   two branches, each a non-aligned CTA barrier (barrier.sync 0) instead
// each of these launched as clusters of 2 CTAs, with the suffix _cluster1 as explicit clusters of one CTA,
// and with the suffix _nocluster without a cluster attribute (the implicit one-CTA cluster, as the corpus's
// non-cluster kernels run)
// Distributed shared memory, partial sums of the 2 CTAs of a cluster read through ld.shared::cluster:
//   dsmem_mbar_cta      Cake's cluster_sum: st.shared, bar.sync, elected remote mbarrier arrive
//                       (release.cluster), mbarrier.try_wait (default sem: acquire at CTA scope), fence.acq_rel.cluster
//   dsmem_mbar_cluster  the same with mbarrier.try_wait.acquire.cluster
//   dsmem_barrier       st.shared, barrier.cluster.arrive.release + wait.acquire, ld.shared::cluster
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using u32 = unsigned;

__device__ __forceinline__ u32 smem_addr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ u32 cta_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ u32 mapa(u32 a, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}
__device__ __forceinline__ void arrive_aligned() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void wait_aligned() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
__device__ __forceinline__ void arrive_plain() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
__device__ __forceinline__ void wait_plain() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }
__device__ __forceinline__ void mbar_init(u32 bar, u32 count) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory"); }
__device__ __forceinline__ void fence_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void remote_arrive(u32 cluster_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar) : "memory");
}
template <bool ClusterScope>
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
  u32 done = 0;
  while (!done) {
    if (ClusterScope)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    else
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
}
__device__ __forceinline__ void named_sync(u32 id, u32 n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void st_shared(u32 a, float v) { asm volatile("st.shared.f32 [%0], %1;" ::"r"(a), "f"(v) : "memory"); }
__device__ __forceinline__ float ld_cluster(u32 a) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
  return v;
}

// Two warps in two branches (the shape of two warp roles): every thread writes its own slot first so that
// the compiler keeps the branches apart.
__device__ __forceinline__ void barsync_plain() { asm volatile("barrier.sync 0;" ::: "memory"); }

template <int Form>  // 0 split .aligned, 1 one .aligned instruction, 2 split plain, 3 split after leader init, 4 split barrier.sync
__global__ void cluster_barrier_kernel(int* out) {
  __shared__ alignas(8) unsigned long long bar;
  const u32 warp = threadIdx.x / 32;
  const int slot = blockIdx.x * blockDim.x + threadIdx.x;
  if (Form == 3 && warp == 0 && threadIdx.x % 32 == 0) {
    mbar_init(smem_addr(&bar), 1);
    fence_init();
  }
  if (Form == 1) {
    out[slot] = 1;
    arrive_aligned();
    wait_aligned();
  } else if (warp == 0) {
    out[slot] = 2;
    if (Form == 4) barsync_plain(); else if (Form != 2) { arrive_aligned(); wait_aligned(); } else { arrive_plain(); wait_plain(); }
  } else {
    out[slot] = 3;
    if (Form == 4) barsync_plain(); else if (Form != 2) { arrive_aligned(); wait_aligned(); } else { arrive_plain(); wait_plain(); }
  }
}

constexpr int kRounds = 4, kThreads = 128;

// Each CTA of a 2-CTA cluster writes a partial per thread and round; both read the sum of the two.
template <int Form>  // 0 mbarrier acquire.cta + fence, 1 mbarrier acquire.cluster, 2 barrier.cluster
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads) dsmem_kernel(float* out) {
  __shared__ alignas(16) float scratch[kThreads];
  __shared__ alignas(8) unsigned long long bars[2];  // ready, done
  const u32 tid = threadIdx.x, rank = cta_rank();
  const u32 ready = smem_addr(&bars[0]), done = smem_addr(&bars[1]), mine = smem_addr(&scratch[tid]);
  if (tid == 0) {
    mbar_init(ready, 2);
    mbar_init(done, 2);
    fence_init();
  }
  arrive_aligned();
  wait_aligned();
  for (int r = 0; r < kRounds; ++r) {
    const float partial = static_cast<float>((blockIdx.x + 1) * 1000 + r * 10) + tid * 0.5f;
    if (Form == 2) {
      st_shared(mine, partial);
      arrive_aligned();
      wait_aligned();
      const float sum = ld_cluster(mapa(mine, 0)) + ld_cluster(mapa(mine, 1));
      arrive_aligned();  // every peer has read this round's partial before it is overwritten
      wait_aligned();
      out[(blockIdx.x * kRounds + r) * kThreads + tid] = sum;
      continue;
    }
    if (r > 0) {
      mbar_wait<Form == 1>(done, (r - 1) & 1);
      if (Form == 0) asm volatile("fence.acq_rel.cluster;" ::: "memory");
    }
    st_shared(mine, partial);
    named_sync(1, kThreads);
    if (tid == 0)
      for (u32 q = 0; q < 2; ++q) remote_arrive(mapa(ready, q));
    mbar_wait<Form == 1>(ready, r & 1);
    if (Form == 0) asm volatile("fence.acq_rel.cluster;" ::: "memory");
    const float sum = ld_cluster(mapa(mine, 0)) + ld_cluster(mapa(mine, 1));
    named_sync(1, kThreads);
    if (tid == 0)
      for (u32 q = 0; q < 2; ++q) remote_arrive(mapa(done, q));
    out[(blockIdx.x * kRounds + r) * kThreads + tid] = sum;
  }
  arrive_aligned();  // no CTA leaves while its peer may still read its shared memory or arrive on it
  wait_aligned();
}

constexpr int kClusters = 8, kCtas = 2 * kClusters;

bool run_barrier(const char* name, void (*kernel)(int*), int expect_mix, int cluster) {
  int* d = nullptr;
  const int threads = 64, n = kCtas * threads;
  cudaMalloc(&d, n * sizeof(int));
  cudaMemset(d, 0xff, n * sizeof(int));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(kCtas);
  cfg.blockDim = dim3(threads);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = cluster ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, d);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  std::vector<int> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const int want = expect_mix ? ((i % threads) < 32 ? 2 : 3) : 1;
    bad += h[i] != want;
  }
  std::printf("%-20s %s, %d wrong of %d\n", name, e == cudaSuccess ? "ran" : cudaGetErrorString(e), bad, n);
  return e == cudaSuccess && bad == 0;
}

bool run_dsmem(const char* name, void (*kernel)(float*)) {
  float* d = nullptr;
  const int n = kCtas * kRounds * kThreads;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemset(d, 0xff, n * sizeof(float));
  kernel<<<kCtas, kThreads>>>(d);
  cudaError_t e = cudaDeviceSynchronize();
  std::vector<float> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  int bad = 0;
  for (int b = 0; b < kCtas; ++b)
    for (int r = 0; r < kRounds; ++r)
      for (int t = 0; t < kThreads; ++t) {
        const int c0 = b / 2 * 2;
        float want = 0;
        for (int q = 0; q < 2; ++q) want += static_cast<float>((c0 + q + 1) * 1000 + r * 10) + t * 0.5f;
        bad += h[(b * kRounds + r) * kThreads + t] != want;
      }
  std::printf("%-20s %s, %d wrong of %d\n", name, e == cudaSuccess ? "ran" : cudaGetErrorString(e), bad, n);
  return e == cudaSuccess && bad == 0;
}

int main(int argc, char** argv) {
  const char* only = argc > 1 ? argv[1] : nullptr;
  auto want = [&](const char* k) { return !only || std::strcmp(only, k) == 0; };
  bool ok = true;
  const char* barrier_names[] = {"split_aligned", "same_aligned", "split_plain", "split_leader", "split_barsync"};
  void (*barrier_kernels[])(int*) = {cluster_barrier_kernel<0>, cluster_barrier_kernel<1>, cluster_barrier_kernel<2>, cluster_barrier_kernel<3>,
                                     cluster_barrier_kernel<4>};
  for (int f = 0; f < 5; ++f)
    for (int cluster = 2; cluster >= 0; --cluster) {
      const std::string name = std::string(barrier_names[f]) + (cluster == 2 ? "" : cluster == 1 ? "_cluster1" : "_nocluster");
      if (want(name.c_str())) ok &= run_barrier(name.c_str(), barrier_kernels[f], f != 1, cluster);
    }
  if (want("dsmem_mbar_cta")) ok &= run_dsmem("dsmem_mbar_cta", dsmem_kernel<0>);
  if (want("dsmem_mbar_cluster")) ok &= run_dsmem("dsmem_mbar_cluster", dsmem_kernel<1>);
  if (want("dsmem_barrier")) ok &= run_dsmem("dsmem_barrier", dsmem_kernel<2>);
  return ok ? 0 : 1;
}
