// Exact kNN search schedules on the GPU, alone (no peer: the same-process comparison with PyTorch is
// bench/peers/bench_peers.py --family knn). For each shape, the schedule search_config_for picks and,
// with --sweep, the other schedules that fit (queries per CTA, database tile, stages, split count),
// timed with CUDA events, L2 flushed before each run, median of --runs; TFLOP/s of the distance GEMM
// (2 Q N D). The whole search is timed (norms, search, merge). Written to choose search_config_for, which
// has not been tuned on the H200 yet (docs/knn.md).
//   cake_bench_knn [--runs N] [--sweep] [--shapes N]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/knn/knn.hpp"

using namespace cake;

int main(int argc, char** argv) {
  int runs = 20;
  bool sweep = false;
  int max_shapes = 1 << 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--sweep")) sweep = true;
    else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc) max_shapes = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: cake_bench_knn [--runs N] [--sweep] [--shapes N]\n");
      return 2;
    }
  }
  if (!jit::driver::available()) {
    std::printf("SKIPPED: %s\n", jit::driver::unavailable_reason().c_str());
    return 0;
  }
  struct shape {
    long long Q, N, D;
    int k;
    bool held_out;
  };
  const shape shapes[] = {{4096, 1 << 20, 128, 10, false}, {4096, 1 << 20, 128, 100, false}, {1024, 262144, 64, 32, true}, {16384, 1 << 20, 128, 10, true}};
  auto rng = harness::random_source::fresh();
  for (const shape& s : shapes) {
    if (max_shapes-- <= 0) break;
    auto x = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(s.Q * s.D), rng);
    auto y = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(s.N * s.D), rng);
    auto dx = jit::to_device(x), dy = jit::to_device(y);
    jit::device_buffer dd(static_cast<std::size_t>(4 * s.Q * s.k)), di(static_cast<std::size_t>(4 * s.Q * s.k));
    const double flops = 2.0 * s.Q * s.N * s.D;
    const auto chosen = knn::search_config_for(s.Q, s.N, s.D, s.k, knn::metric::l2);
    std::vector<kernels::knn_search_config> cands{chosen};
    if (sweep) {
      struct form {
        int wgs, rows, bn;
      };
      for (form f : {form{2, 128, 128}, form{2, 64, 128}, form{2, 64, 64}, form{1, 128, 128}, form{1, 64, 128}})
        for (int stages : {3, 4, 6, 8})
          for (int split_scale : {1, 2, 4}) {  // the chosen split count, and 2x / 4x fewer CTAs per query tile
            kernels::knn_search_config c = chosen;
            c.wgs = f.wgs, c.rows = f.rows, c.bn = f.bn, c.stages = stages;
            c.splits = chosen.splits * (c.wgs * c.rows) / (chosen.wgs * chosen.rows) / split_scale;
            if (c.splits < 1) c.splits = 1;
            const program p = kernels::knn_search_sm90<bf16>(c);
            if (p.errors.empty() && plan::plan_smem(p).fits() && c != chosen) cands.push_back(c);
          }
    }
    for (std::size_t i = 0; i < cands.size(); ++i) {
      const auto& c = cands[i];
      try {
        jit::device_buffer ws(static_cast<std::size_t>(knn::search_workspace_bytes_with(c, s.Q, s.N, s.D, s.k)));
        auto work = [&](CUstream st) {
          knn::search_with(c, dx.address(), dy.address(), static_cast<float*>(dd.address()), static_cast<std::int32_t*>(di.address()), ws.address(), s.Q, s.N,
                           s.D, s.k, knn::input_type::bf16, knn::metric::l2, st);
        };
        harness::timing_options o;
        o.runs = runs;
        const auto t = harness::time_gpu(work, o);
        std::printf("Q%lld N%lld D%lld k%d%s | %s wgs %d rows %d bn %d stages %d splits %d | %.4f ms %.1f TFLOP/s\n", s.Q, s.N, s.D, s.k,
                    s.held_out ? " (held out)" : "", i == 0 ? "chosen" : "sweep ", c.wgs, c.rows, c.bn, c.stages, c.splits, t.median_ms,
                    flops / t.median_ms / 1e9);
      } catch (const std::exception& e) {
        std::printf("Q%lld N%lld D%lld k%d | wgs %d rows %d bn %d stages %d splits %d | error: %.150s\n", s.Q, s.N, s.D, s.k, c.wgs, c.rows, c.bn, c.stages,
                    c.splits, e.what());
      }
      std::fflush(stdout);
    }
  }
}
