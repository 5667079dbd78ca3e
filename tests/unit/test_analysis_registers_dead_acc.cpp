// Two checks of issue 10: the setmaxnreg register pool (resource.register-file: threads x registers
// after setmaxnreg against block threads x the entry cap) and dead accumulation (an MMA result
// overwritten before anything read it, dataflow.dead-accumulation).
#include <doctest/doctest.h>

#include <cake/cake.hpp>

#include "../../kernels/gemm/sm90_bf16.hpp"
#include "../../kernels/kmeans/assign.hpp"

using namespace cake;
using analysis::rule_id;

namespace {

const analysis::diagnostic* find(const analysis::report& r, rule_id id) {
  for (const auto& d : r.diagnostics)
    if (d.rule == id) return &d;
  return nullptr;
}
int count(const analysis::report& r, rule_id id) {
  int n = 0;
  for (const auto& d : r.diagnostics) n += d.rule == id;
  return n;
}
long long number(const analysis::diagnostic& d, std::string_view name) {
  for (int i = 0; i < d.number_count; ++i)
    if (d.numbers[i].name == name) return d.numbers[i].value;
  return -999;
}

// An sm_90a GEMM: a producer warpgroup with regs(producer_regs) (0: none) or, when `explicit_op`, an
// r.setmaxnreg(producer_regs) op instead; `consumers` consumer warpgroups with regs(consumer_regs).
constexpr program split(int producer_regs, int consumer_regs, int consumers = 2, bool explicit_op = false, int depth = 2) {
  auto k = kernel("split").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto mn = k.parallel(tiles(M, 64 * consumers), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {64 * consumers, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(depth)).carries(sA, sB);
  auto body = [&](role& r) {
    if (explicit_op) r.setmaxnreg(producer_regs);
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt));
      });
    });
  };
  if (explicit_op || producer_regs == 0) k.role("producer", warpgroups(1), body);
  else k.role("producer", warpgroups(1), regs(producer_regs), body);
  k.role("consumer", warpgroups(consumers), regs(consumer_regs), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), consumers), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(D.tile(m * consumers + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}

// An sm_90a GEMM whose consumer K-loop body (after the wait and wgmma_fence) is `body(r, acc, mx, a, b,
// kt)` (mx: a row vector when RowVec, a and b: the slot's tiles); `after(r, acc, t)` runs once per tile after the K
// loop, before the store (t: a second f32 tile of the accumulator's shape).
template <bool RowVec = false, class Body, class After>
constexpr program gemm_with(Body body, After after) {
  auto k = kernel("gemm_with").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto mn = k.parallel(tiles(M, 64), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
  k.role("consumer", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    auto mx = RowVec ? r.row_vector<f32>("mx", 64) : acc;  // declared only where it is used (its layout follows that use)
    auto t = r.accumulator<f32>("t", {64, 128});
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        body(r, acc, mx, s[sA], s[sB], kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      after(r, acc, t);
      r.store(D.tile(m, n), r.convert<bf16>(acc));
    });
  });
  k.role("producer", warps(1), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt));
      });
    });
  });
  return k.build();
}
constexpr auto nothing = [](role&, auto, auto) {};

}  // namespace

// ---- the setmaxnreg pool ------------------------------------------------------------------------

