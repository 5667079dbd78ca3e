// The cost model (docs/cost-model.md) against the GEMM dispatcher's H200 sweep
// (bench/results/h200/gemm_sweep.json): for every timed (shape, schedule) row, the model's estimate, so
// that bench/cost/domain_rank.py can say how well it ranks the candidates of each shape. None of these
// shapes was used to calibrate the model (the calibration runs its own GEMMs; docs/cost-model.md,
// "Calibration"), so they are held out from its point of view. No GPU.
//   python3 bench/cost/domain_rank.py          (writes the rows this program reads, runs it, reports)
//   cake_cost_domain_rank < rows.tsv > estimates.tsv
// Input rows (whitespace-separated): dtype (bf16 | e4m3), M, N, K, the schedule's name, and the schedule
// as the sweep JSON's "plans" give it:
//   sm90 BM BN STAGES CLUSTER_M RASTER_GROUP PINGPONG IN_FLIGHT PERSISTENT   or   splitk BN SPLITS STAGES BM [GLOBAL_SUM]
// Output rows (tab-separated): the input's first five fields, then "ok TIME_US BOTTLENECK" and the terms
// (per K block: MMA_US L2_US LATENCY_US TURNOVER_US; K_ITERATIONS TILES_PER_CTA CTAS; MAINLOOP_US
// EPILOGUE_US HBM_US), or "no REASON".
//   cake_cost_domain_rank --model-candidates < shapes.tsv
// The schedules the sweep would time at a shape (bench/gemm/sweep_candidates.hpp, sweep_candidates: among them the
// split-K fill's pick and, above M = 128, the width between the sweep's own that the cost model picks), for
// tools/gen/gemm_dispatch.py, whose M between searched ones may take one that no sweep timed there. Input rows:
// "conc DTYPE PLAN CLUSTER MAX_ACTIVE_CLUSTERS" (the sweep JSON's cluster_concurrency rows: how many clusters of a
// split-K schedule ran at once, which the split-K fill plans with; every such row before the shapes of its type;
// a row naming no split-K schedule the sweep can time is ignored, and a type without rows plans with SMs / splits)
// and "DTYPE M N K". Output rows (tab-separated), per candidate in the sweep's order: DTYPE M N K NAME and the
// schedule as "sm90 BM BN ..." or "splitk BN SPLITS STAGES BM GLOBAL_SUM" (the input form above).
//   cake_cost_domain_rank --name-rows < rows.tsv
// What tools/gen/gemm_dispatch.py --from-evolve needs of the C++ side for rows of a `cake evolve` log (no estimate):
// input rows "DTYPE M N K SM_COUNT" and the schedule in the input form above; output rows (tab-separated) DTYPE M N
// K, the schedule's canonical name (cake::plan_name), the name of choose_gemm's schedule at the shape on SM_COUNT
// SMs (the dispatcher's fallback), the layer of bench/gemm/domain.hpp with that N and K ("-": none), and the
// shape's split there: search, held_out, or outside (not one of the domain's shapes).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <cake/cost/model.hpp>

#include "bench/gemm/domain.hpp"
#include "bench/gemm/sweep_candidates.hpp"
#include "kernels/gemm/sm90_bf16.hpp"
#include "kernels/gemm/sm90_splitk.hpp"

