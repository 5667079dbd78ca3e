// Register compute on the GPU, through schedules written in the public language: fused GEMM epilogues
// (cake::gemm options), the ping-pong and in-flight-wgmma GEMM mainloops, a one-head attention with A
// from registers, online softmax, masks and causal loop bounds, a k-means assignment (argmin across
// centroid tiles) and a scatter-add centroid update. Fresh random inputs, outputs poisoned first, ragged
// shapes; errors against f64 (or f32-accumulated) references.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <random>
#include <cstdlib>
#include <cstdio>
#include <vector>

#include <cake/gemm.hpp>
#include <cake/harness/gemm_check.hpp>
#include <cake/harness/random.hpp>
#include <cake/runtime/kernel.hpp>

#include "kernels/gemm/sm90_splitk.hpp"
#include "tests/kernels/split_tail_sum.hpp"
#include "tests/kernels/fp8_roundtrip.hpp"
#include "device_gate.hpp"

using namespace cake;
using cake::harness::distribution;
using cake::harness::host_bf16;

namespace {

bool gpu_ready() { return cake_gpu_test::require_device(9, 0, true, "the sm_90a compute kernels"); }

double rel_err(const std::vector<double>& out, const std::vector<double>& ref, long long* nonfinite = nullptr) {
  double num = 0, den = 0;
  long long bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      ++bad;
      continue;
    }
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  if (nonfinite) *nonfinite = bad;
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}
double bf16v(std::uint16_t b) { return harness::bf16_bits_to_float(b); }

// ---- GEMM epilogues ---------------------------------------------------------------------------------
double act(kernels::gemm_activation a, double x) {
  switch (a) {
    case kernels::gemm_activation::gelu_tanh: return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case kernels::gemm_activation::gelu_erf: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case kernels::gemm_activation::silu: return x / (1 + std::exp(-x));
    case kernels::gemm_activation::relu: return x > 0 ? x : 0;
    default: return x;
  }
}

}  // namespace

TEST_CASE("cake::gemm fused epilogues (bias, GELU tanh/erf, SiLU, ReLU, residual, row and column scales) match the reference") {
  if (!gpu_ready()) return;
  harness::gemm_reference reference;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  using A = kernels::gemm_activation;
  struct variant {
    bool bias, row, col, res;
    A a;
  };
  const variant variants[] = {{true, false, false, false, A::gelu_tanh}, {true, true, false, false, A::gelu_erf}, {false, false, true, true, A::silu},
                              {true, true, true, true, A::relu}, {false, false, false, true, A::none}};
  const harness::gemm_problem shapes[] = {{300, 264, 200}, {129, 257, 72}, {1024, 1024, 512}, {64, 4096, 256}};
  int vi = 0;
  // form "in flight": cake::gemm's schedule with one wgmma group in flight after the mainloop, whose epilogue
  // loads its vectors before the last wait (gemm_with); "lookahead": cake::gemm's schedule with the next tile's
  // first K block issued before this tile's stores
  for (const std::string form : {"chosen", "in flight", "lookahead"})
  for (const auto& v : variants)
    for (auto pr : shapes) {
      pr.fill = {distribution::normal, harness::test_scales[static_cast<std::size_t>(vi++) % 4]};
      harness::gemm_operands o(pr);
      const auto& q = o.p;
      auto bias = harness::random_vector<host_bf16>(static_cast<std::size_t>(q.n), rng);
      auto rs = harness::random_vector<float>(static_cast<std::size_t>(q.m), rng, {distribution::uniform, 1.0f, 1.5f});
      auto cs = harness::random_vector<float>(static_cast<std::size_t>(q.n), rng, {distribution::uniform, 1.0f, 1.5f});
      const long long ldr = q.n + 8;
      auto res = harness::random_vector<host_bf16>(static_cast<std::size_t>(q.m * ldr), rng);
      jit::device_buffer db(static_cast<std::size_t>(2 * q.n + 16)), drs(static_cast<std::size_t>(4 * q.m + 16)), dcs(static_cast<std::size_t>(4 * q.n + 16)),
          dres(static_cast<std::size_t>(2 * q.m * ldr + 16));
      db.upload(bias), drs.upload(rs), dcs.upload(cs), dres.upload(res);
      gemm_epilogue_args e;
      if (v.bias) e.bias = db.address();
      if (v.row) e.row_scale = static_cast<const float*>(drs.address());
      if (v.col) e.col_scale = static_cast<const float*>(dcs.address());
      if (v.res) e.residual = dres.address(), e.ldr = ldr;
      e.activation = v.a;
      // check_gemm compares against A*B^T; the epilogue is applied to the reference below instead.
      o.a.upload(harness::random_vector<host_bf16>(static_cast<std::size_t>(q.m * q.lda), rng, q.fill));
      o.b.upload(harness::random_vector<host_bf16>(static_cast<std::size_t>(q.n * q.ldb), rng, q.fill));
      o.d.fill_u32(0xffffffffu);
      if (form == "chosen") gemm(o.a.address(), o.b.address(), o.d.address(), q.m, q.n, q.k, q.lda, q.ldb, q.ldd, e);
      else {
        auto c = choose_gemm(q.m, q.n, q.k, jit::driver::get().device(0).sm_count, gemm_input::bf16, e.flags(), q.n % 8 != 0 || q.ldd % 8 != 0).config;
        if (form == "in flight") c.in_flight = 1;
        else c.lookahead = true;
        gemm_with(c, o.a.address(), o.b.address(), o.d.address(), q.m, q.n, q.k, q.lda, q.ldb, q.ldd, e);
      }
      reference.run(o.a.get(), o.b.get(), o.ref.get(), q.m, q.n, q.k, q.lda, q.ldb, 0);
      auto out = o.d.download<std::uint16_t>();
      auto ref = o.ref.download<float>();
      std::vector<double> got, want;
      for (long long m = 0; m < q.m; ++m)
        for (long long n = 0; n < q.n; ++n) {
          double x = ref[static_cast<std::size_t>(m * q.n + n)];
          if (v.row) x *= rs[static_cast<std::size_t>(m)];
          if (v.col) x *= cs[static_cast<std::size_t>(n)];
          if (v.bias) x += bias[static_cast<std::size_t>(n)].to_float();
          x = act(v.a, x);
          if (v.res) x += res[static_cast<std::size_t>(m * ldr + n)].to_float();
          want.push_back(x);
          got.push_back(bf16v(out[static_cast<std::size_t>(m * q.ldd + n)]));
        }
      long long nonfinite = 0;
      const double err = rel_err(got, want, &nonfinite);
      INFO(q.describe() << " " << form << " bias " << v.bias << " row " << v.row << " col " << v.col << " res " << v.res << " act " << static_cast<int>(v.a) << ": rel_err " << err);
      CHECK(nonfinite == 0);
      CHECK(err < 1e-2);
    }
}

