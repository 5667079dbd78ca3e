// Unit tests for cake/target/: the three targets as data (limits from hardware-facts §6), their
// instruction admission tables, the legal MMA shapes, and exact lookup by name.
#include <doctest/doctest.h>

#include <string_view>

#include "cake/target/targets.hpp"

using namespace cake;

TEST_CASE("targets: ids, names and compute capabilities") {
  CHECK(target_of(sm_80).name == "sm_80");
  CHECK(target_of(sm_90a).name == "sm_90a");
  CHECK(target_of(sm_100a).name == "sm_100a");
  CHECK(target_of(sm_80).id == sm_80);
  CHECK(target_of(sm_90a).id == sm_90a);
  CHECK(target_of(sm_100a).id == sm_100a);
  CHECK(target_of(sm_80).cc_major == 8);
  CHECK(target_of(sm_90a).cc_major == 9);
  CHECK(target_of(sm_100a).cc_major == 10);
  CHECK(to_string(sm_90a) == "sm_90a");
}

TEST_CASE("find_target: exact names only, no silent substitution") {
  REQUIRE(find_target("sm_80") != nullptr);
  REQUIRE(find_target("sm_90a") != nullptr);
  REQUIRE(find_target("sm_100a") != nullptr);
  CHECK(find_target("sm_90a")->id == sm_90a);
  CHECK(find_target("sm_100a")->id == sm_100a);
  // sm_90 is not sm_90a (wgmma and setmaxnreg are rejected by ptxas on plain sm_90), and neither is
  // a prefix, a different case, or an f-variant.
  for (std::string_view n : {"sm_90", "sm_100", "sm_100f", "SM_90A", "sm_90a ", "sm90a", "compute_90a", "sm_89", "sm_120a", ""})
    CHECK_MESSAGE(find_target(n) == nullptr, n);
  CHECK(supported_targets == "sm_80, sm_90a, sm_100a");
}

TEST_CASE("target limits: shared memory, registers, threads (hardware-facts §6)") {
  const auto& a = target_of(sm_80).limits;
  const auto& h = target_of(sm_90a).limits;
  const auto& b = target_of(sm_100a).limits;
  CHECK(a.smem_per_block_optin == 166912);  // 163 KB
  CHECK(h.smem_per_block_optin == 232448);  // 227 KB, measured on H200
  CHECK(b.smem_per_block_optin == 232448);
  CHECK(h.smem_per_sm == 233472);
  for (const auto* l : {&a, &h, &b}) {
    CHECK(l->smem_reserved_per_block == 1024);
    CHECK(l->smem_per_sm - l->smem_per_block_optin == l->smem_reserved_per_block);
    CHECK(l->regs_per_sm == 65536);
    CHECK(l->regs_per_block == 65536);
    CHECK(l->max_regs_per_thread == 255);
    CHECK(l->max_threads_per_block == 1024);
    CHECK(l->max_threads_per_sm == 2048);
    CHECK(l->max_blocks_per_sm == 32);
    CHECK(l->named_barriers == 16);
  }
}

TEST_CASE("target limits: clusters, tensor memory and setmaxnreg exist where the hardware has them") {
  const auto& a = target_of(sm_80).limits;
  const auto& h = target_of(sm_90a).limits;
  const auto& b = target_of(sm_100a).limits;
  CHECK(a.max_cluster_portable == 1);
  CHECK(a.max_cluster_nonportable == 1);
  CHECK(h.max_cluster_portable == 8);
  CHECK(h.max_cluster_nonportable == 16);
  CHECK(b.max_cluster_nonportable == 16);
  CHECK(a.tmem_columns == 0);
  CHECK(h.tmem_columns == 0);
  CHECK(b.tmem_columns == 512);
  CHECK(b.tmem_lanes == 128);
  CHECK(a.setmaxnreg_max == 0);
  CHECK(h.setmaxnreg_min == 24);
  CHECK(h.setmaxnreg_max == 256);
  CHECK(b.setmaxnreg_min == 24);
}

TEST_CASE("admission: sm_80 takes the Ampere instruction families only") {
  const auto& t = target_of(sm_80);
  for (feature f : {feature::mma_sync, feature::ldmatrix, feature::cp_async, feature::named_barrier, feature::mbarrier})
    CHECK_MESSAGE(t.admitted(f), to_string(f));
  for (feature f : {feature::mbarrier_try_wait, feature::mbarrier_tx, feature::tma, feature::tma_multicast, feature::stmatrix,
                    feature::cluster, feature::wgmma, feature::setmaxnreg, feature::griddepcontrol, feature::fence_proxy_async,
                    feature::tcgen05})
    CHECK_FALSE_MESSAGE(t.admitted(f), to_string(f));
}

