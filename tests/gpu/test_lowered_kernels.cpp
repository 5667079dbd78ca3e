// Small Cake schedules lowered, JIT-compiled and run on the GPU, each checking one mechanism end to end:
// a TMA copy round trip with ragged tail boxes through a multi-phase mbarrier pipeline, a cluster
// multicast load, one wgmma tile with an explicit barrier protocol, the sm_80 mma.sync GEMM run as
// compute_80 PTX, and two GEMM shapes (also the sanitizer's workload: compute-sanitizer runs this file).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <cake/cake.hpp>
#include <cake/gemm.hpp>
#include <cake/harness/gemm_check.hpp>
#include <cake/runtime/kernel.hpp>

#include "kernels/gemm/sm80_bf16.hpp"
#include "device_gate.hpp"

using namespace cake;

namespace {

bool hopper() { return cake_gpu_test::require_device(9, 0, true, "the sm_90a lowered kernels"); }

// Y = X through shared memory: a producer warp loads 64x64 boxes with TMA into a 2-stage pipeline, a
// consumer warp stores each box back with TMA. Many tiles per CTA, so every barrier cycles through
// several phases.
constexpr program tma_copy(bool multicast) {
  auto k = kernel(multicast ? "copy_multicast" : "copy").target(sm_90a).persistent(raster::along_m(4));
  if (multicast) k.cluster(2, 1);
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<bf16>("X", dims(multicast ? k.dim("MX") : M, N));
  auto Y = k.output<bf16>("Y", dims(M, N));
  auto mn = k.parallel(tiles(M, 64), tiles(N, 64));  // tiles of Y
  auto s = k.smem<bf16>("s", {64, 64}, swizzle::b128);
  auto p = k.pipeline("p", stages(2)).carries(s);
  k.role("load", warps(1), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      auto slot = r.acquire(p);
      // With multicast, both CTAs of a cluster (m = 2i, 2i+1) receive X's row block i.
      auto l = r.tma_load(slot[s], X.tile(multicast ? m / 2 : m, n));
      if (multicast) l.multicast();
    });
  });
  k.role("store", warps(1), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      auto slot = r.wait(p);
      r.tma_store(Y.tile(m, n), slot[s]);
      r.bulk_commit();
      r.bulk_wait_read(0);  // the store has read the stage
      r.release(p, slot);
    });
  });
  return k.build();
}

// One 64 x N wgmma tile: TMA loads of A and B complete on an explicit mbarrier, one warpgroup waits,
// multiplies and stores its accumulator directly.
constexpr program one_wgmma_tile() {
  auto k = kernel("one_wgmma").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  auto mn = k.parallel(tiles(M, 64), tiles(N, 128));  // K fits one 64-wide block
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto full = k.mbarrier("full", arrivals(1));
  k.role("mma", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(mn, [&](auto m, auto n) {
      r.arrive_expect_tx(full, 64 * 64 * 2 + 128 * 64 * 2);
      r.tma_load(sA, A.tile(m, 0), full);
      r.tma_load(sB, B.tile(n, 0), full);
      r.wait(full);
      r.wgmma_fence();
      r.wgmma(acc, sA, sB).overwrite();
      r.wgmma_commit();
      r.wgmma_wait(0);
      r.store(D.tile(m, n), r.convert<bf16>(acc));
    });
  });
  return k.build();
}

std::vector<std::uint16_t> random_bf16(std::size_t n, harness::random_source& rng) {
  std::vector<std::uint16_t> v;
  v.reserve(n);
  for (const auto& x : harness::random_vector<harness::host_bf16>(n, rng)) v.push_back(x.bits);
  return v;
}

}  // namespace

TEST_CASE("TMA copy round trip with ragged tail boxes through a multi-phase pipeline") {
  if (!hopper()) return;
  constexpr auto p = tma_copy(false);
  REQUIRE(p.errors.empty());
  auto k = runtime_kernel::build(p);
  auto rng = harness::random_source::fresh();
  for (auto [m, n] : {std::pair<long long, long long>{300, 200}, {64, 64}, {1000, 72}, {7, 8}}) {
    const auto x = random_bf16(static_cast<std::size_t>(m * n), rng);
    jit::device_buffer dx(x.size() * 2), dy((x.size() * 2 + 3) / 4 * 4);
    dx.upload(std::span<const std::uint16_t>(x));
    dy.fill_u32(0xffffffffu);
    k.launch({tensor_view(dx.address(), {m, n}), tensor_view(dy.address(), {m, n})});
    std::vector<std::uint16_t> y(x.size());
    dy.download(std::span<std::uint16_t>(y));
    long long wrong = 0;
    for (std::size_t i = 0; i < x.size(); ++i) wrong += x[i] != y[i];
    INFO(m << "x" << n);
    CHECK(wrong == 0);
  }
}

