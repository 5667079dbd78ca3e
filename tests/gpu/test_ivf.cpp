// cake::knn::ivf_build / ivf_search on the GPU, on clustered random data (random centres + noise: uniform
// noise would make an inverted file meaningless), f16 and bf16, both metrics, ragged N and Q, k 1..256.
//   - the build, checked on the host: the list sizes sum to N, every original row appears once in ids,
//     the list-ordered data is the database's rows in that order, and every vector sits in the list of
//     its nearest final centroid (f64, within a tolerance: near-ties may go either way in f32);
//   - a database of 50 distinct vectors repeated, with nlist = 64: some lists are empty (identical
//     initial centroids: ties go to the lowest index, so the copies never win a vector);
//   - nprobe = nlist scans every list: the result equals the exact search (cake::knn::search) up to ties
//     (the f64 score of the j-th index returned is within a tolerance of the exact search's j-th);
//   - recall@k against the exact search at small nprobe is printed, asserted above a loose floor, and
//     does not fall as nprobe grows (the probed lists of a larger nprobe contain the smaller's);
//   - both walks of the fine step (per query, by list) give identical outputs, and two runs too;
//   - outputs poisoned first; indices are -1 (empty) or valid and distinct; distances sorted best first;
//   - refusals name the argument.
// CAKE_SEED=<n> reproduces a run (the seed is printed first).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <cake/harness/random.hpp>
#include <cake/jit/device_memory.hpp>

#include "device_gate.hpp"
#include "kernels/knn/ivf.hpp"

using namespace cake;
using knn::input_type;
using knn::metric;

namespace {

bool usable_hopper() { return cake_gpu_test::require_device(9, 0, true, "cake::knn IVF (sm_90a)"); }

struct matrix {
  std::vector<std::uint16_t> bits;
  std::vector<float> val;
  long long rows = 0, cols = 0;
  double at(long long r, long long c) const { return val[static_cast<std::size_t>(r * cols + c)]; }
};

// `rows` vectors around `centres` random centres (coordinates in [-1, 1], noise 0.15 per coordinate);
// distinct > 0: only that many distinct vectors, repeated.
matrix clustered(long long rows, long long D, int centres, input_type t, std::mt19937_64& g, const std::vector<float>* centre_of = nullptr,
                 long long distinct = 0) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::normal_distribution<float> noise(0.0f, 0.15f);
  std::vector<float> c;
  if (centre_of) c = *centre_of;
  else {
    c.resize(static_cast<std::size_t>(centres * D));
    for (auto& v : c) v = u(g);
  }
  matrix m;
  m.rows = rows, m.cols = D;
  m.bits.resize(static_cast<std::size_t>(rows * D));
  m.val.resize(m.bits.size());
  for (long long r = 0; r < rows; ++r) {
    if (distinct > 0 && r >= distinct) {
      const long long from = r % distinct;
      for (long long d = 0; d < D; ++d) m.bits[static_cast<std::size_t>(r * D + d)] = m.bits[static_cast<std::size_t>(from * D + d)],
                                        m.val[static_cast<std::size_t>(r * D + d)] = m.val[static_cast<std::size_t>(from * D + d)];
      continue;
    }
    const long long k = static_cast<long long>(g() % static_cast<std::uint64_t>(centres));
    for (long long d = 0; d < D; ++d) {
      const float f = c[static_cast<std::size_t>(k * D + d)] + noise(g);
      const auto i = static_cast<std::size_t>(r * D + d);
      if (t == input_type::bf16) m.bits[i] = harness::host_bf16::from_float(f).bits, m.val[i] = harness::host_bf16{m.bits[i]}.to_float();
      else m.bits[i] = harness::host_f16::from_float(f).bits, m.val[i] = harness::host_f16{m.bits[i]}.to_float();
    }
  }
  return m;
}

double score(const matrix& x, long long q, const matrix& y, long long n, metric m) {
  double dot = 0, yy = 0, xx = 0;
  for (long long d = 0; d < x.cols; ++d) dot += x.at(q, d) * y.at(n, d), yy += y.at(n, d) * y.at(n, d), xx += x.at(q, d) * x.at(q, d);
  return m == metric::l2 ? xx + yy - 2 * dot : dot;
}

