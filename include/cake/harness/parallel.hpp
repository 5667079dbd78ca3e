#pragma once
// Host-side work split over the cores, for the f64 references of tests and benchmarks.
#include <algorithm>
#include <thread>
#include <vector>

namespace cake::harness {

// Runs f(begin, end) over [0, n) in contiguous chunks on up to 32 threads.
template <class F>
void parallel_for(long long n, F f) {
  const long long threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  const long long chunk = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (long long b = 0; b < n; b += chunk) pool.emplace_back(f, b, std::min(n, b + chunk));
  for (auto& t : pool) t.join();
}

}  // namespace cake::harness
