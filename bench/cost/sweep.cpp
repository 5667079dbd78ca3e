// Validation of the cost model: times variants of the sm_90a GEMM (tile width, stages, cluster, raster
// group) on a few shapes, next to the model's estimate, and reports per shape the Spearman rank
// correlation between estimated and measured time and how far the estimated-best variant is from the
// measured-best. Every variant is checked against the f32 reference on each shape first (output poisoned
// with NaN); a variant that is wrong there is reported and left out of the figures.
//
//   cake_cost_sweep [--runs N] [--json FILE] [--tsv FILE] [--driver VERSION] [--quick]   (on the GPU)
//   cake_cost_sweep --precompile                       lower and compile every variant into the JIT cache
//   cake_cost_sweep --measured FILE.tsv [--json FILE]  recompute estimates and figures from a measured run
//                                                      (the TSV a GPU run writes), without a GPU
//
// Timing: CUDA events, L2 flushed before every run, 4 rounds in which every variant (and cuBLAS) is timed
// in turn, median over all rounds' samples. The validation shapes are 4096x4096x4096 and 4096x2112x7168;
// 2048x24576x1536 and 8192x8192x8192 are hold-outs reported separately.
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <cake/cost.hpp>
#include <cake/gemm.hpp>
#include <cake/harness/gemm_reference.hpp>
#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>

#include "common.hpp"

namespace {

using cake_bench::num;
namespace jit = cake::jit;

struct shape {
  long long m, n, k;
  bool holdout;
  std::string name() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
};

const std::vector<shape>& shapes() {
  static const std::vector<shape> s = {{4096, 4096, 4096, false}, {4096, 2112, 7168, false}, {2048, 24576, 1536, true}, {8192, 8192, 8192, true}};
  return s;
}

struct variant {
  int bn, stages, cluster, group;
  std::string name() const {
    return "bn" + std::to_string(bn) + "_s" + std::to_string(stages) + "_c" + std::to_string(cluster) + "_g" + std::to_string(group);
  }
  cake::kernels::gemm_sm90_config config() const {
    cake::kernels::gemm_sm90_config c;
    c.bn = bn;
    c.stages = stages;
    c.cluster_m = cluster;
    c.raster_group = group;
    return c;
  }
};

// Spread over what the model claims to capture: tile width (wave quantization, MMA N efficiency,
// epilogue share), pipeline depth (latency hiding), multicast (L2 -> SMEM traffic), raster group (L2 reuse).
const std::vector<variant>& variants() {
  static const std::vector<variant> v = {
      {256, 4, 2, 8}, {256, 3, 2, 8}, {256, 2, 2, 8}, {256, 4, 1, 8}, {256, 3, 1, 8}, {256, 2, 1, 8}, {256, 4, 2, 1},
      {256, 4, 2, 4}, {256, 4, 2, 16}, {224, 4, 2, 8}, {208, 5, 2, 8}, {192, 4, 2, 8}, {192, 2, 2, 8}, {192, 4, 1, 8},
      {176, 5, 2, 8}, {176, 3, 2, 8}, {176, 2, 2, 8}, {176, 5, 1, 8}, {176, 5, 2, 1}, {160, 5, 2, 8}, {144, 6, 2, 8},
      {128, 6, 2, 8}, {128, 4, 2, 8}, {128, 2, 2, 8}, {128, 6, 1, 8}, {128, 2, 1, 8}, {96, 6, 2, 8},  {64, 6, 2, 8},
  };
  return v;
}

struct row {
  std::string variant, shape;  // names
  ::variant v{};
  ::shape s{};
  bool ok = false, measured = false;
  double rel_err = 0, ms = 0, p10 = 0, p90 = 0;
  cake::cost::cost_estimate est;
};

struct shape_meta {
  double cublas_ms = 0;
};

// Average ranks (ties share the mean of their positions), then Pearson correlation of the ranks.
std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<std::size_t> idx(x.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = (static_cast<double>(i + j) / 2.0) + 1;
    i = j + 1;
  }
  return r;
}
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(ra.size());
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) ma += ra[i] / n, mb += rb[i] / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) sab += (ra[i] - ma) * (rb[i] - mb), saa += (ra[i] - ma) * (ra[i] - ma), sbb += (rb[i] - mb) * (rb[i] - mb);
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

void estimate_all(std::vector<row>& rows) {
  for (auto& r : rows) {
    const cake::program p = cake::kernels::gemm_sm90<cake::bf16>(r.v.config());
    r.est = cake::cost::estimate(p, {{"M", r.s.m}, {"N", r.s.n}, {"K", r.s.k}});
  }
}

