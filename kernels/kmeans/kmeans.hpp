#pragma once
// cake::kmeans: the k-means entry points an engine calls, on device pointers.
//
//   cake::kmeans::assign(x, c, c_norm, idx, B, N, K, D, type, metric, stream, device)
//       idx[b, i] = the centroid of c[b] nearest to x[b, i] (kernels/kmeans/assign.hpp says how "nearest"
//       reads for each metric); ties go to the lowest centroid index.
//
// x is [B, N, D], c is [B, K, D], both row-major and contiguous, of `type` (f16 or bf16); c_norm is
// f32 [B, K]: |c|^2 for metric::l2, -1 / |c| for metric::cosine, unused (may be null) for
// metric::inner_product; idx is i32 [B, N]. D is 8 .. 512 and a multiple of 8 (rows of 16-byte
// multiples: TMA); columns past D inside a 64-column part are zero-filled by TMA and add nothing.
//
// The call picks the schedule for D (assign_config_for), JIT-compiles it once per schedule, type and
// device (and on disk, docs/jit.md) and launches it on `stream`; it needs a Hopper device (cc 9.0).
//
// This header lives in the kernel corpus (kernels/kmeans/): include it as "kernels/kmeans/kmeans.hpp".
// Link cake::jit.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <cake/runtime/kernel.hpp>

#include "assign.hpp"

namespace cake::kmeans {

using metric = kernels::kmeans_metric;
enum class input_type { f16, bf16 };
constexpr const char* to_string(input_type t) { return t == input_type::f16 ? "f16" : "bf16"; }

constexpr long long max_dim = 512;

// The assignment schedule for a width D: one part per 64 columns; 128 points per consumer warpgroup up
// to D = 256 (64 beyond, where the points tile would not fit next to the centroid stages); as many
// centroid stages as fit in 225 KiB of smem, at most 8.
constexpr kernels::kmeans_assign_config assign_config_for(long long D, metric m) {
  kernels::kmeans_assign_config c;
  c.metric = m;
  c.parts = static_cast<int>((D + 63) / 64);
  c.rows = c.parts <= 4 ? 128 : 64;
  c.stages = 8;
  while (c.stages > 2 && kernels::kmeans_assign_smem(c) > 225 * 1024) --c.stages;
  return c;
}

namespace detail {

inline const runtime_kernel& assign_kernel(const kernels::kmeans_assign_config& c, input_type t, int device) {
  using key = std::tuple<kernels::kmeans_assign_config, input_type, int>;
  static std::mutex mu;
  static std::map<key, runtime_kernel> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key{c, t, device}); it != cache.end()) return it->second;
  const program p = t == input_type::f16 ? kernels::kmeans_assign_sm90<f16>(c) : kernels::kmeans_assign_sm90<bf16>(c);
  if (!p.errors.empty())
    throw jit::error("cake::kmeans::assign: the schedule for " + std::to_string(c.parts) + " parts is invalid: [" + std::string(p.errors[0].rule) + "] " +
                     std::string(p.errors[0].message));
  return cache.emplace(key{c, t, device}, runtime_kernel::build(p, {}, device)).first->second;
}

inline void check_hopper(const char* who, int device) {
  const auto& dev = jit::driver::get().device(device);
  if (!(dev.cc_major == 9 && dev.cc_minor == 0))
    throw jit::unsupported_error(std::string(who) + ": needs a Hopper device (compute capability 9.0, sm_90a); device " + std::to_string(device) + " is " +
                                 dev.describe());
}

inline void check_shape(const char* who, long long B, long long N, long long K, long long D) {
  auto bad = [&](const std::string& why) { throw jit::argument_error(std::string(who) + ": " + why); };
  if (B < 1) bad("B = " + std::to_string(B) + " must be at least 1");
  if (N < 1) bad("N = " + std::to_string(N) + " must be at least 1");
  if (K < 1) bad("K = " + std::to_string(K) + " must be at least 1");
  if (K > (1LL << 31) - 1) bad("K = " + std::to_string(K) + " does not fit the i32 indices");
  if (D < 8 || D > max_dim || D % 8 != 0)
    bad("D = " + std::to_string(D) + " must be a multiple of 8 in 8 .. " + std::to_string(max_dim) + " (rows of 16-byte multiples for TMA)");
  if (N > (1LL << 40) / D || K > (1LL << 40) / D) bad("N * D or K * D is past 2^40 elements");
}

inline void check_pointer(const char* who, const char* name, const void* p, unsigned align) {
  if (!p || reinterpret_cast<std::uintptr_t>(p) % align)
    throw jit::argument_error(std::string(who) + ": " + name + " must be a non-null device address aligned to " + std::to_string(align) + " bytes");
}

}  // namespace detail

namespace detail {
inline void run_assign(const kernels::kmeans_assign_config* forced, const void* x, const void* c, const float* c_norm, std::int32_t* idx, long long B,
                       long long N, long long K, long long D, input_type t, metric m, CUstream stream, int device) {
  const char* who = "cake::kmeans::assign";
  check_shape(who, B, N, K, D);
  check_pointer(who, "x", x, 16);
  check_pointer(who, "c", c, 16);
  if (m != metric::inner_product) check_pointer(who, "c_norm", c_norm, 4);
  check_pointer(who, "idx", idx, 4);
  kernels::kmeans_assign_config cfg = forced ? *forced : assign_config_for(D, m);
  cfg.metric = m;
  if (cfg.parts * 64 < D)
    throw jit::argument_error(std::string(who) + ": config.parts = " + std::to_string(cfg.parts) + " covers " + std::to_string(cfg.parts * 64) +
                              " columns, fewer than D = " + std::to_string(D));
  check_hopper(who, device);
  const runtime_kernel& k = assign_kernel(cfg, t, device);
  const tensor_arg xa = tensor_view(x, {B, N, D}), ca = tensor_view(c, {B, K, D}), ia = tensor_view(idx, {B, N, 1});
  if (m == metric::inner_product) {
    const tensor_arg args[] = {xa, ca, ia};
    k.launch(args, {}, stream);
  } else {
    const tensor_arg args[] = {xa, ca, tensor_view(c_norm, {B, K}), ia};
    k.launch(args, {}, stream);
  }
}
}  // namespace detail

// idx[b, i] = argmin over k of the metric's score of (x[b, i], c[b, k]); see the top of this header.
inline void assign(const void* x, const void* c, const float* c_norm, std::int32_t* idx, long long B, long long N, long long K, long long D, input_type t,
                   metric m = metric::l2, CUstream stream = nullptr, int device = 0) {
  detail::run_assign(nullptr, x, c, c_norm, idx, B, N, K, D, t, m, stream, device);
}
// The same with an explicit schedule (tuning, experiments): config.parts * 64 >= D; config.metric is
// replaced by m.
inline void assign_with(const kernels::kmeans_assign_config& config, const void* x, const void* c, const float* c_norm, std::int32_t* idx, long long B,
                        long long N, long long K, long long D, input_type t, metric m = metric::l2, CUstream stream = nullptr, int device = 0) {
  detail::run_assign(&config, x, c, c_norm, idx, B, N, K, D, t, m, stream, device);
}

}  // namespace cake::kmeans
