// mbarrier pipelines on sm_80 (issue 9): a pipeline filled by cp.async (tests/lowering/sm80_pipeline.hpp, also
// run on the GPU by tests/gpu/test_sm80_pipeline.cpp), a pipeline filled by ordinary stores and completed
// by r.commit, and a user mbarrier initialized by the schedule, each lowered and assembled by NVRTC for sm_80
// with no spills; the PTX holds the sm_80 mbarrier forms and none of the sm_90-only ones. The cp.async
// schedule also lowers for sm_90a, unchanged.
#include <string>

#include "lower_check.hpp"
#include "tests/lowering/sm80_pipeline.hpp"

using namespace cake;
using lower_check::count;
using lower_check::has;

namespace {

// Instructions (and state spaces) sm_80 lacks: ptxas refuses them for sm_80 ("requires .target sm_90 or
// higher"); none may appear in an sm_80 kernel.
void no_sm90_instruction(const std::string& ptx) {
  for (const char* needle : {"mbarrier.try_wait", "expect_tx", "complete_tx", "cp.async.bulk", "fence.proxy.async", "fence.mbarrier_init",
                             "mapa.", "shared::cluster", "barrier.cluster", "elect.sync", "setmaxnreg", "griddepcontrol", "wgmma", "stmatrix",
                             ".release.", ".acquire.", ".relaxed."})
    CHECK_MESSAGE(!has(ptx, needle), "sm_80 PTX holds `" << needle << "`");
}

// A pipeline whose producer fills each stage with ordinary stores (a register tile from global memory, then
// st.shared) and completes it with r.commit; after their walks the consumer tells the producer it is done
// through a user mbarrier.
constexpr program store_filled_pipeline() {
  auto k = kernel("pipe80_commit").target(sm_80);
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<f32>("X", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  auto rows = k.parallel(tiles(M, 16));
  auto sX = k.smem<f32>("sX", {16, 64});
  auto p = k.pipeline("p", stages(2)).carries(sX);
  auto done = k.mbarrier("done");
  k.role("load", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {16, 64});
    r.for_each(rows, [&](auto m) {
      r.loop(tiles(N, 64), [&](auto j) {
        auto s = r.acquire(p);
        r.load(x, X.tile(m, j));
        r.store(s[sX], x);
        r.commit(p, s);
      });
    });
    r.wait(done);
  });
  k.role("use", warps(1), [&](role& r) {
    auto y = r.fragment<f32>("y", {16, 64});
    r.for_each(rows, [&](auto m) {
      r.loop(tiles(N, 64), [&](auto j) {
        auto s = r.wait(p);
        r.load(y, s[sX]);
        r.release(p, s);
        r.set(y, y * y);
        r.store(Y.tile(m, j), y);
      });
    });
    r.arrive(done);
  });
  return k.build();
}

// A user mbarrier the schedule initializes itself (manual_barrier_init): one warp initializes it, a CTA
// barrier of both roles makes the init visible (sm_80 has no fence.mbarrier_init: no cluster, no async
// proxy), the producer arrives, the consumer waits.
constexpr program manual_init_barrier() {
  auto k = kernel("mbar80_manual").target(sm_80).manual_barrier_init();
  auto ready = k.mbarrier("ready");
  auto both = k.named_barrier("both");
  k.role("producer", warps(1), [&](role& r) {
    r.init(ready, 1);
    r.sync(both);
    r.arrive(ready);
  });
  k.role("consumer", warps(1), [&](role& r) {
    r.sync(both);
    r.wait(ready);
  });
  return k.build();
}

}  // namespace

TEST_CASE("sm_80: a pipeline filled by cp.async lowers to mbarrier.init, cp.async.mbarrier.arrive.noinc and test_wait") {
  constexpr program p = cake_tests::sm80_cp_async_pipeline();
  static_assert(p.errors.empty());
  REQUIRE(p.target == target_id::sm_80);
  const auto b = lower_check::lower_and_build(p);
  const std::string& ptx = b.ptx();
  const std::string& src = b.source();
  CHECK(has(ptx, ".target sm_80"));
  CHECK(count(ptx, "mbarrier.init.shared::cta.b64") == 6);  // 3 stages x full / empty
  CHECK(has(ptx, "cp.async.cg.shared.global"));
  CHECK(has(ptx, "cp.async.mbarrier.arrive.noinc.shared::cta.b64"));
  CHECK(has(ptx, "mbarrier.test_wait.parity.shared::cta.b64"));
  CHECK(has(ptx, "mbarrier.arrive.shared::cta.b64"));
  CHECK(has(ptx, "bar.warp.sync"));  // the consumer warp meets before its leader releases
  no_sm90_instruction(ptx);
  // The derived init counts: 'full' one arrival per thread of the producer warp (its noinc arrives), 'empty'
  // one per consumer warp (its leader's release).
  const auto& pb = b.lowered.plan.barriers.pipelines[0];
  CHECK(pb.full_arrivals == 32);
  CHECK(pb.empty_arrivals == 2);
  CHECK(pb.tx_bytes == 0);
  CHECK(has(src, "cake_dev::mbar_init(smem + " + std::to_string(b.lowered.plan.barriers.objects[pb.full_base].offset) + "u, 32u);  // p.full[0]"));
  CHECK(has(src, "cake_dev::mbar_init(smem + " + std::to_string(b.lowered.plan.barriers.objects[pb.empty_base].offset) + "u, 2u);  // p.empty[0]"));
  // Every producer thread waits for 'empty' (it writes the stage), not only its leader; the waits spin on test_wait.
  CHECK(has(src, "cake_dev::mbar_wait_test((smem + " + std::to_string(b.lowered.plan.barriers.objects[pb.empty_base].offset) + "u + 8u * slot2), pl_p_phase ^ 1u);"));
  CHECK_FALSE(has(src, "cake_dev::mbar_wait("));
  CHECK_FALSE(has(src, "fence.proxy.async"));
  CHECK(b.lowered.block_threads == 96);
}

