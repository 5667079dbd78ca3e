// cake::knn::search on the GPU against a full sort on the host (f64 scores), on fresh random inputs,
// f16 and bf16, both metrics, k = 1, 10, 32, 100, 256, ragged Q and N (not multiples of the tiles), D from
// 8 to 512 (104: a 64-column part half outside), k > N, and schedules with several database splits. The
// outputs are poisoned (0xFFFFFFFF) first and followed by a guard.
//   - every row is sorted best first; its distances are within a tolerance of the reference's j-th best
//     and of the exact (f64) score of the index returned; indices are distinct and in 0 .. N-1; where
//     the reference's j-th best is separated from its neighbours (and from the first score left out) by
//     more than the tolerance, the index is the reference's;
//   - entries past N (k > N) are empty: index -1, distance +inf (l2) / -inf (inner product);
//   - ties go to the lowest index: every 5th database row is an exact copy of the row before it, so the
//     pair scores exactly the same (same inputs, same arithmetic): a copy is never returned without its
//     original, and never before it;
//   - two runs give identical outputs; nothing past Q * k is written.
//
// CAKE_SEED=<n> reproduces a run (the seed is printed first).
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <cake/harness/parallel.hpp>
#include <cake/harness/random.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/knn/knn.hpp"
#include "device_gate.hpp"
#include "half_inputs.hpp"

using namespace cake;
using knn::input_type;
using knn::metric;

