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
#include <initializer_list>
#include <string>
#include <vector>

#include <cake/harness/parallel.hpp>
#include <cake/harness/random.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/attention/attention.hpp"
#include "device_gate.hpp"
#include "half_inputs.hpp"

using namespace cake;

namespace {

bool usable_hopper() { return cake_gpu_test::require_device(9, 0, true, "cake::attention (sm_90a)"); }

// bf16 inputs, normal with this scale
cake_gpu_test::half_data random_bf16(std::size_t n, harness::random_source& rng, float scale) {
  return cake_gpu_test::random_half(n, true, rng, {harness::distribution::normal, scale});
}

struct result {
  double o_err = 0, lse_err = 0;
  long long nonfinite = 0;
  bool guards = true;
};

// variant: 0 the grid the entry point launches, 1 persistent, 2 persistent with the query tiles longest first,
// 4 persistent with two Q stages, 5 that with O stored through smem by TMA (the schedule prefill picks for the
// shape otherwise, its K / V pipelines one stage shorter where smem needs it), 6 that with the lookahead (the next
// tile's first S and softmax during this tile's last P V; two consumers), 7 that walking longest first, 8 the persistent
// schedule with query tiles of other than bn rows (D = 64: three consumers over 112-key blocks; D = 128: two over 96-key
// blocks; causal: the key blocks crossing the diagonal in ranges, masked), 9 that issuing freely with (causal) skip_masked
// (a warpgroup only waits for and releases the blocks after its last row) and skip_past_rows (a warpgroup whose rows all
// lie past S computes nothing), 10 variant 5 with skip_past_rows, 11 the schedule prefill picks with a split tail (the
// walk's last round split over key blocks into up to 16 parts, merged by the tail combine kernel; not causal),
// 3 the sm_80 fallback through attention::prefill_sm80
// (mma.sync, cp.async; compute_80 PTX on Hopper: what prefill runs on Ampere and Ada)
result run_case(const attention::prefill_shape& s, harness::random_source& rng, float qk_scale, int variant = 0) {
  const std::size_t nq = static_cast<std::size_t>(s.B * s.S * s.H * s.D), nk = static_cast<std::size_t>(s.B * s.T * s.HK * s.D);
  auto q = random_bf16(nq, rng, qk_scale), k = random_bf16(nk, rng, qk_scale), v = random_bf16(nk, rng, 1.0f);
  auto dq = jit::to_device(q.bits), dk = jit::to_device(k.bits), dv = jit::to_device(v.bits);
  const std::size_t nl = static_cast<std::size_t>(s.B * s.H * s.S);
  jit::device_buffer dout(2 * nq + 64), dlse(4 * nl + 64);
  dout.fill_u32(0xffffffffu);
  dlse.fill_u32(0xffffffffu);
  if (variant == 0) {
    attention::prefill(dq.address(), dk.address(), dv.address(), dout.address(), static_cast<float*>(dlse.address()), s);
  } else if (variant == 11) {
    auto c = attention::prefill_config_for(s);
    c.tail_parts = 16;
    attention::prefill_with(c, dq.address(), dk.address(), dv.address(), dout.address(), static_cast<float*>(dlse.address()), s);
  } else if (variant == 3) {  // the entry point prefill takes on devices other than cc 9.0
    attention::prefill_sm80(dq.address(), dk.address(), dv.address(), dout.address(), static_cast<float*>(dlse.address()), s);
  } else {
    auto c = attention::prefill_base_config(s);  // (no lookahead: variants 6 and 7 add it)
    c.persistent = true, c.longest_first = variant == 2 || variant == 7, c.q_stages = variant >= 4 ? 2 : 1, c.o_tma = variant >= 5;
    while (c.stages > 1 && kernels::attention_prefill_smem(c) > 227 * 1024) --c.stages;
    if (variant == 6 || variant == 7) c = kernels::with_lookahead(c);
    if (variant == 8 || variant == 9) {
      c.wgs = s.D == 64 ? 3 : 2, c.bn = s.D == 64 ? 112 : 96, c.lookahead = false;
      if (variant == 9) c.turns = false, c.skip_masked = s.causal;
      while (c.stages > 1 && kernels::attention_prefill_smem(c) > 227 * 1024) --c.stages;
    }
    if (variant == 9 || variant == 10) c.skip_past_rows = true;
    attention::prefill_with(c, dq.address(), dk.address(), dv.address(), dout.address(), static_cast<float*>(dlse.address()), s);
  }
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
      {{1, 8200, 8200, 2, 1, 64, true}, 1.0f},     // causal D 64 from 8k keys: three consumers, 192-row tiles, ragged (42 x 192 + 136)
      {{1, 1000, 1000, 4, 1, 256, true}, 1.0f},    // D 256 (one Q stage, 80-key blocks: the diagonal in ranges), MQA, ragged
      {{2, 200, 333, 4, 2, 256, false}, 2.0f},     // D 256, ragged keys, S != T
      {{1, 127, 127, 8, 1, 256, true}, 1.0f},      // D 256, one partial tile, GQA 8
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

TEST_CASE("attention prefill, the sm_80 fallback, matches an f64 reference (D 64 / 128, causal or not, MHA / GQA / MQA, ragged)") {
  // compute_80 PTX runs on any device from sm_80; the test machine is the H200
  if (!cake_gpu_test::require_device(8, 0, false, "the sm_80 attention fallback")) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const std::vector<attention::prefill_shape> shapes = {
      {1, 128, 128, 2, 2, 64, false},  {1, 128, 128, 2, 2, 128, true},  {2, 200, 333, 4, 1, 128, false},  // MQA, ragged keys, S != T
      {1, 1000, 1000, 8, 2, 128, true},  // GQA 4, causal, ragged
      {1, 7, 7, 2, 2, 64, true},         // one partial tile
      {3, 1, 4097, 8, 1, 64, false},     // one query row, long keys
      {1, 127, 127, 16, 2, 128, true},   // GQA 8
      {1, 300, 300, 2, 2, 128, false, 0.3f},
  };
  for (const auto& s : shapes) {
    const result r = run_case(s, rng, 1.0f, 3);
    MESSAGE("sm_80: B " << s.B << " S " << s.S << " T " << s.T << " H " << s.H << " HK " << s.HK << " D " << s.D << std::string(s.causal ? " causal" : "")
                        << ": O rel_err " << r.o_err << ", LSE max abs err " << r.lse_err);
    CHECK(r.nonfinite == 0);
    CHECK(r.o_err < 2e-2);
    CHECK(r.lse_err < 1e-3);
    CHECK(r.guards);
  }
}

namespace {

// The persistent walks' shapes: those of the grid test, and walks of several points per CTA (causal tiles of
// different lengths, ragged last tiles, the next point in another head or batch entry), each run with every
// variant and checked against f64.
void check_walks(std::initializer_list<int> variants, harness::random_source& rng, const std::vector<attention::prefill_shape>& more = {}) {
  std::vector<attention::prefill_shape> shapes = {
      {1, 128, 128, 2, 2, 64, false},   {1, 128, 128, 2, 2, 128, true},   {2, 200, 333, 4, 1, 128, false}, {1, 1000, 1000, 8, 2, 128, true},
      {1, 7, 7, 2, 2, 64, true},        {3, 1, 4097, 8, 1, 64, false},    {1, 127, 127, 16, 2, 128, true}, {2, 1000, 1000, 4, 4, 64, false},
      {1, 4097, 4097, 2, 1, 128, true}, {2, 2048, 2048, 16, 4, 64, true}, {2, 1100, 1100, 16, 16, 64, false},
      {2, 1000, 1000, 12, 4, 128, true}};  // (causal, 192 tiles: a whole round of 132 CTAs and a partial odd one, serpentine)
  shapes.insert(shapes.end(), more.begin(), more.end());
  auto name = [](int v) {
    switch (v) {
      case 2: return "persistent longest-first";
      case 4: return "persistent two Q stages";
      case 5: return "persistent two Q stages, O by TMA";
      case 6: return "lookahead";
      case 7: return "lookahead longest-first";
      case 8: return "query tiles of other than bn rows";
      case 9: return "query tiles of other than bn rows, skip_masked, skip_past_rows";
      case 10: return "persistent two Q stages, O by TMA, skip_past_rows";
      case 11: return "split tail";
      default: return "persistent";
    }
  };
  for (int variant : variants)
    for (const auto& s : shapes) {
      if (variant == 11 && s.causal) continue;  // (a split tail is for tiles of equal work)
      const result r = run_case(s, rng, 1.0f, variant);
      const std::string what = std::string(name(variant)) + " B " + std::to_string(s.B) + " S " + std::to_string(s.S) + " T " + std::to_string(s.T) + " H " +
                               std::to_string(s.H) + " HK " + std::to_string(s.HK) + " D " + std::to_string(s.D) + (s.causal ? " causal" : "");
      INFO(what << ": O rel_err " << r.o_err << ", LSE max abs err " << r.lse_err);
      MESSAGE(what << ": O rel_err " << r.o_err << ", LSE max abs err " << r.lse_err);
      CHECK(r.nonfinite == 0);
      CHECK(r.o_err < 2e-2);
      CHECK(r.lse_err < 1e-3);
      CHECK(r.guards);
    }
}

}  // namespace

TEST_CASE("attention prefill persistent (longest first, two Q stages, O by TMA) matches an f64 reference on the same shapes") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  check_walks({1, 2, 4, 5}, rng);
}

TEST_CASE("attention prefill lookahead (r.next_point) matches an f64 reference on the same shapes, ascending and longest first") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  check_walks({6, 7}, rng, {{4, 1024, 1024, 32, 8, 128, false}});  // and 512 tiles of 8 key blocks: 4 points per CTA
}