namespace {

// One GEMM schedule configuration on ragged, tiny, padded and long-K shapes.
void check_config(const kernels::gemm_sm90_config& k) {
  if (!gpu_ready()) return;
  harness::gemm_reference reference;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const int bm = k.bm, bn = k.bn, pingpong = k.pingpong, in_flight = k.in_flight;
  const harness::gemm_problem shapes[] = {{128, 128, 64}, {1, 8, 8}, {129, 257, 72}, {777, 1111, 333, 344, 336, 1120}, {1000, 1000, 1000}, {2048, 2048, 4096}};
  for (const auto& pr : shapes) {
    MESSAGE(pr.describe());  // which shape, should the kernel trap
    harness::gemm_operands o(pr);
    const auto r = harness::check_gemm(o, rng, reference, [&](harness::gemm_operands& x) {
      const auto& q = x.p;
      gemm_with(k, gemm_input::bf16, x.a.address(), x.b.address(), x.d.address(), q.m, q.n, q.k, q.lda, q.ldb, q.ldd);
    });
    INFO(pr.describe() << " bm " << bm << " bn " << bn << " stages " << k.stages << " pingpong " << pingpong << " in_flight " << in_flight << " persistent "
                       << k.persistent << " cluster " << k.cluster_m << " direct " << k.direct_store << " lookahead " << k.lookahead << ": rel_err " << r.cmp.rel_err);
    CHECK(r.cmp.nonfinite == 0);
    CHECK(r.padding_written == 0);
    CHECK(r.cmp.rel_err < 1e-2);
  }
}

// One mainloop variant with the deepest pipeline that fits.
void check_mainloop(int bm, int bn, bool pingpong, int in_flight) {
  kernels::gemm_sm90_config k;
  k.bm = bm, k.bn = bn, k.pingpong = pingpong, k.in_flight = in_flight;
  k.stages = max_gemm_stages(k, 2);
  check_config(k);
}

// Not persistent (one CTA per output tile): the variants `cake evolve` searches from its naive seed.
kernels::gemm_sm90_config not_persistent(int stages, int cluster_m, bool direct_store) {
  kernels::gemm_sm90_config k;
  k.bn = 128, k.persistent = false, k.stages = stages, k.cluster_m = cluster_m, k.direct_store = direct_store;
  return k;
}

}  // namespace

TEST_CASE("mainloop: not persistent, 1 stage, cluster 1, direct store (the evolve seed)") { check_config(not_persistent(1, 1, true)); }
TEST_CASE("mainloop: not persistent, 4 stages, cluster 2 (B multicast), TMA store") { check_config(not_persistent(4, 2, false)); }
TEST_CASE("mainloop: cooperative, one wgmma group in flight across the release") { check_mainloop(128, 256, false, 1); }
TEST_CASE("mainloop: cooperative with the lookahead (the next tile's first K block before the stores), TMA and direct store") {
  for (bool direct : {false, true}) {
    kernels::gemm_sm90_config k;
    k.lookahead = true, k.direct_store = direct;
    check_config(k);
  }
}
// Diagnosis: CAKE_MAINLOOP="M N K bm bn pingpong in_flight direct" runs one shape and configuration.
TEST_CASE("mainloop: the shape in CAKE_MAINLOOP") {
  const char* spec = std::getenv("CAKE_MAINLOOP");
  if (!spec) {
    cake_gpu_test::skip("CAKE_MAINLOOP is not set (a diagnosis case: it runs the one configuration it names)");
    return;
  }
  if (!gpu_ready()) return;
  long long M, N, K;
  int bm, bn, pp, inf, direct;
  REQUIRE(std::sscanf(spec, "%lld %lld %lld %d %d %d %d %d", &M, &N, &K, &bm, &bn, &pp, &inf, &direct) == 8);
  harness::gemm_reference reference;
  auto rng = harness::random_source::fresh();
  kernels::gemm_sm90_config k;
  k.bm = bm, k.bn = bn, k.pingpong = pp, k.in_flight = inf, k.direct_store = direct;
  k.stages = max_gemm_stages(k, 2);
  harness::gemm_operands o(harness::gemm_problem{M, N, K});
  const auto r = harness::check_gemm(o, rng, reference, [&](harness::gemm_operands& x) {
    const auto& q = x.p;
    gemm_with(k, gemm_input::bf16, x.a.address(), x.b.address(), x.d.address(), q.m, q.n, q.k, q.lda, q.ldb, q.ldd);
  });
  MESSAGE(spec << " stages " << k.stages << ": rel_err " << r.cmp.rel_err << " nonfinite " << r.cmp.nonfinite);
  CHECK(r.cmp.rel_err < 1e-2);
}
TEST_CASE("mainloop: ping-pong 128x128, in flight") { check_mainloop(128, 128, true, 1); }
TEST_CASE("mainloop: ping-pong 128x128, waited") { check_mainloop(128, 128, true, 0); }
TEST_CASE("mainloop: ping-pong 64x256, in flight") { check_mainloop(64, 256, true, 1); }