namespace {

bool usable_hopper() { return cake_gpu_test::require_device(9, 0, true, "cake::knn (sm_90a)"); }

using matrix = cake_gpu_test::half_data;
matrix random_matrix(std::size_t n, input_type t, harness::random_source& rng) { return cake_gpu_test::random_half(n, t == input_type::bf16, rng); }

struct run {
  long long Q, N, D;
  int k;
  input_type t;
  metric m;
  int splits = 0;  // 0: the entry point's schedule; else search_with that many splits
};

std::string describe(const run& u) {
  return "Q " + std::to_string(u.Q) + " N " + std::to_string(u.N) + " D " + std::to_string(u.D) + " k " + std::to_string(u.k) + " " + to_string(u.t) + " " +
         kernels::to_string(u.m) + (u.splits ? " splits " + std::to_string(u.splits) : std::string());
}

void check_run(const run& u, harness::random_source& rng) {
  const auto [Q, N, D, k, t, m, splits] = u;
  INFO(describe(u));
  auto x = random_matrix(static_cast<std::size_t>(Q * D), t, rng);
  auto y = random_matrix(static_cast<std::size_t>(N * D), t, rng);
  for (long long n = 5; n < N; n += 5)  // exact copies: ties
    for (long long d = 0; d < D; ++d) {
      const auto to = static_cast<std::size_t>(n * D + d), from = to - static_cast<std::size_t>(D);
      y.bits[to] = y.bits[from], y.val[to] = y.val[from];
    }
  kernels::knn_search_config cfg = knn::search_config_for(Q, N, D, k, m);
  if (splits) cfg.splits = splits;
  INFO("schedule: wgs " << cfg.wgs << " rows " << cfg.rows << " bn " << cfg.bn << " stages " << cfg.stages << " splits " << cfg.splits);
  const long long ws = knn::search_workspace_bytes_with(cfg, Q, N, D, k, m);
  auto dx = jit::to_device(x.bits), dy = jit::to_device(y.bits);
  const long long guard = 64;
  jit::device_buffer dd(static_cast<std::size_t>(4 * (Q * k + guard))), di(static_cast<std::size_t>(4 * (Q * k + guard))), dw(static_cast<std::size_t>(ws));
  std::vector<float> first_d;
  std::vector<std::int32_t> first_i;
  // f64 norms of the database rows, for the reference and the tolerance.
  std::vector<double> yn(static_cast<std::size_t>(N));
  double ymax = 0;
  for (long long n = 0; n < N; ++n) {
    double s = 0;
    for (long long d = 0; d < D; ++d) s += static_cast<double>(y.val[static_cast<std::size_t>(n * D + d)]) * y.val[static_cast<std::size_t>(n * D + d)];
    yn[static_cast<std::size_t>(n)] = s;
    ymax = std::max(ymax, s);
  }
  for (int rep = 0; rep < 2; ++rep) {
    dd.fill_u32(0xffffffffu);
    di.fill_u32(0xffffffffu);
    dw.fill_u32(0xffffffffu);
    knn::search_with(cfg, dx.address(), dy.address(), static_cast<float*>(dd.address()), static_cast<std::int32_t*>(di.address()), dw.address(), Q, N, D, k, t, m);
    auto dist = dd.download<float>();
    auto idx = di.download<std::int32_t>();
    if (rep == 1) {
      CHECK_MESSAGE(std::memcmp(dist.data(), first_d.data(), 4 * first_d.size()) == 0, "two runs gave different distances");
      CHECK_MESSAGE(idx == first_i, "two runs gave different indices");
      break;
    }
    first_d = dist, first_i = idx;
    long long guard_written = 0;
    for (long long g = 0; g < guard; ++g) guard_written += idx[static_cast<std::size_t>(Q * k + g)] != -1 || std::bit_cast<std::uint32_t>(dist[static_cast<std::size_t>(Q * k + g)]) != 0xffffffffu;
    CHECK(guard_written == 0);
    const bool l2 = m == metric::l2;
    std::vector<long long> unsorted(static_cast<std::size_t>(Q)), far(unsorted.size()), wrong_index(unsorted.size()), bad_empty(unsorted.size()),
        twin(unsorted.size()), invalid(unsorted.size());
    harness::parallel_for(Q, [&](long long q0, long long q1) {
      std::vector<double> score(static_cast<std::size_t>(N));
      std::vector<std::int32_t> order(static_cast<std::size_t>(N));
      for (long long q = q0; q < q1; ++q) {
        const float* xp = &x.val[static_cast<std::size_t>(q * D)];
        double xn = 0;
        for (long long d = 0; d < D; ++d) xn += static_cast<double>(xp[d]) * xp[d];
        for (long long n = 0; n < N; ++n) {
          const float* yp = &y.val[static_cast<std::size_t>(n * D)];
          double dot = 0;
          for (long long d = 0; d < D; ++d) dot += static_cast<double>(xp[d]) * yp[d];
          score[static_cast<std::size_t>(n)] = l2 ? xn + yn[static_cast<std::size_t>(n)] - 2 * dot : dot;
        }
        // The reference: a full sort by (score, index), best first.
        std::iota(order.begin(), order.end(), 0);
        auto better = [&](std::int32_t a, std::int32_t b) {
          const double sa = score[static_cast<std::size_t>(a)], sb = score[static_cast<std::size_t>(b)];
          return l2 ? (sa < sb || (sa == sb && a < b)) : (sa > sb || (sa == sb && a < b));
        };
        std::sort(order.begin(), order.end(), better);
        // Tolerance: the dot products are accumulated in f32 on the tensor cores over D terms.
        const double tol = 2e-5 * std::sqrt(static_cast<double>(D)) * (l2 ? xn + ymax : std::sqrt(xn * ymax)) + 1e-6;
        const float* drow = &dist[static_cast<std::size_t>(q * k)];
        const std::int32_t* irow = &idx[static_cast<std::size_t>(q * k)];
        const long long valid = std::min<long long>(k, N);
        std::vector<char> seen(static_cast<std::size_t>(N), 0);
        for (long long j = 0; j < k; ++j) {
          if (j >= valid) {  // k > N: empty entries
            const bool empty = irow[j] == -1 && std::isinf(drow[j]) && (l2 ? drow[j] > 0 : drow[j] < 0);
            bad_empty[static_cast<std::size_t>(q)] += !empty;
            continue;
          }
          const std::int32_t got = irow[j];
          if (got < 0 || got >= N || seen[static_cast<std::size_t>(got)]) {
            ++invalid[static_cast<std::size_t>(q)];
            continue;
          }
          seen[static_cast<std::size_t>(got)] = 1;
          if (j > 0 && (l2 ? drow[j] < drow[j - 1] : drow[j] > drow[j - 1])) ++unsorted[static_cast<std::size_t>(q)];
          const double ref_j = score[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])];
          if (std::abs(drow[j] - ref_j) > tol || std::abs(drow[j] - score[static_cast<std::size_t>(got)]) > tol) ++far[static_cast<std::size_t>(q)];
          // Separated from its neighbours in the reference (and from the first score left out): the index is exact.
          const double prev = j > 0 ? score[static_cast<std::size_t>(order[static_cast<std::size_t>(j - 1)])] : (l2 ? -1e300 : 1e300);
          const double next = j + 1 < N ? score[static_cast<std::size_t>(order[static_cast<std::size_t>(j + 1)])] : (l2 ? 1e300 : -1e300);
          if (std::abs(ref_j - prev) > 2 * tol && std::abs(next - ref_j) > 2 * tol && got != order[static_cast<std::size_t>(j)]) ++wrong_index[static_cast<std::size_t>(q)];
          // A copy (n % 5 == 0, n > 0) only with its original before it.
          if (got > 0 && got % 5 == 0) {
            bool original_before = false;
            for (long long jj = 0; jj < j; ++jj) original_before = original_before || irow[jj] == got - 1;
            twin[static_cast<std::size_t>(q)] += !original_before;
          }
        }
      }
    });
    auto total = [](const std::vector<long long>& v) { return std::accumulate(v.begin(), v.end(), 0LL); };
    CHECK_MESSAGE(total(invalid) == 0, total(invalid) << " indices out of range or repeated in a row");
    CHECK_MESSAGE(total(unsorted) == 0, total(unsorted) << " entries out of order (rows are best first)");
    CHECK_MESSAGE(total(far) == 0, total(far) << " distances off the reference by more than the tolerance");
    CHECK_MESSAGE(total(wrong_index) == 0, total(wrong_index) << " indices differ from the reference where its scores are separated");
    CHECK_MESSAGE(total(bad_empty) == 0, total(bad_empty) << " entries past N are not empty (-1, +-inf)");
    CHECK_MESSAGE(total(twin) == 0, total(twin) << " copies returned without their original before them (ties go to the lowest index)");
  }
}

}  // namespace

