// Cake's GEMMs against cuBLAS (bf16) and cuBLASLt (fp8 e4m3) on the same GPU, in the same process:
// L2 flushed before every run, CUDA events, median of --runs (>= 100) runs; each shape is also checked
// for correctness against the f32 reference before it is timed. Writes the results in the format of
// docs/benchmarks.md to --json.
//
//   cake_bench_gemm [--runs N] [--json FILE] [--driver VERSION] [--quick] [--held-out] [--epilogue] [--variants a,b]
//                   [google benchmark flags]
//   cake_bench_gemm --host-overhead [--json FILE]   host time per call at 128^3 against cublasGemmEx
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cake/gemm.hpp>
#include <cake/harness/gemm_check.hpp>
#include <cake/harness/timing.hpp>

#include "../common.hpp"
#include "peers.hpp"

namespace {

using cake_bench::cublas_check;
using cake_bench::peers;
using cake_bench::shape;

struct row {
  std::string kernel = "gemm", dtype, peer, config;
  std::string variant;  // --variants: the schedule variant's name (empty otherwise)
  shape s;
  double cake_ms = 0, peer_ms = 0, max_rel_err = 0;
  bool ok = false;
};

int g_runs = 100;
int g_cluster = 0;  // --cluster N: override the cluster size of the chosen schedule (0: as chosen)
bool g_direct = false;  // --direct-store: the chosen schedule with the direct-store epilogue

// --variants a,b,...: each shape is timed with each named schedule variant (the peer alongside). The
// tile width and depth of a variant are fixed; "chosen" is choose_gemm's pick.
bool apply_variant(cake::kernels::gemm_sm90_config& c, const std::string& v, bool fp8) {
  auto fit = [&] { c.stages = cake::max_gemm_stages(c, fp8 ? 1 : 2); };
  if (v == "chosen") return true;
  if (v == "coop1") return c.in_flight = 1, true;                                               // cooperative, one wgmma group in flight
  if (v == "la") return c.lookahead = true, true;  // the next tile's first K block before the stores (cake::gemm_with refuses it where it does not fit)
  if (v == "wt") return c.whole_tile_staging = true, fit(), true;  // one staging buffer per output chunk (BN 256: 3 stages)
  if (v == "la_wt") return c.lookahead = true, c.whole_tile_staging = true, fit(), true;
  if (v == "coop1_bn128") return c.in_flight = 1, c.bn = 128, fit(), true;
  if (v == "pp128") return c.pingpong = true, c.bm = 128, c.bn = 128, c.in_flight = 1, fit(), true;  // ping-pong 128x128 per warpgroup
  if (v == "pp128_f0") return c.pingpong = true, c.bm = 128, c.bn = 128, c.in_flight = 0, fit(), true;
  if (v == "pp64") return c.pingpong = true, c.bm = 64, c.bn = 256, c.in_flight = 1, fit(), true;    // ping-pong 64x256 per warpgroup
  if (v == "pp128_c1") return c.pingpong = true, c.bm = 128, c.bn = 128, c.in_flight = 1, c.cluster_m = 1, fit(), true;
  return false;
}
// The "config" text of a row timed with a named variant.
std::string variant_config(const cake::kernels::gemm_sm90_config& c, const std::string& v) {
  return v + ": bm " + std::to_string(c.bm) + " bn " + std::to_string(c.bn) + " stages " + std::to_string(c.stages) + " cluster " + std::to_string(c.cluster_m) +
         (c.pingpong ? " ping-pong" : " cooperative") + " in-flight " + std::to_string(c.in_flight) + (c.lookahead ? " lookahead" : "") + (c.whole_tile_staging ? " whole-tile staging" : "");
}
std::vector<std::string> g_variants;
bool g_no_fp8 = false;
bool g_epilogue = false;  // --epilogue: bias + GELU (tanh) fused, against cuBLASLt's CUBLASLT_EPILOGUE_GELU_BIAS
std::vector<row> g_rows;

peers& the_peers();

// --host-overhead: host time per call at 128 x 128 x 128, where one call's GPU work is shorter than its
// host time: cake::gemm against cublasGemmEx, each called `calls` times back to back with no
// synchronization inside a batch (steady_clock), median of 5 batches after 200 warm-up calls. Writes
// `json` (docs/benchmarks.md format, one row).
int host_overhead(const std::string& json, const std::string& command, const std::string& driver, int calls) {
  const shape s{128, 128, 128};
  cake::harness::gemm_operands o(cake::harness::gemm_problem{s.m, s.n, s.k});
  o.a.fill_u32(0x3f803f80u);  // bf16 1.0 pairs
  o.b.fill_u32(0x3f803f80u);
  peers& P = the_peers();
  auto cake_call = [&] { cake::gemm(o.a.address(), o.b.address(), o.d.address(), s.m, s.n, s.k, s.k, s.k, s.n); };
  auto blas_call = [&] { P.bf16(o.a.get(), o.b.get(), o.d.get(), s, nullptr); };
  auto per_call_us = [&](auto&& fn) {
    for (int i = 0; i < 200; ++i) fn();
    cake::jit::driver::get().cuCtxSynchronize();
    std::vector<double> batches;
    for (int b = 0; b < 5; ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) fn();
      const auto t1 = std::chrono::steady_clock::now();
      cake::jit::driver::get().cuCtxSynchronize();
      batches.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    }
    std::sort(batches.begin(), batches.end());
    return batches[batches.size() / 2];
  };
  const double cake_us = per_call_us(cake_call), blas_us = per_call_us(blas_call);
  std::printf("host time per call at 128x128x128: cake::gemm %.2f us, cublasGemmEx %.2f us\n", cake_us, blas_us);
  const auto& dev = cake::jit::driver::get().device(0);
  std::ostringstream j;
  j << "{\n  \"gpu\": \"" << dev.name << "\", \"sm\": \"sm_" << dev.cc_major << dev.cc_minor << (dev.cc_major == 9 ? "a" : "") << "\", \"driver\": \"" << driver
    << "\", \"cuda\": \"13.0\", \"date\": \"" << cake_bench::today() << "\",\n  \"command\": \"" << command << "\",\n"
    << "  \"method\": \"host time per call, " << calls << " calls back to back per batch (no synchronization inside a batch), steady_clock, median of 5 "
    << "batches after 200 warm-up calls; the GPU work of one call is shorter than its host time\",\n  \"rows\": [\n"
    << "    {\"kernel\": \"gemm_host_overhead\", \"dtype\": \"bf16\", \"shape\": {\"M\": 128, \"N\": 128, \"K\": 128}, \"peer\": \"cublasGemmEx\", "
    << "\"cake_us_per_call\": " << cake_us << ", \"peer_us_per_call\": " << blas_us << ", \"ratio\": " << blas_us / cake_us << "}\n  ]\n}\n";
  std::ofstream(json) << j.str();
  return 0;
}

