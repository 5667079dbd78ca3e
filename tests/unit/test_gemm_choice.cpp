// The shape-based choice of cake::gemm (no GPU needed).
#include <doctest/doctest.h>

#include <set>

#include <cake/gemm.hpp>

TEST_CASE("choose_gemm picks the tile width that quantizes best") {
  // N = 2112: 176-wide tiles give 12 even column tiles (384 tiles, 3 waves on 132 SMs).
  CHECK(cake::choose_gemm(4096, 2112, 7168, 132).config.bn == 176);
  // Square sizes: the widest tile.
  CHECK(cake::choose_gemm(4096, 4096, 4096, 132).config.bn == 256);
  CHECK(cake::choose_gemm(8192, 8192, 8192, 132).config.bn == 256);
}

TEST_CASE("the chosen pipeline depth fits the shared-memory limit") {
  for (int bn : {256, 192, 176, 128}) {
    cake::kernels::gemm_sm90_config c;
    c.bn = bn;
    c.stages = cake::max_gemm_stages(c, 2);
    CHECK(c.stages >= 3);
    const auto p = cake::kernels::gemm_sm90<cake::bf16>(c);
    CHECK(p.errors.empty());
    CHECK(cake::plan::plan_smem(p).fits());
    c.stages += 1;  // one more stage would not fit (or the cap of 6 was reached)
    if (c.stages <= 6) CHECK_FALSE(cake::plan::plan_smem(cake::kernels::gemm_sm90<cake::bf16>(c)).fits());
  }
}

TEST_CASE("epilogues that would spill at BN = 256 take BN <= 128") {
  cake::kernels::gemm_epilogue bias;
  bias.bias = true;
  cake::kernels::gemm_epilogue res;
  res.residual = true;
  // A bias with TMA stores keeps the wide tile; with the direct-store epilogue (ragged N) it is capped.
  CHECK(cake::choose_gemm(4096, 4096, 4096, 132, cake::gemm_input::bf16, bias).config.bn == 256);
  CHECK(cake::choose_gemm(4096, 4095, 4096, 132, cake::gemm_input::bf16, bias, true).config.bn <= 128);
  // A residual tile is capped either way; no epilogue with direct stores keeps the wide tile.
  CHECK(cake::choose_gemm(4096, 4096, 4096, 132, cake::gemm_input::bf16, res).config.bn <= 128);
  CHECK(cake::choose_gemm(4096, 4095, 4096, 132, cake::gemm_input::bf16, {}, true).config.bn == 256);
}

TEST_CASE("cake::gemm's kernel table tells apart configurations that differ in any field (bm, register split, ...)") {
  using cake::gemm_detail::kernel_key;
  const cake::kernels::gemm_sm90_config base;
  std::set<kernel_key> keys{{base, cake::gemm_input::bf16, 0}};
  auto with = [&](auto change) {
    auto c = base;
    change(c);
    return keys.insert({c, cake::gemm_input::bf16, 0}).second;  // a new entry: not served base's kernel
  };
  CHECK(with([](auto& c) { c.bm = 64; }));
  CHECK(with([](auto& c) { c.producer_regs = 56; }));
  CHECK(with([](auto& c) { c.consumer_regs = 224; }));
  CHECK(with([](auto& c) { c.raster_group = 4; }));
  CHECK(with([](auto& c) { c.epi.bias = true; }));
  CHECK(with([](auto& c) { c.epi.act = cake::kernels::gemm_activation::silu; }));
  CHECK_FALSE(keys.insert({base, cake::gemm_input::bf16, 0}).second);  // the same configuration: one kernel
  CHECK(keys.insert({base, cake::gemm_input::e4m3, 0}).second);
  CHECK(keys.insert({base, cake::gemm_input::bf16, 1}).second);
}

