// Unit tests for cake/plan/barriers.hpp: every mbarrier object, its address and init count, and the
// tx bytes per pipeline stage (multicast and commit-based pipelines included).
#include <doctest/doctest.h>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;
using plan::barrier_origin;

TEST_CASE("barrier plan: sm_90a GEMM: full barriers expect one arrival and 48 KB, empty barriers 2 x 2") {
  constexpr program p = kernels::gemm_bf16_sm90();
  constexpr auto B = plan::plan_barriers(p);
  constexpr auto L = plan::plan_smem(p);
  REQUIRE(B.count == 8);
  const auto& pb = B.pipelines[0];
  CHECK(pb.full_base == 0);
  CHECK(pb.empty_base == 4);
  CHECK(pb.full_arrivals == 1);       // one producer warpgroup: its leader's arrive.expect_tx
  CHECK(pb.tx_bytes == 16384 + 32768);  // sA box + the whole multicast sB (each CTA receives all of it)
  CHECK(pb.multicast);
  CHECK(pb.empty_arrivals == 4);      // 2 consumer warpgroups x 2 CTAs (the multicast writes into both)
  for (int s = 0; s < 4; ++s) {
    const auto& full = B.objects[pb.full_base + s];
    const auto& empty = B.objects[pb.empty_base + s];
    CHECK(full.origin == barrier_origin::pipeline_full);
    CHECK(empty.origin == barrier_origin::pipeline_empty);
    CHECK(full.element == s);
    CHECK(full.source == 0);
    CHECK(full.arrivals == 1);
    CHECK(empty.arrivals == 4);
    CHECK(full.derived);
    CHECK(full.offset == L.barrier_offset + 8 * s);
    CHECK(empty.offset == L.barrier_offset + 8 * (4 + s));
  }
  CHECK_FALSE(B.overflow);
}

TEST_CASE("barrier plan: without multicast the empty count is the releasing units of one CTA") {
  const program p = [&] {
    auto k = kernel("k").target(sm_90a);
    auto A = k.input<bf16>("A", dims("M", "K"));
    (void)k.input<bf16>("B", dims("N", "K"));
    auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
    auto ab = k.pipeline("ab", stages(2)).carries(sA);
    k.role("p", warpgroups(1), [&](role& r) {
      r.loop(tiles("K", 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(0, kt));
      });
    });
    k.role("c", warpgroups(3), [&](role& r) {
      r.loop(tiles("K", 64), [&](auto) { r.release(ab, r.wait(ab)); });
    });
    return k.build();
  }();
  REQUIRE(p.errors.empty());
  const auto B = plan::plan_barriers(p);
  CHECK(B.pipelines[0].empty_arrivals == 3);
  CHECK(B.pipelines[0].full_arrivals == 1);
  CHECK(B.pipelines[0].tx_bytes == 16384);
  CHECK_FALSE(B.pipelines[0].multicast);
}

TEST_CASE("barrier plan: sm_100a GEMM: a TMA pipeline and a commit-based TMEM pipeline") {
  constexpr program p = kernels::gemm_bf16_sm100();
  constexpr auto B = plan::plan_barriers(p);
  REQUIRE(B.count == 10);
  const auto& ab = B.pipelines[0];
  CHECK(ab.full_base == 0);
  CHECK(ab.empty_base == 4);
  CHECK(ab.full_arrivals == 1);
  CHECK(ab.tx_bytes == 49152);
  CHECK(ab.empty_arrivals == 1);  // the MMA warp's tcgen05.commit
  CHECK_FALSE(ab.multicast);
  const auto& acc = B.pipelines[1];
  CHECK(acc.full_base == 8);
  CHECK(acc.empty_base == 9);
  CHECK(acc.full_arrivals == 1);  // filled by tcgen05.mma, completed by one commit
  CHECK(acc.tx_bytes == 0);       // no bytes: TMEM is not filled by TMA
  CHECK(acc.empty_arrivals == 1); // one epilogue warpgroup drains it
  CHECK(B.objects[8].origin == barrier_origin::pipeline_full);
  CHECK(B.objects[8].source == 1);
  CHECK(B.objects[9].offset == plan::plan_smem(p).barrier_offset + 72);
}