// Which cuBLASLt fp8 configurations run on this GPU (diagnosis of CUBLAS_STATUS_NOT_SUPPORTED).
void probe_fp8() {
  auto& P = the_peers();
  const long long n = 1024;
  cake::jit::device_buffer a(n * n), b(n * n), d(2 * n * n), c(2 * n * n);
  struct variant {
    const char* what;
    bool scale_ptrs, fast, separate_c, workspace;
    cudaDataType ctype;
  };
  const variant vs[] = {{"scale ptrs, fast accum, C==D", true, true, false, true, CUDA_R_16BF},
                        {"no scale ptrs", false, true, false, true, CUDA_R_16BF},
                        {"no fast accum", true, false, false, true, CUDA_R_16BF},
                        {"separate C", true, true, true, true, CUDA_R_16BF},
                        {"no workspace", true, true, false, false, CUDA_R_16BF},
                        {"nothing extra", false, false, true, false, CUDA_R_16BF}};
  for (const auto& v : vs) {
    cublasLtMatmulDesc_t op;
    cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof nn);
    void* sa = P.scales.address();
    void* sb = static_cast<char*>(P.scales.address()) + 256;
    if (v.scale_ptrs) {
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb);
    }
    const std::int8_t fast = v.fast;
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast);
    cublasLtMatrixLayout_t la, lb, lc, ld;
    cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n);
    cublasLtMatrixLayoutCreate(&lc, v.ctype, n, n, n);
    cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, n, n);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    const std::size_t ws = v.workspace ? P.workspace.size() : 0;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t r[8] = {};
    int found = 0;
    const auto hs = cublasLtMatmulAlgoGetHeuristic(P.lt, op, la, lb, lc, ld, pref, 8, r, &found);
    std::string st;
    for (int i = 0; i < found; ++i) {
      const float one = 1.f, zero = 0.f;
      const auto s = cublasLtMatmul(P.lt, op, &one, b.address(), la, a.address(), lb, &zero, v.separate_c ? c.address() : d.address(), lc, d.address(), ld,
                                    &r[i].algo, v.workspace ? P.workspace.address() : nullptr, ws, nullptr);
      st += " " + std::to_string(r[i].state) + "/" + std::to_string(s);
    }
    std::printf("probe fp8 %-32s heuristic %d found %d  state/matmul:%s\n", v.what, hs, found, st.c_str());
  }
  for (shape s : {shape{1024, 1024, 1024}, shape{4096, 4096, 4096}, shape{8192, 8192, 8192}, shape{4096, 7168, 2048}}) {
    cake::harness::gemm_problem pr{s.m, s.n, s.k};
    pr.fp8 = true;
    cake::harness::gemm_operands o(pr);
    try {
      P.plan_fp8(s, 0.5f, true, o.a.get(), o.b.get(), o.d.get());
      std::printf("probe plan_fp8 %lldx%lldx%lld: ok\n", s.m, s.n, s.k);
    } catch (const std::exception& e) {
      std::printf("probe plan_fp8 %lldx%lldx%lld: %s\n", s.m, s.n, s.k, e.what());
    }
  }
}

