// cake::attention::decode_paged on the GPU against an f64 host reference, on fresh random inputs: page
// sizes 16 and 64, page tables that are a random permutation of the pool (pages of one request scattered),
// context lengths 1, 7, 127, 1000 and 4097 mixed in one batch, GQA ratios 1 / 4 / 8, head dims 64 and 128,
// B = 1 and B = 64, explicit split counts (slices with no key), 128-key blocks and 3 stages
// (decode_paged_with), a request of length 0. O (bf16) and LSE
// (f32) are poisoned first and followed by a guard that must survive.
//   - O: relative error (Frobenius) against the reference below 2e-2 (bf16 P and output rounding);
//   - LSE: absolute error below 1e-3 per row;
//   - nothing past the outputs is written; no non-finite value (a request of length 0: O = 0, LSE = -inf).
//
// CAKE_SEED=<n> reproduces a run (the seed is printed first).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
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

bool usable_hopper() { return cake_gpu_test::require_device(9, 0, true, "cake::attention::decode_paged (sm_90a)"); }

// bf16 inputs, normal with this scale
cake_gpu_test::half_data random_bf16(std::size_t n, harness::random_source& rng, float scale) {
  return cake_gpu_test::random_half(n, true, rng, {harness::distribution::normal, scale});
}

struct decode_case {
  std::vector<long long> lens;  // per request
  long long H, HK, D, page_size;
  int splits = 0;  // > 0: decode_paged_with this split count; 0: the entry point's choice
  int bn = 0, stages = 0;  // > 0: decode_paged_with these (with splits, or the entry point's split)
  bool persistent = false;  // decode_paged_with a persistent walk (one CTA per SM over the points)
  bool fused = false;       // decode_paged_with fused_combine: the last slice combines (no combine kernel)
  bool graph = false;       // decode_paged captured into a CUDA graph on a new stream (after one call on the default
                            // stream, which builds the kernels) and the graph launched: the call may allocate nothing there
  bool cluster = false;     // decode_paged_with cluster_combine: a request's slices one cluster, merged in DSMEM
  bool fp8 = false;         // the caches in e4m3 with per-tensor scales (the reference takes the dequantized values)
};

struct result {
  double o_err = 0, lse_err = 0;
  long long nonfinite = 0;
  bool guards = true, empty_ok = true;
  int splits = 0;
  bool fused = false;  // the slices combined themselves (the case's fused_combine, or the entry point's choice: one slice)
  bool cluster = false;  // the slices merged in distributed shared memory (cluster_combine)
  bool workspace_untouched = false;  // the workspace still holds its poison (fused_combine with one slice, and cluster_combine, store no state)
};

