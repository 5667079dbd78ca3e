// The k-nearest-neighbour kernels of kernels/knn/ (and the row top-k op they are made of) build, analyze
// clean, lower and assemble with no spills: the search (sm_90a) for the configurations the entry point
// picks (cake::knn::search_config_for over k, D and the metrics; both input types), the merge for every
// target.
#include "lower_check.hpp"

#include "kernels/knn/knn.hpp"

using lower_check::count;
using lower_check::has;
using lower_check::lower_and_build;

TEST_CASE("knn search: the entry point's configurations for k 1, 10, 32, 100, 256, D 64, 128, 512, both metrics") {
  using namespace cake;
  int n = 0;
  for (const int k : {1, 10, 32, 100, 256})
    for (const long long D : {64LL, 128LL, 512LL})
      for (const auto m : {kernels::knn_metric::l2, kernels::knn_metric::inner_product}) {
        const bool half = (n++ % 3) == 1;  // both input types, for both metrics
        const auto c = knn::search_config_for(4096, 1 << 20, D, k, m);
        INFO("k " << k << " D " << D << " metric " << to_string(m) << (half ? " f16" : " bf16") << ": rows " << c.rows << " wgs " << c.wgs << " bn " << c.bn
                  << " stages " << c.stages << " splits " << c.splits);
        const program p = half ? kernels::knn_search_sm90<f16>(c) : kernels::knn_search_sm90<bf16>(c);
        const auto b = lower_and_build(p);
        const std::string ty = half ? "f16.f16" : "bf16.bf16";
        CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32." + ty));
        CHECK(has(b.ptx(), "atom.shared.add"));  // candidates are appended with a shared atomic
        CHECK(has(b.ptx(), "topk_merge"));       // merged by the device helper
        CHECK(count(b.ptx(), "cp.async.bulk.tensor.2d") >= 2);
      }
}

TEST_CASE("knn merge: both metrics, k 1..256, and the generic top-k on sm_80 and sm_100a") {
  using namespace cake;
  for (const int k : {1, 10, 100, 256})
    for (const auto m : {kernels::knn_metric::l2, kernels::knn_metric::inner_product}) {
      INFO("k " << k << " metric " << to_string(m));
      kernels::knn_merge_config c;
      c.k = k, c.metric = m;
      const auto b = lower_and_build(kernels::knn_merge_program(c));
      CHECK(has(b.ptx(), "topk_merge"));
    }
  // The top-k ops are generic code (shared memory, warp votes, shared atomics): lowered on every target.
  for (const target_id t : {target_id::sm_80, target_id::sm_100a}) {
    INFO(to_string(t));
    kernels::knn_merge_config c;
    c.k = 100, c.target = t;
    const auto b = lower_and_build(kernels::knn_merge_program(c));
    CHECK(has(b.ptx(), "topk_merge"));
  }
}
