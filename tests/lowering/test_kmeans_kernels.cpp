// The k-means kernels of kernels/kmeans/ build, analyze clean, lower and assemble for sm_90a with no
// spills, for every metric, input type and the part counts (D / 64) the entry point uses.
#include "lower_check.hpp"

#include "kernels/kmeans/assign.hpp"

using lower_check::count;
using lower_check::has;
using lower_check::lower_and_build;

TEST_CASE("k-means assignment: every metric, f16 and bf16, 1..8 parts of 64 columns") {
  using namespace cake;
  using kernels::kmeans_metric;
  struct variant {
    int parts, rows;
    kmeans_metric metric;
    bool f16;
  };
  for (const variant v : {variant{2, 128, kmeans_metric::l2, false}, variant{2, 128, kmeans_metric::l2, true}, variant{1, 128, kmeans_metric::inner_product, false},
                          variant{4, 128, kmeans_metric::cosine, true}, variant{8, 64, kmeans_metric::l2, false}}) {
    INFO("parts " << v.parts << " rows " << v.rows << " metric " << to_string(v.metric) << (v.f16 ? " f16" : " bf16"));
    kernels::kmeans_assign_config c;
    c.parts = v.parts, c.rows = v.rows, c.metric = v.metric;
    const program p = v.f16 ? kernels::kmeans_assign_sm90<f16>(c) : kernels::kmeans_assign_sm90<bf16>(c);
    const auto b = lower_and_build(p);
    const std::string ty = v.f16 ? "f16.f16" : "bf16.bf16";
    CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32." + ty));
    CHECK(has(b.ptx(), "bar.arrive"));  // the consumers pass the MMA turn
    CHECK(count(b.ptx(), "cp.async.bulk.tensor.3d") >= 2);  // X and C tiles of rank 3 (batch, rows, D)
  }
}

TEST_CASE("k-means assignment with the argmin's index found lazily: one min per score, a second pass guarded by a warp vote") {
  using namespace cake;
  using kernels::kmeans_metric;
  for (const kmeans_metric m : {kmeans_metric::l2, kmeans_metric::cosine, kmeans_metric::inner_product}) {
    INFO("metric " << to_string(m));
    kernels::kmeans_assign_config c;
    c.metric = m, c.lazy_index = true;
    const program p = kernels::kmeans_assign_sm90<bf16>(c);
    const auto b = lower_and_build(p);
    CHECK(has(b.ptx(), "vote.sync.any.pred"));  // pass 2 only where a row of the warp improved
    CHECK(has(b.ptx(), "min.f32"));             // pass 1: one min per score
    kernels::kmeans_assign_config plain = c;
    plain.lazy_index = false;
    const auto bp = lower_and_build(kernels::kmeans_assign_sm90<bf16>(plain));
    CHECK_FALSE(has(bp.ptx(), "vote.sync.any.pred"));
  }
}
