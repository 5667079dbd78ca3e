// cake::gemm's shape-bucket dispatcher (include/cake/gemm_plan.hpp, the generated
// include/cake/gemm_dispatch.hpp, select_gemm in include/cake/gemm.hpp) and its shape domain
// (bench/gemm/domain.hpp). No GPU needed.
#include <doctest/doctest.h>

#include <array>
#include <set>

#include <cake/analysis.hpp>
#include <cake/gemm.hpp>

#include "../../bench/gemm/domain.hpp"
#include "../../bench/gemm/sweep_candidates.hpp"

namespace {

using cake::gemm_dispatch_bucket;
using cake::gemm_dispatch_cell;
using cake::gemm_input;
namespace table = cake::gemm_dispatch_table;

// A table written by hand: bf16 N in [1000, 3000), K in [500, 900): M 1..63 -> plan 0, 64..64 -> plan 1,
// M 100..200 -> plan 2 (a hole at 65..99); e4m3 N in [1000, 3000), K in [900, 2000): 1..4096 -> plan 1.
constexpr std::array<gemm_dispatch_cell, 2> cells{{{gemm_input::bf16, 1000, 3000, 500, 900, 0, 3}, {gemm_input::e4m3, 1000, 3000, 900, 2000, 3, 1}}};
constexpr std::array<gemm_dispatch_bucket, 4> buckets{{{1, 63, 0}, {64, 64, 1}, {100, 200, 2}, {1, 4096, 1}}};

int find(gemm_input in, long long M, long long N, long long K) { return cake::find_gemm_bucket(cells, buckets, in, M, N, K); }

}  // namespace

TEST_CASE("gemm dispatch lookup: M bounds are inclusive, N and K upper bounds exclusive, holes and other inputs fall through") {
  CHECK(find(gemm_input::bf16, 1, 1000, 500) == 0);
  CHECK(find(gemm_input::bf16, 63, 2999, 899) == 0);
  CHECK(find(gemm_input::bf16, 64, 2000, 700) == 1);
  CHECK(find(gemm_input::bf16, 65, 2000, 700) == -1);   // the hole between buckets
  CHECK(find(gemm_input::bf16, 99, 2000, 700) == -1);
  CHECK(find(gemm_input::bf16, 100, 2000, 700) == 2);
  CHECK(find(gemm_input::bf16, 200, 2000, 700) == 2);
  CHECK(find(gemm_input::bf16, 201, 2000, 700) == -1);  // above the last bucket
  CHECK(find(gemm_input::bf16, 64, 3000, 700) == -1);   // N at the cell's excluded end
  CHECK(find(gemm_input::bf16, 64, 999, 700) == -1);
  CHECK(find(gemm_input::bf16, 64, 2000, 900) == -1);   // K of the e4m3 cell, not a bf16 one
  CHECK(find(gemm_input::e4m3, 64, 2000, 900) == 1);
  CHECK(find(gemm_input::e4m3, 64, 2000, 700) == -1);   // K of the bf16 cell
  CHECK(find(gemm_input::e4m3, 4097, 2000, 1000) == -1);
}

