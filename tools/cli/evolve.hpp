#pragma once
// `cake evolve FILE --family NAME --shape M=..,N=..,K=..`: the built-in search over a kernel family
// (CAKE_EXPORT_FAMILY) for one or more shapes (docs/evolve.md).
//
// Candidates are points of the family's domain (all of it when small, else a seeded sample plus the
// seed), generated at run time from the ONE compiled schedule library. Each goes through the gates in
// cost order, and every gate's verdict and evidence is appended to a JSON-lines log (one line per
// candidate, shape and gate):
//   analyze   builder findings + the analyzer (no GPU, ~ms)           pass | reject
//   estimate  the cost model, per shape                               pass | error
//   select    rank by estimate; the best --max-candidates go on       kept | pruned
//   lower     lowering + NVRTC: resources; spills are rejected        pass | reject | error
//   run       correctness in the `cake __gpu` child (hang trap)       pass | reject | error | no-gpu | budget
//   bench     timing against the peer in the child                    pass | reject | error | no-gpu | budget
// A candidate stops at its first gate that is not pass/kept. GPU gates are not started once the GPU time
// spent (the children's wall time) reaches --budget-gpu-s. --resume reads the log and re-evaluates
// nothing it holds (a "budget" or "no-gpu" line is not a result: those gates are tried again).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "failures.hpp"
#include "family.hpp"

