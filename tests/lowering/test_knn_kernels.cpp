// The k-nearest-neighbour kernels of kernels/knn/ (and the row top-k op they are made of) build, analyze
// clean, lower and assemble for sm_90a with no spills, for every configuration the entry point picks
// (cake::knn::search_config_for over k, D and the metrics) and both input types.
#include "lower_check.hpp"

#include "kernels/knn/knn.hpp"

using lower_check::count;
using lower_check::has;
using lower_check::lower_and_build;

TEST_CASE("knn search: the entry point's configurations for k 1, 10, 32, 100, 256 and D 64, 128, 512") {
  using namespace cake;
  struct variant {
    int k;
    long long D;
    kernels::knn_metric metric;
    bool f16;
  };
  for (const variant v : {variant{10, 128, kernels::knn_metric::l2, false}, variant{10, 128, kernels::knn_metric::inner_product, true},
                          variant{100, 128, kernels::knn_metric::l2, true}, variant{1, 64, kernels::knn_metric::inner_product, false},
                          variant{32, 64, kernels::knn_metric::l2, false}, variant{256, 128, kernels::knn_metric::l2, false},
                          variant{256, 512, kernels::knn_metric::inner_product, true}}) {
    const auto c = knn::search_config_for(4096, 1 << 20, v.D, v.k, v.metric);
    INFO("k " << v.k << " D " << v.D << " metric " << to_string(v.metric) << (v.f16 ? " f16" : " bf16") << ": rows " << c.rows << " wgs " << c.wgs
              << " stages " << c.stages << " splits " << c.splits);
    const program p = v.f16 ? kernels::knn_search_sm90<f16>(c) : kernels::knn_search_sm90<bf16>(c);
    const auto b = lower_and_build(p);
    const std::string ty = v.f16 ? "f16.f16" : "bf16.bf16";
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
