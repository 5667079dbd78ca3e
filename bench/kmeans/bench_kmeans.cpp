// k-means assignment schedules on the GPU, alone (no peer: the same-process comparison with
// flash-kmeans is bench/peers/bench_peers.py --family kmeans). For each shape, every candidate schedule
// (parts fixed by D; consumer warpgroups, rows per warpgroup, centroid tile, stages) and the one
// assign_config_for picks, timed with CUDA events, L2 flushed before each run, median of --runs;
// TFLOP/s of the distance GEMM (2 B N K D). Used to choose assign_config_for; shapes marked held out
// were not used for that choice.
//   cake_bench_kmeans [--runs N] [--sweep] [--shapes N]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/kmeans/kmeans.hpp"

using namespace cake;

int main(int argc, char** argv) {
  int runs = 20;
  bool sweep = false;
  int max_shapes = 1 << 20;  // --shapes N: only the first N shapes (profiling)
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--sweep")) sweep = true;
    else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc) max_shapes = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: cake_bench_kmeans [--runs N] [--sweep] [--shapes N]\n");
      return 2;
    }
  }
  if (!jit::driver::available()) {
    std::printf("SKIPPED: %s\n", jit::driver::unavailable_reason().c_str());
    return 0;
  }
  struct shape {
    long long B, N, K, D;
    bool held_out;
  };
  const shape shapes[] = {{32, 65536, 1024, 128, false}, {1, 1048576, 4096, 128, false}, {8, 262144, 16384, 64, false},
                          {2, 300000, 2000, 96, true},   {16, 20000, 512, 256, true},    {1, 200000, 1000, 512, true}};
  auto rng = harness::random_source::fresh();
  for (const shape& s : shapes) {
    if (max_shapes-- <= 0) break;
    auto x = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(s.B * s.N * s.D), rng);
    auto c = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(s.B * s.K * s.D), rng);
    std::vector<float> cn(static_cast<std::size_t>(s.B * s.K), 1.0f);
    auto dx = jit::to_device(x), dc = jit::to_device(c), dn = jit::to_device(cn);
    jit::device_buffer di(static_cast<std::size_t>(4 * s.B * s.N));
    const double flops = 2.0 * s.B * s.N * s.K * s.D;
    std::vector<kernels::kmeans_assign_config> cands{kmeans::assign_config_for(s.D, kmeans::metric::l2)};
    if (sweep && !s.held_out) {
      struct form {
        int wgs, rows, bn;
      };
      for (form f : {form{2, 128, 128}, form{3, 64, 128}, form{2, 64, 128}})
        for (int stages : {4, 8}) {
          kernels::kmeans_assign_config k = cands[0];
          k.wgs = f.wgs, k.rows = f.rows, k.bn = f.bn, k.stages = stages;
          if (kernels::kmeans_assign_smem(k) <= 225 * 1024 && k != cands[0]) cands.push_back(k);
        }
    }
    for (std::size_t i = 0; i < cands.size(); ++i) {
      const auto& k = cands[i];
      try {
        auto work = [&](CUstream st) {
          kmeans::assign_with(k, dx.address(), dc.address(), static_cast<const float*>(dn.address()), static_cast<std::int32_t*>(di.address()), s.B, s.N, s.K,
                              s.D, kmeans::input_type::bf16, kmeans::metric::l2, st);
        };
        harness::timing_options o;
        o.runs = runs;
        const auto t = harness::time_gpu(work, o);
        std::printf("B%lld N%lld K%lld D%lld%s | %s wgs %d rows %d bn %d stages %d | %.4f ms %.1f TFLOP/s\n", s.B, s.N, s.K, s.D,
                    s.held_out ? " (held out)" : "", i == 0 ? "chosen" : "sweep ", k.wgs, k.rows, k.bn, k.stages, t.median_ms, flops / t.median_ms / 1e9);
      } catch (const std::exception& e) {
        std::printf("B%lld N%lld K%lld D%lld | wgs %d rows %d bn %d stages %d | error: %.150s\n", s.B, s.N, s.K, s.D, k.wgs, k.rows, k.bn, k.stages, e.what());
      }
      std::fflush(stdout);
    }
  }
}