TEST_CASE("barrier plan: sm_80 GEMM has none") {
  constexpr auto B = plan::plan_barriers(kernels::gemm_bf16_sm80());
  CHECK(B.count == 0);
}

TEST_CASE("barrier plan: user barriers: declared counts kept, derived counts from the arriving units") {
  auto k = kernel("k").target(sm_100a).cluster(4);
  auto a = k.mbarrier("a");                    // derived
  auto b = k.mbarrier("b", arrivals(7), 3);   // declared, an array of 3
  auto c = k.mbarrier("c");                    // derived: remote arrivals and commits
  k.role("w", warps(3), [&](role& r) {
    r.arrive(a);
    r.arrive(c).remote();  // 3 warps x 4 CTAs
  });
  k.role("g", warpgroups(2), [&](role& r) {
    r.arrive_expect_tx(a, 1024);  // 2 warpgroups
    r.wait(a);                     // waits do not count
    r.arrive(b[0]);
  });
  k.role("m", warps(1), [&](role& r) { r.tcgen05_commit(c); });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto B = plan::plan_barriers(p);
  CHECK(B.count == 5);
  CHECK(B.user_base[0] == 0);
  CHECK(B.user_base[1] == 1);
  CHECK(B.user_base[2] == 4);
  CHECK(B.objects[0].arrivals == 3 + 2);
  CHECK(B.objects[0].derived);
  for (int e = 0; e < 3; ++e) {
    CHECK(B.objects[1 + e].arrivals == 7);
    CHECK_FALSE(B.objects[1 + e].derived);
    CHECK(B.objects[1 + e].element == e);
    CHECK(B.objects[1 + e].origin == barrier_origin::user);
  }
  CHECK(B.objects[4].arrivals == 3 * 4 + 1);
  CHECK(plan::derived_user_arrivals(p, 0) == 5);
}

TEST_CASE("barrier plan: tx bytes follow the parts each unit loads, every unit arrives") {
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  (void)k.input<bf16>("B", dims("N", "K"));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA);
  k.role("p", warps(2), [&](role& r) {
    r.loop(tiles("K", 64), [&](auto kt) {
      auto s = r.acquire(ab);
      r.tma_load(s[sA].rows(r.warp(), 2), A.tile(r.warp(), kt));  // each warp loads 64 of the 128 rows
    });
  });
  k.role("c", warpgroups(1), [&](role& r) { r.release(ab, r.wait(ab)); });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto B = plan::plan_barriers(p);
  CHECK(B.pipelines[0].full_arrivals == 2);
  CHECK(B.pipelines[0].tx_bytes == 8192);  // per arriving unit
  CHECK(plan::tx_bytes_of_acquire(p, 1) == 8192);
  CHECK(plan::tx_bytes_of_acquire(p, 0) == 0);  // op 0 is the loop
}