TEST_CASE("knn search returns the exact top-k (both metrics, f16 and bf16, k 1..256, ragged Q and N, ties to the lowest index)") {
  if (!usable_hopper()) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const std::vector<run> runs = {
      {1, 1, 64, 1, input_type::bf16, metric::l2},
      {7, 200, 8, 256, input_type::f16, metric::l2},  // k > N: empty entries
      {100, 1000, 128, 10, input_type::bf16, metric::l2},
      {333, 5003, 104, 100, input_type::f16, metric::l2},
      {130, 20001, 128, 256, input_type::bf16, metric::l2},
      {257, 3001, 64, 32, input_type::bf16, metric::inner_product},
      {64, 300, 512, 10, input_type::f16, metric::l2},
      {500, 40000, 128, 10, input_type::f16, metric::l2},
      {300, 7777, 128, 1, input_type::bf16, metric::inner_product},
      {129, 9000, 256, 100, input_type::f16, metric::inner_product},
      {65, 2000, 512, 256, input_type::bf16, metric::inner_product},
      // Forced splits (a split with no database tile at all, uneven splits): the merge of the partial lists.
      {200, 3000, 128, 10, input_type::bf16, metric::l2, 32},
      {70, 5000, 64, 100, input_type::f16, metric::inner_product, 4},
      {90, 1500, 128, 256, input_type::bf16, metric::l2, 3},
  };
  for (const run& u : runs) check_run(u, rng);
}

TEST_CASE("knn search refuses bad arguments with the argument named") {
  // No device is touched before the arguments are checked.
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
  CHECK(msg([&] { knn::search(buf, buf, dist, out, ws, 1, 1, 100, 1, input_type::bf16); }).find("D = 100") != std::string::npos);
  CHECK(msg([&] { knn::search(buf, buf, dist, out, ws, 1, 0, 64, 1, input_type::bf16); }).find("N = 0") != std::string::npos);
  CHECK(msg([&] { knn::search(buf, buf, dist, out, ws, 0, 1, 64, 1, input_type::bf16); }).find("Q = 0") != std::string::npos);
  CHECK(msg([&] { knn::search(buf, buf, dist, out, ws, 1, 1, 64, 0, input_type::bf16); }).find("k = 0") != std::string::npos);
  CHECK(msg([&] { knn::search(buf, buf, dist, out, ws, 1, 1, 64, 257, input_type::bf16); }).find("k = 257") != std::string::npos);
  CHECK(msg([&] { knn::search(buf + 1, buf, dist, out, ws, 1, 1, 64, 1, input_type::bf16); }).find("queries must be") != std::string::npos);
  CHECK(msg([&] { knn::search(buf, buf, dist, out, ws + 16, 1, 1, 64, 1, input_type::bf16); }).find("workspace must be") != std::string::npos);
  CHECK(msg([&] { knn::search(buf, buf, nullptr, out, ws, 1, 1, 64, 1, input_type::bf16); }).find("distances must be") != std::string::npos);
  CHECK(msg([&] { (void)knn::search_workspace_bytes(1, 1, 64, 300); }).find("k = 300") != std::string::npos);
}