TEST_CASE("attention prefill with query tiles of other than bn rows (causal: the blocks crossing the diagonal masked) matches an f64 reference") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  check_walks({8, 9}, rng, {{1, 4097, 4097, 4, 1, 64, true}, {2, 385, 385, 8, 8, 64, true}});  // (192-row tiles: 22 per head, and 385 = 2 x 192 + 1)
}

TEST_CASE("attention prefill with skip_past_rows (warpgroups whose rows all lie past S compute nothing) matches an f64 reference") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  // (D = 64 non-causal: three consumers taking turns, the skipping one too; 2048 = 10 x 192 + 128: the last tile's third
  // warpgroup past S; S = 1 and 7: every warpgroup but the first; D = 128: two consumers, ragged S)
  check_walks({10}, rng, {{2, 2048, 2048, 4, 4, 64, false}, {2, 385, 385, 8, 8, 64, false}});
}

TEST_CASE("attention prefill with a split tail (the last round's tiles split over key blocks, merged by a second kernel) matches an f64 reference") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  // Walks whose last round is short on 132 SMs (H100, H200): D = 128 (the lookahead's 128-row tiles) 136 tiles of 8 key
  // blocks (4 in the last round: 8 parts each), 144 tiles of 12 ragged ones (12 left: 11 parts), 172 tiles of 4 (40
  // left: 3 parts, fewer than the tile's 4 blocks of 64 x 64: the last part merges two); D = 64 at S = 2k (three
  // consumers, 192-row tiles) 143 tiles (11 left: 12 parts) and 187 (55 left: 2 parts for 3 blocks); at S = 1k (the
  // lookahead) 136 (8 parts). The shared shapes (above) have walks of fewer points than CTAs or full rounds: nothing
  // split, no combine launched.
  check_walks({11}, rng, {{1, 1024, 1024, 17, 1, 128, false}, {2, 1000, 1500, 9, 3, 128, false}, {1, 512, 512, 43, 1, 128, false},
                          {1, 2048, 2048, 13, 1, 64, false}, {1, 2048, 2048, 17, 1, 64, false}, {1, 1024, 1024, 17, 17, 64, false}});
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
  // head dim 256 is the sm_90a schedule's: the portable fallback says so (on any device)
  CHECK_THROWS_WITH_AS(attention::prefill_sm80(p, p, p, p, l, {1, 16, 16, 4, 4, 256}), doctest::Contains("head dim 256 runs on the sm_90a schedule only"),
                       jit::unsupported_error);
}

