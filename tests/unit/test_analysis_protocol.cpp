// The protocol executor and the report around it: how loops are bounded, what the reference kernels
// yield, how builder findings and malformed Programs are reported, how verdicts per rule are counted.
#include <doctest/doctest.h>

#include <cake/cake.hpp>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "tests/lowering/sm80_pipeline.hpp"

using namespace cake;
using analysis::rule_id;
using analysis::rule_status;

namespace {

// A one-stage handoff: the producer arrives `per_phase` times per iteration on a barrier declared
// for `declared` arrivals; a 'done' barrier holds the producer back.
constexpr program handoff(int declared, int per_phase, bool back_pressure = true) {
  auto k = kernel("handoff").target(sm_90a);
  auto K = k.dim("K");
  auto ready = k.mbarrier("ready", arrivals(declared));
  auto done = k.mbarrier("done");
  k.role("producer", warps(per_phase), [&](role& r) {
    r.loop(tiles(K, 64), [&](auto) {
      r.arrive(ready);
      if (back_pressure) r.wait(done);
    });
  });
  k.role("consumer", warps(1), [&](role& r) {
    r.loop(tiles(K, 64), [&](auto) {
      r.wait(ready);
      r.arrive(done);
    });
  });
  return k.build();
}

// A causal-style GEMM mainloop: output tile row m reads K blocks 0..m only (as attention reads key
// blocks up to the diagonal). Producer and consumer loop min(m + 1, tiles(K, 64)) trips, unless
// `consumer_full` makes the consumer loop all tiles(K, 64) blocks, or `producer_full` the producer.
constexpr program causal(bool producer_full = false, bool consumer_full = false) {
  auto k = kernel("causal").target(sm_90a).persistent();
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto mn = k.parallel(tiles(M, 128), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
  auto bound = [&](auto m, bool full) { return full ? loop_extent(tiles(K, 64)) : min(m + 1, tiles(K, 64)); };
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(bound(m, producer_full), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt));
      });
    });
  });
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(bound(m, consumer_full), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.store(D.tile(m * 2 + r.warpgroup(), n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}

const analysis::diagnostic* find(const analysis::report& r, rule_id id) {
  for (const auto& d : r.diagnostics)
    if (d.rule == id) return &d;
  return nullptr;
}

}  // namespace

TEST_CASE("analysis protocol: the reference kernels have no errors, sm_90a warns about its last TMA stores") {
  const auto r80 = analyze(kernels::gemm_bf16_sm80());
  const auto r90 = analyze(kernels::gemm_bf16_sm90());
  const auto r100 = analyze(kernels::gemm_bf16_sm100());
  INFO(analysis::to_text(r80) << analysis::to_text(r90) << analysis::to_text(r100));
  CHECK(r80.errors == 0);
  CHECK(r90.errors == 0);
  CHECK(r100.errors == 0);
  CHECK(r80.warnings == 0);
  CHECK(r100.warnings == 0);
  // Lowering drains committed TMA stores at the end of the role: nothing is pending at exit.
  CHECK(r90.warnings == 0);
  CHECK_FALSE(r90.fired(rule_id::dataflow_store_pending_at_exit));
  // Dynamic loops ran for the deepest ring + 2 trips (4 stages -> 6) and once more with 1 trip.
  CHECK(r90.k_trips == 6);
  CHECK(r90.tiles == 2);
  CHECK(r80.tiles == 1);  // not persistent: one tile per CTA
  CHECK(r90.protocol_runs == 2);
  CHECK(r90.protocol_steps > 300);
}

TEST_CASE("analysis protocol: trip counts and tiles are parameters") {
  analysis::analysis_options opt;
  opt.k_trips = 9;
  opt.single_trip_run = false;
  opt.tiles = 3;
  const auto a = analyze(kernels::gemm_bf16_sm90(), opt);
  const auto b = analyze(kernels::gemm_bf16_sm90());
  CHECK(a.k_trips == 9);
  CHECK(a.tiles == 3);
  CHECK(a.protocol_runs == 1);
  CHECK(a.protocol_steps > b.protocol_steps / 2);
  CHECK(a.errors == 0);
  bool noted = false;
  for (const auto& n : a.coverage)
    noted = noted || (n.text.view().find("dims were given 9 blocks") != std::string_view::npos &&
                      n.text.view().find("the persistent walk 3 points along axis 0") != std::string_view::npos);
  CHECK(noted);
}

TEST_CASE("analysis protocol: causal loop bounds are evaluated per tile, producer and consumer agree") {
  const program p = causal();
  REQUIRE(p.errors.empty());
  analysis::analysis_options opt;
  opt.k_trips = 6;
  opt.single_trip_run = false;
  opt.tiles = 3;  // the persistent walk visits m = 0, 1, 2: 1 + 2 + 3 K blocks, not 3 x 6
  const auto r = analyze(p, opt);
  INFO(analysis::to_text(r));
  CHECK(r.errors == 0);
  CHECK(r.protocol_runs == 1);
  // The same schedule with full loops on both sides runs 18 K blocks: measurably more steps.
  const auto full = analyze(causal(true, true), opt);
  INFO(analysis::to_text(full));
  CHECK(full.errors == 0);
  CHECK(r.protocol_steps < full.protocol_steps);
  // With the default options (the deepest ring + 2 trips, then 1 trip) it is clean too.
  CHECK(analyze(p).errors == 0);
}

TEST_CASE("analysis protocol: producer and consumer that disagree on a causal bound are reported") {
  analysis::analysis_options opt;
  opt.k_trips = 6;
  opt.single_trip_run = false;
  opt.tiles = 3;
  // The consumer waits for all 6 K blocks of tile 0 while the producer fills min(m + 1, 6) of them.
  const auto starved = analyze(causal(false, true), opt);
  INFO(analysis::to_text(starved));
  CHECK(starved.errors > 0);
  CHECK((starved.fired(rule_id::sync_deadlock) || starved.fired(rule_id::sync_arrival_count)));
  // The producer fills 6 blocks per tile while the consumer drains min(m + 1, 6): the ring stays full.
  const auto flooded = analyze(causal(true, false), opt);
  INFO(analysis::to_text(flooded));
  CHECK(flooded.errors > 0);
  CHECK((flooded.fired(rule_id::sync_deadlock) || flooded.fired(rule_id::sync_arrival_count)));
  // The default options find it too.
  CHECK(analyze(causal(false, true)).errors > 0);
  CHECK(analyze(causal(true, false)).errors > 0);
}

TEST_CASE("analysis protocol: arrival counts per phase against the barrier's count") {
  CHECK(analyze(handoff(1, 1)).errors == 0);
  CHECK(analyze(handoff(2, 2)).errors == 0);  // two warps arrive: two arrivals per phase
  // Declared 2, one arrival per phase: the consumer's wait never completes.
  const auto low = analyze(handoff(2, 1));
  const auto* d = find(low, rule_id::sync_arrival_count);
  REQUIRE(d != nullptr);
  CHECK(low.errors == 1);
  CHECK(d->numbers[0].value == 2);  // init_count
  CHECK(d->numbers[1].value == 1);  // arrivals
  // Declared 1, two arrivals per phase: phases complete twice as often as the consumer waits.
  const auto high = analyze(handoff(1, 2));
  CHECK(high.fired(rule_id::sync_phase_aliasing));
}

TEST_CASE("analysis protocol: a derived count that the phases do not meet says which arrivals it counted") {
  // Derived counts are one arrival per unit per arrive op: a role that arrives in two ops (one inside the
  // loop, one after it) is counted twice per phase, but each phase gets one. The note names both terms.
  auto k = kernel("derived").target(sm_90a);
  auto ready = k.mbarrier("ready");
  auto done = k.mbarrier("done");
  k.role("producer", warps(1), [&](role& r) {
    r.loop(4, [&](auto) {
      r.arrive(ready);
      r.wait(done);
    });
    r.arrive(ready);
  });
  k.role("consumer", warps(1), [&](role& r) {
    r.loop(4, [&](auto) {
      r.wait(ready);
      r.arrive(done);
    });
  });
  const auto rep = analyze(k.build());
  INFO(analysis::to_text(rep));
  const auto* d = find(rep, rule_id::sync_arrival_count);
  REQUIRE(d != nullptr);
  bool explained = false;
  for (const auto& n : d->notes)
    explained = explained || n.text.view().find("count 2 derived: 1 unit of role 'producer' (op#1) + 1 of 'producer' (op#3)") != std::string_view::npos;
  CHECK(explained);
}

namespace {
// A GEMM-like consumer with its sync ops right (0), its release right after the wait (1), or acquire
// used where it waits for data (2).
program misplaced_sync(int variant) {
  auto k = kernel("mis").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto t = k.parallel(tiles(M, 64), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(t, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = variant == 2 ? r.acquire(ab) : r.wait(ab);
        if (variant == 1) r.release(ab, s);
        r.wgmma_fence();
        r.wgmma(acc, s[sA], s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        if (variant != 1) r.release(ab, s);
      });
      r.store(D.tile(m, n), r.convert<bf16>(acc));
    });
  });
  k.role("load", warps(1), [&](role& r) {
    r.for_each(t, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt));
      });
    });
  });
  return k.build();
}
bool has_note(const analysis::diagnostic* d, std::string_view text) {
  if (!d) return false;
  for (const auto& n : d->notes)
    if (n.text.view().find(text) != std::string_view::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("analysis protocol: a hazard caused by a misplaced sync op names that op as the likely cause") {
  CHECK(analyze(misplaced_sync(0)).errors == 0);
  // The release right after the wait: the producer refills the stage while the wgmma may read it.
  const auto early = analyze(misplaced_sync(1));
  INFO(analysis::to_text(early));
  CHECK(has_note(find(early, rule_id::dataflow_war), "likely cause: op#3 releases the stage before this read (op#5) in program order"));
  // acquire where the consumer waits for data: its read is not ordered after the fill.
  const auto acquired = analyze(misplaced_sync(2));
  INFO(analysis::to_text(acquired));
  CHECK(has_note(find(acquired, rule_id::dataflow_race), "likely cause: op#2 takes this stage with acquire, which waits for an empty stage"));
}

TEST_CASE("analysis protocol: a derived pipeline count is explained per role") {
  // The plan's count for a pipeline is per role (a role arrives once per stage, whichever op takes it);
  // the explanation uses the same terms (plan::role_arrivals).
  constexpr program p = kernels::gemm_bf16_sm90();
  constexpr auto B = plan::plan_barriers(p);
  analysis::fixed_text<168> t;
  analysis::proto::write_derived_count(t, p, B, B.objects[B.pipelines[0].empty_base]);
  INFO(t.view());
  CHECK(t.view().find("count 4 derived: 2 units of role 'consumer'") != std::string_view::npos);
  CHECK(t.view().find("x 2 CTAs (multicast)") != std::string_view::npos);
}

TEST_CASE("analysis protocol: a pipeline cp.async fills runs clean, its count explained per thread") {
  // tests/lowering/sm80_pipeline.hpp: a producer warp copies stages with cp.async, two consumer warps wait
  // and release; the copies complete on 'full' through each thread's noinc arrive, so the consumers' reads
  // are ordered after them (no dataflow.race) and nothing deadlocks, on sm_80 and sm_90a.
  for (target_id t : {target_id::sm_80, target_id::sm_90a}) {
    const program p = cake_tests::sm80_cp_async_pipeline(t);
    const auto r = analyze(p);
    INFO(analysis::to_text(r));
    CHECK(r.errors == 0);
    CHECK(r.warnings == 0);
    const auto B = plan::plan_barriers(p);
    analysis::fixed_text<220> text;
    analysis::proto::write_derived_count(text, p, B, B.objects[B.pipelines[0].full_base]);
    INFO(text.view());
    CHECK(text.view().find("count 32 derived: 32 threads of role 'load' (op#2)") != std::string_view::npos);
    CHECK(text.view().find("each thread whose cp.async copies fill it") != std::string_view::npos);
  }
}

TEST_CASE("analysis protocol: a producer without back-pressure aliases phases only when it runs ahead") {
  CHECK(analyze(handoff(1, 1, false)).fired(rule_id::sync_phase_aliasing));
  analysis::analysis_options one;
  one.k_trips = 1;
  one.single_trip_run = false;
  CHECK_FALSE(analyze(handoff(1, 1, false), one).fired(rule_id::sync_phase_aliasing));
}

TEST_CASE("analysis protocol: a deadlock lists every blocked unit with what it waits for") {
  auto k = kernel("stuck").target(sm_90a);
  auto a = k.mbarrier("a");
  auto b = k.mbarrier("b");
  k.role("x", warps(2), [&](role& r) {
    r.wait(a);
    r.arrive(b);
  });
  k.role("y", warps(1), [&](role& r) {
    r.wait(b);
    r.arrive(a);
  });
  const auto rep = analyze(k.build());
  const auto* d = find(rep, rule_id::sync_deadlock);
  REQUIRE(d != nullptr);
  CHECK(d->op == 0);
  CHECK(d->message.view().find("role 'x' warp 0 at op#0 mbarrier_wait waits for phase 0 of 'a' (0 of 1 arrivals)") != std::string_view::npos);
  REQUIRE(d->note_count == 2);
  CHECK(d->notes[0].text.view().find("role 'x' warp 1") != std::string_view::npos);
  CHECK(d->notes[1].text.view().find("role 'y' at op#2 mbarrier_wait waits for phase 0 of 'b' (0 of 2 arrivals)") != std::string_view::npos);
}

TEST_CASE("analysis protocol: builder findings of a run-time build are diagnostics at the builder call") {
  auto k = kernel("runtime_build").target(sm_90a);
  k.role("a", warps(1), regs(36), [&](role& r) { r.fence_proxy_async(); });
  const program p = k.build();
  REQUIRE(p.errors.size() >= 1);
  const auto r = analyze(p);
  // resource.setmaxnreg-value is also re-checked by the analyzer: reported once, in the analyzer's words
  int n = 0;
  for (const auto& d : r.diagnostics) n += d.rule == rule_id::resource_setmaxnreg_value;
  CHECK(n == 1);
  // a builder-only finding keeps the builder's message with its value
  auto k2 = kernel("runtime_build").target(sm_90a);
  k2.role("a", warps(1), [&](role& r) { r.wgmma_wait(9); });
  const auto r2 = analyze(k2.build());
  REQUIRE(r2.diagnostics.size() == 1);
  CHECK(r2.diagnostics[0].rule == rule_id::ir_wait_count);
  CHECK(r2.diagnostics[0].message.view() == "a wait_group count is 0..7 (the count: 9)");
  CHECK(r2.diagnostics[0].loc.line == __LINE__ - 5);
  // an ir.* finding: nothing else is analyzed, and the analyzer's rules are not counted as passed
  CHECK(r2.status[static_cast<int>(rule_id::sync_deadlock)] == rule_status::not_run);
  CHECK(r2.status[static_cast<int>(rule_id::ir_wait_count)] == rule_status::failed);
}

TEST_CASE("analysis protocol: a malformed Program is reported, not read out of bounds") {
  auto p = kernels::gemm_bf16_sm90();
  p.ops[3].d.index = 200;  // the TMA load's destination region
  const auto r = analyze(p);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == rule_id::ir_malformed);
  CHECK(r.diagnostics[0].op == 3);
  auto q = kernels::gemm_bf16_sm90();
  q.ops[3].parent = 7;  // a loop that does not enclose it
  CHECK(analyze(q).fired(rule_id::ir_malformed));
}

TEST_CASE("analysis protocol: verdicts per rule, coverage notes make a rule partial, never passed") {
  const auto r = analyze(kernels::gemm_bf16_sm90());
  CHECK(r.status[static_cast<int>(rule_id::dataflow_store_pending_at_exit)] != rule_status::failed);
  CHECK(r.status[static_cast<int>(rule_id::dataflow_war)] == rule_status::partial);  // cluster modelled in step
  CHECK(r.status[static_cast<int>(rule_id::sync_deadlock)] == rule_status::passed);
  CHECK(r.status[static_cast<int>(rule_id::memory_operand_space)] == rule_status::not_run);
  CHECK(r.count(rule_status::passed) + r.count(rule_status::failed) + r.count(rule_status::partial) + r.count(rule_status::not_run) ==
        analysis::rule_count);
  const auto single = analyze(kernels::gemm_bf16_sm90({.cluster_m = 1}));
  CHECK(single.status[static_cast<int>(rule_id::dataflow_war)] == rule_status::passed);
}

TEST_CASE("analysis protocol: the plan's numbers are read, not recomputed") {
  // resource.smem-overflow itemises plan::plan_smem: offsets and bytes per region as the plan has them.
  auto p = kernels::gemm_bf16_sm90({.stages = 8});
  const auto plan = plan::plan_smem(p);
  const auto r = analyze(p);
  const auto* d = find(r, rule_id::resource_smem_overflow);
  REQUIRE(d != nullptr);
  CHECK(d->numbers[0].value == plan.total);
  CHECK(d->numbers[1].value == plan.limit);
  CHECK(d->notes[1].text.view().find("at offset " + std::to_string(plan.regions[1].offset)) != std::string_view::npos);
}
