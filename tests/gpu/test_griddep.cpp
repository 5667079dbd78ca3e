// Programmatic dependent launch on the GPU (issue 10, blind spot 7): a hand-written producer kernel lets its
// dependents start at once (griddepcontrol.launch_dependents), spins for a while, then writes X. A Cake kernel
// launched programmatically right after it in the same stream computes Y = X * W, W being weights declared
// independent of the previous grid (loaded before the wait, which is what the feature is for).
// With griddep_wait() before the load of X the result is exact. Without it the analyzer reports
// sync.griddep-missing (asserted) and the kernel reads X before the producer wrote it: the number of wrong
// elements is reported as a message, not asserted (the outcome of a race is not a property to test).
// The schedules are also lowered and assembled in the lowering tier (tests/lowering/test_griddep_kernels.cpp).
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <cake/cake.hpp>
#include <cake/harness/random.hpp>
#include <cake/jit.hpp>
#include <cake/runtime/kernel.hpp>

#include "device_gate.hpp"

namespace griddep_gpu {

using namespace cake;

// Y = X * W over 64 x 64 tiles, one warpgroup per CTA, launched programmatically. `wait`: griddep_wait()
// between the load of W (independent of the previous grid) and the load of X (written by it).
constexpr program pdl_scale(bool wait) {
  auto k = kernel(wait ? "pdl_scale" : "pdl_scale_nowait").target(sm_90a).programmatic_launch();
  auto [M, N] = k.dims("M", "N");
  auto W = k.input<f32>("W", dims(M, N));
  auto X = k.input<f32>("X", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  k.independent_of_previous_grid(W);
  k.independent_of_previous_grid(Y);  // the producer neither reads nor writes Y
  auto mn = k.parallel(tiles(M, 64), tiles(N, 64));
  k.role("scale", warpgroups(1), [&](role& r) {
    auto w = r.fragment<f32>("w", {64, 64});
    auto x = r.fragment<f32>("x", {64, 64});
    r.for_each(mn, [&](auto m, auto n) {
      r.load(w, W.tile(m, n));
      if (wait) r.griddep_wait();
      r.load(x, X.tile(m, n));
      r.set(x, x * w);
      r.store(Y.tile(m, n), x);
    });
  });
  return k.build();
}

// The previous kernel: triggers its dependents first, spins for `delay_ns` (so that a dependent that does
// not wait runs entirely before the writes), then copies S into X.
constexpr const char* slow_writer_source = R"(
extern "C" __global__ void slow_writer(float* x, const float* s, long long n, unsigned long long delay_ns) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < delay_ns);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) x[i] = s[i];
}
)";

// Runs the producer and then `k` on one stream for an m x n problem; returns the elements of Y that differ
// (bitwise) from S * W.
long long run_pair(const jit::kernel& producer, const runtime_kernel& k, long long m, long long n, harness::random_source& rng) {
  const auto count = static_cast<std::size_t>(m * n);
  const auto s = harness::random_vector<float>(count, rng, {harness::distribution::normal, 1.0f});
  const auto w = harness::random_vector<float>(count, rng, {harness::distribution::uniform, 2.0f});
  auto ds = jit::to_device(s), dw = jit::to_device(w);
  jit::device_buffer dx(count * 4), dy(count * 4);
  dx.fill_u32(0xffffffffu);  // NaN: a read before the producer's write cannot look right
  dy.fill_u32(0xffffffffu);
  const auto& d = jit::driver::get();
  d.check(d.cuCtxSynchronize(), "cuCtxSynchronize", "griddep inputs");  // uploads ran on the legacy stream
  CUstream stream = nullptr;
  d.check(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", "griddep");
  jit::launch_config cfg;
  cfg.grid = {4, 1, 1};  // few CTAs: the dependent grid fits beside them
  cfg.block = {128, 1, 1};
  cfg.stream = stream;
  const long long elements = m * n;
  const unsigned long long delay_ns = 20'000'000;  // 20 ms
  jit::launch_with(producer, cfg, dx.get(), ds.get(), elements, delay_ns);
  k.launch({tensor_view(dw.address(), {m, n}), tensor_view(dx.address(), {m, n}), tensor_view(dy.address(), {m, n})}, stream);
  d.check(d.cuStreamSynchronize(stream), "cuStreamSynchronize", "griddep");
  d.check(d.cuStreamDestroy(stream), "cuStreamDestroy", "griddep");
  std::vector<float> y(count);
  dy.download(std::span<float>(y));
  long long wrong = 0;
  for (std::size_t i = 0; i < count; ++i) wrong += std::bit_cast<std::uint32_t>(y[i]) != std::bit_cast<std::uint32_t>(s[i] * w[i]);
  return wrong;
}

constexpr std::pair<long long, long long> shapes[] = {{300, 200}, {64, 64}, {1000, 72}, {7, 8}};

}  // namespace griddep_gpu

TEST_CASE("programmatic launch: with griddep_wait the dependent kernel reads the producer's output, exact") {
  using namespace griddep_gpu;
  constexpr auto p = pdl_scale(true);
  REQUIRE(p.errors.empty());
  const auto report = cake::analyze(p);
  INFO(cake::analysis::to_text(report));
  CHECK(report.errors == 0);
  CHECK(report.warnings == 0);
  if (!cake_gpu_test::require_device(9, 0, true, "programmatic dependent launch (sm_90a)")) return;
  const auto art = cake::jit::build(slow_writer_source, "slow_writer", "sm_90a");
  INFO(art.diagnostics());
  REQUIRE(art.ok);
  const auto producer = cake::jit::load_kernel(art);
  auto k = cake::runtime_kernel::build(p);
  auto rng = cake::harness::random_source::fresh();
  INFO("seed " << rng.seed() << " (CAKE_SEED reproduces it)");
  for (auto [m, n] : shapes) {
    INFO(m << "x" << n);
    CHECK(run_pair(producer, k, m, n, rng) == 0);
  }
}

TEST_CASE("programmatic launch: without griddep_wait the analyzer reports the read, and the GPU race is measured") {
  using namespace griddep_gpu;
  constexpr auto p = pdl_scale(false);
  REQUIRE(p.errors.empty());
  const auto report = cake::analyze(p);
  INFO(cake::analysis::to_text(report));
  int findings = 0;
  for (const auto& d : report.diagnostics)
    if (d.rule == cake::analysis::rule_id::sync_griddep_missing) {
      ++findings;
      CHECK(std::string(d.message.view()).find("reads 'X'") != std::string::npos);
    }
  CHECK(findings == 1);  // X only: W and Y are declared independent of the previous grid
  if (!cake_gpu_test::require_device(9, 0, true, "programmatic dependent launch (sm_90a)")) return;
  const auto art = cake::jit::build(slow_writer_source, "slow_writer", "sm_90a");
  INFO(art.diagnostics());
  REQUIRE(art.ok);
  const auto producer = cake::jit::load_kernel(art);
  cake::lower::emit_options o;
  o.analyze = false;  // build it anyway: the point is to watch the race the analyzer reports
  auto k = cake::runtime_kernel::build(p, o);
  auto rng = cake::harness::random_source::fresh();
  for (auto [m, n] : shapes) {
    const long long wrong = run_pair(producer, k, m, n, rng);
    MESSAGE("no griddep_wait, " << m << "x" << n << ": " << wrong << " of " << m * n << " elements wrong (a race: reported, not asserted)");
  }
}