TEST_CASE("the split-K pipeline depth fits the shared-memory limit next to the cluster sum's scratch") {
  for (int bm : {64, 128})
  for (int bn : {256, 192, 128, 64}) {
    cake::kernels::gemm_splitk_config c;
    c.bn = bn;
    c.bm = bm;
    c.splits = 2;
    c.stages = cake::max_splitk_stages(bn, bm);
    INFO("BM " << bm << " BN " << bn << ", " << c.stages << " stages");
    CHECK(c.valid());
    CHECK(c.stages >= (bm == 64 ? 4 : bn <= 128 ? 5 : 2));  // 128 rows: two accumulators' scratch
    const auto p = cake::kernels::gemm_splitk_sm90<cake::bf16>(c);
    REQUIRE(p.errors.empty());
    CHECK(cake::plan::plan_smem(p).fits());
    c.stages += 1;  // one more stage would not fit (or the cap of 6 was reached)
    if (c.stages <= 6) CHECK_FALSE(cake::plan::plan_smem(cake::kernels::gemm_splitk_sm90<cake::bf16>(c)).fits());
  }
}

TEST_CASE("split-K schedules that do not exist are told apart by valid()") {
  cake::kernels::gemm_splitk_config c;
  CHECK(c.valid());
  auto with = [&](auto f) {
    auto x = c;
    f(x);
    return x.valid();
  };
  CHECK_FALSE(with([](auto& x) { x.bm = 96; }));       // 64 or 128 rows (one or two consumer warpgroups)
  CHECK_FALSE(with([](auto& x) { x.bm = 192; }));
  CHECK_FALSE(with([](auto& x) { x.bn = 120; x.splits = 2; }));  // 15 groups of 8 do not split in two
  CHECK_FALSE(with([](auto& x) { x.splits = 1; }));
  CHECK_FALSE(with([](auto& x) { x.splits = 16; x.bn = 256; }));  // more than 8 CTAs per cluster
  CHECK_FALSE(with([](auto& x) { x.bn = 264; x.splits = 3; }));
  CHECK(with([](auto& x) { x.bn = 192; x.splits = 3; }));
}

