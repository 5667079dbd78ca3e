// cake: the command-line harness for Cake schedules (docs/cli.md).
//
//   cake check    FILE [--json] [--kernel NAME]                       diagnostics: compile-time checks + analyzer
//   cake lower    FILE [--target T] [--out DIR] [--json]              CUDA, PTX, CUBIN, ptxas report
//   cake estimate FILE [--shape M=..,N=..,K=..]... [--json]           the cost model's estimate, bottleneck, hints
//   cake run      FILE [--timeout S] [--hang-timeout S] [--sanitize TOOL] [--json]   correctness on the GPU
//   cake bench    FILE [--runs N] [--timeout S] [--json]              correctness, then timing against the peer
//   cake evolve   FILE --family NAME --shape M=..,N=..,K=.. [--budget-gpu-s S] [--seed N] [--log F]
//                 [--max-candidates N] [--resume] [--agent CMD] [--failures DIR] [--minimize N] [--sanitize TOOL] [--json]
//                                                                     search a kernel family (docs/evolve.md)
//   cake failures LOG [--family NAME] [--failures DIR] [--json]       failure clusters and proposals of an evidence log
//   cake corpus-gate [--baseline F] [--update-baseline] [--without-rule ID]... [--json]
//                                                                     the verify/kernel corpora against their baseline
//
// Every answer is text for people or, with --json, one JSON object of the schema "cake.cli/1".
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <cake/version.hpp>

#include "cli/commands.hpp"
#include "cli/corpus_gate.hpp"
#include "cli/evolve.hpp"