TEST_CASE("select_gemm_in with a measured table: the bucket's plan inside it, split-K never for e4m3, the fallback under each guard") {
  cake::gemm_plan sk;
  sk.kernel = cake::gemm_kernel::splitk;
  sk.splitk.splits = 4;
  cake::gemm_plan narrow;
  narrow.sm90.bn = 128;
  narrow.sm90.cluster_m = 1;
  const std::array<cake::gemm_plan, 3> plans{narrow, sk, narrow};
  const cake::gemm_dispatch_tables t{plans, cells, buckets, true, 132, "test evidence"};
  auto pick = [&](gemm_input in, long long M, long long N, long long K, int sms = 132, cake::kernels::gemm_epilogue e = {}, bool direct = false) {
    return cake::select_gemm_in(t, M, N, K, sms, in, e, direct);
  };
  const auto a = pick(gemm_input::bf16, 8, 2048, 512);
  CHECK(a.from_bucket);
  CHECK(a.plan == narrow);
  CHECK(a.why() == "bn128_s4_c1 (shape bucket, test evidence)");
  const auto b = pick(gemm_input::bf16, 64, 2048, 512);
  CHECK(b.from_bucket);
  CHECK(b.plan.kernel == cake::gemm_kernel::splitk);
  const auto fallback = cake::choose_gemm(64, 2048, 512, 132).config;
  auto is_fallback = [&](const cake::gemm_selection& s) { return !s.from_bucket && s.plan.kernel == cake::gemm_kernel::sm90 && s.plan.sm90 == fallback; };
  CHECK(is_fallback(pick(gemm_input::bf16, 65, 2048, 512)));  // the hole
  CHECK(is_fallback(pick(gemm_input::bf16, 64, 2048, 512, 114)));  // another SM count
  cake::kernels::gemm_epilogue relu;
  relu.act = cake::kernels::gemm_activation::relu;
  CHECK(!pick(gemm_input::bf16, 64, 2048, 512, 132, relu).from_bucket);
  CHECK(!pick(gemm_input::bf16, 64, 2048, 512, 132, {}, true).from_bucket);
  const std::array<gemm_dispatch_cell, 1> fp8_cell{{{gemm_input::e4m3, 1000, 3000, 500, 900, 0, 3}}};
  const cake::gemm_dispatch_tables f{plans, fp8_cell, buckets, true, 132, "test evidence"};
  CHECK(cake::select_gemm_in(f, 64, 2048, 512, 132, gemm_input::e4m3, {}, false).plan.kernel == cake::gemm_kernel::splitk);  // split-K has an e4m3 form
  CHECK(cake::select_gemm_in(f, 8, 2048, 512, 132, gemm_input::e4m3, {}, false).from_bucket);
  const cake::gemm_dispatch_tables placeholder{plans, cells, buckets, false, 132, "placeholder"};
  CHECK(!cake::select_gemm_in(placeholder, 8, 2048, 512, 132, gemm_input::bf16, {}, false).from_bucket);
}

TEST_CASE("the generated gemm dispatch table is well formed: cells disjoint, buckets ordered and inside the table, plans valid") {
  REQUIRE(table::sm_count > 0);
  int covered = 0;
  for (std::size_t i = 0; i < table::cells.size(); ++i) {
    const auto& c = table::cells[i];
    INFO("cell " << i);
    CHECK(c.n_lo < c.n_hi);
    CHECK(c.k_lo < c.k_hi);
    CHECK(c.count > 0);
    CHECK(c.first == covered);  // the cells' buckets follow one another
    covered += c.count;
    for (int b = c.first; b < c.first + c.count; ++b) {
      const auto& x = table::buckets[static_cast<std::size_t>(b)];
      CHECK(x.m_lo >= 1);
      CHECK(x.m_lo <= x.m_hi);
      if (b > c.first) CHECK(x.m_lo > table::buckets[static_cast<std::size_t>(b - 1)].m_hi);
      REQUIRE(x.plan >= 0);
      REQUIRE(x.plan < static_cast<int>(table::plans.size()));
      const auto& plan = table::plans[static_cast<std::size_t>(x.plan)];
      if (plan.kernel == cake::gemm_kernel::splitk) CHECK(plan.splitk.valid());
    }
    for (std::size_t j = 0; j < i; ++j) {
      const auto& o = table::cells[j];
      const bool overlap = o.in == c.in && o.n_lo < c.n_hi && c.n_lo < o.n_hi && o.k_lo < c.k_hi && c.k_lo < o.k_hi;
      CHECK_FALSE(overlap);
    }
  }
  CHECK(covered == static_cast<int>(table::buckets.size()));
}

TEST_CASE("the generated gemm dispatch table: every bucket's bounds look up to its own plan, one past the bounds does not") {
  for (const auto& c : table::cells) {
    for (int b = c.first; b < c.first + c.count; ++b) {
      const auto& x = table::buckets[static_cast<std::size_t>(b)];
      INFO("N " << c.n_lo << ".." << c.n_hi << " K " << c.k_lo << ".." << c.k_hi << " M " << x.m_lo << ".." << x.m_hi);
      CHECK(cake::find_gemm_bucket(table::cells, table::buckets, c.in, x.m_lo, c.n_lo, c.k_lo) == x.plan);
      CHECK(cake::find_gemm_bucket(table::cells, table::buckets, c.in, x.m_hi, c.n_hi - 1, c.k_hi - 1) == x.plan);
    }
    const auto& last = table::buckets[static_cast<std::size_t>(c.first + c.count - 1)];
    CHECK(cake::find_gemm_bucket(table::cells, table::buckets, c.in, last.m_hi + 1, c.n_lo, c.k_lo) == -1);
  }
  // Far outside every cell of the domain: no bucket.
  CHECK(cake::find_gemm_bucket(table::cells, table::buckets, gemm_input::bf16, 4096, 64, 64) == -1);
  CHECK(cake::find_gemm_bucket(table::cells, table::buckets, gemm_input::bf16, 4096, 1 << 20, 1 << 20) == -1);
}

