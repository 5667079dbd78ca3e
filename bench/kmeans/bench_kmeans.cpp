// k-means assignment schedules on the GPU, alone (no peer: the same-process comparison with
// flash-kmeans is bench/peers/bench_peers.py --family kmeans). For each shape, every candidate schedule
// (parts fixed by D; consumer warpgroups, rows per warpgroup, centroid tile, stages) and the one
// assign_config_for picks, timed with CUDA events, L2 flushed before each run, median of --runs;
// TFLOP/s of the distance GEMM (2 B N K D). Used to choose assign_config_for; shapes marked held out
// were not used for that choice.
//   cake_bench_kmeans [--runs N] [--sweep] [--lazy] [--after-wait] [--overlap] [--cn-stage] [--probe] [--shapes N] [--pick I]
//       --lazy / --after-wait: each candidate also with the other setting of kmeans_assign_config::lazy_index /
//       pass_after_wait; --overlap: each candidate also in the overlapped form (config.overlap); --cn-stage: each
//       also with c_norm carried in the centroid stages (config.cn_in_stage); --probe: the
//       chosen form (and the first overlapped one) also as MMA probes (config.mma_probe); --pick I: only
//       candidate I of each shape (ncu). Every candidate's idx is compared with the first one's.
//   cake_bench_kmeans --update [--runs N] [--json FILE] [--driver VERSION]
//       the centroid update alone, three ways: scatter with f32 atomic sums, scatter with the deterministic
//       i64 fixed-point sums (docs/kmeans.md, "Deterministic sums"), and sorted (a counting sort, then plain
//       segment sums: "The sorted update"); on the four shapes and two held out (bf16 and f16), after
//       a uniform and a skewed random assignment; L2 flushed, median of --runs. The sorted centroids are
//       compared with the scatter's after one update from the same centroids.
//   cake_bench_kmeans --step [--runs N] [--pick I]
//       one Lloyd iteration as kmeans::step (the scatter fused into the assignment) against the two calls
//       assign + update, on the four shapes and two held-out ones (bf16 and f16), from the same
//       centroids: the indices must be equal and the centroids within rounding; L2 flushed, median of --runs.
//       --pick I: only shape I, bf16 (ncu: the first kmeans_assign launch is the two calls', the second the fused one)
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/kmeans/kmeans.hpp"

using namespace cake;

