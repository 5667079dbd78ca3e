#pragma once
// Host-side numbers for GPU tests and benchmarks:
//   - bit-exact converters float <-> bf16 / f16 / e4m3 / e5m2 (round to nearest, ties to even; NaN stays
//     NaN; fp8 overflow saturates to the largest finite value by default, as cvt.rn.satfinite does)
//   - host element types (host_bf16, host_f16, host_e4m3, host_e5m2) holding raw bits, ready to upload
//   - random fills (normal or uniform, any scale) from a freshly seeded generator whose seed is printed
//     by tests on failure and can be pinned with CAKE_SEED=<n> to reproduce a run.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace cake::harness {

// ---- converters -------------------------------------------------------------------------------------

inline std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even; overflow carries into the exponent (-> inf)
  return static_cast<std::uint16_t>(u >> 16);
}
inline float bf16_bits_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// A small binary float format: sign, exp_bits, man_bits. IEEE-like formats (f16, e5m2) reserve the top
// exponent for inf/NaN; e4m3 ("fn") has no infinity and only S.1111.111 is NaN.
struct minifloat_format {
  int exp_bits, man_bits, bias;
  bool has_inf;
};
inline constexpr minifloat_format f16_format{5, 10, 15, true};
inline constexpr minifloat_format e4m3_format{4, 3, 7, false};
inline constexpr minifloat_format e5m2_format{5, 2, 15, true};

// saturate: values beyond the largest finite one (and infinities) become it instead of inf/NaN.
inline std::uint32_t encode_minifloat(float f, minifloat_format fmt, bool saturate) {
  const int E = fmt.exp_bits, M = fmt.man_bits;
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (u >> 31) << (E + M);
  const std::uint32_t a = u & 0x7fffffffu;
  const std::uint32_t exp_ones = (1u << E) - 1u;
  const std::uint32_t inf = exp_ones << M;
  const std::uint32_t nan = fmt.has_inf ? inf | (1u << (M - 1)) : (1u << (E + M)) - 1u;
  const std::uint32_t max_finite = fmt.has_inf ? inf - 1u : nan - 1u;
  const std::uint32_t overflow = saturate ? max_finite : fmt.has_inf ? inf : nan;
  if (a > 0x7f800000u) return sign | nan;
  if (a == 0x7f800000u) return sign | overflow;
  int e = static_cast<int>(a >> 23) - 127;
  std::uint32_t m = a & 0x7fffffu;
  if ((a >> 23) == 0) e = -126;  // float subnormal (far below every target's range)
  else m |= 0x800000u;           // the implicit bit
  const int emin = 1 - fmt.bias;
  const int shift = 23 - M + (e < emin ? emin - e : 0);
  std::uint32_t r = 0;
  if (shift <= 25) {  // beyond that, m < half of the smallest step: rounds to zero
    r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;  // a carry may reach the exponent: that is correct
  }
  const std::uint32_t enc = e < emin ? r : (static_cast<std::uint32_t>(e - emin) << M) + r;
  return sign | (enc > max_finite ? overflow : enc);
}

inline float decode_minifloat(std::uint32_t bits, minifloat_format fmt) {
  const int E = fmt.exp_bits, M = fmt.man_bits;
  const bool negative = (bits >> (E + M)) & 1u;
  const std::uint32_t ef = (bits >> M) & ((1u << E) - 1u), frac = bits & ((1u << M) - 1u);
  float v;
  if (fmt.has_inf && ef == (1u << E) - 1u) v = frac ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else if (!fmt.has_inf && (bits & ((1u << (E + M)) - 1u)) == (1u << (E + M)) - 1u) v = std::numeric_limits<float>::quiet_NaN();
  else if (ef == 0) v = std::ldexp(static_cast<float>(frac), 1 - fmt.bias - M);
  else v = std::ldexp(static_cast<float>((1u << M) + frac), static_cast<int>(ef) - fmt.bias - M);
  return negative ? -v : v;
}

inline std::uint16_t float_to_f16_bits(float f) { return static_cast<std::uint16_t>(encode_minifloat(f, f16_format, false)); }
inline float f16_bits_to_float(std::uint16_t b) { return decode_minifloat(b, f16_format); }
inline std::uint8_t float_to_e4m3_bits(float f, bool saturate = true) {
  return static_cast<std::uint8_t>(encode_minifloat(f, e4m3_format, saturate));
}
inline float e4m3_bits_to_float(std::uint8_t b) { return decode_minifloat(b, e4m3_format); }
inline std::uint8_t float_to_e5m2_bits(float f, bool saturate = true) {
  return static_cast<std::uint8_t>(encode_minifloat(f, e5m2_format, saturate));
}
inline float e5m2_bits_to_float(std::uint8_t b) { return decode_minifloat(b, e5m2_format); }

// ---- host element types -----------------------------------------------------------------------------

struct host_bf16 {
  std::uint16_t bits = 0;
  static host_bf16 from_float(float f) { return {float_to_bf16_bits(f)}; }
  float to_float() const { return bf16_bits_to_float(bits); }
};
struct host_f16 {
  std::uint16_t bits = 0;
  static host_f16 from_float(float f) { return {float_to_f16_bits(f)}; }
  float to_float() const { return f16_bits_to_float(bits); }
};
struct host_e4m3 {
  std::uint8_t bits = 0;
  static host_e4m3 from_float(float f) { return {float_to_e4m3_bits(f)}; }
  float to_float() const { return e4m3_bits_to_float(bits); }
};
struct host_e5m2 {
  std::uint8_t bits = 0;
  static host_e5m2 from_float(float f) { return {float_to_e5m2_bits(f)}; }
  float to_float() const { return e5m2_bits_to_float(bits); }
};
static_assert(sizeof(host_bf16) == 2 && sizeof(host_f16) == 2 && sizeof(host_e4m3) == 1 && sizeof(host_e5m2) == 1);

template <class T>
float to_float(T v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else return v.to_float();
}
template <class T>
T from_float(float f) {
  if constexpr (std::is_same_v<T, float>) return f;
  else return T::from_float(f);
}

// ---- random fills -----------------------------------------------------------------------------------

class random_source {
 public:
  explicit random_source(std::uint64_t seed) : seed_(seed), engine_(seed) {}
  // CAKE_SEED=<n> when set (to reproduce a failure), else a fresh seed from std::random_device.
  static random_source fresh() {
    if (const char* s = std::getenv("CAKE_SEED"); s && *s) return random_source(std::strtoull(s, nullptr, 0));
    std::random_device rd;
    return random_source((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  }
  std::uint64_t seed() const { return seed_; }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::uint64_t seed_;
  std::mt19937_64 engine_;
};

enum class distribution { normal, uniform };

struct fill_spec {
  distribution dist = distribution::normal;
  float scale = 1.0f;   // normal: standard deviation; uniform: half-width of [-scale, scale)
  float offset = 0.0f;  // added to every value
};

// Scales tests cycle through, so that values near 0, near 1 and well above 1 are all exercised.
inline constexpr std::array<float, 4> test_scales{0.01f, 0.1f, 1.0f, 8.0f};

template <class T>
void fill_random(std::span<T> out, random_source& rng, fill_spec spec = {}) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (auto& v : out) {
    const float x = spec.dist == distribution::normal ? normal(rng.engine()) : uniform(rng.engine());
    v = from_float<T>(spec.offset + spec.scale * x);
  }
}

template <class T>
std::vector<T> random_vector(std::size_t n, random_source& rng, fill_spec spec = {}) {
  std::vector<T> v(n);
  fill_random(std::span<T>(v), rng, spec);
  return v;
}

}  // namespace cake::harness