TEST_CASE("select_gemm: outside every bucket, with an epilogue, a direct-store output or another SM count it is choose_gemm's schedule") {
  auto same_as_choose = [](long long M, long long N, long long K, int sms, cake::kernels::gemm_epilogue e, bool direct = false) {
    const auto s = cake::select_gemm(M, N, K, sms, gemm_input::bf16, e, direct);
    const auto c = cake::choose_gemm(M, N, K, sms, gemm_input::bf16, e, direct);
    return !s.from_bucket && s.plan.kernel == cake::gemm_kernel::sm90 && s.plan.sm90 == c.config;
  };
  CHECK(same_as_choose(4096, 64, 64, table::sm_count, {}));  // no cell holds N = K = 64
  cake::kernels::gemm_epilogue bias;
  bias.bias = true;
  CHECK(same_as_choose(4096, 4096, 4096, table::sm_count, bias));  // the sweep timed plain GEMMs only
  CHECK(same_as_choose(4096, 4096, 4096, table::sm_count + 1, {}));
  CHECK(same_as_choose(4096, 4096, 4096, table::sm_count, {}, true));  // direct-store outputs were not swept
  // In a bucket: the bucket's plan when the table is measured; the fallback while it is the placeholder.
  const auto s = cake::select_gemm(4096, 4096, 4096, table::sm_count, gemm_input::bf16);
  const int i = cake::find_gemm_bucket(table::cells, table::buckets, gemm_input::bf16, 4096, 4096, 4096);
  if (i >= 0) {
    CHECK(s.from_bucket == table::measured);
    if (table::measured) CHECK(s.plan == table::plans[static_cast<std::size_t>(i)]);
    else CHECK(same_as_choose(4096, 4096, 4096, table::sm_count, {}));
  }
  CHECK(s.why().find(s.from_bucket ? "shape bucket" : "choose_gemm") != std::string::npos);
}

TEST_CASE("every plan the gemm dispatcher can return builds and passes the analyzer") {
  std::set<int> fp8_plans;
  for (const auto& c : table::cells)
    if (c.in == gemm_input::e4m3)
      for (int b = c.first; b < c.first + c.count; ++b) fp8_plans.insert(table::buckets[static_cast<std::size_t>(b)].plan);
  for (std::size_t i = 0; i < table::plans.size(); ++i) {
    const auto& plan = table::plans[i];
    INFO(cake::plan_name(plan));
    std::vector<cake::program> programs;
    if (plan.kernel == cake::gemm_kernel::splitk) programs.push_back(cake::kernels::gemm_splitk_sm90(plan.splitk));
    else {
      programs.push_back(cake::kernels::gemm_sm90<cake::bf16>(plan.sm90));
      if (fp8_plans.count(static_cast<int>(i))) programs.push_back(cake::kernels::gemm_sm90<cake::e4m3>(plan.sm90));
    }
    for (const auto& p : programs) {
      REQUIRE(p.errors.empty());
      const auto report = cake::analyze(p);
      CHECK(report.errors == 0);
      CHECK(cake::plan::plan_smem(p).fits());
    }
  }
}

TEST_CASE("plan names tell every field the sweep varies apart") {
  cake::gemm_plan a;
  CHECK(cake::plan_name(a) == "bn256_s4_c2");
  a.sm90.pingpong = true;
  a.sm90.bm = 64;
  a.sm90.in_flight = 1;
  CHECK(cake::plan_name(a) == "bn256_s4_c2_pp64_f1");
  a.sm90.persistent = false;
  CHECK(cake::plan_name(a) == "bn256_s4_c2_pp64_f1_np");
  a.sm90.raster_group = 16;  // the sweep keeps the default 8 (unnamed); a `cake evolve` search varies it
  CHECK(cake::plan_name(a) == "bn256_s4_c2_pp64_f1_r16_np");
  cake::gemm_plan s;
  s.kernel = cake::gemm_kernel::splitk;
  s.splitk.splits = 8;
  CHECK(cake::plan_name(s) == "sk8_bn128_s6");
  s.splitk.splits = 2, s.splitk.bm = 128, s.splitk.stages = 5;
  CHECK(cake::plan_name(s) == "sk2_bm128_bn128_s5");  // 128-row tiles are named; 64-row ones keep the short name
  s.splitk.global_sum = true, s.splitk.splits = 3;
  CHECK(cake::plan_name(s) == "sk3_bm128_bn128_s5_g");  // partial sums through global memory, not a cluster
}

