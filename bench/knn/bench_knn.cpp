// Exact kNN search schedules on the GPU, alone (no peer: the same-process comparison with PyTorch is
// bench/peers/bench_peers.py --family knn). For each shape, the schedule search_config_for picks and,
// with --sweep, the other schedules that fit (queries per CTA, database tile, stages, split count),
// timed with CUDA events, L2 flushed before each run, median of --runs; TFLOP/s of the distance GEMM
// (2 Q N D). The whole search is timed (norms, search, merge). search_config_for was chosen from it
// (docs/knn.md, "The schedule"; bench/results/h200/knn_sweep.json).
//   cake_bench_knn [--runs N] [--sweep] [--shapes N] [--k K] [--json FILE]
//   (--k: only the shapes of that k, e.g. to profile one)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>
#include <cake/jit/device_memory.hpp>

#include "../common.hpp"
#include "kernels/knn/knn.hpp"

using namespace cake;

int main(int argc, char** argv) {
  int runs = 20;
  bool sweep = false;
  int max_shapes = 1 << 20;
  int only_k = 0;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--sweep")) sweep = true;
    else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc) max_shapes = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--k") && i + 1 < argc) only_k = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else {
      std::fprintf(stderr, "usage: cake_bench_knn [--runs N] [--sweep] [--shapes N] [--k K] [--json FILE]\n");
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
  struct row {
    long long Q, N, D;
    int k;
    bool held_out, chosen;
    kernels::knn_search_config c;
    double ms, tflops;
  };
  std::vector<row> rows;
  auto rng = harness::random_source::fresh();
  auto write_json = [&] {  // after every shape, so that a run cut short keeps what it measured
    if (json.empty()) return;
    std::ofstream f(json);
    f << "{\n  \"gpu\": \"" << jit::driver::get().device(0).name << "\", \"date\": \"" << cake_bench::today() << "\",\n  \"command\": \"cake_bench_knn --runs "
      << runs << (sweep ? " --sweep" : "") << (only_k ? " --k " + std::to_string(only_k) : std::string()) << "\",\n"
      << "  \"method\": \"CUDA events around norms + search + merge, L2 flushed before each run, median of runs; bf16, l2; TFLOP/s of 2 Q N D\",\n"
      << "  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      f << "    {\"kernel\": \"knn_search\", \"shape\": {\"Q\": " << r.Q << ", \"N\": " << r.N << ", \"D\": " << r.D << ", \"k\": " << r.k
        << "}, \"tuned\": " << (r.held_out ? "false" : "true") << ", \"wgs\": " << r.c.wgs << ", \"rows\": " << r.c.rows << ", \"bn\": " << r.c.bn
        << ", \"stages\": " << r.c.stages << ", \"splits\": " << r.c.splits << ", \"chosen\": " << (r.chosen ? "true" : "false") << ", \"ms\": " << r.ms
        << ", \"tflops\": " << r.tflops << "}" << (i + 1 < rows.size() ? ",\n" : "\n");
    }
    f << "  ]\n}\n";
  };
  for (const shape& s : shapes) {
    if (only_k > 0 && s.k != only_k) continue;
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
        for (int stages : {4, chosen.stages})  // depth moved no schedule by more than 1% (first sweep)
          for (int eighths : {16, 8, 4, 2}) {  // split counts of 2x, 1x, 1/2x and 1/4x the chosen grid's CTAs
            kernels::knn_search_config c = chosen;
            c.wgs = f.wgs, c.rows = f.rows, c.bn = f.bn, c.stages = stages;
            c.splits = static_cast<int>(static_cast<long long>(chosen.splits) * (c.wgs * c.rows) * eighths / (8LL * chosen.wgs * chosen.rows));
            if (c.splits < 1 || c.splits > 64) continue;
            const program p = kernels::knn_search_sm90<bf16>(c);
            if (p.errors.empty() && plan::plan_smem(p).fits() && c != chosen &&
                std::find(cands.begin(), cands.end(), c) == cands.end())
              cands.push_back(c);
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
        rows.push_back({s.Q, s.N, s.D, s.k, s.held_out, i == 0, c, t.median_ms, flops / t.median_ms / 1e9});
        std::printf("Q%lld N%lld D%lld k%d%s | %s wgs %d rows %d bn %d stages %d splits %d | %.4f ms %.1f TFLOP/s\n", s.Q, s.N, s.D, s.k,
                    s.held_out ? " (held out)" : "", i == 0 ? "chosen" : "sweep ", c.wgs, c.rows, c.bn, c.stages, c.splits, t.median_ms,
                    flops / t.median_ms / 1e9);
      } catch (const std::exception& e) {
        std::printf("Q%lld N%lld D%lld k%d | wgs %d rows %d bn %d stages %d splits %d | error: %.150s\n", s.Q, s.N, s.D, s.k, c.wgs, c.rows, c.bn, c.stages,
                    c.splits, e.what());
      }
      std::fflush(stdout);
    }
    write_json();
  }
}
