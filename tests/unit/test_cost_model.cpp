// Unit tests for cake/cost/model.hpp against the committed sm_90a/H200 calibration: the grid and wave
// quantization, the terms of the K block, the bottleneck, the hints, and what targets without a
// calibration get. The figures against measurements live in bench/results/h200/cost_sweep.json.
#include <doctest/doctest.h>

#include <cake/cost.hpp>

#include "../../kernels/attention/prefill.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "../../kernels/gemm/sm90_splitk.hpp"

using namespace cake;

namespace {
cost::cost_estimate gemm(int bn, int stages, int cluster, long long m, long long n, long long k) {
  kernels::gemm_sm90_config c;
  c.bn = bn;
  c.stages = stages;
  c.cluster_m = cluster;
  return cost::estimate(kernels::gemm_bf16_sm90(c), {{"M", m}, {"N", n}, {"K", k}});
}
bool has_hint(const cost::cost_estimate& e, const std::string& change_prefix) {
  for (const auto& h : e.hints)
    if (h.change.rfind(change_prefix, 0) == 0) return true;
  return false;
}
}  // namespace

TEST_CASE("cost model: the committed calibration is the H200's and is complete") {
  const auto* cal = cost::find_calibration(target_id::sm_90a);
  REQUIRE(cal != nullptr);
  CHECK(cal->sm_count == 132);
  CHECK_FALSE(cal->gpu.empty());
  CHECK_FALSE(cal->date.empty());
  CHECK_FALSE(cal->raw_data.empty());
  CHECK(cal->mma.size() >= 10);
  for (const auto& r : cal->mma) CHECK(r.kblock_us > 0);
  CHECK(cal->pipeline_round_trip_us > 0);
  CHECK(cal->stage_turnover_us > 0);
  CHECK(cal->stage_turnover_microbenchmark_us > 0);  // the measured value stays next to the sweep fit's
  CHECK(cal->l2_read_gbps > 0);
  CHECK(cal->hbm_read_gbps > 0);
  CHECK(cal->launch_us > 0);
  CHECK(cost::find_calibration(target_id::sm_80) == nullptr);
  CHECK(cost::find_calibration(target_id::sm_100a) == nullptr);
}

TEST_CASE("cost model: no calibration, no estimate, and the reason says so") {
  const auto e = cost::estimate(kernels::gemm_bf16_sm80(), {{"M", 512}, {"N", 512}, {"K", 512}});
  CHECK_FALSE(e.ok);
  CHECK(e.reason.find("no cost-model calibration for sm_80") != std::string::npos);
  CHECK(cost::to_json(e).find("\"ok\":false") != std::string::npos);
}

TEST_CASE("cost model: missing or unknown dims are errors naming the dim") {
  const auto p = kernels::gemm_bf16_sm90();
  const auto missing = cost::estimate(p, {{"M", 4096}, {"N", 4096}});
  CHECK_FALSE(missing.ok);
  CHECK(missing.reason.find("dim K has no value") != std::string::npos);
  const auto unknown = cost::estimate(p, {{"M", 64}, {"N", 64}, {"K", 64}, {"Q", 1}});
  CHECK_FALSE(unknown.ok);
  CHECK(unknown.reason.find("'Q'") != std::string::npos);
}

TEST_CASE("cost model: 4096^3 on the default GEMM: grid, K block, bottleneck") {
  const auto e = gemm(256, 4, 2, 4096, 4096, 4096);
  REQUIRE(e.ok);
  CHECK(e.tiles == 512);
  CHECK(e.ctas == 132);
  CHECK(e.tiles_per_cta == 4);  // 256 cluster-tiles over 66 clusters
  CHECK(e.k_iterations == 64);
  CHECK(e.wave_efficiency == doctest::Approx(512.0 / (4 * 132)));
  CHECK(e.kblock_us == doctest::Approx(e.mma_us));
  CHECK(e.bottleneck == "tensor cores");
  // launch + 4 tiles x (64 K blocks + epilogue) + the part of the HBM stream that does not overlap it,
  // and plausible against the ~0.19 ms measured.
  const auto* cal = cost::find_calibration(target_id::sm_90a);
  REQUIRE(e.hbm_us < e.mainloop_us);
  CHECK(e.time_us == doctest::Approx(e.launch_us + 4 * (64 * e.kblock_us + e.epilogue_tile_us) + cal->hbm_overlap_loss * e.hbm_us));
  CHECK(e.time_us > 140);
  CHECK(e.time_us < 240);
  CHECK(e.tflops == doctest::Approx(2.0 * 4096 * 4096 * 4096 / (e.time_us * 1e-6) / 1e12));
  CHECK(e.hbm_read_bytes >= e.compulsory_read_bytes);
  CHECK(e.compulsory_read_bytes == doctest::Approx(2.0 * 4096 * 4096 * 2));
}