TEST_CASE("splitk_fill_config fills the SMs in one wave, with whole 8-column groups per split") {
  // N = 2112 at M = 1: 17 tiles of 128 would make 68 (4 splits) or 136 CTAs (8: two waves on 132 SMs);
  // 33 tiles of 64 over 4 splits make 132, and so do 22 of 96 over 6, each CTA streaming 19 K blocks of
  // 8 + 96 rows (1,976) instead of 28 of 8 + 64 (2,016).
  auto c = cake::splitk_fill_config(1, 2112, 7168, 132);
  CHECK(c.bm == 64);
  CHECK(c.bn == 96);
  CHECK(c.splits == 6);
  CHECK(c.stages == cake::max_splitk_stages(96));
  // N = 4096: 32 tiles of 128 over 4 splits fill 128 SMs; the wider equals (256 x 8) come first.
  c = cake::splitk_fill_config(1, 4096, 4096, 132);
  CHECK(c.bn * 4 == 128 * c.splits);
  CHECK((c.bn / 8) % c.splits == 0);
  // Measured concurrency: clusters of 4 or more hold only 120 CTAs of the H200 at once (a cluster stays in
  // one GPC), so 128 CTAs of 4-CTA clusters are two waves; 64-wide tiles fit two CTAs per SM. The choice
  // moves to clusters of 2 (64 x 2 = 128 CTAs, one per SM).
  auto h200 = [](int, int bn, int splits) -> long long {
    if (bn == 64) return splits == 2 ? 264 : splits == 4 ? 248 : 240;
    return splits == 2 ? 132 : splits == 3 ? 117 : splits == 6 ? 102 : 120;
  };
  c = cake::splitk_fill_config_for(1, 4096, 4096, 132, h200);
  CHECK(c.splits == 2);
  // ... and at N = 2112 clusters of 6 hold 102 CTAs at once: 96 x 6 takes two waves, 64 x 4 (248) one.
  c = cake::splitk_fill_config_for(1, 2112, 7168, 132, h200);
  CHECK(c.bn == 64);
  CHECK(c.splits == 4);
  // e4m3 counts K blocks of 128 elements: 56 here, so 64 x 4 (14 blocks of 72 rows each) beats 96 x 6 (10 of 104).
  const auto e = cake::splitk_fill_config(1, 2112, 7168, 132, cake::gemm_input::e4m3);
  CHECK(e.bn == 64);
  CHECK(e.splits == 4);
  // max_bn caps the width
  CHECK(cake::splitk_fill_config(1, 4096, 4096, 132, cake::gemm_input::bf16, 128).bn <= 128);
  // N = 6144 (K = 4096): 192-wide tiles over 4 splits make 128 CTAs, but in clusters of 4 (120 at once on the
  // H200: two waves); 96-wide tiles over 2 splits make 128 CTAs in clusters of 2, one wave.
  auto h200_96 = [&](int bm, int bn, int splits) -> long long { return bn == 64 ? h200(bm, bn, splits) : splits == 2 ? 132 : splits == 3 ? 117 : 120; };
  c = cake::splitk_fill_config_for(1, 6144, 4096, 132, h200_96);
  CHECK(c.bn == 96);
  CHECK(c.splits == 2);
  // N = 7168 and 10240 take 112- and 160-wide tiles over 2 splits (64 tiles each: 128 CTAs)
  c = cake::splitk_fill_config_for(1, 7168, 4096, 132, h200_96);
  CHECK(c.bn == 112);
  CHECK(c.splits == 2);
  c = cake::splitk_fill_config_for(1, 10240, 8192, 132, h200_96);
  CHECK(c.bn == 160);
  CHECK(c.splits == 2);
  // between = false: only the coarse widths (the sweep times both picks)
  c = cake::splitk_fill_config_for(1, 7168, 4096, 132, h200_96, cake::gemm_input::bf16, 256, false);
  CHECK(c.bn != 160);
  CHECK(c.bn != 112);
  CHECK(c.bn != 96);
  CHECK((c.bn / 8) % c.splits == 0);
}

TEST_CASE("splitk_fill_config takes 128-row tiles past M = 64, never a pipeline under 3 stages") {
  // M = 256, N = 2112: 64-row tiles read B four times over; 128-row tiles twice. 2 x 11 tiles of 192 over 6
  // splits make 132 CTAs.
  auto c = cake::splitk_fill_config(256, 2112, 7168, 132);
  CHECK(c.bm == 128);
  CHECK(c.bn == 192);
  CHECK(c.splits == 6);
  CHECK(c.stages == cake::max_splitk_stages(192, 128));
  CHECK(c.valid());
  // 128 x 256 tiles leave room for 2 stages next to the cluster sum's scratch: never picked
  CHECK(cake::max_splitk_stages(256, 128) == 2);
  for (long long m : {65LL, 128LL, 256LL, 512LL})
    for (long long n : {2112LL, 4096LL, 7168LL, 36864LL}) {
      const auto x = cake::splitk_fill_config(m, n, 7168, 132);
      CHECK(x.stages >= 3);
      CHECK(x.valid());
    }
  // up to M = 64 one 64-row tile holds every row: no 128-row tiles; max_bm = 64 keeps them out past it too
  CHECK(cake::splitk_fill_config(64, 2112, 7168, 132).bm == 64);
  const auto d = cake::splitk_fill_config_for(
      256, 2112, 7168, 132, [](int, int, int splits) { return 132LL / splits * splits; }, cake::gemm_input::bf16, 256, true, 64);
  CHECK(d.bm == 64);
}

