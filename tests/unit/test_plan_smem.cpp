// Unit tests for cake/plan/smem_plan.hpp: offsets, alignment, padding and total of the dynamic shared
// memory window, for the three reference schedules and a hand-computed case.
#include <doctest/doctest.h>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {
// Five regions of every alignment class, declared smallest-alignment first so that the placement
// order (largest alignment first) differs from the declaration order.
constexpr program mixed(target_id target) {
  auto k = kernel("mixed").target(target);
  k.smem<f32>("r0", {8, 8});                         // 256 B, align 128
  k.smem<bf16>("r1", {16, 64}, swizzle::b128);      // 2048 B, align 1024
  k.smem<bf16>("r2", {8, 24}, copies(2));            // 384 B per stage, align 128
  k.smem<bf16>("r3", {8, 32}, swizzle::b64);        // 512 B, align 512
  k.smem<f16>("r4", {4, 16}, swizzle::b32, copies(2));  // 128 B per stage, align 256: 128 B padding each
  k.mbarrier("bars", arrivals(1), 3);
  if (target == sm_100a) k.tmem("acc", columns(32));
  k.role("r", warps(1), [](role&) {});
  return k.build();
}
}  // namespace

TEST_CASE("smem plan: swizzle alignment per mode") {
  CHECK(swizzle_alignment(swizzle::none) == 128);
  CHECK(swizzle_alignment(swizzle::b32) == 256);
  CHECK(swizzle_alignment(swizzle::b64) == 512);
  CHECK(swizzle_alignment(swizzle::b128) == 1024);
  CHECK(swizzle_bytes(swizzle::b64) == 64);
  CHECK(plan::align_up(0, 128) == 0);
  CHECK(plan::align_up(1, 128) == 128);
  CHECK(plan::align_up(1024, 1024) == 1024);
}

TEST_CASE("smem plan: a hand-computed layout (largest alignment first, each stage aligned)") {
  constexpr program p = mixed(sm_90a);
  REQUIRE(p.errors.empty());
  constexpr plan::smem_layout L = plan::plan_smem(p);
  // r1 (1024) at 0; r3 (512) at 2048; r4 (256) at 2560, 2 stages of 256; r0 (128) at 3072; r2 at 3328.
  CHECK(L.regions[1].offset == 0);
  CHECK(L.regions[3].offset == 2048);
  CHECK(L.regions[4].offset == 2560);
  CHECK(L.regions[0].offset == 3072);
  CHECK(L.regions[2].offset == 3328);
  CHECK(L.regions[4].alignment == 256);
  CHECK(L.regions[4].bytes_per_stage == 128);
  CHECK(L.regions[4].stages == 2);
  CHECK(L.regions[2].stages == 2);
  CHECK(L.regions[2].alignment == 128);
  CHECK(plan::stage_offset(L, 4, 1) == 2816);
  CHECK(plan::stage_offset(L, 2, 1) == 3712);
  CHECK(L.padding == 256);  // two r4 stages, 128 B each
  CHECK(L.barrier_offset == 4096);
  CHECK(L.barrier_count == 3);
  CHECK(L.tmem_slot_offset == -1);
  CHECK(L.total == 4096 + 3 * 8);
  CHECK(L.limit == 232448);
  CHECK(L.fits());
  // Every region starts on its alignment.
  for (std::size_t i = 0; i < p.smem.size(); ++i) CHECK(L.regions[i].offset % L.regions[i].alignment == 0);
}

TEST_CASE("smem plan: the TMEM address slot follows the barriers, 16-byte aligned (sm_100a)") {
  constexpr plan::smem_layout L = plan::plan_smem(mixed(sm_100a));
  CHECK(L.barrier_offset == 4096);
  CHECK(L.tmem_slot_offset == 4128);  // 4096 + 24, aligned up to 16
  CHECK(L.total == 4144);
}

TEST_CASE("smem plan: sm_80 reference GEMM (4 cp.async stages, no barriers)") {
  constexpr program p = kernels::gemm_bf16_sm80();
  REQUIRE(p.errors.empty());
  constexpr auto L = plan::plan_smem(p);
  CHECK(L.regions[0].offset == 0);       // sA: 4 x 128x64 bf16 = 4 x 16384
  CHECK(L.regions[1].offset == 65536);   // sB: 4 x 16384
  CHECK(L.regions[0].bytes_per_stage == 16384);
  CHECK(L.regions[0].stages == 4);
  CHECK(L.regions[0].alignment == 1024);
  CHECK(L.barrier_count == 0);
  CHECK(L.padding == 0);
  CHECK(L.total == 131072);
  CHECK(L.limit == 166912);
  CHECK(L.fits());
}

TEST_CASE("smem plan: sm_90a reference GEMM (pipelined A/B, double-buffered epilogue, 8 barriers)") {
  constexpr program p = kernels::gemm_bf16_sm90();
  REQUIRE(p.errors.empty());
  constexpr auto L = plan::plan_smem(p);
  CHECK(L.regions[0].offset == 0);        // sA: 4 x 16384
  CHECK(L.regions[1].offset == 65536);    // sB: 4 x 32768
  CHECK(L.regions[2].offset == 196608);   // sD: 2 x 16384
  CHECK(L.regions[1].bytes_per_stage == 32768);
  CHECK(L.regions[2].stages == 2);
  CHECK(L.barrier_offset == 229376);
  CHECK(L.barrier_count == 8);  // full + empty per stage of 'ab'
  CHECK(L.total == 229440);
  CHECK(L.padding == 0);
  CHECK(L.fits());
  CHECK(L.limit - L.total == 3008);  // what is left of the 227 KB opt-in
}

TEST_CASE("smem plan: sm_100a reference GEMM (A/B stages, barriers of two pipelines, TMEM slot)") {
  constexpr program p = kernels::gemm_bf16_sm100();
  REQUIRE(p.errors.empty());
  constexpr auto L = plan::plan_smem(p);
  CHECK(L.regions[0].offset == 0);
  CHECK(L.regions[1].offset == 65536);
  CHECK(L.barrier_offset == 196608);
  CHECK(L.barrier_count == 10);  // 'ab': 2 x 4, 'accp': 2 x 1
  CHECK(L.tmem_slot_offset == 196688);
  CHECK(L.total == 196704);
}

TEST_CASE("smem plan: the reference schedules' configurations scale the plan as expected") {
  kernels::gemm_sm90_config c;
  c.stages = 3;
  const auto L = plan::plan_smem(kernels::gemm_bf16_sm90(c));
  CHECK(L.regions[2].offset == 3 * 49152);
  CHECK(L.barrier_count == 6);
  CHECK(L.total == 3 * 49152 + 32768 + 48);
  c.stages = 5;  // 5 x 48 KB + 32 KB does not fit in 227 KB
  const program big = kernels::gemm_bf16_sm90(c);
  CHECK(has_error(big, "resource.smem-overflow", 5 * 49152 + 32768 + 80));
  CHECK_FALSE(plan::plan_smem(big).fits());
}

TEST_CASE("smem plan: mbarrier objects are user arrays plus full and empty per pipeline stage") {
  auto k = kernel("k");
  auto s = k.smem<bf16>("s", {64, 64});
  k.mbarrier("a", arrivals(1), 5);
  k.mbarrier("b");
  k.pipeline("p", stages(3)).carries(s);
  CHECK(plan::mbarrier_objects(k.p) == 5 + 1 + 6);
  CHECK(plan::plan_smem(k.p).barrier_offset % 8 == 0);
}