TEST_CASE("cost model: a shallow pipeline is latency-bound and gets a deeper-pipeline hint") {
  const auto s2 = gemm(256, 2, 2, 4096, 4096, 4096);
  const auto s3 = gemm(256, 3, 2, 4096, 4096, 4096);
  const auto s4 = gemm(256, 4, 2, 4096, 4096, 4096);
  REQUIRE((s2.ok && s3.ok && s4.ok));
  CHECK(s2.bottleneck == "TMA latency (pipeline depth)");
  CHECK(s2.time_us > s3.time_us);
  CHECK(s3.time_us >= s4.time_us);
  REQUIRE(has_hint(s2, "stages 2 -> "));
  CHECK(s2.hints.front().text.find("round trip") != std::string::npos);
  CHECK(s2.hints.front().time_us < s2.time_us);
  CHECK_FALSE(has_hint(s4, "stages"));
}

// estimate_scope::time_only (what the ranking tools ask for: thousands of candidates) gives full's time and terms and
// works out no hint and no walk balance.
TEST_CASE("cost model: time_only gives the full estimate's time and terms without its hints") {
  kernels::gemm_sm90_config shallow;
  shallow.bn = 256, shallow.stages = 2, shallow.cluster_m = 2;
  kernels::gemm_splitk_config sk;
  sk.splits = 4;
  const std::vector<cost::dim_value> big = {{"M", 4096}, {"N", 2112}, {"K", 7168}}, small = {{"M", 64}, {"N", 8192}, {"K", 8192}};
  const std::pair<program, std::vector<cost::dim_value>> cases[] = {
      {kernels::gemm_bf16_sm90(shallow), {{"M", 4096}, {"N", 4096}, {"K", 4096}}}, {kernels::gemm_bf16_sm90({}), big}, {kernels::gemm_splitk_sm90(sk), small}};
  int with_hints = 0;
  for (const auto& [p, dims] : cases) {
    const auto full = cost::estimate(p, dims);
    const auto fast = cost::estimate(p, dims, nullptr, cost::estimate_scope::time_only);
    REQUIRE((full.ok && fast.ok));
    CHECK(fast.time_us == full.time_us);
    CHECK(fast.mainloop_us == full.mainloop_us);
    CHECK(fast.epilogue_us == full.epilogue_us);
    CHECK(fast.hbm_us == full.hbm_us);
    CHECK(fast.ctas == full.ctas);
    CHECK(fast.bottleneck == full.bottleneck);
    CHECK(fast.hints.empty());
    CHECK_FALSE(fast.walk_assessed);
    with_hints += full.hints.empty() ? 0 : 1;
  }
  CHECK(with_hints >= 2);  // (the shallow pipeline's stages hint, the wide tile's width hint: what time_only leaves out)
}

TEST_CASE("cost model: wave quantization on N = 2112 and the tile-width hint") {
  const auto wide = gemm(256, 4, 2, 4096, 2112, 7168);
  const auto narrow = gemm(176, 5, 2, 4096, 2112, 7168);
  REQUIRE((wide.ok && narrow.ok));
  CHECK(wide.tiles_per_cta == 3);  // 288 tiles, 144 cluster-tiles over 66 clusters
  CHECK(wide.wave_efficiency < 0.8);
  CHECK(narrow.wave_efficiency > 0.95);
  CHECK(narrow.time_us < wide.time_us * 0.8);
  REQUIRE(has_hint(wide, "BN 256 -> "));
  bool partial = false;
  for (const auto& h : wide.hints) partial = partial || h.text.find("removes a partial wave") != std::string::npos;
  CHECK(partial);
}