TEST_CASE("cluster multicast: both CTAs of a cluster receive the same TMA load") {
  if (!hopper()) return;
  constexpr auto p = tma_copy(true);
  REQUIRE(p.errors.empty());
  auto k = runtime_kernel::build(p);
  auto rng = harness::random_source::fresh();
  const long long m = 192, n = 200;  // 3 row blocks of X; Y has 6 (the last cluster pair reads a ragged block)
  const auto x = random_bf16(static_cast<std::size_t>(m * n), rng);
  jit::device_buffer dx(x.size() * 2), dy(x.size() * 4);
  dx.upload(std::span<const std::uint16_t>(x));
  dy.fill_u32(0xffffffffu);
  k.launch({tensor_view(dx.address(), {m, n}), tensor_view(dy.address(), {2 * m, n})});
  std::vector<std::uint16_t> y(x.size() * 2);
  dy.download(std::span<std::uint16_t>(y));
  long long wrong = 0;
  for (long long r = 0; r < 2 * m; ++r)
    for (long long c = 0; c < n; ++c) {
      const long long src = (r / 128) * 64 + r % 64;  // Y row block b holds X row block b / 2
      wrong += y[static_cast<std::size_t>(r * n + c)] != x[static_cast<std::size_t>(src * n + c)];
    }
  CHECK(wrong == 0);
}

TEST_CASE("one wgmma tile with an explicit mbarrier protocol matches the reference") {
  if (!hopper()) return;
  constexpr auto p = one_wgmma_tile();
  REQUIRE(p.errors.empty());
  auto k = runtime_kernel::build(p);
  harness::gemm_reference reference;
  auto rng = harness::random_source::fresh();
  for (harness::gemm_problem pr : {harness::gemm_problem{64, 128, 64}, harness::gemm_problem{200, 300, 64}, harness::gemm_problem{50, 70, 40}}) {
    harness::gemm_operands o(pr);
    const auto r = harness::check_gemm(o, rng, reference, [&](harness::gemm_operands& x) {
      const auto& q = x.p;
      k.launch({tensor_view(x.a.address(), {q.m, q.k}, {q.lda, 1}), tensor_view(x.b.address(), {q.n, q.k}, {q.ldb, 1}),
                tensor_view(x.d.address(), {q.m, q.n}, {q.ldd, 1})});
    });
    INFO(pr.describe() << ": rel_err " << r.cmp.rel_err);
    CHECK(r.ok(1e-2));
  }
}

TEST_CASE("the sm_80 mma.sync GEMM runs on Hopper as compute_80 PTX") {
  if (!hopper()) return;
  constexpr auto p = kernels::gemm_bf16_sm80();
  auto k = runtime_kernel::build(p);
  CHECK(k.artifacts().target == jit::arch::sm_80);
  harness::gemm_reference reference;
  auto rng = harness::random_source::fresh();
  for (harness::gemm_problem pr : {harness::gemm_problem{128, 128, 64}, harness::gemm_problem{300, 200, 1000}, harness::gemm_problem{1024, 512, 256}}) {
    harness::gemm_operands o(pr);
    const auto r = harness::check_gemm(o, rng, reference, [&](harness::gemm_operands& x) {
      const auto& q = x.p;
      k.launch({tensor_view(x.a.address(), {q.m, q.k}, {q.lda, 1}), tensor_view(x.b.address(), {q.n, q.k}, {q.ldb, 1}),
                tensor_view(x.d.address(), {q.m, q.n}, {q.ldd, 1})});
    });
    INFO(pr.describe() << ": rel_err " << r.cmp.rel_err << " nonfinite " << r.cmp.nonfinite);
    CHECK(r.ok(1e-2));
  }
}

TEST_CASE("cake::gemm on two shapes (the sanitizer workload)") {
  if (!hopper()) return;
  harness::gemm_reference reference;
  auto rng = harness::random_source::fresh();
  for (harness::gemm_problem pr : {harness::gemm_problem{256, 512, 256}, harness::gemm_problem{129, 257, 72}}) {
    harness::gemm_operands o(pr);
    const auto r = harness::check_gemm(o, rng, reference, [&](harness::gemm_operands& x) {
      const auto& q = x.p;
      gemm(x.a.address(), x.b.address(), x.d.address(), q.m, q.n, q.k, q.lda, q.ldb, q.ldd);
    });
    INFO(pr.describe() << ": rel_err " << r.cmp.rel_err);
    CHECK(r.ok(1e-2));
  }
}