struct run {
  long long Q, N, D, nlist;
  int k;
  input_type t;
  metric m;
  std::vector<int> nprobes;  // nlist among them where it is at most 256
  long long distinct = 0;    // > 0: only that many distinct database vectors
  double recall_floor = 0.5; // at nprobe >= 4
};

std::string describe(const run& u) {
  return "Q " + std::to_string(u.Q) + " N " + std::to_string(u.N) + " D " + std::to_string(u.D) + " nlist " + std::to_string(u.nlist) + " k " +
         std::to_string(u.k) + " " + to_string(u.t) + " " + kernels::to_string(u.m) + (u.distinct ? " distinct " + std::to_string(u.distinct) : std::string());
}

void check_build(const run& u, const knn::ivf_index& ix, const matrix& y) {
  const long long N = u.N, D = u.D, L = u.nlist;
  REQUIRE(ix.host_offsets.size() == static_cast<std::size_t>(L + 1));
  CHECK(ix.host_offsets[0] == 0);
  CHECK(ix.host_offsets[static_cast<std::size_t>(L)] == N);  // the sizes sum to N
  long long empty = 0;
  for (long long l = 0; l < L; ++l) {
    CHECK(ix.list_size(l) >= 0);
    empty += ix.list_size(l) == 0;
  }
  MESSAGE(describe(u) << ": " << empty << " empty list(s)");
  if (u.distinct > 0 && u.distinct < L) CHECK(empty > 0);
  CHECK(ix.offsets.download<std::int32_t>() == ix.host_offsets);
  const auto ids = ix.ids.download<std::int32_t>();
  std::vector<int> seen(static_cast<std::size_t>(N), 0);
  for (const auto i : ids) {
    REQUIRE(i >= 0);
    REQUIRE(i < N);
    ++seen[static_cast<std::size_t>(i)];
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == N);  // every id once
  const auto data = ix.data.download<std::uint16_t>();
  long long moved_wrong = 0;
  for (long long p = 0; p < N; ++p)
    for (long long d = 0; d < D; ++d) moved_wrong += data[static_cast<std::size_t>(p * D + d)] != y.bits[static_cast<std::size_t>(ids[static_cast<std::size_t>(p)] * D + d)];
  CHECK(moved_wrong == 0);
  // Each vector in the list of its nearest centroid (l2, f64; near-ties within tol either way).
  const auto cb = ix.centroids.download<std::uint16_t>();
  std::vector<double> c(cb.size());
  for (std::size_t i = 0; i < cb.size(); ++i) c[i] = u.t == input_type::bf16 ? harness::host_bf16{cb[i]}.to_float() : harness::host_f16{cb[i]}.to_float();
  long long misplaced = 0;
  for (long long l = 0; l < L; ++l)
    for (long long p = ix.host_offsets[static_cast<std::size_t>(l)]; p < ix.host_offsets[static_cast<std::size_t>(l + 1)]; ++p) {
      const long long n = ids[static_cast<std::size_t>(p)];
      double best = std::numeric_limits<double>::infinity(), mine = 0, scale = 0;
      for (long long cc = 0; cc < L; ++cc) {
        double s = 0;
        for (long long d = 0; d < D; ++d) {
          const double diff = y.at(n, d) - c[static_cast<std::size_t>(cc * D + d)];
          s += diff * diff;
        }
        best = std::min(best, s);
        if (cc == l) mine = s;
      }
      for (long long d = 0; d < D; ++d) scale += y.at(n, d) * y.at(n, d);
      misplaced += mine > best + 1e-3 * (1 + scale);
    }
  CHECK(misplaced == 0);
}