TEST_CASE("cost model: a width factor scales the MMA time at its tile width only") {
  // The sweep fit's per-width factors (calibration.mma_width): exact widths, 1 for any other.
  const auto* committed = cost::find_calibration(target_id::sm_90a);
  REQUIRE(committed != nullptr);
  for (const auto& w : committed->mma_width) CHECK((w.factor > 0.8 && w.factor < 1.25));
  cost::calibration cal = *committed;
  const cost::mma_width_factor slower[] = {{176, 1.25}};
  cal.mma_width = slower;
  const auto dims = std::vector<cost::dim_value>{{"M", 4096}, {"N", 4096}, {"K", 4096}};
  const auto at = [&](int bn, int stages, const cost::calibration& c) {
    kernels::gemm_sm90_config g;
    g.bn = bn;
    g.stages = stages;
    return cost::estimate(kernels::gemm_bf16_sm90(g), dims, &c);
  };
  cost::calibration none = *committed;
  none.mma_width = {};
  const auto base176 = at(176, 5, none), slow176 = at(176, 5, cal), base192 = at(192, 4, none), other192 = at(192, 4, cal);
  REQUIRE((base176.ok && slow176.ok && base192.ok && other192.ok));
  CHECK(slow176.mma_us - cal.kblock_overhead_us == doctest::Approx((base176.mma_us - cal.kblock_overhead_us) * 1.25));
  CHECK(slow176.time_us > base176.time_us);
  CHECK(other192.mma_us == doctest::Approx(base192.mma_us));  // 192 is not listed in `slower`
  CHECK(cost::mma_width_factor_at(cal, 176) == 1.25);
  CHECK(cost::mma_width_factor_at(cal, 160) == 1.0);
}

TEST_CASE("cost model: a partly idle GPU scales the MMA time by the share of SMs the grid leaves idle") {
  // (calibration.mma_idle_gain: a partly idle GPU clocks higher; every SM busy: no change)
  const auto* committed = cost::find_calibration(target_id::sm_90a);
  REQUIRE(committed != nullptr);
  CHECK((committed->mma_idle_gain > 0 && committed->mma_idle_gain < 1));
  cost::calibration none = *committed;
  none.mma_idle_gain = 0;
  const auto at = [&](long long m, const cost::calibration& c) {
    kernels::gemm_sm90_config g;
    g.bn = 128;
    g.stages = 6;
    g.cluster_m = 1;
    return cost::estimate(kernels::gemm_bf16_sm90(g), std::vector<cost::dim_value>{{"M", m}, {"N", 4096}, {"K", 4096}}, &c);
  };
  // 128 x 4096: 32 tiles of 128 x 128, one per CTA: 100 of the 132 SMs idle
  const auto few = at(128, *committed), few_none = at(128, none);
  REQUIRE((few.ok && few_none.ok));
  const double idle = 1.0 - 32.0 / committed->sm_count;
  CHECK(few.mma_us == doctest::Approx(few_none.mma_us * (1.0 - committed->mma_idle_gain * idle)));
  CHECK(few.time_us < few_none.time_us);
  // 4096 x 4096: 1024 tiles, every SM busy
  const auto full = at(4096, *committed), full_none = at(4096, none);
  REQUIRE((full.ok && full_none.ok));
  CHECK(full.mma_us == doctest::Approx(full_none.mma_us));
  CHECK(full.time_us == doctest::Approx(full_none.time_us));
}