namespace cake_cli {

struct evolve_options {
  std::string family, log;
  double budget_gpu_s = 300;
  unsigned long long seed = 1;
  int max_candidates = 16;
  bool resume = false;
  std::string agent;    // --agent CMD: an external driver after the built-in search
  int agent_rounds = 3;
  std::string failures_dir;  // --failures DIR: the proposals of the failure clusters (LOG.failures)
  int minimize_tries = 8;    // --minimize N: GPU re-runs per cluster to shrink its reproducer (0: none)
  std::vector<std::string> without_rules;  // --without-rule ID: the analyze gate drops ID's findings (a rule not written yet)
};

// What one search found per shape, for a caller in the same process (an agent's schedule file is
// searched by a nested cmd_evolve, and its best compared with the family's).
struct evolve_shape_result {
  bool measured = false;
  std::string candidate;  // empty: no candidate passed
  double cake_ms = NAN, ratio = NAN;
};
struct evolve_result {
  std::vector<evolve_shape_result> shapes;
  double gpu_s = 0;
};

namespace evolve_detail {

// The search space is enumerated up to this many points, else sampled (seeded) to this many. (The sm_90a GEMM
// family, tests/cli/gemm_sm90_family.cpp, has 32,256: its analyzer and cost gates take ~50 s on two cores.)
inline constexpr long long enumerate_limit = 40000;
// Estimates within this fraction of the best are treated as ties by the selection: the model's error on
// shapes it was not calibrated on is larger (docs/cost-model.md: 14.5% at 8192^3).
inline constexpr double near_best_band = 0.05;
// A GPU child's time limit unless --timeout says otherwise: a candidate that spins outside any mbarrier
// wait (those trap after --hang-timeout) must not eat the budget of the whole search.
inline constexpr double default_child_timeout_s = 60;
// The local search after the first measurements: neighbours measured per round, and rounds at most.
inline constexpr int local_batch = 6, max_local_rounds = 8;

// One (candidate, shape, gate) result: what the log line says.
struct gate_record {
  std::string verdict;
  double score = NAN;  // estimate: time_us; bench: cake_ms; else NaN
  std::string line;    // the whole log line (its evidence)
};

// The estimate gate's evidence: the time and the terms behind it (thousands of these lines are written
// per search; the kept candidates' select lines carry the whole estimate object of `cake estimate`).
inline std::string compact_estimate(const cake::cost::cost_estimate& e) {
  if (!e.ok) return "{\"ok\":false,\"reason\":" + json_string(e.reason) + "}";
  return "{\"ok\":true,\"time_us\":" + json_number(e.time_us) + ",\"tflops\":" + json_number(e.tflops) + ",\"bottleneck\":" + json_string(e.bottleneck) +
         ",\"per_kblock_us\":{\"mma\":" + json_number(e.mma_us) + ",\"l2\":" + json_number(e.l2_us) + ",\"latency\":" + json_number(e.latency_us) +
         ",\"time\":" + json_number(e.kblock_us) + "},\"tiles\":" + std::to_string(e.tiles) + ",\"waves\":" + json_number(e.waves) +
         ",\"parts_us\":{\"mainloop\":" + json_number(e.mainloop_us) + ",\"epilogue\":" + json_number(e.epilogue_us) + ",\"hbm\":" + json_number(e.hbm_us) + "}}";
}

inline std::string key(const std::string& cand, const std::string& shape, const std::string& gate) { return cand + "|" + shape + "|" + gate; }

inline std::string field(const std::string& line, const char* name) {
  const std::regex re(std::string("\"") + name + "\":\"((?:[^\"\\\\]|\\\\.)*)\"");
  std::smatch m;
  return std::regex_search(line, m, re) ? m[1].str() : std::string();
}

inline double number_field(const std::string& text, const char* name) {
  const std::regex re(std::string("\"") + name + "\":(-?[0-9.eE+-]+)");
  std::smatch m;
  return std::regex_search(text, m, re) ? std::atof(m[1].str().c_str()) : NAN;
}

struct state {
  const cake::cli::exported_family* family = nullptr;
  std::map<std::string, gate_record> done;  // by key(); the log's and this run's
  std::map<std::string, std::string> not_done;  // by key(): this run's "budget" / "no-gpu" verdicts (not results)
  std::map<std::string, int> rejected_rules;    // analyze rejections of this run, by their first rule
  std::ofstream log;
  std::string log_path;
  double gpu_s = 0;
  bool no_gpu = false;
  int evaluated = 0;  // gates evaluated in this invocation (not read from the log)
  std::string shapes_for_text;
};

inline bool read_log(state& st, const std::string& family, std::string& why) {
  const auto text = read_file(st.log_path);
  if (!text) return true;  // nothing yet
  std::istringstream in(*text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    if (line.find("\"schema\":\"cake.evolve/1\"") == std::string::npos) {
      why = st.log_path + ":" + std::to_string(n) + " is not a cake.evolve/1 line";
      return false;
    }
    if (field(line, "family") != family) continue;
    gate_record r;
    r.verdict = field(line, "verdict");
    if (r.verdict == "budget" || r.verdict == "no-gpu") continue;  // not results: tried again
    r.score = number_field(line, "score");
    r.line = line;
    st.done[key(field(line, "candidate"), field(line, "shape"), field(line, "gate"))] = r;
  }
  return true;
}

}  // namespace evolve_detail

inline outcome cmd_evolve(const options& opt, const evolve_options& eo, evolve_result* result = nullptr) {
  using namespace evolve_detail;
  outcome o;
  stopwatch clock;
  std::vector<std::vector<cake::cost::dim_value>> shapes;
  std::vector<std::string> shape_names;
  for (const auto& s : opt.shapes) {
    std::vector<cake::cost::dim_value> d;
    std::string why;
    if (!parse_shape(s, d, why)) {
      fail_usage(o, "cli.usage", why);
      return o;
    }
    std::string nm;
    for (const auto& x : d) nm += (nm.empty() ? "" : ",") + x.name + "=" + std::to_string(x.value);
    shapes.push_back(d);
    shape_names.push_back(nm);
  }
  if (shapes.empty()) {
    fail_usage(o, "cli.usage", "cake evolve needs --shape M=..,N=..,K=.. (repeatable): the problem size(s) to evolve for");
    return o;
  }
  if (eo.family.empty()) {
    fail_usage(o, "cli.usage", "cake evolve needs --family NAME (a CAKE_EXPORT_FAMILY of the file)");
    return o;
  }
  options copt = opt;
  copt.kernel.clear();
  compiled c;
  if (!compile_file(copt, o, c)) return o;
  const auto* fam = find_family(c.lib, eo.family);
  if (!fam) {
    std::string names;
    for (const auto& f : c.lib.reg->families) names += (names.empty() ? "" : ", ") + f.name;
    fail_usage(o, "cli.unknown-kernel", "no family named '" + eo.family + "' in " + display_path(opt.file) + " (families: " + (names.empty() ? "none" : names) + ")");
    return o;
  }
  state st;
  st.family = fam;
  st.log_path = eo.log.empty() ? "cake-evolve-" + fam->name + ".jsonl" : eo.log;
  {
    std::error_code ec;
    if (fs::exists(st.log_path, ec) && !eo.resume && fs::file_size(st.log_path, ec) > 0) {
      fail_usage(o, "cli.usage", "the evidence log " + st.log_path + " exists: pass --resume to continue it, or another --log");
      return o;
    }
  }
  if (eo.resume) {
    std::string why;
    if (!read_log(st, fam->name, why)) {
      fail_usage(o, "cli.usage", why);
      return o;
    }
  }
  const std::size_t from_log = st.done.size();
  st.log.open(st.log_path, std::ios::app);
  if (!st.log) {
    fail_usage(o, "cli.environment", "cannot write the evidence log " + st.log_path, exit_environment);
    return o;
  }
  auto progress = [&](const std::string& s) {
    std::fprintf(stderr, "[evolve %6.1fs gpu %5.1fs] %s\n", clock.ms() / 1e3, st.gpu_s, s.c_str());
  };
  // The candidate id's parameters as a JSON object.
  auto params_json = [&](const std::vector<long long>& pt) {
    std::string s = "{";
    for (std::size_t i = 0; i < pt.size(); ++i)
      s += std::string(i ? "," : "") + json_string(fam->axes[i].name) + ":" + (fam->axes[i].boolean ? (pt[i] ? "true" : "false") : std::to_string(pt[i]));
    return s + "}";
  };
  // Appends one line and records it. `evidence` is a JSON object.
  auto record = [&](const std::vector<long long>& pt, const std::string& cand, const std::string& shape, const std::string& gate, const std::string& verdict,
                    double score, const std::string& evidence, double ms, double gpu_s) {
    std::string line = "{\"schema\":\"cake.evolve/1\",\"family\":" + json_string(fam->name) + ",\"candidate\":" + json_string(cand) + ",\"shape\":" +
                       json_string(shape) + ",\"gate\":" + json_string(gate) + ",\"verdict\":" + json_string(verdict) +
                       ",\"score\":" + (std::isfinite(score) ? json_number(score) : std::string("null")) + ",\"params\":" + params_json(pt) +
                       ",\"ms\":" + json_number(ms) + ",\"gpu_s\":" + json_number(gpu_s) + ",\"evidence\":" + evidence + "}";
    st.log << line << "\n";
    st.log.flush();
    ++st.evaluated;
    if (verdict != "budget" && verdict != "no-gpu") st.done[key(cand, shape, gate)] = {verdict, score, line};
    else st.not_done[key(cand, shape, gate)] = verdict;
  };
  auto have = [&](const std::string& cand, const std::string& shape, const std::string& gate) -> const gate_record* {
    const auto it = st.done.find(key(cand, shape, gate));
    return it == st.done.end() ? nullptr : &it->second;
  };

  // ---- the candidates ----
  long double domain = 1;
  for (const auto& a : fam->axes) domain *= static_cast<long double>(a.values.size());
  std::vector<std::vector<long long>> points;
  std::set<std::vector<long long>> seen;
  points.push_back(fam->seed);
  seen.insert(fam->seed);
  if (domain <= enumerate_limit) {
    std::vector<std::size_t> idx(fam->axes.size(), 0);
    while (true) {
      std::vector<long long> pt;
      for (std::size_t i = 0; i < idx.size(); ++i) pt.push_back(fam->axes[i].values[idx[i]]);
      if (seen.insert(pt).second) points.push_back(pt);
      std::size_t i = idx.size();
      while (i > 0 && ++idx[i - 1] == fam->axes[i - 1].values.size()) idx[--i] = 0;
      if (i == 0) break;
    }
  } else {
    std::mt19937_64 rng(eo.seed);
    for (long long tries = 0; static_cast<long long>(points.size()) < enumerate_limit && tries < 4 * enumerate_limit; ++tries) {
      std::vector<long long> pt;
      for (const auto& a : fam->axes) pt.push_back(a.values[rng() % a.values.size()]);
      if (seen.insert(pt).second) points.push_back(pt);
    }
  }
  // Ties in the estimate are broken by a seeded shuffle (the seed stays first: it is the baseline).
  {
    std::mt19937_64 rng(eo.seed ^ 0x9e3779b97f4a7c15ull);
    std::shuffle(points.begin() + 1, points.end(), rng);
  }
  std::vector<std::string> ids;
  for (const auto& pt : points) ids.push_back(point_id(*fam, pt));
  progress(fam->name + ": " + std::to_string(points.size()) + " candidates (domain " + json_number(static_cast<double>(domain)) + (domain <= enumerate_limit ? ", enumerated" : ", sampled") +
           "), log " + st.log_path + (eo.resume ? " (resumed: " + std::to_string(from_log) + " results)" : ""));

  // ---- gate: analyze (and the generator) ----
  std::map<std::size_t, std::unique_ptr<cake::program>> programs;  // generated on demand
  auto program_of = [&](std::size_t i) -> const cake::program* {
    auto& p = programs[i];
    if (!p) p = generate_point(*fam, points[i]).program;
    return p.get();
  };
  std::vector<char> analyzed_ok(points.size(), 0);
  int rejected = 0;
  auto analyze_gate = [&](std::size_t i) {
    if (const auto* r = have(ids[i], "", "analyze")) {
      analyzed_ok[i] = r->verdict == "pass";
      return;
    }
    stopwatch t;
    auto g = generate_point(*fam, points[i]);
    if (!g.error.empty()) {
      const auto d = make_diagnostic("evolve.generator", g.error);
      record(points[i], ids[i], "", "analyze", "reject", NAN, "{\"errors\":1,\"warnings\":0,\"rules\":[\"evolve.generator\"],\"diagnostics\":[" + to_json(d) + "]}", t.ms(), 0);
      st.rejected_rules["evolve.generator"]++;
      ++rejected;
      return;
    }
    const auto a = analyze_program(*g.program, &c.lib.reg->rules, &eo.without_rules);
    std::string rules, diags;
    int shown = 0;
    std::string first_rule;
    for (const auto& d : a.report->diagnostics) {
      if (d.sev() != cake::analysis::severity::error) continue;
      const std::string id(d.about().id);
      if (first_rule.empty()) first_rule = id;
      if (rules.find("\"" + id + "\"") == std::string::npos) rules += (rules.empty() ? "" : ",") + json_string(id);
      if (shown++ < 3)
        diags += std::string(diags.empty() ? "" : ",") + "{\"rule\":" + json_string(id) + ",\"message\":" + json_string(d.message.view()) +
                 ",\"location\":" + json_location(d.loc.file, d.loc.line, d.loc.column) + "}";
    }
    for (const auto& h : a.hooks) {  // test-only rule hooks of the file (CAKE_EXPORT_TEST_RULE)
      if (first_rule.empty()) first_rule = h.rule;
      if (rules.find("\"" + h.rule + "\"") == std::string::npos) rules += (rules.empty() ? "" : ",") + json_string(h.rule);
      if (shown++ < 3)
        diags += std::string(diags.empty() ? "" : ",") + "{\"rule\":" + json_string(h.rule) + ",\"message\":" + json_string(h.message) +
                 ",\"location\":" + json_location(h.file.c_str(), h.line, 0) + "}";
    }
    const bool ok = a.errors == 0;
    analyzed_ok[i] = ok;
    rejected += !ok;
    if (!ok) st.rejected_rules[first_rule.empty() ? "?" : first_rule]++;
    std::string without;  // --without-rule: the evidence says which rules the gate ran without
    for (const auto& w : eo.without_rules) without += (without.empty() ? "" : ",") + json_string(w);
    record(points[i], ids[i], "", "analyze", ok ? "pass" : "reject", NAN,
           "{\"errors\":" + std::to_string(a.errors) + ",\"warnings\":" + std::to_string(a.warnings) + ",\"rules\":[" + rules + "],\"diagnostics\":[" + diags + "]" +
               (without.empty() ? "" : ",\"without_rules\":[" + without + "]") + "}",
           t.ms(), 0);
    if (ok) programs[i] = std::move(g.program);
  };
  // A point not among the candidates yet (from the log on --resume, or an agent's proposal).
  auto add_point = [&](const std::vector<long long>& pt) {
    for (std::size_t i = 0; i < points.size(); ++i)
      if (points[i] == pt) return i;
    points.push_back(pt);
    ids.push_back(point_id(*fam, pt));
    analyzed_ok.push_back(0);
    return points.size() - 1;
  };
  {
    std::set<std::string> known(ids.begin(), ids.end());
    for (const auto& [k, r] : st.done) {
      const std::string cand = k.substr(0, k.find('|'));
      if (known.count(cand)) continue;
      std::vector<long long> pt;
      if (parse_point(*fam, cand, pt).empty()) add_point(pt);
      known.insert(cand);
    }
  }
  for (std::size_t i = 0; i < points.size(); ++i) analyze_gate(i);
  progress("analyze: " + std::to_string(std::count(analyzed_ok.begin(), analyzed_ok.end(), 1)) + " pass, " + std::to_string(rejected) + " rejected (this run)" + [&] {
             std::string r;
             for (const auto& [rule, n] : st.rejected_rules) r += (r.empty() ? "; first rules: " : ", ") + rule + " " + std::to_string(n);
             return r;
           }());

  // The lower gate (lowering + NVRTC; shape-independent, once per candidate).
  auto lower_gate = [&](std::size_t i) -> const gate_record* {
    const std::string& id = ids[i];
    if (const auto* lr = have(id, "", "lower")) return lr;
    stopwatch t;
    const cake::program& p = *program_of(i);
    cake::lower::emit_options lo;
    lo.analyze = eo.without_rules.empty();  // --without-rule: the analyze gate already ran, without those rules
    const auto l = cake::lower::lower(p, lo);
    if (!l.ok) {
      record(points[i], id, "", "lower", "error", NAN, "{\"stage\":\"lower\",\"error\":" + json_string(l.error) + "}", t.ms(), 0);
    } else {
      cake::jit::artifacts a;
      std::string env_error;
      try {
        a = cake::jit::build(l.source, l.entry, std::string(cake::to_string(p.target)));
      } catch (const std::exception& e) {
        env_error = e.what();
      }
      if (!env_error.empty()) {
        record(points[i], id, "", "lower", "error", NAN, "{\"stage\":\"nvrtc\",\"error\":" + json_string("NVRTC could not run: " + env_error) + "}", t.ms(), 0);
      } else if (!a.ok) {
        record(points[i], id, "", "lower", "error", NAN, "{\"stage\":\"nvrtc\",\"error\":" + json_string(a.diagnostics()) + "}", t.ms(), 0);
      } else {
        const auto& r = a.resources;
        const int spilled = r.spill_stores + r.spill_loads;
        std::string warns;
        for (std::size_t w = 0; w < r.warnings.size(); ++w) warns += std::string(w ? "," : "") + json_string(r.warnings[w]);
        record(points[i], id, "", "lower", spilled ? "reject" : "pass", NAN,
               "{\"rule\":" + std::string(spilled ? "\"evolve.spill\"" : "null") +
                   (spilled ? ",\"message\":" +
                                  json_string("ptxas spills " + std::to_string(spilled) + " bytes to local memory at " + std::to_string(r.registers) +
                                              " registers per thread") +
                                  ",\"help\":\"fewer live values per thread: a narrower tile (each consumer warpgroup holds its rows x BN f32 "
                                  "accumulators), or an epilogue that keeps fewer vectors in registers\""
                            : std::string()) +
                   ",\"registers\":" + std::to_string(r.registers) +
                   ",\"spill_stores\":" + std::to_string(r.spill_stores) + ",\"spill_loads\":" + std::to_string(r.spill_loads) +
                   ",\"stack_frame\":" + std::to_string(r.stack_frame) + ",\"smem_bytes\":" + std::to_string(l.smem_bytes) +
                   ",\"block_threads\":" + std::to_string(l.block_threads) + ",\"cluster\":" + std::to_string(l.cluster[0]) +
                   ",\"persistent\":" + (l.persistent ? "true" : "false") + ",\"warnings\":[" + warns + "],\"nvrtc_ms\":" + json_number(a.compile_ms) +
                   ",\"cache\":" + json_string(cake::jit::to_string(a.origin)) + "}",
               t.ms(), 0);
      }
    }
    const auto* lr = have(id, "", "lower");
    progress("lower " + id + ": " + (lr ? lr->verdict : "?") + (lr && lr->verdict == "reject" ? " (spills)" : ""));
    return lr;
  };
  // One GPU child (run or bench) of candidate i, checked at `check_shapes` and logged under the shape name
  // `sn`; returns the verdict ("pass", "reject", "error", "no-gpu", "budget").
  auto gpu_child = [&](std::size_t i, const std::string& sn, const std::vector<cake::cli::problem_shape>& check_shapes, bool bench) -> std::string {
    const std::string& id = ids[i];
    const char* gate = bench ? "bench" : "run";
    if (st.no_gpu) {
      record(points[i], id, sn, gate, "no-gpu", NAN, "{\"cause\":\"no GPU (an earlier child found none)\"}", 0, 0);
      return "no-gpu";
    }
    if (st.gpu_s >= eo.budget_gpu_s) {
      record(points[i], id, sn, gate, "budget", NAN,
             "{\"cause\":" + json_string("the GPU budget is spent: " + json_number(st.gpu_s) + " of " + json_number(eo.budget_gpu_s) + " s") + "}", 0, 0);
      return "budget";
    }
    gpu_options g;
    g.bench = bench;
    g.runs = opt.runs;
    g.timeout_s = opt.timeout_given ? opt.timeout_s : default_child_timeout_s;
    g.hang_timeout_s = opt.hang_timeout_s;
    // --without-rule: the analyze gate passed the point without those rules; the child must not re-check with them
    g.force = !eo.without_rules.empty();
    if (!bench) g.sanitizer = opt.sanitizer;  // --sanitize: the run gate under compute-sanitizer (timing under it means nothing)
    cake::cli::exported_kernel k{point_spec(*fam, points[i], check_shapes), program_of(i), fam->options, fam->file, fam->line};
    k.options.shapes = check_shapes;
    stopwatch t;
    const auto v = run_on_gpu(c.build.library.string(), k, g);
    double spent = v.wall_ms / 1e3;
    if (const double mock = number_field(v.json.substr(v.json.find("\"mock\":") == std::string::npos ? v.json.size() : v.json.find("\"mock\":")), "gpu_s");
        std::isfinite(mock))
      spent = mock;
    std::string verdict = v.status == "passed" ? "pass" : v.status == "skipped" ? "no-gpu" : v.status == "unsupported" ? "error" : "reject";
    if (verdict == "no-gpu") {
      st.no_gpu = true;
      spent = 0;
    }
    st.gpu_s += spent;
    double score = NAN;
    if (bench && verdict == "pass") score = number_field(v.json, "cake_ms");
    record(points[i], id, sn, gate, verdict, score, v.json, t.ms(), spent);
    std::string what = std::string(gate) + " " + id + (std::find(shape_names.begin(), shape_names.end(), sn) != shape_names.end() ? "" : " at " + sn) + ": " + verdict;
    if (bench && verdict == "pass") what += " " + json_number(score) + " ms, ratio " + json_number(number_field(v.json, "ratio"));
    if (verdict == "reject") what += " (" + v.status + ")";
    progress(what);
    return verdict;
  };
  auto search_shapes = [&](std::size_t si, bool bench) {
    cake::cli::problem_shape target;
    for (const auto& d : shapes[si]) target.push_back({d.name, d.value});
    std::vector<cake::cli::problem_shape> check_shapes = {target};
    // The run gate also checks a shape with ragged tails in every dim (the tile sizes do not divide it).
    if (!bench) check_shapes.push_back({{"M", 300}, {"N", 200}, {"K", 1000}});
    return check_shapes;
  };
  auto gpu_gates = [&](std::size_t i, std::size_t si) {
    const std::string& sn = shape_names[si];
    // run, then bench, in the isolated child
    for (const bool bench : {false, true}) {
      if (const auto* r = have(ids[i], sn, bench ? "bench" : "run")) {
        if (r->verdict != "pass") break;
        continue;
      }
      if (gpu_child(i, sn, search_shapes(si, bench), bench) != "pass") break;
    }
  };
  // The estimate gate: the estimated us (NaN: no estimate).
  auto estimate_gate = [&](std::size_t i, std::size_t si) {
    const std::string& sn = shape_names[si];
    if (const auto* r = have(ids[i], sn, "estimate")) return r->verdict == "pass" ? r->score : NAN;
    stopwatch t;
    // (the gate records compact_estimate: the time and its terms, no hints; a kept candidate's select record has the full estimate)
    const auto e = cake::cost::estimate(*program_of(i), shapes[si], nullptr, cake::cost::estimate_scope::time_only);
    const double t_us = e.ok ? e.time_us : NAN;
    record(points[i], ids[i], sn, "estimate", e.ok ? "pass" : "error", t_us, compact_estimate(e), t.ms(), 0);
    return t_us;
  };

  // The fastest measured candidate of a shape; with nothing timed, the best estimate among those that
  // lowered cleanly (measured = false); points.size() when there is neither.
  auto best_of = [&](std::size_t si, bool& measured) {
    const std::string& sn = shape_names[si];
    std::size_t best = points.size();
    double best_ms = INFINITY, best_us = INFINITY;
    for (std::size_t i = 0; i < points.size(); ++i)
      if (const auto* r = have(ids[i], sn, "bench"); r && r->verdict == "pass" && r->score < best_ms) best_ms = r->score, best = i;
    measured = best < points.size();
    if (!measured)
      for (std::size_t i = 0; i < points.size(); ++i)
        if (const auto* r = have(ids[i], "", "lower"); r && r->verdict == "pass")
          if (const auto* e = have(ids[i], sn, "estimate"); e && e->verdict == "pass" && e->score < best_us) best_us = e->score, best = i;
    return best;
  };
  // ---- per shape: estimate, select, lower, run, bench ----
  for (std::size_t si = 0; si < shapes.size(); ++si) {
    const std::string& sn = shape_names[si];
    std::vector<std::pair<double, std::size_t>> ranked;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!analyzed_ok[i]) continue;
      const double t_us = estimate_gate(i, si);
      ranked.push_back({std::isfinite(t_us) ? t_us : INFINITY, i});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    // Selection, in this order until --max-candidates are kept: the seed (the baseline every result is
    // compared with); for every value of every axis the best-estimated candidate having it (the model
    // is not trusted to order structural variants it barely tells apart: each gets measured at its best);
    // then the ranking. A candidate whose generated kernel is identical to a kept one (an axis without
    // effect there, e.g. the raster of a non-persistent kernel) is a duplicate, not measured twice.
    std::vector<std::size_t> picks;  // indices into ranked
    std::vector<std::string> why(ranked.size());
    {
      std::vector<bool> taken(ranked.size(), false);
      auto pick = [&](std::size_t r, std::string reason) {
        if (taken[r]) return;
        taken[r] = true;
        why[r] = std::move(reason);
        picks.push_back(r);
      };
      for (std::size_t r = 0; r < ranked.size(); ++r)
        if (ranked[r].second == 0) pick(r, "seed");
      for (std::size_t a = 0; a < fam->axes.size(); ++a)
        for (const long long v : fam->axes[a].values)
          for (std::size_t r = 0; r < ranked.size(); ++r)
            if (points[ranked[r].second][a] == v && std::isfinite(ranked[r].first)) {
              pick(r, "best estimate with " + fam->axes[a].name + "=" + (fam->axes[a].boolean ? (v ? "true" : "false") : std::to_string(v)));
              break;
            }
      // Within the band of estimates the model cannot tell apart, the most different from what is
      // already picked (greatest least Hamming distance over the axes; ties by rank), then the ranking.
      const double band = ranked.empty() ? 0 : ranked[0].first * (1 + near_best_band);
      while (true) {
        std::size_t best_r = ranked.size();
        int best_d = -1;
        for (std::size_t r = 0; r < ranked.size() && ranked[r].first <= band; ++r) {
          if (taken[r]) continue;
          int d = static_cast<int>(fam->axes.size()) + 1;
          for (const std::size_t q : picks) {
            int h = 0;
            for (std::size_t a = 0; a < fam->axes.size(); ++a) h += points[ranked[r].second][a] != points[ranked[q].second][a];
            d = std::min(d, h);
          }
          if (d > best_d) best_d = d, best_r = r;
        }
        if (best_r == ranked.size() || picks.size() >= static_cast<std::size_t>(eo.max_candidates) * 4) break;
        pick(best_r, "near the best estimate, most unlike the others picked (" + std::to_string(best_d) + " axes apart)");
      }
      for (std::size_t r = 0; r < ranked.size(); ++r) pick(r, "rank");
    }
    // Walk the picks: a duplicate kernel is skipped; a pick is kept (select) and lowered; --max-candidates
    // counts the kept ones that lowered cleanly (those go to the GPU).
    std::vector<std::size_t> order;  // candidate indices to measure, in pick order
    std::map<std::string, std::size_t> kernels_seen;  // fingerprint of the generated kernel -> candidate
    auto fingerprint = [&](std::size_t i) {
      cake::lower::emit_options lo;
      lo.analyze = eo.without_rules.empty();
      const auto l = cake::lower::lower(*program_of(i), lo);
      return hasher()
          .add(l.ok ? l.source : "failed:" + ids[i])
          .add(std::to_string(l.block_threads) + "/" + std::to_string(l.smem_bytes) + "/" + std::to_string(l.cluster[0]) + "/" + std::to_string(l.persistent))
          .hex();
    };
    {
      std::vector<std::string> verdict(ranked.size(), "pruned"), same_as(ranked.size());
      auto select_line = [&](std::size_t r) {
        const std::size_t i = ranked[r].second;
        if (have(ids[i], sn, "select")) return;
        record(points[i], ids[i], sn, "select", verdict[r], ranked[r].first == INFINITY ? NAN : ranked[r].first,
               "{\"rank\":" + std::to_string(r + 1) + ",\"of\":" + std::to_string(ranked.size()) + ",\"max_candidates\":" + std::to_string(eo.max_candidates) +
                   ",\"why\":" + (verdict[r] == "kept" ? json_string(why[r]) : std::string("null")) +
                   ",\"same_as\":" + (same_as[r].empty() ? std::string("null") : json_string(same_as[r])) +
                   (verdict[r] == "kept" ? ",\"estimate\":" + cake::cost::to_json(cake::cost::estimate(*program_of(i), shapes[si])) : std::string()) + "}",
               0, 0);
      };
      int kept = 0;
      for (const std::size_t r : picks) {
        if (kept >= eo.max_candidates) break;
        const std::size_t i = ranked[r].second;
        const std::string fp = fingerprint(i);
        if (const auto it = kernels_seen.find(fp); it != kernels_seen.end()) {
          verdict[r] = "duplicate";
          same_as[r] = ids[it->second];
          select_line(r);
          continue;
        }
        kernels_seen[fp] = i;
        verdict[r] = "kept";
        select_line(r);
        const auto* lr = lower_gate(i);
        if (lr && lr->verdict == "pass") {
          ++kept;
          order.push_back(i);
        }
      }
      for (std::size_t r = 0; r < ranked.size(); ++r) select_line(r);
    }
    progress(sn + ": " + std::to_string(ranked.size()) + " estimated, " + std::to_string(order.size()) + " go to the GPU (best estimate " +
             (ranked.empty() ? std::string("none") : json_number(ranked[0].first) + " us: " + ids[ranked[0].second]) + ")");
    for (const std::size_t i : order) gpu_gates(i, si);
    // A candidate whose outcome at this shape is known: rejected at lowering, or run / bench has a result
    // that ends it (a "budget" line is no result: such a candidate is taken up again).
    auto finished = [&](std::size_t i) {
      const auto* lr = have(ids[i], "", "lower");
      const auto* rr = have(ids[i], sn, "run");
      return (lr && lr->verdict != "pass") || (rr && rr->verdict != "pass") || have(ids[i], sn, "bench") != nullptr;
    };
    // Local search from the measurements: the best measured candidate's neighbours (one axis changed),
    // best estimate first, local_batch per round, while a round improves the best and GPU budget is left.
    // When a round of one-axis moves does not improve, the next round moves two axes at once (a better
    // point can need both, e.g. cluster 2 together with one wgmma group in flight); an improvement goes
    // back to one-axis moves from the new best; a round of two-axis moves that does not improve ends it.
    // A pair whose either move failed alone (lowering or run) is not tried.
    int width = 1;
    for (int round = 1; round <= max_local_rounds && !st.no_gpu && st.gpu_s < eo.budget_gpu_s; ++round) {
      bool measured = false;
      const std::size_t best = best_of(si, measured);
      if (!measured) break;
      const double best_ms = have(ids[best], sn, "bench")->score;
      std::vector<std::pair<double, std::size_t>> near;
      auto consider = [&](const std::vector<long long>& pt) {
        const std::size_t i = add_point(pt);
        analyze_gate(i);
        if (!analyzed_ok[i] || finished(i)) return;
        const double t_us = estimate_gate(i, si);
        near.push_back({std::isfinite(t_us) ? t_us : INFINITY, i});
      };
      auto failed_alone = [&](const std::vector<long long>& pt) {
        const std::size_t i = add_point(pt);
        const auto* lr = have(ids[i], "", "lower");
        const auto* rr = have(ids[i], sn, "run");
        return (lr && lr->verdict != "pass") || (rr && rr->verdict != "pass");
      };
      const std::size_t axes = fam->axes.size();
      for (std::size_t a = 0; a < axes; ++a)
        for (const long long v : fam->axes[a].values) {
          if (v == points[best][a]) continue;
          auto pt = points[best];
          pt[a] = v;
          if (width == 1) {
            consider(pt);
            continue;
          }
          // A pair is built only from one-axis moves that did not fail: the pair exists to combine two
          // moves that were each correct but slower, and one that failed alone would spend GPU time on
          // a likely repeat of the failure (which the failure clustering already has).
          if (failed_alone(pt)) continue;
          for (std::size_t b = a + 1; b < axes; ++b)
            for (const long long w : fam->axes[b].values) {
              if (w == points[best][b]) continue;
              auto alone = points[best];
              alone[b] = w;
              if (failed_alone(alone)) continue;
              auto pt2 = pt;
              pt2[b] = w;
              consider(pt2);
            }
        }
      std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      int tried = 0;
      for (const auto& [t_us, i] : near) {
        if (tried >= local_batch) break;
        const std::string fp = fingerprint(i);
        if (kernels_seen.count(fp)) continue;  // the same kernel as one already measured
        kernels_seen[fp] = i;
        ++tried;
        if (const auto* r = have(ids[i], sn, "select"); !r || r->verdict != "kept")
          record(points[i], ids[i], sn, "select", "kept", std::isfinite(t_us) ? t_us : NAN,
               "{\"rank\":null,\"of\":null,\"max_candidates\":" + std::to_string(eo.max_candidates) + ",\"why\":" +
                   json_string("local search round " + std::to_string(round) + ": " + (width == 1 ? "one axis" : "two axes") + " from the best measured, " + ids[best]) + ",\"same_as\":null}",
               0, 0);
        const auto* lr = lower_gate(i);
        if (lr && lr->verdict == "pass") gpu_gates(i, si);
      }
      bool still = false;
      const std::size_t now = best_of(si, still);
      progress(sn + ": local round " + std::to_string(round) + ": " + std::to_string(tried) + " neighbour(s) of " + ids[best] + (width == 1 ? " (one axis)" : " (two axes)") +
               " tried; best " + json_number(have(ids[now], sn, "bench")->score) + " ms");
      if (tried > 0 && have(ids[now], sn, "bench")->score < best_ms) {
        width = 1;
        continue;
      }
      if (width == 2 || axes < 2) break;
      width = 2;
    }
  }
  // ---- agent rounds (--agent CMD, docs/evolve.md) ----
  // Each round: ROUND_DIR/summary.json (the family's axes, the best so far, every candidate that reached
  // lowering, the rules that rejected the others) and ROUND_DIR/best.txt are written; `CMD ROUND_DIR` runs;
  // ROUND_DIR/proposals.txt, one point per line (NAME=VALUE,...; unnamed axes keep the best's values), is
  // read back and every new point goes through all the gates. No proposals, or a failing agent, ends it.
  // An agent may also return a schedule file, ROUND_DIR/proposal.cpp, exporting the family under the same
  // name (new axes, new structure: anything the language can state): it is searched for the shape by a
  // nested `cake evolve` (its own compile, log ROUND_DIR/proposal.jsonl, the GPU budget that is left, no
  // agent), and its best is compared with the family's. ROUND_DIR/schedule.cpp is the best schedule file so
  // far (FILE, or the agent file whose best was the fastest measured); summary.json lists every file's result.
  struct agent_file {
    int round = 0;
    std::string path, why;  // why: it did not compile / load / measure
    evolve_shape_result best;
  };
  std::vector<std::vector<agent_file>> agent_files(shapes.size());
  auto agent_rounds = [&](std::size_t si) {
    const std::string& sn = shape_names[si];
    std::string shape_dir;
    for (const char ch : sn) shape_dir += ch == ',' ? '_' : ch;
    std::string rejected_proposals;
    std::string best_file = opt.file;  // the best schedule file so far
    double best_file_ms = INFINITY;    // its measured best, when it is an agent's file
    for (int round = 1; round <= eo.agent_rounds; ++round) {
      const fs::path dir = fs::path(st.log_path + ".agent") / shape_dir / ("round-" + std::to_string(round));
      std::error_code ec;
      fs::create_directories(dir, ec);
      bool measured = false;
      const std::size_t best = best_of(si, measured);
      std::string axes, cands;
      for (std::size_t a = 0; a < fam->axes.size(); ++a) {
        std::string vals;
        for (const long long v : fam->axes[a].values) vals += (vals.empty() ? "" : ",") + std::to_string(v);
        axes += std::string(a ? "," : "") + "{\"name\":" + json_string(fam->axes[a].name) + ",\"values\":[" + vals + "],\"bool\":" +
                (fam->axes[a].boolean ? "true" : "false") + ",\"seed\":" + std::to_string(fam->seed[a]) + "}";
      }
      std::map<std::string, int> rules;
      static const std::regex rule_re("\"rules\":\\[\"([^\"]+)\"");
      for (std::size_t i = 0; i < points.size(); ++i) {
        const auto* an = have(ids[i], "", "analyze");
        if (an && an->verdict == "reject") {
          std::smatch m;
          if (std::regex_search(an->line, m, rule_re)) rules[m[1]]++;
          continue;
        }
        const auto* lr = have(ids[i], "", "lower");
        if (!lr) continue;
        std::string last = "lower:" + lr->verdict;
        for (const char* gate : {"run", "bench"})
          if (const auto* r = have(ids[i], sn, gate)) last = std::string(gate) + ":" + r->verdict;
        const auto* e = have(ids[i], sn, "estimate");
        const auto* b = have(ids[i], sn, "bench");
        cands += std::string(cands.empty() ? "" : ",") + "{\"candidate\":" + json_string(ids[i]) + ",\"params\":" + params_json(points[i]) +
                 ",\"last\":" + json_string(last) + ",\"estimate_us\":" + (e && std::isfinite(e->score) ? json_number(e->score) : "null") +
                 ",\"cake_ms\":" + (b && b->verdict == "pass" ? json_number(b->score) : "null") +
                 ",\"ratio\":" + (b && b->verdict == "pass" ? json_number(number_field(b->line, "ratio")) : "null") + "}";
      }
      std::string rj;
      for (const auto& [r, n] : rules) rj += (rj.empty() ? "" : ",") + json_string(r) + ":" + std::to_string(n);
      std::string files_json;
      for (const auto& f : agent_files[si])
        files_json += std::string(files_json.empty() ? "" : ",") + "{\"round\":" + std::to_string(f.round) + ",\"file\":" + json_string(f.path) +
                      ",\"measured\":" + (f.best.measured ? "true" : "false") + ",\"candidate\":" +
                      (f.best.candidate.empty() ? std::string("null") : json_string(f.best.candidate)) + ",\"cake_ms\":" +
                      (f.best.measured ? json_number(f.best.cake_ms) : "null") + ",\"ratio\":" + (f.best.measured ? json_number(f.best.ratio) : "null") +
                      ",\"why\":" + (f.why.empty() ? std::string("null") : json_string(f.why)) + "}";
      const std::string best_id = best < points.size() ? ids[best] : std::string();
      write_file(dir / "summary.json",
                 "{\"schema\":\"cake.evolve.agent/1\",\"family\":" + json_string(fam->name) + ",\"shape\":" + json_string(sn) + ",\"round\":" + std::to_string(round) +
                     ",\"axes\":[" + axes + "],\"gpu_s\":" + json_number(st.gpu_s) + ",\"budget_gpu_s\":" + json_number(eo.budget_gpu_s) + ",\"best\":" +
                     (best_id.empty() ? std::string("null") : "{\"candidate\":" + json_string(best_id) + ",\"measured\":" + (measured ? "true" : "false") + "}") +
                     ",\"candidates\":[" + cands + "],\"analyzer_rejections\":{" + rj + "},\"rejected_proposals\":[" + rejected_proposals +
                     "],\"schedule_file\":\"schedule.cpp\",\"schedule_files\":[" + files_json + "]}\n");
      write_file(dir / "best.txt", best_id + "\n");
      write_file(dir / "schedule.cpp", read_file(best_file).value_or(std::string()));
      fs::remove(dir / "proposals.txt", ec);
      fs::remove(dir / "proposal.cpp", ec);
      std::string quoted = "'";
      for (const char ch : dir.string()) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      quoted += "'";
      const auto pr = run_process({"/bin/sh", "-c", eo.agent + " " + quoted}, 600);
      if (!pr.ok()) {
        progress("agent round " + std::to_string(round) + ": the agent failed (" + (pr.started ? "exit " + std::to_string(pr.exit_code) : pr.start_error) +
                 "): " + trim(pr.output.substr(0, 300)));
        break;
      }
      const auto text = read_file(dir / "proposals.txt");
      std::vector<std::size_t> proposed;
      rejected_proposals.clear();
      if (text) {
        std::istringstream in(*text);
        std::string line;
        const std::vector<long long> base = best < points.size() ? points[best] : fam->seed;
        while (std::getline(in, line)) {
          if (const auto h = line.find('#'); h != std::string::npos) line.erase(h);
          line = trim(line);
          if (line.empty()) continue;
          std::vector<long long> pt;
          if (const auto why = parse_point(*fam, line, pt, &base); !why.empty()) {
            rejected_proposals += (rejected_proposals.empty() ? "" : ",") + std::string("{\"line\":") + json_string(line) + ",\"why\":" + json_string(why) + "}";
            progress("agent round " + std::to_string(round) + ": proposal '" + line + "' ignored: " + why);
            continue;
          }
          proposed.push_back(add_point(pt));
        }
      }
      progress("agent round " + std::to_string(round) + ": " + std::to_string(proposed.size()) + " proposal(s)");
      const bool has_file = fs::exists(dir / "proposal.cpp", ec);
      if (proposed.empty() && !has_file) break;
      for (const std::size_t i : proposed) {
        analyze_gate(i);
        if (!analyzed_ok[i]) continue;
        const double t_us = estimate_gate(i, si);
        if (!have(ids[i], sn, "select"))
          record(points[i], ids[i], sn, "select", "kept", t_us,
                 "{\"rank\":null,\"of\":null,\"max_candidates\":" + std::to_string(eo.max_candidates) + ",\"why\":" +
                     json_string("proposed by the agent (round " + std::to_string(round) + ")") + ",\"same_as\":null}",
                 0, 0);
        const auto* lr = lower_gate(i);
        if (lr && lr->verdict == "pass") gpu_gates(i, si);
      }
      if (has_file) {
        agent_file f;
        f.round = round;
        f.path = (dir / "proposal.cpp").string();
        options nopt = opt;
        nopt.file = f.path;
        nopt.shapes = {opt.shapes[si]};
        evolve_options neo = eo;
        neo.agent.clear();
        neo.resume = false;
        neo.log = (dir / "proposal.jsonl").string();
        neo.failures_dir = (dir / "proposal.failures").string();
        neo.budget_gpu_s = std::max(0.0, eo.budget_gpu_s - st.gpu_s);
        fs::remove(neo.log, ec);
        progress("agent round " + std::to_string(round) + ": searching its schedule file " + f.path);
        evolve_result nested;
        const outcome no = cmd_evolve(nopt, neo, &nested);
        st.gpu_s += nested.gpu_s;
        if (!nested.shapes.empty()) f.best = nested.shapes[0];
        if (!f.best.measured) {
          const std::string first = no.text.substr(0, no.text.find('\n'));
          f.why = nested.shapes.empty() ? "it was not searched: " + first : "nothing of it was measured (no GPU, or the budget ran out)";
        }
        progress("agent round " + std::to_string(round) + ": its schedule file: " +
                 (f.best.measured ? "best " + f.best.candidate + " " + json_number(f.best.cake_ms) + " ms" : f.why));
        bool fam_measured = false;
        const std::size_t fb = best_of(si, fam_measured);
        const double fam_ms = fam_measured ? have(ids[fb], sn, "bench")->score : INFINITY;
        if (f.best.measured && f.best.cake_ms < std::min(fam_ms, best_file_ms)) {
          best_file = f.path;
          best_file_ms = f.best.cake_ms;
        }
        agent_files[si].push_back(f);
      }
    }
  };