result run_case(const decode_case& c, harness::random_source& rng) {
  const long long B = static_cast<long long>(c.lens.size()), ps = c.page_size;
  long long max_pages = 1, total_pages = 0;
  for (long long len : c.lens) max_pages = std::max(max_pages, (len + ps - 1) / ps), total_pages += (len + ps - 1) / ps;
  const long long num_pages = total_pages + 3;  // a few pages no request owns
  // The pool's pages in a random order: request b takes the next ceil(len / ps) of them.
  std::vector<int> perm(static_cast<std::size_t>(num_pages));
  std::iota(perm.begin(), perm.end(), 0);
  for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[static_cast<std::size_t>(rng.engine()() % i)]);
  std::vector<int> table(static_cast<std::size_t>(B * max_pages), -1);  // entries past a request's pages: never read
  std::size_t next = 0;
  for (long long b = 0; b < B; ++b)
    for (long long i = 0; i < (c.lens[static_cast<std::size_t>(b)] + ps - 1) / ps; ++i) table[static_cast<std::size_t>(b * max_pages + i)] = perm[next++];
  std::vector<int> lens(c.lens.begin(), c.lens.end());

  attention::decode_shape s;
  s.B = B, s.H = c.H, s.HK = c.HK, s.D = c.D, s.num_pages = num_pages, s.page_size = ps, s.max_pages = max_pages;
  const std::size_t nq = static_cast<std::size_t>(B * s.H * s.D), nk = static_cast<std::size_t>(num_pages * ps * s.HK * s.D);
  auto q = random_bf16(nq, rng, 1.0f), k = random_bf16(nk, rng, 1.0f), v = random_bf16(nk, rng, 1.0f);
  // fp8 caches: the normal values over the scales, rounded to e4m3 (about 3 significant bits, so the scores and
  // the output move by a few percent: the reference takes the dequantized values, key = k_scale * stored)
  std::vector<std::uint8_t> k8, v8;
  if (c.fp8) {
    s.kv_fp8 = true, s.k_scale = 1.0f / 64, s.v_scale = 1.0f / 32;
    k8.resize(nk), v8.resize(nk);
    for (std::size_t i = 0; i < nk; ++i) {
      k8[i] = harness::float_to_e4m3_bits(k.val[i] / s.k_scale), k.val[i] = s.k_scale * harness::e4m3_bits_to_float(k8[i]);
      v8[i] = harness::float_to_e4m3_bits(v.val[i] / s.v_scale), v.val[i] = s.v_scale * harness::e4m3_bits_to_float(v8[i]);
    }
  }
  auto dq = jit::to_device(q.bits), dt = jit::to_device(table), dl = jit::to_device(lens);
  auto dk = c.fp8 ? jit::to_device(k8) : jit::to_device(k.bits), dv = c.fp8 ? jit::to_device(v8) : jit::to_device(v.bits);
  kernels::attention_decode_config cfg = attention::decode_config_for(s);
  const bool forced = c.splits > 0 || c.bn > 0 || c.stages > 0 || c.persistent || c.fused || c.cluster;
  cfg.persistent = c.persistent;
  if (forced) cfg.fused_combine = c.fused;  // (else the entry point's: fused where the context is one slice)
  if (forced) cfg.cluster_combine = c.cluster;
  if (c.splits > 0) cfg.splits = c.splits;
  if (c.bn > 0) cfg.bn = c.bn;
  if (c.stages > 0) cfg.stages = c.stages;
  const long long ws = forced ? attention::decode_workspace_bytes_with(cfg, s) : attention::decode_workspace_bytes(s);
  jit::device_buffer dws(static_cast<std::size_t>(ws));
  dws.fill_u32(0x7fc00000u);  // NaN: a slice result the combine reads but no slice wrote would show
  const std::size_t nl = static_cast<std::size_t>(B * s.H);
  jit::device_buffer dout(2 * nq + 64), dlse(4 * nl + 64);
  dout.fill_u32(0xffffffffu);
  dlse.fill_u32(0xffffffffu);
  const int* pt = static_cast<const int*>(dt.address());
  const int* sl = static_cast<const int*>(dl.address());
  if (forced)
    attention::decode_paged_with(cfg, dq.address(), dk.address(), dv.address(), pt, sl, dout.address(), static_cast<float*>(dlse.address()), dws.address(), s);
  else
    attention::decode_paged(dq.address(), dk.address(), dv.address(), pt, sl, dout.address(), static_cast<float*>(dlse.address()), dws.address(), s);
  if (c.graph) {  // again, captured on a new stream in global mode (where an allocation would fail the capture), from poisoned outputs
    REQUIRE_FALSE(forced);
    const auto& d = jit::driver::get();
    REQUIRE((d.cuStreamBeginCapture && d.cuStreamEndCapture && d.cuGraphInstantiate && d.cuGraphLaunch && d.cuGraphExecDestroy && d.cuGraphDestroy));
    d.check(d.cuCtxSynchronize(), "cuCtxSynchronize", "decode graph");
    dws.fill_u32(0x7fc00000u);
    dout.fill_u32(0xffffffffu);
    dlse.fill_u32(0xffffffffu);
    d.check(d.cuCtxSynchronize(), "cuCtxSynchronize", "decode graph");  // (the fills ran on the legacy stream; st does not wait for it)
    CUstream st = nullptr;
    d.check(d.cuStreamCreate(&st, CU_STREAM_NON_BLOCKING), "cuStreamCreate", "decode graph");
    d.check(d.cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture", "decode graph");
    attention::decode_paged(dq.address(), dk.address(), dv.address(), pt, sl, dout.address(), static_cast<float*>(dlse.address()), dws.address(), s, st);
    CUgraph g = nullptr;
    d.check(d.cuStreamEndCapture(st, &g), "cuStreamEndCapture", "decode graph");
    CUgraphExec ge = nullptr;
    d.check(d.cuGraphInstantiate(&ge, g, 0), "cuGraphInstantiate", "decode graph");
    d.check(d.cuGraphLaunch(ge, st), "cuGraphLaunch", "decode graph");
    d.check(d.cuStreamSynchronize(st), "cuStreamSynchronize", "decode graph");
    d.check(d.cuGraphExecDestroy(ge), "cuGraphExecDestroy", "decode graph");
    d.check(d.cuGraphDestroy(g), "cuGraphDestroy", "decode graph");
    d.check(d.cuStreamDestroy(st), "cuStreamDestroy", "decode graph");
  }
  auto out = dout.download<std::uint16_t>();
  auto lse = dlse.download<std::uint32_t>();
  result r;
  r.splits = cfg.splits;
  r.fused = cfg.fused_combine;
  r.cluster = cfg.cluster_combine;
  {
    const auto w = dws.download<std::uint32_t>();
    r.workspace_untouched = std::all_of(w.begin(), w.end(), [](std::uint32_t x) { return x == 0x7fc00000u; });
  }
  for (std::size_t i = nq; i < out.size(); ++i) r.guards = r.guards && out[i] == 0xffff;
  for (std::size_t i = nl; i < lse.size(); ++i) r.guards = r.guards && lse[i] == 0xffffffffu;
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.D));
  const long long G = s.H / s.HK;
  std::vector<double> num(nl, 0), den(nl, 0), lerr(nl, 0);
  std::vector<long long> bad(nl, 0);
  std::vector<char> empty_bad(nl, 0);
  harness::parallel_for(B * s.H, [&](long long b0, long long b1) {
    for (long long bhi = b0; bhi < b1; ++bhi) {
      const std::size_t bh = static_cast<std::size_t>(bhi);
      const long long b = bhi / s.H, h = bhi % s.H, hk = h / G, len = c.lens[static_cast<std::size_t>(b)];
      float gl;
      std::memcpy(&gl, &lse[bh], 4);
      if (len == 0) {  // the contract: O = 0, LSE = -inf
        for (long long d = 0; d < s.D; ++d) empty_bad[bh] |= out[static_cast<std::size_t>(bhi * s.D + d)] != 0 && out[static_cast<std::size_t>(bhi * s.D + d)] != 0x8000;
        empty_bad[bh] |= !(std::isinf(gl) && gl < 0);
        continue;
      }
      auto key_row = [&](long long j) {  // row j of the request in the caches: its page, then its row in the page
        const long long page = table[static_cast<std::size_t>(b * max_pages + j / ps)];
        return ((page * ps + j % ps) * s.HK + hk) * s.D;
      };
      const float* qi = &q.val[static_cast<std::size_t>(bhi * s.D)];
      std::vector<double> w(static_cast<std::size_t>(len));
      double mx = -1e300;
      for (long long j = 0; j < len; ++j) {
        const float* kj = &k.val[static_cast<std::size_t>(key_row(j))];
        double dot = 0;
        for (long long d = 0; d < s.D; ++d) dot += static_cast<double>(qi[d]) * kj[d];
        w[static_cast<std::size_t>(j)] = dot * scale;
        mx = std::max(mx, w[static_cast<std::size_t>(j)]);
      }
      double sum = 0;
      for (long long j = 0; j < len; ++j) sum += (w[static_cast<std::size_t>(j)] = std::exp(w[static_cast<std::size_t>(j)] - mx));
      for (long long d = 0; d < s.D; ++d) {
        double acc = 0;
        for (long long j = 0; j < len; ++j) acc += w[static_cast<std::size_t>(j)] * v.val[static_cast<std::size_t>(key_row(j) + d)];
        const double want = acc / sum;
        const double got = harness::bf16_bits_to_float(out[static_cast<std::size_t>(bhi * s.D + d)]);
        if (!std::isfinite(got)) ++bad[bh];
        num[bh] += (got - want) * (got - want);
        den[bh] += want * want;
      }
      if (!std::isfinite(gl)) ++bad[bh];
      lerr[bh] = std::max(lerr[bh], std::abs(static_cast<double>(gl) - (mx + std::log(sum))));
    }
  });
  double n = 0, dd = 0;
  for (std::size_t i = 0; i < nl; ++i)
    n += num[i], dd += den[i], r.lse_err = std::max(r.lse_err, lerr[i]), r.nonfinite += bad[i], r.empty_ok = r.empty_ok && !empty_bad[i];
  r.o_err = std::sqrt(n / std::max(dd, 1e-300));
  return r;
}