TEST_CASE("admission: sm_90a takes everything but tcgen05") {
  const auto& t = target_of(sm_90a);
  for (int i = 0; i < feature_count; ++i) {
    const auto f = static_cast<feature>(i);
    CHECK_MESSAGE(t.admitted(f) == (f != feature::tcgen05), to_string(f));
  }
}

TEST_CASE("admission: sm_100a takes everything but wgmma (an sm_90a-only instruction)") {
  const auto& t = target_of(sm_100a);
  for (int i = 0; i < feature_count; ++i) {
    const auto f = static_cast<feature>(i);
    CHECK_MESSAGE(t.admitted(f) == (f != feature::wgmma), to_string(f));
  }
}

TEST_CASE("feature names: one per feature, none empty") {
  for (int i = 0; i < feature_count; ++i) CHECK_FALSE(to_string(static_cast<feature>(i)).empty());
  CHECK(to_string(feature::wgmma) == "wgmma");
  CHECK(to_string(feature::tcgen05) == "tcgen05 / tensor memory");
}

TEST_CASE("mma_shape_legal: wgmma is m64 with N 8..256 in steps of 8, on sm_90a only") {
  const auto& h = target_of(sm_90a);
  CHECK(mma_shape_legal(h, unit_wgmma, 64, 8));
  CHECK(mma_shape_legal(h, unit_wgmma, 64, 256));
  CHECK(mma_shape_legal(h, unit_wgmma, 64, 136));
  CHECK_FALSE(mma_shape_legal(h, unit_wgmma, 64, 260));
  CHECK_FALSE(mma_shape_legal(h, unit_wgmma, 64, 0));
  CHECK_FALSE(mma_shape_legal(h, unit_wgmma, 64, 12));
  CHECK_FALSE(mma_shape_legal(h, unit_wgmma, 128, 64));
  CHECK_FALSE(mma_shape_legal(target_of(sm_100a), unit_wgmma, 64, 64));
  CHECK_FALSE(mma_shape_legal(target_of(sm_80), unit_wgmma, 64, 64));
}

TEST_CASE("mma_shape_legal: tcgen05 cta_group::1 is M 64 or 128, N 8..256 in steps of 8, on sm_100a only") {
  const auto& b = target_of(sm_100a);
  CHECK(mma_shape_legal(b, unit_tcgen05, 64, 8));
  CHECK(mma_shape_legal(b, unit_tcgen05, 128, 256));
  CHECK_FALSE(mma_shape_legal(b, unit_tcgen05, 96, 128));
  CHECK_FALSE(mma_shape_legal(b, unit_tcgen05, 256, 128));
  CHECK_FALSE(mma_shape_legal(b, unit_tcgen05, 32, 128));
  CHECK_FALSE(mma_shape_legal(b, unit_tcgen05, 128, 264));
  CHECK_FALSE(mma_shape_legal(b, unit_tcgen05, 128, 4));
  CHECK_FALSE(mma_shape_legal(target_of(sm_90a), unit_tcgen05, 128, 128));
}

TEST_CASE("mma_shape_legal: mma.sync is one m16n8 shape on every target") {
  for (target_id id : {sm_80, sm_90a, sm_100a}) {
    const auto& t = target_of(id);
    CAPTURE(t.name);
    CHECK(mma_shape_legal(t, unit_mma_sync, 16, 8));
    CHECK_FALSE(mma_shape_legal(t, unit_mma_sync, 16, 16));
    CHECK_FALSE(mma_shape_legal(t, unit_mma_sync, 32, 8));
    CHECK((t.mma_units & unit_mma_sync) != 0);
  }
  CHECK(target_of(sm_80).mma_units == unit_mma_sync);
  CHECK(target_of(sm_90a).mma_units == (unit_wgmma | unit_mma_sync));
  CHECK(target_of(sm_100a).mma_units == (unit_tcgen05 | unit_mma_sync));
}

TEST_CASE("targets: the admission table agrees with the matrix units present") {
  for (target_id id : {sm_80, sm_90a, sm_100a}) {
    const auto& t = target_of(id);
    CAPTURE(t.name);
    CHECK(t.admitted(feature::wgmma) == ((t.mma_units & unit_wgmma) != 0));
    CHECK(t.admitted(feature::tcgen05) == ((t.mma_units & unit_tcgen05) != 0));
    CHECK(t.admitted(feature::tcgen05) == (t.limits.tmem_columns > 0));
    CHECK(t.admitted(feature::cluster) == (t.limits.max_cluster_nonportable > 1));
    CHECK(t.admitted(feature::setmaxnreg) == (t.limits.setmaxnreg_max > 0));
    // Every rule's unit is one the target has.
    for (int i = 0; i < t.mma_rule_count; ++i) CHECK((t.mma_rules[i].unit & t.mma_units) != 0);
  }
}
