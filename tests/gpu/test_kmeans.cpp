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

#include <algorithm>
#include <cmath>
#include <random>
#include <cstdint>
#include <string>
#include <vector>

#include <cake/harness/parallel.hpp>
#include <cake/harness/random.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/kmeans/init.hpp"
#include "kernels/kmeans/kmeans.hpp"
#include "device_gate.hpp"
#include "half_inputs.hpp"

using namespace cake;
using kmeans::input_type;
using kmeans::metric;

namespace {

bool usable_hopper() { return cake_gpu_test::require_device(9, 0, true, "cake::kmeans (sm_90a)"); }

struct shape {
  long long B, N, K, D;
};

// The inputs as raw 16-bit values (uploaded as they are) and as the floats they stand for.
using matrix = cake_gpu_test::half_data;
matrix random_matrix(std::size_t n, input_type t, harness::random_source& rng) { return cake_gpu_test::random_half(n, t == input_type::bf16, rng); }
double value_of(std::uint16_t bits, input_type t) { return t == input_type::bf16 ? harness::bf16_bits_to_float(bits) : harness::f16_bits_to_float(bits); }

// One update test's shape, type and metric.
struct update_run {
  long long B, N, K, D;
  input_type t;
  metric m;
};

// Cluster ids of B x N points, uniform over 0 .. K - 1 - empty (the last `empty` clusters get no point).
std::vector<std::int32_t> random_assignment(const update_run& u, int empty, harness::random_source& rng) {
  std::vector<std::int32_t> idx(static_cast<std::size_t>(u.B * u.N));
  std::uniform_int_distribution<int> pick(0, static_cast<int>(u.K - 1 - empty));
  for (auto& v : idx) v = pick(rng.engine());
  return idx;
}

// The update's f64 reference: per cluster row b * K + k, the sum of its points' rows and their count.
struct cluster_sums {
  std::vector<double> sum, count;
};
cluster_sums reference_sums(const update_run& u, const matrix& x, const std::vector<std::int32_t>& idx) {
  cluster_sums r{std::vector<double>(static_cast<std::size_t>(u.B * u.K * u.D)), std::vector<double>(static_cast<std::size_t>(u.B * u.K))};
  for (long long p = 0; p < u.B * u.N; ++p) {
    const long long row = (p / u.N) * u.K + idx[static_cast<std::size_t>(p)];
    r.count[static_cast<std::size_t>(row)] += 1;
    for (long long d = 0; d < u.D; ++d) r.sum[static_cast<std::size_t>(row * u.D + d)] += x.val[static_cast<std::size_t>(p * u.D + d)];
  }
  return r;
}

// Checks an update's results (centroids `got`, c_norm, shift) against the f64 reference of the points
// x assigned by idx, from the centroids c: the mean of each non-empty cluster within the type's rounding,
// empty clusters unchanged, the norm and shift of the new centroids.
void check_update(const update_run& u, const matrix& x, const matrix& c, const std::vector<std::int32_t>& idx, const std::vector<std::uint16_t>& got,
                  const std::vector<float>& norm, const std::vector<float>& shift) {
  const auto [B, N, K, D, t, m] = u;
  const auto [sum, cnt] = reference_sums(u, x, idx);
  long long bad_mean = 0, bad_empty = 0, bad_norm = 0, bad_shift = 0;
  const double ulp = t == input_type::bf16 ? 1.0 / 128 : 1.0 / 1024;  // relative spacing of the type
  for (long long row = 0; row < B * K; ++row) {
    double n2 = 0, s2 = 0;
    for (long long d = 0; d < D; ++d) {
      const auto e = static_cast<std::size_t>(row * D + d);
      const double now = value_of(got[e], t), before = c.val[e];
      if (cnt[static_cast<std::size_t>(row)] == 0) {
        bad_empty += got[e] != c.bits[e];
      } else {
        const double want = sum[e] / cnt[static_cast<std::size_t>(row)];
        bad_mean += std::abs(now - want) > ulp * std::abs(want) + 1e-6;
      }
      n2 += now * now;
      s2 += (now - before) * (now - before);
    }
    const double want_norm = m == metric::l2 ? n2 : -1 / std::sqrt(n2);
    if (m != metric::inner_product) bad_norm += std::abs(norm[static_cast<std::size_t>(row)] - want_norm) > 1e-3 * std::abs(want_norm) + 1e-6;
    bad_shift += std::abs(shift[static_cast<std::size_t>(row)] - s2) > 1e-4 * s2 + 1e-6;
  }
  CHECK_MESSAGE(bad_mean == 0, bad_mean << " coordinates of non-empty clusters are not the mean of their points");
  CHECK_MESSAGE(bad_empty == 0, bad_empty << " coordinates of empty clusters changed");
  CHECK_MESSAGE(bad_norm == 0, bad_norm << " c_norm values are not the metric's norm of the new centroid");
  CHECK_MESSAGE(bad_shift == 0, bad_shift << " shift values are not |c_new - c_old|^2");
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
      {{4, 40000, 300, 64}, input_type::bf16, metric::l2},  // 628 points tiles: a persistent CTA walks several
      // c_norm by TMA (cn_in_stage) where K is a multiple of 4 or B = 1 (NaN past K in the last tile), from
      // global where B > 1 and K is not (K = 129 above)
      {{3, 900, 300, 128}, input_type::f16, metric::cosine},
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
    // The f64 reference once per run: each point's best score and the margin its f32 sums get.
    auto score = [&](long long p, long long k) {  // lower is better, in the metric's own units
      const long long b = p / N;
      const float* xp = &x.val[static_cast<std::size_t>(p * D)];
      const float* cp = &c.val[static_cast<std::size_t>((b * K + k) * D)];
      double dot = 0;
      for (long long d = 0; d < D; ++d) dot += static_cast<double>(xp[d]) * cp[d];
      const double n = cn64[static_cast<std::size_t>(b * K + k)];
      return u.m == metric::l2 ? n - 2 * dot : u.m == metric::inner_product ? -dot : -dot / std::sqrt(n);
    };
    std::vector<double> best(static_cast<std::size_t>(B * N)), margin(best.size());
    harness::parallel_for(B * N, [&](long long p0, long long p1) {
      for (long long p = p0; p < p1; ++p) {
        const float* xp = &x.val[static_cast<std::size_t>(p * D)];
        double xn = 0;
        for (long long d = 0; d < D; ++d) xn += static_cast<double>(xp[d]) * xp[d];
        double bs = 1e300;
        for (long long k = 0; k < K; ++k) bs = std::min(bs, score(p, k));
        best[static_cast<std::size_t>(p)] = bs;
        // f32 accumulation of D products: a margin of ~1e-5 of the magnitudes involved.
        margin[static_cast<std::size_t>(p)] =
            2e-5 * (u.m == metric::l2 ? xn + cn64[0] + 1.0 : u.m == metric::inner_product ? std::sqrt(xn) * std::sqrt(cn64[0]) + 1.0 : std::sqrt(xn) + 1.0);
      }
    });
    // The forms of the schedule: a CTA per points tile (turns passed at issue), the same with the argmin's
    // index found lazily, the persistent walk with the next points tile loading during this one (turns passed
    // after the wait, as assign_config_for takes it), the grid form with the turns passed after the wait, and
    // the overlapped halves (where two whole-tile stages fit: D <= 192). Each with c_norm as assign_config_for
    // sets it: in the centroid stages (TMA, NaN past K) for l2 and cosine where its rows can be mapped.
    for (const int form : {0, 1, 2, 3, 4}) {
    INFO((form == 0 ? "a CTA per points tile" : form == 1 ? "the argmin's index found lazily" : form == 2 ? "persistent, two points tiles, turn after the wait"
          : form == 3 ? "a CTA per points tile, turn after the wait" : "overlapped halves"));
    auto cfg = kmeans::assign_config_for(D, K, u.m);
    cfg.lazy_index = form == 1;
    cfg.persistent = false, cfg.x_stages = 1, cfg.overlap = false, cfg.pass_after_wait = form == 2 || form == 3;
    if (form == 2) cfg.persistent = true, cfg.x_stages = 2;
    if (form == 4) {
      if (cfg.rows != 128 || cfg.parts > 4) continue;
      cfg.overlap = true;
    }
    cfg.stages = 8;
    while (cfg.stages > 2 && kernels::kmeans_assign_smem(cfg) > 225 * 1024) --cfg.stages;
    if (kernels::kmeans_assign_smem(cfg) > 225 * 1024) continue;  // D = 512: two points tiles do not fit; D = 256: two whole-tile stages do not
    std::vector<std::int32_t> first;
    for (int rep = 0; rep < 2; ++rep) {
      didx.fill_u32(0xffffffffu);
      kmeans::assign_with(cfg, dx.address(), dc.address(), u.m == metric::inner_product ? nullptr : static_cast<const float*>(dn.address()),
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
        const long long got = idx[static_cast<std::size_t>(p)];
        if (got < 0 || got >= K || score(p, got) > best[static_cast<std::size_t>(p)] + margin[static_cast<std::size_t>(p)]) bad[static_cast<std::size_t>(p)] = 1;
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

TEST_CASE("k-means update: means of the assigned points, empty clusters kept, norms and shift of the new centroids") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  for (const update_run u : {update_run{1, 1000, 50, 128, input_type::bf16, metric::l2}, update_run{3, 4097, 129, 104, input_type::f16, metric::l2},
                             update_run{2, 700, 64, 512, input_type::bf16, metric::cosine},
                             update_run{1, 300, 20, 64, input_type::f16, metric::inner_product}}) {
    const auto [B, N, K, D, t, m] = u;
    INFO("B " << B << " N " << N << " K " << K << " D " << D << " " << to_string(t) << " " << kernels::to_string(m));
    auto x = random_matrix(static_cast<std::size_t>(B * N * D), t, rng);
    auto c = random_matrix(static_cast<std::size_t>(B * K * D), t, rng);
    const auto idx = random_assignment(u, 3, rng);  // the last 3 clusters stay empty
    auto dx = jit::to_device(x.bits), dc = jit::to_device(c.bits), di = jit::to_device(idx);
    jit::device_buffer dn(static_cast<std::size_t>(4 * B * K)), ds(static_cast<std::size_t>(4 * B * K)),
        ws(static_cast<std::size_t>(kmeans::update_workspace_bytes(B, K, D)));
    dn.fill_u32(0xffffffffu);
    ds.fill_u32(0xffffffffu);
    ws.fill_u32(0xffffffffu);  // the update zeroes it itself
    kmeans::update(dx.address(), static_cast<const std::int32_t*>(di.address()), dc.address(), static_cast<float*>(dn.address()), static_cast<float*>(ds.address()),
                   ws.address(), B, N, K, D, t, m);
    check_update(u, x, c, idx, dc.download<std::uint16_t>(), dn.download<float>(), ds.download<float>());
  }
}

// The sorted update (update_options::method = sorted: a counting sort of the points by cluster, then plain
// per-cluster sums): the same means as the reference, with the workspace poisoned first; shapes with K past
// the offsets kernel's chunk of 1,024 clusters (its carry), ragged D and N, and a skewed assignment (one
// cluster holding most points: segments of thousands of rows) next to empty clusters.
TEST_CASE("k-means update, sorted: means of the assigned points by a counting sort and segment sums, empty clusters kept") {
  {  // refused before any launch (no GPU needed): the sorted update is not deterministic
    kmeans::update_options opt;
    opt.method = kmeans::update_method::sorted;
    opt.deterministic = true;
    int dummy = 0;
    CHECK_THROWS_WITH_AS(kmeans::update(&dummy, &dummy, &dummy, reinterpret_cast<float*>(&dummy), reinterpret_cast<float*>(&dummy), &dummy, 1, 100, 10, 64,
                                        input_type::f16, metric::l2, opt),
                         doctest::Contains("the sorted update is not deterministic"), jit::argument_error);
  }
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  kmeans::update_options sorted;
  sorted.method = kmeans::update_method::sorted;
  for (const update_run u : {update_run{1, 1000, 50, 128, input_type::bf16, metric::l2}, update_run{3, 4097, 129, 104, input_type::f16, metric::l2},
                             update_run{2, 9000, 2500, 64, input_type::bf16, metric::l2}, update_run{2, 700, 64, 512, input_type::bf16, metric::cosine},
                             update_run{1, 300, 20, 64, input_type::f16, metric::inner_product}, update_run{4, 5000, 7, 96, input_type::f16, metric::l2}}) {
    const auto [B, N, K, D, t, m] = u;
    for (const bool skewed : {false, true}) {
      INFO("B " << B << " N " << N << " K " << K << " D " << D << " " << to_string(t) << " " << kernels::to_string(m) << (skewed ? " skewed" : ""));
      auto x = random_matrix(static_cast<std::size_t>(B * N * D), t, rng);
      auto c = random_matrix(static_cast<std::size_t>(B * K * D), t, rng);
      auto idx = random_assignment(u, 3 < K ? 3 : 0, rng);  // the last 3 clusters stay empty
      if (skewed)  // nine points in ten go to cluster 1
        for (std::size_t i = 0; i < idx.size(); ++i)
          if (i % 10 != 0) idx[i] = 1;
      auto dx = jit::to_device(x.bits), dc = jit::to_device(c.bits), di = jit::to_device(idx);
      jit::device_buffer dn(static_cast<std::size_t>(4 * B * K)), ds(static_cast<std::size_t>(4 * B * K)),
          ws(static_cast<std::size_t>(kmeans::sorted_update_workspace_bytes(B, N, K, D)));
      dn.fill_u32(0xffffffffu);
      ds.fill_u32(0xffffffffu);
      ws.fill_u32(0xffffffffu);  // counts are zeroed by the update; every other part is written whole
      kmeans::update(dx.address(), static_cast<const std::int32_t*>(di.address()), dc.address(), static_cast<float*>(dn.address()),
                     static_cast<float*>(ds.address()), ws.address(), B, N, K, D, t, m, sorted);
      check_update(u, x, c, idx, dc.download<std::uint16_t>(), dn.download<float>(), ds.download<float>());
    }
  }
}

TEST_CASE("k-means step (the update's scatter fused into the assignment): the indices of assign, the means of update, in every form the entry point picks") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  // The forms assign_config_for picks (kernels/kmeans/kmeans.hpp): persistent (few centroid tiles, or D <= 64),
  // overlapped halves (D <= 128, many tiles), the lazy index (K >= 32,768; with most clusters empty here),
  // the plain grid (D = 256), 64-row consumers (D = 512). N ragged: the points past N must add nothing.
  for (const update_run u : {update_run{2, 3001, 300, 128, input_type::bf16, metric::l2}, update_run{1, 5003, 4100, 104, input_type::f16, metric::l2},
                             update_run{1, 4001, 2500, 128, input_type::bf16, metric::cosine}, update_run{1, 2001, 33000, 64, input_type::f16, metric::l2},
                             update_run{1, 3001, 40000, 128, input_type::bf16, metric::l2}, update_run{3, 999, 70, 256, input_type::f16, metric::inner_product},
                             update_run{2, 701, 64, 512, input_type::bf16, metric::l2}}) {
    const auto [B, N, K, D, t, m] = u;
    const auto form = kmeans::assign_config_for(D, K, m);
    INFO("B " << B << " N " << N << " K " << K << " D " << D << " " << to_string(t) << " " << kernels::to_string(m) << (form.persistent ? " persistent" : "")
              << (form.overlap ? " overlap" : "") << (form.lazy_index ? " lazy" : ""));
    auto x = random_matrix(static_cast<std::size_t>(B * N * D), t, rng);
    auto c = random_matrix(static_cast<std::size_t>(B * K * D), t, rng);
    auto dx = jit::to_device(x.bits), dc = jit::to_device(c.bits), dc2 = jit::to_device(c.bits);
    jit::device_buffer dn(static_cast<std::size_t>(4 * B * K)), dn2(static_cast<std::size_t>(4 * B * K)), ds(static_cast<std::size_t>(4 * B * K)),
        ds2(static_cast<std::size_t>(4 * B * K)), di(static_cast<std::size_t>(4 * B * N + 64)), di2(static_cast<std::size_t>(4 * B * N + 64)),
        ws(static_cast<std::size_t>(kmeans::update_workspace_bytes(B, K, D)));
    for (auto* b : {&ds, &ds2, &di, &di2, &ws}) b->fill_u32(0xffffffffu);  // poisoned: step writes idx and shift, zeroes the workspace
    auto* n1 = static_cast<float*>(dn.address());
    auto* n2 = static_cast<float*>(dn2.address());
    kmeans::norms(dc.address(), n1, B, K, D, t, m);
    kmeans::norms(dc2.address(), n2, B, K, D, t, m);
    // the two calls
    kmeans::assign(dx.address(), dc.address(), n1, static_cast<std::int32_t*>(di.address()), B, N, K, D, t, m);
    const auto idx = di.download<std::int32_t>();
    // the fused step, at every D (kmeans::step itself keeps the two calls at D <= 64: kmeans::fuse_scatter; the
    // Python tier runs kmeans_step at D = 64 through them)
    kmeans::detail::run_step(true, dx.address(), dc2.address(), static_cast<std::int32_t*>(di2.address()), n2, static_cast<float*>(ds2.address()), ws.address(), B,
                             N, K, D, t, m, {}, nullptr, 0);
    const auto idx2 = di2.download<std::int32_t>();
    long long differ = 0, guard = 0;
    for (long long p = 0; p < B * N; ++p) differ += idx[static_cast<std::size_t>(p)] != idx2[static_cast<std::size_t>(p)];
    for (std::size_t p = static_cast<std::size_t>(B * N); p < idx2.size(); ++p) guard += idx2[p] != -1;
    CHECK_MESSAGE(differ == 0, differ << " points get another index from step than from assign");
    CHECK_MESSAGE(guard == 0, guard << " words past B * N were written");
    const std::vector<std::int32_t> assigned(idx.begin(), idx.begin() + B * N);
    check_update(u, x, c, assigned, dc2.download<std::uint16_t>(), dn2.download<float>(), ds2.download<float>());
  }
}

TEST_CASE("k-means update, deterministic: the same bits on every run and for any order of the points, means against an f64 reference") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  // Few clusters for many points (every cluster's sums take thousands of atomics: the order they land in
  // changes from run to run), ragged N and D, both types, all three norm forms.
  for (const update_run u : {update_run{1, 20000, 8, 128, input_type::f16, metric::l2}, update_run{2, 4097, 129, 104, input_type::bf16, metric::l2},
                             update_run{1, 3000, 50, 512, input_type::f16, metric::cosine},
                             update_run{3, 777, 16, 64, input_type::bf16, metric::inner_product}}) {
    const auto [B, N, K, D, t, m] = u;
    INFO("B " << B << " N " << N << " K " << K << " D " << D << " " << to_string(t) << " " << kernels::to_string(m));
    auto x = random_matrix(static_cast<std::size_t>(B * N * D), t, rng);
    auto c = random_matrix(static_cast<std::size_t>(B * K * D), t, rng);
    const auto idx = random_assignment(u, 1, rng);  // the last cluster stays empty
    kmeans::update_options opt{true, 0.0f};
    if (t == input_type::bf16)
      for (double v : x.val) opt.max_abs = std::max(opt.max_abs, static_cast<float>(std::abs(v)));
    // The points in a shuffled order (idx with them): the same clusters, other atomics first.
    std::vector<long long> perm(static_cast<std::size_t>(N));
    for (long long i = 0; i < N; ++i) perm[static_cast<std::size_t>(i)] = i;
    std::shuffle(perm.begin(), perm.end(), rng.engine());
    auto xs = x.bits;
    auto is = idx;
    for (long long b = 0; b < B; ++b)
      for (long long i = 0; i < N; ++i) {
        const long long from = b * N + perm[static_cast<std::size_t>(i)], to = b * N + i;
        is[static_cast<std::size_t>(to)] = idx[static_cast<std::size_t>(from)];
        for (long long d = 0; d < D; ++d) xs[static_cast<std::size_t>(to * D + d)] = x.bits[static_cast<std::size_t>(from * D + d)];
      }
    struct result {
      std::vector<std::uint16_t> c;
      std::vector<float> norm, shift;
    };
    auto update = [&](const std::vector<std::uint16_t>& xb, const std::vector<std::int32_t>& ib) {
      auto dx = jit::to_device(xb), dc = jit::to_device(c.bits), di = jit::to_device(ib);
      jit::device_buffer dn(static_cast<std::size_t>(4 * B * K)), ds(static_cast<std::size_t>(4 * B * K)),
          ws(static_cast<std::size_t>(kmeans::update_workspace_bytes(B, K, D)));
      dn.fill_u32(0xffffffffu);
      ds.fill_u32(0xffffffffu);
      ws.fill_u32(0xffffffffu);
      kmeans::update(dx.address(), static_cast<const std::int32_t*>(di.address()), dc.address(), static_cast<float*>(dn.address()),
                     static_cast<float*>(ds.address()), ws.address(), B, N, K, D, t, m, opt);
      return result{dc.download<std::uint16_t>(), dn.download<float>(), ds.download<float>()};
    };
    const result first = update(x.bits, idx), again = update(x.bits, idx), shuffled = update(xs, is);
    CHECK_MESSAGE(first.c == again.c, "two runs gave different centroid bits");
    CHECK_MESSAGE(first.c == shuffled.c, "the points in another order gave different centroid bits");
    CHECK(first.shift == again.shift);
    CHECK(first.shift == shuffled.shift);
    if (m != metric::inner_product) CHECK(first.norm == shuffled.norm);
    // Means against f64 sums: within one step of the type, and (f16: exact sums, one f32 rounding, one
    // division) the nearest f16 on all but a few double-rounding ties.
    const auto [sum, cnt] = reference_sums(u, x, idx);
    const double ulp = t == input_type::bf16 ? 1.0 / 128 : 1.0 / 1024;
    long long bad_mean = 0, bad_empty = 0, not_nearest = 0, coords = 0;
    for (long long row = 0; row < B * K; ++row)
      for (long long d = 0; d < D; ++d) {
        const auto e = static_cast<std::size_t>(row * D + d);
        if (cnt[static_cast<std::size_t>(row)] == 0) {
          bad_empty += first.c[e] != c.bits[e];
          continue;
        }
        const double want = sum[e] / cnt[static_cast<std::size_t>(row)], now = value_of(first.c[e], t);
        bad_mean += std::abs(now - want) > ulp * std::abs(want) + 1e-6;
        if (t == input_type::f16) not_nearest += first.c[e] != harness::float_to_f16_bits(static_cast<float>(want));
        ++coords;
      }
    CHECK_MESSAGE(bad_mean == 0, bad_mean << " coordinates are not the mean of their points");
    CHECK_MESSAGE(bad_empty == 0, bad_empty << " coordinates of the empty cluster changed");
    CHECK_MESSAGE(not_nearest * 1000 <= coords, not_nearest << " of " << coords << " f16 coordinates are not the nearest f16 of the mean");
    MESSAGE(std::string(to_string(t)) << " B " << B << " N " << N << " K " << K << " D " << D << ": " << not_nearest << " of " << coords << " not the nearest value");
  }
}

TEST_CASE("k-means fit: Lloyd iterations find well-separated clusters, identical runs agree, the last update barely moves") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const long long B = 2, N = 20000, K = 40, D = 64;
  // K blob centres far apart (scale 20), points within 1 of their centre; the start: each centre moved by ~1.
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(K - 1));
  std::vector<float> centre(static_cast<std::size_t>(B * K * D));
  for (auto& v : centre) v = 20.0f * gauss(rng.engine());
  std::vector<std::uint16_t> xb(static_cast<std::size_t>(B * N * D)), cb(centre.size());
  std::vector<int> blob(static_cast<std::size_t>(B * N));
  for (long long p = 0; p < B * N; ++p) {
    blob[static_cast<std::size_t>(p)] = pick(rng.engine());
    for (long long d = 0; d < D; ++d)
      xb[static_cast<std::size_t>(p * D + d)] =
          harness::float_to_bf16_bits(centre[static_cast<std::size_t>(((p / N) * K + blob[static_cast<std::size_t>(p)]) * D + d)] + 0.3f * gauss(rng.engine()));
  }
  for (std::size_t e = 0; e < centre.size(); ++e) cb[e] = harness::float_to_bf16_bits(centre[e] + 0.3f * gauss(rng.engine()));
  std::vector<std::vector<std::int32_t>> runs;
  for (int rep = 0; rep < 2; ++rep) {
    auto dx = jit::to_device(xb), dc = jit::to_device(cb);
    jit::device_buffer di(static_cast<std::size_t>(4 * B * N)), dn(static_cast<std::size_t>(4 * B * K)), ds(static_cast<std::size_t>(4 * B * K)),
        ws(static_cast<std::size_t>(kmeans::update_workspace_bytes(B, K, D)));
    kmeans::fit(dx.address(), dc.address(), static_cast<std::int32_t*>(di.address()), static_cast<float*>(dn.address()), static_cast<float*>(ds.address()),
                ws.address(), B, N, K, D, input_type::bf16, metric::l2, 6);
    runs.push_back(di.download<std::int32_t>());
    const auto shift = ds.download<float>();
    // Converged: the last update recomputes the same means (f32 atomics add in any order, so a
    // coordinate may still flip by one bf16 step, 0.125 at these magnitudes: 0.016 per flip).
    float most = 0;
    for (float s : shift) most = std::max(most, s);
    CHECK_MESSAGE(most < 0.1f, "the last update still moved a centroid by " << most);
  }
  CHECK_MESSAGE(runs[0] == runs[1], "two fits from the same start gave different assignments");
  // Deterministic sums: two fits end with the same centroid bits (and the same assignment as above).
  std::vector<std::vector<std::uint16_t>> cents;
  for (int rep = 0; rep < 2; ++rep) {
    auto dx = jit::to_device(xb), dc = jit::to_device(cb);
    jit::device_buffer di(static_cast<std::size_t>(4 * B * N)), dn(static_cast<std::size_t>(4 * B * K)), ds(static_cast<std::size_t>(4 * B * K)),
        ws(static_cast<std::size_t>(kmeans::update_workspace_bytes(B, K, D)));
    kmeans::fit(dx.address(), dc.address(), static_cast<std::int32_t*>(di.address()), static_cast<float*>(dn.address()), static_cast<float*>(ds.address()),
                ws.address(), B, N, K, D, input_type::bf16, metric::l2, 6, kmeans::update_options{true, 200.0f});
    cents.push_back(dc.download<std::uint16_t>());
    CHECK_MESSAGE(di.download<std::int32_t>() == runs[0], "the deterministic fit assigned points differently");
  }
  CHECK_MESSAGE(cents[0] == cents[1], "two deterministic fits from the same start gave different centroid bits");
  {  // the sorted update in the loop (fit runs assign + the sorted update): the same assignment, converged
    auto dx = jit::to_device(xb), dc = jit::to_device(cb);
    jit::device_buffer di(static_cast<std::size_t>(4 * B * N)), dn(static_cast<std::size_t>(4 * B * K)), ds(static_cast<std::size_t>(4 * B * K)),
        ws(static_cast<std::size_t>(kmeans::sorted_update_workspace_bytes(B, N, K, D)));
    kmeans::update_options sorted;
    sorted.method = kmeans::update_method::sorted;
    kmeans::fit(dx.address(), dc.address(), static_cast<std::int32_t*>(di.address()), static_cast<float*>(dn.address()), static_cast<float*>(ds.address()),
                ws.address(), B, N, K, D, input_type::bf16, metric::l2, 6, sorted);
    CHECK_MESSAGE(di.download<std::int32_t>() == runs[0], "the fit with the sorted update assigned points differently");
    float most = 0;
    for (float s : ds.download<float>()) most = std::max(most, s);
    CHECK_MESSAGE(most < 0.1f, "the sorted fit's last update still moved a centroid by " << most);
  }
  long long wrong = 0;
  for (long long p = 0; p < B * N; ++p) wrong += runs[0][static_cast<std::size_t>(p)] != blob[static_cast<std::size_t>(p)];
  CHECK_MESSAGE(wrong == 0, wrong << " of " << B * N << " points are not in their blob's cluster");
}

