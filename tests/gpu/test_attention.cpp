// cake::attention::prefill on the GPU against an f64 host reference, on fresh random inputs: head dims 64
// and 128, causal and not, MHA / GQA (4, 8) / MQA, ragged sequence lengths (1, 7, 127, 1000, 4097), B = 1
// and B > 1, S != T. O (bf16) and LSE (f32) are poisoned first and followed by a guard that must survive.
//   - O: relative error (Frobenius) against the reference below 2e-2 (bf16 P and output rounding);
//   - LSE: absolute error below 1e-3 per row (it is a log: relative error of the row sum);
//   - nothing past the outputs is written; no non-finite value.
//
// CAKE_SEED=<n> reproduces a run (the seed is printed first).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <cake/harness/parallel.hpp>
#include <cake/harness/random.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/attention/attention.hpp"
#include "device_gate.hpp"

using namespace cake;

namespace {

bool usable_hopper() { return cake_gpu_test::require_device(9, 0, true, "cake::attention (sm_90a)"); }

struct bf16_data {
  std::vector<std::uint16_t> bits;
  std::vector<float> val;
};
bf16_data random_bf16(std::size_t n, harness::random_source& rng, float scale) {
  auto v = harness::random_vector<harness::host_bf16>(n, rng, {harness::distribution::normal, scale});
  bf16_data d;
  d.bits.resize(n);
  d.val.resize(n);
  for (std::size_t i = 0; i < n; ++i) d.bits[i] = v[i].bits, d.val[i] = v[i].to_float();
  return d;
}

struct result {
  double o_err = 0, lse_err = 0;
  long long nonfinite = 0;
  bool guards = true;
};

result run_case(const attention::prefill_shape& s, harness::random_source& rng, float qk_scale) {
  const std::size_t nq = static_cast<std::size_t>(s.B * s.S * s.H * s.D), nk = static_cast<std::size_t>(s.B * s.T * s.HK * s.D);
  auto q = random_bf16(nq, rng, qk_scale), k = random_bf16(nk, rng, qk_scale), v = random_bf16(nk, rng, 1.0f);
  auto dq = jit::to_device(q.bits), dk = jit::to_device(k.bits), dv = jit::to_device(v.bits);
  const std::size_t nl = static_cast<std::size_t>(s.B * s.H * s.S);
  jit::device_buffer dout(2 * nq + 64), dlse(4 * nl + 64);
  dout.fill_u32(0xffffffffu);
  dlse.fill_u32(0xffffffffu);
  attention::prefill(dq.address(), dk.address(), dv.address(), dout.address(), static_cast<float*>(dlse.address()), s);
  auto out = dout.download<std::uint16_t>();
  auto lse = dlse.download<std::uint32_t>();
  result r;
  for (std::size_t i = nq; i < out.size(); ++i) r.guards = r.guards && out[i] == 0xffff;
  for (std::size_t i = nl; i < lse.size(); ++i) r.guards = r.guards && lse[i] == 0xffffffffu;
  const double scale = s.softmax_scale > 0 ? s.softmax_scale : 1.0 / std::sqrt(static_cast<double>(s.D));
  const long long G = s.H / s.HK;
  // per (b, h, i): the reference row; errors summed over rows (parallel over b * h)
  std::vector<double> num(static_cast<std::size_t>(s.B * s.H), 0), den(static_cast<std::size_t>(s.B * s.H), 0), lerr(static_cast<std::size_t>(s.B * s.H), 0);
  std::vector<long long> bad(static_cast<std::size_t>(s.B * s.H), 0);
  harness::parallel_for(s.B * s.H, [&](long long b0, long long b1) {
   for (long long bhi = b0; bhi < b1; ++bhi) {
    const std::size_t bh = static_cast<std::size_t>(bhi);
    const long long b = static_cast<long long>(bh) / s.H, h = static_cast<long long>(bh) % s.H, hk = h / G;
    std::vector<double> w(static_cast<std::size_t>(s.T));
    for (long long i = 0; i < s.S; ++i) {
      const long long last = s.causal ? std::min(i + 1, s.T) : s.T;
      const float* qi = &q.val[static_cast<std::size_t>(((b * s.S + i) * s.H + h) * s.D)];
      double mx = -1e300;
      for (long long j = 0; j < last; ++j) {
        const float* kj = &k.val[static_cast<std::size_t>(((b * s.T + j) * s.HK + hk) * s.D)];
        double dot = 0;
        for (long long d = 0; d < s.D; ++d) dot += static_cast<double>(qi[d]) * kj[d];
        w[static_cast<std::size_t>(j)] = dot * scale;
        mx = std::max(mx, w[static_cast<std::size_t>(j)]);
      }
      double sum = 0;
      for (long long j = 0; j < last; ++j) sum += (w[static_cast<std::size_t>(j)] = std::exp(w[static_cast<std::size_t>(j)] - mx));
      for (long long d = 0; d < s.D; ++d) {
        double acc = 0;
        for (long long j = 0; j < last; ++j) acc += w[static_cast<std::size_t>(j)] * v.val[static_cast<std::size_t>(((b * s.T + j) * s.HK + hk) * s.D + d)];
        const double want = acc / sum;
        const double got = harness::bf16_bits_to_float(out[static_cast<std::size_t>(((b * s.S + i) * s.H + h) * s.D + d)]);
        if (!std::isfinite(got)) ++bad[bh];
        num[bh] += (got - want) * (got - want);
        den[bh] += want * want;
      }
      float gl;
      std::memcpy(&gl, &lse[static_cast<std::size_t>((b * s.H + h) * s.S + i)], 4);
      if (!std::isfinite(gl)) ++bad[bh];
      lerr[bh] = std::max(lerr[bh], std::abs(static_cast<double>(gl) - (mx + std::log(sum))));
    }
   }
  });
  double n = 0, dd = 0;
  for (std::size_t i = 0; i < num.size(); ++i) n += num[i], dd += den[i], r.lse_err = std::max(r.lse_err, lerr[i]), r.nonfinite += bad[i];
  r.o_err = std::sqrt(n / std::max(dd, 1e-300));
  return r;
}

}  // namespace