peers& the_peers() {
  static peers p;
  return p;
}
cake::harness::gemm_reference& the_reference() {
  static cake::harness::gemm_reference r;
  return r;
}

void bench_shape(benchmark::State& state, shape s, bool fp8, std::string variant = "") {
  auto& P = the_peers();
  auto rng = cake::harness::random_source::fresh();
  cake::harness::gemm_problem pr{s.m, s.n, s.k};
  pr.fp8 = fp8;
  pr.scale = fp8 ? 0.5f : 1.0f;
  cake::harness::gemm_operands o(pr);
  row r;
  r.dtype = fp8 ? "e4m3" : "bf16";
  r.peer = fp8 ? "cublasLt" : "cublas";
  r.s = s;
  r.config = cake::choose_gemm(s.m, s.n, s.k, cake::jit::driver::get().device(0).sm_count, fp8 ? cake::gemm_input::e4m3 : cake::gemm_input::bf16).why;
  auto config = cake::choose_gemm(s.m, s.n, s.k, cake::jit::driver::get().device(0).sm_count, fp8 ? cake::gemm_input::e4m3 : cake::gemm_input::bf16).config;
  if (g_cluster > 0) config.cluster_m = g_cluster, r.config += ", cluster " + std::to_string(g_cluster);
  if (g_direct) config.direct_store = true, r.config += ", direct store";
  if (!variant.empty()) {
    if (!apply_variant(config, variant, fp8)) throw cake::jit::error("unknown --variants entry '" + variant + "'");
    r.variant = variant;
    r.config = variant_config(config, variant);
  }
  auto run_cake = [&](CUstream st) {
    cake::gemm_with(config, fp8 ? cake::gemm_input::e4m3 : cake::gemm_input::bf16, o.a.address(), o.b.address(), o.d.address(), s.m, s.n, s.k,
                    o.p.lda, o.p.ldb, o.p.ldd, pr.scale, st);
  };
  const auto check = cake::harness::check_gemm(o, rng, the_reference(), [&](cake::harness::gemm_operands&) { run_cake(nullptr); });
  r.max_rel_err = check.cmp.rel_err;
  r.ok = check.ok(fp8 ? 3e-2 : 1e-2);
  peers::fp8_plan plan;
  if (fp8) plan = P.plan_fp8(s, pr.scale, true, o.a.get(), o.b.get(), o.d.get());
  // Cake and the peer alternate in rounds, so that clock or thermal drift affects both alike.
  constexpr int rounds = 4;
  cake::harness::timing_options topt;
  topt.runs = (g_runs + rounds - 1) / rounds;
  topt.warmup = 5;
  auto run_peer = [&](CUstream st) {
    if (fp8) P.fp8(plan, o.a.get(), o.b.get(), o.d.get(), st);
    else P.bf16(o.a.get(), o.b.get(), o.d.get(), s, st);
  };
  for (auto _ : state) {
    std::vector<double> cake_samples, peer_samples;
    for (int round = 0; round < rounds; ++round) {
      const auto tc = cake::harness::time_gpu(run_cake, topt);
      const auto tp = cake::harness::time_gpu(run_peer, topt);
      cake_samples.insert(cake_samples.end(), tc.samples_ms.begin(), tc.samples_ms.end());
      peer_samples.insert(peer_samples.end(), tp.samples_ms.begin(), tp.samples_ms.end());
    }
    r.cake_ms = cake::harness::summarize(cake_samples).median_ms;
    r.peer_ms = cake::harness::summarize(peer_samples).median_ms;
    state.SetIterationTime(r.cake_ms / 1e3);
  }
  const double flop = 2.0 * s.m * s.n * s.k;
  state.counters["cake_TFLOPs"] = flop / r.cake_ms / 1e9;
  state.counters["peer_TFLOPs"] = flop / r.peer_ms / 1e9;
  state.counters["ratio"] = r.peer_ms / r.cake_ms;
  state.counters["rel_err"] = r.max_rel_err;
  if (!r.ok) state.SkipWithError("correctness check failed");
  g_rows.push_back(r);
}