TEST_CASE("k-means init_random and fit_until: seeded distinct points, iterations until the centroids stop moving") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const long long B = 2, N = 6000, K = 24, D = 64;
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(K - 1));
  std::vector<float> centre(static_cast<std::size_t>(B * K * D));
  for (auto& v : centre) v = 20.0f * gauss(rng.engine());
  std::vector<std::uint16_t> xb(static_cast<std::size_t>(B * N * D));
  for (long long p = 0; p < B * N; ++p) {
    const int blob = pick(rng.engine());
    for (long long d = 0; d < D; ++d)
      xb[static_cast<std::size_t>(p * D + d)] =
          harness::float_to_bf16_bits(centre[static_cast<std::size_t>(((p / N) * K + blob) * D + d)] + 0.3f * gauss(rng.engine()));
  }
  auto dx = jit::to_device(xb);
  // init_random: the rows initial_rows names for seed + b, bit for bit; the same seed gives the same rows.
  const std::uint64_t seed = 7;
  jit::device_buffer dc(static_cast<std::size_t>(2 * B * K * D)), dc2(static_cast<std::size_t>(2 * B * K * D));
  dc.fill_u32(0xffffffffu);
  kmeans::init_random(dx.address(), dc.address(), B, N, K, D, input_type::bf16, seed);
  kmeans::init_random(dx.address(), dc2.address(), B, N, K, D, input_type::bf16, seed);
  const auto c0 = dc.download<std::uint16_t>();
  CHECK(c0 == dc2.download<std::uint16_t>());
  long long wrong_rows = 0;
  for (long long b = 0; b < B; ++b) {
    const auto rows = kmeans::initial_rows(N, K, seed + static_cast<std::uint64_t>(b));
    for (long long k = 0; k < K; ++k)
      for (long long d = 0; d < D; ++d)
        wrong_rows += c0[static_cast<std::size_t>((b * K + k) * D + d)] != xb[static_cast<std::size_t>((b * N + rows[static_cast<std::size_t>(k)]) * D + d)];
  }
  CHECK_MESSAGE(wrong_rows == 0, wrong_rows << " coordinates of the initial centroids are not the picked points");
  // fit_until: stops once no centroid moves more than the tolerance (checked every 2 iterations).
  jit::device_buffer di(static_cast<std::size_t>(4 * B * N)), dn(static_cast<std::size_t>(4 * B * K)), ds(static_cast<std::size_t>(4 * B * K)),
      ws(static_cast<std::size_t>(kmeans::update_workspace_bytes(B, K, D)));
  const float tolerance = 0.01f;
  const int run = kmeans::fit_until(dx.address(), dc.address(), static_cast<std::int32_t*>(di.address()), static_cast<float*>(dn.address()),
                                    static_cast<float*>(ds.address()), ws.address(), B, N, K, D, input_type::bf16, metric::l2, 60, tolerance, 2);
  MESSAGE("fit_until ran " << run << " of at most 60 iterations");
  CHECK(run >= 2);
  CHECK(run % 2 == 0);  // whole checks only, below the cap
  CHECK(run < 60);
  float most = 0;
  for (float v : ds.download<float>()) most = std::max(most, v);
  CHECK_MESSAGE(std::sqrt(most) <= tolerance, "the last iteration moved a centroid by " << std::sqrt(most));
  // A cap of 1 iteration: one iteration, whatever the tolerance.
  CHECK(kmeans::fit_until(dx.address(), dc2.address(), static_cast<std::int32_t*>(di.address()), static_cast<float*>(dn.address()),
                          static_cast<float*>(ds.address()), ws.address(), B, N, K, D, input_type::bf16, metric::l2, 1, 0.0f, 5) == 1);
}
