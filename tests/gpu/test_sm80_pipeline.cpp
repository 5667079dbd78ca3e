// An mbarrier pipeline on sm_80 filled by cp.async (issue 9; tests/lowering/sm80_pipeline.hpp) run on the GPU:
// built for sm_80 and run as compute_80 PTX on any device from sm_80 on (the test machine's H200 included),
// on fresh random inputs, outputs poisoned first, ragged shapes (M not a multiple of 32, N not of 64), and
// shapes long enough along N that every stage's barriers go through many phases. Checked against a host
// reference: Y = 2 X + 1 element by element (exact in f32 for bf16 inputs), S = the row sums of X (f32
// additions in some order: compared with a tolerance).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <cake/cake.hpp>
#include <cake/harness/random.hpp>
#include <cake/runtime/kernel.hpp>

#include "device_gate.hpp"
#include "tests/lowering/sm80_pipeline.hpp"

using namespace cake;

namespace {

// One launch per shape of the schedule built with these options, checked against the host reference.
void check_pipeline(bool deferred, harness::random_source& rng) {
  INFO("deferred releases: " << deferred);
  const program p = cake_tests::sm80_cp_async_pipeline(target_id::sm_80, 3, deferred);
  REQUIRE(p.errors.empty());
  auto k = runtime_kernel::build(p);
  CHECK(k.artifacts().target == jit::arch::sm_80);
  // (M, N): ragged in both dims; one column tile; many column tiles (phases wrap many times per CTA); more
  // row blocks than CTAs (the persistent walk carries the stage and phase from one point to the next)
  for (auto [m, n] : {std::pair<long long, long long>{1000, 200}, {37, 64}, {5, 3000}, {4099, 328}, {64, 8}}) {
    INFO("M " << m << " N " << n);
    const auto x = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(m * n), rng);
    std::vector<std::uint16_t> xb(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) xb[i] = x[i].bits;
    jit::device_buffer dx(xb.size() * 2 + 4), dy(static_cast<std::size_t>(m * n) * 4), ds(static_cast<std::size_t>(m) * 4);
    dx.upload(std::span<const std::uint16_t>(xb));
    dy.fill_u32(0xffffffffu);  // NaN: an element the kernel does not write fails the check
    ds.fill_u32(0xffffffffu);
    k.launch({tensor_view(dx.address(), {m, n}), tensor_view(dy.address(), {m, n}), tensor_view(ds.address(), {m})});
    const auto y = dy.download<float>();
    const auto s = ds.download<float>();
    long long wrong_y = 0, wrong_s = 0;
    double worst = 0;
    for (long long r = 0; r < m; ++r) {
      double ref = 0, mag = 0;
      for (long long c = 0; c < n; ++c) {
        const float v = harness::bf16_bits_to_float(xb[static_cast<std::size_t>(r * n + c)]);
        ref += v;
        mag += std::fabs(v);
        wrong_y += y[static_cast<std::size_t>(r * n + c)] != 2.0f * v + 1.0f;
      }
      const double got = s[static_cast<std::size_t>(r)], err = std::fabs(got - ref);
      // f32 additions of n terms in any order: |error| <= (n - 1) u sum|x| (u = 2^-24), to first order
      const double tol = static_cast<double>(n + 1) * 0x1p-24 * mag + 1e-6;
      worst = std::max(worst, err / (mag + 1e-30));
      wrong_s += !(err <= tol);  // (NaN: wrong)
    }
    INFO("worst row-sum error relative to the row's magnitude " << worst);
    CHECK(wrong_y == 0);
    CHECK(wrong_s == 0);
  }
}

}  // namespace

TEST_CASE("sm_80 cp.async pipeline on mbarriers (compute_80 PTX): Y = 2 X + 1 and row sums match the reference") {
  // compute_80 PTX runs on any device from sm_80 on
  if (!cake_gpu_test::require_device(8, 0, false, "the sm_80 mbarrier pipeline")) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  check_pipeline(false, rng);
  check_pipeline(true, rng);  // releases one trip later (r.release(p, s).later(1)), then r.release_pending(p)
}