// The cases' batches: the mixed lengths of issue 12, B = 64 (the mixed lengths, then random ones up to 2000), and
// the mixed lengths with a request of no key yet (seq_len 0) third.
struct batches {
  std::vector<long long> mixed = {1, 7, 127, 1000, 4097}, batch64, with_empty;
  explicit batches(harness::random_source& rng) {
    for (int i = 0; i < 64; ++i) batch64.push_back(i < 5 ? mixed[static_cast<std::size_t>(i)] : 1 + static_cast<long long>(rng.engine()() % 2000));
    with_empty = mixed;
    with_empty.insert(with_empty.begin() + 2, 0);
  }
};

void check_cases(const std::vector<decode_case>& cases, harness::random_source& rng) {
  for (const auto& c : cases) {
    const result r = run_case(c, rng);
    std::string lens;
    for (std::size_t i = 0; i < c.lens.size() && i < 6; ++i) lens += " " + std::to_string(c.lens[i]);
    if (c.lens.size() > 6) lens += " ... (B " + std::to_string(c.lens.size()) + ")";
    INFO(std::string(c.fp8 ? "fp8 " : "") << "lens" << lens << " H " << c.H << " HK " << c.HK << " D " << c.D << " page " << c.page_size << " splits " << r.splits << std::string(r.fused ? " fused" : "") << std::string(r.cluster ? " cluster" : "") << std::string(c.graph ? " graph" : "") << " bn " << c.bn << " stages " << c.stages << std::string(c.persistent ? " persistent" : "") << ": O rel_err " << r.o_err
                << ", LSE max abs err " << r.lse_err);
    MESSAGE(std::string(c.fp8 ? "fp8 " : "") << "lens" << lens << " H " << c.H << " HK " << c.HK << " D " << c.D << " page " << c.page_size << " splits " << r.splits << std::string(r.fused ? " fused" : "") << std::string(r.cluster ? " cluster" : "") << std::string(c.graph ? " graph" : "") << " bn " << c.bn << " stages " << c.stages << std::string(c.persistent ? " persistent" : "") << ": O rel_err " << r.o_err
                   << ", LSE max abs err " << r.lse_err);
    CHECK(r.nonfinite == 0);
    CHECK(r.o_err < 2e-2);
    CHECK(r.lse_err < 1e-3);
    CHECK(r.guards);
    CHECK(r.empty_ok);
    // one slice with fused_combine, and slices merged in a cluster, write O and LSE themselves: no slice state
    // (that the combine kernel would read) at all
    if ((r.fused && r.splits == 1) || r.cluster) CHECK(r.workspace_untouched);
    if (!r.fused && !r.cluster) CHECK_FALSE(r.workspace_untouched);
  }
}
}  // namespace