void check_run(const run& u, std::mt19937_64& g) {
  INFO(describe(u));
  const int centres = 50;
  std::vector<float> centre(static_cast<std::size_t>(centres * u.D));
  std::uniform_real_distribution<float> cu(-1.0f, 1.0f);
  for (auto& v : centre) v = cu(g);
  const matrix y = clustered(u.N, u.D, centres, u.t, g, &centre, u.distinct);
  const matrix x = clustered(u.Q, u.D, centres, u.t, g, &centre);
  auto dy = jit::to_device(y.bits), dx = jit::to_device(x.bits);
  const knn::ivf_index ix = knn::ivf_build(dy.address(), u.N, u.D, u.nlist, u.t, u.m, /*seed*/ 7, /*iterations*/ 8);
  check_build(u, ix, y);
  // The exact search, the reference.
  const long long Q = u.Q, k = u.k;
  jit::device_buffer ed(static_cast<std::size_t>(4 * Q * k)), ei(static_cast<std::size_t>(4 * Q * k)),
      ew(static_cast<std::size_t>(knn::search_workspace_bytes(Q, u.N, u.D, u.k, u.m)));
  knn::search(dx.address(), dy.address(), static_cast<float*>(ed.address()), static_cast<std::int32_t*>(ei.address()), ew.address(), Q, u.N, u.D, u.k, u.t, u.m);
  const auto exact_i = ei.download<std::int32_t>();
  const bool l2 = u.m == metric::l2;
  double last_recall = 0;
  for (const int np : u.nprobes) {
    INFO("nprobe " << np);
    // Both walks (per query, by list) fold the same candidates with the same arithmetic: identical outputs.
    auto run_mode = [&](knn::ivf_scan_mode mode) {
      jit::device_buffer dd(static_cast<std::size_t>(4 * Q * k)), di(static_cast<std::size_t>(4 * Q * k)),
          dw(static_cast<std::size_t>(knn::ivf_search_workspace_bytes(ix, Q, u.k, np, mode)));
      dd.fill_u32(0xffffffffu), di.fill_u32(0xffffffffu), dw.fill_u32(0xffffffffu);
      knn::ivf_search(ix, dx.address(), static_cast<float*>(dd.address()), static_cast<std::int32_t*>(di.address()), dw.address(), Q, u.k, np, nullptr,
                      mode);
      return std::make_pair(dd.download<float>(), di.download<std::int32_t>());
    };
    const auto [dist, idx] = run_mode(knn::ivf_scan_mode::per_query);
    const auto [dist_l, idx_l] = run_mode(knn::ivf_scan_mode::by_list);
    CHECK_MESSAGE(idx_l == idx, "the by-list walk gave other indices than the per-query walk");
    CHECK_MESSAGE(std::memcmp(dist_l.data(), dist.data(), 4 * dist.size()) == 0, "the by-list walk gave other distances than the per-query walk");
    {
      const auto [dist2, idx2] = run_mode(knn::ivf_scan_mode::by_list);
      CHECK_MESSAGE(idx2 == idx_l, "two runs gave different indices");
    }
    long long invalid = 0, unsorted = 0, off_score = 0, not_exact = 0, hits = 0, wanted = 0;
    for (long long q = 0; q < Q; ++q) {
      std::set<std::int32_t> got, truth;
      for (long long j = 0; j < k; ++j) {
        const auto e = static_cast<std::size_t>(q * k + j);
        const std::int32_t i = idx[e];
        if (exact_i[e] >= 0) truth.insert(exact_i[e]), ++wanted;
        if (i == -1) {
          invalid += l2 ? !(dist[e] == std::numeric_limits<float>::infinity()) : !(dist[e] == -std::numeric_limits<float>::infinity());
          continue;
        }
        if (i < 0 || i >= u.N || !got.insert(i).second) {
          ++invalid;
          continue;
        }
        if (j > 0 && (l2 ? dist[e] < dist[e - 1] : dist[e] > dist[e - 1])) ++unsorted;
        const double s = score(x, q, y, i, u.m);
        double scale = 0;
        for (long long d = 0; d < u.D; ++d) scale += x.at(q, d) * x.at(q, d) + y.at(i, d) * y.at(i, d);
        const double tol = 1e-2 * (1 + scale);
        off_score += std::abs(s - dist[e]) > tol;
        if (np == u.nlist && exact_i[e] >= 0) not_exact += std::abs(s - score(x, q, y, exact_i[e], u.m)) > tol;
      }
      for (const auto i : got) hits += truth.count(i);
    }
    CHECK(invalid == 0);
    CHECK(unsorted == 0);
    CHECK(off_score == 0);
    if (np == u.nlist) CHECK(not_exact == 0);  // every list scanned: the exact search, up to ties
    const double recall = wanted ? static_cast<double>(hits) / static_cast<double>(wanted) : 1.0;
    MESSAGE(describe(u) << " nprobe " << np << ": recall@" << k << " " << recall);
    if (np >= 4) CHECK(recall >= u.recall_floor);
    CHECK(recall >= last_recall - 0.02);
    last_recall = recall;
  }
}

}  // namespace

