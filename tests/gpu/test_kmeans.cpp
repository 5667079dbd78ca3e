// cake::kmeans on the GPU against an f64 host reference, on fresh random inputs (normal, so that the
// nearest centroid is decided by small margins), f16 and bf16, every metric, B = 1 and B > 1, ragged N,
// K and D (D = 104: a part of 64 columns half outside; K = 1, 129, 257: ragged centroid tiles), and
// D up to 512. The index output is poisoned (0xFFFFFFFF) first and followed by a guard.
//   - every point gets an index in 0 .. K-1 whose exact (f64) score is within a rounding margin of
//     the best score (inputs are exactly representable; the GPU accumulates the dot products in f32);
//   - ties go to the lowest index: every 7th centroid is an exact copy of the one before it, so a copy
//     scores exactly as its twin and must never be chosen;
//   - two runs give identical indices; nothing past B * N is written.
//
// CAKE_SEED=<n> reproduces a run (the seed is printed first).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <cake/harness/parallel.hpp>
#include <cake/harness/random.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/kmeans/kmeans.hpp"

using namespace cake;
using kmeans::input_type;
using kmeans::metric;

namespace {

bool usable_hopper() {
  if (!jit::driver::available()) return false;
  const auto& d = jit::driver::get().device(0);
  if (!(d.cc_major == 9 && d.cc_minor == 0)) {
    MESSAGE("skipped: cake::kmeans needs a Hopper device; device 0 is " << d.describe());
    return false;
  }
  return true;
}

struct shape {
  long long B, N, K, D;
};

// The inputs as raw 16-bit values (uploaded as they are) and as the floats they stand for.
struct matrix {
  std::vector<std::uint16_t> bits;
  std::vector<float> val;
};
matrix random_matrix(std::size_t n, input_type t, harness::random_source& rng) {
  matrix m;
  m.bits.resize(n);
  m.val.resize(n);
  if (t == input_type::bf16) {
    auto v = harness::random_vector<harness::host_bf16>(n, rng);
    for (std::size_t i = 0; i < n; ++i) m.bits[i] = v[i].bits, m.val[i] = v[i].to_float();
  } else {
    auto v = harness::random_vector<harness::host_f16>(n, rng);
    for (std::size_t i = 0; i < n; ++i) m.bits[i] = v[i].bits, m.val[i] = v[i].to_float();
  }
  return m;
}

}  // namespace