std::string write_json(const std::vector<row>& rows, const std::map<std::string, shape_meta>& meta, const std::map<std::string, std::string>& prov, int runs) {
  std::ostringstream j;
  const auto get = [&](const char* k) { auto it = prov.find(k); return it == prov.end() ? std::string("unknown") : it->second; };
  const auto* cal = cake::cost::find_calibration(cake::target_id::sm_90a);
  j << "{\n  \"schema\": \"cake.cost-sweep/1\",\n  \"gpu\": \"" << get("gpu") << "\", \"sm\": \"sm_90a\", \"driver\": \"" << get("driver") << "\", \"cuda\": \""
    << get("cuda") << "\", \"date\": \"" << get("date") << "\",\n  \"command\": \"" << cake_bench::json_escape(get("command")) << "\",\n"
    << "  \"method\": \"CUDA events, L2 flushed before each run, median of " << runs
    << " runs taken in 4 rounds in which every variant and cuBLAS are timed in turn; every variant checked against the f32 reference first "
       "(relative Frobenius error <= 1e-2, output poisoned with NaN)\",\n"
    << "  \"estimates\": \"cake::cost::estimate with calibration " << (cal ? std::string(cal->id) + " (" + std::string(cal->date) + ")" : "none")
    << ", recomputed by: cake_cost_sweep --measured <tsv>\",\n  \"shapes\": [\n";
  std::vector<std::string> shape_rows;
  double worst_rho = 1, worst_gap = 0;
  for (const auto& s : shapes()) {
    std::vector<const row*> ok;
    for (const auto& r : rows)
      if (r.shape == s.name() && r.ok && r.measured && r.est.ok) ok.push_back(&r);
    if (ok.size() < 3) continue;
    std::vector<double> est, meas;
    for (const auto* r : ok) est.push_back(r->est.time_us), meas.push_back(r->ms);
    const double rho = spearman(est, meas);
    const row* best_m = *std::min_element(ok.begin(), ok.end(), [](const row* a, const row* b) { return a->ms < b->ms; });
    const row* best_e = *std::min_element(ok.begin(), ok.end(), [](const row* a, const row* b) { return a->est.time_us < b->est.time_us; });
    const double gap = (best_e->ms / best_m->ms - 1) * 100;
    // Variants the model cannot tell apart (within 0.1% of the best estimate): the spread of their times.
    double tie_worst = best_e->ms;
    int ties = 0;
    for (const auto* r : ok)
      if (r->est.time_us <= best_e->est.time_us * 1.001) ++ties, tie_worst = std::max(tie_worst, r->ms);
    const double tie_gap = (tie_worst / best_m->ms - 1) * 100;
    std::size_t wrong = 0;
    for (const auto& r : rows)
      if (r.shape == s.name() && r.measured && !r.ok) ++wrong;
    if (!s.holdout) worst_rho = std::min(worst_rho, rho), worst_gap = std::max(worst_gap, gap);
    const auto m = meta.count(s.name()) ? meta.at(s.name()) : shape_meta{};
    shape_rows.push_back("    {\"shape\": {\"M\": " + std::to_string(s.m) + ", \"N\": " + std::to_string(s.n) + ", \"K\": " + std::to_string(s.k) + "}, \"role\": \"" +
                         (s.holdout ? "holdout" : "validation") + "\", \"variants\": " + std::to_string(ok.size()) + ", \"incorrect\": " + std::to_string(wrong) +
                         ", \"spearman\": " + num(rho, 4) + ", \"measured_best\": {\"variant\": \"" + best_m->variant + "\", \"ms\": " + num(best_m->ms, 5) +
                         "}, \"estimated_best\": {\"variant\": \"" + best_e->variant + "\", \"estimate_us\": " + num(best_e->est.time_us, 2) +
                         ", \"measured_ms\": " + num(best_e->ms, 5) + ", \"tied_variants\": " + std::to_string(ties) + ", \"worst_tied_gap_pct\": " + num(tie_gap, 2) +
                         "}, \"best_gap_pct\": " + num(gap, 2) +
                         (m.cublas_ms > 0 ? ", \"cublas_ms\": " + num(m.cublas_ms, 5) : std::string()) + "}");
    std::printf("%-18s %-10s spearman %.3f  measured best %-16s %.4f ms  estimated best %-16s measured %.4f ms (%+.2f%%; %d tied, worst %+.2f%%)\n",
                s.name().c_str(), s.holdout ? "holdout" : "validation", rho, best_m->variant.c_str(), best_m->ms, best_e->variant.c_str(), best_e->ms, gap, ties,
                tie_gap);
  }
  for (std::size_t i = 0; i < shape_rows.size(); ++i) j << shape_rows[i] << (i + 1 < shape_rows.size() ? ",\n" : "\n");
  j << "  ],\n  \"summary\": {\"validation_min_spearman\": " << num(worst_rho, 4) << ", \"validation_max_best_gap_pct\": " << num(worst_gap, 2)
    << ", \"targets\": {\"spearman\": 0.8, \"best_gap_pct\": 5}},\n  \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    j << "    {\"variant\": \"" << r.variant << "\", \"bn\": " << r.v.bn << ", \"stages\": " << r.v.stages << ", \"cluster\": " << r.v.cluster
      << ", \"raster_group\": " << r.v.group << ", \"shape\": \"" << r.shape << "\", \"ok\": " << (r.ok ? "true" : "false") << ", \"rel_err\": " << num(r.rel_err, 5);
    if (r.measured) j << ", \"measured_ms\": " << num(r.ms, 5) << ", \"p10_ms\": " << num(r.p10, 5) << ", \"p90_ms\": " << num(r.p90, 5);
    if (r.est.ok)
      j << ", \"estimate_us\": " << num(r.est.time_us, 2) << ", \"bottleneck\": \"" << r.est.bottleneck << "\", \"est_kblock_us\": " << num(r.est.kblock_us, 4)
        << ", \"est_tiles_per_cta\": " << r.est.tiles_per_cta << ", \"est_epilogue_us\": " << num(r.est.epilogue_us, 2);
    else j << ", \"estimate\": \"" << cake_bench::json_escape(r.est.reason) << "\"";
    j << "}" << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  j << "  ]\n}\n";
  std::printf("validation: min Spearman %.3f (target >= 0.8), max best-vs-best gap %.2f%% (target <= 5%%)\n", worst_rho, worst_gap);
  return j.str();
}

void write_tsv(const std::string& path, const std::vector<row>& rows, const std::map<std::string, shape_meta>& meta, const std::map<std::string, std::string>& prov) {
  std::ofstream t(path);
  for (const auto& [k, v] : prov) t << "# " << k << "\t" << v << "\n";
  for (const auto& [s, m] : meta) t << "# cublas\t" << s << "\t" << num(m.cublas_ms, 5) << "\n";
  for (const auto& r : rows)
    t << r.variant << "\t" << r.v.bn << "\t" << r.v.stages << "\t" << r.v.cluster << "\t" << r.v.group << "\t" << r.s.m << "\t" << r.s.n << "\t" << r.s.k << "\t"
      << (r.ok ? 1 : 0) << "\t" << num(r.rel_err, 6) << "\t" << (r.measured ? 1 : 0) << "\t" << num(r.ms, 6) << "\t" << num(r.p10, 6) << "\t" << num(r.p90, 6) << "\n";
}

bool read_tsv(const std::string& path, std::vector<row>& rows, std::map<std::string, shape_meta>& meta, std::map<std::string, std::string>& prov) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, '\t')) f.push_back(x);
    if (line[0] == '#') {
      const std::string key = f[0].substr(2);
      if (key == "cublas" && f.size() >= 3) meta[f[1]].cublas_ms = std::stod(f[2]);
      else if (f.size() >= 2) prov[key] = f[1];
      continue;
    }
    if (f.size() < 14) continue;
    row r;
    r.variant = f[0];
    r.v = {std::stoi(f[1]), std::stoi(f[2]), std::stoi(f[3]), std::stoi(f[4])};
    r.s = {std::stoll(f[5]), std::stoll(f[6]), std::stoll(f[7]), false};
    for (const auto& s : shapes())
      if (s.m == r.s.m && s.n == r.s.n && s.k == r.s.k) r.s = s;
    r.shape = r.s.name();
    r.ok = f[8] == "1";
    r.rel_err = std::stod(f[9]);
    r.measured = f[10] == "1";
    r.ms = std::stod(f[11]);
    r.p10 = std::stod(f[12]);
    r.p90 = std::stod(f[13]);
    rows.push_back(r);
  }
  return true;
}

