// The host converters, bit for bit: exhaustive round trips over every encoding, ties to even at the
// boundaries, NaN and overflow handling, and agreement with NVIDIA's own host conversions
// (cuda_bf16.h, cuda_fp16.h, cuda_fp8.h) on many random floats.
#include <doctest/doctest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <ios>
#include <random>

#include <cake/harness/random.hpp>

using namespace cake::harness;

namespace {
float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

std::uint16_t nv_bf16(float f) {
  const __nv_bfloat16 b = __float2bfloat16_rn(f);
  std::uint16_t u;
  std::memcpy(&u, &b, 2);
  return u;
}
std::uint16_t nv_f16(float f) {
  const __half h = __float2half_rn(f);
  std::uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
bool is_nan_bf16(std::uint16_t b) { return (b & 0x7fff) > 0x7f80; }
bool is_nan_f16(std::uint16_t b) { return (b & 0x7fff) > 0x7c00; }
bool is_nan_e4m3(std::uint8_t b) { return (b & 0x7f) == 0x7f; }
bool is_nan_e5m2(std::uint8_t b) { return (b & 0x7f) > 0x7c; }

// Floats that stress a converter: random bit patterns (all exponents), plus values near each format's
// rounding points.
std::vector<float> probe_floats(std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<float> v;
  for (int i = 0; i < 200000; ++i) v.push_back(from_bits(static_cast<std::uint32_t>(g())));
  std::uniform_real_distribution<float> small(-600.0f, 600.0f);
  for (int i = 0; i < 200000; ++i) v.push_back(small(g));
  for (float x : {0.0f, -0.0f, 1.0f, 448.0f, 464.0f, 465.0f, 480.0f, 57344.0f, 61440.0f, 61441.0f, 65504.0f, 65519.0f,
                  65520.0f, 1e30f, -1e30f, 1e-30f, std::ldexp(1.0f, -9), std::ldexp(1.0f, -10), std::ldexp(1.5f, -10),
                  std::ldexp(1.0f, -16), std::ldexp(1.0f, -17), std::ldexp(1.0f, -24), std::ldexp(1.0f, -25),
                  std::ldexp(1.5f, -25), INFINITY, -INFINITY, NAN})
    v.push_back(x);
  return v;
}
}  // namespace

TEST_CASE("bf16: every encoding round-trips, ties go to even, NaN stays NaN, overflow is inf") {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_bits_to_float(static_cast<std::uint16_t>(b));
    const auto back = float_to_bf16_bits(f);
    if (is_nan_bf16(static_cast<std::uint16_t>(b))) CHECK(is_nan_bf16(back));
    else if (back != b) FAIL("bf16 0x" << std::hex << b << " came back as 0x" << back);
  }
  CHECK(float_to_bf16_bits(from_bits(0x3f808000)) == 0x3f80);  // 1 + 2^-8: tie, 0x3f80 is even
  CHECK(float_to_bf16_bits(from_bits(0x3f818000)) == 0x3f82);  // tie, 0x3f81 is odd -> up
  CHECK(float_to_bf16_bits(from_bits(0x3f808001)) == 0x3f81);  // just above the tie
  CHECK(float_to_bf16_bits(from_bits(0x7f7fffff)) == 0x7f80);  // FLT_MAX rounds to inf
  CHECK(float_to_bf16_bits(from_bits(0x00008000)) == 0x0000);  // subnormal tie to even (zero)
  CHECK(float_to_bf16_bits(from_bits(0x00018000)) == 0x0002);
  CHECK(float_to_bf16_bits(from_bits(0xffc00001)) == 0xffc0);  // NaN keeps its sign, quiet
  CHECK(float_to_bf16_bits(from_bits(0x7f800001)) == 0x7fc0);  // signalling NaN whose payload is below bit 16
}

TEST_CASE("f16, e4m3, e5m2: every encoding round-trips") {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const auto back = float_to_f16_bits(f16_bits_to_float(h));
    if (is_nan_f16(h)) CHECK(is_nan_f16(back));
    else if (back != h) FAIL("f16 0x" << std::hex << b << " came back as 0x" << back);
  }
  for (std::uint32_t b = 0; b < 0x100; ++b) {
    const auto q = static_cast<std::uint8_t>(b);
    CAPTURE(b);
    if (is_nan_e4m3(q)) CHECK(is_nan_e4m3(float_to_e4m3_bits(e4m3_bits_to_float(q))));
    else CHECK(float_to_e4m3_bits(e4m3_bits_to_float(q)) == q);
    if (is_nan_e5m2(q)) CHECK(is_nan_e5m2(float_to_e5m2_bits(e5m2_bits_to_float(q), false)));
    else CHECK(float_to_e5m2_bits(e5m2_bits_to_float(q), false) == q);
  }
}