  if (!eo.agent.empty())
    for (std::size_t si = 0; si < shapes.size(); ++si) agent_rounds(si);

  // ---- failures: clusters, minimized reproducers, proposed corpus entries (tools/cli/failures.hpp) ----
  // Candidates that passed the analyzer and failed a GPU gate are clustered by signature; each cluster's
  // reproducer is walked towards the seed one axis at a time (a step is kept when the gates still fail the
  // same way) and its shape halved while it still fails, within --minimize re-runs and the GPU budget.
  auto failure_view = [&] {
    failures::log_view v;
    v.family = fam->name;
    v.seed = ids[0];
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_cand;
    for (const auto& [k, r] : st.done) by_cand[k.substr(0, k.find('|'))].push_back({k, r.line});
    for (const auto& id : ids)
      if (const auto it = by_cand.find(id); it != by_cand.end()) {
        v.order.push_back(id);
        for (const auto& [k, line] : it->second) v.last[k] = line;
      }
    return v;
  };
  std::vector<failures::cluster> clusters = failures::cluster_failures(failure_view());
  std::map<std::string, std::vector<std::string>> steps_of;  // minimized reproducer -> its steps
  for (const auto& cl : clusters) {
    std::vector<long long> rep;
    if (!parse_point(*fam, cl.reproducer, rep).empty()) continue;
    // The search shape at which the reproducer failed (a resumed log also holds its halved shapes).
    std::string rep_shape_name;
    for (const auto& sn : shape_names)
      if (const auto* r = have(cl.reproducer, sn, cl.gate); r && r->verdict == "reject" && rep_shape_name.empty()) rep_shape_name = sn;
    const auto si_it = std::find(shape_names.begin(), shape_names.end(), rep_shape_name);
    if (si_it == shape_names.end() || cl.gate != "run") continue;  // bench failures: the reproducer is reported as found
    const std::size_t si = static_cast<std::size_t>(si_it - shape_names.begin());
    std::vector<std::string> steps;
    int tries = 0;
    auto can_run = [&] { return tries < eo.minimize_tries && !st.no_gpu && st.gpu_s < eo.budget_gpu_s; };
    auto fails_same = [&](const gate_record* r) { return r && r->verdict == "reject" && failures::failure_kind(r->line) == cl.kind; };
    for (std::size_t a = 0; a < fam->axes.size(); ++a) {
      if (rep[a] == fam->seed[a]) continue;
      if (!can_run()) break;
      auto nb = rep;
      nb[a] = fam->seed[a];
      const std::size_t i = add_point(nb);
      const std::string step = fam->axes[a].name + " -> the seed's " + (fam->axes[a].boolean ? (nb[a] ? "true" : "false") : std::to_string(nb[a])) + " (" + ids[i] + "): ";
      analyze_gate(i);
      if (!analyzed_ok[i]) {
        steps.push_back(step + "the analyzer rejects it; kept");
        continue;
      }
      const auto* lr = lower_gate(i);
      if (!lr || lr->verdict != "pass") {
        steps.push_back(step + "lower " + (lr ? lr->verdict : "?") + "; kept");
        continue;
      }
      if (!have(ids[i], rep_shape_name, "run")) {
        ++tries;
        gpu_child(i, rep_shape_name, search_shapes(si, false), false);
      }
      const auto* rr = have(ids[i], rep_shape_name, "run");
      if (fails_same(rr)) {
        rep = nb;
        steps.push_back(step + "still fails (" + failures::kind_text(cl.kind) + "): the reproducer");
      } else {
        steps.push_back(step + (rr ? "run " + rr->verdict : std::string("not run (budget)")) + ": " + fam->axes[a].name + " is kept");
      }
    }
    // The shape: from the smallest failing row of its evidence, halve every dim (not below 64) while it still fails.
    const std::string rep_id = point_id(*fam, rep);
    const std::size_t ri = add_point(rep);
    std::string small;
    for (const auto& [k, r] : st.done)
      if (k.rfind(rep_id + "|", 0) == 0 && fails_same(&r)) {
        const std::string s = failures::smallest_failing_shape(r.line);
        if (!s.empty() && (small.empty() || failures::shape_volume(s) < failures::shape_volume(small))) small = s;
      }
    while (!small.empty() && can_run()) {
      std::vector<cake::cost::dim_value> d;
      std::string why;
      if (!parse_shape(small, d, why) || d.size() != 3) break;
      cake::cli::problem_shape half;
      bool smaller = false;
      std::string name;
      for (const auto& x : d) {
        const long long v = std::max<long long>(64, x.value / 2);
        smaller = smaller || v < x.value;
        half.push_back({x.name, v});
        name += (name.empty() ? "" : ",") + x.name + "=" + std::to_string(v);
      }
      if (!smaller) break;
      if (!have(rep_id, name, "run")) {
        ++tries;
        gpu_child(ri, name, std::vector<cake::cli::problem_shape>{half}, false);
      }
      const auto* rr = have(rep_id, name, "run");
      const bool still = fails_same(rr);
      steps.push_back("shape " + small + " -> " + name + ": " + (still ? "still fails" : rr ? "run " + rr->verdict : std::string("not run (budget)")));
      if (!still) break;
      small = name;
    }
    steps_of[rep_id] = steps;
  }
  std::string failures_dir = eo.failures_dir.empty() ? st.log_path + ".failures" : eo.failures_dir;
  {
    const auto v = failure_view();
    clusters = failures::cluster_failures(v);
    for (auto& cl : clusters) {
      cl.twin = failures::fixed_twin(v, cl);
      if (const auto it = steps_of.find(cl.reproducer); it != steps_of.end()) cl.minimize_steps = it->second;
    }
    if (!clusters.empty()) failures::write_proposals(failures_dir, fam->name, display_path(opt.file), v, clusters);
    if (!clusters.empty()) progress(std::to_string(clusters.size()) + " failure cluster(s); proposals in " + failures_dir);
  }

