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
//       update_workspace_bytes(B, K, D) bytes of device memory (sums and counts; zeroed here). An
//       update_options argument (before stream) asks for deterministic sums: i64 fixed point, the same
//       bits on every run (update_options says the cost and the bound on |x| bf16 needs), or for the
//       sorted update (method = sorted: a counting sort by cluster, then sums over contiguous rows; its
//       workspace: sorted_update_workspace_bytes(B, N, K, D)).
//   cake::kmeans::step(x, c, idx, c_norm, shift, workspace, B, N, K, D, type, metric, stream, device)
//       one Lloyd iteration: assign, then update, with the same results; for D > 64 the update's scatter is
//       fused into the assignment (the points read once). c_norm must hold the norms of c on entry.
//   cake::kmeans::fit(x, c, idx, c_norm, shift, workspace, B, N, K, D, type, metric, iterations, ...)
//       `iterations` Lloyd iterations from the centroids in c (the caller initializes them: init.hpp has a
//       seeded random initialization, and fit_until, the loop to a tolerance), all enqueued
//       on `stream` without a host synchronization; idx holds the last assignment (to the centroids
//       before the last update), shift the last update's movement (the caller's convergence check).
// All of them are tested on the H200 against an f64 reference (tests/gpu/test_kmeans.cpp).
//
// This header lives in the kernel corpus (kernels/kmeans/): include it as "kernels/kmeans/kmeans.hpp".
// Link cake::jit.
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <cake/runtime/kernel.hpp>
#include <cake/runtime/kernel_table.hpp>

#include "assign.hpp"
#include "update.hpp"

