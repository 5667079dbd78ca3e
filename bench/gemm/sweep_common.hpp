#pragma once
// Shared by cake_bench_gemm_sweep (times candidate schedules on the search shapes of the domain) and
// cake_bench_gemm_score (times cake::gemm on the held-out shapes): operand buffers sized once for the
// largest shape and filled with random values, running a gemm_plan, the peer, and the correctness check
// of an output against the peer's (relative Frobenius difference, unwritten elements caught by a NaN
// poison), and the timing rounds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <cake/gemm.hpp>
#include <cake/harness/parallel.hpp>
#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>

#include "domain.hpp"
#include "peers.hpp"

namespace cake_bench {

inline const char* input_name(cake::gemm_input in) { return in == cake::gemm_input::bf16 ? "bf16" : "e4m3"; }
inline double tolerance(cake::gemm_input in) { return in == cake::gemm_input::bf16 ? 1e-2 : 3e-2; }
inline constexpr float fp8_scale = 0.5f;

// A rough time of one GEMM on the H200 (for the run-time estimate printed before a sweep, and for the
// modeled rows of a placeholder evidence file): 650 TFLOP/s bf16, 1300 fp8, 3.5 TB/s, 5 us launch.
inline double rough_ms(long long M, long long N, long long K, cake::gemm_input in) {
  const double eb = in == cake::gemm_input::bf16 ? 2 : 1;
  const double flop = 2.0 * M * N * K, bytes = eb * (M * K + N * K) + 2.0 * M * N;
  return std::max(flop / (in == cake::gemm_input::bf16 ? 650e9 : 1300e9), bytes / 3.5e9) + 0.005;
}

// Device operands for every shape of a list: A, B packed (lda = ldb = K), D and the peer's D packed
// (ldd = N). Inputs are random (normal, sd 0.5 for bf16, 1 for e4m3), uploaded once: a host block of a
// prime number of elements repeated, so that no two rows of A or B share their values.
struct operands {
  cake::gemm_input in;
  cake::jit::device_buffer a, b, d, dpeer;
  operands(cake::gemm_input input, std::span<const cake::gemm_domain::shape> shapes, cake::harness::random_source& rng) : in(input) {
    long long ma = 0, mb = 0, md = 0;
    for (const auto& s : shapes) ma = std::max(ma, s.m * s.k), mb = std::max(mb, s.n * s.k), md = std::max(md, s.m * s.n);
    const std::size_t eb = in == cake::gemm_input::bf16 ? 2 : 1;
    a = cake::jit::device_buffer(static_cast<std::size_t>(ma) * eb + 16);
    b = cake::jit::device_buffer(static_cast<std::size_t>(mb) * eb + 16);
    d = cake::jit::device_buffer(static_cast<std::size_t>(md) * 2 + 16);
    dpeer = cake::jit::device_buffer(static_cast<std::size_t>(md) * 2 + 16);
    constexpr std::size_t block = 16777259;  // a prime
    if (in == cake::gemm_input::bf16) {
      const auto host = cake::harness::random_vector<cake::harness::host_bf16>(block, rng, {cake::harness::distribution::normal, 0.5f});
      fill(a, std::as_bytes(std::span(host)));
      fill(b, std::as_bytes(std::span(host)).subspan(12345 * 2));
    } else {
      const auto host = cake::harness::random_vector<cake::harness::host_e4m3>(block, rng, {cake::harness::distribution::normal, 1.0f});
      fill(a, std::as_bytes(std::span(host)));
      fill(b, std::as_bytes(std::span(host)).subspan(12345));
    }
  }
  static void fill(cake::jit::device_buffer& to, std::span<const std::byte> block) {
    for (std::size_t at = 0; at < to.size(); at += block.size()) to.upload(block.first(std::min(block.size(), to.size() - at)), at);
  }
};

// Runs a plan on the operands, as cake::gemm runs it.
inline void run_plan(const cake::gemm_plan& p, const operands& o, long long M, long long N, long long K, CUstream st) {
  cake::gemm_with(p, o.in, o.a.address(), o.b.address(), o.d.address(), M, N, K, K, K, N, o.in == cake::gemm_input::bf16 ? 1.0f : fp8_scale, st);
}

// The peer on the same operands, into dpeer: cuBLAS bf16, cuBLASLt e4m3 (fast accumulation, as Cake's
// wgmma). plan_fp8 can fail (no algorithm for the shape): the caller records the shape without a peer.
struct peer_run {
  peers& P;
  const operands& o;
  shape s;
  peers::fp8_plan plan{};
  peer_run(peers& p, const operands& ops, shape sh) : P(p), o(ops), s(sh) {
    if (o.in == cake::gemm_input::e4m3) plan = P.plan_fp8(s, fp8_scale, true, o.a.get(), o.b.get(), o.dpeer.get());
  }
  void operator()(CUstream st) const {
    if (o.in == cake::gemm_input::e4m3) P.fp8(plan, o.a.get(), o.b.get(), o.dpeer.get(), st);
    else P.bf16(o.a.get(), o.b.get(), o.dpeer.get(), s, st);
  }
};

// Downloads the first count bf16 values of a device buffer.
inline std::vector<std::uint16_t> download_bf16(const cake::jit::device_buffer& b, long long count) {
  std::vector<std::uint16_t> v(static_cast<std::size_t>(count));
  b.download(std::span<std::uint16_t>(v));
  return v;
}

struct check_result {
  double rel_err = 0;
  long long nonfinite = 0;
  bool ok(double tol) const { return nonfinite == 0 && std::isfinite(rel_err) && rel_err <= tol; }
};

// ||out - ref||_F / ||ref||_F over the M x N output (bf16 both), and out's non-finite elements.
inline check_result compare(const std::vector<std::uint16_t>& out, const std::vector<std::uint16_t>& ref) {
  const long long n = static_cast<long long>(ref.size());
  const long long parts = 64;
  std::vector<double> num(parts), den(parts);
  std::vector<long long> bad(parts);
  cake::harness::parallel_for(parts, [&](long long p0, long long p1) {
    for (long long p = p0; p < p1; ++p)
      for (long long i = n * p / parts; i < n * (p + 1) / parts; ++i) {
        const double x = cake::harness::bf16_bits_to_float(out[static_cast<std::size_t>(i)]);
        const double y = cake::harness::bf16_bits_to_float(ref[static_cast<std::size_t>(i)]);
        if (!std::isfinite(x)) ++bad[static_cast<std::size_t>(p)];
        else num[static_cast<std::size_t>(p)] += (x - y) * (x - y), den[static_cast<std::size_t>(p)] += y * y;
      }
  });
  check_result r;
  double a = 0, b = 0;
  for (long long p = 0; p < parts; ++p) a += num[static_cast<std::size_t>(p)], b += den[static_cast<std::size_t>(p)], r.nonfinite += bad[static_cast<std::size_t>(p)];
  r.rel_err = b > 0 ? std::sqrt(a / b) : (a > 0 ? INFINITY : 0);
  return r;
}

// One checked run of `work` into o.d: D poisoned with NaN first, compared with the peer's output `ref`.
template <class Work>
check_result checked_run(operands& o, long long M, long long N, const std::vector<std::uint16_t>& ref, Work&& work) {
  o.d.fill_u32(0xffffffffu);
  work(nullptr);
  cake::jit::driver::get().cuCtxSynchronize();
  return compare(download_bf16(o.d, M * N), ref);
}

// Median times of several pieces of work on one shape, taken in `rounds` rounds, L2 flushed before every run.
// Each work runs `warmup_ms` of GPU time untimed before its timed runs, and the rounds alternate the order
// (first to last, then last to first), so that no work is always timed at the same point of the burst. On
// the H200 the SM clock falls within a burst of large GEMMs (sampled at 8192^3: 1980 MHz, then 1410-1470 at
// its end, where the peer was always timed; bench/results/h200/gemm_clock_probe.json): with one warm-up run
// and the same order every round, the sweep timed BN 256 at 1.50 ms and cuBLAS at 1.72 where
// cake_bench_gemm (a 200 ms warm-up before each timed block) times them at 1.64 and 1.66.
using work = std::function<void(CUstream)>;
inline std::vector<double> timed_rounds(const std::vector<work>& works, int runs, int rounds = 2, double warmup_ms = 50) {
  std::vector<std::vector<double>> samples(works.size());
  cake::harness::timing_options t;
  t.runs = std::max(1, (runs + rounds - 1) / rounds);
  t.warmup = 1;
  t.warmup_ms = warmup_ms;
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < works.size(); ++j) {
      const std::size_t i = r % 2 == 0 ? j : works.size() - 1 - j;
      const auto res = cake::harness::time_gpu(works[i], t);
      samples[i].insert(samples[i].end(), res.samples_ms.begin(), res.samples_ms.end());
    }
  std::vector<double> med;
  for (auto& s : samples) med.push_back(cake::harness::summarize(s).median_ms);
  return med;
}

// 2 s of cuBLAS 8192^3 to bring the GPU to its sustained clock.
inline void warm_up(peers& P) {
  cake::jit::device_buffer a(8192ull * 8192 * 2), b(8192ull * 8192 * 2), d(8192ull * 8192 * 2);
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
    for (int i = 0; i < 20; ++i) P.bf16(a.get(), b.get(), d.get(), {8192, 8192, 8192}, nullptr);
    cake::jit::driver::get().cuCtxSynchronize();
  }
}

inline std::vector<cake::gemm_domain::shape> domain_shapes(bool held_out, long long limit) {
  std::vector<cake::gemm_domain::shape> v;
  for (std::size_t i = 0; i < cake::gemm_domain::size; ++i)
    if (cake::gemm_domain::at(i).held_out == held_out && (limit <= 0 || static_cast<long long>(v.size()) < limit)) v.push_back(cake::gemm_domain::at(i));
  return v;
}

inline std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

}  // namespace cake_bench
