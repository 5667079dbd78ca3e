// The k-means entry points' host-side refusals and the deterministic update's fixed point, no GPU needed:
// every argument is checked before any device call (kernels/kmeans/kmeans.hpp, init.hpp). The GPU tier
// (tests/gpu/test_kmeans.cpp) runs the same entry points on the H200.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "kernels/kmeans/init.hpp"

using namespace cake;
using kmeans::input_type;
using kmeans::metric;

namespace {

// The message of the argument_error f throws, or "(no error)".
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const jit::argument_error& e) {
    return e.what();
  }
  return "(no error)";
}

alignas(16) std::uint16_t buf[64];
std::int32_t ids[4];
float f[4];

}  // namespace

TEST_CASE("k-means deterministic update: the fixed point keeps every f16 bit, and bf16 points need a bound on |x|") {
  // f16 points (|x| <= 65504 < 2^16) at N <= 2^22: a unit of 2^-24, so every f16 value is a whole number of units
  CHECK(kmeans::fixed_point_exponent(1LL << 22, 65504.0f) == 24);
  CHECK(kmeans::fixed_point_exponent((1LL << 22) + 1, 65504.0f) == 23);  // one more point: one bit less
  CHECK(kmeans::fixed_point_exponent(1000, 1.0f) == 52);                  // 1000 < 2^10: 62 - 10 - 0
  CHECK(kmeans::fixed_point_exponent(1000, 1.5f) == 51);                  // |x| up to 2^1
  CHECK(kmeans::fixed_point_exponent(1, 1e-30f) == 126);                  // clamped: 2^-e stays a normal f32
  CHECK(refusal([] { kmeans::update(buf, ids, buf, f, f, buf, 1, 4, 2, 64, input_type::bf16, metric::l2, kmeans::update_options{true, 0.0f}); })
            .find("needs options.max_abs") != std::string::npos);
  CHECK(refusal([] { kmeans::update(buf, ids, buf, f, f, buf, 1, 4, 2, 64, input_type::f16, metric::l2, kmeans::update_options{true, -1.0f}); })
            .find("options.max_abs = -1") != std::string::npos);
}

TEST_CASE("k-means init_random and fit_until refuse bad arguments with the argument named") {
  CHECK(refusal([] { kmeans::init_random(buf, buf, 1, 4, 5, 64, input_type::bf16); }).find("K must be at most N") != std::string::npos);
  CHECK(refusal([] { (void)kmeans::initial_rows(4, 5, 0); }).find("1 <= K <= N") != std::string::npos);
  CHECK(refusal([] { (void)kmeans::fit_until(buf, buf, ids, f, f, buf, 1, 4, 2, 64, input_type::bf16, metric::l2, 0, 0.1f, 1); })
            .find("max_iterations = 0") != std::string::npos);
  CHECK(refusal([] { (void)kmeans::fit_until(buf, buf, ids, f, f, buf, 1, 4, 2, 64, input_type::bf16, metric::l2, 5, -1.0f, 1); }).find("tolerance") !=
        std::string::npos);
  CHECK(refusal([] { (void)kmeans::fit_until(buf, buf, ids, f, f, buf, 1, 4, 2, 64, input_type::bf16, metric::l2, 5, 0.1f, 0); })
            .find("check_every = 0") != std::string::npos);
}

TEST_CASE("k-means assign_config_for: parts and rows from D, the lazy index from 256 centroid tiles on") {
  constexpr auto small = kmeans::assign_config_for(128, 4096, metric::l2);
  static_assert(!small.lazy_index && small.parts == 2 && small.rows == 128);
  CHECK_FALSE(kmeans::assign_config_for(128, 256 * 128 - 1, metric::l2).lazy_index);  // fewer than 256 full tiles
  CHECK(kmeans::assign_config_for(128, 256 * 128, metric::l2).lazy_index);
  CHECK(kmeans::assign_config_for(512, 65536, metric::cosine).lazy_index);
  CHECK(kmeans::assign_config_for(512, 65536, metric::cosine).rows == 64);
  CHECK(kmeans::assign_config_for(512, 65536, metric::cosine).metric == metric::cosine);
}

