// The statistics and sizing of the timing harness (the GPU part is exercised in tests/gpu).
#include <doctest/doctest.h>

#include <cake/harness/timing.hpp>

using namespace cake::harness;

TEST_CASE("timing: quantiles interpolate between neighbours, the median of an even count is the middle mean") {
  const std::vector<double> s{1, 2, 3, 4};
  CHECK(quantile(s, 0.0) == 1);
  CHECK(quantile(s, 1.0) == 4);
  CHECK(quantile(s, 0.5) == doctest::Approx(2.5));
  CHECK(quantile(s, 0.1) == doctest::Approx(1.3));
  CHECK(quantile(s, 0.9) == doctest::Approx(3.7));
  CHECK(quantile({}, 0.5) == 0);
  CHECK(quantile({7}, 0.9) == 7);
}

TEST_CASE("timing: summarize sorts a copy and reports every statistic") {
  const std::vector<double> runs{5, 1, 4, 2, 3, 100};
  const auto s = summarize(runs);
  CHECK(s.min_ms == 1);
  CHECK(s.max_ms == 100);
  CHECK(s.median_ms == doctest::Approx(3.5));
  CHECK(s.mean_ms == doctest::Approx(115.0 / 6));
  CHECK(s.p10_ms == doctest::Approx(1.5));
  CHECK(s.p90_ms == doctest::Approx(52.5));
  CHECK(runs.front() == 5);  // the samples keep their run order
}

TEST_CASE("timing: the L2 flush is at least twice the L2 and at least 128 MiB") {
  constexpr std::size_t mib = 1 << 20;
  CHECK(l2_flush_bytes(62914560) == 128 * mib);   // H200: 60 MiB -> 120 MiB -> 128 MiB minimum
  CHECK(l2_flush_bytes(40 * mib) == 128 * mib);   // A100
  CHECK(l2_flush_bytes(126 * mib) == 252 * mib);  // a larger L2: twice its size
  CHECK(l2_flush_bytes(100 * mib + 1) == 201 * mib);  // rounded up to a MiB
}

TEST_CASE("timing: bad counts are rejected before any GPU work") {
  timing_options o;
  o.runs = 0;
  CHECK_THROWS_WITH_AS(time_gpu([] {}, o), doctest::Contains("runs must be >= 1"), cake::jit::error);
  if (!cake::jit::driver::available()) {
    CHECK_THROWS_WITH_AS(time_gpu([] {}), doctest::Contains("libcuda"), cake::jit::error);
  }
}