TEST_CASE("a plan name parses back to its plan, and text that is no plan name does not parse") {
  // every schedule the sweep can time, and the fields the sweep never varies but a name can say
  std::vector<cake::gemm_plan> plans = cake_bench::sweep_all_candidates();
  cake::gemm_plan np;
  np.sm90.persistent = false, np.sm90.bm = 64, np.sm90.stages = 12;
  plans.push_back(np);
  cake::gemm_plan la;
  la.sm90.lookahead = true;
  plans.push_back(la);
  cake::gemm_plan wt = la;
  wt.sm90.whole_tile_staging = true, wt.sm90.stages = 3;
  plans.push_back(wt);
  wt.sm90.lookahead = false;
  plans.push_back(wt);
  cake::gemm_plan r4;
  r4.sm90.raster_group = 4, r4.sm90.in_flight = 1;
  plans.push_back(r4);
  r4.sm90.persistent = false;
  plans.push_back(r4);
  cake::gemm_plan kg;
  kg.kernel = cake::gemm_kernel::splitk;
  kg.splitk.splits = 3, kg.splitk.bn = 192, kg.splitk.global_sum = true, kg.splitk.k_group = 8;
  plans.push_back(kg);
  for (const auto& p : plans) {
    const auto name = cake::plan_name(p);
    INFO(name);
    const auto back = cake::parse_plan_name(name);
    REQUIRE(back.has_value());
    CHECK(*back == p);
    CHECK(cake::plan_name(*back) == name);
  }
  CHECK(cake::parse_plan_name("bn64_s12_c2_pp64_f1")->sm90.stages == 12);
  CHECK(cake::parse_plan_name("bn64_s12_c2_pp64_f1")->sm90.bm == 64);
  CHECK(cake::parse_plan_name("sk4_bm128_bn160_s4")->splitk.bm == 128);
  CHECK(cake::parse_plan_name("bn256_s4_c2_la")->sm90.lookahead);
  CHECK(cake::parse_plan_name("bn256_s3_c2_la_wt")->sm90.whole_tile_staging);
  CHECK(cake::parse_plan_name("bn256_s4_c1_f1_r4")->sm90.raster_group == 4);
  CHECK(cake::parse_plan_name("sk3_bn192_s6_g_kg8")->splitk.k_group == 8);
  for (const char* bad : {"", "bn", "bn128", "bn128_s6", "bn128_s6_c", "bn128_s6_c1_", "bn128_s6_c1_pp", "bn128_s6_c1_xx", "bn128_s6_c1_np_f1", "bn128_s6_c1_la_np", "bn128_s6_c1_r", "bn128_s6_c1_np_r4", "bn128_s6_c1_r4_f1", "bn128_s6_c1_wt_la", "bn-1_s6_c1",
                          "sk", "sk2", "sk2_bn128", "sk2_bn128_s6_", "sk2_bm_bn128_s6", "sk2_bn128_s6_gg", "sk2_bn128_s6_g_kg", "sk2_bn128_s6_g_kg8_", "BN128_s6_c1", "bn128_s6_c1 "}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(cake::parse_plan_name(bad).has_value());
  }
}