TEST_CASE("k-means assignment picks the nearest centroid (every metric, f16 and bf16, ragged shapes, ties to the lowest index)") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  struct run {
    shape s;
    input_type t;
    metric m;
  };
  const std::vector<run> runs = {
      {{1, 1, 1, 64}, input_type::bf16, metric::l2},          {{1, 7, 5, 8}, input_type::f16, metric::l2},
      {{1, 1000, 300, 128}, input_type::bf16, metric::l2},    {{3, 4097, 1000, 128}, input_type::f16, metric::l2},
      {{2, 1000, 129, 104}, input_type::bf16, metric::l2},    {{1, 2000, 257, 256}, input_type::f16, metric::l2},
      {{1, 700, 300, 512}, input_type::bf16, metric::l2},     {{2, 3000, 1024, 64}, input_type::bf16, metric::l2},
      {{1, 1000, 300, 128}, input_type::bf16, metric::inner_product}, {{2, 777, 129, 64}, input_type::f16, metric::inner_product},
      {{1, 1000, 300, 128}, input_type::f16, metric::cosine}, {{1, 500, 257, 512}, input_type::bf16, metric::cosine},
  };
  for (const run& u : runs) {
    const auto [B, N, K, D] = u.s;
    INFO("B " << B << " N " << N << " K " << K << " D " << D << " " << to_string(u.t) << " " << kernels::to_string(u.m));
    auto x = random_matrix(static_cast<std::size_t>(B * N * D), u.t, rng);
    auto c = random_matrix(static_cast<std::size_t>(B * K * D), u.t, rng);
    for (long long b = 0; b < B; ++b)
      for (long long k = 7; k < K; k += 7)
        for (long long d = 0; d < D; ++d) {
          const auto to = static_cast<std::size_t>((b * K + k) * D + d), from = to - static_cast<std::size_t>(D);
          c.bits[to] = c.bits[from], c.val[to] = c.val[from];
        }
    // c_norm and the f64 scores the kernel's choice is checked with.
    std::vector<float> cn(static_cast<std::size_t>(B * K));
    std::vector<double> cn64(cn.size());
    for (std::size_t j = 0; j < cn.size(); ++j) {
      double s = 0;
      for (long long d = 0; d < D; ++d) s += static_cast<double>(c.val[j * static_cast<std::size_t>(D) + static_cast<std::size_t>(d)]) * c.val[j * static_cast<std::size_t>(D) + static_cast<std::size_t>(d)];
      cn64[j] = s;
      cn[j] = u.m == metric::cosine ? static_cast<float>(-1.0 / std::sqrt(s)) : static_cast<float>(s);
    }
    auto dx = jit::to_device(x.bits), dc = jit::to_device(c.bits), dn = jit::to_device(cn);
    const long long guard = 64;
    jit::device_buffer didx(static_cast<std::size_t>(4 * (B * N + guard)));
    std::vector<std::int32_t> first;
    for (int rep = 0; rep < 2; ++rep) {
      didx.fill_u32(0xffffffffu);
      kmeans::assign(dx.address(), dc.address(), u.m == metric::inner_product ? nullptr : static_cast<const float*>(dn.address()),
                     static_cast<std::int32_t*>(didx.address()), B, N, K, D, u.t, u.m);
      auto idx = didx.download<std::int32_t>();
      if (rep == 1) {
        CHECK_MESSAGE(idx == first, "two runs on the same inputs gave different indices");
        break;
      }
      first = idx;
      long long guard_written = 0;
      for (long long g = 0; g < guard; ++g) guard_written += idx[static_cast<std::size_t>(B * N + g)] != -1;
      CHECK(guard_written == 0);
      std::vector<long long> bad(static_cast<std::size_t>(B * N)), twin(bad.size());
      harness::parallel_for(B * N, [&](long long p0, long long p1) {
       for (long long p = p0; p < p1; ++p) {
        const long long b = p / N;
        const float* xp = &x.val[static_cast<std::size_t>(p * D)];
        double xn = 0;
        for (long long d = 0; d < D; ++d) xn += static_cast<double>(xp[d]) * xp[d];
        auto score = [&](long long k) {  // lower is better, in the metric's own units
          const float* cp = &c.val[static_cast<std::size_t>((b * K + k) * D)];
          double dot = 0;
          for (long long d = 0; d < D; ++d) dot += static_cast<double>(xp[d]) * cp[d];
          const double n = cn64[static_cast<std::size_t>(b * K + k)];
          return u.m == metric::l2 ? n - 2 * dot : u.m == metric::inner_product ? -dot : -dot / std::sqrt(n);
        };
        double best = 1e300;
        for (long long k = 0; k < K; ++k) best = std::min(best, score(k));
        const long long got = idx[static_cast<std::size_t>(p)];
        // f32 accumulation of D products: a margin of ~1e-5 of the magnitudes involved.
        const double scale = u.m == metric::l2 ? xn + cn64[0] + 1.0 : u.m == metric::inner_product ? std::sqrt(xn) * std::sqrt(cn64[0]) + 1.0 : std::sqrt(xn) + 1.0;
        if (got < 0 || got >= K || score(got) > best + 2e-5 * scale) bad[static_cast<std::size_t>(p)] = 1;
        else if (got % 7 == 0 && got > 0) twin[static_cast<std::size_t>(p)] = 1;  // a copy of centroid got - 1 was chosen over it
       }
      });
      long long wrong = 0, twins = 0;
      for (std::size_t p = 0; p < bad.size(); ++p) wrong += bad[p], twins += twin[p];
      CHECK_MESSAGE(wrong == 0, wrong << " of " << B * N << " points assigned to a centroid that is not the nearest");
      CHECK_MESSAGE(twins == 0, twins << " points assigned to the copy of a centroid (ties must go to the lowest index)");
    }
  }
}

TEST_CASE("k-means assignment refuses bad arguments with the argument named") {
  // No device is touched before the arguments are checked.
  auto msg = [](auto f) {
    try {
      f();
    } catch (const jit::argument_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  alignas(16) static std::uint16_t buf[64];
  static std::int32_t out[4];
  static float norms[4];
  CHECK(msg([&] { kmeans::assign(buf, buf, norms, out, 1, 1, 1, 100, input_type::bf16); }).find("D = 100") != std::string::npos);
  CHECK(msg([&] { kmeans::assign(buf, buf, norms, out, 1, 0, 1, 64, input_type::bf16); }).find("N = 0") != std::string::npos);
  CHECK(msg([&] { kmeans::assign(buf, buf, nullptr, out, 1, 1, 1, 64, input_type::bf16); }).find("c_norm") != std::string::npos);
  CHECK(msg([&] { kmeans::assign(buf + 1, buf, norms, out, 1, 1, 1, 64, input_type::bf16); }).find("x must be") != std::string::npos);
}