TEST_CASE("attention decode_paged matches an f64 reference (pages 16 / 64 shuffled, mixed contexts, GQA 1 / 4 / 8, D 64 / 128)") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const batches bs(rng);
  const auto& mixed = bs.mixed;
  const auto& batch64 = bs.batch64;
  const auto& with_empty = bs.with_empty;
  const std::vector<decode_case> cases = {
      {mixed, 8, 8, 128, 16},         // MHA (G 1)
      {mixed, 8, 2, 128, 64},         // GQA 4, pages of 64
      {mixed, 16, 2, 128, 16},        // GQA 8
      {mixed, 8, 2, 64, 16},          // D 64
      {mixed, 16, 2, 64, 64},         // D 64, GQA 8, pages of 64
      {{4097}, 32, 8, 128, 16},       // B = 1, long: many splits
      {{1}, 32, 8, 128, 16},          // B = 1, one key
      {{1000}, 32, 8, 128, 64},       // B = 1
      {batch64, 32, 8, 128, 16},      // B = 64, the bench's heads
      {batch64, 8, 2, 128, 64},       // B = 64, pages of 64
      {{1, 7, 127}, 8, 2, 128, 16, 8},  // explicit split: slices with no block
      {mixed, 8, 2, 128, 16, 3},      // a split count that is no power of two
      {with_empty, 8, 2, 128, 16},    // seq_len 0
      {mixed, 32, 8, 128, 16, 0, 128},     // decode_paged_with: 128-key blocks (8 pages of 16)
      {mixed, 8, 2, 128, 64, 4, 128},      // 128-key blocks of 2 pages of 64, 4 splits
      {mixed, 8, 2, 64, 16, 0, 0, 3},      // 3 stages
      {batch64, 32, 8, 128, 16, 4, 128, 3, true},  // persistent: 4 x 8 x 64 points over one CTA per SM
      {mixed, 8, 2, 128, 64, 0, 128, 2, true},     // persistent, pages of 64, the entry point's split
  };
  check_cases(cases, rng);
}