TEST_CASE("barrier plan: a role that acquires and releases in several ops arrives once per phase") {
  // The k-means assignment's form: a prologue acquire, then two acquires per iteration (two 64-column
  // parts of one tile), each of a different stage; the consumers wait and release each part. Counting
  // every op (the plan did before) gave 3 producer arrivals per phase: the analyzer reported the
  // mismatch (sync.arrival-count), and the kernel would have waited forever.
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(4)).carries(sA);
  k.role("c", warpgroups(2), [&](role& r) {
    r.release(ab, r.wait(ab));
    r.loop(tiles("K", 128), [&](auto) {
      auto s0 = r.wait(ab);
      auto s1 = r.wait(ab);
      r.release(ab, s0);
      r.release(ab, s1);
    });
  });
  k.role("p", warpgroups(1), [&](role& r) {
    auto first = r.acquire(ab);
    r.tma_load(first[sA], A.tile(0, 0));
    r.loop(tiles("K", 128), [&](auto kt) {
      auto s0 = r.acquire(ab);
      r.tma_load(s0[sA], A.tile(0, kt * 2));
      auto s1 = r.acquire(ab);
      r.tma_load(s1[sA], A.tile(0, kt * 2 + 1));
    });
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto B = plan::plan_barriers(p);
  CHECK(B.pipelines[0].full_arrivals == 1);   // one producer warpgroup, whichever op takes the stage
  CHECK(B.pipelines[0].empty_arrivals == 2);  // two consumer warpgroups
  CHECK(B.pipelines[0].tx_bytes == 16384);
}

TEST_CASE("barrier plan: a stage cp.async fills expects one arrival per copying thread (no tx bytes)") {
  // Each thread of the producer's units issues cp.async.mbarrier.arrive.noinc after its last copy into the
  // stage: .noinc arrivals are counted in the init count (hardware-facts §1). A warpgroup: 128 per unit; in
  // an alternating walk one unit takes each point, so one unit's threads.
  auto build = [](units_t producer, bool alternate) {
    auto k = kernel("k").target(sm_80);
    auto [M, K] = k.dims("M", "K");
    auto A = k.input<bf16>("A", dims(M, K));
    auto mk = k.parallel(tiles(M, 64));
    auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
    auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128);
    auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
    k.role("p", producer, [&](role& r) {
      auto body = [&](auto m) {
        r.loop(tiles(K, 64), [&](auto kt) {
          auto s = r.acquire(ab);
          r.cp_async(s[sA], A.tile(m, kt));
          r.cp_async(s[sB], A.tile(m, kt));  // the last copy: where every thread arrives
        });
      };
      if (alternate) r.for_each(alternating(mk), body);
      else r.for_each(mk, body);
    });
    k.role("c", warps(2), [&](role& r) {
      r.for_each(mk, [&](auto) {
        r.loop(tiles(K, 64), [&](auto) { r.release(ab, r.wait(ab)); });
      });
    });
    return k.build();
  };
  const program two_warps = build(warps(2), false);
  REQUIRE(two_warps.errors.empty());
  const int acquire = find_op(two_warps, op_kind::pipeline_acquire);
  CHECK(plan::cp_async_fill_of_acquire(two_warps, acquire) == find_op(two_warps, op_kind::cp_async, 1));
  CHECK(plan::tx_bytes_of_acquire(two_warps, acquire) == 0);
  CHECK(plan::full_arrivals_per_unit(two_warps, acquire) == 32);
  auto B = plan::plan_barriers(two_warps);
  CHECK(B.pipelines[0].full_arrivals == 64);  // 2 warps x 32 threads
  CHECK(B.pipelines[0].empty_arrivals == 2);
  CHECK(B.pipelines[0].tx_bytes == 0);
  CHECK(B.objects[B.pipelines[0].full_base + 2].arrivals == 64);
  const auto a = plan::role_arrivals(two_warps, 0, true);
  CHECK(a.arrivals[0] == 64);
  CHECK(a.per_thread[0]);
  CHECK_FALSE(plan::role_arrivals(two_warps, 0, false).per_thread[1]);
  CHECK(plan::plan_barriers(build(warpgroups(1), false)).pipelines[0].full_arrivals == 128);
  CHECK(plan::plan_barriers(build(warps(2), true)).pipelines[0].full_arrivals == 32);  // one unit per point
}

TEST_CASE("barrier plan: more objects than the plan holds sets overflow") {
  auto k = kernel("k");
  const char* names[] = {"b0", "b1", "b2", "b3"};
  for (const char* n : names) k.mbarrier(n, arrivals(1), 32);  // 128 objects
  k.role("r", warps(1), [](role&) {});
  const program p = k.build();
  const auto B = plan::plan_barriers(p);
  CHECK(B.overflow);
  CHECK(B.count == plan::barrier_plan::max_objects);
  CHECK(plan::plan_smem(p).barrier_count == 128);  // the smem plan still reserves all of them
}