namespace {

// The update alone: scatter (f32 atomics), deterministic scatter (i64) and sorted (counting sort + segment
// sums), on the shapes and two held out, after a uniform or a skewed assignment (see the top).
int bench_update(int runs, const std::string& json, const std::string& driver) {
  struct shape {
    long long B, N, K, D;
    bool held_out;
  };
  const shape shapes[] = {{32, 65536, 1024, 128, false}, {1, 1048576, 4096, 128, false}, {1, 1048576, 65536, 128, false},
                          {8, 262144, 16384, 64, false},  {2, 300000, 2000, 96, true},     {16, 20000, 512, 256, true}};
  auto rng = harness::random_source::fresh();
  std::printf("seed %llu\n", static_cast<unsigned long long>(rng.seed()));
  std::ostringstream rows;
  const auto& dev = jit::driver::get().device(0);
  for (const auto t : {kmeans::input_type::bf16, kmeans::input_type::f16}) {
    for (const shape& s : shapes) {
      auto x = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(s.B * s.N * s.D), rng);  // bits of N(0, 1)-ish values
      auto c = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(s.B * s.K * s.D), rng);
      auto dx = jit::to_device(x), dc = jit::to_device(c);
      jit::device_buffer dn(static_cast<std::size_t>(4 * s.B * s.K)), ds(static_cast<std::size_t>(4 * s.B * s.K)),
          ws(static_cast<std::size_t>(std::max(kmeans::update_workspace_bytes(s.B, s.K, s.D), kmeans::sorted_update_workspace_bytes(s.B, s.N, s.K, s.D))));
      for (const bool skewed : {false, true}) {
        // uniform: every cluster equally likely; skewed: cluster floor(K * u^4) for u uniform in [0, 1), so
        // that the first 1% of the clusters take about 32% of the points (contention on their rows).
        std::vector<std::int32_t> idx(static_cast<std::size_t>(s.B * s.N));
        std::uniform_real_distribution<double> u01(0.0, 1.0);
        for (auto& v : idx) {
          const double u = u01(rng.engine());
          v = static_cast<std::int32_t>(std::min<double>(static_cast<double>(s.K - 1), std::floor(static_cast<double>(s.K) * (skewed ? u * u * u * u : u))));
        }
        auto di = jit::to_device(idx);
        double ms[3] = {0, 0, 0};
        std::vector<std::uint16_t> got[2];
        for (int v = 0; v < 3; ++v) {
          kmeans::update_options opt{v == 1, 8.0f};  // the values are bf16 / f16 bits of |v| < 8
          if (v == 2) opt.method = kmeans::update_method::sorted;
          auto work = [&](CUstream st) {
            kmeans::update(dx.address(), static_cast<const std::int32_t*>(di.address()), dc.address(), static_cast<float*>(dn.address()),
                           static_cast<float*>(ds.address()), ws.address(), s.B, s.N, s.K, s.D, t, kmeans::metric::l2, opt, st);
          };
          harness::timing_options o;
          o.runs = runs;
          dc.upload<harness::host_bf16>(c);  // every variant from the same centroids (the timed runs move them; only the first run is compared)
          work(nullptr);
          if (v != 1) got[v == 2] = dc.download<std::uint16_t>();
          ms[v] = harness::time_gpu(work, o).median_ms;
        }
        // The sorted update's centroids against the scatter's, after one update from the same centroids: the
        // same means up to the f32 sums' order (one unit in the last place of the type at most).
        long long differ = 0;
        for (std::size_t i = 0; i < got[0].size(); ++i) differ += std::abs(static_cast<int>(got[0][i]) - static_cast<int>(got[1][i])) > 1;
        const double bytes = 2.0 * s.B * s.N * s.D + 4.0 * s.B * s.N;  // points and indices read once
        std::printf("update %s B%lld N%lld K%lld D%lld %s%s | scatter %.4f ms (%.0f GB/s of points) | deterministic %.4f ms | sorted %.4f ms | scatter/sorted %.3fx | "
                    "centroids differ by more than 1 ulp: %lld\n",
                    kmeans::to_string(t), s.B, s.N, s.K, s.D, skewed ? "skewed" : "uniform", s.held_out ? " (held out)" : "", ms[0], bytes / ms[0] / 1e6, ms[1],
                    ms[2], ms[0] / ms[2], differ);
        std::fflush(stdout);
        if (rows.tellp() > 0) rows << ",\n";
        rows << "    {\"kernel\": \"kmeans_update\", \"dtype\": \"" << (t == kmeans::input_type::bf16 ? "bf16" : "fp16") << "\", \"shape\": {\"B\": " << s.B
             << ", \"N\": " << s.N << ", \"K\": " << s.K << ", \"D\": " << s.D << "}, \"assignment\": \"" << (skewed ? "skewed" : "uniform")
             << "\", \"held_out\": " << (s.held_out ? "true" : "false") << ", \"f32_atomic_ms\": " << ms[0] << ", \"deterministic_ms\": " << ms[1]
             << ", \"sorted_ms\": " << ms[2] << ", \"ratio\": " << ms[0] / ms[2] << ", \"deterministic_ratio\": " << ms[0] / ms[1]
             << ", \"variant\": \"" << (t == kmeans::input_type::bf16 ? "bf16 " : "fp16 ") << (skewed ? "skewed" : "uniform")
             << "\", \"peer\": \"scatter update\", \"cake_gbps\": " << bytes / ms[2] / 1e6 << ", \"peer_gbps\": " << bytes / ms[0] / 1e6
             << ", \"centroids_differ\": " << differ << "}";
      }
    }
  }
  if (!json.empty()) {
    std::ofstream j(json);
    const std::time_t now = std::time(nullptr);
    char date[16];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    j << "{\n  \"gpu\": \"" << dev.name << "\", \"sm_count\": " << dev.sm_count << ", \"driver\": \"" << driver << "\", \"cuda\": \""
      << dev.driver_version / 1000 << "." << dev.driver_version % 1000 / 10 << "\", \"date\": \"" << date
      << "\",\n  \"command\": \"cake_bench_kmeans --update --runs " << runs
      << "\",\n  \"method\": \"CUDA events, L2 flushed before each run, median of " << runs
      << " runs; one update after a uniform or a skewed (cluster floor(K u^4)) random assignment: scatter (memset, scatter-add, finalize), deterministic "
         "(i64 fixed-point scatter), sorted (count, offsets by a row scan, placement, segment sums, finalize); ratio = scatter time / sorted time, "
         "deterministic_ratio = scatter time / deterministic time; centroids_differ = coordinates where one sorted update and one scatter update from the "
         "same centroids differ by more than one unit in the last place; cake_gbps / peer_gbps: bytes of points and indices (2 B N D + 4 B N) per "
         "second of the sorted / scatter update (the chart's bars; the sorted one is Cake's, the scatter its peer)\",\n"
      << "  \"rows\": [\n" << rows.str() << "\n  ]\n}\n";
  }
  return 0;
}