namespace cake::kmeans {

using metric = kernels::kmeans_metric;
enum class input_type { f16, bf16 };
constexpr const char* to_string(input_type t) { return t == input_type::f16 ? "f16" : "bf16"; }

constexpr long long max_dim = 512;
// From this many centroid tiles on, the argmin finds its index lazily (kmeans_assign_config::lazy_index):
// the running best improves in tile j with probability about 1/j, so late tiles mostly skip the index
// search, but a warp's second pass runs when any of its rows improves. On the H200 (cake_bench_kmeans
// --lazy, 2026-12-03, TFLOP/s): +6.5% at 512 tiles (K = 65,536), -0.7% at 128, -17% at 32, -26% at 8;
// 2026-12-04, against the plain form with its lanes combined after the loop: +4% at 512, -16% at 128.
constexpr long long lazy_index_min_tiles = 256;
// Up to this many centroid tiles (and at any K for D <= 64) the schedule is persistent with two points
// tiles (assign_config_for).
constexpr long long persistent_max_tiles = 16;

// The assignment schedule for a width D: one part per 64 columns; 128 points per consumer warpgroup up
// to D = 256 (64 beyond, where the points tile would not fit next to the centroid stages); as many
// centroid stages as fit in 225 KiB of smem, at most 8; the index found lazily from lazy_index_min_tiles
// centroid tiles of K on; persistent with two points tiles up to persistent_max_tiles (below).
constexpr kernels::kmeans_assign_config assign_config_for(long long D, long long K, metric m) {
  kernels::kmeans_assign_config c;
  c.metric = m;
  // c_norm in the centroid stages (TMA, NaN past K) rather than loaded by every consumer thread from
  // global: on the H200 (cake_bench_kmeans --cn-stage, bf16, 2026-12-04, at one stage fewer where the
  // 512 bytes per stage did not fit) +14% at K = 1,024, +3.5% at K = 4,096 (the overlapped form no longer
  // spills), +24% at D = 64, +9.5% at K = 65,536, +9% held out at D = 96; -0.4% / -0.6% held out at D = 256
  // and 512 (one stage fewer). Taken for every form (inner_product has no c_norm).
  c.cn_in_stage = m != metric::inner_product;
  c.lazy_index = K >= lazy_index_min_tiles * c.bn;
  c.parts = static_cast<int>((D + 63) / 64);
  c.rows = c.parts <= 4 ? 128 : 64;
  c.stages = 8;
  while (c.stages > 2 && kernels::kmeans_assign_smem(c) > 225 * 1024) --c.stages;
  // The persistent walk with the next points tile loading during this one, where a tile's own load is a
  // large share of its time: few centroid tiles, or D <= 64 (half the MMA work per centroid tile). It
  // needs a second points tile in smem, so at D = 128 the centroid pipeline drops to 6 stages; it is not
  // taken where that leaves fewer than 4. On the H200 (cake_bench_kmeans --sweep, 2026-12-03): +7.3% at
  // K = 1,024, D = 128 (8 tiles) and +4.6% at K = 16,384, D = 64; -2.5% at K = 4,096, D = 128 (32 tiles).
  // The persistent form passes the MMA turn after its MMAs complete (pass_after_wait): on the H200
  // (cake_bench_kmeans --after-wait, 2026-12-04, with the deferred cross-lane argmin, docs/lowering.md)
  // +9% at K = 1,024, D = 128, +15% at K = 16,384, D = 64, +5% on the held-out D = 96 shape; the grid
  // forms gain nothing from it (-1% at K = 4,096, -3% held out at D = 256).
  kernels::kmeans_assign_config p = c;
  p.persistent = true, p.x_stages = 2, p.stages = 8, p.pass_after_wait = true;
  while (p.stages > 4 && kernels::kmeans_assign_smem(p) > 225 * 1024) --p.stages;
  if (kernels::kmeans_assign_smem(p) <= 225 * 1024 && (c.parts == 1 || K <= persistent_max_tiles * c.bn)) return p;
  // The grid form up to D = 128 without the lazy index overlaps each consumer's argmin with its own MMAs
  // (overlap; 5 whole-tile stages at D = 128): +5% and +13% at K = 4,096 in two runs (same dates). Not
  // with the lazy index (-9% at K = 65,536) nor persistent (-10% at K = 1,024, -9% at D = 64).
  if (!c.lazy_index && c.parts <= 2 && c.rows == 128) {
    kernels::kmeans_assign_config o = c;
    o.overlap = true, o.stages = 8;
    while (o.stages > 2 && kernels::kmeans_assign_smem(o) > 225 * 1024) --o.stages;
    if (kernels::kmeans_assign_smem(o) <= 225 * 1024 && o.stages >= 4) return o;
  }
  return c;
}

namespace detail {

inline const runtime_kernel& assign_kernel(const kernels::kmeans_assign_config& c, input_type t, int device) {
  using key = std::tuple<kernels::kmeans_assign_config, input_type, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, t, device}, [&] {
    const program p = t == input_type::f16 ? kernels::kmeans_assign_sm90<f16>(c) : kernels::kmeans_assign_sm90<bf16>(c);
    if (!p.errors.empty())
      throw jit::error("cake::kmeans::assign: the schedule for " + std::to_string(c.parts) + " parts is invalid: " + to_text(p.errors[0]));
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
// sums / counts (both or neither): the update's f32 workspace, added into by the assignment's fused
// scatter (kmeans_assign_config::scatter; kmeans::step).
inline void run_assign(const kernels::kmeans_assign_config* forced, const void* x, const void* c, const float* c_norm, std::int32_t* idx, long long B,
                       long long N, long long K, long long D, input_type t, metric m, CUstream stream, int device, bool probe = false,
                       float* sums = nullptr, float* counts = nullptr) {
  const char* who = "cake::kmeans::assign";
  check_shape(who, B, N, K, D);
  check_pointer(who, "x", x, 16);
  check_pointer(who, "c", c, 16);
  if (m != metric::inner_product) check_pointer(who, "c_norm", c_norm, 4);
  check_pointer(who, "idx", idx, 4);
  kernels::kmeans_assign_config cfg = forced ? *forced : assign_config_for(D, K, m);
  cfg.metric = m;
  cfg.scatter = sums != nullptr;
  // c_norm through TMA (cn_in_stage) needs its address 16-byte aligned and its row stride a multiple of 16
  // bytes: K a multiple of 4, or B = 1 (the one row's stride is never used, so it is passed rounded up).
  // Otherwise the consumers load it from global, as without cn_in_stage (same results).
  const bool cn_tma = c_norm && reinterpret_cast<std::uintptr_t>(c_norm) % 16 == 0 && (B == 1 || K % 4 == 0);
  if (!cn_tma) cfg.cn_in_stage = false;
  if (const char* why = cfg.invalid()) throw jit::argument_error(std::string(who) + ": the forced schedule is invalid: " + why);
  if (cfg.mma_probe && !probe)
    throw jit::argument_error(std::string(who) + ": config.mma_probe is a timing probe (its idx is not the assignment): call kmeans::probe::assign_mma_probe");
  if (cfg.parts * 64 < D)
    throw jit::argument_error(std::string(who) + ": config.parts = " + std::to_string(cfg.parts) + " covers " + std::to_string(cfg.parts * 64) +
                              " columns, fewer than D = " + std::to_string(D));
  check_hopper(who, device);
  const runtime_kernel& k = assign_kernel(cfg, t, device);
  std::vector<tensor_arg> args = {tensor_view(x, {B, N, D}), tensor_view(c, {B, K, D})};
  if (m != metric::inner_product) args.push_back(B == 1 ? tensor_view(c_norm, {1, K}, {(K + 3) / 4 * 4, 1}) : tensor_view(c_norm, {B, K}));
  args.push_back(tensor_view(idx, {B, N, 1}));
  if (sums) {
    args.push_back(tensor_view(sums, {B * K, D}));
    args.push_back(tensor_view(counts, {B * K, 1}));
  }
  k.launch(args, {}, stream);
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

namespace probe {
// config with mma_probe: the schedule's MMAs and loads with a row min in place of the argmin (idx all 0), so
// that what the argmin costs can be timed (cake_bench_kmeans --probe). Not an assignment.
inline void assign_mma_probe(kernels::kmeans_assign_config config, const void* x, const void* c, const float* c_norm, std::int32_t* idx, long long B,
                             long long N, long long K, long long D, input_type t, metric m = metric::l2, CUstream stream = nullptr, int device = 0) {
  config.mma_probe = true;
  detail::run_assign(&config, x, c, c_norm, idx, B, N, K, D, t, m, stream, device, true);
}
}  // namespace probe

namespace detail {

constexpr kernels::kmeans_norm_form norm_form(metric m) {
  return m == metric::l2 ? kernels::kmeans_norm_form::l2 : m == metric::cosine ? kernels::kmeans_norm_form::cosine : kernels::kmeans_norm_form::none;
}

// The update's kernels (scatter, finalize, norms; the sorted update's count, offsets, place and segment
// sums) for a part count, type, norm form and device.
enum class update_kernel { scatter, finalize, norms, count, offsets, place, segment_sum };
inline const runtime_kernel& update_kernel_for(update_kernel which, int parts, input_type t, kernels::kmeans_norm_form f, int device,
                                               kernels::kmeans_sums sums = kernels::kmeans_sums::f32_atomic) {
  using key = std::tuple<update_kernel, int, input_type, kernels::kmeans_norm_form, int, kernels::kmeans_sums>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{which, parts, t, f, device, sums}, [&] {
    auto build = [&]<class In>() {
      switch (which) {
        case update_kernel::scatter: return kernels::kmeans_scatter_program<In>(parts, target_id::sm_90a, sums);
        case update_kernel::finalize: return kernels::kmeans_finalize_program<In>(parts, f, target_id::sm_90a, sums);
        case update_kernel::count: return kernels::kmeans_count_program();
        case update_kernel::offsets: return kernels::kmeans_offsets_program();
        case update_kernel::place: return kernels::kmeans_place_program<In>(parts);
        case update_kernel::segment_sum: return kernels::kmeans_segment_sum_program<In>(parts);
        default: return kernels::kmeans_norms_program<In>(parts, f);
      }
    };
    const program p = t == input_type::f16 ? build.template operator()<f16>() : build.template operator()<bf16>();
    if (!p.errors.empty())
      throw jit::error("cake::kmeans: the update schedule for " + std::to_string(parts) + " parts is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

inline int parts_for(long long D) { return static_cast<int>((D + 63) / 64); }

}  // namespace detail

// Bytes of device workspace cake::kmeans::update needs: the sums [B, K, D] (8 bytes each: i64 for the
// deterministic update, f32 in the first half otherwise) and f32 counts [B, K].
constexpr long long update_workspace_bytes(long long B, long long K, long long D) { return 8 * B * K * D + 4 * B * K; }

// How update adds the points of a cluster: scatter-adds every point into its cluster's sums (f32 atomics,
// or i64 with `deterministic`), or sorts the points by cluster first (a counting sort: count, offsets by a
// row scan, placement by an atomic slot per point) and then sums each cluster's contiguous rows, one
// atomic add per cluster and chunk of 256 rows (kernels/kmeans/update.hpp, "the sorted update"). Both give
// the same means up to
// the f32 rounding of the sums' order; docs/kmeans.md has both measured.
enum class update_method { scatter, sorted };
constexpr const char* to_string(update_method m) { return m == update_method::scatter ? "scatter" : "sorted"; }

// How update (and fit) add the points of a cluster.
struct update_options {
  // false: f32 atomics, fastest; the order in which they land changes the sums' last bits from run to run,
  // so a centroid can round differently and a later assignment can differ. true: i64 fixed-point sums
  // (x * 2^e rounded to integers, added exactly): the same bits on every run, for any launch order.
  bool deterministic = false;
  // deterministic only: a bound on |x| over the points (the largest finite value of the input type when 0:
  // right for f16, whose 65504 costs nothing; bf16 needs the data's bound, e.g. max |x| from the caller,
  // since bf16's 3.4e38 would leave no fraction bits). Values past it saturate: the bound must hold.
  float max_abs = 0;
  // scatter (the default; step fuses it into the assignment for D > 64) or sorted (its workspace:
  // sorted_update_workspace_bytes, which counts the points' sorted copy). sorted with deterministic is
  // refused: the order of the points inside a cluster is that of the atomics that placed them.
  update_method method = update_method::scatter;
};

// Bytes of device workspace the sorted update needs: update_workspace_bytes' sums and counts, the
// clusters' first rows and cursors (i32 [B, K] each), the points' cluster rows in sorted order (i32
// [B, N]) and the points in cluster order ([B, N, D] of the input type, 2 bytes each), every part 16-byte
// aligned.
constexpr long long round16(long long b) { return (b + 15) / 16 * 16; }
constexpr long long sorted_update_workspace_bytes(long long B, long long N, long long K, long long D) {
  return round16(update_workspace_bytes(B, K, D)) + 2 * round16(4 * B * K) + round16(4 * B * N) + 2 * B * N * D;
}

// The fixed point of the deterministic sums: the unit 2^-e with e the largest exponent such that N points
// of magnitude up to max_abs sum below 2^62 in i64 (N * 2^ceil(log2 max_abs) * 2^e <= 2^62), clamped to
// f32's normal range so that 2^e and 2^-e are exact. f16 at N <= 2^22: e >= 24, every f16 value is an
// integer multiple of 2^-24, so the sums are exact.
inline int fixed_point_exponent(long long N, float max_abs) {
  int lg_n = 0;
  while ((1LL << lg_n) < N) ++lg_n;
  int lg_x = -126;
  while (lg_x < 128 && std::ldexp(1.0, lg_x) < static_cast<double>(max_abs)) ++lg_x;
  const int e = 62 - lg_n - lg_x;
  return e < -126 ? -126 : e > 126 ? 126 : e;
}

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

namespace detail {
// The fixed-point exponent of the deterministic update (refusing a bf16 call with no bound on |x|).
inline int update_exponent(const char* who, long long N, input_type t, const update_options& o) {
  if (!o.deterministic) return 0;
  if (!(o.max_abs >= 0) || !std::isfinite(o.max_abs))
    throw jit::argument_error(std::string(who) + ": options.max_abs = " + std::to_string(o.max_abs) + " must be a finite bound on |x|, at least 0");
  if (t == input_type::bf16 && o.max_abs == 0)
    throw jit::argument_error(std::string(who) +
                              ": the deterministic update of bf16 points needs options.max_abs, a bound on |x| (bf16's largest value, 3.4e38, would "
                              "leave the fixed-point sums no fraction bits); pass the data's max |x|");
  return fixed_point_exponent(N, o.max_abs > 0 ? o.max_abs : 65504.0f);
}
}  // namespace detail

namespace detail {
// Checks update's and step's arguments (all before the first launch: a refusal must not leave half the work
// enqueued); returns the fixed-point exponent of the deterministic sums (0 otherwise).
inline int check_update(const char* who, const void* x, const void* idx, const void* c, const float* c_norm, const float* shift, const void* workspace, long long B,
                        long long N, long long K, long long D, input_type t, metric m, const update_options& options, int device) {
  check_shape(who, B, N, K, D);
  const int e = update_exponent(who, N, t, options);
  if (options.method == update_method::sorted && options.deterministic)
    throw jit::argument_error(std::string(who) + ": the sorted update is not deterministic (a cluster's points are summed in the order their atomics placed "
                                                 "them): use method scatter with deterministic");
  if (options.method == update_method::sorted && B * N > (1LL << 24))
    throw jit::argument_error(std::string(who) + ": B * N = " + std::to_string(B * N) + " is past 2^24 (the sorted update computes positions in f32)");
  if (B * K > (1LL << 24))
    throw jit::argument_error(std::string(who) + ": B * K = " + std::to_string(B * K) + " is past 2^24 (the scatter computes its row in f32)");
  check_pointer(who, "x", x, 16);
  check_pointer(who, "idx", idx, 4);
  check_pointer(who, "c", c, 16);
  if (m != metric::inner_product) check_pointer(who, "c_norm", c_norm, 4);
  check_pointer(who, "shift", shift, 4);
  check_pointer(who, "workspace", workspace, 16);
  check_hopper(who, device);
  return e;
}

// The workspace's sums (f32 in its first half, or i64 over all of it) and counts, zeroed on `stream`.
struct update_workspace {
  void* sums;
  float* counts;
};
inline update_workspace zero_workspace(void* workspace, long long B, long long K, long long D, bool deterministic, CUstream stream, int device) {
  update_workspace w{workspace, reinterpret_cast<float*>(static_cast<char*>(workspace) + 8 * B * K * D)};
  const long long zeroed = (deterministic ? 8 : 4) * B * K * D;  // the sums the scatter adds into
  const auto& drv = jit::driver::get();
  drv.bind(device);
  drv.check(drv.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(workspace), 0, static_cast<std::size_t>(zeroed), stream), "cuMemsetD8Async",
            "zeroing the k-means update's sums");
  drv.check(drv.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(w.counts), 0, static_cast<std::size_t>(4 * B * K), stream), "cuMemsetD8Async",
            "zeroing the k-means update's counts");
  return w;
}

// The finalize: means (empty clusters kept) written into c, c_norm, shift.
inline void finalize(const update_workspace& w, void* c, float* c_norm, float* shift, long long B, long long K, long long D, input_type t, metric m,
                     const update_options& options, int e, CUstream stream, int device) {
  const auto sums_mode = options.deterministic ? kernels::kmeans_sums::i64_fixed : kernels::kmeans_sums::f32_atomic;
  const auto& k = update_kernel_for(update_kernel::finalize, parts_for(D), t, norm_form(m), device, sums_mode);
  const std::vector<double> scalars = options.deterministic ? std::vector<double>{std::ldexp(1.0, -e)} : std::vector<double>{};
  std::vector<tensor_arg> args = {tensor_view(w.sums, {B * K, D}), tensor_view(w.counts, {B * K}), tensor_view(c, {B * K, D})};
  if (m != metric::inner_product) args.push_back(tensor_view(c_norm, {B * K}));
  args.push_back(tensor_view(shift, {B * K}));
  k.launch(args, scalars, stream);
}
}  // namespace detail

namespace detail {
// The sorted update's parts of the workspace (sorted_update_workspace_bytes).
struct sorted_workspace {
  update_workspace w;  // sums (f32) and counts, at update_workspace's offsets
  std::int32_t* start;
  std::int32_t* cursor;
  std::int32_t* ids;
  void* xs;
};
inline sorted_workspace sorted_parts(void* workspace, long long B, long long N, long long K, long long D) {
  char* base = static_cast<char*>(workspace);
  const long long s = round16(update_workspace_bytes(B, K, D)), c = s + round16(4 * B * K), i = c + round16(4 * B * K), x = i + round16(4 * B * N);
  return {{workspace, reinterpret_cast<float*>(base + 8 * B * K * D)}, reinterpret_cast<std::int32_t*>(base + s), reinterpret_cast<std::int32_t*>(base + c),
          reinterpret_cast<std::int32_t*>(base + i), base + x};
}
// The sorted update: counts, offsets, placement, segment sums (into zeroed sums), then the finalize.
inline void sorted_update(const void* x, const std::int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, long long B,
                          long long N, long long K, long long D, input_type t, metric m, const update_options& options, CUstream stream, int device) {
  // (check_update refused deterministic and B * N past 2^24)
  const int parts = parts_for(D);
  const auto& count = update_kernel_for(update_kernel::count, parts, t, norm_form(m), device);
  const auto& offsets = update_kernel_for(update_kernel::offsets, parts, t, norm_form(m), device);
  const auto& place = update_kernel_for(update_kernel::place, parts, t, norm_form(m), device);
  const auto& segsum = update_kernel_for(update_kernel::segment_sum, parts, t, norm_form(m), device);
  const sorted_workspace s = sorted_parts(workspace, B, N, K, D);
  const auto& drv = jit::driver::get();
  drv.bind(device);
  drv.check(drv.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(s.w.counts), 0, static_cast<std::size_t>(4 * B * K), stream), "cuMemsetD8Async",
            "zeroing the k-means update's counts");
  drv.check(drv.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(s.w.sums), 0, static_cast<std::size_t>(4 * B * K * D), stream), "cuMemsetD8Async",
            "zeroing the k-means update's sums");
  const double k[] = {static_cast<double>(K)}, n[] = {static_cast<double>(N)};
  {
    const tensor_arg args[] = {tensor_view(idx, {B, N, 1}), tensor_view(s.w.counts, {B * K, 1})};
    count.launch(args, k, stream);
  }
  {
    const tensor_arg args[] = {tensor_view(s.w.counts, {B, K}), tensor_view(s.start, {B, K}), tensor_view(s.cursor, {B, K})};
    offsets.launch(args, n, stream);
  }
  {
    const tensor_arg args[] = {tensor_view(x, {B, N, D}), tensor_view(idx, {B, N, 1}), tensor_view(s.cursor, {B * K, 1}), tensor_view(s.xs, {B * N, D}),
                               tensor_view(s.ids, {B * N, 1})};
    place.launch(args, k, stream);
  }
  {
    const tensor_arg args[] = {tensor_view(s.xs, {B * N, D}), tensor_view(s.ids, {B * N, 1}), tensor_view(s.start, {B * K, 1}),
                               tensor_view(s.cursor, {B * K, 1}), tensor_view(s.w.sums, {B * K, D})};
    segsum.launch(args, {}, stream);
  }
  finalize(s.w, c, c_norm, shift, B, K, D, t, m, options, 0, stream, device);
}
}  // namespace detail

// One centroid update after an assignment (see the top of this header).
inline void update(const void* x, const std::int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, long long B, long long N, long long K,
                   long long D, input_type t, metric m, const update_options& options, CUstream stream = nullptr, int device = 0) {
  const char* who = "cake::kmeans::update";
  const int e = detail::check_update(who, x, idx, c, c_norm, shift, workspace, B, N, K, D, t, m, options, device);
  if (options.method == update_method::sorted) return detail::sorted_update(x, idx, c, c_norm, shift, workspace, B, N, K, D, t, m, options, stream, device);
  const auto sums_mode = options.deterministic ? kernels::kmeans_sums::i64_fixed : kernels::kmeans_sums::f32_atomic;
  const auto& scatter = detail::update_kernel_for(detail::update_kernel::scatter, detail::parts_for(D), t, detail::norm_form(m), device, sums_mode);
  const auto w = detail::zero_workspace(workspace, B, K, D, options.deterministic, stream, device);
  const std::vector<double> scatter_scalars = options.deterministic ? std::vector<double>{static_cast<double>(K), std::ldexp(1.0, e)}
                                                                    : std::vector<double>{static_cast<double>(K)};
  const tensor_arg args[] = {tensor_view(x, {B, N, D}), tensor_view(idx, {B, N, 1}), tensor_view(w.sums, {B * K, D}), tensor_view(w.counts, {B * K, 1})};
  scatter.launch(args, scatter_scalars, stream);
  detail::finalize(w, c, c_norm, shift, B, K, D, t, m, options, e, stream, device);
}
inline void update(const void* x, const std::int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, long long B, long long N, long long K,
                   long long D, input_type t, metric m = metric::l2, CUstream stream = nullptr, int device = 0) {
  update(x, idx, c, c_norm, shift, workspace, B, N, K, D, t, m, update_options{}, stream, device);
}

// Whether step fuses the update's scatter into the assignment at width D. On the H200 (cake_bench_kmeans
// --step, 2026-12-04, with c_norm in the centroid stages) the fused step against assign + update: 1.15-1.17x
// at K = 1,024, 1.02-1.06x at K = 4,096, 1.01x at K = 65,536 (D = 128), 1.06x held out at D = 96 and
// 1.16-1.21x at D = 256, but 0.85-0.86x at D = 64 (B = 8, K = 16,384: the fused kernel 12.4 ms, the
// assignment alone 10.0); why the one-part kernel loses is not understood (docs/kmeans.md), so D <= 64
// keeps the two calls.
constexpr bool fuse_scatter(long long D) { return D > 64; }

namespace detail {
// step with the fusion decided by the caller (fuse: the scatter in the assignment unless deterministic);
// cake_bench_kmeans --step times the fused kernel at every D with it.
inline void run_step(bool fuse, const void* x, void* c, std::int32_t* idx, float* c_norm, float* shift, void* workspace, long long B, long long N,
                     long long K, long long D, input_type t, metric m, const update_options& options, CUstream stream, int device) {
  const char* who = "cake::kmeans::step";
  const int e = detail::check_update(who, x, idx, c, c_norm, shift, workspace, B, N, K, D, t, m, options, device);
  if (options.deterministic || !fuse || options.method == update_method::sorted) {  // (the sorted update is not fused)
    assign(x, c, m == metric::inner_product ? nullptr : c_norm, idx, B, N, K, D, t, m, stream, device);
    update(x, idx, c, c_norm, shift, workspace, B, N, K, D, t, m, options, stream, device);
    return;
  }
  const auto w = detail::zero_workspace(workspace, B, K, D, false, stream, device);
  detail::run_assign(nullptr, x, c, c_norm, idx, B, N, K, D, t, m, stream, device, false, static_cast<float*>(w.sums), w.counts);
  detail::finalize(w, c, c_norm, shift, B, K, D, t, m, options, e, stream, device);
}
}  // namespace detail

// One Lloyd iteration: idx = assign(x, c), then c, c_norm, shift = update(x, idx, ...), the same results as
// the two calls (c_norm must hold the norms of c on entry, as for assign). With f32 sums (the default) the
// update's scatter is fused into the assignment (kmeans_assign_config::scatter): each CTA adds its points
// into the sums while they are still in its shared memory, so the points are read once and the reductions
// overlap the distance GEMM; three launches (memset, assign + scatter, finalize) instead of four. The
// deterministic sums, and D <= 64 (fuse_scatter), keep the two calls.
inline void step(const void* x, void* c, std::int32_t* idx, float* c_norm, float* shift, void* workspace, long long B, long long N, long long K, long long D,
                 input_type t, metric m, const update_options& options, CUstream stream = nullptr, int device = 0) {
  detail::run_step(fuse_scatter(D), x, c, idx, c_norm, shift, workspace, B, N, K, D, t, m, options, stream, device);
}
inline void step(const void* x, void* c, std::int32_t* idx, float* c_norm, float* shift, void* workspace, long long B, long long N, long long K, long long D,
                 input_type t, metric m = metric::l2, CUstream stream = nullptr, int device = 0) {
  step(x, c, idx, c_norm, shift, workspace, B, N, K, D, t, m, update_options{}, stream, device);
}

// `iterations` Lloyd iterations (step) from the centroids in c; no host synchronization.
inline void fit(const void* x, void* c, std::int32_t* idx, float* c_norm, float* shift, void* workspace, long long B, long long N, long long K, long long D,
                input_type t, metric m, int iterations, const update_options& options, CUstream stream = nullptr, int device = 0) {
  // Every argument is checked before the first launch (a refusal must not leave half the work enqueued).
  const char* who = "cake::kmeans::fit";
  if (iterations < 1) throw jit::argument_error(std::string(who) + ": iterations = " + std::to_string(iterations) + " must be at least 1");
  (void)detail::check_update(who, x, idx, c, c_norm, shift, workspace, B, N, K, D, t, m, options, device);
  norms(c, c_norm, B, K, D, t, m, stream, device);
  for (int it = 0; it < iterations; ++it) step(x, c, idx, c_norm, shift, workspace, B, N, K, D, t, m, options, stream, device);
}
inline void fit(const void* x, void* c, std::int32_t* idx, float* c_norm, float* shift, void* workspace, long long B, long long N, long long K, long long D,
                input_type t, metric m, int iterations, CUstream stream = nullptr, int device = 0) {
  fit(x, c, idx, c_norm, shift, workspace, B, N, K, D, t, m, iterations, update_options{}, stream, device);
}

}  // namespace cake::kmeans