TEST_CASE("attention decode_paged captured in a CUDA graph on a new stream matches an f64 reference (one slice fused, several combined)") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  std::vector<long long> short64;  // B = 64, up to 128 keys: 512 (request, KV head) units of one slice each
  for (int i = 0; i < 64; ++i) short64.push_back(1 + static_cast<long long>(rng.engine()() % 128));
  const std::vector<decode_case> cases = {
      {short64, 32, 8, 128, 16, 0, 0, 0, false, false, true},                 // one slice: fused, no arrival counters
      {{100, 37, 128}, 8, 2, 128, 16, 0, 0, 0, false, false, true},           // B = 3, one 128-key block: one slice
      {{1, 7, 127, 1000, 4097}, 8, 2, 128, 16, 0, 0, 0, false, false, true},  // several slices: the combine kernel
  };
  check_cases(cases, rng);
}

TEST_CASE("attention decode_paged with fused_combine (the last slice to arrive combines the others) matches an f64 reference") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const batches bs(rng);
  const auto& mixed = bs.mixed;
  const auto& batch64 = bs.batch64;
  const auto& with_empty = bs.with_empty;
  // (the counters are the library's, per stream: every case after the first runs on counters an earlier launch
  // left at zero)
  const std::vector<decode_case> cases = {
      {mixed, 8, 2, 128, 16, 0, 0, 0, false, true},          // the entry point's split, GQA 4
      {{4097}, 32, 8, 128, 16, 0, 0, 0, false, true},        // B = 1, long: many slices meet
      {{1}, 32, 8, 128, 16, 0, 0, 0, false, true},           // B = 1, one key: every slice but one empty
      {batch64, 32, 8, 128, 16, 0, 0, 0, false, true},       // B = 64, the bench's heads
      {{1, 7, 127}, 8, 2, 128, 16, 8, 0, 0, false, true},    // explicit split: slices with no block
      {mixed, 8, 2, 128, 16, 3, 0, 0, false, true},          // a split of 3
      {with_empty, 8, 2, 128, 16, 0, 0, 0, false, true},     // seq_len 0: O = 0, LSE = -inf
      {mixed, 8, 2, 128, 16, 1, 0, 0, false, true},          // one slice: O and LSE directly
      {mixed, 16, 2, 64, 64, 4, 0, 0, false, true},          // D 64, GQA 8, pages of 64
      {mixed, 8, 8, 128, 16, 32, 128, 3, false, true},       // MHA, 32 slices of 128-key blocks
      {batch64, 32, 8, 128, 16, 4, 128, 3, true, true},      // persistent walk
  };
  check_cases(cases, rng);
}

TEST_CASE("attention decode_paged with cluster_combine (a request's slices one cluster, merged in distributed shared memory) matches an f64 reference") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const batches bs(rng);
  const auto& mixed = bs.mixed;
  const auto& batch64 = bs.batch64;
  const auto& with_empty = bs.with_empty;
  auto cl = [](std::vector<long long> lens, long long H, long long HK, long long D, long long ps, int splits, int bn = 0, int stages = 0) {
    return decode_case{.lens = std::move(lens), .H = H, .HK = HK, .D = D, .page_size = ps, .splits = splits, .bn = bn, .stages = stages, .cluster = true};
  };
  const std::vector<decode_case> cases = {
      cl(mixed, 8, 2, 128, 16, 2),              // two slices, GQA 4
      cl(mixed, 8, 2, 128, 16, 4, 64, 2),       // four, 64-key blocks in 2 stages
      cl({4097}, 32, 8, 128, 16, 8, 128, 3),    // B = 1, long: the few-request schedule (one CTA per SM)
      cl({1}, 32, 8, 128, 16, 8, 128, 3),       // B = 1, one key: every slice but one empty
      cl({1, 7, 127}, 8, 2, 128, 16, 8),        // slices with no block
      cl(with_empty, 8, 2, 128, 16, 4),         // seq_len 0: O = 0, LSE = -inf (no slice had a key)
      cl(batch64, 32, 8, 128, 16, 4, 64, 3),    // B = 64, the bench's heads
      cl(mixed, 16, 2, 64, 64, 4),              // D 64 (one part), GQA 8, pages of 64
      cl(mixed, 8, 8, 128, 16, 2, 128, 3),      // MHA, 128-key blocks
      cl(mixed, 64, 1, 128, 16, 8),             // MQA-like G 64: every row of the tile stored
  };
  check_cases(cases, rng);
}

