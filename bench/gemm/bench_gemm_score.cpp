// The score of cake::gemm's dispatcher (issue 14: geometric mean >= 1.10x cuBLAS bf16 and >= 1.05x
// cuBLASLt fp8, none below 0.9, zero wrong outputs) on the held-out shapes of bench/gemm/domain.hpp,
// which the sweep never timed: each shape through cake::gemm / cake::gemm_fp8 (select_gemm's plan: a
// shape bucket of include/cake/gemm_dispatch.hpp, or the fallback) against the peer, L2 flushed, median
// of --runs runs in 2 alternating rounds; the first run of each shape is checked against the peer's output.
// The dispatch cost is counted: the host time of select_gemm for the shape (median of 5 batches of
// 10^4 calls) is added to Cake's GPU time in "ratio" (ratio_gpu_only leaves it out).
//
//   cake_bench_gemm_score [--json FILE] [--dtype bf16|e4m3|both] [--runs N] [--driver VERSION] [--limit N] [--only FILE]
// --only FILE: only the (type, shape) pairs FILE lists, one "bf16|e4m3 M N K" per line (an A/B of two dispatch
// tables on the shapes whose plan differs); a line that names no held-out shape is an error.
// --list-plans: no GPU; prints "TYPE M N K PLAN" for every held-out shape, the plan select_gemm gives on a GPU
// of the table's SM count (the lines two builds differ on are an --only file for their A/B).
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "../common.hpp"
#include "sweep_common.hpp"