// The fused bias + GELU epilogue against cuBLASLt's: same inputs, outputs compared with each other.
void bench_epilogue(benchmark::State& state, shape s, std::string variant = "") {
  auto& P = the_peers();
  auto rng = cake::harness::random_source::fresh();
  cake::harness::gemm_problem pr{s.m, s.n, s.k};
  cake::harness::gemm_operands o(pr);
  o.a.upload(cake::harness::random_vector<cake::harness::host_bf16>(static_cast<std::size_t>(s.m * o.p.lda), rng));
  o.b.upload(cake::harness::random_vector<cake::harness::host_bf16>(static_cast<std::size_t>(s.n * o.p.ldb), rng));
  auto bias = cake::jit::to_device(cake::harness::random_vector<cake::harness::host_bf16>(static_cast<std::size_t>(s.n), rng));
  cake::jit::device_buffer dpeer(o.d.size());
  row r;
  r.kernel = "gemm_bias_gelu";
  r.dtype = "bf16";
  r.peer = "cublasLt_gelu_bias";
  r.s = s;
  cake::gemm_epilogue_args e;
  e.bias = bias.address();
  e.activation = cake::kernels::gemm_activation::gelu_tanh;
  const auto chosen = cake::choose_gemm(s.m, s.n, s.k, cake::jit::driver::get().device(0).sm_count, cake::gemm_input::bf16, e.flags());
  r.config = chosen.why;
  auto config = chosen.config;
  if (!variant.empty()) {  // --variants: the named schedule variant, with the same epilogue
    if (!apply_variant(config, variant, false)) throw cake::jit::error("unknown --variants entry '" + variant + "'");
    r.variant = variant;
    r.config = variant_config(config, variant);
  }
  auto run_cake = [&](CUstream st) {
    if (variant.empty()) cake::gemm(o.a.address(), o.b.address(), o.d.address(), s.m, s.n, s.k, o.p.lda, o.p.ldb, o.p.ldd, e, st);
    else cake::gemm_with(config, o.a.address(), o.b.address(), o.d.address(), s.m, s.n, s.k, o.p.lda, o.p.ldb, o.p.ldd, e, st);
  };
  const auto plan = P.plan_gelu_bias(s, bias.get());
  auto run_peer = [&](CUstream st) { P.gelu_bias(plan, o.a.get(), o.b.get(), dpeer.get(), st); };
  o.d.fill_u32(0xffffffffu);
  run_cake(nullptr);
  run_peer(nullptr);
  cake::jit::driver::get().cuCtxSynchronize();
  {
    auto x = o.d.download<std::uint16_t>(), y = dpeer.download<std::uint16_t>();
    double num = 0, den = 0;
    long long bad = 0;
    for (long long m = 0; m < s.m; ++m)
      for (long long n = 0; n < s.n; ++n) {
        const double a = cake::harness::bf16_bits_to_float(x[static_cast<std::size_t>(m * o.p.ldd + n)]);
        const double b = cake::harness::bf16_bits_to_float(y[static_cast<std::size_t>(m * s.n + n)]);
        if (!std::isfinite(a)) ++bad;
        else num += (a - b) * (a - b), den += b * b;
      }
    r.max_rel_err = den > 0 ? std::sqrt(num / den) : 0;
    r.ok = bad == 0 && r.max_rel_err < 1e-2;
  }
  constexpr int rounds = 4;
  cake::harness::timing_options topt;
  topt.runs = (g_runs + rounds - 1) / rounds;
  topt.warmup = 5;
  for (auto _ : state) {
    std::vector<double> cs, ps;
    for (int round = 0; round < rounds; ++round) {
      const auto tc = cake::harness::time_gpu(run_cake, topt);
      const auto tp = cake::harness::time_gpu(run_peer, topt);
      cs.insert(cs.end(), tc.samples_ms.begin(), tc.samples_ms.end());
      ps.insert(ps.end(), tp.samples_ms.begin(), tp.samples_ms.end());
    }
    r.cake_ms = cake::harness::summarize(cs).median_ms;
    r.peer_ms = cake::harness::summarize(ps).median_ms;
    state.SetIterationTime(r.cake_ms / 1e3);
  }
  state.counters["ratio"] = r.peer_ms / r.cake_ms;
  state.counters["rel_err"] = r.max_rel_err;
  if (!r.ok) state.SkipWithError("Cake and cuBLASLt disagree");
  g_rows.push_back(r);
}