// The correctness pass runs builds whose mbarrier waits trap after 2 s, so a variant that would hang
// fails fast instead of stalling the whole sweep.
cake::lower::emit_options checked_options() {
  cake::lower::emit_options o;
  o.hang_timeout_ns = 2'000'000'000ull;
  return o;
}

void cublas_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw jit::error(std::string(what) + " failed with cuBLAS status " + std::to_string(s));
}

}  // namespace

int main(int argc, char** argv) {
  std::string json = "cost_sweep.json", tsv = "cost_sweep_measured.tsv", measured, driver = "unknown";
  int runs = 100;
  bool precompile = false, quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) json = argv[++i];
    else if (a == "--tsv" && i + 1 < argc) tsv = argv[++i];
    else if (a == "--measured" && i + 1 < argc) measured = argv[++i];
    else if (a == "--driver" && i + 1 < argc) driver = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (a == "--precompile") precompile = true;
    else if (a == "--quick") quick = true;
    else {
      std::fprintf(stderr, "cake_cost_sweep: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  try {
    std::vector<row> rows;
    std::map<std::string, shape_meta> meta;
    std::map<std::string, std::string> prov;
    if (!measured.empty()) {
      if (!read_tsv(measured, rows, meta, prov)) {
        std::fprintf(stderr, "cake_cost_sweep: cannot read %s\n", measured.c_str());
        return 1;
      }
      estimate_all(rows);
      std::ofstream(json) << write_json(rows, meta, prov, std::atoi(prov.count("runs") ? prov["runs"].c_str() : "0"));
      std::printf("cake_cost_sweep: wrote %s\n", json.c_str());
      return 0;
    }
    if (precompile) {
      for (const auto& v : variants()) {
        const cake::program p = cake::kernels::gemm_sm90<cake::bf16>(v.config());
        if (!p.errors.empty()) throw jit::error(v.name() + ": " + to_text(p.errors[0]));
        for (const auto& opt : {cake::lower::emit_options{}, checked_options()}) {
          const auto l = cake::lower::lower(p, opt);
          if (!l.ok) throw jit::error(v.name() + " does not lower: " + l.error);
          const auto a = jit::build(l.source, l.entry, "sm_90a");
          if (!a.ok) throw jit::error(v.name() + " does not compile:\n" + a.diagnostics());
          std::printf("%-16s %6d B smem, %3d registers, %d spill bytes (%s)%s\n", v.name().c_str(), l.smem_bytes, a.resources.registers,
                      a.resources.spill_stores + a.resources.spill_loads, jit::to_string(a.origin).data(), opt.hang_timeout_ns ? ", hang-checked build" : "");
        }
      }
      return 0;
    }
    if (!jit::driver::available()) {
      std::printf("cake_cost_sweep: no GPU: %s\n", jit::driver::unavailable_reason().c_str());
      return 77;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto& dev = jit::driver::get().device(0);
    prov["gpu"] = dev.name;
    prov["driver"] = driver;
    prov["cuda"] = std::to_string(dev.driver_version / 1000) + "." + std::to_string(dev.driver_version % 1000 / 10);
    prov["date"] = cake_bench::today();
    prov["command"] = cake_bench::command_line(argc, argv);
    prov["runs"] = std::to_string(runs);
    std::map<std::string, std::unique_ptr<cake::runtime_kernel>> kernels, checked;
    for (const auto& v : variants()) {
      const auto p = cake::kernels::gemm_sm90<cake::bf16>(v.config());
      kernels[v.name()] = std::make_unique<cake::runtime_kernel>(cake::runtime_kernel::build(p));
      checked[v.name()] = std::make_unique<cake::runtime_kernel>(cake::runtime_kernel::build(p, checked_options()));
    }
    std::printf("built %zu variants (%.1f s)\n", kernels.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    cublasHandle_t blas{};
    cublas_check(cublasCreate(&blas), "cublasCreate");
    cake::harness::gemm_reference reference;
    auto rng = cake::harness::random_source::fresh();
    for (const auto& s : shapes()) {
      if (quick && s.holdout) continue;
      jit::device_buffer A(static_cast<std::size_t>(2 * s.m * s.k)), B(static_cast<std::size_t>(2 * s.n * s.k)), D(static_cast<std::size_t>(2 * s.m * s.n)),
          R(static_cast<std::size_t>(4 * s.m * s.n));
      A.upload(cake::harness::random_vector<cake::harness::host_bf16>(static_cast<std::size_t>(s.m * s.k), rng));
      B.upload(cake::harness::random_vector<cake::harness::host_bf16>(static_cast<std::size_t>(s.n * s.k), rng));
      reference.run(A.get(), B.get(), R.get(), s.m, s.n, s.k, s.k, s.k, 0);
      const auto ref = R.download<float>();
      const cake::tensor_arg t[] = {cake::tensor_view(A.address(), {s.m, s.k}), cake::tensor_view(B.address(), {s.n, s.k}), cake::tensor_view(D.address(), {s.m, s.n})};
      std::vector<row> here;
      for (const auto& v : variants()) {
        row r;
        r.v = v;
        r.s = s;
        r.variant = v.name();
        r.shape = s.name();
        D.fill_u32(0xffffffffu);
        checked[v.name()]->launch(t);
        const auto out = D.download<std::uint16_t>();
        const auto cmp = cake::harness::compare_16bit(out, ref);
        r.rel_err = cmp.rel_err;
        r.ok = cmp.ok(1e-2);
        if (!r.ok) std::printf("%s on %s: WRONG (rel_err %.3g, %lld non-finite)\n", r.variant.c_str(), r.shape.c_str(), cmp.rel_err, cmp.nonfinite);
        here.push_back(r);
      }
      // Rounds: every variant and cuBLAS in turn, so clock drift affects all alike.
      constexpr int rounds = 4;
      cake::harness::timing_options topt;
      topt.runs = (runs + rounds - 1) / rounds;
      topt.warmup = 3;
      std::vector<std::vector<double>> samples(here.size());
      std::vector<double> blas_samples;
      const float one = 1.f, zero = 0.f;
      auto run_blas = [&](CUstream st) {
        cublas_check(cublasSetStream(blas, reinterpret_cast<cudaStream_t>(st)), "cublasSetStream");
        cublas_check(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(s.n), int(s.m), int(s.k), &one, B.address(), CUDA_R_16BF, int(s.k), A.address(), CUDA_R_16BF,
                                  int(s.k), &zero, D.address(), CUDA_R_16BF, int(s.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx");
      };
      {  // warm the clocks up before the first timed round
        const auto w0 = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - w0 < std::chrono::milliseconds(quick ? 300 : 1000)) {
          for (int i = 0; i < 10; ++i) run_blas(nullptr);
          jit::driver::get().cuCtxSynchronize();
        }
      }
      for (int round = 0; round < rounds; ++round) {
        for (std::size_t i = 0; i < here.size(); ++i) {
          if (!here[i].ok) continue;
          auto& k = *kernels[here[i].variant];
          const auto tr = cake::harness::time_gpu([&](CUstream st) { k.launch(t, {}, st); }, topt);
          samples[i].insert(samples[i].end(), tr.samples_ms.begin(), tr.samples_ms.end());
        }
        const auto tb = cake::harness::time_gpu(run_blas, topt);
        blas_samples.insert(blas_samples.end(), tb.samples_ms.begin(), tb.samples_ms.end());
      }
      meta[s.name()].cublas_ms = cake::harness::summarize(blas_samples).median_ms;
      for (std::size_t i = 0; i < here.size(); ++i) {
        if (!here[i].ok) continue;
        const auto sm = cake::harness::summarize(samples[i]);
        here[i].measured = true;
        here[i].ms = sm.median_ms;
        here[i].p10 = sm.p10_ms;
        here[i].p90 = sm.p90_ms;
      }
      for (auto& r : here) rows.push_back(r);
      std::printf("%s done (cuBLAS %.4f ms, %.1f s elapsed)\n", s.name().c_str(), meta[s.name()].cublas_ms,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      write_tsv(tsv, rows, meta, prov);  // after every shape, so a partial run still leaves data
    }
    cublasDestroy(blas);
    estimate_all(rows);
    std::ofstream(json) << write_json(rows, meta, prov, runs);
    // The compact table, last.
    std::printf("%-16s", "variant");
    for (const auto& s : shapes()) std::printf(" %19s", s.name().c_str());
    std::printf("\n");
    for (const auto& v : variants()) {
      std::printf("%-16s", v.name().c_str());
      for (const auto& s : shapes()) {
        const row* f = nullptr;
        for (const auto& r : rows)
          if (r.variant == v.name() && r.shape == s.name()) f = &r;
        if (!f) std::printf(" %19s", "-");
        else if (!f->ok) std::printf(" %19s", "WRONG");
        else std::printf("  %7.4f / %7.4f ms", f->ms, f->est.ok ? f->est.time_us / 1e3 : 0.0);
      }
      std::printf("\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cake_cost_sweep: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