TEST_CASE("analysis registers: the setmaxnreg pool is block threads x the entry cap, not the register file") {
  // 384 threads: entry cap 65536 / 384 = 170 -> 168; pool 384 x 168 = 64512.
  constexpr auto W = plan::plan_warps(split(40, 232));
  CHECK(W.entry_regs == 168);
  CHECK(W.regs_pool == 64512);
  // The sm_90a GEMM's 40 / 232 split takes the pool exactly: clean.
  const auto gemm = analyze(kernels::gemm_bf16_sm90());
  CHECK_FALSE(gemm.fired(rule_id::resource_register_file));
  CHECK(plan::plan_warps(kernels::gemm_bf16_sm90()).regs_after_setmaxnreg == plan::plan_warps(kernels::gemm_bf16_sm90()).regs_pool);
  CHECK_FALSE(analyze(split(40, 232)).fired(rule_id::resource_register_file));
  // 128 x 32 + 256 x 240 = 65536: fits the register file (the old check passed it), not the pool.
  const auto r = analyze(split(32, 240));
  INFO(analysis::to_text(r));
  const auto* d = find(r, rule_id::resource_register_file);
  REQUIRE(d != nullptr);
  CHECK(number(*d, "registers") == 65536);
  CHECK(number(*d, "pool") == 64512);
  CHECK(number(*d, "threads") == 384);
  CHECK(number(*d, "entry_regs") == 168);
  CHECK(d->path.view().find("role consumer") != std::string_view::npos);  // the role whose increase waits
  CHECK(d->note_count == 2);  // threads x registers per role
  CHECK(std::string_view(d->notes[1].text.view()).find("256 threads x 240 (regs) = 61440") != std::string_view::npos);
  CHECK(d->help.view().find("regs(232)") != std::string_view::npos);  // (64512 - 4096) / 256 = 236 -> 232
  // One register per thread over the pool is enough; the largest fitting split is clean.
  CHECK(analyze(split(24, 240)).fired(rule_id::resource_register_file) == false);  // 3072 + 61440 = 64512
  CHECK(analyze(split(32, 240)).fired(rule_id::resource_register_file));
}

TEST_CASE("analysis registers: roles without regs(n) hold the entry cap, an explicit setmaxnreg op counts") {
  // No role switches: the block holds exactly the pool.
  CHECK_FALSE(analyze(split(0, 0)).fired(rule_id::resource_register_file));
  // The producer keeps the entry cap (168): 128 x 168 + 256 x 232 > 64512.
  CHECK(analyze(split(0, 232)).fired(rule_id::resource_register_file));
  // The producer decreases with an explicit r.setmaxnreg(40): as regs(40).
  CHECK_FALSE(analyze(split(40, 232, 2, true)).fired(rule_id::resource_register_file));
  CHECK(analyze(split(48, 232, 2, true)).fired(rule_id::resource_register_file));
}

TEST_CASE("analysis registers: the k-means assignment split is what the pool allows") {
  // kernels/kmeans/assign.hpp: producer 40 (24 with 3+ consumer warpgroups), consumers what is left of
  // the pool (threads x the entry cap) in multiples of 8, at most 232. With 4 consumer warpgroups it
  // once took what was left of 65536 (120 > the pool's 112): the pool check flagged it.
  for (int wgs : {2, 3, 4}) {
    kernels::kmeans_assign_config c;
    c.wgs = wgs;
    c.rows = 64;
    const program p = kernels::kmeans_assign_sm90<bf16>(c);
    const auto W = plan::plan_warps(p);
    const int producer = wgs > 2 ? 24 : 40;
    const int pool = 128 * (wgs + 1) * W.entry_regs;
    const int fits = (pool - 128 * producer) / (128 * wgs) / 8 * 8;
    const int consumer = fits < 232 ? fits : 232;
    INFO("wgs " << wgs << ": the pool allows " << fits);
    CHECK(W.regs_pool == pool);
    CHECK(W.regs_after_setmaxnreg == 128 * producer + 128 * wgs * consumer);
    CHECK_FALSE(analyze(p).fired(rule_id::resource_register_file));
  }
}

// ---- dead accumulation --------------------------------------------------------------------------

TEST_CASE("analysis dead accumulation: overwrite() on every K step is reported at the MMA, with its loop") {
  const auto bad = analyze(gemm_with([](role& r, auto acc, auto, auto a, auto b, auto) { r.wgmma(acc, a, b).overwrite(); }, nothing));
  INFO(analysis::to_text(bad));
  const auto* d = find(bad, rule_id::dataflow_dead_accumulation);
  REQUIRE(d != nullptr);
  CHECK(count(bad, rule_id::dataflow_dead_accumulation) == 1);  // once per op, however many trips
  CHECK(number(*d, "mma_op") == d->op);                           // its own previous trip
  CHECK(number(*d, "loop_op") >= 0);
  CHECK(d->help.view().find("overwrite_on_first") != std::string_view::npos);
  CHECK(bad.errors == 1);
  // overwrite_on_first(kt): accumulates after the first trip; the store reads the result.
  const auto good = analyze(gemm_with([](role& r, auto acc, auto, auto a, auto b, auto kt) { r.wgmma(acc, a, b).overwrite_on_first(kt); }, nothing));
  INFO(analysis::to_text(good));
  CHECK(good.errors == 0);
  CHECK(good.warnings == 0);
}

