// The evidence of cake::gemm's shape-bucket dispatcher (docs/gemm.md, "The dispatcher"): every search
// shape of the domain (bench/gemm/domain.hpp) with each candidate schedule (bench/gemm/sweep_candidates.hpp)
// and the peer (cuBLAS bf16, cuBLASLt e4m3), L2 flushed before every run, median of --runs runs in 2
// alternating rounds; every candidate's first run is checked against the peer's output (relative
// Frobenius difference, output poisoned with NaN first). Writes one JSON row per (shape, candidate);
// tools/gen/gemm_dispatch.py turns the file into include/cake/gemm_dispatch.hpp.
//
//   cake_bench_gemm_sweep [--json FILE] [--dtype bf16|e4m3|both] [--runs N] [--driver VERSION] [--limit N] [--skip N]
//       --skip N leaves out the first N search shapes (in the domain's order) of each type: a sweep that one
//       device call's time limit cut short goes on from where it stopped (join the files with
//       tools/gen/merge_sweeps.py)
//   --splitk-only: only the shapes whose candidates include a split-K schedule; --min-m N: only M >= N;
//       --max-m N: only M <= N
//       (a re-sweep of the shapes a change of the candidate set touched; merge_sweeps.py replaces their rows)
//   --between-widths-only: only the shapes whose candidates include a cooperative tile of a width between the
//       sweep's own (model_width_plan: the cost model's pick where waves make a difference)
//   --shape M,N,K: that shape alone (N, K of one of the domain's layers; M any), whether searched or held
//       out (to look at one shape's candidates against the peer; not evidence for the generator)
//   --k-ladder K1,K2,...: with --shape, the shape's M and N at each of these K instead of its K (N of a
//       layer, K any): time = fixed cost + K x per-K cost per schedule and for the peer, so that a small-M
//       gap splits into what a call costs at no K and what streaming costs (bench/gemm/k_ladder_fit.py);
//       not evidence for the generator either
//   --plans NAME,...: with --shape, these schedules too (plan names as the sweep writes them, e.g.
//       bn64_s12_c2_pp64_f1 or sk4_bm128_bn160_s4: cake::parse_plan_name), after the shape's candidates and
//       beyond their limit of 10: to time a schedule the sweep does not offer next to those it does
//   cake_bench_gemm_sweep --estimate       prints the shapes, candidates and the estimated run time; no GPU
//   cake_bench_gemm_sweep --placeholder --json FILE
//       writes a PLACEHOLDER evidence file without a GPU: modeled times (rough_ms scaled per schedule),
//       marked "placeholder": true; a dispatcher generated from it is disabled (gemm_dispatch_table::measured)
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <cake/analysis.hpp>
#include <cake/analysis/output.hpp>

#include "../common.hpp"
#include "sweep_candidates.hpp"
#include "sweep_common.hpp"