// ---- varlen: a packed batch of entries of different lengths (cake::attention::prefill_varlen) -----------
//   - O per entry against the f64 reference of that entry alone (bottom-right causal: row i sees keys
//     j <= i + len_k - len_q), relative error below 2e-2 over the batch; LSE absolute error below 1e-3;
//   - rows past the last entry (padding the caller allocated) keep their poison, in O and in LSE;
//   - no non-finite value in the rows the entries cover.
namespace {

struct varlen_case {
  std::vector<long long> len_q, len_k;
  long long H, HK, D;
  bool causal;
};

result run_varlen(const varlen_case& c, harness::random_source& rng) {
  const long long B = static_cast<long long>(c.len_q.size()), pad = 5;  // 5 rows past the last entry, in q and in k
  std::vector<int> cu_q{0}, cu_k{0};
  long long max_q = 1;
  for (long long b = 0; b < B; ++b) {
    cu_q.push_back(cu_q.back() + static_cast<int>(c.len_q[static_cast<std::size_t>(b)]));
    cu_k.push_back(cu_k.back() + static_cast<int>(c.len_k[static_cast<std::size_t>(b)]));
    max_q = std::max(max_q, c.len_q[static_cast<std::size_t>(b)]);
  }
  attention::varlen_shape s;
  s.B = B, s.total_q = cu_q.back() + pad, s.total_k = cu_k.back() + pad, s.max_seqlen_q = max_q, s.H = c.H, s.HK = c.HK, s.D = c.D, s.causal = c.causal;
  const std::size_t nq = static_cast<std::size_t>(s.total_q * s.H * s.D), nk = static_cast<std::size_t>(s.total_k * s.HK * s.D);
  auto q = random_bf16(nq, rng, 1.0f), k = random_bf16(nk, rng, 1.0f), v = random_bf16(nk, rng, 1.0f);
  auto dq = jit::to_device(q.bits), dk = jit::to_device(k.bits), dv = jit::to_device(v.bits), dcq = jit::to_device(cu_q), dck = jit::to_device(cu_k);
  const std::size_t nl = static_cast<std::size_t>(s.H * s.total_q);
  jit::device_buffer dout(2 * nq + 64), dlse(4 * nl + 64);
  dout.fill_u32(0xffffffffu);
  dlse.fill_u32(0xffffffffu);
  attention::prefill_varlen(dq.address(), dk.address(), dv.address(), dout.address(), static_cast<float*>(dlse.address()),
                            static_cast<const int*>(dcq.address()), static_cast<const int*>(dck.address()), s);
  auto out = dout.download<std::uint16_t>();
  auto lse = dlse.download<std::uint32_t>();
  result r;
  const std::size_t covered_q = static_cast<std::size_t>(cu_q.back());
  for (std::size_t i = covered_q * static_cast<std::size_t>(s.H * s.D); i < out.size(); ++i) r.guards = r.guards && out[i] == 0xffff;
  for (long long h = 0; h < s.H; ++h)
    for (long long i = cu_q.back(); i < s.total_q; ++i) r.guards = r.guards && lse[static_cast<std::size_t>(h * s.total_q + i)] == 0xffffffffu;
  for (std::size_t i = nl; i < lse.size(); ++i) r.guards = r.guards && lse[i] == 0xffffffffu;
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.D));
  const long long G = s.H / s.HK;
  std::vector<double> num(static_cast<std::size_t>(B * s.H), 0), den(static_cast<std::size_t>(B * s.H), 0), lerr(static_cast<std::size_t>(B * s.H), 0);
  std::vector<long long> bad(static_cast<std::size_t>(B * s.H), 0);
  harness::parallel_for(B * s.H, [&](long long b0, long long b1) {
   for (long long bhi = b0; bhi < b1; ++bhi) {
    const std::size_t bh = static_cast<std::size_t>(bhi);
    const long long b = bhi / s.H, h = bhi % s.H, hk = h / G;
    const long long q0 = cu_q[static_cast<std::size_t>(b)], k0 = cu_k[static_cast<std::size_t>(b)];
    const long long lq = c.len_q[static_cast<std::size_t>(b)], lk = c.len_k[static_cast<std::size_t>(b)];
    std::vector<double> w(static_cast<std::size_t>(lk));
    for (long long i = 0; i < lq; ++i) {
      const long long last = c.causal ? std::min(i + lk - lq + 1, lk) : lk;  // bottom-right aligned
      const float* qi = &q.val[static_cast<std::size_t>(((q0 + i) * s.H + h) * s.D)];
      double mx = -1e300;
      for (long long j = 0; j < last; ++j) {
        const float* kj = &k.val[static_cast<std::size_t>(((k0 + j) * s.HK + hk) * s.D)];
        double dot = 0;
        for (long long d = 0; d < s.D; ++d) dot += static_cast<double>(qi[d]) * kj[d];
        w[static_cast<std::size_t>(j)] = dot * scale;
        mx = std::max(mx, w[static_cast<std::size_t>(j)]);
      }
      double sum = 0;
      for (long long j = 0; j < last; ++j) sum += (w[static_cast<std::size_t>(j)] = std::exp(w[static_cast<std::size_t>(j)] - mx));
      for (long long d = 0; d < s.D; ++d) {
        double acc = 0;
        for (long long j = 0; j < last; ++j) acc += w[static_cast<std::size_t>(j)] * v.val[static_cast<std::size_t>(((k0 + j) * s.HK + hk) * s.D + d)];
        const double want = acc / sum;
        const double got = harness::bf16_bits_to_float(out[static_cast<std::size_t>(((q0 + i) * s.H + h) * s.D + d)]);
        if (!std::isfinite(got)) ++bad[bh];
        num[bh] += (got - want) * (got - want);
        den[bh] += want * want;
      }
      float gl;
      std::memcpy(&gl, &lse[static_cast<std::size_t>(h * s.total_q + q0 + i)], 4);
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

TEST_CASE("attention prefill varlen matches an f64 reference per entry (mixed lengths, causal or not, GQA 1 / 4 / 8)") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const std::vector<long long> mixed = {1, 7, 127, 1000, 4097};
  // keys longer than the queries (a prefix already in the cache): bottom-right causal shifts the diagonal
  const std::vector<long long> mixed_k = {1, 300, 127, 1130, 4097};
  const std::vector<varlen_case> cases = {
      {mixed, mixed, 2, 2, 128, false},
      {mixed, mixed, 2, 2, 128, true},
      {mixed, mixed, 4, 1, 128, true},     // GQA 4
      {mixed, mixed, 8, 1, 64, false},     // GQA 8, D 64 (3 consumer warpgroups, 112-key blocks)
      {mixed, mixed, 8, 1, 64, true},      // GQA 8, D 64 causal
      {mixed, mixed_k, 4, 1, 128, true},   // len_k > len_q: the diagonal is not block-aligned
      {mixed, mixed_k, 2, 2, 64, false},
      {{300, 0, 5, 129}, {300, 64, 77, 500}, 4, 4, 128, true},  // an empty entry (no query rows)
      {mixed, mixed_k, 4, 1, 256, true},   // D 256 (80-key blocks), len_k > len_q
      {mixed, mixed, 2, 2, 256, false},
  };
  for (const auto& c : cases) {
    const result r = run_varlen(c, rng);
    std::string lens;
    for (std::size_t i = 0; i < c.len_q.size(); ++i) lens += " " + std::to_string(c.len_q[i]) + "/" + std::to_string(c.len_k[i]);
    INFO("entries (q/k)" << lens << " H " << c.H << " HK " << c.HK << " D " << c.D << (c.causal ? " causal" : "") << ": O rel_err " << r.o_err
                         << ", LSE max abs err " << r.lse_err);
    MESSAGE("varlen" << lens << " H " << c.H << " HK " << c.HK << " D " << c.D << (c.causal ? " causal" : "") << ": O rel_err " << r.o_err
                     << ", LSE max abs err " << r.lse_err);
    CHECK(r.nonfinite == 0);
    CHECK(r.o_err < 2e-2);
    CHECK(r.lse_err < 1e-3);
    CHECK(r.guards);
  }
}

TEST_CASE("attention prefill varlen refuses bad arguments with the argument's name") {
  if (!usable_hopper()) return;
  jit::device_buffer buf(1 << 20);
  void* p = buf.address();
  float* l = static_cast<float*>(buf.address());
  const int* cu = static_cast<const int*>(buf.address());
  auto call = [&](attention::varlen_shape s, const int* cq = nullptr) { attention::prefill_varlen(p, p, p, p, l, cq ? cq : cu, cu, s); };
  auto shape = [](long long B, long long tq, long long tk, long long mq, long long H, long long HK, long long D) {
    attention::varlen_shape s;
    s.B = B, s.total_q = tq, s.total_k = tk, s.max_seqlen_q = mq, s.H = H, s.HK = HK, s.D = D;
    return s;
  };
  CHECK_THROWS_WITH_AS(call(shape(0, 16, 16, 16, 4, 4, 64)), doctest::Contains("prefill_varlen: B = 0"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(1, 0, 16, 16, 4, 4, 64)), doctest::Contains("total_q = 0"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(1, 16, 16, 17, 4, 4, 64)), doctest::Contains("max_seqlen_q = 17"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(1, 16, 16, 16, 4, 3, 64)), doctest::Contains("multiple of HK = 3"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(1, 16, 16, 16, 4, 4, 96)), doctest::Contains("D = 96 is not supported"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(1, 16, 16, 16, 4, 4, 64), reinterpret_cast<const int*>(static_cast<char*>(p) + 2)),
                       doctest::Contains("cu_seqlens_q must be"), jit::argument_error);
}
