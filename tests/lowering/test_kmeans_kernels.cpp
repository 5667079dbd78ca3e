// The k-means kernels of kernels/kmeans/ build, analyze clean, lower and assemble for sm_90a with no
// spills, for every metric, input type and the part counts (D / 64) the entry point uses.
#include "lower_check.hpp"

#include "kernels/kmeans/kmeans.hpp"

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
    // c_norm, a column vector in the accumulator's layout: one row pointer and the columns left, computed once
    // per tile; each pair then a constant offset and a 32-bit test
    if (v.metric != kmeans_metric::inner_product) {
      CHECK(has(b.source(), "const int lim = left < 128 ? (int)left : 128;"));
      CHECK(has(b.source(), "if (c < lim)"));
    }
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

TEST_CASE("k-means assignment, the forms assign_config_for picks: the turn passed after the wait, the overlapped halves (no spills, no wgmma serialization)") {
  using namespace cake;
  using kernels::kmeans_metric;
  for (const kmeans_metric m : {kmeans_metric::l2, kmeans_metric::cosine, kmeans_metric::inner_product})
    for (const int parts : {1, 2}) {
      INFO("metric " << to_string(m) << " parts " << parts);
      kernels::kmeans_assign_config aw;
      aw.metric = m, aw.parts = parts, aw.persistent = true, aw.x_stages = 2, aw.stages = 4, aw.pass_after_wait = true;
      const auto ba = lower_and_build(kernels::kmeans_assign_sm90<bf16>(aw));
      CHECK(has(ba.ptx(), "bar.arrive"));
      CHECK_MESSAGE(ba.art.log.find("serialized") == std::string::npos, ba.art.log);
      kernels::kmeans_assign_config ov;
      ov.metric = m, ov.parts = parts, ov.overlap = true, ov.stages = 4;
      REQUIRE(ov.invalid() == nullptr);
      // The overlapped form holds this tile's c_norm and the next one's (32 registers each) next to its two
      // accumulators: ptxas spills up to ~230 bytes there (cosine; l2 ~90, inner product none). It is still
      // the fastest form at K = 4,096, D = 128 on the H200 (docs/kmeans.md), so a small spill is accepted.
      const auto bo = lower_and_build(kernels::kmeans_assign_sm90<f16>(ov), {}, false, 256);
      // two 64-row accumulators (m64 wgmma each), no MMA turns, and every group retired in the trip that
      // issued it: ptxas would otherwise serialize the wgmmas (C7514)
      CHECK(has(bo.ptx(), "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"));
      CHECK_FALSE(has(bo.ptx(), "bar.arrive"));
      CHECK_MESSAGE(bo.art.log.find("serialized") == std::string::npos, bo.art.log);
      // the argmin's lanes are combined after the centroid loop, not per tile (deferred reduction)
      CHECK(has(bo.source(), "thread partials across the loop"));
    }
}

TEST_CASE("k-means assignment's MMA probe builds (the timing probe of cake_bench_kmeans --probe)") {
  using namespace cake;
  kernels::kmeans_assign_config c;
  c.mma_probe = true;
  const auto b = lower_and_build(kernels::kmeans_assign_sm90<bf16>(c));
  CHECK(has(b.ptx(), "min.f32"));
}

TEST_CASE("k-means assignment as assign_config_for picks it (c_norm in the centroid stages), alone and with the update's scatter fused (kmeans::step)") {
  using namespace cake;
  using kernels::kmeans_metric;
  struct variant {
    long long D, K;
    kmeans_metric metric;
  };
  // persistent (K = 1,024), overlapped (4,096), lazy (65,536), D = 64 persistent, D = 256 grid, D = 512 (64-row consumers)
  for (const variant v : {variant{128, 1024, kmeans_metric::l2}, variant{128, 4096, kmeans_metric::l2}, variant{128, 4096, kmeans_metric::cosine},
                          variant{128, 65536, kmeans_metric::l2}, variant{64, 16384, kmeans_metric::inner_product}, variant{256, 2000, kmeans_metric::cosine},
                          variant{512, 2048, kmeans_metric::l2}}) {
    kernels::kmeans_assign_config c = kmeans::assign_config_for(v.D, v.K, v.metric);
    INFO("D " << v.D << " K " << v.K << " metric " << std::string(to_string(v.metric)) << (c.overlap ? std::string(" overlap") : std::string())
              << (c.persistent ? std::string(" persistent") : std::string()) << (c.lazy_index ? std::string(" lazy") : std::string()));
    REQUIRE(c.invalid() == nullptr);
    CHECK(c.cn_in_stage == (v.metric != kmeans_metric::inner_product));
    const auto plain = lower_and_build(kernels::kmeans_assign_sm90<bf16>(c));  // no spills in any form
    CHECK_FALSE(has(plain.ptx(), "red.global.add"));
    if (c.cn_in_stage) {
      // c_norm arrives by TMA (a 2-D box of the [B, K] tensor, NaN past K), and no consumer loads it from global
      CHECK(has(plain.ptx(), "cp.async.bulk.tensor.2d"));
      CHECK_FALSE(has(plain.source(), "load_global cn"));
      CHECK(has(plain.source(), "fill_outside nan"));
    }
    c.scatter = true;
    const auto b = lower_and_build(kernels::kmeans_assign_sm90<bf16>(c));
    CHECK(has(b.ptx(), "red.global.add.v4.f32"));  // 4 adjacent columns of a point per reduction
    CHECK((has(b.ptx(), "atom.global.add.f32") || has(b.ptx(), "red.global.add.f32")));  // the count: one per point
    CHECK(has(b.ptx(), "bar.sync"));               // the idx stores seen by the whole warpgroup
    CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
  }
}
