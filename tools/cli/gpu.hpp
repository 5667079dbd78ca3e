#pragma once
// `cake run` and `cake bench`: the GPU work for one kernel runs in a child process (the tool re-executed
// as `cake __gpu ...`), so that a kernel that crashes, traps, hangs or corrupts memory ends the child,
// not the tool. The child builds the kernel with `hang_timeout_ns` (every mbarrier wait traps after it,
// printing the op), checks it against its reference on fresh random inputs for every declared shape
// (output poisoned with NaN, padding columns after each row checked untouched), and for bench times it
// against its peer (L2 flushed before every run, CUDA events, median, alternating rounds). It writes its
// verdict as JSON to a file; the parent adds what only it can see: a signal, a time-out, the output.
//
// Supported references: "gemm" (D[M,N] = A[M,K] * B[N,K]^T, bf16 or e4m3 in, bf16 out). Others are
// reported as unsupported, never silently passed.
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include <cake/harness/gemm_check.hpp>
#include <cake/harness/timing.hpp>
#include <cake/runtime/kernel.hpp>

#include "diagnostic.hpp"
#include "family.hpp"
#include "library.hpp"
#include "mock_gpu.hpp"
#include "peers.hpp"
#include "process.hpp"

namespace cake_cli {

struct gpu_options {
  bool bench = false;
  int runs = 50;                     // timed runs per side (bench)
  double timeout_s = 180;            // per kernel, the whole child
  double hang_timeout_s = 2;         // device-side: every mbarrier wait traps after this (per launch)
  std::string sanitizer;             // "", "memcheck", "racecheck", "synccheck": run the check under compute-sanitizer
  bool force = false;                // build kernels the analyzer rejects (lowering refuses them otherwise)
};

namespace gpu_detail {

struct gemm_binding {
  bool ok = false;
  std::string why;
  int dim_m = -1, dim_n = -1, dim_k = -1;
  bool fp8 = false;
};

// Does the Program have the shape the gemm reference checks? A[M,K], B[N,K] inputs, D[M,N] output.
inline gemm_binding bind_gemm(const cake::program& p) {
  gemm_binding b;
  auto fail = [&](std::string why) {
    b.why = "reference gemm: " + why;
    return b;
  };
  if (p.tensors.size() != 3) return fail("it checks kernels with three tensors A[M,K], B[N,K] -> D[M,N]; this one has " + std::to_string(p.tensors.size()));
  const auto& A = p.tensors[0];
  const auto& B = p.tensors[1];
  const auto& D = p.tensors[2];
  if (A.output || B.output || !D.output) return fail("tensors 1 and 2 must be inputs and tensor 3 the output");
  if (A.rank != 2 || B.rank != 2 || D.rank != 2) return fail("A, B and D must be 2-d");
  if (A.dims[1] != B.dims[1] || D.dims[0] != A.dims[0] || D.dims[1] != B.dims[0])
    return fail("the dims must read A[M,K], B[N,K], D[M,N] (shared dim names)");
  if (A.dt != B.dt || (A.dt != cake::dtype::bf16 && A.dt != cake::dtype::e4m3)) return fail("A and B must both be bf16 or both e4m3");
  if (D.dt != cake::dtype::bf16) return fail("D must be bf16");
  b.fp8 = A.dt == cake::dtype::e4m3;
  const std::size_t scalars = b.fp8 ? 1 : 0;
  if (p.scalars.size() != scalars)
    return fail(std::string("a ") + (b.fp8 ? "e4m3" : "bf16") + " GEMM takes " + std::to_string(scalars) + " scalar(s) (the scale for e4m3); this kernel takes " +
                std::to_string(p.scalars.size()));
  b.dim_m = A.dims[0];
  b.dim_k = A.dims[1];
  b.dim_n = B.dims[0];
  b.ok = true;
  return b;
}

inline std::vector<cake::cli::problem_shape> default_shapes(bool bench) {
  if (bench) return {{{"M", 4096}, {"N", 4096}, {"K", 4096}}};
  return {{{"M", 128}, {"N", 256}, {"K", 64}}, {{"M", 300}, {"N", 200}, {"K", 1000}}, {{"M", 1000}, {"N", 1000}, {"K", 1000}}, {{"M", 256}, {"N", 512}, {"K", 4096}}};
}

inline long long shape_value(const cake::cli::problem_shape& s, const cake::program& p, int dim) {
  for (const auto& d : s)
    if (p.find_dim(d.name) == dim) return d.value;
  return -1;
}

inline std::string shape_json(const cake::cli::problem_shape& s) {
  std::string o = "{";
  for (std::size_t i = 0; i < s.size(); ++i) o += std::string(i ? "," : "") + json_string(s[i].name) + ":" + std::to_string(s[i].value);
  return o + "}";
}

}  // namespace gpu_detail

// ---- the child ----------------------------------------------------------------------------------------

// Runs in `cake __gpu`: writes the verdict to `result_path`. Returns the process exit code.
inline int gpu_child(const std::string& library, const std::string& kernel_name, const std::string& result_path, const gpu_options& opt) {
  std::string status = "failed", cause, device, build, shapes_json, text, extra;
  auto finish = [&](int code) {
    write_file(result_path + ".txt", text);
    std::string o = "{\"status\":" + json_string(status) + ",\"cause\":" + (cause.empty() ? std::string("null") : json_string(cause)) +
                    ",\"device\":" + (device.empty() ? std::string("null") : json_string(device)) + ",\"build\":" + (build.empty() ? std::string("null") : build) +
                    ",\"shapes\":[" + shapes_json + "]" + extra + "}";
    write_file(result_path, o);
    return code;
  };
  const auto lib = load_schedule(library);
  if (!lib.error.empty()) {
    cause = lib.error;
    return finish(0);
  }
  const auto resolved = resolve_kernel(lib, kernel_name);
  if (!resolved.error.empty()) {
    cause = resolved.error;
    return finish(0);
  }
  const cake::cli::exported_kernel* k = &resolved.kernel;
  const cake::program& p = *k->schedule;
  const auto& o = k->options;
  // The test hook of `cake evolve` (docs/evolve.md): scripted verdicts instead of the GPU.
  if (const char* script = std::getenv("CAKE_GPU_MOCK"); script && *script) {
    const auto m = mock_verdict(script, resolved.display, opt.bench, o.shapes, o.peer);
    status = m.status;
    cause = m.cause;
    device = "mock (CAKE_GPU_MOCK)";
    shapes_json = m.shapes_json;
    extra = ",\"mock\":{\"gpu_s\":" + json_number(m.gpu_s) + ",\"line\":" + json_string(m.rule) + "}";
    text = m.text;
    if (m.crash) std::abort();
    return finish(0);
  }
  if (o.reference != "gemm") {
    status = "unsupported";
    cause = o.reference.empty() ? "the kernel declares no reference: add reference(\"gemm\") to its CAKE_EXPORT (the only reference cake run knows today)"
                                : "unknown reference '" + o.reference + "': cake run knows \"gemm\" only";
    return finish(0);
  }
  const auto bind = gpu_detail::bind_gemm(p);
  if (!bind.ok) {
    status = "unsupported";
    cause = bind.why;
    return finish(0);
  }
  if (opt.bench && !o.peer.empty() && o.peer != (bind.fp8 ? "cublaslt" : "cublas")) {
    status = "unsupported";
    cause = "peer '" + o.peer + "' does not compute this GEMM: use " + (bind.fp8 ? "cublaslt" : "cublas");
    return finish(0);
  }
  if (!cake::jit::driver::available()) {
    status = "skipped";
    cause = "no GPU: " + cake::jit::driver::unavailable_reason();
    return finish(77);
  }
  try {
    const auto& dev = cake::jit::driver::get().device(0);
    device = dev.describe() + ", " + std::to_string(dev.sm_count) + " SMs";
    cake::lower::emit_options checked;
    checked.hang_timeout_ns = static_cast<unsigned long long>(opt.hang_timeout_s * 1e9);
    checked.analyze = !opt.force;
    cake::lower::emit_options timed;
    timed.analyze = !opt.force;
    std::unique_ptr<cake::runtime_kernel> check_kernel, timed_kernel;
    try {
      check_kernel = std::make_unique<cake::runtime_kernel>(cake::runtime_kernel::build(p, checked));
      if (opt.bench) timed_kernel = std::make_unique<cake::runtime_kernel>(cake::runtime_kernel::build(p, timed));
    } catch (const std::exception& e) {
      cause = std::string("the kernel cannot be built or loaded: ") + e.what();
      return finish(0);
    }
    const auto& art = (timed_kernel ? timed_kernel : check_kernel)->artifacts();
    build = "{\"registers\":" + std::to_string(art.resources.registers) + ",\"spill_bytes\":" + std::to_string(art.resources.spill_stores + art.resources.spill_loads) +
            ",\"smem_bytes\":" + std::to_string((timed_kernel ? timed_kernel : check_kernel)->lowered().smem_bytes) + ",\"hang_timeout_s\":" + json_number(opt.hang_timeout_s) + "}";
    const auto shapes = o.shapes.empty() ? gpu_detail::default_shapes(opt.bench) : o.shapes;
    double scale = bind.fp8 ? 0.5 : 1.0;
    for (const auto& [n, v] : o.scalars)
      if (!p.scalars.empty() && p.scalars[0].nm == n) scale = v;
    const double tolerance = o.tolerance > 0 ? o.tolerance : bind.fp8 ? 3e-2 : 1e-2;
    cake::harness::gemm_reference reference;
    auto rng = cake::harness::random_source::fresh();
    bool all_ok = true;
    for (const auto& s : shapes) {
      const long long M = gpu_detail::shape_value(s, p, bind.dim_m), N = gpu_detail::shape_value(s, p, bind.dim_n), K = gpu_detail::shape_value(s, p, bind.dim_k);
      std::string row = "{\"shape\":" + gpu_detail::shape_json(s);
      std::string line = "  " + std::to_string(M) + " x " + std::to_string(N) + " x " + std::to_string(K) + ": ";
      if (M < 1 || N < 1 || K < 1) {
        text += "  a shape without M, N or K: skipped\n";
        shapes_json += (shapes_json.empty() ? "" : ",") + row + ",\"ok\":false,\"cause\":" +
                       json_string("the shape must give M, N and K (as the kernel names them: " + std::string(p.dims[bind.dim_m].nm.view()) + ", " +
                                   std::string(p.dims[bind.dim_n].nm.view()) + ", " + std::string(p.dims[bind.dim_k].nm.view()) + ")") + "}";
        all_ok = false;
        continue;
      }
      cake::harness::gemm_problem pr{M, N, K};
      pr.fp8 = bind.fp8;
      pr.scale = static_cast<float>(scale);
      pr.ldd = (N + 7) / 8 * 8 + 8;  // padding after every row: a write past N shows up as lost poison
      cake::harness::gemm_operands ops(pr);
      const auto& q = ops.p;
      const cake::tensor_arg t[] = {cake::tensor_view(ops.a.address(), {M, K}, {q.lda, 1}), cake::tensor_view(ops.b.address(), {N, K}, {q.ldb, 1}),
                                    cake::tensor_view(ops.d.address(), {M, N}, {q.ldd, 1})};
      const double scalars[] = {scale};
      const std::span<const double> sc(scalars, bind.fp8 ? 1 : 0);
      const auto check = cake::harness::check_gemm(ops, rng, reference, [&](cake::harness::gemm_operands&) {
        check_kernel->launch(t, sc, nullptr);
        cake::jit::driver::get().check(cake::jit::driver::get().cuCtxSynchronize(), "cuCtxSynchronize", "running the kernel");
      });
      const bool ok = check.ok(tolerance);
      all_ok = all_ok && ok;
      row += ",\"ok\":" + std::string(ok ? "true" : "false") + ",\"rel_err\":" + json_number(check.cmp.rel_err) + ",\"max_abs_err\":" + json_number(check.cmp.max_abs_err) +
             ",\"nonfinite\":" + std::to_string(check.cmp.nonfinite) + ",\"padding_written\":" + std::to_string(check.padding_written) +
             ",\"tolerance\":" + json_number(tolerance) + ",\"seed\":" + std::to_string(rng.seed());
      if (!ok) {
        std::string why;
        if (check.padding_written) why = std::to_string(check.padding_written) + " elements of D's row padding were written (a store past N)";
        else if (check.cmp.nonfinite) why = std::to_string(check.cmp.nonfinite) + " outputs are NaN or Inf (never written, or overflow)";
        else why = "relative error " + json_number(check.cmp.rel_err) + " exceeds the tolerance " + json_number(tolerance);
        row += ",\"cause\":" + json_string(why);
        line += "WRONG -- " + why;
      } else {
        line += "ok, rel_err " + json_number(check.cmp.rel_err);
      }
      if (opt.bench && ok) {
        gemm_peer peer(bind.fp8 ? "cublaslt" : "cublas");
        peer.prepare(ops.a.get(), ops.b.get(), ops.d.get(), M, N, K, q.lda, q.ldb, q.ldd, static_cast<float>(scale));
        constexpr int rounds = 4;
        cake::harness::timing_options topt;
        topt.runs = std::max(1, (opt.runs + rounds - 1) / rounds);
        topt.warmup = 3;
        std::vector<double> cs, ps;
        for (int r = 0; r < rounds; ++r) {
          const auto tc = cake::harness::time_gpu([&](CUstream st) { timed_kernel->launch(t, sc, st); }, topt);
          const auto tp = cake::harness::time_gpu([&](CUstream st) { peer.run(st); }, topt);
          cs.insert(cs.end(), tc.samples_ms.begin(), tc.samples_ms.end());
          ps.insert(ps.end(), tp.samples_ms.begin(), tp.samples_ms.end());
        }
        const double cms = cake::harness::summarize(cs).median_ms, pms = cake::harness::summarize(ps).median_ms, flop = 2.0 * M * N * K;
        row += ",\"cake_ms\":" + json_number(cms) + ",\"peer\":" + json_string(peer.name()) + ",\"peer_ms\":" + json_number(pms) + ",\"ratio\":" + json_number(pms / cms) +
               ",\"cake_tflops\":" + json_number(flop / cms / 1e9) + ",\"peer_tflops\":" + json_number(flop / pms / 1e9) + ",\"runs\":" + std::to_string(cs.size());
        char b[160];
        std::snprintf(b, sizeof b, "; cake %.4f ms (%.1f TFLOP/s), %s %.4f ms, ratio %.3f", cms, flop / cms / 1e9, peer.name().c_str(), pms, pms / cms);
        line += b;
      }
      text += line + "\n";
      shapes_json += (shapes_json.empty() ? "" : ",") + row + "}";
    }
    status = all_ok ? "passed" : "failed";
    if (!all_ok) cause = "wrong results on some shapes (see shapes[].cause)";
    return finish(0);
  } catch (const std::exception& e) {
    status = "failed";
    cause = e.what();
    return finish(0);
  }
}

// ---- the parent -----------------------------------------------------------------------------------------

struct gpu_verdict {
  std::string status;  // passed, failed, crashed, timed_out, unsupported, skipped
  std::string json;    // the kernel's "run" object
  std::string text;    // for people
  double wall_ms = 0;  // the child's wall time (what a GPU budget counts)
};

inline gpu_verdict run_on_gpu(const std::string& library, const cake::cli::exported_kernel& k, const gpu_options& opt) {
  gpu_verdict v;
  const std::string result = library + "." + k.name + "." + std::to_string(getpid()) + ".json";
  std::error_code ec;
  fs::remove(result, ec);
  std::vector<std::string> cmd;
  if (!opt.sanitizer.empty()) cmd = {"compute-sanitizer", "--tool", opt.sanitizer, "--error-exitcode", "86", "--print-limit", "20"};
  cmd.push_back(fs::read_symlink("/proc/self/exe", ec).string());
  cmd.insert(cmd.end(), {"__gpu", opt.bench ? "bench" : "run", library, k.name, result, std::to_string(opt.runs), json_number(opt.hang_timeout_s),
                         opt.force ? "force" : "checked"});
  const auto pr = run_process(cmd, opt.timeout_s);
  v.wall_ms = pr.wall_ms;
  const auto body = read_file(result);
  const std::string shape_text = read_file(result + ".txt").value_or("");
  fs::remove(result, ec);
  fs::remove(result + ".txt", ec);
  std::string status, cause, inner;
  if (body && !body->empty() && body->front() == '{') {
    inner = body->substr(1, body->size() - 2);  // the child's fields, merged into ours
    std::smatch m;
    static const std::regex status_re("\"status\":\"([a-z_]+)\"");
    if (std::regex_search(*body, m, status_re)) status = m[1];
  }
  // What the parent saw overrides the child's word where the child could not finish.
  if (!pr.started) {
    status = "failed";
    cause = pr.start_error;
  } else if (pr.timed_out) {
    status = "timed_out";
    cause = "killed after " + json_number(opt.timeout_s) + " s (the kernels trap after " + json_number(opt.hang_timeout_s) +
            " s in any mbarrier wait; this limit caught the rest: a loop that never ends, or the host side)";
  } else if (pr.signal) {
    status = "crashed";
    cause = "the GPU process was ended by " + signal_name(pr.signal);
  } else if (pr.exit_code == 86) {
    status = "failed";
    cause = "compute-sanitizer (" + opt.sanitizer + ") reported errors (see output)";
  } else if (status.empty()) {
    status = "crashed";
    cause = "the GPU process exited with code " + std::to_string(pr.exit_code) + " without a verdict";
  }
  if (cause.empty() && body) {  // the child's own explanation
    std::smatch m;
    static const std::regex cause_re("\"cause\":\"((?:[^\"\\\\]|\\\\.)*)\"");
    if (std::regex_search(*body, m, cause_re)) cause = std::regex_replace(m[1].str(), std::regex("\\\\\""), "\"");
  }
  // A trap from a hang check names the op: map it to the schedule line.
  std::string hang;
  static const std::regex hang_re(R"(cake: op#(\d+) waited past the hang timeout)");
  std::smatch hm;
  if (std::regex_search(pr.output, hm, hang_re)) {
    const int op = std::stoi(hm[1]);
    if (op >= 0 && op < static_cast<int>(k.schedule->ops.size())) {
      const auto& o = k.schedule->ops[op];
      hang = "{\"op\":" + std::to_string(op) + ",\"kind\":" + json_string(cake::to_string(o.kind)) + ",\"location\":" + json_location(o.loc.file, o.loc.line, o.loc.column) + "}";
      if (status != "timed_out") {
        status = "failed";
        cause = "the kernel hung: op#" + std::to_string(op) + " " + std::string(cake::to_string(o.kind)) + " (" + location_text(o.loc.file, o.loc.line, o.loc.column) +
                ") waited past " + json_number(opt.hang_timeout_s) + " s and trapped";
      }
    }
  }
  std::string output = pr.output;
  if (output.size() > 4000) output = "..." + output.substr(output.size() - 4000);
  v.status = status;
  v.json = "{";
  if (!inner.empty()) {
    // Replace the child's status/cause with the final ones: drop them from its fields.
    const auto first = std::regex_constants::format_first_only;
    inner = std::regex_replace(inner, std::regex("\"status\":\"[a-z_]+\","), "", first);
    if (!cause.empty()) inner = std::regex_replace(inner, std::regex("\"cause\":(null|\"(?:[^\"\\\\]|\\\\.)*\"),"), "", first);
    v.json += "\"status\":" + json_string(status) + (cause.empty() ? std::string() : ",\"cause\":" + json_string(cause)) + "," + inner;
  } else {
    v.json += "\"status\":" + json_string(status) + ",\"cause\":" + json_string(cause);
  }
  v.json += ",\"hang\":" + (hang.empty() ? std::string("null") : hang) + ",\"process\":{\"exit_code\":" + std::to_string(pr.exit_code) + ",\"signal\":" +
            std::to_string(pr.signal) + ",\"timed_out\":" + (pr.timed_out ? "true" : "false") + ",\"wall_ms\":" + json_number(pr.wall_ms) +
            (opt.sanitizer.empty() ? std::string() : ",\"sanitizer\":" + json_string(opt.sanitizer)) + "},\"output\":" + json_string(output) + "}";
  v.text = k.name + ": " + status + (cause.empty() ? "" : " -- " + cause) + "\n" + shape_text;
  if (status != "passed" && !pr.output.empty()) v.text += "  output: " + trim(output.size() > 600 ? "..." + output.substr(output.size() - 600) : output) + "\n";
  return v;
}

}  // namespace cake_cli