TEST_CASE("analysis dead accumulation: a second overwriting MMA, a fill or a set between MMA and read") {
  // Two MMAs in one trip, the second overwriting: the first one's result is lost (no loop carries it).
  const auto two = analyze(gemm_with(
      [](role& r, auto acc, auto, auto a, auto b, auto kt) {
        r.wgmma(acc, a, b).overwrite_on_first(kt);
        r.wgmma(acc, a, b).overwrite();
      },
      nothing));
  INFO(analysis::to_text(two));
  const auto* d = find(two, rule_id::dataflow_dead_accumulation);
  REQUIRE(d != nullptr);
  CHECK(number(*d, "mma_op") == d->op - 1);
  CHECK(number(*d, "loop_op") == -1);
  // A zero after the K loop, before the store: the accumulated result is lost at the fill.
  const auto fill = analyze(gemm_with([](role& r, auto acc, auto, auto a, auto b, auto kt) { r.wgmma(acc, a, b).overwrite_on_first(kt); },
                                      [](role& r, auto acc, auto) { r.fill(acc, 0.0f); }));
  INFO(analysis::to_text(fill));
  REQUIRE(find(fill, rule_id::dataflow_dead_accumulation) != nullptr);
  // r.set(acc, expression without acc) overwrites; r.set(acc, acc * 2) reads first: clean.
  const auto set_over = analyze(gemm_with([](role& r, auto acc, auto, auto a, auto b, auto kt) { r.wgmma(acc, a, b).overwrite_on_first(kt); },
                                          [](role& r, auto acc, auto t) {
                                            r.fill(t, 1.0f);
                                            r.set(acc, t * 2.0f);
                                          }));
  CHECK(set_over.fired(rule_id::dataflow_dead_accumulation));
  const auto set_read = analyze(gemm_with([](role& r, auto acc, auto, auto a, auto b, auto kt) { r.wgmma(acc, a, b).overwrite_on_first(kt); },
                                          [](role& r, auto acc, auto) { r.set(acc, acc * 2.0f); }));
  INFO(analysis::to_text(set_read));
  CHECK_FALSE(set_read.fired(rule_id::dataflow_dead_accumulation));
}

TEST_CASE("analysis dead accumulation: a read between the MMAs keeps it clean (attention's S, k-means, GEMMs)") {
  // S overwritten every key block, read by a row reduction before the next: clean.
  const auto attn = analyze(gemm_with<true>(
      [](role& r, auto acc, auto mx, auto a, auto b, auto) {
        r.wgmma(acc, a, b).overwrite();
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.row_max(mx, acc);
      },
      nothing));
  INFO(analysis::to_text(attn));
  CHECK_FALSE(attn.fired(rule_id::dataflow_dead_accumulation));
  // The reference GEMM and the k-means assignment (overwrite on the first of several MMAs per
  // centroid tile, read by the argmin after the tile's MMAs).
  CHECK_FALSE(analyze(kernels::gemm_bf16_sm90()).fired(rule_id::dataflow_dead_accumulation));
  for (int parts : {1, 2, 4}) {
    kernels::kmeans_assign_config c;
    c.parts = parts;
    const auto km = analyze(kernels::kmeans_assign_sm90<bf16>(c));
    INFO(analysis::to_text(km));
    CHECK(km.errors == 0);
    CHECK_FALSE(km.fired(rule_id::dataflow_dead_accumulation));
  }
}

