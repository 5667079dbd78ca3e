#pragma once
// The commands of the cake tool. Each fills an `outcome`: the exit code, the text for people and the
// "cake.cli/1" JSON document (docs/cli.md documents both and the exit codes).
#include <cerrno>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include <cake/cost.hpp>
#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>
#include <cake/target/targets.hpp>

#include "analyzer.hpp"
#include "gpu.hpp"
#include "library.hpp"
#include "toolchain.hpp"

namespace cake_cli {

// Exit codes (docs/cli.md).
enum exit_code : int {
  exit_ok = 0,           // everything asked for succeeded
  exit_failed = 1,       // the candidate failed: compile error, analyzer error, lowering/NVRTC error, wrong result, crash, hang
  exit_usage = 2,        // bad command line: unknown command or option, missing file, unknown target or kernel
  exit_environment = 3,  // the tool could not work: no host compiler, unwritable cache, a library it needs is missing
  exit_no_estimate = 4,  // estimate: some kernel got no estimate (no calibration for its target, or outside the model)
  exit_no_gpu = 77,      // run/bench: no usable GPU (the ctest convention for a skipped test)
};

struct options {
  std::string command, file, kernel, target, out_dir, cxx, sanitizer;
  bool json = false, force = false;
  std::vector<std::string> shapes;  // --shape M=..,N=..,K=..
  int runs = 50;
  double timeout_s = 180, hang_timeout_s = 2;
  bool timeout_given = false;  // --timeout was passed (evolve's default per GPU child is shorter)
};

struct outcome {
  int code = exit_ok;
  std::string text;
  std::string json_fields;  // command-specific members of the top-level JSON object
  std::string error_json = "null";
};

inline void fail_usage(outcome& o, const std::string& rule, const std::string& message, int code = exit_usage) {
  o.code = code;
  const auto d = make_diagnostic(rule, message);
  o.text += to_text(d);
  o.error_json = to_json(d);
}

// Compiles and loads the schedule file; fills the "compile" member. False when nothing more can be done.
struct compiled {
  toolchain tc;
  build_result build;
  schedule_library lib;
  std::vector<const cake::cli::exported_kernel*> kernels;  // after --kernel
  std::deque<cake::cli::exported_kernel> family_seeds;       // a family's seed program, as a kernel
};

inline bool compile_file(const options& opt, outcome& o, compiled& c) {
  std::error_code ec;
  if (!fs::exists(opt.file, ec)) {
    fail_usage(o, "cli.missing-file", "no such file: " + opt.file);
    return false;
  }
  if (fs::is_directory(opt.file, ec)) {
    fail_usage(o, "cli.missing-file", opt.file + " is a folder, not a schedule file");
    return false;
  }
  if (auto why = find_toolchain(c.tc, opt.cxx); !why.empty()) {
    fail_usage(o, "cli.environment", why, exit_environment);
    return false;
  }
  c.build = build_schedule(c.tc, opt.file);
  std::string diags;
  for (std::size_t i = 0; i < c.build.diagnostics.size(); ++i) diags += std::string(i ? "," : "") + to_json(c.build.diagnostics[i]);
  o.json_fields += ",\"compile\":{\"ok\":" + std::string(c.build.ok ? "true" : "false") + ",\"cached\":" + (c.build.cached ? "true" : "false") +
                   ",\"ms\":" + json_number(c.build.compile_ms) + ",\"precompiled_header_ms\":" + json_number(c.build.pch_ms) +
                   ",\"compiler\":" + json_string(c.tc.cxx_id) + ",\"diagnostics\":[" + diags + "]" +
                   (c.build.pch_note.empty() ? std::string() : ",\"note\":" + json_string(c.build.pch_note)) + "}";
  if (!c.build.pch_note.empty()) o.text += "cake: note: " + c.build.pch_note + "\n";
  if (!c.build.environment_error.empty()) {
    fail_usage(o, "cli.environment", c.build.environment_error, exit_environment);
    return false;
  }
  if (!c.build.ok) {
    for (const auto& d : c.build.diagnostics) o.text += to_text(d);
    o.text += "cake: " + display_path(opt.file) + " does not compile: " + std::to_string(c.build.diagnostics.size()) + " error(s)\n";
    o.code = exit_failed;
    return false;
  }
  c.lib = load_schedule(c.build.library.string());
  if (!c.lib.error.empty()) {
    fail_usage(o, "cli.library", c.lib.error, exit_environment);
    return false;
  }
  for (const auto& k : c.lib.kernels())
    if (opt.kernel.empty() || k.name == opt.kernel) c.kernels.push_back(&k);
  // A family's seed is a kernel too (check, lower, estimate, run and bench it by the family's name).
  for (const auto& f : c.lib.reg->families) {
    c.family_seeds.push_back({f.name, f.seed_schedule, f.options, f.file, f.line});
    if (opt.kernel.empty() || f.name == opt.kernel) c.kernels.push_back(&c.family_seeds.back());
  }
  if (c.lib.kernels().empty() && c.family_seeds.empty()) {
    const auto d = make_diagnostic("cli.no-kernels", display_path(opt.file) + " exports no kernel",
                                   "register one with CAKE_EXPORT(name, program_expression, options...) (docs/cli.md)");
    o.text += to_text(d);
    o.error_json = to_json(d);
    o.code = exit_failed;
    return false;
  }
  if (c.kernels.empty()) {
    std::string names;
    for (const auto& k : c.lib.kernels()) names += (names.empty() ? "" : ", ") + k.name;
    for (const auto& k : c.family_seeds) names += (names.empty() ? "" : ", ") + k.name + " (family)";
    fail_usage(o, "cli.unknown-kernel", "no kernel named '" + opt.kernel + "' in " + display_path(opt.file) + " (it exports: " + names + ")");
    return false;
  }
  return true;
}

inline std::string kernel_head(const cake::cli::exported_kernel& k) {
  return "\"name\":" + json_string(k.name) + ",\"kernel\":" + json_string(k.schedule->kernel_name.view()) + ",\"target\":" +
         json_string(cake::to_string(k.schedule->target)) + ",\"exported_at\":" + json_location(k.file, k.line, 0);
}

// ---- check ----------------------------------------------------------------------------------------------

inline outcome cmd_check(const options& opt) {
  outcome o;
  compiled c;
  stopwatch clock;
  if (!compile_file(opt, o, c)) return o;
  std::string ks;
  int errors = 0, warnings = 0;
  for (const auto* k : c.kernels) {
    const auto a = analyze_program(*k->schedule, c.lib.reg ? &c.lib.reg->rules : nullptr);
    errors += a.errors;
    warnings += a.warnings;
    std::string hooks;  // test-only rule hooks that fired (CAKE_EXPORT_TEST_RULE): errors the analysis object cannot hold
    for (const auto& h : a.hooks)
      hooks += std::string(hooks.empty() ? "" : ",") + "{\"rule\":" + json_string(h.rule) + ",\"message\":" + json_string(h.message) + ",\"help\":" +
               json_string(h.help) + ",\"location\":" + json_location(h.file, h.line, 0) + "}";
    ks += std::string(ks.empty() ? "" : ",") + "{" + kernel_head(*k) + ",\"analysis\":" + a.json + ",\"test_rule_hooks\":[" + hooks + "]}";
    if (c.kernels.size() > 1) o.text += "== " + k->name + " (exported at " + location_text(k->file, k->line, 0) + ")\n";
    o.text += a.text;
  }
  o.json_fields += ",\"kernels\":[" + ks + "]";
  char b[200];
  std::snprintf(b, sizeof b, "cake check: %zu kernel(s), %d error(s), %d warning(s); compile %.0f ms%s, total %.0f ms\n", c.kernels.size(), errors, warnings,
                c.build.compile_ms, c.build.cached ? " (cached)" : "", clock.ms());
  o.text += b;
  o.code = errors ? exit_failed : exit_ok;
  return o;
}

// ---- lower ----------------------------------------------------------------------------------------------

inline outcome cmd_lower(const options& opt) {
  outcome o;
  if (!opt.target.empty() && !cake::find_target(opt.target)) {
    std::string hint = opt.target == "sm_90" ? " (did you mean sm_90a? plain sm_90 has no wgmma or setmaxnreg)" : opt.target == "sm_100" ? " (did you mean sm_100a?)" : "";
    fail_usage(o, "cli.unknown-target", "unknown target '" + opt.target + "': Cake targets sm_80, sm_90a and sm_100a" + hint);
    return o;
  }
  compiled c;
  if (!compile_file(opt, o, c)) return o;
  const fs::path out = opt.out_dir.empty() ? fs::path("cake-lower") : fs::path(opt.out_dir);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) {
    fail_usage(o, "cli.environment", "cannot create " + out.string() + ": " + ec.message(), exit_environment);
    return o;
  }
  std::string ks;
  int lowered = 0;
  bool failed = false;
  // Every file is checked: one that cannot be written is an environment error naming it (not a listed file).
  auto put = [&](const std::string& path, std::string_view text) {
    errno = 0;
    if (write_file(path, text)) return true;
    fail_usage(o, "cli.environment", "cannot write " + display_path(path) + (errno ? std::string(": ") + std::strerror(errno) : std::string()), exit_environment);
    return false;
  };
  for (const auto* k : c.kernels) {
    const cake::program& p = *k->schedule;
    const std::string target(cake::to_string(p.target));
    if (!opt.target.empty() && opt.target != target) {
      o.text += k->name + ": skipped: written for " + target + ", not " + opt.target + " (Cake does not retarget a schedule)\n";
      ks += std::string(ks.empty() ? "" : ",") + "{" + kernel_head(*k) + ",\"lower\":{\"ok\":false,\"skipped\":" +
            json_string("written for " + target + ", not " + opt.target) + "}}";
      continue;
    }
    ++lowered;
    std::string lj = "{";
    stopwatch clock;
    const auto l = cake::lower::lower(p);
    if (!l.ok) {
      failed = true;
      o.text += l.error + "\n" + k->name + ": not lowered\n";
      ks += std::string(ks.empty() ? "" : ",") + "{" + kernel_head(*k) + ",\"lower\":{\"ok\":false,\"stage\":\"lower\",\"error\":" + json_string(l.error) + "}}";
      continue;
    }
    const fs::path base = out / k->name;
    if (!put(base.string() + ".cu", l.source)) return o;
    cake::jit::artifacts a;
    try {
      a = cake::jit::build(l.source, l.entry, target);
    } catch (const std::exception& e) {
      fail_usage(o, "cli.environment", std::string("NVRTC could not run: ") + e.what(), exit_environment);
      return o;
    }
    if (!a.ok) {
      failed = true;
      o.text += a.diagnostics() + k->name + ": generated CUDA does not compile for " + target + " (source: " + display_path(base.string() + ".cu") + ")\n";
      ks += std::string(ks.empty() ? "" : ",") + "{" + kernel_head(*k) + ",\"lower\":{\"ok\":false,\"stage\":\"nvrtc\",\"error\":" + json_string(a.diagnostics()) +
            ",\"files\":{\"cuda\":" + json_string(display_path(base.string() + ".cu")) + "}}}";
      continue;
    }
    if (!put(base.string() + ".ptx", a.ptx)) return o;
    if (!a.cubin.empty() && !put(base.string() + ".cubin", std::string_view(a.cubin.data(), a.cubin.size()))) return o;
    const auto& r = a.resources;
    std::string report = "kernel " + l.entry + " (" + target + ")\nregisters " + std::to_string(r.registers) + "\nspill stores " + std::to_string(r.spill_stores) +
                         " bytes\nspill loads " + std::to_string(r.spill_loads) + " bytes\nstatic smem " + std::to_string(r.smem_bytes) + " bytes\ndynamic smem " +
                         std::to_string(l.smem_bytes) + " bytes\nstack frame " + std::to_string(r.stack_frame) + " bytes\nbarriers " + std::to_string(r.barriers) +
                         "\nblock " + std::to_string(l.block_threads) + " threads, cluster " + std::to_string(l.cluster[0]) + "\n";
    for (const auto& w : r.warnings) report += "warning: " + w + "\n";
    report += "\n---- NVRTC / ptxas log ----\n" + a.log;
    if (!put(base.string() + ".ptxas.txt", report)) return o;
    char b[400];
    std::snprintf(b, sizeof b, "%s: %s for %s: %d registers, %d B spilled, %d B dynamic smem, %d threads, cluster %d; NVRTC %.0f ms (%s)\n", k->name.c_str(),
                  l.entry.c_str(), target.c_str(), r.registers, r.spill_stores + r.spill_loads, l.smem_bytes, l.block_threads, l.cluster[0], a.compile_ms,
                  std::string(cake::jit::to_string(a.origin)).c_str());
    o.text += b;
    o.text += "  " + display_path(base.string() + ".cu") + ", .ptx" + (a.cubin.empty() ? "" : ", .cubin") + ", .ptxas.txt\n";
    std::string warns;
    for (std::size_t i = 0; i < r.warnings.size(); ++i) warns += std::string(i ? "," : "") + json_string(r.warnings[i]);
    lj += "\"ok\":true,\"entry\":" + json_string(l.entry) + ",\"block_threads\":" + std::to_string(l.block_threads) + ",\"smem_bytes\":" + std::to_string(l.smem_bytes) +
          ",\"cluster\":[" + std::to_string(l.cluster[0]) + "," + std::to_string(l.cluster[1]) + "," + std::to_string(l.cluster[2]) + "],\"persistent\":" +
          (l.persistent ? "true" : "false") + ",\"files\":{\"cuda\":" + json_string(display_path(base.string() + ".cu")) + ",\"ptx\":" +
          json_string(display_path(base.string() + ".ptx")) + ",\"cubin\":" + (a.cubin.empty() ? std::string("null") : json_string(display_path(base.string() + ".cubin"))) +
          ",\"ptxas_report\":" + json_string(display_path(base.string() + ".ptxas.txt")) + "},\"resources\":{\"registers\":" + std::to_string(r.registers) +
          ",\"spill_stores\":" + std::to_string(r.spill_stores) + ",\"spill_loads\":" + std::to_string(r.spill_loads) + ",\"static_smem\":" + std::to_string(r.smem_bytes) +
          ",\"stack_frame\":" + std::to_string(r.stack_frame) + ",\"barriers\":" + std::to_string(r.barriers) + ",\"warnings\":[" + warns + "]},\"nvrtc_ms\":" +
          json_number(a.compile_ms) + ",\"cache\":" + json_string(cake::jit::to_string(a.origin)) + ",\"ms\":" + json_number(clock.ms()) + "}";
    ks += std::string(ks.empty() ? "" : ",") + "{" + kernel_head(*k) + ",\"lower\":" + lj + "}";
  }
  o.json_fields += ",\"out_dir\":" + json_string(display_path(fs::absolute(out).string())) + ",\"kernels\":[" + ks + "]";
  if (lowered == 0) {
    std::string names;
    for (const auto* k : c.kernels) names += (names.empty() ? "" : ", ") + k->name + " (" + std::string(cake::to_string(k->schedule->target)) + ")";
    fail_usage(o, "cli.unknown-target", "no kernel of " + display_path(opt.file) + " is written for " + opt.target + " (kernels: " + names + ")");
    return o;
  }
  o.code = failed ? exit_failed : exit_ok;
  return o;
}