TEST_CASE("cost model: 64-row split-K over two row tiles reads B again once the operands outgrow L2") {
  // (calibration.splitk_reread: extra HBM reads of splitk_reread x (1 - 1 / row tiles) x the B panels' bytes x the
  // share of the compulsory bytes past l2_effective_bytes; one row tile, or operands within L2: none)
  const auto* committed = cost::find_calibration(target_id::sm_90a);
  REQUIRE(committed != nullptr);
  CHECK((committed->splitk_reread > 0 && committed->splitk_reread < 2));
  cost::calibration none = *committed;
  none.splitk_reread = 0;
  kernels::gemm_splitk_config g;
  g.bm = 64, g.bn = 128, g.splits = 2, g.stages = 6;
  const auto at = [&](long long m, long long n, long long k, const cost::calibration& c) {
    return cost::estimate(kernels::gemm_splitk_sm90(g), std::vector<cost::dim_value>{{"M", m}, {"N", n}, {"K", k}}, &c);
  };
  // 128 x 8192 x 28672 bf16: B is 470 MB, two row tiles of 64
  const auto two = at(128, 8192, 28672, *committed), two_none = at(128, 8192, 28672, none);
  REQUIRE((two.ok && two_none.ok));
  const double b_bytes = 8192.0 * 28672 * 2, past_l2 = 1.0 - committed->l2_effective_bytes / two_none.compulsory_read_bytes;
  CHECK(two_none.hbm_read_bytes == doctest::Approx(two_none.compulsory_read_bytes));
  CHECK(two.hbm_read_bytes - two_none.hbm_read_bytes == doctest::Approx(committed->splitk_reread * 0.5 * b_bytes * past_l2).epsilon(0.01));
  CHECK(two.time_us > two_none.time_us);
  // one row tile (M = 64): every B panel has one reader
  const auto one = at(64, 8192, 28672, *committed), one_none = at(64, 8192, 28672, none);
  REQUIRE((one.ok && one_none.ok));
  CHECK(one.hbm_read_bytes == doctest::Approx(one_none.hbm_read_bytes));
  // B within L2 (128 x 4096 x 4096: 34 MB): the second reader hits
  const auto small = at(128, 4096, 4096, *committed), small_none = at(128, 4096, 4096, none);
  REQUIRE((small.ok && small_none.ok));
  CHECK(small.hbm_read_bytes == doctest::Approx(small_none.hbm_read_bytes));
  CHECK(small.time_us == doctest::Approx(small_none.time_us));
}

TEST_CASE("cost model: a grid of few CTAs reads HBM at sm_hbm_gbps each, a full grid at the HBM rate") {
  // (calibration.sm_hbm_gbps: the reads take at least bytes / (CTAs x sm_hbm_gbps); the sweep's BN 256 tiles at
  // M <= 128 read 54-56 GB/s per CTA)
  const auto* committed = cost::find_calibration(target_id::sm_90a);
  REQUIRE(committed != nullptr);
  CHECK((committed->sm_hbm_gbps > 40 && committed->sm_hbm_gbps < 200));
  cost::calibration none = *committed;
  none.sm_hbm_gbps = 0;
  kernels::gemm_sm90_config g;
  g.bn = 256, g.stages = 4, g.cluster_m = 1;
  const auto at = [&](long long m, long long n, long long k, const cost::calibration& c) {
    return cost::estimate(kernels::gemm_bf16_sm90(g), std::vector<cost::dim_value>{{"M", m}, {"N", n}, {"K", k}}, &c);
  };
  // 32 x 4096 x 14336: 16 tiles of 128 x 256, 16 CTAs streaming 117 MB of B
  const auto few = at(32, 4096, 14336, *committed), few_none = at(32, 4096, 14336, none);
  REQUIRE((few.ok && few_none.ok));
  REQUIRE(few.ctas == 16);
  const double read_kb = few.hbm_read_bytes / 1e3, writes_us = few.hbm_write_bytes / (committed->hbm_write_gbps * 1e3);
  CHECK(few_none.hbm_us == doctest::Approx(read_kb / committed->hbm_read_gbps + writes_us));
  CHECK(few.hbm_us == doctest::Approx(read_kb / (16 * committed->sm_hbm_gbps) + writes_us));
  CHECK(few.time_us > few_none.time_us);
  // 4096 x 4096 x 4096: a full grid draws the HBM rate; the limit does not bind
  const auto full = at(4096, 4096, 4096, *committed), full_none = at(4096, 4096, 4096, none);
  REQUIRE((full.ok && full_none.ok));
  CHECK(full.ctas * committed->sm_hbm_gbps > committed->hbm_read_gbps);
  CHECK(full.time_us == doctest::Approx(full_none.time_us));
}

