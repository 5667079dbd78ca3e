// cake::knn::search_config_for, the exact search's schedule rule (docs/knn.md, "The schedule"): the
// split keeps the grid within one wave (search_ctas), the form prefers 64 rows per warpgroup, and the
// picks on the benchmark shapes are the ones the H200 sweep chose (bench/results/h200/knn_sweep.json).
#include <doctest/doctest.h>

#include "kernels/knn/knn.hpp"

using namespace cake;

namespace {
long long grid_of(const kernels::knn_search_config& c, long long Q) { return (Q + c.wgs * c.rows - 1) / (c.wgs * c.rows) * c.splits; }
}  // namespace

TEST_CASE("knn schedule: the benchmark shapes get the swept picks") {
  const auto k10 = knn::search_config_for(4096, 1 << 20, 128, 10, knn::metric::l2);
  CHECK(k10.wgs == 2);
  CHECK(k10.rows == 64);
  CHECK(k10.bn == 128);
  CHECK(k10.splits == 4);  // 32 query tiles x 4 = 128 CTAs
  const auto k100 = knn::search_config_for(4096, 1 << 20, 128, 100, knn::metric::l2);
  CHECK(k100.wgs == 2);
  CHECK(k100.rows == 64);
  CHECK(k100.bn == 128);  // with 3 stages (bn 64 with 7 measured 11% slower)
  CHECK(k100.stages == 3);
  CHECK(k100.splits == 4);
  const auto held = knn::search_config_for(1024, 262144, 64, 32, knn::metric::l2);
  CHECK(held.splits == 16);  // 8 query tiles x 16 = 128 CTAs
  const auto big = knn::search_config_for(16384, 1 << 20, 128, 10, knn::metric::l2);
  CHECK(big.splits == 1);  // 128 query tiles fill the wave alone
}

TEST_CASE("knn schedule: the split fills one wave and no more") {
  struct shape {
    long long Q, N, D;
    int k;
  };
  for (const shape s : {shape{1, 1 << 20, 128, 10}, shape{100, 50000, 64, 1}, shape{777, 1 << 18, 96, 33}, shape{4096, 1 << 20, 512, 256},
                        shape{20000, 1 << 20, 128, 10}, shape{64, 1000, 128, 10}}) {
    CAPTURE(s.Q);
    CAPTURE(s.N);
    CAPTURE(s.k);
    const auto c = knn::search_config_for(s.Q, s.N, s.D, s.k, knn::metric::inner_product);
    const long long db_tiles = (s.N + c.bn - 1) / c.bn;
    CHECK(c.splits >= 1);
    CHECK(c.splits <= 64);
    CHECK((c.splits & (c.splits - 1)) == 0);
    if (c.splits > 1) CHECK(grid_of(c, s.Q) <= knn::search_ctas);  // never past one wave by splitting
    CHECK(8LL * c.splits <= std::max<long long>(db_tiles, 8));       // at least 8 database tiles per split
    // doubling would leave the wave, pass 64 splits or give a split fewer than 8 tiles
    kernels::knn_search_config twice = c;
    twice.splits = 2 * c.splits;
    CHECK((grid_of(twice, s.Q) > knn::search_ctas || twice.splits > 64 || 8LL * twice.splits > db_tiles));
    CHECK(c.rows == 64);
    CHECK(knn::detail::search_fits(c));
  }
}
