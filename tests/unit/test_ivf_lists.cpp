// The host part of the IVF-Flat build (kernels/knn/ivf.hpp): the inverted lists of an assignment (a
// stable counting sort) and the seeded choice of the initial centroid rows. No device needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "kernels/knn/ivf.hpp"

TEST_CASE("ivf lists: offsets are the prefix sum of the sizes, every row once, by list and ascending within one") {
  std::mt19937_64 g(11);
  for (const long long nlist : {1LL, 7LL, 64LL, 1000LL}) {
    for (const long long N : {1LL, 100LL, 5003LL}) {
      INFO("nlist " << nlist << " N " << N);
      std::vector<std::int32_t> a(static_cast<std::size_t>(N));
      // only the even lists are used when nlist > 2: odd lists are empty
      for (auto& v : a) v = static_cast<std::int32_t>(nlist > 2 ? (g() % static_cast<std::uint64_t>((nlist + 1) / 2)) * 2 : g() % static_cast<std::uint64_t>(nlist));
      const auto r = cake::knn::ivf_lists_of(a, nlist);
      REQUIRE(r.offsets.size() == static_cast<std::size_t>(nlist + 1));
      CHECK(r.offsets.front() == 0);
      CHECK(r.offsets.back() == N);
      long long empty = 0;
      for (long long l = 0; l < nlist; ++l) {
        const auto b = r.offsets[static_cast<std::size_t>(l)], e = r.offsets[static_cast<std::size_t>(l + 1)];
        CHECK(b <= e);
        empty += b == e;
        CHECK(e - b == std::count(a.begin(), a.end(), static_cast<std::int32_t>(l)));
        for (auto p = b; p < e; ++p) {
          CHECK(a[static_cast<std::size_t>(r.order[static_cast<std::size_t>(p)])] == l);        // in its list
          if (p > b) CHECK(r.order[static_cast<std::size_t>(p)] > r.order[static_cast<std::size_t>(p - 1)]);  // stable
        }
      }
      if (nlist > 2) CHECK(empty >= nlist / 2);
      std::vector<std::int32_t> sorted = r.order;
      std::sort(sorted.begin(), sorted.end());
      for (long long i = 0; i < N; ++i) CHECK(sorted[static_cast<std::size_t>(i)] == i);  // every row once
    }
  }
}

TEST_CASE("ivf lists: an assignment outside 0 .. nlist - 1 is an error naming the list") {
  CHECK_THROWS_WITH_AS(cake::knn::ivf_lists_of({0, 3, 1}, 3), doctest::Contains("list 3 outside 0 .. 2"), cake::jit::error);
  CHECK_THROWS_AS(cake::knn::ivf_lists_of({-1}, 3), cake::jit::error);
}

TEST_CASE("ivf initial rows: nlist distinct rows of 0 .. N-1, the same for the same seed") {
  for (const long long N : {1LL, 10LL, 100000LL})
    for (const long long nlist : {1LL, N / 2 + 1, N}) {
      INFO("N " << N << " nlist " << nlist);
      const auto a = cake::knn::ivf_initial_rows(N, nlist, 42), b = cake::knn::ivf_initial_rows(N, nlist, 42);
      CHECK(a == b);
      REQUIRE(a.size() == static_cast<std::size_t>(nlist));
      const std::set<std::int32_t> s(a.begin(), a.end());
      CHECK(s.size() == a.size());
      CHECK(*s.begin() >= 0);
      CHECK(*s.rbegin() < N);
    }
  // a different seed picks differently (100 of 100000)
  CHECK(cake::knn::ivf_initial_rows(100000, 100, 1) != cake::knn::ivf_initial_rows(100000, 100, 2));
  // the k-means initialization draws the same rows (one definition); more rows than there are is refused
  CHECK(cake::knn::ivf_initial_rows(1000, 10, 5) == cake::kmeans::initial_rows(1000, 10, 5));
  // pinned: the draw is mt19937_64 with modulo draws, the same on every platform (a change would move every
  // seeded initialization)
  CHECK(cake::kmeans::initial_rows(10, 3, 0) == std::vector<std::int32_t>{4, 6, 3});
  CHECK_THROWS_WITH_AS(cake::kmeans::initial_rows(4, 5, 0), doctest::Contains("need 1 <= K <= N"), cake::jit::argument_error);
}