TEST_CASE("cost model: the long-run factor ramps in with the run's length at its tile width only") {
  // (calibration.mma_width_long over long_run_from_us .. long_run_to_us: 1 before, the table's value after,
  // linear between; widths not in the table: 1)
  const auto* committed = cost::find_calibration(target_id::sm_90a);
  REQUIRE(committed != nullptr);
  for (const auto& w : committed->mma_width_long) CHECK((w.factor > 0.9 && w.factor < 1.2));
  cost::calibration cal = *committed;
  const cost::mma_width_factor longer[] = {{128, 0.95}, {176, 1.10}};
  cal.mma_width_long = longer;
  cal.long_run_from_us = 500, cal.long_run_to_us = 2000;
  CHECK(cost::long_run_factor(cal, 176, 400) == 1.0);
  CHECK(cost::long_run_factor(cal, 176, 1250) == doctest::Approx(1.05));
  CHECK(cost::long_run_factor(cal, 176, 5000) == doctest::Approx(1.10));
  CHECK(cost::long_run_factor(cal, 256, 5000) == 1.0);
  cost::calibration none = *committed;
  none.mma_width_long = {};
  CHECK(cost::long_run_factor(none, 176, 5000) == 1.0);
  const auto at = [&](int bn, int stages, long long m, const cost::calibration& c) {
    kernels::gemm_sm90_config g;
    g.bn = bn;
    g.stages = stages;
    return cost::estimate(kernels::gemm_bf16_sm90(g), {{"M", m}, {"N", 8192}, {"K", 8192}}, &c);
  };
  auto noted = [](const cost::cost_estimate& e) {
    for (const auto& n : e.notes)
      if (n.find("long-run factor") != std::string::npos) return true;
    return false;
  };
  // 8192^3 at BN 176 runs about 1.5 ms: past the ramp's middle; 512 x 8192 x 8192 (about 0.1 ms) is short
  const auto long176 = at(176, 5, 8192, cal), long176_none = at(176, 5, 8192, none), short176 = at(176, 5, 512, cal), short176_none = at(176, 5, 512, none);
  const auto long256 = at(256, 4, 8192, cal), long256_none = at(256, 4, 8192, none);
  REQUIRE((long176.ok && long176_none.ok && short176.ok && short176_none.ok && long256.ok && long256_none.ok));
  INFO("BN 176 at 8192^3: " << long176_none.time_us << " us without the factor");
  CHECK(long176_none.time_us > 1000);
  CHECK(long176.time_us == doctest::Approx(long176_none.time_us * cost::long_run_factor(cal, 176, long176_none.time_us)));
  CHECK(long176.time_us > long176_none.time_us * 1.03);
  CHECK(noted(long176));
  CHECK_FALSE(noted(long176_none));
  CHECK(short176.time_us == doctest::Approx(short176_none.time_us));
  CHECK_FALSE(noted(short176));
  CHECK(long256.time_us == doctest::Approx(long256_none.time_us));  // 256 is not in `longer`
  CHECK_FALSE(noted(long256));
  // a factor below 1 (BN 128 here) lowers a long run's estimate, and says so too
  const auto long128 = at(128, 6, 8192, cal), long128_none = at(128, 6, 8192, none);
  REQUIRE((long128.ok && long128_none.ok));
  CHECK(long128.time_us < long128_none.time_us * 0.98);
  CHECK(noted(long128));
}

TEST_CASE("cost model: short K makes the epilogue count, hints are ordered by estimated time") {
  const auto e = gemm(128, 6, 2, 16384, 16384, 256);
  REQUIRE(e.ok);
  CHECK(e.epilogue_us > 0.05 * e.time_us);
  for (std::size_t i = 1; i < e.hints.size(); ++i)
    if (e.hints[i].time_us > 0) CHECK(e.hints[i - 1].time_us <= e.hints[i].time_us);
}

