#pragma once
// cake::kmeans, the Lloyd loop around kmeans.hpp: a seeded random initialization and iterations until the
// centroids stop moving.
//
//   cake::kmeans::init_random(x, c, B, N, K, D, type, seed, stream, device)
//       c[b] = K distinct points of x[b], picked by `seed` (batch entry b draws from seed + b): the same
//       rows on every platform (initial_rows below). K <= N. One row gather on the device.
//   int cake::kmeans::fit_until(x, c, idx, c_norm, shift, workspace, B, N, K, D, type, metric,
//                               max_iterations, tolerance, check_every[, update_options], stream, device)
//       Lloyd iterations from the centroids in c until every centroid moved by at most `tolerance`
//       (Euclidean, sqrt(shift) <= tolerance) in the last iteration, or max_iterations; returns the
//       iterations run. The check reads shift [B, K] back every `check_every` iterations: the one host
//       synchronization of the loop (between checks the iterations are enqueued back to back, as fit does).
//
// Not built: k-means++ (D^2 sampling is K sequential passes over the points, each needing a prefix sum to
// sample from: docs/kmeans.md). The row gather is the IVF index's (kernels/knn/ivf_scan.hpp,
// ivf_gather_program); kernels/knn/ivf.hpp picks its initial centroids with initial_rows too.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cake/jit/device_memory.hpp>

#include "../knn/ivf_scan.hpp"
#include "kmeans.hpp"

namespace cake::kmeans {

// K distinct rows of 0 .. N-1 from `seed`: a partial Fisher-Yates shuffle on mt19937_64 with modulo draws
// (the same rows on every platform and standard library, unlike std::uniform_int_distribution).
inline std::vector<std::int32_t> initial_rows(long long N, long long K, std::uint64_t seed) {
  if (K < 1 || K > N || N > (1LL << 31) - 1)
    throw jit::argument_error("cake::kmeans::initial_rows: K = " + std::to_string(K) + " distinct rows of N = " + std::to_string(N) +
                              " need 1 <= K <= N < 2^31");
  std::vector<std::int32_t> rows(static_cast<std::size_t>(N));
  for (long long i = 0; i < N; ++i) rows[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
  std::mt19937_64 g(seed);
  for (long long i = 0; i < K; ++i) {
    const long long j = i + static_cast<long long>(g() % static_cast<std::uint64_t>(N - i));
    std::swap(rows[static_cast<std::size_t>(i)], rows[static_cast<std::size_t>(j)]);
  }
  rows.resize(static_cast<std::size_t>(K));
  return rows;
}

namespace detail {

// The row gather (dst[e] = src[idx[e]]): what 0 / 1: f16 / bf16 rows, 2: i32 rows (fill -1), 3: f32 rows
// (bit for bit: the IVF search's distances).
inline const runtime_kernel& gather_kernel(int what, int width, int device) {
  using key = std::tuple<int, int, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{what, width, device}, [&] {
    const program p = what == 0   ? kernels::ivf_gather_program<f16>(width)
                      : what == 1 ? kernels::ivf_gather_program<bf16>(width)
                      : what == 2 ? kernels::ivf_gather_program<i32>(width, -1.0f)
                                  : kernels::ivf_gather_program<f32>(width);
    if (!p.errors.empty())
      throw jit::error("cake: the row gather for width " + std::to_string(width) + " is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

// dst[e] = src[idx[e]] for e < E (rows of `cols` elements; 16-bit rows of type t, or i32 when ids).
inline void gather_rows(const void* src, long long R, const std::int32_t* idx, void* dst, long long E, long long cols, bool ids, input_type t, CUstream stream,
                        int device) {
  const int what = ids ? 2 : t == input_type::f16 ? 0 : 1;
  const int width = ids ? kernels::ivf_gather_width<i32>(cols) : kernels::ivf_gather_width<f16>(cols);
  const runtime_kernel& g = gather_kernel(what, width, device);
  const tensor_arg args[] = {tensor_view(src, {R, cols}), tensor_view(idx, {E, 1}), tensor_view(dst, {E, cols})};
  g.launch(args, {}, stream);
}

}  // namespace detail

// c[b] = K distinct points of x[b] picked by seed + b (see the top of this header).
inline void init_random(const void* x, void* c, long long B, long long N, long long K, long long D, input_type t, std::uint64_t seed = 0,
                        CUstream stream = nullptr, int device = 0) {
  const char* who = "cake::kmeans::init_random";
  detail::check_shape(who, B, N, K, D);
  if (K > N) throw jit::argument_error(std::string(who) + ": K = " + std::to_string(K) + " distinct points of N = " + std::to_string(N) + ": K must be at most N");
  if (B * N > (1LL << 31) - 1) throw jit::argument_error(std::string(who) + ": B * N = " + std::to_string(B * N) + " rows do not fit the i32 row indices");
  detail::check_pointer(who, "x", x, 16);
  detail::check_pointer(who, "c", c, 16);
  detail::check_hopper(who, device);
  std::vector<std::int32_t> rows;
  rows.reserve(static_cast<std::size_t>(B * K));
  for (long long b = 0; b < B; ++b)
    for (std::int32_t r : initial_rows(N, K, seed + static_cast<std::uint64_t>(b))) rows.push_back(static_cast<std::int32_t>(b * N + r));
  const jit::device_buffer idx = jit::to_device(rows, device);
  detail::gather_rows(x, B * N, static_cast<const std::int32_t*>(idx.address()), c, B * K, D, false, t, stream, device);
  // idx is freed at return: cuMemFree waits for the gather to finish with it.
}

// Lloyd iterations until the centroids stop moving (see the top of this header); returns the iterations run.
inline int fit_until(const void* x, void* c, std::int32_t* idx, float* c_norm, float* shift, void* workspace, long long B, long long N, long long K, long long D,
                     input_type t, metric m, int max_iterations, float tolerance, int check_every, const update_options& options = {},
                     CUstream stream = nullptr, int device = 0) {
  const char* who = "cake::kmeans::fit_until";
  if (max_iterations < 1) throw jit::argument_error(std::string(who) + ": max_iterations = " + std::to_string(max_iterations) + " must be at least 1");
  if (check_every < 1) throw jit::argument_error(std::string(who) + ": check_every = " + std::to_string(check_every) + " must be at least 1");
  if (!(tolerance >= 0) || !std::isfinite(tolerance))
    throw jit::argument_error(std::string(who) + ": tolerance = " + std::to_string(tolerance) + " must be a finite distance, at least 0");
  detail::check_shape(who, B, N, K, D);
  detail::check_pointer(who, "shift", shift, 4);
  const auto& drv = jit::driver::get();
  std::vector<float> moved(static_cast<std::size_t>(B * K));
  int done = 0;
  while (done < max_iterations) {
    const int n = check_every < max_iterations - done ? check_every : max_iterations - done;
    fit(x, c, idx, c_norm, shift, workspace, B, N, K, D, t, m, n, options, stream, device);
    done += n;
    drv.bind(device);
    drv.check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize", "the k-means convergence check");
    drv.check(drv.cuMemcpyDtoH(moved.data(), reinterpret_cast<CUdeviceptr>(shift), moved.size() * sizeof(float)), "cuMemcpyDtoH",
              "reading the centroid shifts");
    float most = 0;
    bool nan = false;  // a NaN shift never counts as converged
    for (float s : moved) {
      nan = nan || s != s;
      most = s > most ? s : most;
    }
    if (!nan && std::sqrt(most) <= tolerance) break;
  }
  return done;
}

}  // namespace cake::kmeans