TEST_CASE("analysis resource.ctas-per-sm: n blocks' shared memory, the count's range and setmaxnreg, with the numbers") {
  // split(0, 0): a 2-stage pipeline of 32 KiB stages, 384 threads, no setmaxnreg
  program p = split(0, 0);
  const long long block = plan::plan_smem(p).total + targets::sm90a.limits.smem_reserved_per_block;
  p.launch.ctas_per_sm = 2;  // two fit
  CHECK(count(analyze(p), rule_id::resource_ctas_per_sm) == 0);
  p.launch.ctas_per_sm = 4;  // four blocks of ~65 KiB do not
  REQUIRE(4 * block > targets::sm90a.limits.smem_per_sm);
  {
    const auto r = analyze(p);
    const auto* d = find(r, rule_id::resource_ctas_per_sm);
    REQUIRE(d);
    CHECK(number(*d, "ctas_per_sm") == 4);
    CHECK(number(*d, "bytes_per_block") == block);
    CHECK(number(*d, "smem_per_sm") == targets::sm90a.limits.smem_per_sm);
    CHECK(d->help.view().find("declare ctas_per_sm(3)") != std::string_view::npos);
  }
  p.launch.ctas_per_sm = 40;  // past the 32 blocks an SM holds
  {
    const auto r = analyze(p);
    const auto* d = find(r, rule_id::resource_ctas_per_sm);
    REQUIRE(d);
    CHECK(number(*d, "limit") == 32);
  }
  {
    program t = split(0, 0, 2, false, 1);  // 384 threads, one 32 KiB stage: six blocks fit by shared memory
    t.launch.ctas_per_sm = 6;   // but not by threads: 6 x 384 > 2048
    REQUIRE(6 * (plan::plan_smem(t).total + targets::sm90a.limits.smem_reserved_per_block) <= targets::sm90a.limits.smem_per_sm);
    const auto r = analyze(t);
    const auto* d = find(r, rule_id::resource_ctas_per_sm);
    REQUIRE(d);
    CHECK(number(*d, "threads") == 384);
    CHECK(number(*d, "limit") == targets::sm90a.limits.max_threads_per_sm);
    CHECK(d->message.view().find("6 blocks of 384 threads need 2304") != std::string_view::npos);
    CHECK(d->help.view().find("declare ctas_per_sm(5)") != std::string_view::npos);
    t.launch.ctas_per_sm = 5;  // 1920 threads: fits
    CHECK(count(analyze(t), rule_id::resource_ctas_per_sm) == 0);
  }
  {
    // Two blocks of 384 threads leave 80 registers a thread (24 warps): a 64 x 128 f32 accumulator (64) and the
    // 24 for addresses do not fit; resource.register-tiles names the declaration and what one block would get.
    program t = split(0, 0, 2, false, 1);
    t.launch.ctas_per_sm = 2;
    const auto r = analyze(t);
    CHECK(count(r, rule_id::resource_ctas_per_sm) == 0);
    const auto* d = find(r, rule_id::resource_register_tiles);
    REQUIRE(d);
    CHECK(number(*d, "budget") == 80);
    CHECK(number(*d, "ctas_per_sm") == 2);
    bool named = false;
    for (int i = 0; i < d->note_count; ++i) named = named || d->notes[i].text.view().find("ctas_per_sm(2): 2 blocks of 12 warps, counted as 24 (registers go to warps 4 at a time), leave 80 registers a thread; one block would have 168") != std::string_view::npos;
    CHECK(named);
    CHECK(d->help.view().find("declare fewer ctas_per_sm") != std::string_view::npos);
    t.launch.ctas_per_sm = 1;  // one block: 168
    CHECK(count(analyze(t), rule_id::resource_register_tiles) == 0);
  }
  program q = split(40, 232);  // setmaxnreg divides one block's share of the register file
  q.launch.ctas_per_sm = 2;
  const auto r = analyze(q);
  const auto* d = find(r, rule_id::resource_ctas_per_sm);
  REQUIRE(d);
  CHECK(number(*d, "regs") == 40);
  q.launch.ctas_per_sm = 1;  // the default: nothing to check
  CHECK(count(analyze(q), rule_id::resource_ctas_per_sm) == 0);
}