TEST_CASE("cost model: ping-pong hides all but the last epilogue and costs its MMA at one warpgroup's rate") {
  kernels::gemm_sm90_config c;
  c.bn = 128;
  c.stages = 5;
  const auto dims = std::vector<cost::dim_value>{{"M", 8192}, {"N", 8192}, {"K", 8192}};
  const auto halves = cost::estimate(kernels::gemm_bf16_sm90(c), dims);
  c.pingpong = true;
  c.in_flight = 1;
  const auto pp = cost::estimate(kernels::gemm_bf16_sm90(c), dims);
  REQUIRE((halves.ok && pp.ok));
  const auto* cal = cost::find_calibration(target_id::sm_90a);
  CHECK(cal->mma_alternating >= 1.0);
  // (the per-K-iteration overhead beside the MMA is the same for both)
  CHECK(pp.mma_us - cal->kblock_overhead_us == doctest::Approx((halves.mma_us - cal->kblock_overhead_us) * cal->mma_alternating));
  CHECK(pp.tiles_per_cta == halves.tiles_per_cta);
  CHECK(pp.epilogue_us == doctest::Approx(pp.epilogue_tile_us));  // one exposed epilogue
  CHECK(halves.epilogue_us == doctest::Approx(halves.tiles_per_cta * halves.epilogue_tile_us));
  CHECK(pp.mainloop_us == doctest::Approx(pp.tiles_per_cta * std::max(pp.k_iterations * pp.kblock_us, pp.epilogue_tile_us)));
}

TEST_CASE("cost model: at M = 1 HBM bounds, and the shorter K loop still counts") {
  // The weights stream once from HBM; every schedule is HBM-bound, and the one with the shorter K loop
  // measures faster (bench/results/h200/gemm_sweep.json): hbm_overlap_loss of the K loop is added.
  const auto e = gemm(256, 4, 1, 1, 57344, 8192);
  REQUIRE(e.ok);
  CHECK(e.bottleneck == "HBM bandwidth");
  const auto* cal = cost::find_calibration(target_id::sm_90a);
  CHECK(cal->hbm_overlap_loss > 0);
  CHECK(cal->hbm_overlap_loss < 1);
  // the CTA's last epilogue comes after the stream: it is added whole, the rest of the K loop at the loss
  CHECK(e.epilogue_tile_us > 0);
  CHECK(e.time_us == doctest::Approx(e.launch_us + e.epilogue_tile_us + e.hbm_us +
                                     cal->hbm_overlap_loss * (e.mainloop_us + e.epilogue_us - e.epilogue_tile_us)));
  const auto slower_loop = gemm(256, 4, 2, 1, 57344, 8192);  // cluster 2 along M: half the CTAs hold only padding
  REQUIRE(slower_loop.ok);
  CHECK(slower_loop.mainloop_us > e.mainloop_us);
  CHECK(slower_loop.time_us > e.time_us);
}

TEST_CASE("cost model: where HBM bounds, a narrow tile's shorter last epilogue counts") {
  // M = 16, N = 32768, K = 512 (the committed sweep: the 64-row ping-pong tile 16.6 us, BN 256 18.2): both
  // stream the same weights; BN 256's last epilogue (each warpgroup's 64 x 256 of a 128 x 256 tile) is twice the
  // ping-pong tile's (64 x 128), and it is exposed after the stream (the model before 2026-12-05 put them
  // within 1%, BN 256 first)
  kernels::gemm_sm90_config pp;
  pp.bm = 64, pp.bn = 128, pp.stages = 6, pp.cluster_m = 1, pp.pingpong = true, pp.in_flight = 1;
  const auto narrow = cost::estimate(kernels::gemm_bf16_sm90(pp), {{"M", 16}, {"N", 32768}, {"K", 512}});
  const auto wide = gemm(256, 4, 1, 16, 32768, 512);
  REQUIRE(narrow.ok);
  REQUIRE(wide.ok);
  CHECK(wide.bottleneck == "HBM bandwidth");
  CHECK(wide.epilogue_tile_us == doctest::Approx(2 * narrow.epilogue_tile_us));
  CHECK(narrow.time_us < wide.time_us);
  // by more than half the difference of the two epilogues (the model before: 0.04 us apart, a tie)
  CHECK(wide.time_us - narrow.time_us > 0.5 * (wide.epilogue_tile_us - narrow.epilogue_tile_us));
}