namespace {

const char* usage_text =
    "usage: cake <command> FILE [options]\n"
    "\n"
    "commands:\n"
    "  check     compile FILE, report compile-time check failures and the analyzer's diagnostics\n"
    "  lower     write the generated CUDA, PTX, CUBIN and ptxas report of every kernel (--out DIR, default cake-lower)\n"
    "  estimate  the cost model's time, bottleneck and hints for each declared shape (or --shape M=..,N=..,K=..)\n"
    "  run       on a GPU: check every kernel against its reference on fresh random inputs over its shapes\n"
    "  bench     on a GPU: run, then time every kernel against its declared peer\n"
    "  evolve    search a kernel family (CAKE_EXPORT_FAMILY) for the fastest correct point: analyzer, cost model,\n"
    "            NVRTC, run and bench gates; evidence appended to a JSON-lines log (docs/evolve.md); candidates that\n"
    "            fail on the GPU are clustered, minimized and written up as proposed corpus entries (--failures DIR)\n"
    "  failures  (FILE is an evidence log) the failure clusters and proposed corpus entries of a log, re-running nothing\n"
    "  corpus-gate  (no FILE) the verify corpus, the kernel corpus and the accepted proposals through the analyzer,\n"
    "            against the committed baseline: exit 1 naming each lost detection or clean schedule that now errs\n"
    "\n"
    "options:\n"
    "  --json             one JSON object (schema cake.cli/1) instead of text\n"
    "  --kernel NAME      only this exported kernel\n"
    "  --target T         lower: only kernels written for T (sm_80, sm_90a, sm_100a)\n"
    "  --out DIR          lower: where to write the files\n"
    "  --shape S          estimate, evolve: NAME=VALUE,... (repeatable); replaces the declared shapes\n"
    "  --family NAME      evolve: the family to search\n"
    "  --budget-gpu-s S   evolve: GPU seconds (wall time of the GPU children) it may spend (default 300)\n"
    "  --seed N           evolve: seed of the sampling and of the tie order (default 1)\n"
    "  --log FILE         evolve: the JSON-lines evidence log (default cake-evolve-FAMILY.jsonl)\n"
    "  --max-candidates N evolve: how many candidates the first selection sends to the GPU (default 16)\n"
    "  --resume           evolve: continue the log; nothing it holds is evaluated again\n"
    "  --agent CMD        evolve: after the built-in search, rounds of an external driver: CMD ROUND_DIR reads\n"
    "                     ROUND_DIR/summary.json and best.txt, writes ROUND_DIR/proposals.txt (docs/evolve.md)\n"
    "  --agent-rounds N   evolve: at most N agent rounds (default 3)\n"
    "  --failures DIR     evolve, failures: where the failure clusters' proposals go (default LOG.failures)\n"
    "  --minimize N       evolve: GPU re-runs per failure cluster to shrink its reproducer (default 8; 0: none)\n"
    "  --baseline FILE    corpus-gate: the baseline (default tests/verify/corpus_baseline.tsv of the source tree)\n"
    "  --update-baseline  corpus-gate: rewrite the baseline with what the analyzer raises now (after review)\n"
    "  --without-rule ID  corpus-gate: drop rule ID from the findings, as if the analyzer lost it (repeatable);\n"
    "                     evolve: the analyze gate drops ID's findings (what a search finds before the rule exists)\n"
    "  --accepted DIR     corpus-gate: the accepted evolve proposals (default tests/verify/accepted)\n"
    "  --corpus-bin PATH  corpus-gate: the cake_corpus_gate tool (default: the one this build made)\n"
    "  --runs N           bench: timed runs per side (default 50)\n"
    "  --timeout S        run/bench/evolve: time limit of the GPU process per kernel (default 180; evolve 60)\n"
    "  --hang-timeout S   run/bench: every mbarrier wait traps after S seconds (default 2)\n"
    "  --sanitize TOOL    run/bench, evolve's run gate: under compute-sanitizer (memcheck, racecheck, synccheck)\n"
    "  --force            run/bench: also kernels the analyzer rejects\n"
    "  --cxx COMPILER     host compiler for the schedule file (default: $CAKE_CXX, else cake's own)\n"
    "\n"
    "exit codes: 0 ok, 1 the candidate failed (evolve: a shape got no measured result), 2 usage error, 3 environment error, 4 no estimate, 77 no GPU\n"
    "docs/cli.md documents the schedule file's CAKE_EXPORT form and the JSON schema.\n";

int emit(const cake_cli::options& opt, const cake_cli::outcome& o, double ms) {
  if (opt.json) {
    std::string j = "{\"schema\":\"cake.cli/1\",\"cake\":" + cake_cli::json_string(CAKE_VERSION_STRING) + ",\"command\":" + cake_cli::json_string(opt.command) +
                    ",\"file\":" + (opt.file.empty() ? std::string("null") : cake_cli::json_string(opt.file)) + ",\"ok\":" + (o.code == 0 ? "true" : "false") +
                    ",\"exit_code\":" + std::to_string(o.code) + ",\"error\":" + o.error_json + o.json_fields + ",\"ms\":" + cake_cli::json_number(ms) + "}\n";
    std::fwrite(j.data(), 1, j.size(), stdout);
  } else {
    std::fwrite(o.text.data(), 1, o.text.size(), o.code == cake_cli::exit_usage || o.code == cake_cli::exit_environment ? stderr : stdout);
  }
  return o.code;
}

}  // namespace