TEST_CASE("k-means assign_config_for: persistent with two points tiles at few centroid tiles or D <= 64, where it fits") {
  const auto few = kmeans::assign_config_for(128, 16 * 128, metric::l2);
  CHECK(few.persistent);
  CHECK(few.x_stages == 2);
  CHECK(few.stages == 5);  // a second 64 KiB points tile leaves room for 5 centroid stages with their c_norm
  CHECK(kernels::kmeans_assign_smem(few) <= 225 * 1024);
  CHECK_FALSE(kmeans::assign_config_for(128, 16 * 128 + 1, metric::l2).persistent);
  const auto narrow = kmeans::assign_config_for(64, 16384, metric::l2);
  CHECK((narrow.persistent && narrow.x_stages == 2 && narrow.stages == 8));
  CHECK_FALSE(kmeans::assign_config_for(256, 512, metric::l2).persistent);  // two 128 KiB points tiles do not fit
  CHECK_FALSE(kmeans::assign_config_for(512, 1000, metric::l2).persistent);
  CHECK_FALSE(kmeans::assign_config_for(128, 65536, metric::l2).persistent);
}

TEST_CASE("k-means assign_config_for: the persistent form passes the turn after its MMAs, the grid form to D = 128 overlaps by halves") {
  CHECK(kmeans::assign_config_for(128, 1024, metric::l2).pass_after_wait);
  CHECK(kmeans::assign_config_for(64, 16384, metric::l2).pass_after_wait);
  const auto mid = kmeans::assign_config_for(128, 4096, metric::l2);  // 32 tiles: the grid form
  CHECK((!mid.persistent && mid.overlap && !mid.pass_after_wait));
  CHECK(mid.stages == 4);  // whole-tile stages of 32 KiB (and c_norm) next to the 64 KiB points tile
  CHECK(kernels::kmeans_assign_smem(mid) <= 225 * 1024);
  CHECK(mid.invalid() == nullptr);
  CHECK_FALSE(kmeans::assign_config_for(128, 65536, metric::l2).overlap);  // the lazy index: not overlapped
  CHECK_FALSE(kmeans::assign_config_for(256, 512, metric::l2).overlap);    // a whole D = 256 tile per stage does not fit twice
  CHECK_FALSE(kmeans::assign_config_for(256, 512, metric::l2).pass_after_wait);
  for (long long D : {8, 64, 96, 128, 192, 256, 320, 512})
    for (long long K : {1, 100, 2048, 4096, 40000, 65536}) {
      INFO("D " << D << " K " << K);
      CHECK(kmeans::assign_config_for(D, K, metric::l2).invalid() == nullptr);
    }
}

TEST_CASE("k-means assign_config_for: c_norm in the centroid stages for l2 and cosine, counted in the smem") {
  for (const metric m : {metric::l2, metric::cosine}) {
    const auto c = kmeans::assign_config_for(128, 4096, m);
    CHECK(c.cn_in_stage);
    kernels::kmeans_assign_config without = c;
    without.cn_in_stage = false;
    CHECK(kernels::kmeans_assign_smem(c) == kernels::kmeans_assign_smem(without) + c.stages * c.bn * 4);
  }
  CHECK_FALSE(kmeans::assign_config_for(128, 4096, metric::inner_product).cn_in_stage);  // no c_norm
  kernels::kmeans_assign_config wide = kmeans::assign_config_for(256, 4096, metric::l2);
  wide.overlap = true;  // a stage would carry 4 parts and c_norm: 5 regions
  CHECK(std::string(wide.invalid()).find("cn_in_stage with overlap needs parts <= 3") != std::string::npos);
}

TEST_CASE("k-means assign_with: invalid forced schedules and the MMA probe are refused by name") {
  kernels::kmeans_assign_config bad = kmeans::assign_config_for(128, 4096, metric::l2);
  bad.rows = 64;  // overlap needs 128 rows
  CHECK(refusal([&] { kmeans::assign_with(bad, buf, buf, f, ids, 1, 4, 2, 128, input_type::bf16); }).find("overlap needs rows = 128") != std::string::npos);
  kernels::kmeans_assign_config probe = kmeans::assign_config_for(128, 4096, metric::l2);
  probe.mma_probe = true;
  CHECK(refusal([&] { kmeans::assign_with(probe, buf, buf, f, ids, 1, 4, 2, 128, input_type::bf16); }).find("assign_mma_probe") != std::string::npos);
}