void write_json(const std::string& path, const std::string& command, const std::string& driver) {
  const auto& dev = cake::jit::driver::get().device(0);
  std::ostringstream j;
  j.setf(std::ios::fixed);
  j << "{\n  \"gpu\": \"" << dev.name << "\", \"sm\": \"sm_90a\", \"driver\": \"" << driver << "\", \"cuda\": \"" << dev.driver_version / 1000 << "."
    << dev.driver_version % 1000 / 10 << "\", \"date\": \"" << cake_bench::today() << "\",\n  \"command\": \"" << command << "\",\n"
    << "  \"method\": \"CUDA events, L2 flushed before each run, median of " << g_runs
    << " runs in 4 alternating rounds of Cake and the peer, same process, same buffers, after a 2 s warm-up; fp8 peer: cuBLASLt with "
       "CUBLASLT_MATMUL_DESC_FAST_ACCUM=1 (native fp8 accumulation, as Cake's wgmma)\",\n"
    << "  \"rows\": [\n";
  double log_bf16 = 0, log_fp8 = 0, log_epi = 0;
  int n_bf16 = 0, n_fp8 = 0, n_epi = 0;
  std::vector<std::pair<std::string, std::pair<double, int>>> per_variant;  // in first-seen order
  for (std::size_t i = 0; i < g_rows.size(); ++i) {
    const auto& r = g_rows[i];
    const double flop = 2.0 * r.s.m * r.s.n * r.s.k;
    j.precision(4);
    j << "    {\"kernel\": \"" << r.kernel << "\", \"dtype\": \"" << r.dtype << "\", \"shape\": {\"M\": " << r.s.m << ", \"N\": " << r.s.n << ", \"K\": " << r.s.k
      << "}";
    if (!r.variant.empty()) j << ", \"variant\": \"" << r.variant << "\"";
    j << ", \"cake_ms\": " << r.cake_ms << ", \"peer\": \"" << r.peer << "\", \"peer_ms\": " << r.peer_ms;
    if (r.ok) j << ", \"ratio\": " << r.peer_ms / r.cake_ms;
    j.precision(1);
    j << ", \"cake_tflops\": " << flop / r.cake_ms / 1e9 << ", \"peer_tflops\": " << flop / r.peer_ms / 1e9;
    j.precision(5);
    j << ", \"max_rel_err\": " << r.max_rel_err << ", \"ok\": " << (r.ok ? "true" : "false") << ", \"config\": \"" << r.config << "\"}"
      << (i + 1 < g_rows.size() ? "," : "") << "\n";
    if (r.ok && r.kernel == "gemm") (r.dtype == "bf16" ? log_bf16 : log_fp8) += std::log(r.peer_ms / r.cake_ms), ++(r.dtype == "bf16" ? n_bf16 : n_fp8);
    if (r.ok && r.kernel != "gemm") log_epi += std::log(r.peer_ms / r.cake_ms), ++n_epi;
    if (r.ok && !r.variant.empty()) {
      const std::string key = r.variant + "_" + r.dtype + "_geomean_ratio";
      auto it = per_variant.begin();
      while (it != per_variant.end() && it->first != key) ++it;
      if (it == per_variant.end()) it = per_variant.insert(it, {key, {0.0, 0}});
      it->second.first += std::log(r.peer_ms / r.cake_ms), ++it->second.second;
    }
  }
  j.precision(4);
  // Only the kinds that were measured get a geometric mean (an absent kind is left out, not written as 0).
  std::string sep;
  j << "  ],\n  \"summary\": {";
  auto mean = [&](const char* name, double log_sum, int n) {
    if (n == 0) return;
    j << sep << "\"" << name << "\": " << std::exp(log_sum / n);
    sep = ", ";
  };
  // With several variants a mean over all rows mixes schedules: each variant gets its own instead.
  if (per_variant.empty()) {
    mean("bf16_geomean_ratio", log_bf16, n_bf16);
    mean("fp8_geomean_ratio", log_fp8, n_fp8);
    mean("bias_gelu_geomean_ratio", log_epi, n_epi);
  }
  for (const auto& [key, v] : per_variant) mean(key.c_str(), v.first, v.second);
  j << "}\n}\n";
  std::ofstream(path) << j.str();
  std::printf("%s", j.str().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string json = "gemm.json", driver = "unknown", command = "cake_bench_gemm";
  bool quick = false, held_out = false;
  int host_overhead_calls = 0;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    command += std::string(" ") + argv[i];
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) g_runs = std::atoi(argv[++i]), command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i], command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--driver") && i + 1 < argc) driver = argv[++i], command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--held-out")) held_out = true;
    else if (!std::strcmp(argv[i], "--direct-store")) g_direct = true;
    else if (!std::strcmp(argv[i], "--cluster") && i + 1 < argc) g_cluster = std::atoi(argv[++i]), command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--variants") && i + 1 < argc) {
      std::string list = argv[++i];
      command += " " + list;
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = list.find(',', at);
        g_variants.push_back(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
    } else if (!std::strcmp(argv[i], "--epilogue")) g_epilogue = true;
    else if (!std::strcmp(argv[i], "--no-fp8")) g_no_fp8 = true;
    else if (!std::strcmp(argv[i], "--host-overhead")) host_overhead_calls = 2000;
    else if (!std::strcmp(argv[i], "--probe-fp8")) {
      probe_fp8();
      return 0;
    }
    else rest.push_back(argv[i]);
  }
  try {
    if (!cake::jit::driver::available()) {
      std::printf("cake_bench_gemm: no GPU: %s\n", cake::jit::driver::unavailable_reason().c_str());
      return 0;
    }
    if (host_overhead_calls > 0) return host_overhead(json, command, driver, host_overhead_calls);
    // --held-out: bf16 shapes no schedule choice was looked at on (Llama-3 8B / 70B layers at prefill token
    // counts, one M that is no multiple of the tile), to validate what the six were tuned on.
    const std::vector<shape> bf16 = quick      ? std::vector<shape>{{4096, 4096, 4096}}
                                    : held_out ? std::vector<shape>{{4096, 14336, 4096}, {4096, 4096, 14336}, {8192, 6144, 4096},
                                                                    {2048, 28672, 4096}, {3000, 10240, 8192}, {12288, 8192, 8192}}
                                               : std::vector<shape>{{8192, 8192, 8192}, {4096, 4096, 4096}, {4096, 7168, 2048},
                                                                    {4096, 2112, 7168}, {2048, 24576, 1536}, {16384, 16384, 1024}};
    const std::vector<shape> fp8 = quick ? std::vector<shape>{{4096, 4096, 4096}}
                                         : std::vector<shape>{{8192, 8192, 8192}, {4096, 7168, 2048}, {4096, 4096, 4096}};
    // fp8 first: after the bf16 runs, cuBLASLt's fp8 heuristic was seen to offer a single algorithm that
    // then fails with CUBLAS_STATUS_NOT_SUPPORTED (H200, CUDA 13.0); in a fresh process all of them run.
    auto name = [](const char* kind, const shape& s, const std::string& v) {
      return std::string(kind) + "/" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + (v.empty() ? "" : "/" + v);
    };
    const std::vector<std::string> variants = g_variants.empty() ? std::vector<std::string>{""} : g_variants;
    if (!g_no_fp8 && !g_epilogue)
      for (const auto& s : fp8)
        benchmark::RegisterBenchmark(name("gemm_e4m3", s, "").c_str(), [s](benchmark::State& st) { bench_shape(st, s, true); })
            ->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    if (g_epilogue)
      for (const auto& s : bf16)
        for (const auto& v : variants)
          benchmark::RegisterBenchmark(name("gemm_bias_gelu", s, v).c_str(), [s, v](benchmark::State& st) { bench_epilogue(st, s, v); })
              ->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    else
      for (const auto& s : bf16)
        for (const auto& v : variants)
          benchmark::RegisterBenchmark(name("gemm_bf16", s, v).c_str(), [s, v](benchmark::State& st) { bench_shape(st, s, false, v); })
              ->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    {  // warm the GPU up to its sustained clock before anything is timed
      cake::harness::gemm_operands w(cake::harness::gemm_problem{8192, 8192, 8192});
      const auto t0 = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
        for (int i = 0; i < 20; ++i) the_peers().bf16(w.a.get(), w.b.get(), w.d.get(), {8192, 8192, 8192}, nullptr);
        cake::jit::driver::get().cuCtxSynchronize();
      }
    }
    int bargc = static_cast<int>(rest.size());
    benchmark::Initialize(&bargc, rest.data());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    write_json(json, command, driver);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cake_bench_gemm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
