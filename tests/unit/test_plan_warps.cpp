// Unit tests for cake/plan/warps.hpp: roles laid out in declaration order without padding, block size,
// the register cap at entry and the registers after setmaxnreg.
#include <doctest/doctest.h>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

TEST_CASE("warp plan: sm_90a GEMM: producer warpgroup, two consumer warpgroups, setmaxnreg budgets") {
  constexpr auto W = plan::plan_warps(kernels::gemm_bf16_sm90());
  REQUIRE(W.role_count == 2);
  CHECK(W.roles[0].first_warp == 0);
  CHECK(W.roles[0].warps == 4);
  CHECK(W.roles[0].threads == 128);
  CHECK(W.roles[0].units == 1);
  CHECK(W.roles[0].threads_per_unit == 128);
  CHECK(W.roles[0].regs == 40);
  CHECK(W.roles[1].first_warp == 4);
  CHECK(W.roles[1].first_thread == 128);
  CHECK(W.roles[1].warps == 8);
  CHECK(W.roles[1].units == 2);
  CHECK(W.roles[1].regs == 232);
  CHECK(W.roles[0].warpgroup_aligned);
  CHECK(W.roles[1].warpgroup_aligned);
  CHECK(W.block_threads == 384);
  CHECK(W.entry_regs == 168);  // 65536 / 384 = 170, rounded down to a multiple of 8
  CHECK(W.regs_after_setmaxnreg == 128 * 40 + 256 * 232);
  CHECK(W.regs_after_setmaxnreg <= 65536);
}

TEST_CASE("warp plan: sm_100a GEMM: the epilogue warpgroup comes first, on warps 0..3") {
  constexpr program p = kernels::gemm_bf16_sm100();
  constexpr auto W = plan::plan_warps(p);
  REQUIRE(W.role_count == 3);
  CHECK(p.roles[0].nm == "epilogue");
  CHECK(W.roles[0].first_warp == 0);  // tcgen05.ld: warp w reaches TMEM lanes 32*(w%4).. only
  CHECK(W.roles[0].warps == 4);
  CHECK(W.roles[0].threads_per_unit == 128);
  CHECK(W.roles[0].warpgroup_aligned);
  CHECK(W.roles[1].first_warp == 4);  // producer
  CHECK(W.roles[2].first_warp == 5);  // mma
  CHECK(W.roles[2].first_thread == 160);
  CHECK(W.block_threads == 192);
  CHECK(W.entry_regs == 248);  // 65536 / 192 = 341, capped at 255 and rounded down to 8
  CHECK(W.regs_after_setmaxnreg == 192 * 248);
}

TEST_CASE("warp plan: sm_80 GEMM: four warps of one role") {
  constexpr auto W = plan::plan_warps(kernels::gemm_bf16_sm80());
  REQUIRE(W.role_count == 1);
  CHECK(W.roles[0].warps == 4);
  CHECK(W.roles[0].threads_per_unit == 32);
  CHECK(W.roles[0].units == 4);
  CHECK(W.block_threads == 128);
  CHECK(W.entry_regs == 248);
}

TEST_CASE("warp plan: a full block of 1024 threads gets 64 registers per thread") {
  auto k = kernel("k");
  k.role("a", warpgroups(6), [](role&) {});
  k.role("b", warps(8), [](role&) {});
  const auto W = plan::plan_warps(k.build());
  CHECK(W.block_threads == 1024);
  CHECK(W.entry_regs == 64);
  CHECK(W.roles[1].first_warp == 24);
  CHECK(W.roles[1].warpgroup_aligned);
}

TEST_CASE("warp plan: a warps() role shifts the warpgroups after it") {
  auto k = kernel("k");
  k.role("one", warps(1), [](role&) {});
  k.role("wg", warpgroups(1), [](role&) {});
  k.role("three", warps(3), [](role&) {});
  k.role("wg2", warpgroups(1), [](role&) {});
  const auto W = plan::plan_warps(k.build());
  CHECK(W.roles[1].first_warp == 1);
  CHECK_FALSE(W.roles[1].warpgroup_aligned);
  CHECK(W.roles[3].first_warp == 8);
  CHECK(W.roles[3].warpgroup_aligned);
  CHECK(W.block_threads == 32 * 12);
}

TEST_CASE("warp plan: entry registers count warps in groups of four, and the blocks that share an SM") {
  // (what ptxas gives __launch_bounds__(threads, n): tests/lowering/test_register_cap.cpp checks it against ptxas)
  for (int warps_n = 1; warps_n <= 32; ++warps_n) {
    auto k = kernel("k");
    k.role("r", warps(warps_n), [](role&) {});
    const auto W = plan::plan_warps(k.build());
    CAPTURE(warps_n);
    const int counted = (warps_n + 3) / 4 * 4;  // registers go to warps four at a time
    CHECK(W.entry_regs % 8 == 0);
    CHECK(W.entry_regs <= 255);
    CHECK(W.entry_regs * counted * 32 <= 65536);
    CHECK((W.entry_regs + 8 > 255 || (W.entry_regs + 8) * counted * 32 > 65536));  // the largest such value
  }
  const auto& lim = targets::sm90a.limits;
  CHECK(plan::entry_register_cap(lim, 416) == 128);     // 13 warps count as 16 (65536 / 416 would say 152)
  CHECK(plan::entry_register_cap(lim, 288) == 168);     // 9 count as 12
  CHECK(plan::entry_register_cap(lim, 384) == 168);
  CHECK(plan::entry_register_cap(lim, 160, 2) == 168);  // two blocks of 5 warps: 10 count as 12
  CHECK(plan::entry_register_cap(lim, 160, 3) == 128);  // 15 count as 16
  CHECK(plan::entry_register_cap(lim, 320, 2) == 96);
  CHECK(plan::entry_register_cap(lim, 96, 4) == 168);
  auto k = kernel("two");
  k.role("r", warps(5), [](role&) {});
  k.ctas_per_sm(2);
  CHECK(plan::plan_warps(k.build()).entry_regs == 168);
}

TEST_CASE("plan: the launch's register cap and a producer / consumers split of its pool") {
  const auto& lim = cake::targets::sm90a.limits;
  CHECK(cake::plan::entry_register_cap(lim, 384) == 168);  // 65536 / 384 = 170 -> 168
  CHECK(cake::plan::entry_register_cap(lim, 128) == 248);  // 512, capped at 255 -> 248
  CHECK(cake::plan::entry_register_cap(lim, 0) == 0);
  // one producer warpgroup, 2 / 3 / 4 consumer warpgroups (the k-means and attention schedules)
  CHECK(cake::plan::consumer_register_share(lim, 384, 128, 40, 256) == 232);
  CHECK(cake::plan::consumer_register_share(lim, 512, 128, 24, 384) == 160);
  CHECK(cake::plan::consumer_register_share(lim, 640, 128, 24, 512) == 112);
  CHECK(cake::plan::consumer_register_share(lim, 384, 128, 40, 256, 200) == 200);  // the cap given
}