namespace {

using cake::gemm_input;
using namespace cake_bench;

struct row {
  gemm_input in;
  cake::gemm_domain::shape s;
  std::string plan;
  bool from_bucket = false;
  double ms = 0, peer_ms = -1, dispatch_us = 0;
  check_result check;
  bool ok = false;
};

// Host time of one select_gemm call for the shape, in microseconds.
double dispatch_us(const cake::gemm_domain::shape& s, int sms, gemm_input in) {
  constexpr int calls = 10000;
  std::vector<double> batches;
  volatile int sink = 0;
  for (int b = 0; b < 5; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) sink = sink + cake::select_gemm(s.m, s.n, s.k, sms, in).plan.sm90.bn;
    batches.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls);
  }
  std::sort(batches.begin(), batches.end());
  return batches[2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string json = "gemm_score.json", driver = "unknown", dtype = "both", command = "cake_bench_gemm_score";
  int runs = 50;
  long long limit = 0;
  std::string only_file;
  bool list_plans = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list-plans") {
      list_plans = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "cake_bench_gemm_score: '%s' needs a value (usage at the top of bench/gemm/bench_gemm_score.cpp)\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--json") json = v;
    else if (a == "--driver") driver = v;
    else if (a == "--dtype") dtype = v;
    else if (a == "--runs") runs = std::atoi(v.c_str());
    else if (a == "--limit") limit = std::atoll(v.c_str());
    else if (a == "--only") only_file = v;
    else {
      std::fprintf(stderr, "cake_bench_gemm_score: unknown argument '%s'\n", a.c_str());
      return 2;
    }
    command += " " + a + " " + (a == "--json" ? v.substr(v.rfind('/') + 1) : v);
  }
  if ((dtype != "bf16" && dtype != "e4m3" && dtype != "both") || runs < 2) {
    std::fprintf(stderr, "cake_bench_gemm_score: --dtype must be bf16, e4m3 or both and --runs at least 2\n");
    return 2;
  }
  std::vector<gemm_input> inputs;
  if (dtype != "bf16") inputs.push_back(gemm_input::e4m3);  // fp8 first (see bench_gemm_sweep.cpp)
  if (dtype != "e4m3") inputs.push_back(gemm_input::bf16);
  const auto shapes = domain_shapes(true, limit);
  // --only: the listed (type, M, N, K); each must be a held-out shape of the domain
  std::set<std::tuple<std::string, long long, long long, long long>> only;
  if (!only_file.empty()) {
    std::ifstream f(only_file);
    if (!f) {
      std::fprintf(stderr, "cake_bench_gemm_score: cannot read --only file '%s'\n", only_file.c_str());
      return 2;
    }
    std::string t;
    long long m = 0, n = 0, k = 0;
    while (f >> t >> m >> n >> k) {
      const bool held_out = std::any_of(shapes.begin(), shapes.end(), [&](const auto& s) { return s.m == m && s.n == n && s.k == k; });
      if ((t != "bf16" && t != "e4m3") || !held_out) {
        std::fprintf(stderr, "cake_bench_gemm_score: --only line '%s %lld %lld %lld' names no held-out shape of bench/gemm/domain.hpp\n", t.c_str(), m, n, k);
        return 2;
      }
      only.insert({t, m, n, k});
    }
    if (!f.eof() || only.empty()) {
      std::fprintf(stderr, "cake_bench_gemm_score: --only file '%s' is malformed or empty (want lines 'bf16|e4m3 M N K')\n", only_file.c_str());
      return 2;
    }
  }
  auto listed = [&](gemm_input in, const cake::gemm_domain::shape& s) { return only.empty() || only.count({input_name(in), s.m, s.n, s.k}) > 0; };
  if (list_plans) {
    for (auto in : inputs)
      for (const auto& s : shapes)
        if (listed(in, s))
          std::printf("%s %lld %lld %lld %s\n", input_name(in), s.m, s.n, s.k,
                      cake::plan_name(cake::select_gemm(s.m, s.n, s.k, cake::gemm_dispatch_table::sm_count, in).plan).c_str());
    return 0;
  }
  try {
    if (!cake::jit::driver::available()) {
      std::printf("cake_bench_gemm_score: no GPU: %s\n", cake::jit::driver::unavailable_reason().c_str());
      return 0;
    }
    const auto& dev = cake::jit::driver::get().device(0);
    auto rng = cake::harness::random_source::fresh();
    std::printf("seed %llu; dispatcher evidence: %s%s\n", static_cast<unsigned long long>(rng.seed()), cake::gemm_dispatch_table::evidence,
                cake::gemm_dispatch_table::measured ? "" : " (PLACEHOLDER: disabled, every shape takes the fallback)");
    peers& P = *new peers;
    std::vector<row> rows;
    for (auto in : inputs) {
      operands o(in, shapes, rng);
      for (const auto& s : shapes) {  // JIT first
        if (!listed(in, s)) continue;
        const auto sel = cake::select_gemm(s.m, s.n, s.k, dev.sm_count, in);
        const auto q = cake::gemm_detail::as_run(sel.plan, s.m);  // (A's rows per stage from M, as cake::gemm runs it)
        if (q.kernel == cake::gemm_kernel::splitk) cake::gemm_detail::splitk_kernel_for(q.splitk, in, 0);
        else cake::gemm_detail::kernel_for(q.sm90, in, 0);
      }
      warm_up(P);
      for (const auto& s : shapes) {
        if (!listed(in, s)) continue;
        row r{in, s};
        const auto sel = cake::select_gemm(s.m, s.n, s.k, dev.sm_count, in);
        r.plan = cake::plan_name(sel.plan);
        r.from_bucket = sel.from_bucket;
        r.dispatch_us = dispatch_us(s, dev.sm_count, in);
        auto cake_call = [&o, s, in](CUstream st) {
          if (in == gemm_input::bf16) cake::gemm(o.a.address(), o.b.address(), o.d.address(), s.m, s.n, s.k, s.k, s.k, s.n, st);
          else cake::gemm_fp8(o.a.address(), o.b.address(), o.d.address(), s.m, s.n, s.k, s.k, s.k, s.n, fp8_scale, st);
        };
        std::vector<work> works{cake_call};
        std::unique_ptr<peer_run> peer;
        try {
          peer = std::make_unique<peer_run>(P, o, shape{s.m, s.n, s.k});
          (*peer)(nullptr);
          cake::jit::driver::get().cuCtxSynchronize();
          r.check = checked_run(o, s.m, s.n, download_bf16(o.dpeer, s.m * s.n), cake_call);
          r.ok = r.check.ok(tolerance(in));
          works.push_back([&](CUstream st) { (*peer)(st); });
        } catch (const std::exception& e) {
          std::printf("  %s %lldx%lldx%lld: no peer (%s)\n", input_name(in), s.m, s.n, s.k, e.what());
        }
        const auto med = timed_rounds(works, runs);
        r.ms = med[0];
        if (peer) r.peer_ms = med[1];
        std::printf("  %s %lldx%lldx%lld %s%s: %.4f ms + dispatch %.3f us, peer %.4f ms, ratio %.3f%s\n", input_name(in), s.m, s.n, s.k, r.plan.c_str(),
                    r.from_bucket ? " (bucket)" : " (fallback)", r.ms, r.dispatch_us, r.peer_ms, r.peer_ms / (r.ms + r.dispatch_us / 1e3), r.ok ? "" : " WRONG");
        std::fflush(stdout);
        rows.push_back(r);
      }
    }
    // JSON (docs/benchmarks.md format plus the summary the issue asks for).
    std::ostringstream j;
    j.setf(std::ios::fixed);
    j << "{\n  \"gpu\": \"" << json_escape(dev.name) << "\", \"sm\": \"sm_90a\", \"driver\": \"" << driver << "\", \"cuda\": \"" << dev.driver_version / 1000 << "."
      << dev.driver_version % 1000 / 10 << "\", \"date\": \"" << today() << "\",\n  \"command\": \"" << json_escape(command) << "\",\n"
      << "  \"method\": \"held-out shapes of bench/gemm/domain.hpp through cake::gemm / cake::gemm_fp8 (dispatcher included); CUDA events, L2 flushed "
         "before each run, median of "
      << runs << " runs in 2 rounds with the peer (the second in reverse order; 50 ms of each untimed before its runs); ratio = peer_ms / (cake_ms + dispatch_us / 1000), dispatch_us the host time of "
                 "select_gemm; first run checked against the peer's output\",\n"
      << "  \"dispatcher\": \"" << json_escape(cake::gemm_dispatch_table::evidence) << "\", \"dispatcher_measured\": "
      << (cake::gemm_dispatch_table::measured ? "true" : "false") << ",\n  \"rows\": [\n";
    std::string sep;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      j.precision(5);
      j << "    {\"kernel\": \"gemm\", \"dtype\": \"" << input_name(r.in) << "\", \"layer\": \"" << cake::gemm_domain::layers[static_cast<std::size_t>(r.s.layer)].name
        << "\", \"shape\": {\"M\": " << r.s.m << ", \"N\": " << r.s.n << ", \"K\": " << r.s.k << "}, \"plan\": \"" << r.plan
        << "\", \"from_bucket\": " << (r.from_bucket ? "true" : "false") << ", \"cake_ms\": " << r.ms << ", \"dispatch_us\": " << r.dispatch_us
        << ", \"peer\": \"" << (r.in == gemm_input::bf16 ? "cublas" : "cublasLt") << "\", \"peer_ms\": ";
      if (r.peer_ms < 0) j << "null";
      else j << r.peer_ms << ", \"ratio\": " << r.peer_ms / (r.ms + r.dispatch_us / 1e3) << ", \"ratio_gpu_only\": " << r.peer_ms / r.ms;
      j.precision(6);
      j << ", \"max_rel_err\": " << (std::isfinite(r.check.rel_err) ? r.check.rel_err : 1e9) << ", \"ok\": " << (r.ok ? "true" : "false") << "}"
        << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    j << "  ],\n  \"summary\": {";
    for (auto in : inputs) {
      double logs = 0, lo = 1e30;
      int n = 0, wrong = 0, fallback = 0;
      for (const auto& r : rows) {
        if (r.in != in) continue;
        if (r.peer_ms < 0) continue;
        wrong += !r.ok;
        fallback += !r.from_bucket;
        const double ratio = r.peer_ms / (r.ms + r.dispatch_us / 1e3);
        logs += std::log(ratio), lo = std::min(lo, ratio), ++n;
      }
      if (n == 0) continue;
      j.precision(4);
      j << sep << "\"" << input_name(in) << "\": {\"shapes\": " << n << ", \"geomean_ratio\": " << std::exp(logs / n) << ", \"min_ratio\": " << lo
        << ", \"wrong\": " << wrong << ", \"fallback_shapes\": " << fallback << "}";
      sep = ", ";
      std::printf("%s: %d held-out shapes, geometric mean %.3f, min %.3f, wrong %d, %d on the fallback\n", input_name(in), n, std::exp(logs / n), lo, wrong,
                  fallback);
    }
    j << "}\n}\n";
    std::ofstream(json) << j.str();
    std::printf("wrote %s\n", json.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cake_bench_gemm_score: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