TEST_CASE("attention prefill matches an f64 reference (D 64 / 128, causal or not, MHA / GQA / MQA, ragged lengths)") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  struct run {
    attention::prefill_shape s;
    float qk_scale;  // the spread of q and k (larger: peakier softmax)
  };
  const std::vector<run> runs = {
      {{1, 128, 128, 2, 2, 64, false}, 1.0f},
      {{1, 128, 128, 2, 2, 128, true}, 1.0f},
      {{2, 200, 333, 4, 1, 128, false}, 2.0f},     // MQA, ragged keys, S != T
      {{1, 1000, 1000, 8, 2, 128, true}, 1.0f},    // GQA 4, causal, ragged
      {{1, 7, 7, 2, 2, 64, true}, 1.0f},           // one partial tile
      {{3, 1, 4097, 8, 1, 64, false}, 1.0f},       // one query row, long keys, MQA
      {{1, 127, 127, 16, 2, 128, true}, 1.0f},     // GQA 8
      {{2, 1000, 1000, 4, 4, 64, false}, 0.5f},    // MHA
      {{1, 4097, 4097, 2, 1, 128, true}, 1.0f},    // long, causal, MQA
      {{1, 300, 300, 2, 2, 128, false, 0.3f}, 1.0f},  // explicit softmax scale
  };
  for (const auto& [s, sc] : runs) {
    const result r = run_case(s, rng, sc);
    INFO("B " << s.B << " S " << s.S << " T " << s.T << " H " << s.H << " HK " << s.HK << " D " << s.D << std::string(s.causal ? " causal" : "") << ": O rel_err " << r.o_err
              << ", LSE max abs err " << r.lse_err);
    MESSAGE("B " << s.B << " S " << s.S << " T " << s.T << " H " << s.H << " HK " << s.HK << " D " << s.D << std::string(s.causal ? " causal" : "") << ": O rel_err "
                 << r.o_err << ", LSE max abs err " << r.lse_err);
    CHECK(r.nonfinite == 0);
    CHECK(r.o_err < 2e-2);
    CHECK(r.lse_err < 1e-3);
    CHECK(r.guards);
  }
}

TEST_CASE("attention prefill refuses bad arguments with the argument's name") {
  if (!usable_hopper()) return;
  jit::device_buffer buf(1 << 20);
  void* p = buf.address();
  float* l = static_cast<float*>(buf.address());
  auto call = [&](attention::prefill_shape s, void* q = nullptr) { attention::prefill(q ? q : p, p, p, p, l, s); };
  CHECK_THROWS_WITH_AS(call({1, 16, 16, 4, 3, 64}), doctest::Contains("multiple of HK = 3"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call({1, 16, 16, 4, 4, 96}), doctest::Contains("D = 96 is not supported"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call({1, 0, 16, 4, 4, 64}), doctest::Contains("S = 0"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call({1, 32, 16, 4, 4, 64, true}), doctest::Contains("S = 32 > T = 16"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call({1, 16, 16, 4, 4, 64}, static_cast<char*>(p) + 2), doctest::Contains("q must be"), jit::argument_error);
}