namespace {

// --set NAME=VALUE: a calibration constant overridden for this run (what-if studies of the model; the
// committed calibration is what `cake estimate` uses).
bool override_constant(cake::cost::calibration& cal, const std::string& name, double v) {
  struct field {
    const char* name;
    double cake::cost::calibration::* member;
  };
  static constexpr field fields[] = {
      {"l2_read_gbps", &cake::cost::calibration::l2_read_gbps},
      {"pipeline_round_trip_us", &cake::cost::calibration::pipeline_round_trip_us},
      {"stage_turnover_us", &cake::cost::calibration::stage_turnover_us},
      {"stage_turnover_us_per_kib", &cake::cost::calibration::stage_turnover_us_per_kib},
      {"mma_in_situ", &cake::cost::calibration::mma_in_situ},
      {"mma_alternating", &cake::cost::calibration::mma_alternating},
      {"kblock_overhead_us", &cake::cost::calibration::kblock_overhead_us},
      {"mma_idle_gain", &cake::cost::calibration::mma_idle_gain},
      {"launch_us", &cake::cost::calibration::launch_us},
      {"hbm_overlap_loss", &cake::cost::calibration::hbm_overlap_loss},
      {"cluster_sum_us_per_kib", &cake::cost::calibration::cluster_sum_us_per_kib},
      {"wave_us", &cake::cost::calibration::wave_us},
      {"global_sum_us", &cake::cost::calibration::global_sum_us},
      {"splitk_reread", &cake::cost::calibration::splitk_reread},
      {"sm_hbm_gbps", &cake::cost::calibration::sm_hbm_gbps},
      {"hbm_read_gbps", &cake::cost::calibration::hbm_read_gbps},
      {"l2_effective_bytes", &cake::cost::calibration::l2_effective_bytes},
      {"epilogue_us_per_store", &cake::cost::calibration::epilogue_us_per_store},
      {"epilogue_us_per_kib", &cake::cost::calibration::epilogue_us_per_kib},
      {"long_run_from_us", &cake::cost::calibration::long_run_from_us},
      {"long_run_to_us", &cake::cost::calibration::long_run_to_us},
  };
  for (const auto& f : fields)
    if (name == f.name) {
      cal.*(f.member) = v;
      return true;
    }
  // mma_width_<N> / mma_width_long_<N>: the factor at tile width N (a row of cal.mma_width / cal.mma_width_long,
  // added or replaced).
  auto width_row = [&](const std::string& prefix, std::vector<cake::cost::mma_width_factor>& rows, std::span<const cake::cost::mma_width_factor>& table) {
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() || name.find_first_not_of("0123456789", prefix.size()) != std::string::npos) return false;
    if (rows.empty()) rows.assign(table.begin(), table.end());
    const int n = std::stoi(name.substr(prefix.size()));
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& w) { return w.n == n; });
    if (it == rows.end()) rows.push_back({n, v});
    else it->factor = v;
    table = rows;
    return true;
  };
  static std::vector<cake::cost::mma_width_factor> widths, long_widths;
  return width_row("mma_width_", widths, cal.mma_width) || width_row("mma_width_long_", long_widths, cal.mma_width_long);
}

// A schedule in the input form, after its kind ("sm90" or "splitk") was read: false when the kind is unknown or the
// fields are malformed.
bool read_plan(std::istringstream& in, const std::string& kind, cake::gemm_plan& plan) {
  if (kind == "sm90") {
    plan.kernel = cake::gemm_kernel::sm90;
    auto& c = plan.sm90;
    int pingpong = 0, persistent = 1;
    in >> c.bm >> c.bn >> c.stages >> c.cluster_m >> c.raster_group >> pingpong >> c.in_flight >> persistent;
    c.pingpong = pingpong != 0;
    c.persistent = persistent != 0;
  } else if (kind == "splitk") {
    plan.kernel = cake::gemm_kernel::splitk;
    auto& c = plan.splitk;
    in >> c.bn >> c.splits >> c.stages >> c.bm;
    int global_sum = 0;  // (optional: 1 for the partial sums through global memory)
    if (in && !(in >> global_sum)) in.clear();
    c.global_sum = global_sum != 0;
  } else {
    return false;
  }
  return static_cast<bool>(in);
}

}  // namespace