// ---- estimate -------------------------------------------------------------------------------------------

// A dim's value in --shape: at most 2^40 (no tensor dim is longer; larger values would overflow products).
inline constexpr long long max_shape_value = 1LL << 40;

inline bool parse_shape(const std::string& s, std::vector<cake::cost::dim_value>& dims, std::string& why) {
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    const std::string part = s.substr(start, end - start);
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0) {
      why = "--shape takes NAME=VALUE pairs separated by commas (e.g. M=4096,N=4096,K=4096), not '" + s + "'";
      return false;
    }
    char* rest = nullptr;
    errno = 0;
    const long long v = std::strtoll(part.c_str() + eq + 1, &rest, 10);
    if (!rest || *rest || v < 1 || errno == ERANGE || v > max_shape_value) {
      why = "--shape: '" + part + "' needs a positive integer up to 2^40";
      return false;
    }
    const std::string name = part.substr(0, eq);
    for (const auto& d : dims)
      if (d.name == name) {
        why = "--shape names " + name + " twice ('" + s + "')";
        return false;
      }
    dims.push_back({name, v});
    start = end + 1;
  }
  return true;
}

inline outcome cmd_estimate(const options& opt) {
  outcome o;
  std::vector<std::vector<cake::cost::dim_value>> given;
  for (const auto& s : opt.shapes) {
    std::vector<cake::cost::dim_value> d;
    std::string why;
    if (!parse_shape(s, d, why)) {
      fail_usage(o, "cli.usage", why);
      return o;
    }
    given.push_back(d);
  }
  compiled c;
  if (!compile_file(opt, o, c)) return o;
  std::string ks;
  bool missing = false;
  for (const auto* k : c.kernels) {
    auto shapes = given;
    if (shapes.empty())
      for (const auto& s : k->options.shapes) {
        std::vector<cake::cost::dim_value> d;
        for (const auto& x : s) d.push_back({x.name, x.value});
        shapes.push_back(d);
      }
    std::string es;
    if (shapes.empty()) {
      missing = true;
      o.text += k->name + ": no shapes: declare shape(M, N, K) in its CAKE_EXPORT or pass --shape M=..,N=..,K=..\n";
    }
    for (const auto& s : shapes) {
      const auto e = cake::cost::estimate(*k->schedule, s);
      missing = missing || !e.ok;
      o.text += k->name + ": " + cake::cost::to_text(e);
      es += std::string(es.empty() ? "" : ",") + cake::cost::to_json(e);
    }
    ks += std::string(ks.empty() ? "" : ",") + "{" + kernel_head(*k) + ",\"estimates\":[" + es + "]}";
  }
  o.json_fields += ",\"kernels\":[" + ks + "]";
  o.code = missing ? exit_no_estimate : exit_ok;
  return o;
}