TEST_CASE("splitk_global_fill_config_for: splits outside a cluster fill the SMs where clusters cannot") {
  auto all = [](int, int) { return 132LL; };  // one CTA per SM, whatever the split
  // DeepSeek-V3's q_a/kv_a projection at M = 512 (the dispatcher's worst held-out row): 128 x 192 tiles over 3
  // splits are 4 x 11 x 3 = 132 CTAs, one wave (in clusters of 3 the H200 holds 117 at once: two waves)
  auto c = cake::splitk_global_fill_config_for(512, 2112, 7168, 132, all);
  CHECK(c.global_sum);
  CHECK(c.bm == 128);
  CHECK(c.bn == 192);
  CHECK(c.splits == 3);
  CHECK(c.stages == cake::max_splitk_stages(192, 128, true));
  CHECK(c.valid());
  // no cluster scratch: 128 x 192 tiles get 5 stages (3 next to the cluster sum's 96 KiB)
  CHECK(cake::max_splitk_stages(192, 128, true) == 5);
  CHECK(cake::max_splitk_stages(192, 128) == 3);
  // a width that does not split into the CTAs' column blocks (136 / 8 = 17 groups over 4 splits): 128 CTAs
  c = cake::splitk_global_fill_config_for(256, 2112, 7168, 132, all);
  CHECK(c.bn == 136);
  CHECK(c.splits == 4);
  CHECK((c.bn / 8) % c.splits != 0);
  CHECK(c.valid());
  // at M <= 64 one 64-row tile holds every row; every pick is a schedule that exists, with at least 2 splits
  for (long long m : {1LL, 8LL, 64LL, 128LL, 512LL, 2048LL})
    for (long long n : {2112LL, 4096LL, 7168LL, 36864LL}) {
      INFO("M " << m << " N " << n);
      const auto x = cake::splitk_global_fill_config_for(m, n, 7168, 132, all);
      CHECK(x.valid());
      CHECK(x.global_sum);
      CHECK(x.splits >= 2);
      CHECK(x.splits <= cake::splitk_global_max_fill_splits);
      if (m <= 64) CHECK(x.bm == 64);
    }
  // the CTAs the device holds at once decide the waves: with 120 (not 132), 128 x 192 over 3 splits (132 CTAs)
  // would take two, and 128 x 144 over 2 (4 x 15 x 2 = 120) one
  const auto fewer = cake::splitk_global_fill_config_for(512, 2112, 7168, 132, [](int, int) { return 120LL; });
  CHECK(fewer.bn == 144);
  CHECK(fewer.splits == 2);
  CHECK((512 + fewer.bm - 1) / fewer.bm * ((2112 + fewer.bn - 1) / fewer.bn) * fewer.splits <= 120);
}

TEST_CASE("cake::gemm runs a plan with the fewest rows of A that hold M (8, 16, 32), the whole tile past them") {
  const std::pair<long long, int> cases[] = {{1, 8}, {8, 8}, {9, 16}, {16, 16}, {17, 32}, {32, 32}, {33, 0}, {128, 0}, {5000, 0}};
  for (auto [m, rows] : cases) {
    INFO("M " << m);
    CHECK(cake::kernels::short_a_rows(m) == rows);
    for (const auto& plan : cake::gemm_dispatch_table::plans) {  // both kernels
      const cake::gemm_plan q = cake::gemm_detail::as_run(plan, m);
      CHECK(q.sm90.a_rows == rows);
      CHECK(q.splitk.a_rows == rows);
      if (plan.kernel == cake::gemm_kernel::splitk) CHECK(q.splitk.valid());
    }
  }
  // a different program (a kernel of its own), the same smem: the loads change, not the plan
  cake::kernels::gemm_sm90_config c, s8;
  s8.a_rows = 8;
  CHECK(s8 != c);
  CHECK(cake::plan::plan_smem(cake::kernels::gemm_sm90<cake::bf16>(s8)).total == cake::plan::plan_smem(cake::kernels::gemm_sm90<cake::bf16>(c)).total);
  cake::kernels::gemm_splitk_config k, k8;
  k8.a_rows = 8;
  CHECK(cake::plan::plan_smem(cake::kernels::gemm_splitk_sm90<cake::bf16>(k8)).total == cake::plan::plan_smem(cake::kernels::gemm_splitk_sm90<cake::bf16>(k)).total);
}