// One Lloyd iteration, fused (step) against assign + update (see the top of this file).
int bench_step(int runs, int only) {
  struct shape {
    long long B, N, K, D;
    bool held_out;
  };
  const shape shapes[] = {{32, 65536, 1024, 128, false}, {1, 1048576, 4096, 128, false}, {1, 1048576, 65536, 128, false},
                          {8, 262144, 16384, 64, false},  {2, 300000, 2000, 96, true},   {16, 20000, 512, 256, true}};
  auto rng = harness::random_source::fresh();
  std::printf("seed %llu\n", static_cast<unsigned long long>(rng.seed()));
  int bad = 0;
  for (const auto t : {kmeans::input_type::bf16, kmeans::input_type::f16}) {
    for (const shape& s : shapes) {
      if (only >= 0 && (&s - shapes != only || t != kmeans::input_type::bf16)) continue;
      auto x = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(s.B * s.N * s.D), rng);
      auto c0 = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(s.B * s.K * s.D), rng);
      auto dx = jit::to_device(x), dc = jit::to_device(c0), dc2 = jit::to_device(c0);
      jit::device_buffer dn(static_cast<std::size_t>(4 * s.B * s.K)), dn2(static_cast<std::size_t>(4 * s.B * s.K)), ds(static_cast<std::size_t>(4 * s.B * s.K)),
          di(static_cast<std::size_t>(4 * s.B * s.N)), di2(static_cast<std::size_t>(4 * s.B * s.N)),
          ws(static_cast<std::size_t>(kmeans::update_workspace_bytes(s.B, s.K, s.D)));
      auto* n1 = static_cast<float*>(dn.address());
      auto* n2 = static_cast<float*>(dn2.address());
      auto* i1 = static_cast<std::int32_t*>(di.address());
      auto* i2 = static_cast<std::int32_t*>(di2.address());
      auto* sh = static_cast<float*>(ds.address());
      auto two_calls = [&](CUstream st) {
        kmeans::assign(dx.address(), dc.address(), n1, i1, s.B, s.N, s.K, s.D, t, kmeans::metric::l2, st);
        kmeans::update(dx.address(), i1, dc.address(), n1, sh, ws.address(), s.B, s.N, s.K, s.D, t, kmeans::metric::l2, st);
      };
      auto fused = [&](CUstream st) {  // the fused kernel at every D (kmeans::step itself keeps the two calls at D <= 64)
        kmeans::detail::run_step(true, dx.address(), dc2.address(), i2, n2, sh, ws.address(), s.B, s.N, s.K, s.D, t, kmeans::metric::l2, {}, st, 0);
      };
      // Agreement from the same centroids: the same indices; centroids within the rounding of a mean whose f32
      // atomics land in another order (a few units in the last place of the input type).
      kmeans::norms(dc.address(), n1, s.B, s.K, s.D, t, kmeans::metric::l2);
      kmeans::norms(dc2.address(), n2, s.B, s.K, s.D, t, kmeans::metric::l2);
      two_calls(nullptr);
      fused(nullptr);
      const auto ia = di.download<std::int32_t>(), ib = di2.download<std::int32_t>();
      const auto ca = dc.download<harness::host_bf16>(), cb = dc2.download<harness::host_bf16>();
      long long idx_diff = 0, c_diff = 0;
      for (std::size_t i = 0; i < ia.size(); ++i) idx_diff += ia[i] != ib[i];
      for (std::size_t i = 0; i < ca.size(); ++i) {
        const int a = static_cast<int>(ca[i].bits), b = static_cast<int>(cb[i].bits);
        c_diff += (a > b ? a - b : b - a) > 4;  // more than 4 units in the last place (same sign: the values are close)
      }
      harness::timing_options o;
      o.runs = s.B * s.N * s.K * s.D >= (1LL << 42) ? std::max(5, runs / 4) : runs;
      const double ms_two = harness::time_gpu(two_calls, o).median_ms, ms_fused = harness::time_gpu(fused, o).median_ms;
      const double tflops = 2.0 * s.B * s.N * s.K * s.D / 1e9;
      const bool ok = idx_diff == 0 && c_diff == 0;
      bad += !ok;
      std::printf("step %s B%lld N%lld K%lld D%lld%s | assign+update %.4f ms | step %.4f ms (%.0f TFLOP/s) | gain %.3fx | idx differ %lld, centroids differ %lld%s\n",
                  kmeans::to_string(t), s.B, s.N, s.K, s.D, s.held_out ? " (held out)" : "", ms_two, ms_fused, tflops / ms_fused, ms_two / ms_fused, idx_diff, c_diff,
                  ok ? "" : "  MISMATCH");
      std::fflush(stdout);
    }
  }
  return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 20;
  bool sweep = false, update = false, lazy = false, step = false;
  std::string json, driver = "unknown";
  bool after_wait = false;  // --after-wait: each candidate also with the MMA turn passed after its wait
  int pick = -1;            // --pick I: only candidate I of each shape (profiling)
  bool overlap = false;     // --overlap: each candidate also software-pipelined by halves
  bool probe = false;       // --probe: the chosen schedule (and its first overlapped form) also as MMA probes
  bool cn_stage = false;    // --cn-stage: each candidate also with c_norm in the centroid stages
  int max_shapes = 1 << 20;  // --shapes N: only the first N shapes (profiling)
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--sweep")) sweep = true;
    else if (!std::strcmp(argv[i], "--lazy")) lazy = true;
    else if (!std::strcmp(argv[i], "--probe")) probe = true;
    else if (!std::strcmp(argv[i], "--after-wait")) after_wait = true;
    else if (!std::strcmp(argv[i], "--overlap")) overlap = true;
    else if (!std::strcmp(argv[i], "--cn-stage")) cn_stage = true;
    else if (!std::strcmp(argv[i], "--pick") && i + 1 < argc) pick = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--update")) update = true;
    else if (!std::strcmp(argv[i], "--step")) step = true;
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!std::strcmp(argv[i], "--driver") && i + 1 < argc) driver = argv[++i];
    else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc) max_shapes = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: cake_bench_kmeans [--runs N] [--sweep] [--lazy] [--shapes N] | --update [--runs N] [--json FILE] [--driver VERSION] | --step [--runs N]\n");
      return 2;
    }
  }
  if (!jit::driver::available()) {
    std::printf("SKIPPED: %s\n", jit::driver::unavailable_reason().c_str());
    return 0;
  }
  if (update) return bench_update(runs, json, driver);
  if (step) return bench_step(runs, pick);
  struct shape {
    long long B, N, K, D;
    bool held_out;
  };
  const shape shapes[] = {{32, 65536, 1024, 128, false}, {1, 1048576, 4096, 128, false}, {8, 262144, 16384, 64, false}, {1, 1048576, 65536, 128, false},
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
    std::vector<kernels::kmeans_assign_config> cands{kmeans::assign_config_for(s.D, s.K, kmeans::metric::l2)};
    if (sweep && !s.held_out) {
      // the forms below start from the chosen schedule's grid walk (assign_config_for may pick the persistent one)
      kernels::kmeans_assign_config grid = cands[0];
      grid.persistent = false, grid.x_stages = 1;
      struct form {
        int wgs, rows, bn;
      };
      for (form f : {form{2, 128, 128}, form{3, 64, 128}, form{2, 64, 128}, form{2, 64, 256}})
        for (int stages : {4, 8}) {
          kernels::kmeans_assign_config k = grid;
          k.wgs = f.wgs, k.rows = f.rows, k.bn = f.bn, k.stages = stages;
          if (kernels::kmeans_assign_smem(k) <= 225 * 1024 && k != cands[0]) cands.push_back(k);
        }
      // the persistent walk, with one points tile or two (the next one loading during this one)
      for (int xs : {1, 2}) {
        kernels::kmeans_assign_config k = grid;
        k.persistent = true, k.x_stages = xs;
        while (k.stages > 2 && kernels::kmeans_assign_smem(k) > 225 * 1024) --k.stages;
        if (kernels::kmeans_assign_smem(k) <= 225 * 1024 && k != cands[0]) cands.push_back(k);
      }
    }
    if (lazy)  // each candidate also with the argmin's index found lazily (and without, whichever it is)
      for (std::size_t i = 0, n = cands.size(); i < n; ++i) {
        auto k = cands[i];
        k.lazy_index = !k.lazy_index;
        cands.push_back(k);
      }
    if (after_wait)  // each candidate also with the MMA turn passed after the wait (the overlapped form has no turns)
      for (std::size_t i = 0, n = cands.size(); i < n; ++i) {
        auto k = cands[i];
        if (k.overlap) continue;
        k.pass_after_wait = !k.pass_after_wait;
        cands.push_back(k);
      }
    if (overlap)  // each candidate also software-pipelined by halves, at the stages that fit
      for (std::size_t i = 0, n = cands.size(); i < n; ++i) {
        auto k = cands[i];
        if (k.overlap || k.rows != 128 || k.parts > 4) continue;
        k.overlap = true, k.pass_after_wait = false, k.stages = 8;
        while (k.stages > 2 && kernels::kmeans_assign_smem(k) > 225 * 1024) --k.stages;
        if (std::find(cands.begin(), cands.end(), k) == cands.end()) cands.push_back(k);
      }
    if (cn_stage)  // each candidate also with c_norm carried in the centroid stages (at the stages that then fit)
      for (std::size_t i = 0, n = cands.size(); i < n; ++i) {
        auto k = cands[i];
        k.cn_in_stage = !k.cn_in_stage;
        while (k.stages > 2 && kernels::kmeans_assign_smem(k) > 225 * 1024) --k.stages;
        if (!k.invalid() && std::find(cands.begin(), cands.end(), k) == cands.end()) cands.push_back(k);
      }
    if (probe)  // the chosen schedule and its first overlapped form as probes
      for (std::size_t i = 0, n = cands.size(), done = 0; i < n; ++i) {
        if (i > 0 && (!cands[i].overlap || done == 2)) continue;
        auto k = cands[i];
        k.mma_probe = true;
        cands.push_back(k);
        ++done;
      }
    std::vector<std::int32_t> first_idx;  // the chosen schedule's answer: every other candidate is compared with it
    for (std::size_t i = 0; i < cands.size(); ++i) {
      const auto& k = cands[i];
      if (pick >= 0 && static_cast<int>(i) != pick) continue;
      try {
        auto work = [&](CUstream st) {
          if (k.mma_probe) kmeans::probe::assign_mma_probe(k, dx.address(), dc.address(), static_cast<const float*>(dn.address()), static_cast<std::int32_t*>(di.address()), s.B, s.N, s.K,
                              s.D, kmeans::input_type::bf16, kmeans::metric::l2, st);
          else kmeans::assign_with(k, dx.address(), dc.address(), static_cast<const float*>(dn.address()), static_cast<std::int32_t*>(di.address()), s.B, s.N, s.K,
                              s.D, kmeans::input_type::bf16, kmeans::metric::l2, st);
        };
        harness::timing_options o;
        o.runs = runs;
        const auto t = harness::time_gpu(work, o);
        const auto got = di.download<std::int32_t>(static_cast<std::size_t>(s.B * s.N));
        if (first_idx.empty()) first_idx = got;
        long long differ = 0;
        for (std::size_t e = 0; e < got.size(); ++e) differ += got[e] != first_idx[e];
        std::printf("B%lld N%lld K%lld D%lld%s | %s wgs %d rows %d bn %d stages %d%s%s%s%s%s%s | %.4f ms %.1f TFLOP/s%s\n", s.B, s.N, s.K, s.D,
                    s.held_out ? " (held out)" : "", i == 0 ? "chosen" : "sweep ", k.wgs, k.rows, k.bn, k.stages, k.lazy_index ? " lazy" : "",
                    k.persistent ? (k.x_stages == 2 ? " persistent x2" : " persistent") : "",
                    k.pass_after_wait ? " after-wait" : "", k.overlap ? " overlap" : "", k.cn_in_stage ? " cn-stage" : "", k.mma_probe ? " [mma probe]" : "", t.median_ms,
                    flops / t.median_ms / 1e9, differ && !k.mma_probe ? (" | " + std::to_string(differ) + " points differ from the chosen").c_str() : "");
      } catch (const std::exception& e) {
        std::printf("B%lld N%lld K%lld D%lld | wgs %d rows %d bn %d stages %d | error: %.150s\n", s.B, s.N, s.K, s.D, k.wgs, k.rows, k.bn, k.stages, e.what());
      }
      std::fflush(stdout);
    }
  }
}