TEST_CASE("attention decode_paged with fp8 (e4m3) caches and per-tensor scales matches an f64 reference on the dequantized values") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const batches bs(rng);
  auto fp8 = [](decode_case c) {
    c.fp8 = true;
    return c;
  };
  const std::vector<decode_case> cases = {
      fp8({bs.mixed, 8, 2, 128, 16}),                     // the entry point's choice: GQA 4, splits, the combine kernel
      fp8({bs.mixed, 8, 8, 128, 64}),                     // MHA, pages of 64
      fp8({bs.mixed, 16, 2, 64, 16}),                     // D 64, GQA 8
      fp8({{4097}, 32, 8, 128, 16}),                      // B = 1, long: 128-key blocks, many slices
      fp8({{1}, 32, 8, 128, 16}),                         // one key
      fp8({bs.batch64, 32, 8, 128, 16}),                  // B = 64: one slice, fused
      fp8({bs.with_empty, 8, 2, 128, 16}),                // seq_len 0
      fp8({{1, 7, 127}, 8, 2, 128, 16, 8}),               // slices with no block
      fp8({bs.mixed, 8, 2, 128, 16, 0, 64, 4}),           // 64-key blocks in 4 stages
      fp8({bs.batch64, 32, 8, 128, 16, 4, 128, 3, true}), // persistent (Q converted per point)
      fp8({bs.mixed, 8, 2, 128, 16, 4, 64, 3, false, false, false, true}),  // cluster_combine with 4 slices (64-key blocks: at
                                                                             // 128 the fp8 cluster form's ops pass a Program's 160)
  };
  check_cases(cases, rng);
}

TEST_CASE("attention decode_paged refuses bad arguments with the argument's name") {
  if (!usable_hopper()) return;
  jit::device_buffer buf(1 << 20);
  void* p = buf.address();
  float* l = static_cast<float*>(buf.address());
  const int* ip = static_cast<const int*>(buf.address());
  auto shape = [](long long H, long long HK, long long D, long long ps) {
    attention::decode_shape s;
    s.B = 2, s.H = H, s.HK = HK, s.D = D, s.page_size = ps, s.num_pages = 8, s.max_pages = 4;
    return s;
  };
  auto call = [&](attention::decode_shape s, void* ws = nullptr) { attention::decode_paged(p, p, p, ip, ip, p, l, ws ? ws : p, s); };
  CHECK_THROWS_WITH_AS(call(shape(8, 2, 128, 48)), doctest::Contains("page_size = 48 is not supported"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(8, 3, 128, 16)), doctest::Contains("H = 8 must be a multiple of HK = 3"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(128, 1, 128, 16)), doctest::Contains("H / HK = 128"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(8, 2, 96, 16)), doctest::Contains("D = 96 is not supported"), jit::argument_error);
  attention::decode_shape s = shape(8, 2, 128, 16);
  s.max_seq_len = 65;  // 4 pages of 16 hold 64 keys
  CHECK_THROWS_WITH_AS(call(s), doctest::Contains("max_seq_len = 65 is more than max_pages * page_size"), jit::argument_error);
  s = shape(8, 2, 128, 16);
  s.num_pages = 0;
  CHECK_THROWS_WITH_AS(call(s), doctest::Contains("num_pages = 0"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(8, 2, 128, 16), static_cast<char*>(p) + 16), doctest::Contains("workspace must be"), jit::argument_error);
  s = shape(8, 2, 128, 16);
  s.kv_fp8 = true, s.k_scale = 0;
  CHECK_THROWS_WITH_AS(call(s), doctest::Contains("k_scale = 0.000000 and v_scale = 1.000000 must be finite and positive"), jit::argument_error);
}