TEST_CASE("ivf build and search (clustered data, both metrics, f16 and bf16, ragged N and Q, empty lists, nprobe = nlist is exact)") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  std::mt19937_64 g(rng.seed());
  const std::vector<run> runs = {
      {301, 20011, 128, 100, 10, input_type::bf16, metric::l2, {1, 4, 16, 100}},
      {77, 5003, 64, 37, 32, input_type::f16, metric::inner_product, {1, 3, 8, 37}, 0, 0.3},
      {65, 3001, 104, 20, 256, input_type::bf16, metric::l2, {2, 20}},
      {40, 3000, 96, 64, 10, input_type::f16, metric::l2, {4, 64}, 50},  // 50 distinct vectors: empty lists
      {130, 9000, 512, 30, 1, input_type::f16, metric::l2, {1, 30}},
      {1, 500, 8, 1, 5, input_type::bf16, metric::inner_product, {1}},
  };
  for (const run& u : runs) check_run(u, g);
}

TEST_CASE("ivf refuses bad arguments with the argument named") {
  auto msg = [](auto f) {
    try {
      f();
    } catch (const jit::argument_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  alignas(256) static std::uint16_t buf[256];
  alignas(256) static unsigned char ws[1024];
  static std::int32_t out[4];
  static float dist[4];
  CHECK(msg([&] { (void)knn::ivf_build(buf, 100, 100, 4, input_type::bf16); }).find("D = 100") != std::string::npos);
  CHECK(msg([&] { (void)knn::ivf_build(buf, 100, 64, 0, input_type::bf16); }).find("nlist = 0") != std::string::npos);
  CHECK(msg([&] { (void)knn::ivf_build(buf, 100, 64, 101, input_type::bf16); }).find("nlist = 101") != std::string::npos);
  CHECK(msg([&] { (void)knn::ivf_build(buf, (1LL << 24) + 1, 64, 4, input_type::bf16); }).find("2^24") != std::string::npos);
  CHECK(msg([&] { (void)knn::ivf_build(buf, 100, 64, 4, input_type::bf16, metric::l2, 0, 0); }).find("iterations = 0") != std::string::npos);
  CHECK(msg([&] { (void)knn::ivf_build(buf + 1, 100, 64, 4, input_type::bf16); }).find("database must be") != std::string::npos);
  knn::ivf_index empty;
  CHECK(msg([&] { knn::ivf_search(empty, buf, dist, out, ws, 1, 1, 1); }).find("index is empty") != std::string::npos);
  knn::ivf_index fake;  // the host fields only: the checks come before any device work
  fake.N = 1000, fake.D = 64, fake.nlist = 300;
  fake.host_offsets.assign(301, 0);
  CHECK(msg([&] { knn::ivf_search(fake, buf, dist, out, ws, 1, 10, 0); }).find("nprobe = 0") != std::string::npos);
  CHECK(msg([&] { knn::ivf_search(fake, buf, dist, out, ws, 1, 10, 257); }).find("nprobe = 257") != std::string::npos);
  CHECK(msg([&] { knn::ivf_search(fake, buf, dist, out, ws, 1, 257, 1); }).find("k = 257") != std::string::npos);
  CHECK(msg([&] { knn::ivf_search(fake, buf, dist, out, ws, 0, 10, 1); }).find("Q = 0") != std::string::npos);
  CHECK(msg([&] { knn::ivf_search(fake, buf + 1, dist, out, ws, 1, 10, 1); }).find("queries must be") != std::string::npos);
  CHECK(msg([&] { knn::ivf_search(fake, buf, dist, out, ws + 16, 1, 10, 1); }).find("workspace must be") != std::string::npos);
  CHECK(msg([&] { knn::ivf_search(fake, buf, dist, out, ws, 60000, 10, 1, nullptr, knn::ivf_scan_mode::by_list); }).find("Q * nlist <= 2^24") !=
        std::string::npos);
  CHECK(msg([&] { (void)knn::ivf_search_workspace_bytes(fake, 60000, 10, 1, knn::ivf_scan_mode::by_list); }).find("Q * nlist <= 2^24") != std::string::npos);
}
