// The IVF-Flat kernels of kernels/knn/ivf_scan.hpp build, analyze clean, lower and assemble with no
// spills: the list scan (sm_90a) for the configurations cake::knn::ivf_scan_config_for picks (k, D, nprobe,
// both metrics, both input types) and the row gather (16-bit rows up to D 512, i32 ids; sm_80 too).
#include "lower_check.hpp"

#include "kernels/knn/ivf.hpp"

using lower_check::count;
using lower_check::has;
using lower_check::lower_and_build;

TEST_CASE("ivf scan: the entry point's configurations for k 1, 10, 100, 256, D 64, 128, 512, both metrics, f16 and bf16") {
  using namespace cake;
  int n = 0;
  for (const int k : {1, 10, 100, 256})
    for (const long long D : {64LL, 128LL, 512LL})
      for (const auto m : {kernels::knn_metric::l2, kernels::knn_metric::inner_product}) {
        const bool half = (n++ % 3) == 1;
        const auto c = knn::ivf_scan_config_for(10000, D, k, 16, m, 4096);  // per query (10000 x 4096 marks would not fit)
        INFO("k " << k << " D " << D << " metric " << to_string(m) << (half ? " f16" : " bf16") << ": bn " << c.bn << " stages " << c.stages << " splits "
                  << c.splits);
        const program p = half ? kernels::ivf_scan_sm90<f16>(c) : kernels::ivf_scan_sm90<bf16>(c);
        const auto b = lower_and_build(p);
        const std::string ty = half ? "f16.f16" : "bf16.bf16";
        CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32." + ty));
        CHECK(has(b.ptx(), "topk_merge"));
        CHECK(count(b.ptx(), "cp.async.bulk.tensor.2d") >= 2);
        // the lists' bounds and the probes are index values: i32 loads through the read-only path
        CHECK(has(b.source(), "read_index v"));
        CHECK(has(b.source(), "elements_at(0)"));
      }
}

TEST_CASE("ivf scan by list: k 1, 10, 256, D 64, 128, 512, both metrics, and the marks kernel") {
  using namespace cake;
  int n = 0;
  for (const int k : {1, 10, 256})
    for (const long long D : {64LL, 128LL, 512LL})
      for (const auto m : {kernels::knn_metric::l2, kernels::knn_metric::inner_product}) {
        const bool half = (n++ % 3) == 1;
        auto c = knn::ivf_scan_config_for(1000, D, k, 16, m, 1024);
        INFO("k " << k << " D " << D << " metric " << to_string(m) << (half ? " f16" : " bf16") << ": stages " << c.stages << " splits " << c.splits);
        CHECK(c.by_list);  // 1000 x 1024 marks fit the f32 rows
        const auto b = lower_and_build(half ? kernels::ivf_scan_sm90<f16>(c) : kernels::ivf_scan_sm90<bf16>(c));
        CHECK(has(b.ptx(), "topk_merge"));
        CHECK(has(b.source(), "read_index v"));
        CHECK(has(b.source(), "member"));
      }
  CHECK_FALSE(knn::ivf_scan_config_for(10000, 128, 10, 16, kernels::knn_metric::l2, 4096).by_list);  // 10000 x 4096 > 2^24
  const auto marks = lower_and_build(kernels::ivf_marks_program());
  CHECK(count(marks.ptx(), "red.global.add.f32") + count(marks.ptx(), "atom.global.add.f32") >= 2);
  (void)lower_and_build(kernels::ivf_marks_program(target_id::sm_80));
  // the by-list walk's query order: an atomic slot per query (its value used), the order scattered
  const auto order = lower_and_build(kernels::ivf_query_order_program());
  CHECK(has(order.ptx(), "atom.global.add.u32"));
  (void)lower_and_build(kernels::ivf_query_order_program(target_id::sm_80));
}

TEST_CASE("ivf scan: more probe splits than query tiles, and nprobe 1") {
  using namespace cake;
  for (const int np : {1, 4, 64, 256}) {
    const auto c = knn::ivf_scan_config_for(100, 128, 10, np, kernels::knn_metric::l2, 1 << 20);
    INFO("nprobe " << np << " splits " << c.splits);
    CHECK_FALSE(c.by_list);
    CHECK(c.splits >= 1);
    CHECK(c.splits <= np);
    (void)lower_and_build(kernels::ivf_scan_sm90<bf16>(c));
  }
}

TEST_CASE("ivf gather: f16 and bf16 rows of D 8 .. 512, i32 ids, on sm_90a and sm_80") {
  using namespace cake;
  for (const long long D : {8LL, 128LL, 512LL}) {
    INFO("D " << D);
    CHECK(kernels::ivf_gather_width<bf16>(D) >= D);
    const auto g = lower_and_build(kernels::ivf_gather_program<bf16>(kernels::ivf_gather_width<bf16>(D)));
    CHECK(has(g.source(), "__ldg"));  // the row index is read (read_index)
    (void)lower_and_build(kernels::ivf_gather_program<f16>(kernels::ivf_gather_width<f16>(D)));
  }
  CHECK(kernels::ivf_gather_width<i32>(1) == 128);
  CHECK(kernels::ivf_gather_width<bf16>(1) == 256);
  const auto ids = lower_and_build(kernels::ivf_gather_program<i32>(kernels::ivf_gather_width<i32>(1), -1.0f));
  CHECK(has(ids.source(), "when"));  // negative (empty) indices are tested before the load
  (void)lower_and_build(kernels::ivf_gather_program<bf16>(256, 0.0f, target_id::sm_80));
  // f32 rows (the by-list search's distances put back in the queries' order), bit for bit: no conversion
  CHECK(kernels::ivf_gather_width<f32>(10) == 128);
  const auto f = lower_and_build(kernels::ivf_gather_program<f32>(kernels::ivf_gather_width<f32>(100)));
  CHECK_FALSE(has(f.ptx(), "cvt.rn.f32.s32"));
}
