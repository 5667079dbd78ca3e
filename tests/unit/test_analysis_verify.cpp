// cake::verify and cake::analyze in constant evaluation: the reference kernels pass the compile-time
// gate, and a failing schedule's first error is the same at compile time and at run time.
// (tests/verify/gate checks the compiler's error text for failing schedules.)
#include <doctest/doctest.h>

#include <cake/cake.hpp>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"

using namespace cake;

static_assert(verify(kernels::gemm_bf16_sm80()));
static_assert(verify(kernels::gemm_bf16_sm90()));
static_assert(verify(kernels::gemm_bf16_sm100()));

namespace {

// Two roles each waiting for the other first.
constexpr program crossed_waits() {
  auto k = kernel("crossed").target(sm_90a);
  auto K = k.dim("K");
  auto ping = k.mbarrier("ping");
  auto pong = k.mbarrier("pong");
  k.role("left", warps(1), [&](role& r) {
    r.loop(tiles(K, 64), [&](auto) {
      r.wait(pong);
      r.arrive(ping);
    });
  });
  k.role("right", warps(1), [&](role& r) {
    r.loop(tiles(K, 64), [&](auto) {
      r.wait(ping);
      r.arrive(pong);
    });
  });
  return k.build();
}

constexpr analysis::rule_id first_error_rule(const program& p) {
  analysis::report r;
  analysis::analyze_into(p, r);
  const auto* d = r.first_error();
  return d ? d->rule : analysis::rule_id::count_;
}
constexpr int first_error_op(const program& p) {
  analysis::report r;
  analysis::analyze_into(p, r);
  const auto* d = r.first_error();
  return d ? d->op : -2;
}

}  // namespace

// The analyzer runs in constant evaluation and finds the deadlock at the first blocked wait.
static_assert(first_error_rule(crossed_waits()) == analysis::rule_id::sync_deadlock);
static_assert(first_error_op(crossed_waits()) == 1);

TEST_CASE("analysis verify: run-time verify agrees with the compile-time gate") {
  CHECK(verify(kernels::gemm_bf16_sm90()));
  CHECK_FALSE(verify(crossed_waits()));  // at run time a failure is a plain false
  const auto r = analyze(crossed_waits());
  REQUIRE(r.first_error() != nullptr);
  CHECK(r.first_error()->rule == analysis::rule_id::sync_deadlock);
  CHECK(r.first_error()->op == 1);
}

TEST_CASE("analysis verify: warnings and coverage notes do not fail verify") {
  const auto r = analyze(kernels::gemm_bf16_sm90());
  CHECK(r.errors == 0);
  CHECK(r.warnings + static_cast<int>(r.coverage.size()) > 0);
  CHECK(verify(kernels::gemm_bf16_sm90()));
}
