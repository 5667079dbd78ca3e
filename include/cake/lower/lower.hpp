#pragma once
// lower(program) -> CUDA C++ source plus everything the runtime needs to launch it (block size,
// dynamic smem bytes, cluster shape, parameter block layout, TMA descriptors). A Program the analyzer
// finds errors in is not lowered: the diagnostics are the answer. A schedule that cannot be lowered (an
// op not lowered yet for its target, a missing specialized dim) gets an error naming the op and its
// schedule line, never partial code.
#include <string>

#include "../analysis/analyze.hpp"
#include "../analysis/output.hpp"
#include "emit_kernel.hpp"

namespace cake::lower {

struct lowered_kernel {
  bool ok = false;
  std::string error;        // GCC-style, with the op path, when !ok
  std::string source;       // CUDA C++ with inline PTX, self-contained (device helpers included)
  std::string entry;        // the extern "C" kernel symbol
  target_id target = target_id::sm_90a;
  int block_threads = 0;
  int smem_bytes = 0;       // dynamic shared memory
  int cluster[3] = {1, 1, 1};
  // Launched with a cluster attribute even when the cluster is one CTA: the roles run barrier.cluster from
  // different branches, which compute-sanitizer's synccheck reports as divergent in a launch without a
  // cluster (the implicit one-CTA cluster) and accepts in an explicit one (bench/h200/sanitizer_probe.cu).
  bool cluster_launch = false;
  bool persistent = false;
  args_layout args{};
  plan::kernel_plan plan{};
};

inline lowered_kernel lower(const program& p, const emit_options& opt = {}) {
  lowered_kernel k;
  k.target = p.target;
  if (!p.errors.empty()) {
    const auto& e = p.errors[0];
    k.error = std::string(e.loc.file) + ":" + std::to_string(e.loc.line) + ":" + std::to_string(e.loc.column) + ": error: [" + std::string(e.rule) + "] " +
              std::string(e.message) + " (value " + std::to_string(e.value) + ")";
    return k;
  }
  if (opt.analyze) {
    const auto report = analyze(p);
    if (report.errors > 0) {
      k.error = "the analyzer rejects kernel '" + std::string(p.kernel_name.view()) + "' (" + std::to_string(report.errors) +
                " error(s)); it is not lowered:\n" + analysis::to_text(report);
      return k;
    }
  }
  // The fragment plan's layout conflicts are errors (representation.layout-conflict); refused here too so
  // that lowering without the analyzer (emit_options::analyze = false) never emits code for them.
  if (const auto F = plan::plan_fragments(p); F.conflict_op != -1) {
    const int op_id = F.conflict_op >= 0 ? F.conflict_op : -1;
    const src_loc l = op_id >= 0 ? p.ops[op_id].loc : p.loc;
    k.error = std::string(l.file) + ":" + std::to_string(l.line) + ": error: [representation.layout-conflict] " + F.conflict_why;
    return k;
  }
  kernel_emitter em(p, opt);
  std::string src = em.run();
  k.plan = em.plan();
  k.args = em.args();
  if (em.failed()) {
    k.error = em.error();
    return k;
  }
  k.ok = true;
  k.source = std::move(src);
  k.entry = std::string(p.kernel_name.view());
  for (char& c : k.entry)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = '_';
  k.block_threads = k.plan.warps.block_threads;
  k.smem_bytes = k.plan.smem.total;
  for (int i = 0; i < 3; ++i) k.cluster[i] = p.launch.cluster[i];
  for (const auto& o : p.ops)
    if (o.kind == op_kind::cluster_arrive || o.kind == op_kind::cluster_wait) k.cluster_launch = true;
  k.persistent = p.launch.persistent;
  return k;
}

}  // namespace cake::lower