int main(int argc, char** argv) {
  cake_cli::stopwatch clock;
  cake_cli::options opt;
  cake_cli::evolve_options eopt;
  cake_cli::corpus_gate_options gopt;
  // The GPU child: cake __gpu run|bench LIBRARY KERNEL RESULT RUNS HANG_TIMEOUT force|checked (tools/cli/gpu.hpp).
  if (argc >= 2 && !std::strcmp(argv[1], "__gpu")) {
    if (argc != 9) return cake_cli::exit_usage;
    cake_cli::gpu_options g;
    g.bench = !std::strcmp(argv[2], "bench");
    g.runs = std::atoi(argv[6]);
    g.hang_timeout_s = std::atof(argv[7]);
    g.force = !std::strcmp(argv[8], "force");
    return cake_cli::gpu_child(argv[3], argv[4], argv[5], g);
  }
  cake_cli::outcome o;
  auto usage_error = [&](const std::string& message) {
    cake_cli::fail_usage(o, "cli.usage", message);
    if (!opt.json) o.text += "\n" + std::string(usage_text);
    return emit(opt, o, clock.ms());
  };
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--json")) opt.json = true;
  if (argc < 2) return usage_error("no command given");
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(usage_text, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("cake %s\n", CAKE_VERSION_STRING);
    return 0;
  }
  opt.command = cmd;
  if (cmd != "check" && cmd != "lower" && cmd != "estimate" && cmd != "run" && cmd != "bench" && cmd != "evolve" && cmd != "failures" && cmd != "corpus-gate")
    return usage_error("unknown command '" + cmd + "'");
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)what;
      return argv[++i];
    };
    const char* v = nullptr;
    if (a == "--json") continue;
    if (a == "--force") {
      opt.force = true;
      continue;
    }
    if (a == "--resume") {
      if (cmd != "evolve") return usage_error("--resume applies to cake evolve");
      eopt.resume = true;
      continue;
    }
    if (a == "--update-baseline") {
      if (cmd != "corpus-gate") return usage_error("--update-baseline applies to cake corpus-gate");
      gopt.update = true;
      continue;
    }
    if (a == "--without-rule" && cmd == "evolve") {
      if (!(v = value(a.c_str()))) return usage_error(a + " needs a value");
      eopt.without_rules.push_back(v);
      continue;
    }
    if (a == "--baseline" || a == "--without-rule" || a == "--accepted" || a == "--corpus-bin") {
      if (cmd != "corpus-gate") return usage_error(a + (a == "--without-rule" ? " applies to cake corpus-gate and cake evolve" : " applies to cake corpus-gate"));
      if (!(v = value(a.c_str()))) return usage_error(a + " needs a value");
      if (a == "--baseline") gopt.baseline = v;
      else if (a == "--accepted") gopt.accepted = v;
      else if (a == "--corpus-bin") gopt.corpus_bin = v;
      else gopt.without_rules.push_back(v);
      continue;
    }
    if (a == "--failures" || (a == "--family" && cmd == "failures")) {
      if (cmd != "evolve" && cmd != "failures") return usage_error(a + " applies to cake evolve and cake failures");
      if (!(v = value(a.c_str()))) return usage_error(a + " needs a value");
      (a == "--family" ? eopt.family : eopt.failures_dir) = v;
      continue;
    }
    if (a == "--minimize") {
      if (cmd != "evolve") return usage_error("--minimize applies to cake evolve");
      if (!(v = value(a.c_str()))) return usage_error(a + " needs a value");
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (!end || *end || n < 0 || n > 1000) return usage_error("--minimize takes a whole number from 0 to 1000, not '" + std::string(v) + "'");
      eopt.minimize_tries = static_cast<int>(n);
      continue;
    }
    if (a == "--family" || a == "--budget-gpu-s" || a == "--seed" || a == "--log" || a == "--max-candidates" || a == "--agent" || a == "--agent-rounds") {
      if (cmd != "evolve") return usage_error(a + " applies to cake evolve");
      if (!(v = value(a.c_str()))) return usage_error(a + " needs a value");
      if (a == "--family") eopt.family = v;
      else if (a == "--log") eopt.log = v;
      else if (a == "--agent") eopt.agent = v;
      else {
        char* end = nullptr;
        const double d = std::strtod(v, &end);
        const bool whole = end && !*end && std::isfinite(d) && d >= 0 && d == std::floor(d) && d <= 1e15;
        if (a == "--budget-gpu-s") {
          if (!end || *end || !(d >= 0) || !std::isfinite(d)) return usage_error("--budget-gpu-s takes a number of seconds >= 0, not '" + std::string(v) + "'");
          eopt.budget_gpu_s = d;
        } else if (a == "--seed") {
          if (!whole) return usage_error("--seed takes a whole number >= 0, not '" + std::string(v) + "'");
          eopt.seed = static_cast<unsigned long long>(d);
        } else if (a == "--agent-rounds") {
          if (!whole || d < 1 || d > 1000) return usage_error("--agent-rounds takes a whole number from 1 to 1000, not '" + std::string(v) + "'");
          eopt.agent_rounds = static_cast<int>(d);
        } else {
          if (!whole || d < 1 || d > 1e6) return usage_error("--max-candidates takes a whole number from 1 to 1000000, not '" + std::string(v) + "'");
          eopt.max_candidates = static_cast<int>(d);
        }
      }
      continue;
    }
    if (a == "--kernel" || a == "--target" || a == "--out" || a == "--shape" || a == "--runs" || a == "--timeout" || a == "--hang-timeout" || a == "--cxx" ||
        a == "--sanitize") {
      if (!(v = value(a.c_str()))) return usage_error(a + " needs a value");
      if (a == "--kernel") opt.kernel = v;
      else if (a == "--target") opt.target = v;
      else if (a == "--out") opt.out_dir = v;
      else if (a == "--shape") opt.shapes.push_back(v);
      else if (a == "--cxx") opt.cxx = v;
      else if (a == "--sanitize") {
        opt.sanitizer = v;
        if (opt.sanitizer != "memcheck" && opt.sanitizer != "racecheck" && opt.sanitizer != "synccheck" && opt.sanitizer != "initcheck")
          return usage_error("--sanitize takes memcheck, racecheck, synccheck or initcheck, not '" + opt.sanitizer + "'");
      } else {
        char* end = nullptr;
        const double d = std::strtod(v, &end);
        if (!end || *end || !(d > 0) || !std::isfinite(d))  // NaN and infinity too: a limit that never fires is none
          return usage_error(a + " takes a positive number, not '" + std::string(v) + "'");
        if (a == "--runs" && (d != static_cast<double>(static_cast<int>(d > 1e9 ? 1e9 : d)) || d > 1e6))
          return usage_error("--runs takes a whole number of runs up to 1000000, not '" + std::string(v) + "'");
        if (a == "--runs") opt.runs = static_cast<int>(d);
        else if (a == "--timeout") opt.timeout_s = d, opt.timeout_given = true;
        else opt.hang_timeout_s = d;
      }
      continue;
    }
    if (a.rfind("--", 0) == 0) return usage_error("unknown option '" + a + "'");
    if (!opt.file.empty()) return usage_error("one schedule file per call ('" + opt.file + "' and '" + a + "' given)");
    // The path is #included by generated source: a quote, a backslash or a control character would end or
    // bend that line (there is no escape inside an #include "..." name).
    for (const char ch : a)
      if (ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
        return usage_error("the schedule path may not contain '\"', '\\' or control characters (it is #included by generated source)");
    opt.file = a;
  }
  if (cmd == "corpus-gate" && !opt.file.empty()) return usage_error("cake corpus-gate takes no FILE ('" + opt.file + "' given)");
  if (opt.file.empty() && cmd != "corpus-gate") return usage_error(cmd == "failures" ? "cake failures needs an evidence LOG" : "cake " + cmd + " needs a schedule FILE");
  if (!opt.target.empty() && cmd != "lower") return usage_error("--target applies to cake lower");
  if (!opt.shapes.empty() && cmd != "estimate" && cmd != "evolve")
    return usage_error("--shape applies to cake estimate and cake evolve (run and bench take the shapes the file declares)");
  try {
    if (cmd == "check") o = cake_cli::cmd_check(opt);
    else if (cmd == "lower") o = cake_cli::cmd_lower(opt);
    else if (cmd == "estimate") o = cake_cli::cmd_estimate(opt);
    else if (cmd == "evolve") o = cake_cli::cmd_evolve(opt, eopt);
    else if (cmd == "failures") o = cake_cli::cmd_failures(opt, eopt.family, eopt.failures_dir);
    else if (cmd == "corpus-gate") o = cake_cli::cmd_corpus_gate(opt, gopt);
    else o = cake_cli::cmd_gpu(opt);
  } catch (const std::exception& e) {
    o = {};
    cake_cli::fail_usage(o, "cli.internal", std::string("internal error: ") + e.what(), cake_cli::exit_environment);
  }
  return emit(opt, o, clock.ms());
}