TEST_CASE("the gemm shape domain: at least 100 shapes, half held out, each M and each layer on both sides of the split") {
  namespace d = cake::gemm_domain;
  CHECK(d::size >= 100);
  CHECK(d::count(true) == d::size / 2);
  std::set<long long> m_search, m_held;
  std::set<int> l_search, l_held;
  std::set<std::tuple<long long, long long, long long>> distinct;
  for (std::size_t i = 0; i < d::size; ++i) {
    const auto s = d::at(i);
    (s.held_out ? m_held : m_search).insert(s.m);
    (s.held_out ? l_held : l_search).insert(s.layer);
    distinct.insert({s.m, s.n, s.k});
    CHECK(s.n % 8 == 0);  // every domain output row is a 16-byte multiple: TMA-store epilogue
  }
  CHECK(distinct.size() == d::size);  // no shape twice (Qwen2.5-72B's qkv and o are Llama-3 70B's, kept once)
  CHECK(m_search.size() == d::ms.size());
  CHECK(m_held.size() == d::ms.size());
  CHECK(l_search.size() == d::layers.size());
  CHECK(l_held.size() == d::layers.size());
  // The split is fixed by the shape's position: DeepSeek-V3's fused q_a/kv_a at M = 1 (layer 10, M index 0) is searched.
  CHECK_FALSE(d::at(10 * d::ms.size()).held_out);
  CHECK(d::at(10 * d::ms.size() + 1).held_out);
}

TEST_CASE("the sweep's candidates: the fallback first, at most 10, and the global-sum split-K where splits fill the SMs") {
  auto has_global = [](const std::vector<cake::gemm_plan>& c) {
    return std::any_of(c.begin(), c.end(), [](const cake::gemm_plan& p) { return p.kernel == cake::gemm_kernel::splitk && p.splitk.global_sum; });
  };
  for (auto in : {cake::gemm_input::bf16, cake::gemm_input::e4m3}) {
    // small M, and few 128 x 128 tiles at larger M (DeepSeek-V3's q_a/kv_a at 512 rows: 68 tiles)
    for (auto [m, n, k] : {std::array<long long, 3>{1, 4096, 4096}, {128, 2112, 7168}, {512, 2112, 7168}}) {
      INFO(m << " x " << n << " x " << k);
      const auto c = cake_bench::sweep_candidates(m, n, k, 132, in);
      CHECK(c.size() <= cake_bench::sweep_max_candidates);
      CHECK(c.front().sm90 == cake::choose_gemm(m, n, k, 132, in).config);
      CHECK(has_global(c));
    }
    // many tiles: no split
    const auto big = cake_bench::sweep_candidates(4096, 4096, 4096, 132, in);
    CHECK_FALSE(has_global(big));
    CHECK(std::none_of(big.begin(), big.end(), [](const cake::gemm_plan& p) { return p.kernel == cake::gemm_kernel::splitk; }));
  }
  // every candidate a shape can get is among those the lowering tier builds
  const auto all = cake_bench::sweep_all_candidates();
  for (auto [m, n, k] : {std::array<long long, 3>{512, 2112, 7168}, {128, 6144, 4096}, {256, 2112, 7168}, {16, 7168, 2048}, {1024, 2112, 7168}})
    for (const auto& p : cake_bench::sweep_candidates(m, n, k, 132, cake::gemm_input::bf16))
      CHECK_MESSAGE(std::find(all.begin(), all.end(), p) != all.end(), cake::plan_name(p));
}

TEST_CASE("the sweep's between widths: the cost model's pick where the waves of tiles differ") {
  using cake::gemm_input;
  auto name = [](long long m, long long n, long long k, gemm_input in) {
    const auto p = cake_bench::model_width_plan(m, n, k, 132, in);
    return p ? cake::plan_name(*p) : std::string("-");
  };
  // 2048 x 2112 x 7168: BN 176 is 16 x 12 = 192 tiles (2 waves, the second 45% full), BN 144 16 x 15 = 240 (82%)
  CHECK(name(2048, 2112, 7168, gemm_input::bf16) == "bn144_s6_c2");
  CHECK(name(2048, 2112, 7168, gemm_input::e4m3) == "bn144_s6_c2");
  // 1024 x 7168 x 16384: BN 256 is 8 x 28 = 224 tiles (2 waves, 70% full), BN 224 8 x 32 = 256 (97%)
  CHECK(name(1024, 7168, 16384, gemm_input::bf16) == "bn224_s4_c2");
  // many full waves: the sweep's own widths (no margin of 3%)
  CHECK(name(4096, 4096, 4096, gemm_input::bf16) == "-");
  CHECK(name(16384, 8192, 8192, gemm_input::bf16) == "-");
  // not at small M (128 rows: the small-M schedules) nor where 128 x 128 tiles are fewer than the SMs
  CHECK(name(128, 6144, 4096, gemm_input::bf16) == "-");
  CHECK(name(512, 2112, 7168, gemm_input::bf16) == "-");  // 4 x 17 = 68 tiles
  // the sweep offers it, once, after its own; the lowering tier builds every width it can pick
  const auto c = cake_bench::sweep_candidates(2048, 2112, 7168, 132, gemm_input::bf16);
  CHECK(std::count_if(c.begin(), c.end(), [](const cake::gemm_plan& p) { return cake::plan_name(p) == "bn144_s6_c2"; }) == 1);
  const auto all = cake_bench::sweep_all_candidates();
  for (int bn : cake_bench::between_widths) {
    INFO(bn);
    CHECK(std::find(all.begin(), all.end(), cake_bench::sm90_plan(bn, 2)) != all.end());
    CHECK(bn % 16 == 0);  // the TMA-store epilogue's narrowest chunk
  }
}