namespace {

using cake::gemm_input;
using namespace cake_bench;

struct row {
  gemm_input in;
  cake::gemm_domain::shape s;
  std::string plan;
  bool fallback = false;
  double ms = 0, peer_ms = -1;  // peer_ms < 0: the peer has no algorithm for the shape
  check_result check;
  bool ok = false;
};

std::string plan_json(const cake::gemm_plan& p) {
  std::ostringstream j;
  if (p.kernel == cake::gemm_kernel::splitk) {
    j << "{\"kernel\": \"splitk\", \"bm\": " << p.splitk.bm << ", \"bn\": " << p.splitk.bn << ", \"splits\": " << p.splitk.splits << ", \"stages\": " << p.splitk.stages
      << (p.splitk.global_sum ? ", \"global_sum\": true" : "") << "}";
  } else {
    const auto& c = p.sm90;
    j << "{\"kernel\": \"sm90\", \"bm\": " << c.bm << ", \"bn\": " << c.bn << ", \"stages\": " << c.stages << ", \"cluster_m\": " << c.cluster_m
      << ", \"raster_group\": " << c.raster_group << ", \"pingpong\": " << (c.pingpong ? "true" : "false") << ", \"in_flight\": " << c.in_flight
      << ", \"persistent\": " << (c.persistent ? "true" : "false") << "}";
  }
  return j.str();
}

// Placeholder times: rough_ms scaled by the tile quantization of the schedule (waves x tile work against
// the useful work) and a per-schedule factor. Not a measurement: only so that the generator, the header
// and the tests have a file of the right form before the H200 run.
double modeled_ms(const cake::gemm_plan& p, const cake::gemm_domain::shape& s, gemm_input in, int sms) {
  double tile_work, useful = double(s.m) * s.n, factor;
  if (p.kernel == cake::gemm_kernel::splitk) {
    const long long ctas = (s.m + p.splitk.bm - 1) / p.splitk.bm * ((s.n + p.splitk.bn - 1) / p.splitk.bn) * p.splitk.splits;
    tile_work = double((ctas + sms - 1) / sms) * sms * p.splitk.bm * p.splitk.bn / p.splitk.splits;
    factor = 1.15;
  } else {
    const auto& c = p.sm90;
    const long long tm = (s.m + c.bm - 1) / c.bm, tn = (s.n + c.bn - 1) / c.bn;
    const long long tiles = (tm + c.cluster_m - 1) / c.cluster_m * c.cluster_m * tn;
    tile_work = double((tiles + sms - 1) / sms) * sms * c.bm * c.bn;
    factor = c.pingpong ? 1.04 : c.bn >= 192 ? 1.0 : 1.08;
  }
  return rough_ms(s.m, s.n, s.k, in) * std::max(1.0, tile_work / useful / 4) * factor;
}

// complete = false: written after every shape, so that a run cut short (time limit, a trapped kernel) keeps
// what it measured; the generator refuses such a file unless told to take it (--allow-partial).
void write_json(const std::string& path, const std::vector<row>& rows, const std::map<std::string, cake::gemm_plan>& plans, bool placeholder,
                const std::string& gpu, int sms, const std::string& driver, const std::string& cuda, const std::string& command, int runs,
                bool complete = true, const std::string& cluster_concurrency = "") {
  std::ostringstream j;
  j << "{\n  \"schema\": \"cake.gemm-sweep/1\",\n  \"placeholder\": " << (placeholder ? "true" : "false") << ",\n  \"complete\": "
    << (complete ? "true" : "false") << ",\n  \"gpu\": \"" << json_escape(gpu)
    << "\", \"sm_count\": " << sms << ", \"sm\": \"sm_90a\", \"driver\": \"" << driver << "\", \"cuda\": \"" << cuda << "\", \"date\": \""
    << (placeholder ? std::string("placeholder") : today()) << "\",\n  \"command\": \"" << json_escape(command) << "\",\n  \"method\": \""
    << (placeholder ? std::string("PLACEHOLDER: modeled times (bench/gemm/bench_gemm_sweep.cpp modeled_ms), nothing was run; regenerate on the H200")
                    : "CUDA events, L2 flushed before each run, median of " + std::to_string(runs) +
                          " runs in 2 rounds of every candidate and the peer (the second in reverse order; 50 ms of each untimed before its runs); each candidate's first run checked against the peer's output "
                          "(relative Frobenius difference <= 1e-2 bf16, 3e-2 e4m3; output poisoned with NaN first); peers: cuBLAS bf16, cuBLASLt e4m3 "
                          "with CUBLASLT_MATMUL_DESC_FAST_ACCUM=1")
    << "\",\n  \"domain\": {\"source\": \"bench/gemm/domain.hpp\", \"shapes\": " << cake::gemm_domain::size << ", \"search\": " << cake::gemm_domain::count(false)
    << ", \"held_out\": " << cake::gemm_domain::count(true) << "},\n";
  // Clusters of each split-K schedule that the device runs at once (runtime_kernel::max_active_clusters;
  // the cost model's calibration reads them: bench/cost/derive_calibration.py --cluster-concurrency).
  if (!cluster_concurrency.empty()) j << "  \"cluster_concurrency\": [" << cluster_concurrency << "],\n";
  j << "  \"plans\": {\n";
  std::size_t i = 0;
  for (const auto& [name, p] : plans) j << "    \"" << name << "\": " << plan_json(p) << (++i < plans.size() ? "," : "") << "\n";
  j << "  },\n  \"rows\": [\n";
  j.setf(std::ios::fixed);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& x = rows[r];
    j.precision(5);
    j << "    {\"dtype\": \"" << input_name(x.in) << "\", \"layer\": \"" << cake::gemm_domain::layers[static_cast<std::size_t>(x.s.layer)].name
      << "\", \"M\": " << x.s.m << ", \"N\": " << x.s.n << ", \"K\": " << x.s.k << ", \"split\": \"" << (x.s.held_out ? "held_out" : "search")
      << "\", \"plan\": \"" << x.plan << "\", \"fallback\": " << (x.fallback ? "true" : "false") << ", \"ms\": " << x.ms << ", \"peer_ms\": ";
    if (x.peer_ms < 0) j << "null";
    else j << x.peer_ms;
    j.precision(6);
    j << ", \"rel_err\": " << (std::isfinite(x.check.rel_err) ? x.check.rel_err : 1e9) << ", \"nonfinite\": " << x.check.nonfinite
      << ", \"ok\": " << (x.ok ? "true" : "false") << "}" << (r + 1 < rows.size() ? "," : "") << "\n";
  }
  j << "  ]\n}\n";
  std::ofstream(path) << j.str();
  if (complete) std::printf("wrote %s (%zu rows)\n", path.c_str(), rows.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::string json = "gemm_sweep.json", driver = "unknown", dtype = "both", command = "cake_bench_gemm_sweep";
  int runs = 20;
  long long limit = 0, skip = 0, min_m = 0, max_m = 0, only_m = 0, only_n = 0, only_k = 0;
  bool estimate_only = false, placeholder = false, splitk_only = false, between_only = false;
  std::vector<long long> k_ladder;
  std::vector<cake::gemm_plan> extra_plans;  // --plans
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--json" && has_value) json = argv[++i];
    else if (a == "--driver" && has_value) driver = argv[++i];
    else if (a == "--dtype" && has_value) dtype = argv[++i];
    else if (a == "--runs" && has_value) runs = std::atoi(argv[++i]);
    else if (a == "--limit" && has_value) limit = std::atoll(argv[++i]);
    else if (a == "--skip" && has_value) skip = std::atoll(argv[++i]);
    else if (a == "--min-m" && has_value) min_m = std::atoll(argv[++i]);
    else if (a == "--max-m" && has_value) max_m = std::atoll(argv[++i]);
    else if (a == "--shape" && has_value) {
      if (std::sscanf(argv[++i], "%lld,%lld,%lld", &only_m, &only_n, &only_k) != 3 || only_m < 1) {
        std::fprintf(stderr, "cake_bench_gemm_sweep: --shape %s: expected M,N,K\n", argv[i]);
        return 2;
      }
    } else if (a == "--k-ladder" && has_value) {
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) {
        char* end = nullptr;
        const long long k = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end || k < 1) {
          std::fprintf(stderr, "cake_bench_gemm_sweep: --k-ladder %s: expected positive K values separated by commas\n", argv[i]);
          return 2;
        }
        k_ladder.push_back(k);
      }
    } else if (a == "--plans" && has_value) {
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) {
        const auto p = cake::parse_plan_name(item);
        if (!p) {
          std::fprintf(stderr, "cake_bench_gemm_sweep: --plans: '%s' is no plan name (e.g. bn128_s6_c1_pp64_f1, sk2_bm128_bn128_s5; docs/gemm.md)\n", item.c_str());
          return 2;
        }
        extra_plans.push_back(*p);
      }
    } else if (a == "--splitk-only") splitk_only = true;
    else if (a == "--between-widths-only") between_only = true;
    else if (a == "--estimate") estimate_only = true;
    else if (a == "--placeholder") placeholder = true;
    else {
      std::fprintf(stderr, "cake_bench_gemm_sweep: unknown argument '%s' (see the usage at the top of bench/gemm/bench_gemm_sweep.cpp)\n", a.c_str());
      return 2;
    }
    const bool flag = a == "--estimate" || a == "--placeholder" || a == "--splitk-only" || a == "--between-widths-only";
    if (a != "--json") command += " " + a + (flag ? "" : std::string(" ") + argv[i]);
    else command += " --json " + std::string(argv[i]).substr(std::string(argv[i]).rfind('/') + 1);
  }
  if (splitk_only && between_only) {
    std::fprintf(stderr, "cake_bench_gemm_sweep: --splitk-only and --between-widths-only select different shapes: give one\n");
    return 2;
  }
  if (!extra_plans.empty() && only_m == 0) {
    std::fprintf(stderr, "cake_bench_gemm_sweep: --plans needs --shape M,N,K (its rows are not evidence for the generator)\n");
    return 2;
  }
  // The schedules timed at a shape: the sweep's candidates, then --plans' (each once).
  auto candidates = [&extra_plans](long long m, long long n, long long k, int sms, gemm_input in, const splitk_concurrency* conc) {
    auto out = sweep_candidates(m, n, k, sms, in, conc);
    for (const auto& p : extra_plans)
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    return out;
  };
  if (dtype != "bf16" && dtype != "e4m3" && dtype != "both") {
    std::fprintf(stderr, "cake_bench_gemm_sweep: --dtype must be bf16, e4m3 or both (got '%s')\n", dtype.c_str());
    return 2;
  }
  if (runs < 2) {
    std::fprintf(stderr, "cake_bench_gemm_sweep: --runs must be at least 2 (got %d)\n", runs);
    return 2;
  }
  // fp8 first: after bf16 cuBLAS work, cuBLASLt's fp8 heuristic was seen to offer only an algorithm that
  // fails (docs/gemm.md, "What was seen").
  std::vector<gemm_input> inputs;
  if (dtype != "bf16") inputs.push_back(gemm_input::e4m3);
  if (dtype != "e4m3") inputs.push_back(gemm_input::bf16);
  // A --plans schedule the analyzer refuses is named before any GPU work (the sweep's own are tested in CI).
  for (const auto& p : extra_plans)
    for (auto in : inputs) {
      const cake::program prog = cake::gemm_detail::program_for(p, in);
      const auto report = cake::analyze(prog);
      if (!prog.errors.empty() || report.errors > 0) {
        std::fprintf(stderr, "cake_bench_gemm_sweep: --plans: %s (%s) is not a valid schedule:\n%s", cake::plan_name(p).c_str(), input_name(in),
                     prog.errors.empty() ? cake::analysis::to_text(report).c_str()
                                         : (to_text(prog.errors[0]) + "\n").c_str());
        return 2;
      }
    }
  const int est_sms = 132;  // the H200's: what the estimate, the placeholder and the shape filters assume
  auto shapes = domain_shapes(false, 0);
  if (!k_ladder.empty()) {
    if (only_m == 0) {
      std::fprintf(stderr, "cake_bench_gemm_sweep: --k-ladder needs --shape M,N,K (the ladder replaces its K)\n");
      return 2;
    }
    int layer = -1;  // (a layer of that N names the rows)
    for (std::size_t l = 0; l < cake::gemm_domain::layers.size() && layer < 0; ++l)
      if (cake::gemm_domain::layers[l].n == only_n) layer = static_cast<int>(l);
    if (layer < 0) {
      std::fprintf(stderr, "cake_bench_gemm_sweep: --k-ladder: N = %lld is the N of no layer of bench/gemm/domain.hpp\n", only_n);
      return 2;
    }
    shapes.clear();
    for (long long k : k_ladder) shapes.push_back({only_m, only_n, k, layer, false});
  } else if (only_m > 0) {
    shapes.clear();
    // (a domain shape keeps its split; any other M of a layer is marked searched)
    for (std::size_t i = 0; i < cake::gemm_domain::size && shapes.empty(); ++i)
      if (const auto d = cake::gemm_domain::at(i); d.m == only_m && d.n == only_n && d.k == only_k) shapes.push_back(d);
    for (std::size_t l = 0; l < cake::gemm_domain::layers.size() && shapes.empty(); ++l)
      if (cake::gemm_domain::layers[l].n == only_n && cake::gemm_domain::layers[l].k == only_k) shapes.push_back({only_m, only_n, only_k, static_cast<int>(l), false});
    if (shapes.empty()) {
      std::fprintf(stderr, "cake_bench_gemm_sweep: --shape %lld,%lld,%lld: N, K of no layer of bench/gemm/domain.hpp\n", only_m, only_n, only_k);
      return 2;
    }
  }
  if (skip < 0 || skip >= static_cast<long long>(shapes.size())) {
    std::fprintf(stderr, "cake_bench_gemm_sweep: --skip must be in [0, %zu) (got %lld)\n", shapes.size(), skip);
    return 2;
  }
  shapes.erase(shapes.begin(), shapes.begin() + skip);
  std::erase_if(shapes, [&](const cake::gemm_domain::shape& s) {
    if (s.m < min_m || (max_m > 0 && s.m > max_m)) return true;
    if (!splitk_only && !between_only) return false;
    auto between = [](const cake::gemm_plan& p) {
      return p.kernel == cake::gemm_kernel::sm90 && std::find(between_widths.begin(), between_widths.end(), p.sm90.bn) != between_widths.end();
    };
    for (auto in : inputs)
      for (const auto& p : candidates(s.m, s.n, s.k, est_sms, in, nullptr))
        if (splitk_only ? p.kernel == cake::gemm_kernel::splitk : between(p)) return false;
    return true;
  });
  if (limit > 0 && limit < static_cast<long long>(shapes.size())) shapes.resize(static_cast<std::size_t>(limit));

  // The estimate: every candidate and the peer, (runs + 2 warm-up) runs each with a 0.05 ms flush, 50 ms untimed per round, one
  // checked run with its download and comparison, JIT of each distinct schedule (~2.3 s with a cold cache: the
  // H200 re-sweep of 2026-12-05 took 203 s for 56 schedules where 0.6 s per schedule estimated 105 s).
  std::map<std::string, cake::gemm_plan> plans;
  double est_s = 0;
  int timed = 0;
  for (auto in : inputs) {
    for (const auto& s : shapes) {
      const auto cands = candidates(s.m, s.n, s.k, est_sms, in, nullptr);
      for (const auto& p : cands) plans.emplace(std::string(input_name(in)) + ":" + cake::plan_name(p), p);
      const double per = rough_ms(s.m, s.n, s.k, in);
      const double check_ms = 2.0 * s.m * s.n / 4e6 + 1.0 * s.m * s.n / 2e6;  // download at 4 GB/s, compare at 2e9 elements/s
      est_s += (cands.size() + 1) * ((runs + 2) * (per + 0.05) + check_ms + 2 * 50.0) / 1e3;  // + 50 ms untimed per work and round
      timed += static_cast<int>(cands.size());
    }
  }
  est_s += 2.3 * plans.size() + 2 + 3;  // JIT, warm-up, random operands
  std::printf("cake_bench_gemm_sweep: %zu search shapes x %s, %d (shape, schedule) pairs and the peer, %zu distinct schedules to JIT, %d runs each: "
              "estimated %.0f s\n",
              shapes.size(), dtype.c_str(), timed, plans.size(), runs, est_s);
  if (estimate_only) {
    for (const auto& s : shapes) std::printf("  shape %lldx%lldx%lld\n", s.m, s.n, s.k);
    for (const auto& [name, p] : plans) std::printf("  %s\n", name.c_str());
    return 0;
  }
  std::map<std::string, cake::gemm_plan> named;  // by plan name (dtype-free): the JSON's "plans"
  std::vector<row> rows;
  try {
    if (placeholder) {
      for (auto in : inputs)
        for (const auto& s : shapes) {
          const auto cands = candidates(s.m, s.n, s.k, est_sms, in, nullptr);
          double best = 1e30;
          for (std::size_t c = 0; c < cands.size(); ++c) {
            row r{in, s, cake::plan_name(cands[c]), c == 0};
            r.ms = modeled_ms(cands[c], s, in, est_sms);
            best = std::min(best, r.ms);
            r.ok = true;
            named.emplace(r.plan, cands[c]);
            rows.push_back(r);
          }
          for (std::size_t c = 0; c < cands.size(); ++c) rows[rows.size() - cands.size() + c].peer_ms = best * 1.02;
        }
      write_json(json, rows, named, true, "none (placeholder)", est_sms, "none", "none", command, runs);
      return 0;
    }
    if (!cake::jit::driver::available()) {
      std::printf("cake_bench_gemm_sweep: no GPU: %s\n", cake::jit::driver::unavailable_reason().c_str());
      return 0;
    }
    const auto& dev = cake::jit::driver::get().device(0);
    if (dev.cc_major != 9 || dev.cc_minor != 0) throw cake::jit::error("the sweep needs a cc 9.0 GPU; device 0 is " + dev.describe());
    auto rng = cake::harness::random_source::fresh();
    std::printf("seed %llu\n", static_cast<unsigned long long>(rng.seed()));
    peers& P = *new peers;  // lives to the end of the process (cuBLAS handles)
    const auto t_start = std::chrono::steady_clock::now();
    const std::string cuda = std::to_string(dev.driver_version / 1000) + "." + std::to_string(dev.driver_version % 1000 / 10);
    std::string concurrency_json;
    for (auto in : inputs) {
      operands o(in, shapes, rng);
      // How many CTAs of each split-K schedule run at once (whole clusters inside a GPC): what the
      // fill-the-SMs candidate plans with.
      splitk_concurrency conc;
      for (const auto& p : sweep_all_candidates()) {
        if (p.kernel != cake::gemm_kernel::splitk) continue;
        const int cluster = splitk_concurrency_cluster(p);
        const auto known = conc.find({p.splitk.bm, p.splitk.bn, cluster});
        const int clusters = known != conc.end() && p.splitk.global_sum ? static_cast<int>(known->second)
                                                                          : cake::gemm_detail::splitk_kernel_for(p.splitk, in, 0).max_active_clusters();
        record_splitk_concurrency(conc, p, clusters);
        concurrency_json += std::string(concurrency_json.empty() ? "" : ", ") + "{\"dtype\": \"" + input_name(in) + "\", \"plan\": \"" + cake::plan_name(p) +
                            "\", \"cluster\": " + std::to_string(cluster) + ", \"max_active_clusters\": " + std::to_string(clusters) + "}";
        std::printf("%s %s: %d clusters of %d at once (%lld CTAs)\n", input_name(in), cake::plan_name(p).c_str(), clusters, cluster,
                    static_cast<long long>(clusters) * cluster);
      }
      // JIT every schedule first, so that compile time never sits between timed runs.
      for (const auto& s : shapes)
        for (const auto& p : candidates(s.m, s.n, s.k, dev.sm_count, in, &conc)) {
          const auto q = cake::gemm_detail::as_run(p, s.m);  // (A's rows per stage from M, as cake::gemm runs it)
          if (q.kernel == cake::gemm_kernel::splitk) cake::gemm_detail::splitk_kernel_for(q.splitk, in, 0);
          else cake::gemm_detail::kernel_for(q.sm90, in, 0);
        }
      warm_up(P);
      for (const auto& s : shapes) {
        const shape sh{s.m, s.n, s.k};
        const auto cands = candidates(s.m, s.n, s.k, dev.sm_count, in, &conc);
        std::vector<work> works;
        std::vector<row> shape_rows;
        std::vector<std::uint16_t> ref;
        bool have_peer = true;
        std::unique_ptr<peer_run> peer;
        try {
          peer = std::make_unique<peer_run>(P, o, sh);
          (*peer)(nullptr);
          cake::jit::driver::get().cuCtxSynchronize();
          ref = download_bf16(o.dpeer, s.m * s.n);
        } catch (const std::exception& e) {
          have_peer = false;
          std::printf("  %s %lldx%lldx%lld: no peer (%s); candidates timed, correctness not checked\n", input_name(in), s.m, s.n, s.k, e.what());
        }
        for (std::size_t c = 0; c < cands.size(); ++c) {
          row r{in, s, cake::plan_name(cands[c]), c == 0};
          named.emplace(r.plan, cands[c]);
          auto w = [&o, p = cands[c], s](CUstream st) { run_plan(p, o, s.m, s.n, s.k, st); };
          if (have_peer) r.check = checked_run(o, s.m, s.n, ref, w);
          r.ok = have_peer && r.check.ok(tolerance(in));
          works.push_back(w);
          shape_rows.push_back(r);
        }
        if (have_peer) works.push_back([&](CUstream st) { (*peer)(st); });
        const auto med = timed_rounds(works, runs);
        std::printf("  %s %lldx%lldx%lld (%s):", input_name(in), s.m, s.n, s.k, cake::gemm_domain::layers[static_cast<std::size_t>(s.layer)].name);
        for (std::size_t c = 0; c < shape_rows.size(); ++c) {
          shape_rows[c].ms = med[c];
          if (have_peer) shape_rows[c].peer_ms = med.back();
          std::printf(" %s %.4f%s", shape_rows[c].plan.c_str(), med[c], shape_rows[c].ok ? "" : " (WRONG)");
          rows.push_back(shape_rows[c]);
        }
        if (have_peer) std::printf(" | peer %.4f", med.back());
        std::printf("\n");
        std::fflush(stdout);
        write_json(json, rows, named, false, dev.name, dev.sm_count, driver, cuda, command, runs, false, concurrency_json);
      }
    }
    std::printf("measured in %.0f s (estimated %.0f s)\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(), est_s);
    write_json(json, rows, named, false, dev.name, dev.sm_count, driver, cuda, command, runs, true, concurrency_json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cake_bench_gemm_sweep: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