TEST_CASE("cost model: text and JSON carry the estimate") {
  const auto e = gemm(256, 4, 2, 4096, 4096, 4096);
  const auto text = cost::to_text(e);
  CHECK(text.find("bottleneck: tensor cores") != std::string::npos);
  CHECK(text.find("4 tiles per CTA") != std::string::npos);
  const auto json = cost::to_json(e);
  for (const char* key : {"\"time_us\":", "\"bottleneck\":", "\"per_kblock_us\":", "\"grid\":", "\"traffic_bytes\":", "\"hints\":", "\"calibration\":"})
    CHECK(json.find(key) != std::string::npos);
}

// A persistent walk whose points differ in work: causal attention prefill, query tile q walks q + 1 key blocks.
// Strided over 132 CTAs at S = 1k (8 tiles per head) the busiest CTA meets only long tiles; the estimate says so
// with the numbers and the fix (not of the GEMM form: no time, the walk is still assessed).
TEST_CASE("cost model: a persistent walk of uneven points gets the serpentine hint, with the busiest CTA's share") {
  kernels::attention_prefill_config c;
  c.parts = 2, c.causal = true, c.turns = false, c.persistent = true, c.q_stages = 2, c.o_tma = true;
  const std::vector<cost::dim_value> dims = {{"B", 16}, {"S", 1024}, {"T", 1024}, {"H", 32}, {"D", 128}, {"one", 1}};
  const auto strided = cost::estimate(kernels::attention_prefill_sm90(c), dims);
  CHECK_FALSE(strided.ok);  // not the GEMM form
  REQUIRE(strided.walk_assessed);
  CHECK(strided.walk_strided > 1.2);
  CHECK(strided.walk_serpentine < 1.06);
  REQUIRE(has_hint(strided, "walk_order::serpentine"));
  CHECK(strided.hints[0].text.find("4096 points") != std::string::npos);
  CHECK(strided.hints[0].text.find("132 CTAs") != std::string::npos);
  CHECK(cost::to_text(strided).find("hint: the persistent walk's 4096 points") != std::string::npos);
  CHECK(cost::to_json(strided).find("\"walk_balance\":{\"strided\":") != std::string::npos);
  CHECK(cost::to_json(strided).find("\"change\":\"walk_order::serpentine\"") != std::string::npos);
  // walking serpentine already: a note with both figures, no hint
  c.serpentine = true;
  const auto serp = cost::estimate(kernels::attention_prefill_sm90(c), dims);
  CHECK_FALSE(has_hint(serp, "walk_order::serpentine"));
  REQUIRE(serp.notes.size() == 1);
  CHECK(serp.notes[0].find("(serpentine; strided: ") != std::string::npos);
  // non-causal: every tile walks T's blocks, no order to change; but 4096 tiles over 132 CTAs leave the last round
  // holding 4: a note with the idle share
  c.causal = false, c.serpentine = false;
  const auto even = cost::estimate(kernels::attention_prefill_sm90(c), dims);
  CHECK(even.walk_assessed);
  CHECK(even.hints.empty());
  REQUIRE(even.notes.size() == 1);
  CHECK(even.notes[0].find("4096 points over 132 CTAs take 32 rounds, the last holding 4: the busiest CTA carries 1.03x the mean work (3.0% of the walk idles") !=
        std::string::npos);
  CHECK(even.notes[0].find("k.split_tail(extent, n), would") != std::string::npos);
  // the same walk with its last round split: 4 tiles of 8 key blocks in 8 parts of one (plan::split_tail_parts), so
  // the busiest CTA carries 31 + 1/8 tiles of the mean 31.03: 1.003x (0.3% idle), where unsplit 32 tiles: 3.0%
  c.tail_parts = 16;
  const auto tail = cost::estimate(kernels::attention_prefill_sm90(c), dims);
  CHECK(tail.walk_assessed);
  CHECK(tail.walk_strided == doctest::Approx(31.125 * 132 / 4096.0).epsilon(1e-6));
  REQUIRE(tail.notes.size() == 1);
  INFO(tail.notes[0]);
  CHECK(tail.notes[0].find("the persistent walk's last round holds 4 of its 4096 points over 132 CTAs: k.split_tail deals each in 8 parts, so the busiest "
                           "CTA carries 1.00x the mean work (0.3% of the walk idles; unsplit 3.0%") != std::string::npos);
  c.tail_parts = 0;
  // 33 x 4 heads x 8 tiles = 1056 points: 8 whole rounds, nothing to say
  const auto whole = cost::estimate(kernels::attention_prefill_sm90(c), {{"B", 33}, {"S", 1024}, {"T", 1024}, {"H", 4}, {"D", 128}, {"one", 1}});
  CHECK(whole.walk_assessed);
  CHECK(whole.notes.empty());
  // a dim missing: not assessed, and no hint
  const auto missing = cost::estimate(kernels::attention_prefill_sm90(c), {{"B", 16}, {"S", 1024}, {"H", 32}});
  CHECK_FALSE(missing.walk_assessed);
  // the persistent GEMM: equal points, no walk hint; and no last-round note either, where its grid line gives the
  // waves (4096^3 in 128 x 256 tiles: 256 cluster points over 66 clusters, 3.88 waves)
  CHECK_FALSE(has_hint(gemm(256, 4, 2, 8192, 8192, 8192), "walk_order"));
  const auto g4 = gemm(256, 4, 2, 4096, 4096, 4096);
  REQUIRE(g4.ok);
  CHECK(g4.walk_strided > 1.02);
  for (const auto& n : g4.notes) CHECK(n.find("the last holding") == std::string::npos);
}