TEST_CASE("e4m3: the values and boundaries of the format") {
  CHECK(e4m3_bits_to_float(0x7e) == 448.0f);
  CHECK(e4m3_bits_to_float(0x01) == std::ldexp(1.0f, -9));  // smallest subnormal
  CHECK(e4m3_bits_to_float(0x08) == std::ldexp(1.0f, -6));  // smallest normal
  CHECK(e4m3_bits_to_float(0x78) == 256.0f);                // exponent 15 is a normal exponent in e4m3
  CHECK(std::isnan(e4m3_bits_to_float(0x7f)));
  CHECK(std::isnan(e4m3_bits_to_float(0xff)));
  CHECK(float_to_e4m3_bits(464.0f, false) == 0x7e);  // tie between 448 and (absent) 480: even
  CHECK(float_to_e4m3_bits(465.0f, false) == 0x7f);  // overflow without saturation: NaN
  CHECK(float_to_e4m3_bits(465.0f) == 0x7e);         // saturating (the default, as cvt.satfinite)
  CHECK(float_to_e4m3_bits(-1e9f) == 0xfe);
  CHECK(float_to_e4m3_bits(INFINITY) == 0x7e);
  CHECK(float_to_e4m3_bits(INFINITY, false) == 0x7f);
  CHECK(float_to_e4m3_bits(std::ldexp(1.0f, -10)) == 0x00);  // half the smallest subnormal: tie to even (0)
  CHECK(float_to_e4m3_bits(std::ldexp(1.5f, -10)) == 0x01);
  CHECK(float_to_e4m3_bits(std::ldexp(3.0f, -10)) == 0x02);  // 1.5 x smallest: tie to even (2)
  CHECK(float_to_e4m3_bits(-0.0f) == 0x80);
  CHECK(is_nan_e4m3(float_to_e4m3_bits(NAN)));
}

TEST_CASE("converters agree with NVIDIA's host conversions on many floats") {
  const auto floats = probe_floats(20261129);
  int mismatches = 0;
  for (float f : floats) {
    const auto bf = float_to_bf16_bits(f), nbf = nv_bf16(f);
    const auto h = float_to_f16_bits(f), nh = nv_f16(f);
    const bool nan_in = std::isnan(f);
    auto report = [&](const char* what, unsigned mine, unsigned theirs) {
      if (++mismatches <= 10)
        MESSAGE(what << " of float 0x" << std::hex << std::bit_cast<std::uint32_t>(f) << ": cake 0x" << mine
                     << ", NVIDIA 0x" << theirs);
    };
    if (nan_in ? !is_nan_bf16(bf) : bf != nbf) report("bf16", bf, nbf);
    if (nan_in ? !is_nan_f16(h) : h != nh) report("f16", h, nh);
    for (bool sat : {true, false}) {
      const auto nsat = sat ? __NV_SATFINITE : __NV_NOSAT;
      const auto q = float_to_e4m3_bits(f, sat), nq = __nv_cvt_float_to_fp8(f, nsat, __NV_E4M3);
      if (nan_in ? !is_nan_e4m3(q) : q != nq) report(sat ? "e4m3 satfinite" : "e4m3", q, nq);
      const auto r = float_to_e5m2_bits(f, sat), nr = __nv_cvt_float_to_fp8(f, nsat, __NV_E5M2);
      if (nan_in ? !is_nan_e5m2(r) : r != nr) report(sat ? "e5m2 satfinite" : "e5m2", r, nr);
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("random fills: the seed reproduces the values, the spec shapes them") {
  random_source a(1234), b(1234);
  const auto x = random_vector<float>(1000, a, {distribution::uniform, 2.0f, 10.0f});
  const auto y = random_vector<float>(1000, b, {distribution::uniform, 2.0f, 10.0f});
  CHECK(x == y);
  for (float v : x) CHECK((v >= 8.0f && v <= 12.0f));
  random_source c(99);
  const auto n = random_vector<float>(20000, c, {distribution::normal, 3.0f});
  double mean = 0, sq = 0;
  for (float v : n) mean += v;
  mean /= static_cast<double>(n.size());
  for (float v : n) sq += (v - mean) * (v - mean);
  CHECK(std::abs(mean) < 0.1);
  CHECK(std::sqrt(sq / static_cast<double>(n.size())) == doctest::Approx(3.0).epsilon(0.05));

  random_source d(7), e(7);
  const auto bf = random_vector<host_bf16>(64, d, {distribution::normal, 0.1f});
  std::vector<float> f(64);
  fill_random(std::span<float>(f), e, {distribution::normal, 0.1f});
  for (std::size_t i = 0; i < bf.size(); ++i) CHECK(bf[i].bits == float_to_bf16_bits(f[i]));
  random_source g(8);
  for (auto q : random_vector<host_e4m3>(256, g, {distribution::normal, test_scales.back()}))
    CHECK_FALSE(is_nan_e4m3(q.bits));
  if (!std::getenv("CAKE_SEED")) CHECK(random_source::fresh().seed() != random_source::fresh().seed());
}