  // ---- the answers: the best per shape ----
  std::string best_json, text;
  bool measured_all = true;
  for (std::size_t si = 0; si < shapes.size(); ++si) {
    const std::string& sn = shape_names[si];
    // The fastest measured candidate; with nothing timed, the best estimate among those that lowered cleanly.
    bool measured = false;
    const std::size_t best = best_of(si, measured);
    measured_all = measured_all && measured;
    const double best_ms = measured ? have(ids[best], sn, "bench")->score : NAN;
    std::string entry = "{\"shape\":" + json_string(sn);
    text += "shape " + sn + ": ";
    if (best < points.size()) {
      std::string evidence;
      for (const char* gate : {"analyze", "estimate", "select", "lower", "run", "bench"})
        if (const auto* r = have(ids[best], std::string(gate) == "analyze" || std::string(gate) == "lower" ? "" : sn, gate))
          evidence += (evidence.empty() ? "" : ",") + r->line;
      const auto* seed_bench = have(ids[0], sn, "bench");
      const auto* best_bench = have(ids[best], sn, "bench");
      const auto* est = have(ids[best], sn, "estimate");
      entry += ",\"measured\":" + std::string(measured ? "true" : "false") + ",\"candidate\":" + json_string(ids[best]) + ",\"params\":" + params_json(points[best]) +
               ",\"cake_ms\":" + (measured ? json_number(best_ms) : "null") + ",\"ratio\":" +
               (measured ? json_number(number_field(best_bench->line, "ratio")) : "null") + ",\"estimate_us\":" +
               (est && std::isfinite(est->score) ? json_number(est->score) : "null") + ",\"seed\":{\"candidate\":" + json_string(ids[0]) +
               ",\"cake_ms\":" + (seed_bench && seed_bench->verdict == "pass" ? json_number(seed_bench->score) : "null") + "},\"evidence\":[" + evidence + "]}";
      if (measured) {
        char b[300];
        std::snprintf(b, sizeof b, "best %s: %.4f ms, %.3fx the peer", ids[best].c_str(), best_ms, number_field(best_bench->line, "ratio"));
        text += b;
        if (seed_bench && seed_bench->verdict == "pass") text += " (seed " + json_number(seed_bench->score) + " ms)";
        text += "\n";
      } else {
        text += "nothing measured (no GPU, or the budget ran out); best estimate: " + ids[best] +
                (est && std::isfinite(est->score) ? " (" + json_number(est->score) + " us)" : std::string()) + "\n";
      }
    } else {
      entry += ",\"measured\":false,\"candidate\":null}";
      text += "no candidate passed\n";
    }
    // The agent's schedule files: each one's best, and the fastest of all when it beats the family's.
    if (!agent_files[si].empty()) {
      const agent_file* win = nullptr;
      std::string fj;
      for (const auto& f : agent_files[si]) {
        fj += std::string(fj.empty() ? "" : ",") + "{\"round\":" + std::to_string(f.round) + ",\"file\":" + json_string(f.path) + ",\"measured\":" +
              (f.best.measured ? "true" : "false") + ",\"candidate\":" + (f.best.candidate.empty() ? std::string("null") : json_string(f.best.candidate)) +
              ",\"cake_ms\":" + (f.best.measured ? json_number(f.best.cake_ms) : "null") + ",\"ratio\":" + (f.best.measured ? json_number(f.best.ratio) : "null") +
              ",\"why\":" + (f.why.empty() ? std::string("null") : json_string(f.why)) + "}";
        if (f.best.measured && f.best.cake_ms < (measured ? best_ms : INFINITY) && (!win || f.best.cake_ms < win->best.cake_ms)) win = &f;
      }
      entry.pop_back();  // the closing brace
      entry += ",\"agent_files\":[" + fj + "],\"overall\":";
      if (win) {
        entry += "{\"file\":" + json_string(win->path) + ",\"candidate\":" + json_string(win->best.candidate) + ",\"cake_ms\":" + json_number(win->best.cake_ms) +
                 ",\"ratio\":" + json_number(win->best.ratio) + "}}";
        char b[400];
        std::snprintf(b, sizeof b, "  the agent's schedule file %s (round %d) is faster: %s, %.4f ms, %.3fx the peer\n", win->path.c_str(), win->round,
                      win->best.candidate.c_str(), win->best.cake_ms, win->best.ratio);
        text += b;
      } else {
        entry += measured ? "{\"file\":" + json_string(opt.file) + ",\"candidate\":" + json_string(ids[best]) + ",\"cake_ms\":" + json_number(best_ms) +
                                ",\"ratio\":" + json_number(number_field(have(ids[best], sn, "bench")->line, "ratio")) + "}}"
                          : std::string("null}");
      }
    }
    if (result) {
      evolve_shape_result r;
      r.measured = measured;
      if (best < points.size()) r.candidate = ids[best];
      if (measured) r.cake_ms = best_ms, r.ratio = number_field(have(ids[best], sn, "bench")->line, "ratio");
      result->shapes.push_back(r);
    }
    best_json += (best_json.empty() ? "" : ",") + entry;
  }
  // ---- counts per gate (the final verdict of every candidate, shape and gate) ----
  std::map<std::string, std::map<std::string, int>> counts;
  for (const auto& [k, r] : st.done) counts[k.substr(k.rfind('|') + 1)][r.verdict]++;
  for (const auto& [k, v] : st.not_done)
    if (!st.done.count(k)) counts[k.substr(k.rfind('|') + 1)][v]++;
  std::string cj, ct;
  for (const char* gate : {"analyze", "estimate", "select", "lower", "run", "bench"}) {
    std::string g;
    for (const auto& [v, n] : counts[gate]) {
      g += (g.empty() ? "" : ",") + json_string(v) + ":" + std::to_string(n);
      ct += std::string(ct.empty() ? "" : ", ") + gate + " " + v + " " + std::to_string(n);
    }
    cj += (cj.empty() ? "" : ",") + json_string(gate) + ":{" + g + "}";
  }
  text += "gates: " + ct + "\n";
  text += failures::summary_text(clusters, failures_dir);
  if (const char* m = std::getenv("CAKE_GPU_MOCK"); m && *m) text += "note: the GPU verdicts are scripted (CAKE_GPU_MOCK=" + std::string(m) + "): no GPU ran\n";
  char b[300];
  std::snprintf(b, sizeof b, "cake evolve: %zu candidates, %d gate results this run (%zu from the log), GPU %.1f of %.0f s, %.1f s in all; log %s\n", points.size(),
                st.evaluated, from_log, st.gpu_s, eo.budget_gpu_s, clock.ms() / 1e3, st.log_path.c_str());
  text += b;
  o.text = text;
  o.json_fields += ",\"evolve\":{\"family\":" + json_string(fam->name) + ",\"log\":" + json_string(st.log_path) + ",\"domain\":" + json_number(static_cast<double>(domain)) +
                   ",\"candidates\":" + std::to_string(points.size()) + ",\"evaluated\":" + std::to_string(st.evaluated) + ",\"from_log\":" + std::to_string(from_log) +
                   ",\"gpu_s\":" + json_number(st.gpu_s) + ",\"budget_gpu_s\":" + json_number(eo.budget_gpu_s) + ",\"seed\":" + std::to_string(eo.seed) +
                   ",\"max_candidates\":" + std::to_string(eo.max_candidates) + ",\"counts\":{" + cj + "},\"best\":[" + best_json + "],\"failures\":" + failures::clusters_json(clusters, clusters.empty() ? std::string() : failures_dir) + "}";
  o.code = measured_all ? exit_ok : st.no_gpu ? exit_no_gpu : exit_failed;
  if (result) result->gpu_s = st.gpu_s;
  return o;
}

}  // namespace cake_cli
