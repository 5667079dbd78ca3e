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
//   cake::kmeans::norms(c, c_norm, B, K, D, type, metric, stream, device)
//       c_norm of the centroids in the metric's form (|c|^2, -1/|c|; nothing for inner_product).
//   cake::kmeans::update(x, idx, c, c_norm, shift, workspace, B, N, K, D, type, metric, stream, device)
//       c[b, k] = the mean of the points assigned to it (rounded to `type`; an empty cluster keeps its
//       centroid), c_norm refreshed, shift[b, k] = |c_new - c_old|^2 (f32 [B, K]). workspace: at least
//       update_workspace_bytes(B, K, D) bytes of device memory (f32 sums and counts; zeroed here).
//   cake::kmeans::fit(x, c, idx, c_norm, shift, workspace, B, N, K, D, type, metric, iterations, ...)
//       `iterations` Lloyd iterations from the centroids in c (the caller initializes them), all enqueued
//       on `stream` without a host synchronization; idx holds the last assignment (to the centroids
//       before the last update), shift the last update's movement (the caller's convergence check).
// All of them are tested on the H200 against an f64 reference (tests/gpu/test_kmeans.cpp).
//
// This header lives in the kernel corpus (kernels/kmeans/): include it as "kernels/kmeans/kmeans.hpp".
// Link cake::jit.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <cake/runtime/kernel.hpp>
#include <cake/runtime/kernel_table.hpp>

#include "assign.hpp"
#include "update.hpp"

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
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, t, device}, [&] {
    const program p = t == input_type::f16 ? kernels::kmeans_assign_sm90<f16>(c) : kernels::kmeans_assign_sm90<bf16>(c);
    if (!p.errors.empty())
      throw jit::error("cake::kmeans::assign: the schedule for " + std::to_string(c.parts) + " parts is invalid: [" + std::string(p.errors[0].rule) + "] " +
                       std::string(p.errors[0].message));
    return runtime_kernel::build(p, {}, device);
  });
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

namespace detail {

constexpr kernels::kmeans_norm_form norm_form(metric m) {
  return m == metric::l2 ? kernels::kmeans_norm_form::l2 : m == metric::cosine ? kernels::kmeans_norm_form::cosine : kernels::kmeans_norm_form::none;
}

// The update's kernels (scatter, finalize, norms) for a part count, type, norm form and device.
enum class update_kernel { scatter, finalize, norms };
inline const runtime_kernel& update_kernel_for(update_kernel which, int parts, input_type t, kernels::kmeans_norm_form f, int device) {
  using key = std::tuple<update_kernel, int, input_type, kernels::kmeans_norm_form, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{which, parts, t, f, device}, [&] {
    auto build = [&]<class In>() {
      return which == update_kernel::scatter ? kernels::kmeans_scatter_program<In>(parts)
             : which == update_kernel::finalize ? kernels::kmeans_finalize_program<In>(parts, f)
                                                : kernels::kmeans_norms_program<In>(parts, f);
    };
    const program p = t == input_type::f16 ? build.template operator()<f16>() : build.template operator()<bf16>();
    if (!p.errors.empty())
      throw jit::error("cake::kmeans: the update schedule for " + std::to_string(parts) + " parts is invalid: [" + std::string(p.errors[0].rule) + "] " +
                       std::string(p.errors[0].message));
    return runtime_kernel::build(p, {}, device);
  });
}

inline int parts_for(long long D) { return static_cast<int>((D + 63) / 64); }

}  // namespace detail

// Bytes of device workspace cake::kmeans::update needs: f32 sums [B, K, D] and counts [B, K].
constexpr long long update_workspace_bytes(long long B, long long K, long long D) { return 4 * B * K * D + 4 * B * K; }

// c_norm [B, K] of the centroids c [B, K, D] in the metric's form (|c|^2 for l2, -1/|c| for cosine);
// nothing to do for inner_product.
inline void norms(const void* c, float* c_norm, long long B, long long K, long long D, input_type t, metric m = metric::l2, CUstream stream = nullptr,
                  int device = 0) {
  const char* who = "cake::kmeans::norms";
  detail::check_shape(who, B, 1, K, D);
  if (m == metric::inner_product) return;
  detail::check_pointer(who, "c", c, 16);
  detail::check_pointer(who, "c_norm", c_norm, 4);
  detail::check_hopper(who, device);
  const auto& k = detail::update_kernel_for(detail::update_kernel::norms, detail::parts_for(D), t, detail::norm_form(m), device);
  const tensor_arg args[] = {tensor_view(c, {B * K, D}), tensor_view(c_norm, {B * K})};
  k.launch(args, {}, stream);
}