// ---- run / bench ----------------------------------------------------------------------------------------

inline outcome cmd_gpu(const options& opt) {
  outcome o;
  compiled c;
  if (!compile_file(opt, o, c)) return o;
  gpu_options g;
  g.bench = opt.command == "bench";
  g.runs = opt.runs;
  g.timeout_s = opt.timeout_s;
  g.hang_timeout_s = opt.hang_timeout_s;
  g.sanitizer = opt.sanitizer;
  g.force = opt.force;
  std::string ks;
  int passed = 0, skipped = 0, failed = 0;
  for (const auto* k : c.kernels) {
    // Candidates the analyzer rejects cost no GPU time (unless --force: to watch one fail on the GPU).
    const auto a = analyze_program(*k->schedule);
    if (a.errors && !opt.force) {
      const auto* first = a.report->first_error();
      std::string why = "the analyzer reports " + std::to_string(a.errors) + " error(s)";
      if (first) why += ", first [" + std::string(first->about().id) + "] " + std::string(first->message.view());
      why += " (cake check shows them; --force runs it anyway)";
      o.text += k->name + ": rejected -- " + why + "\n";
      ks += std::string(ks.empty() ? "" : ",") + "{" + kernel_head(*k) + ",\"" + (g.bench ? "bench" : "run") + "\":{\"status\":\"rejected\",\"cause\":" +
            json_string(why) + ",\"analysis\":" + a.json + "}}";
      ++failed;
      continue;
    }
    const auto v = run_on_gpu(c.build.library.string(), *k, g);
    o.text += v.text;
    ks += std::string(ks.empty() ? "" : ",") + "{" + kernel_head(*k) + ",\"" + (g.bench ? "bench" : "run") + "\":" + v.json + "}";
    if (v.status == "passed") ++passed;
    else if (v.status == "skipped") ++skipped;
    else ++failed;
  }
  o.json_fields += ",\"kernels\":[" + ks + "]";
  o.text += "cake " + opt.command + ": " + std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " + std::to_string(skipped) + " skipped\n";
  o.code = failed ? exit_failed : skipped ? exit_no_gpu : exit_ok;
  return o;
}

}  // namespace cake_cli