int main(int argc, char** argv) {
  cake::cost::calibration cal = *cake::cost::find_calibration(cake::target_id::sm_90a);
  bool model_candidates = false, name_rows = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--model-candidates") {
      model_candidates = true;
    } else if (a == "--name-rows") {
      name_rows = true;
    } else if (a == "--set" && i + 1 < argc) {
      const std::string kv = argv[++i];
      const auto e = kv.find('=');
      char* end = nullptr;
      const double v = e == std::string::npos ? 0 : std::strtod(kv.c_str() + e + 1, &end);
      if (e == std::string::npos || end == kv.c_str() + e + 1 || *end || !override_constant(cal, kv.substr(0, e), v)) {
        std::fprintf(stderr, "cake_cost_domain_rank: --set wants NAME=VALUE with a calibration constant's name, got '%s'\n", kv.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "cake_cost_domain_rank: unknown argument '%s' (usage: cake_cost_domain_rank [--set NAME=VALUE]... < rows, cake_cost_domain_rank --model-candidates < shapes, or cake_cost_domain_rank --name-rows < rows)\n", a.c_str());
      return 2;
    }
  }
  std::string line;
  if (name_rows) {
    while (std::getline(std::cin, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream in(line);
      std::string dtype, kind;
      long long M = 0, N = 0, K = 0;
      int sm_count = 0;
      cake::gemm_plan p;
      if (!(in >> dtype >> M >> N >> K >> sm_count >> kind) || (dtype != "bf16" && dtype != "e4m3") || M < 1 || N < 1 || K < 1 || sm_count < 1 ||
          !read_plan(in, kind, p)) {
        std::fprintf(stderr, "cake_cost_domain_rank: --name-rows: malformed row (want 'bf16|e4m3 M N K SM_COUNT sm90 ...|splitk ...'): %s\n", line.c_str());
        return 2;
      }
      cake::gemm_plan fallback;
      fallback.sm90 = cake::choose_gemm(M, N, K, sm_count, dtype == "bf16" ? cake::gemm_input::bf16 : cake::gemm_input::e4m3).config;
      const char* layer = "-";
      const char* split = "outside";
      for (const auto& l : cake::gemm_domain::layers)
        if (l.n == N && l.k == K) layer = l.name;
      for (std::size_t i = 0; i < cake::gemm_domain::size; ++i) {
        const auto s = cake::gemm_domain::at(i);
        if (s.m == M && s.n == N && s.k == K) split = s.held_out ? "held_out" : "search";
      }
      std::printf("%s\t%lld\t%lld\t%lld\t%s\t%s\t%s\t%s\n", dtype.c_str(), M, N, K, cake::plan_name(p).c_str(), cake::plan_name(fallback).c_str(), layer, split);
    }
    return 0;
  }
  if (model_candidates) {
    // (as bench_gemm_sweep.cpp builds it: record_splitk_concurrency for every split-K schedule the sweep can time)
    std::map<std::string, cake_bench::splitk_concurrency> conc;  // per dtype
    std::map<std::string, std::map<std::string, int>> conc_rows;  // dtype -> plan -> clusters at once
    auto conc_of = [&](const std::string& dtype) -> const cake_bench::splitk_concurrency* {
      const auto rows = conc_rows.find(dtype);
      if (rows == conc_rows.end()) return nullptr;
      auto& c = conc[dtype];
      if (c.empty())
        for (const auto& p : cake_bench::sweep_all_candidates()) {
          if (p.kernel != cake::gemm_kernel::splitk) continue;
          const auto r = rows->second.find(cake::plan_name(p));
          if (r != rows->second.end()) cake_bench::record_splitk_concurrency(c, p, r->second);
        }
      return &c;
    };
    while (std::getline(std::cin, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream in(line);
      std::string dtype;
      in >> dtype;
      if (dtype == "conc") {
        std::string t, plan;
        int cluster = 0, clusters = 0;
        if (!(in >> t >> plan >> cluster >> clusters) || cluster < 1) {
          std::fprintf(stderr, "cake_cost_domain_rank: --model-candidates: malformed row (want 'conc bf16|e4m3 PLAN CLUSTER CLUSTERS'): %s\n", line.c_str());
          return 2;
        }
        conc_rows[t][plan] = clusters;  // (CLUSTER is the plan's own: splitk_concurrency_cluster)
        conc.erase(t);
        continue;
      }
      long long M = 0, N = 0, K = 0;
      if (!(in >> M >> N >> K) || (dtype != "bf16" && dtype != "e4m3") || M < 1 || N < 1 || K < 1) {
        std::fprintf(stderr, "cake_cost_domain_rank: --model-candidates: malformed row (want 'bf16|e4m3 M N K'): %s\n", line.c_str());
        return 2;
      }
      const auto in_type = dtype == "bf16" ? cake::gemm_input::bf16 : cake::gemm_input::e4m3;
      for (const auto& p : cake_bench::sweep_candidates(M, N, K, cal.sm_count, in_type, conc_of(dtype))) {
        std::printf("%s\t%lld\t%lld\t%lld\t%s\t", dtype.c_str(), M, N, K, cake::plan_name(p).c_str());
        if (p.kernel == cake::gemm_kernel::splitk) {
          const auto& c = p.splitk;
          std::printf("splitk %d %d %d %d %d\n", c.bn, c.splits, c.stages, c.bm, int(c.global_sum));
        } else {
          const auto& c = p.sm90;
          std::printf("sm90 %d %d %d %d %d %d %d %d\n", c.bm, c.bn, c.stages, c.cluster_m, c.raster_group, int(c.pingpong), c.in_flight, int(c.persistent));
        }
      }
    }
    return 0;
  }
  int rows = 0, bad = 0;
  while (std::getline(std::cin, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string dtype, kind, name;
    long long M = 0, N = 0, K = 0;
    in >> dtype >> M >> N >> K >> name >> kind;
    if (kind != "sm90" && kind != "splitk") {
      std::fprintf(stderr, "cake_cost_domain_rank: unknown schedule kind '%s' in: %s\n", kind.c_str(), line.c_str());
      return 2;
    }
    cake::gemm_plan plan;
    if (!read_plan(in, kind, plan)) {
      std::fprintf(stderr, "cake_cost_domain_rank: malformed row: %s\n", line.c_str());
      return 2;
    }
    const cake::program p = plan.kernel == cake::gemm_kernel::splitk
                                ? (dtype == "e4m3" ? cake::kernels::gemm_splitk_sm90<cake::e4m3>(plan.splitk) : cake::kernels::gemm_splitk_sm90<cake::bf16>(plan.splitk))
                                : (dtype == "e4m3" ? cake::kernels::gemm_sm90<cake::e4m3>(plan.sm90) : cake::kernels::gemm_sm90<cake::bf16>(plan.sm90));
    ++rows;
    std::printf("%s\t%lld\t%lld\t%lld\t%s\t", dtype.c_str(), M, N, K, name.c_str());
    if (!p.errors.empty()) {
      ++bad;
      std::printf("no\tthe schedule does not build: %s\n", std::string(p.errors[0].message).c_str());
      continue;
    }
    const auto e = cake::cost::estimate(p, {{"M", M}, {"N", N}, {"K", K}}, &cal, cake::cost::estimate_scope::time_only);
    if (e.ok)
      std::printf("ok\t%.3f\t%s\t%.4f\t%.4f\t%.4f\t%.4f\t%lld\t%lld\t%lld\t%.3f\t%.3f\t%.3f\n", e.time_us, e.bottleneck.c_str(), e.mma_us, e.l2_us,
                  e.latency_us, e.turnover_us, e.k_iterations, e.tiles_per_cta, e.ctas, e.mainloop_us, e.epilogue_us, e.hbm_us);
    else std::printf("no\t%s\n", e.reason.c_str());
  }
  std::fprintf(stderr, "cake_cost_domain_rank: %d rows, %d schedules that do not build\n", rows, bad);
  return 0;
}