TEST_CASE("sm_80: the cp.async pipeline with 2 stages and the hang trap lowers (test_wait with a deadline)") {
  const program p = cake_tests::sm80_cp_async_pipeline(target_id::sm_80, 2);
  REQUIRE(p.errors.empty());
  lower::emit_options o;
  o.hang_timeout_ns = 2000000000ull;
  const auto l = lower::lower(p, o);
  REQUIRE_MESSAGE(l.ok, l.error);
  CHECK(has(l.source, "cake_dev::mbar_wait_test_until("));
  const auto art = jit::build(l.source, l.entry, "sm_80");
  REQUIRE_MESSAGE(art.ok, art.diagnostics());
  CHECK(has(art.ptx, "%globaltimer"));
  CHECK(has(art.ptx, "mbarrier.test_wait.parity.shared::cta.b64"));
  CHECK(art.resources.spill_stores == 0);
  no_sm90_instruction(art.ptx);
}

TEST_CASE("sm_80: deferred releases (later(1)) and release_pending of a cp.async pipeline lower") {
  constexpr program p = cake_tests::sm80_cp_async_pipeline(target_id::sm_80, 3, true);
  static_assert(p.errors.empty());
  const auto b = lower_check::lower_and_build(p);
  CHECK(has(b.source(), "pend_last"));
  CHECK(has(b.source(), "// the stages still held"));
  CHECK(has(b.ptx(), "cp.async.mbarrier.arrive.noinc.shared::cta.b64"));
  CHECK(has(b.ptx(), "mbarrier.arrive.shared::cta.b64"));
  CHECK(has(b.ptx(), "mbarrier.test_wait.parity.shared::cta.b64"));
  no_sm90_instruction(b.ptx());
}

TEST_CASE("sm_90a: the same cp.async pipeline schedule lowers, waiting with try_wait") {
  constexpr program p = cake_tests::sm80_cp_async_pipeline(target_id::sm_90a);
  static_assert(p.errors.empty());
  const auto b = lower_check::lower_and_build(p);
  CHECK(has(b.ptx(), ".target sm_90a"));
  CHECK(has(b.ptx(), "cp.async.mbarrier.arrive.noinc.shared::cta.b64"));
  CHECK(has(b.ptx(), "mbarrier.try_wait.parity.shared::cta.b64"));
  CHECK(b.lowered.plan.barriers.pipelines[0].full_arrivals == 32);
}

TEST_CASE("sm_80: a pipeline filled by stores and completed by r.commit, and a user mbarrier, lower") {
  constexpr program p = store_filled_pipeline();
  static_assert(p.errors.empty());
  const auto b = lower_check::lower_and_build(p);
  const std::string& ptx = b.ptx();
  CHECK(has(ptx, "mbarrier.init.shared::cta.b64"));
  CHECK(has(ptx, "mbarrier.test_wait.parity.shared::cta.b64"));
  CHECK(count(ptx, "mbarrier.arrive.shared::cta.b64") >= 3);  // commit, release, the user arrive
  CHECK_FALSE(has(ptx, "cp.async"));
  no_sm90_instruction(ptx);
  const auto& pb = b.lowered.plan.barriers.pipelines[0];
  CHECK(pb.full_arrivals == 1);   // the producer warp's commit
  CHECK(pb.empty_arrivals == 1);  // the consumer warp's release
  CHECK(count(b.source(), "__syncwarp();") >= 3);  // before the commit, the release and the user arrive
}

TEST_CASE("sm_80: a user mbarrier the schedule initializes itself lowers (mbarrier_init, arrive, wait)") {
  constexpr program p = manual_init_barrier();
  static_assert(p.errors.empty());
  const auto b = lower_check::lower_and_build(p);
  CHECK(count(b.ptx(), "mbarrier.init.shared::cta.b64") == 1);
  CHECK(has(b.ptx(), "mbarrier.arrive.shared::cta.b64"));
  CHECK(has(b.ptx(), "mbarrier.test_wait.parity.shared::cta.b64"));
  no_sm90_instruction(b.ptx());
}

TEST_CASE("the op table lowers mbarriers and pipelines on every target") {
  const auto targets = lower_check::lowering_targets({op_kind::mbarrier_init, op_kind::mbarrier_arrive, op_kind::mbarrier_wait, op_kind::pipeline_acquire,
                                                     op_kind::pipeline_wait, op_kind::pipeline_release, op_kind::pipeline_commit, op_kind::pipeline_held,
                                                     op_kind::pipeline_flush});
  CHECK(targets.size() == 3);
  CHECK_FALSE(info(op_kind::mbarrier_arrive_expect_tx).lowered(target_id::sm_80));  // expect_tx: sm_90 hardware
  CHECK_FALSE(target_of(target_id::sm_80).admitted(feature::mbarrier_try_wait));
}