TEST_CASE("cost model: split-K pays each later wave and, through global memory, a sum latency per tile") {
  // wave_us and global_sum_us (fitted on the sweep: bench/cost/fit_sweep.py): a grid of more CTAs than run at
  // once pays wave_us per wave after the first; a split-K whose parts meet in global memory pays global_sum_us
  // per tile of a CTA, its last tile's exposed. Persistent schedules and cluster sums pay neither.
  const auto* committed = cost::find_calibration(target_id::sm_90a);
  REQUIRE(committed != nullptr);
  CHECK(committed->wave_us > 0);
  CHECK(committed->global_sum_us > 0);
  cost::calibration none = *committed, more = *committed;
  none.wave_us = none.global_sum_us = 0;
  more.wave_us = 3;
  more.global_sum_us = 5;
  const auto dims = std::vector<cost::dim_value>{{"M", 8}, {"N", 8192}, {"K", 8192}};
  const auto splitk = [&](int splits, bool global, const cost::calibration& c) {
    kernels::gemm_splitk_config g;
    g.bn = 128;
    g.splits = splits;
    g.global_sum = global;
    return cost::estimate(kernels::gemm_splitk_sm90(g), dims, &c);
  };
  // 64 tiles x 8 splits in clusters of 8: 512 CTAs, 120 at once (H200: clusters of 8 fill 120 SMs) -> 5 waves
  const auto c8 = splitk(8, false, none), c8w = splitk(8, false, more);
  REQUIRE((c8.ok && c8w.ok));
  CHECK(c8.tiles_per_cta == 5);
  CHECK(c8w.time_us == doctest::Approx(c8.time_us + 4 * 3.0));
  // 64 tiles x 2 splits through global memory: 128 CTAs, one wave, one tile each
  const auto g2 = splitk(2, true, none), g2s = splitk(2, true, more);
  REQUIRE((g2.ok && g2s.ok));
  CHECK(g2.tiles_per_cta == 1);
  CHECK(g2s.time_us == doctest::Approx(g2.time_us + 5.0));
  // the same split in a cluster: no global sum
  const auto c2 = splitk(2, false, none), c2s = splitk(2, false, more);
  CHECK(c2s.time_us == doctest::Approx(c2.time_us));
  // a persistent GEMM: neither
  kernels::gemm_sm90_config p;
  p.bn = 64;
  const auto pe = cost::estimate(kernels::gemm_bf16_sm90(p), dims, &none), pm = cost::estimate(kernels::gemm_bf16_sm90(p), dims, &more);
  CHECK(pm.time_us == doctest::Approx(pe.time_us));
}
