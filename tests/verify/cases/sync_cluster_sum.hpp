// The cluster sum: every CTA of the cluster must reach it equally often.
#pragma once
#include "corpus.hpp"

namespace verify_corpus {
// Partial tiles of a cluster of 2 CTAs (the split axis first: clusters group CTAs along it) summed in
// distributed shared memory; CTA 0 stores the sum. `form` selects the variant a case needs.
// (`max`: the same schedule with cluster_max, which takes the same protocol and rules.)
enum class cluster_sum_form { ok, divergent, no_cluster };
constexpr program cluster_sum_kernel(cluster_sum_form form, bool max = false) {
  auto k = kernel("cluster_sum").target(sm_90a);
  if (form != cluster_sum_form::no_cluster) k.cluster(2);
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<f32>("X", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  auto work = k.parallel(split(2), tiles(M, 64));
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.fragment<f32>("acc", {64, 64});
    r.for_each(work, [&](auto s, auto m) {
      r.load(acc, X.tile(m, s));
      // (the call's own line is the op's location, so that the EXPECT lines below hold for both)
      auto reduce = [&](src_loc at = src_loc::current()) { return max ? r.cluster_max(acc, at) : r.cluster_sum(acc, at); };
      if (form == cluster_sum_form::divergent)
        r.loop(r.cluster_rank() + 1, [&](auto) {
          reduce();  // EXPECT: sync.cluster-sum-divergent
        });
      else
        reduce();  // EXPECT: instruction.multicast-without-cluster
      r.when(eq(r.cluster_rank(), 0), [&] {
        if (form == cluster_sum_form::divergent) reduce();  // EXPECT: sync.cluster-sum-divergent
        r.store(Y.tile(m, 0), acc);
      });
    });
  });
  return k.build();
}
}  // namespace verify_corpus

// sync.cluster-sum-divergent: a sum in a loop that runs rank + 1 times (CTA 1 sums once more than CTA 0
// and waits for a partner that never comes), and one under r.when(rank == 0) (CTA 1 never arrives, so
// CTA 0 waits forever). The protocol checker runs rank 0 only and sees neither. Fix: sum once in every
// CTA, then store under the condition.
namespace verify_corpus::sync_cluster_sum_divergent {
constexpr program bad() { return cluster_sum_kernel(cluster_sum_form::divergent); }
constexpr program good() { return cluster_sum_kernel(cluster_sum_form::ok); }
}  // namespace verify_corpus::sync_cluster_sum_divergent
CAKE_VERIFY_CASE(sync_cluster_sum_divergent, "sync.cluster-sum-divergent")

// instruction.multicast-without-cluster for a cluster_sum: a kernel of single CTAs has nothing to sum
// over (the builder refuses it; the analyzer re-checks it and reports it once). Fix: k.cluster(2).
namespace verify_corpus::instruction_cluster_sum_without_cluster {
constexpr program bad() { return cluster_sum_kernel(cluster_sum_form::no_cluster); }
constexpr program good() { return cluster_sum_kernel(cluster_sum_form::ok); }
}  // namespace verify_corpus::instruction_cluster_sum_without_cluster
CAKE_VERIFY_CASE(instruction_cluster_sum_without_cluster, "instruction.multicast-without-cluster")

// sync.cluster-sum-divergent for a cluster_max (the same protocol: every CTA must reach it equally often).
namespace verify_corpus::sync_cluster_max_divergent {
constexpr program bad() { return cluster_sum_kernel(cluster_sum_form::divergent, true); }
constexpr program good() { return cluster_sum_kernel(cluster_sum_form::ok, true); }
}  // namespace verify_corpus::sync_cluster_max_divergent
CAKE_VERIFY_CASE(sync_cluster_max_divergent, "sync.cluster-sum-divergent")