// One centroid update after an assignment (see the top of this header).
inline void update(const void* x, const std::int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, long long B, long long N, long long K,
                   long long D, input_type t, metric m = metric::l2, CUstream stream = nullptr, int device = 0) {
  const char* who = "cake::kmeans::update";
  detail::check_shape(who, B, N, K, D);
  if (B * K > (1LL << 24))
    throw jit::argument_error(std::string(who) + ": B * K = " + std::to_string(B * K) + " is past 2^24 (the scatter computes its row in f32)");
  detail::check_pointer(who, "x", x, 16);
  detail::check_pointer(who, "idx", idx, 4);
  detail::check_pointer(who, "c", c, 16);
  if (m != metric::inner_product) detail::check_pointer(who, "c_norm", c_norm, 4);
  detail::check_pointer(who, "shift", shift, 4);
  detail::check_pointer(who, "workspace", workspace, 16);
  detail::check_hopper(who, device);
  const int parts = detail::parts_for(D);
  const auto form = detail::norm_form(m);
  const auto& scatter = detail::update_kernel_for(detail::update_kernel::scatter, parts, t, form, device);
  const auto& finalize = detail::update_kernel_for(detail::update_kernel::finalize, parts, t, form, device);
  auto* sums = static_cast<float*>(workspace);
  float* counts = sums + B * K * D;
  const auto& drv = jit::driver::get();
  drv.bind(device);
  drv.check(drv.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(workspace), 0, static_cast<std::size_t>(update_workspace_bytes(B, K, D)), stream),
            "cuMemsetD8Async", "zeroing the k-means update workspace");
  {
    const tensor_arg args[] = {tensor_view(x, {B, N, D}), tensor_view(idx, {B, N, 1}), tensor_view(sums, {B * K, D}), tensor_view(counts, {B * K, 1})};
    const double scalars[] = {static_cast<double>(K)};
    scatter.launch(args, scalars, stream);
  }
  if (m == metric::inner_product) {
    const tensor_arg args[] = {tensor_view(sums, {B * K, D}), tensor_view(counts, {B * K}), tensor_view(c, {B * K, D}), tensor_view(shift, {B * K})};
    finalize.launch(args, {}, stream);
  } else {
    const tensor_arg args[] = {tensor_view(sums, {B * K, D}), tensor_view(counts, {B * K}), tensor_view(c, {B * K, D}), tensor_view(c_norm, {B * K}),
                               tensor_view(shift, {B * K})};
    finalize.launch(args, {}, stream);
  }
}

// `iterations` Lloyd iterations (assign, update) from the centroids in c; no host synchronization.
inline void fit(const void* x, void* c, std::int32_t* idx, float* c_norm, float* shift, void* workspace, long long B, long long N, long long K, long long D,
                input_type t, metric m, int iterations, CUstream stream = nullptr, int device = 0) {
  // Every argument is checked before the first launch (a refusal must not leave half the work enqueued).
  const char* who = "cake::kmeans::fit";
  if (iterations < 1) throw jit::argument_error(std::string(who) + ": iterations = " + std::to_string(iterations) + " must be at least 1");
  detail::check_shape(who, B, N, K, D);
  if (B * K > (1LL << 24))
    throw jit::argument_error(std::string(who) + ": B * K = " + std::to_string(B * K) + " is past 2^24 (the scatter computes its row in f32)");
  detail::check_pointer(who, "x", x, 16);
  detail::check_pointer(who, "c", c, 16);
  detail::check_pointer(who, "idx", idx, 4);
  if (m != metric::inner_product) detail::check_pointer(who, "c_norm", c_norm, 4);
  detail::check_pointer(who, "shift", shift, 4);
  detail::check_pointer(who, "workspace", workspace, 16);
  detail::check_hopper(who, device);
  norms(c, c_norm, B, K, D, t, m, stream, device);
  for (int it = 0; it < iterations; ++it) {
    assign(x, c, m == metric::inner_product ? nullptr : c_norm, idx, B, N, K, D, t, m, stream, device);
    update(x, idx, c, c_norm, shift, workspace, B, N, K, D, t, m, stream, device);
  }
}

}  // namespace cake::kmeans