namespace {

// O = softmax(Q K^T / sqrt(D)) V for one head of width 64: S = Q K^T on wgmma from smem, the online
// softmax in registers (row max / exp2 / row sum, masks for ragged keys and the causal diagonal), then
// O += P V on wgmma with P from registers and V MN-major. Causal: key blocks up to the diagonal only.
constexpr program attention_lite(bool causal) {
  auto k = kernel(causal ? "attn_lite_causal" : "attn_lite").target(sm_90a);
  auto [S, T, D] = k.dims("S", "T", "D");
  auto Q = k.input<bf16>("Q", dims(S, D));
  auto Kt = k.input<bf16>("K", dims(T, D));
  auto V = k.input<bf16>("V", dims(T, D));
  auto O = k.output<bf16>("O", dims(S, D));
  auto scale_log2 = k.param<f32>("scale_log2");
  auto qt = k.parallel(tiles(S, 64));
  auto sQ = k.smem<bf16>("sQ", {64, 64}, swizzle::b128);
  auto sK = k.smem<bf16>("sK", {64, 64}, swizzle::b128);
  auto sV = k.smem<bf16>("sV", {64, 64}, swizzle::b128);
  auto qp = k.pipeline("q", stages(1)).carries(sQ);
  auto kv = k.pipeline("kv", stages(2)).carries(sK, sV);
  auto blocks = [&](auto q) { return causal ? min(q + 1, tiles(T, 64)) : loop_extent(tiles(T, 64)); };
  k.role("math", warpgroups(1), [&](role& r) {
    auto s = r.accumulator<f32>("s", {64, 64});
    auto o = r.accumulator<f32>("o", {64, 64});
    auto m = r.row_vector<f32>("m", 64);
    auto mn = r.row_vector<f32>("mn", 64);
    auto l = r.row_vector<f32>("l", 64);
    auto ls = r.row_vector<f32>("ls", 64);
    r.for_each(qt, [&](auto q) {
      auto sq = r.wait(qp);
      r.fill(o, 0.0f);
      r.fill(m, neg_inf);
      r.fill(l, 0.0f);
      r.loop(blocks(q), [&](auto j) {
        auto st = r.wait(kv);
        r.wgmma_fence();
        r.wgmma(s, sq[sQ], st[sK]).overwrite();
        r.wgmma_commit();
        r.wgmma_wait(0);
        // keys past T, and (causal) keys after the query, do not take part
        auto masked = causal ? (j * 64 + col() >= T.extent()) || (j * 64 + col() > q * 64 + row()) : (j * 64 + col() >= T.extent());
        r.set(s, select(masked, neg_inf, s * scale_log2));
        r.row_max(mn, s);
        r.set(mn, max(mn, m));
        r.set(s, exp2(s - mn));
        r.row_sum(ls, s);
        r.set(l, l * exp2(m - mn) + ls);
        r.set(o, o * exp2(m - mn));
        r.set(m, mn);
        auto p = r.convert<bf16>(s);
        r.wgmma_fence();
        r.wgmma(o, p, st[sV]);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(kv, st);
      });
      r.release(qp, sq);
      r.set(o, o * rcp(l));
      r.store(O.tile(q, 0), r.convert<bf16>(o));
    });
  });
  k.role("load", warps(1), [&](role& r) {
    r.for_each(qt, [&](auto q) {
      auto sq = r.acquire(qp);
      r.tma_load(sq[sQ], Q.tile(q, 0));
      r.loop(blocks(q), [&](auto j) {
        auto st = r.acquire(kv);
        r.tma_load(st[sK], Kt.tile(j, 0));
        r.tma_load(st[sV], V.tile(j, 0));
      });
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("one-head attention (wgmma with P from registers, online softmax, masks, causal bounds) matches an f64 reference") {
  if (!gpu_ready()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  for (bool causal : {false, true}) {
    const program p = attention_lite(causal);
    REQUIRE(p.errors.empty());
    auto k = runtime_kernel::build(p);
    for (auto [S, T] : {std::pair{64LL, 64LL}, {200LL, 200LL}, {1000LL, 1000LL}, {65LL, 300LL}, {7LL, 1LL}}) {
      if (causal && S != T) continue;
      const long long D = 64;
      const float sc = causal ? 1.0f : 2.0f;
      auto q = harness::random_vector<host_bf16>(static_cast<std::size_t>(S * D), rng, {distribution::normal, sc});
      auto kk = harness::random_vector<host_bf16>(static_cast<std::size_t>(T * D), rng, {distribution::normal, sc});
      auto v = harness::random_vector<host_bf16>(static_cast<std::size_t>(T * D), rng);
      auto dq = jit::to_device(q), dk = jit::to_device(kk), dv = jit::to_device(v);
      jit::device_buffer dout(static_cast<std::size_t>(2 * S * D + 4));
      dout.fill_u32(0xffffffffu);
      const double scale_log2 = 1.4426950408889634 / std::sqrt(static_cast<double>(D));
      const tensor_arg args[] = {tensor_view(dq.address(), {S, D}), tensor_view(dk.address(), {T, D}), tensor_view(dv.address(), {T, D}),
                                 tensor_view(dout.address(), {S, D})};
      const double scalars[] = {scale_log2};
      k.launch(args, scalars);
      auto out = dout.download<std::uint16_t>();
      std::vector<double> got, want;
      for (long long i = 0; i < S; ++i) {
        std::vector<double> w(static_cast<std::size_t>(T), 0.0);
        double mx = -1e300;
        const long long last = causal ? i + 1 : T;
        for (long long j = 0; j < last; ++j) {
          double dot = 0;
          for (long long d = 0; d < D; ++d) dot += static_cast<double>(q[static_cast<std::size_t>(i * D + d)].to_float()) * kk[static_cast<std::size_t>(j * D + d)].to_float();
          w[static_cast<std::size_t>(j)] = dot / std::sqrt(static_cast<double>(D));
          mx = std::max(mx, w[static_cast<std::size_t>(j)]);
        }
        double sum = 0;
        for (long long j = 0; j < last; ++j) sum += (w[static_cast<std::size_t>(j)] = std::exp(w[static_cast<std::size_t>(j)] - mx));
        for (long long d = 0; d < D; ++d) {
          double acc = 0;
          for (long long j = 0; j < last; ++j) acc += w[static_cast<std::size_t>(j)] * v[static_cast<std::size_t>(j * D + d)].to_float();
          want.push_back(acc / sum);
          got.push_back(bf16v(out[static_cast<std::size_t>(i * D + d)]));
        }
      }
      long long nonfinite = 0;
      const double err = rel_err(got, want, &nonfinite);
      INFO((causal ? "causal" : "full") << " S " << S << " T " << T << ": rel_err " << err);
      CHECK(nonfinite == 0);
      CHECK(err < 2e-2);
      CHECK(out[static_cast<std::size_t>(S * D)] == 0xffff);  // nothing written past the output
    }
  }
}

namespace {

// k-means assignment: for each point the nearest centroid, as argmin over c of |c|^2 - 2 x.c, the
// distance GEMM on wgmma and the argmin carried across centroid tiles in registers. The distances are
// either computed into the accumulator first (r.set, then the argmin of the tile) or inside the argmin
// (the argmin of an expression).
constexpr program kmeans_assign_lite(bool argmin_of_expr) {
  auto k = kernel(argmin_of_expr ? "kmeans_assign_lite_x" : "kmeans_assign_lite").target(sm_90a);
  auto [N, K, D] = k.dims("N", "K", "D");
  auto X = k.input<bf16>("X", dims(N, D));
  auto C = k.input<bf16>("C", dims(K, D));
  auto Cn = k.input<f32>("c_norm", dims(K));
  auto Idx = k.output<i32>("idx", dims(N));
  auto pts = k.parallel(tiles(N, 64));
  auto sX = k.smem<bf16>("sX", {64, 64}, swizzle::b128);
  auto sC = k.smem<bf16>("sC", {128, 64}, swizzle::b128);
  auto xp = k.pipeline("x", stages(1)).carries(sX);
  auto cp = k.pipeline("c", stages(2)).carries(sC);
  k.role("math", warpgroups(1), [&](role& r) {
    auto dot = r.accumulator<f32>("dot", {64, 128});
    auto cn = r.col_vector<f32>("cn", 128);
    auto best = r.row_vector<f32>("best", 64);
    auto arg = r.row_vector<i32>("arg", 64);
    r.for_each(pts, [&](auto i) {
      auto sx = r.wait(xp);
      r.fill(best, pos_inf);
      r.fill(arg, 0.0f);
      r.loop(tiles(K, 128), [&](auto j) {
        auto sc = r.wait(cp);
        r.wgmma_fence();
        r.wgmma(dot, sx[sX], sc[sC]).overwrite();
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(cp, sc);
        r.load(cn, Cn.tile(j)).fill_outside(pos_inf);  // centroids past K: +inf, never chosen
        if (argmin_of_expr) {
          r.row_argmin(best, arg, cn - 2.0f * dot, j * 128).accumulate();
        } else {
          r.set(dot, cn - 2.0f * dot);
          r.row_argmin(best, arg, dot, j * 128).accumulate();
        }
      });
      r.release(xp, sx);
      r.store(Idx.tile(i), arg);
    });
  });
  k.role("load", warps(1), [&](role& r) {
    r.for_each(pts, [&](auto i) {
      auto sx = r.acquire(xp);
      r.tma_load(sx[sX], X.tile(i, 0));
      r.loop(tiles(K, 128), [&](auto j) {
        auto sc = r.acquire(cp);
        r.tma_load(sc[sC], C.tile(j, 0));
      });
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("k-means assignment (distance GEMM + argmin carried across centroid tiles) picks the nearest centroid") {
  if (!gpu_ready()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  for (bool argmin_of_expr : {false, true})
  for (auto [N, K] : {std::pair{64LL, 128LL}, {1000LL, 300LL}, {4097LL, 1000LL}, {5LL, 1LL}}) {
    const program p = kmeans_assign_lite(argmin_of_expr);
    REQUIRE(p.errors.empty());
    auto k = runtime_kernel::build(p);
    const long long D = 64;
    auto x = harness::random_vector<host_bf16>(static_cast<std::size_t>(N * D), rng);
    auto c = harness::random_vector<host_bf16>(static_cast<std::size_t>(K * D), rng);
    std::vector<float> cn(static_cast<std::size_t>(K));
    for (long long j = 0; j < K; ++j)
      for (long long d = 0; d < D; ++d) cn[static_cast<std::size_t>(j)] += c[static_cast<std::size_t>(j * D + d)].to_float() * c[static_cast<std::size_t>(j * D + d)].to_float();
    auto dx = jit::to_device(x), dc = jit::to_device(c), dn = jit::to_device(cn);
    jit::device_buffer didx(static_cast<std::size_t>(4 * N + 4));
    didx.fill_u32(0xffffffffu);
    const tensor_arg args[] = {tensor_view(dx.address(), {N, D}), tensor_view(dc.address(), {K, D}), tensor_view(dn.address(), {K}), tensor_view(didx.address(), {N})};
    k.launch(args);
    auto idx = didx.download<std::int32_t>();
    long long wrong = 0;
    for (long long i = 0; i < N; ++i) {
      auto dist = [&](long long j) {
        double s = 0;
        for (long long d = 0; d < D; ++d) {
          const double t = static_cast<double>(x[static_cast<std::size_t>(i * D + d)].to_float()) - c[static_cast<std::size_t>(j * D + d)].to_float();
          s += t * t;
        }
        return s;
      };
      double best = 1e300;
      for (long long j = 0; j < K; ++j) best = std::min(best, dist(j));
      const long long got = idx[static_cast<std::size_t>(i)];
      // bf16 products decide near-ties: accept any centroid within 1e-3 of the nearest distance.
      if (got < 0 || got >= K || dist(got) > best * (1 + 1e-3) + 1e-6) ++wrong;
    }
    INFO((argmin_of_expr ? "argmin of the expression" : "argmin of the tile") << " N " << N << " K " << K << ": " << wrong << " points assigned to a farther centroid");
    CHECK(wrong == 0);
    CHECK(idx[static_cast<std::size_t>(N)] == -1);  // nothing written past the output
  }
}

namespace {

// The centroid update's scatter: sums[idx[i], :] += x[i, :] with f32 atomics, from 8-row tiles of a
// warpgroup in the blocked layout.
constexpr program scatter_sum_lite() {
  auto k = kernel("scatter_sum_lite").target(sm_90a);
  auto [N, K, D] = k.dims("N", "K", spec("D"));
  auto X = k.input<f32>("X", dims(N, D));
  auto I = k.input<i32>("idx", dims(N));
  auto Sums = k.output<f32>("sums", dims(K, D));
  auto rows = k.parallel(tiles(N, 8));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    auto idx = r.row_vector<i32>("i", 8);
    r.for_each(rows, [&](auto t) {
      r.load(x, X.tile(t, 0));
      r.load(idx, I.tile(t)).fill_outside(-1.0f);  // rows past N: index -1, skipped
      r.scatter_add(Sums.tile(0, 0), x, idx);
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("scatter-add of rows at register-held indices sums like the host") {
  if (!gpu_ready()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const program p = scatter_sum_lite();
  REQUIRE(p.errors.empty());
  lower::emit_options opt;
  opt.specialized = {{p.find_dim("D"), 64}};
  auto k = runtime_kernel::build(p, opt);
  for (auto [N, K] : {std::pair{8LL, 3LL}, {1001LL, 17LL}, {100000LL, 1000LL}}) {
    const long long D = 64;
    auto x = harness::random_vector<float>(static_cast<std::size_t>(N * D), rng);
    std::vector<std::int32_t> idx(static_cast<std::size_t>(N));
    std::uniform_int_distribution<int> pick(0, static_cast<int>(K - 1));
    for (auto& v : idx) v = pick(rng.engine());
    auto dx = jit::to_device(x), di = jit::to_device(idx);
    jit::device_buffer ds(static_cast<std::size_t>(4 * K * D));
    ds.fill_u32(0);
    const tensor_arg args[] = {tensor_view(dx.address(), {N, D}), tensor_view(di.address(), {N}), tensor_view(ds.address(), {K, D})};
    k.launch(args);
    auto sums = ds.download<float>();
    std::vector<double> want(static_cast<std::size_t>(K * D), 0.0), got(sums.begin(), sums.end());
    for (long long i = 0; i < N; ++i)
      for (long long d = 0; d < D; ++d) want[static_cast<std::size_t>(idx[static_cast<std::size_t>(i)] * D + d)] += x[static_cast<std::size_t>(i * D + d)];
    const double err = rel_err(got, want);
    INFO("N " << N << " K " << K << ": rel_err " << err);
    CHECK(err < 1e-5);
  }
}

namespace {

// y = exp2(x, fma_share{n, d}) over 8 x 64 f32 tiles in the blocked layout: n of every d elements by the
// FMA-pipe polynomial, the rest by ex2.approx.
constexpr program exp2_share_lite(int n, int d) {
  auto k = kernel(n == d ? "exp2_poly_all" : "exp2_poly_share").target(sm_90a);
  auto [N, D] = k.dims("N", spec("D"));
  auto X = k.input<f32>("X", dims(N, D));
  auto Y = k.output<f32>("Y", dims(N, D));
  auto rows = k.parallel(tiles(N, 8));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(rows, [&](auto t) {
      r.load(x, X.tile(t, 0)).fill_outside(0.0f);
      r.set(x, exp2(x, fma_share{n, d}));
      r.store(Y.tile(t, 0), x);
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("exp2 with a share on the FMA pipe: within 4e-6 of 2^x, exact at -inf, 0 and +inf, and 0 below 2^-127") {
  if (!gpu_ready()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  for (auto [n, d] : {std::pair{1, 4}, {1, 1}}) {
    const program p = exp2_share_lite(n, d);
    REQUIRE(p.errors.empty());
    lower::emit_options opt;
    opt.specialized = {{p.find_dim("D"), 64}};
    auto k = runtime_kernel::build(p, opt);
    const long long N = 1003, D = 64;  // a ragged last tile of 3 rows
    std::uniform_real_distribution<float> softmax_like(-30.0f, 0.0f), wide(-126.0f, 127.0f);
    std::vector<float> x(static_cast<std::size_t>(N * D));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 3 == 0 ? wide(rng.engine()) : softmax_like(rng.engine());
    // the edges: exact points, the infinities, the clamps, the rounding ties of rint(x)
    const float edges[] = {-INFINITY, INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, -126.5f, -127.0f, -130.0f, 127.5f, 128.0f, 200.0f, 2.5f, -2.5f};
    for (std::size_t i = 0; i < std::size(edges); ++i)
      for (std::size_t c = 0; c < static_cast<std::size_t>(D); ++c) x[i * static_cast<std::size_t>(D) + c] = edges[i];
    auto dx = jit::to_device(x);
    jit::device_buffer dy(static_cast<std::size_t>(4 * N * D));
    dy.fill_u32(0x7fc00000u);  // poisoned: NaN
    const tensor_arg args[] = {tensor_view(dx.address(), {N, D}), tensor_view(dy.address(), {N, D})};
    k.launch(args);
    const auto y = dy.download<float>();
    double worst = 0;
    long long wrong_edges = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp2(static_cast<double>(x[i]));
      if (x[i] <= -127.0f) wrong_edges += y[i] != 0.0f;  // ex2.ftz flushes, the polynomial clamps: +0 either way
      else if (x[i] >= 128.0f) wrong_edges += !(std::isinf(y[i]) && y[i] > 0);
      else if (x[i] == 0.0f || x[i] == 1.0f || x[i] == -1.0f) wrong_edges += y[i] != static_cast<float>(want);
      else if (want >= 0x1p-126) worst = std::max(worst, std::abs(y[i] / want - 1));  // (denormals: ex2.ftz gives 0)
    }
    INFO("share " << n << "/" << d << ": worst relative error " << worst << ", wrong special values " << wrong_edges);
    CHECK(wrong_edges == 0);
    CHECK(worst < 4e-6);
  }
}

namespace {

// cluster_sum (the all-reduce): each CTA of a cluster of 4 loads its 8 x 64 rows, and every CTA stores
// the sum of the cluster's four tiles.
constexpr program cluster_allreduce_lite() {
  auto k = kernel("cluster_allreduce_lite").target(sm_90a).cluster(4);
  auto [N, D] = k.dims("N", spec("D"));
  auto X = k.input<f32>("X", dims(N, D));
  auto Y = k.output<f32>("Y", dims(N, D));
  auto rows = k.parallel(tiles(N, 8));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(rows, [&](auto t) {
      r.load(x, X.tile(t, 0)).fill_outside(0.0f);
      r.cluster_sum(x);
      r.store(Y.tile(t, 0), x);
    });
  });
  return k.build();
}

// cluster_max then cluster_sum in one role, per tile: the two reductions share the role's scratch, so the sum
// must not write it before every peer has read the max's (the lowering's wait on the previous reduction's
// 'done'); each CTA of a cluster of 4 stores the max and the sum of the cluster's four 8 x 64 tiles.
// (`sm100`: the same schedule for sm_100a, lowered in CI only: no Blackwell GPU here)
constexpr program cluster_max_then_sum(bool sm100 = false) {
  auto k = kernel("cluster_max_then_sum").target(sm100 ? sm_100a : sm_90a).cluster(4);
  auto [N, D] = k.dims("N", spec("D"));
  auto X = k.input<f32>("X", dims(N, D));
  auto Ymax = k.output<f32>("Ymax", dims(N, D));
  auto Ysum = k.output<f32>("Ysum", dims(N, D));
  auto rows = k.parallel(tiles(N, 8));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    auto y = r.fragment<f32>("y", {8, 64});
    r.for_each(rows, [&](auto t) {
      r.load(x, X.tile(t, 0)).fill_outside(0.0f);
      r.set(y, x);
      r.cluster_max(x);
      r.cluster_sum(y);
      r.store(Ymax.tile(t, 0), x);
      r.store(Ysum.tile(t, 0), y);
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("cluster_sum: every CTA of a cluster of 4 ends with the sum of the cluster's tiles") {
  if (!gpu_ready()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const program p = cluster_allreduce_lite();
  REQUIRE(p.errors.empty());
  lower::emit_options opt;
  opt.specialized = {{p.find_dim("D"), 64}};
  auto k = runtime_kernel::build(p, opt);
  for (long long N : {32LL, 27LL, 8LL * 4 * 300 + 13}) {  // one cluster; a ragged last tile; 301 clusters, the last ragged
    const long long D = 64;
    auto x = harness::random_vector<float>(static_cast<std::size_t>(N * D), rng);
    auto dx = jit::to_device(x);
    jit::device_buffer dy(static_cast<std::size_t>(4 * N * D));
    dy.fill_u32(0x7fc00000u);  // NaN: a row left unwritten shows
    const tensor_arg args[] = {tensor_view(dx.address(), {N, D}), tensor_view(dy.address(), {N, D})};
    k.launch(args);
    auto y = dy.download<float>();
    std::vector<double> want(static_cast<std::size_t>(N * D), 0.0), got(y.begin(), y.end());
    for (long long i = 0; i < N; ++i) {
      const long long first = i / 32 * 32;  // the cluster's first row: 4 CTAs x 8 rows
      for (long long d = 0; d < D; ++d)
        for (long long c = 0; c < 4; ++c) {
          const long long row = first + c * 8 + i % 8;
          if (row < N) want[static_cast<std::size_t>(i * D + d)] += x[static_cast<std::size_t>(row * D + d)];
        }
    }
    const double err = rel_err(got, want);
    INFO("N " << N << ": rel_err " << err);
    CHECK(err < 1e-6);
  }
}

TEST_CASE("cluster_max then cluster_sum in one role: each CTA of a cluster of 4 ends with the max and the sum of the cluster's tiles") {
  if (!gpu_ready()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const program p = cluster_max_then_sum();
  REQUIRE(p.errors.empty());
  lower::emit_options opt;
  opt.specialized = {{p.find_dim("D"), 64}};
  auto k = runtime_kernel::build(p, opt);
  for (long long N : {32LL, 27LL, 8LL * 4 * 1000 + 13}) {  // one cluster; a ragged last tile; 1001 clusters, the last ragged
    const long long D = 64;
    auto x = harness::random_vector<float>(static_cast<std::size_t>(N * D), rng);
    auto dx = jit::to_device(x);
    jit::device_buffer dmax(static_cast<std::size_t>(4 * N * D)), dsum(static_cast<std::size_t>(4 * N * D));
    dmax.fill_u32(0x7fc00000u);  // NaN: a row left unwritten shows
    dsum.fill_u32(0x7fc00000u);
    const tensor_arg args[] = {tensor_view(dx.address(), {N, D}), tensor_view(dmax.address(), {N, D}), tensor_view(dsum.address(), {N, D})};
    k.launch(args);
    auto ymax = dmax.download<float>();
    auto ysum = dsum.download<float>();
    long long wrong_max = 0;
    std::vector<double> want(static_cast<std::size_t>(N * D), 0.0), got(ysum.begin(), ysum.end());
    for (long long i = 0; i < N; ++i) {
      const long long first = i / 32 * 32;  // the cluster's first row: 4 CTAs x 8 rows
      for (long long d = 0; d < D; ++d) {
        double m = -1e300;
        for (long long c = 0; c < 4; ++c) {
          const long long row = first + c * 8 + i % 8;
          const double v = row < N ? x[static_cast<std::size_t>(row * D + d)] : 0.0;  // rows past N load as 0
          want[static_cast<std::size_t>(i * D + d)] += v;
          m = std::max(m, v);
        }
        wrong_max += static_cast<double>(ymax[static_cast<std::size_t>(i * D + d)]) != m;  // a max is exact
      }
    }
    const double err = rel_err(got, want);
    INFO("N " << N << ": sum rel_err " << err << ", max elements wrong " << wrong_max);
    CHECK(wrong_max == 0);
    CHECK(err < 1e-6);
  }
}

TEST_CASE("split-K GEMM for small M (K split over a cluster, partial sums met in distributed shared memory) matches the reference") {
  if (!gpu_ready()) return;
  harness::gemm_reference reference;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  // 64-row tiles over 2 and 4 CTAs; 128-row tiles (two consumer warpgroups, each summing its rows) over 2 and 4
  for (auto [splits, bm] : {std::pair{2, 64}, std::pair{4, 64}, std::pair{2, 128}, std::pair{4, 128}}) {
    kernels::gemm_splitk_config c;
    c.splits = splits;
    c.bm = bm;
    c.stages = max_splitk_stages(c.bn, bm);
    const program p = kernels::gemm_splitk_sm90(c);
    REQUIRE(p.errors.empty());
    auto k = runtime_kernel::build(p);
    // ragged M, N and K; K with fewer blocks than splits; M = 64 exactly; M over one 128-row tile
    const harness::gemm_problem shapes[] = {{1, 4096, 4096}, {7, 1000, 777},   {64, 512, 64},   {33, 129 + 7, 2000},
                                            {64, 8192, 8192}, {16, 256, 128}, {200, 1000, 777}, {256, 4096, 14336}};
    // CAKE_SMALL_SHAPES=1 (the sanitizer runs, which are slow): the large shape is left out, said so.
    const bool small_only = std::getenv("CAKE_SMALL_SHAPES") != nullptr;
    if (small_only) MESSAGE("CAKE_SMALL_SHAPES: 64 x 8192 x 8192 left out");
    for (auto pr : shapes) {
      if (small_only && pr.m * pr.n * pr.k > (1LL << 30)) continue;
      pr.fill = {distribution::normal, 0.1f};
      harness::gemm_operands o(pr);
      const auto r = harness::check_gemm(o, rng, reference, [&](harness::gemm_operands& x) {
        const auto& q = x.p;
        const tensor_arg args[] = {tensor_view(x.a.address(), {q.m, q.k}, {q.lda, 1}), tensor_view(x.b.address(), {q.n, q.k}, {q.ldb, 1}),
                                   tensor_view(x.d.address(), {q.m, q.n}, {q.ldd, 1})};
        k.launch(args);
      });
      INFO(pr.describe() << " splits " << splits << " bm " << bm << ": rel_err " << r.cmp.rel_err);
      CHECK(r.cmp.nonfinite == 0);
      CHECK(r.padding_written == 0);
      CHECK(r.cmp.rel_err < 1e-2);
    }
  }
}

namespace {

// Per 8 x 128 f32 tile (4 lanes per row, 8 chunks of 4 columns per thread) and per 16 x 64 bf16 tile (2
// lanes per row, 4 chunks of 8): S = the rows' inclusive prefix sums, P[t, :] = the column sums of tile t.
// C is a dynamic dim (ragged widths: columns past C load 0 and are not stored).
template <class T>
constexpr program scan_cols_lite(int rows, int cols) {
  kernel_builder k = kernel(T::value == dtype::f32 ? "scan_cols_f32" : "scan_cols_bf16");
  k.target(sm_90a);
  auto [N, C, Tt] = k.dims("N", "C", "T");
  auto X = k.input<T>("X", dims(N, C));
  auto S = k.output<f32>("S", dims(N, C));
  auto P = k.output<f32>("P", dims(Tt, C));
  auto tl = k.parallel(tiles(N, rows));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<T>("x", {rows, cols});
    auto s = r.fragment<f32>("s", {rows, cols});
    auto c = r.col_vector<f32>("c", cols);
    r.for_each(tl, [&](auto t) {
      r.load(x, X.tile(t, 0));
      r.row_scan(s, x);
      r.store(S.tile(t, 0), s);
      r.col_sum(c, x);
      r.store(P.tile(t, 0), c);
    });
  });
  return k.build();
}

// A bucket placement: pos = fetch_add(counter[idx]) per row (indices outside 0..K-1 skipped), then row i
// of X and its row number stored at row idx * cap + pos of Out / Ids (scatter_store).
constexpr program place_lite() {
  auto k = kernel("place_lite").target(sm_90a);
  auto [N, K, R, D, One] = k.dims("N", "K", "R", "D", "one");
  auto X = k.input<bf16>("X", dims(N, D));
  auto I = k.input<i32>("idx", dims(N, One));
  auto Cnt = k.output<i32>("counter", dims(K, One));
  auto Out = k.output<bf16>("out", dims(R, D));
  auto Ids = k.output<i32>("ids", dims(R, One));
  auto cap = k.param<i32>("cap");
  auto tl = k.parallel(tiles(N, 16));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {16, 64});
    auto idx = r.row_vector<i32>("idx", 16);
    auto pos = r.row_vector<i32>("pos", 16);
    auto id = r.row_vector<i32>("id", 16);
    r.for_each(tl, [&](auto t) {
      r.load(x, X.tile(t, 0));
      r.load(idx, I.tile(t, 0)).fill_outside(-1.0f);
      r.fetch_add(pos, Cnt.tile(0, 0), idx);
      r.set(pos, select(pos >= 0.0f, pos + idx * cap, -1.0f));
      r.set(id, row() + rx(t * 16));
      r.scatter_store(Out.tile(0, 0), x, pos);
      r.scatter_store(Ids.tile(0, 0), id, pos);
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("row_scan and col_sum (f32 and bf16 tiles, ragged widths) match the host, fetch_add + scatter_store place every row once") {
  if (!gpu_ready()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  auto scans = [&](const program& p, int rows, bool is_bf16, std::vector<std::pair<long long, long long>> shapes) {
    REQUIRE(p.errors.empty());
    auto k = runtime_kernel::build(p);
    for (auto [N, C] : shapes) {
      INFO((is_bf16 ? "bf16" : "f32") << " N " << N << " C " << C);
      const long long T = (N + rows - 1) / rows;
      auto xf = harness::random_vector<float>(static_cast<std::size_t>(N * C), rng);
      std::vector<host_bf16> xb(xf.size());
      for (std::size_t i = 0; i < xf.size(); ++i) {
        xb[i] = host_bf16::from_float(xf[i]);
        if (is_bf16) xf[i] = xb[i].to_float();
      }
      auto dx = is_bf16 ? jit::to_device(xb) : jit::to_device(xf);
      jit::device_buffer ds(static_cast<std::size_t>(4 * N * C)), dp(static_cast<std::size_t>(4 * T * C));
      ds.fill_u32(0x7fc00000u);  // NaN: anything not written shows
      dp.fill_u32(0x7fc00000u);
      const tensor_arg args[] = {tensor_view(dx.address(), {N, C}), tensor_view(ds.address(), {N, C}), tensor_view(dp.address(), {T, C})};
      k.launch(args);
      const auto s = ds.download<float>(), pc = dp.download<float>();
      std::vector<double> want_s(s.size()), want_p(pc.size(), 0.0), got_s(s.begin(), s.end()), got_p(pc.begin(), pc.end());
      for (long long i = 0; i < N; ++i) {
        double run = 0;
        for (long long j = 0; j < C; ++j) {
          run += xf[static_cast<std::size_t>(i * C + j)];
          want_s[static_cast<std::size_t>(i * C + j)] = run;
          want_p[static_cast<std::size_t>((i / rows) * C + j)] += xf[static_cast<std::size_t>(i * C + j)];
        }
      }
      CHECK(rel_err(got_s, want_s) < 1e-5);
      CHECK(rel_err(got_p, want_p) < 1e-5);
    }
  };
  scans(scan_cols_lite<f32>(8, 128), 8, false, {{8, 128}, {1000, 100}, {37, 128}, {513, 7}});  // whole, ragged rows and columns
  scans(scan_cols_lite<bf16>(16, 64), 16, true, {{16, 64}, {1000, 56}, {37, 64}, {513, 7}});

  const program p = place_lite();
  REQUIRE(p.errors.empty());
  auto k = runtime_kernel::build(p);
  for (auto [N, K] : {std::pair{16LL, 3LL}, {1001LL, 17LL}, {50000LL, 5LL}}) {
    INFO("N " << N << " K " << K);
    const long long D = 64, cap = N;
    auto x = harness::random_vector<host_bf16>(static_cast<std::size_t>(N * D), rng);
    std::vector<std::int32_t> idx(static_cast<std::size_t>(N));
    std::uniform_int_distribution<int> pick(-1, static_cast<int>(K));  // -1 and K: skipped
    for (auto& v : idx) v = pick(rng.engine());
    auto dx = jit::to_device(x), di = jit::to_device(idx);
    jit::device_buffer dc(static_cast<std::size_t>(4 * K)), dout(static_cast<std::size_t>(2 * K * cap * D)), dids(static_cast<std::size_t>(4 * K * cap));
    dc.fill_u32(0);
    dout.fill_u32(0xffffffffu);
    dids.fill_u32(0xffffffffu);  // -1: no row
    const tensor_arg args[] = {tensor_view(dx.address(), {N, D}), tensor_view(di.address(), {N, 1}), tensor_view(dc.address(), {K, 1}),
                               tensor_view(dout.address(), {K * cap, D}), tensor_view(dids.address(), {K * cap, 1})};
    k.launch(args, std::vector<double>{static_cast<double>(cap)});
    const auto counts = dc.download<std::int32_t>();
    const auto ids = dids.download<std::int32_t>();
    const auto out = dout.download<std::uint16_t>();
    long long bad_count = 0, bad_slot = 0, bad_row = 0;
    std::vector<int> seen(static_cast<std::size_t>(N), 0);
    for (long long b = 0; b < K; ++b) {
      const long long want = std::count(idx.begin(), idx.end(), static_cast<std::int32_t>(b));
      bad_count += counts[static_cast<std::size_t>(b)] != want;
      for (long long q = 0; q < cap; ++q) {
        const std::int32_t id = ids[static_cast<std::size_t>(b * cap + q)];
        if (q >= want) {
          bad_slot += id != -1;  // past the bucket's count: untouched
          continue;
        }
        if (id < 0 || id >= N || idx[static_cast<std::size_t>(id)] != b) {
          ++bad_slot;
          continue;
        }
        ++seen[static_cast<std::size_t>(id)];
        for (long long d = 0; d < D; ++d)
          bad_row += out[static_cast<std::size_t>((b * cap + q) * D + d)] != x[static_cast<std::size_t>(id * D + d)].bits;
      }
    }
    long long bad_seen = 0;
    for (long long i = 0; i < N; ++i) bad_seen += seen[static_cast<std::size_t>(i)] != ((idx[static_cast<std::size_t>(i)] >= 0 && idx[static_cast<std::size_t>(i)] < K) ? 1 : 0);
    CHECK_MESSAGE(bad_count == 0, bad_count << " counters are not the bucket's size");
    CHECK_MESSAGE(bad_slot == 0, bad_slot << " slots hold no row of their bucket, or a row past the count");
    CHECK_MESSAGE(bad_row == 0, bad_row << " stored elements differ from their row");
    CHECK_MESSAGE(bad_seen == 0, bad_seen << " rows are not placed exactly once (skipped indices: never)");
  }
}

// k.split_tail on a GPU: the walk's last round split over column blocks, the parts merged through a counter with a
// run-time arrival count (tests/kernels/split_tail_sum.hpp). Shapes: a short last round (split 8 ways), one split
// only as far as the range allows (4 blocks), a last round nearly full (not split), fewer points than CTAs (no
// whole round: not split), ragged rows and columns; every launch twice on the same counters (left at zero).
TEST_CASE("split tail: the last round's points split over their column blocks sum like the host, counters left at zero") {
  if (!gpu_ready()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  for (bool wg : {false, true})
    for (bool serp : {false, true}) {
      const program p = cake_test::split_tail_sum(sm_90a, 8, serp, wg);
      REQUIRE(p.errors.empty());
      auto k = runtime_kernel::build(p);
      const long long ctas = k.device().sm_count, rows = wg ? 64 : 32, W = 64;
      struct shape {
        long long points, C, ragged_rows;
      };
      for (const shape sh : {shape{ctas + 5, 1024, 0}, shape{2 * ctas + 3, 200, 7}, shape{3 * ctas - 1, 64, 0}, shape{7, 300, 0}, shape{ctas + 1, 64 * 40 + 5, 13}}) {
        const long long R = sh.points * rows - sh.ragged_rows, C = sh.C;
        auto x = harness::random_vector<float>(static_cast<std::size_t>(R * C), rng);
        auto dx = jit::to_device(x);
        jit::device_buffer dy(static_cast<std::size_t>(4 * R * W)), dp(static_cast<std::size_t>(4 * ctas * rows * W)), dc(static_cast<std::size_t>(4 * ctas));
        dc.fill_u32(0);
        std::vector<double> want(static_cast<std::size_t>(R * W), 0.0);
        for (long long r = 0; r < R; ++r)
          for (long long c = 0; c < C; ++c) want[static_cast<std::size_t>(r * W + c % W)] += x[static_cast<std::size_t>(r * C + c)];
        for (int launch = 0; launch < 2; ++launch) {
          dy.fill_u32(0xffffffffu);  // NaN: a row no point stores stays NaN
          dp.fill_u32(0xffffffffu);
          const tensor_arg args[] = {tensor_view(dx.address(), {R, C}), tensor_view(dy.address(), {R, W}), tensor_view(dp.address(), {ctas, rows, W}),
                                     tensor_view(dc.address(), {ctas})};
          k.launch(args);
          auto y = dy.download<float>();
          long long nonfinite = 0;
          const double err = rel_err(std::vector<double>(y.begin(), y.end()), want, &nonfinite);
          auto counts = dc.download<std::int32_t>();
          const long long nonzero = std::count_if(counts.begin(), counts.end(), [](std::int32_t v) { return v != 0; });
          INFO((wg ? "warpgroup" : "warp") << (serp ? " serpentine" : " strided") << ", " << sh.points << " points over " << ctas << " CTAs, R " << R << " C " << C
                                          << ", launch " << launch << ": rel_err " << err << ", non-finite " << nonfinite << ", counters not 0: " << nonzero);
          CHECK(nonfinite == 0);
          CHECK(err < 1e-6);
          CHECK(nonzero == 0);
        }
      }
    }
}

// 8-bit float register tiles (tests/kernels/fp8_roundtrip.hpp): f32 -> e4m3 / e5m2 -> smem bytes -> f32, f16 and bf16,
// on sm_90a (cvt .e4m3x2 / .e5m2x2) and as sm_80 code (the device helpers' integer arithmetic, run as compute_80 PTX):
// every output equals the host's quantization (round to nearest even, saturating) exactly. Inputs: every finite code's
// value and its midpoints with the next (the ties), values past the largest (saturate), NaN, signed zeros, values
// below the smallest subnormal's half, and random values over the whole range; 1003 rows (a ragged last tile).
TEST_CASE("8-bit float tiles: conversions both ways through shared memory match the host's rounding bit for bit (sm_90a and sm_80 code)") {
  if (!gpu_ready()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  for (bool e5 : {false, true})
    for (target_id t : {sm_90a, sm_80}) {
      const program p = e5 ? cake_test::fp8_roundtrip<e5m2>(t) : cake_test::fp8_roundtrip<e4m3>(t);
      REQUIRE(p.errors.empty());
      lower::emit_options opt;
      opt.specialized = {{p.find_dim("D"), 64}};
      auto k = runtime_kernel::build(p, opt);
      auto quant = [&](float x) { return e5 ? harness::e5m2_bits_to_float(harness::float_to_e5m2_bits(x)) : harness::e4m3_bits_to_float(harness::float_to_e4m3_bits(x)); };
      auto value = [&](int code) { return e5 ? harness::e5m2_bits_to_float(static_cast<std::uint8_t>(code)) : harness::e4m3_bits_to_float(static_cast<std::uint8_t>(code)); };
      const long long N = 1003, D = 64;
      std::vector<float> x;
      for (int code = 0; code < 256; ++code) {
        const float v = value(code), w = value((code & 0x80) | ((code & 0x7f) + 1));
        if (!std::isfinite(v)) continue;
        x.push_back(v);
        if (std::isfinite(w) && (code & 0x7f) < 0x7f) x.push_back(0.5f * (v + w));  // the tie with the next code
      }
      const float largest = e5 ? 57344.0f : 448.0f;
      for (float v : {0.0f, -0.0f, largest * 1.01f, -largest * 1.5f, 1e30f, INFINITY, -INFINITY, NAN, 1e-12f, -1e-12f}) x.push_back(v);
      std::uniform_real_distribution<float> ex(-20.0f, e5 ? 17.0f : 10.0f), unit(1.0f, 2.0f);
      while (x.size() < static_cast<std::size_t>(N * D)) x.push_back((rng.engine()() % 2 ? -1.0f : 1.0f) * unit(rng.engine()) * std::exp2(ex(rng.engine())));
      auto dx = jit::to_device(x);
      jit::device_buffer d32(static_cast<std::size_t>(4 * N * D)), d16(static_cast<std::size_t>(2 * N * D)), dbf(static_cast<std::size_t>(2 * N * D));
      d32.fill_u32(0xc7c7c7c7u), d16.fill_u32(0x7bff7bffu), dbf.fill_u32(0x7f7f7f7fu);  // poisoned with values no fp8 element converts to
      const tensor_arg args[] = {tensor_view(dx.address(), {N, D}), tensor_view(d32.address(), {N, D}), tensor_view(d16.address(), {N, D}),
                                 tensor_view(dbf.address(), {N, D})};
      k.launch(args);
      const auto y32 = d32.download<float>();
      const auto y16 = d16.download<std::uint16_t>();
      const auto ybf = dbf.download<std::uint16_t>();
      long long wrong32 = 0, wrong16 = 0, wrongbf = 0;
      std::size_t first = x.size();
      auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)); };
      for (std::size_t i = 0; i < x.size(); ++i) {
        const float want = quant(x[i]);
        const bool a = same(y32[i], want), b = same(harness::f16_bits_to_float(y16[i]), want), c = same(harness::bf16_bits_to_float(ybf[i]), want);
        wrong32 += !a, wrong16 += !b, wrongbf += !c;
        if (!(a && b && c) && first == x.size()) first = i;
      }
      INFO((e5 ? "e5m2 " : "e4m3 ") << to_string(t) << ": wrong f32 " << wrong32 << ", f16 " << wrong16 << ", bf16 " << wrongbf
                                    << (first < x.size() ? " (first: x = " + std::to_string(x[first]) + " -> " + std::to_string(y32[first]) + ", want " +
                                                               std::to_string(quant(x[first])) + ")"
                                                         : std::string()));
      CHECK(wrong32 == 0);
      CHECK(wrong16 == 0);
      CHECK(wrongbf == 0);
    }
}