TEST_CASE("the sweep's narrow tiles: the one that fills a wave of the SMs, as the H100 measured and cuBLAS picks") {
  // the fastest narrow tile of bench/results/h100/small_tiles/ at each bf16 shape (and cuBLAS's tile there,
  // bench/results/h100/gemm_peer_kernels.json, rows and columns swapped)
  CHECK(cake::plan_name(cake_bench::wave_fill_plan(512, 2112, 132)) == "bn64_s8_c2");            // 4 x 33 = 132 tiles
  CHECK(cake::plan_name(cake_bench::wave_fill_plan(256, 4096, 132)) == "bn64_s8_c2");            // 2 x 64 = 128
  CHECK(cake::plan_name(cake_bench::wave_fill_plan(256, 2112, 132)) == "bn64_s12_c2_pp64_f1");   // 4 x 33 = 132
  CHECK(cake::plan_name(cake_bench::wave_fill_plan(128, 6144, 132)) == "bn96_s10_c2_pp64_f1");   // 2 x 64 = 128
  // up to 64 rows: 64-row tiles only, and no cluster (it would pad the one row tile to two)
  CHECK(cake::plan_name(cake_bench::wave_fill_plan(64, 4096, 132)) == "bn64_s12_c1_pp64_f1");  // 64 tiles
  CHECK(cake::plan_name(cake_bench::wave_fill_plan(1, 7168, 132)) == "bn64_s12_c1_pp64_f1");   // 112
  // more than one wave: the tile whose waves are fullest (128 x 64: 16 x 33 = 528 tiles, 4 full waves)
  CHECK(cake::plan_name(cake_bench::wave_fill_plan(2048, 2112, 132)) == "bn64_s8_c2");
  // the few-tile shapes time the wave's tile and both narrow tiles, and drop BN 192 / 256 for them
  const auto few = cake_bench::sweep_candidates(256, 2112, 7168, 132, cake::gemm_input::bf16);
  for (const char* name : {"bn64_s12_c2_pp64_f1", "bn64_s8_c2", "bn128_s6_c1"})
    CHECK_MESSAGE(std::any_of(few.begin(), few.end(), [&](const cake::gemm_plan& p) { return cake::plan_name(p) == name; }), name);
  CHECK(std::none_of(few.begin(), few.end(), [](const cake::gemm_plan& p) { return p.kernel == cake::gemm_kernel::sm90 && p.sm90.bn >= 192; }));
  // above those, no narrow tile even where 128 x 128 tiles leave waves empty: 1024 x 2112 (8 x 17 = 136 tiles,
  // 2 waves, 52% full; 128 x 64 would make 264 tiles, 2 full waves, and measured 1.35x slower than BN 176)
  CHECK(cake_bench::wave_fill(1024, 2112, 128, 128, 2, 132) == doctest::Approx(136.0 / 264));
  const auto mid = cake_bench::sweep_candidates(1024, 2112, 7168, 132, cake::gemm_input::bf16);
  CHECK(std::none_of(mid.begin(), mid.end(), [](const cake::gemm_plan& p) { return p.kernel == cake::gemm_kernel::sm90 && p.sm90.bn <= 96; }));
  const auto big = cake_bench::sweep_candidates(4096, 4096, 4096, 132, cake::gemm_input::bf16);
  CHECK(std::none_of(big.begin(), big.end(), [](const cake::gemm_plan& p) { return p.kernel == cake::gemm_kernel::sm90 && p.sm90.bn <= 96; }));
}
