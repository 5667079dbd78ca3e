#pragma once
// Timing a piece of GPU work with CUDA events on one stream, the way Cake's benchmarks report it
// (docs: "CUDA events, L2 flushed before each run, median of N"):
//   - before every run, warm-up or timed, a buffer of at least twice the L2 size (128 MiB minimum, so
//     120 MiB -> 128 MiB on the H200's 60 MiB L2) is memset on the same stream, evicting the previous
//     run's data so each run starts from DRAM;
//   - the events bracket only the work, not the flush;
//   - every sample is kept, with median / min / max / mean / p10 / p90.
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include <cake/jit/device_memory.hpp>
#include <cake/jit/driver.hpp>

namespace cake::harness {

struct timing_options {
  int warmup = 3;              // untimed runs first (module load, clocks, TLB), at least
  double warmup_ms = 200;      // ... and until they add up to this much GPU time: after host work the SM
                               // clock has dropped (345 MHz idle on the H200) and ramps up over ~100 ms;
                               // three short runs measured a 2 ms kernel at 60% of its speed
  int runs = 50;               // timed runs
  bool flush_l2 = true;
  std::size_t flush_bytes = 0;  // 0: l2_flush_bytes(device)
  CUstream stream = nullptr;    // nullptr: the legacy default stream
  int ordinal = 0;              // device
};

struct timing_summary {
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0, p10_ms = 0, p90_ms = 0;
};

struct timing_result : timing_summary {
  std::vector<double> samples_ms;  // in run order
  std::size_t flush_bytes = 0;     // 0 when the L2 was not flushed
};

// The p-quantile (0 <= p <= 1) of sorted values, interpolating linearly between neighbours (the
// definition numpy uses by default). Median = quantile(0.5).
inline double quantile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double pos = std::clamp(p, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

inline timing_summary summarize(std::vector<double> samples) {
  timing_summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min_ms = samples.front();
  s.max_ms = samples.back();
  s.mean_ms = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  s.median_ms = quantile(samples, 0.5);
  s.p10_ms = quantile(samples, 0.1);
  s.p90_ms = quantile(samples, 0.9);
  return s;
}

// Bytes to memset so that nothing of a previous run survives in L2: twice the L2 size, rounded up to a
// MiB, and at least 128 MiB.
inline std::size_t l2_flush_bytes(std::size_t l2_bytes) {
  constexpr std::size_t mib = std::size_t{1} << 20;
  const std::size_t twice = (2 * l2_bytes + mib - 1) / mib * mib;
  return std::max<std::size_t>(twice, 128 * mib);
}

// Times work(stream) (or work() when it takes no stream); the work must enqueue on that stream.
template <class Work>
timing_result time_gpu(Work&& work, const timing_options& o = {}) {
  if (o.runs < 1 || o.warmup < 0)
    throw jit::error("time_gpu: runs must be >= 1 and warmup >= 0 (got runs " + std::to_string(o.runs) + ", warmup " +
                     std::to_string(o.warmup) + ")");
  const auto& d = jit::driver::get();
  d.bind(o.ordinal);
  timing_result r;
  if (o.flush_l2)
    r.flush_bytes = o.flush_bytes ? o.flush_bytes
                                  : l2_flush_bytes(static_cast<std::size_t>(d.device(o.ordinal).l2_bytes));
  jit::device_buffer flush(r.flush_bytes, o.ordinal);

  struct event_guard {
    const jit::driver& d;
    CUevent e = nullptr;
    ~event_guard() {
      if (e) d.cuEventDestroy(e);
    }
  } start{d}, stop{d};
  d.check(d.cuEventCreate(&start.e, CU_EVENT_DEFAULT), "cuEventCreate", "timing");
  d.check(d.cuEventCreate(&stop.e, CU_EVENT_DEFAULT), "cuEventCreate", "timing");

  auto run_once = [&](int i) -> double {
    if (o.flush_l2)  // a different byte each time, so no run can find the flush buffer's lines reusable
      d.check(d.cuMemsetD8Async(flush.get(), static_cast<unsigned char>(i), r.flush_bytes, o.stream),
              "cuMemsetD8Async", "flushing L2 with " + std::to_string(r.flush_bytes) + " B");
    d.check(d.cuEventRecord(start.e, o.stream), "cuEventRecord", "timing start");
    if constexpr (std::is_invocable_v<Work&, CUstream>) work(o.stream);
    else work();
    d.check(d.cuEventRecord(stop.e, o.stream), "cuEventRecord", "timing stop");
    d.check(d.cuEventSynchronize(stop.e), "cuEventSynchronize", "waiting for the timed work");
    float ms = 0;
    d.check(d.cuEventElapsedTime(&ms, start.e, stop.e), "cuEventElapsedTime", "timing");
    return static_cast<double>(ms);
  };
  double warm = 0;
  for (int i = 0; i < o.warmup || (warm < o.warmup_ms && i < 100000); ++i) warm += run_once(i);
  r.samples_ms.reserve(static_cast<std::size_t>(o.runs));
  for (int i = 0; i < o.runs; ++i) r.samples_ms.push_back(run_once(o.warmup + i));
  static_cast<timing_summary&>(r) = summarize(r.samples_ms);
  return r;
}

}  // namespace cake::harness
