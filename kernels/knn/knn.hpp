#pragma once
// cake::knn: exact k-nearest-neighbour search, the entry point an engine calls, on device pointers.
//
//   cake::knn::search(queries, database, distances, indices, workspace, Q, N, D, k, type, metric, stream, device)
//       for every query i, its k best database vectors, best first:
//         l2:            the k smallest squared distances |x|^2 + |y|^2 - 2 x.y (f32)
//         inner_product: the k largest x.y (f32)
//       distances[i, j] (f32 [Q, k]) and indices[i, j] (i32 [Q, k]: rows of the database). Ties go to the
//       lowest index. With k > N the entries past N are empty: distance +inf (l2) / -inf (inner product)
//       and index -1.
//
// queries [Q, D] and database [N, D] are row-major and contiguous, both of `type` (f16 or bf16), 16-byte
// aligned; D is 8 .. 512 and a multiple of 8 (TMA rows; columns past D inside a 64-column part are
// zero-filled and add nothing); 1 <= k <= 256; N < 2^31 - 1 (i32 indices; 0x7fffffff marks an empty
// entry). workspace: at least search_workspace_bytes(Q, N, D, k, metric) bytes of device memory, 256-byte
// aligned (norms and the splits' partial lists).
//
// Three kernels: the norms |y|^2 and |x|^2 (l2 only; cake::kmeans::norms), the search (kernels/knn/
// search.hpp: distance GEMM on wgmma + the per-row top-k of the language, over one split of the
// database per CTA) and the merge of the splits (kernels/knn/merge.hpp). Each is JIT-compiled once per
// schedule, type and device; all are enqueued on `stream` without a host synchronization. Needs a Hopper
// device (cc 9.0). docs/knn.md says how it works.
//
// This header lives in the kernel corpus (kernels/knn/): include it as "kernels/knn/knn.hpp". Link cake::jit.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <cake/runtime/kernel.hpp>
#include <cake/runtime/kernel_table.hpp>

#include "kernels/kmeans/kmeans.hpp"
#include "merge.hpp"
#include "search.hpp"

namespace cake::knn {

using metric = kernels::knn_metric;
using input_type = kmeans::input_type;

constexpr long long max_dim = 512;
constexpr int max_k = 256;
// The grid the IVF scan's split aims at: two CTAs per SM of an H200 (132 SMs). Measured against one wave
// (2026-12-02): one wave was 6-25% slower on the IVF bench, so the scan keeps two.
constexpr long long target_ctas = 2 * 132;
// The grid the exact search's split aims at: one wave, a CTA per SM of an H200 (one search CTA fills an
// SM's shared memory). Every split keeps its own top-k lists, so each extra split re-admits about
// k (1 + ln(tiles / k)) candidates per query; on the H200 the search ran 2.4x (k = 10) and 2.5x
// (k = 100) faster at one wave than at four (bench/results/h200/knn_sweep.json).
constexpr long long search_ctas = 132;

namespace detail {
// Does the search schedule fit the target's shared memory (the plan derives it, lists included)? Building
// the Program to ask takes host time, so every answer is kept (search_config_for runs on every call).
inline bool search_fits(const kernels::knn_search_config& c) {
  static std::mutex m;
  static std::map<kernels::knn_search_config, bool> known;
  {
    std::lock_guard lock(m);
    if (auto it = known.find(c); it != known.end()) return it->second;
  }
  const program p = kernels::knn_search_sm90<bf16>(c);
  const bool fits = p.errors.empty() && plan::plan_smem(p).fits();
  std::lock_guard lock(m);
  known.emplace(c, fits);
  return fits;
}
}  // namespace detail

// The search schedule for a shape, from the H200 sweep (docs/knn.md, "The schedule"). Warpgroups and
// rows: the first of 2 x 64 / 1 x 64 rows (bn 128, then 64) whose lists (which grow with k), queries tile
// (with D) and database stages fit in shared memory with a pipeline of at least min(3, 2 * parts)
// stages, then up to 8 stages (depth moved no schedule by more than 1%, while bn 128 with 3 stages ran
// 11% faster than bn 64 with 7 at k = 100). 64 rows per warpgroup, not 128: a warp
// then holds 16 rows, not 32, so fewer of its folds find a candidate and take the slow path (2 x 128
// rows measured 1.8x slower at k = 10). Splits: the largest power of two that keeps the grid within
// search_ctas (one wave), at least 1, at most 64 and at most one per 8 database tiles.
inline kernels::knn_search_config search_config_for(long long Q, long long N, long long D, int k, metric m) {
  kernels::knn_search_config c;
  c.metric = m;
  c.k = k;
  c.parts = static_cast<int>((D + 63) / 64);
  const int need = 2 * c.parts < 3 ? 2 * c.parts : 3;
  struct shape {
    int wgs, rows, bn;
  };
  bool found = false;
  for (const shape s : {shape{2, 64, 128}, shape{2, 64, 64}, shape{1, 64, 128}, shape{1, 64, 64}}) {
    c.wgs = s.wgs, c.rows = s.rows, c.bn = s.bn, c.stages = need;
    if (!detail::search_fits(c)) continue;
    while (c.stages < 8) {
      ++c.stages;
      if (!detail::search_fits(c)) {
        --c.stages;
        break;
      }
    }
    found = true;
    break;
  }
  if (!found) c.wgs = 1, c.rows = 64, c.bn = 64, c.stages = 2;  // the analyzer reports what does not fit
  const long long q_tiles = (Q + c.wgs * c.rows - 1) / (c.wgs * c.rows);
  const long long db_tiles = (N + c.bn - 1) / c.bn;
  long long s = 1;
  while (s < 64 && q_tiles * (s * 2) <= search_ctas && 8 * (s * 2) <= db_tiles) s *= 2;
  c.splits = static_cast<int>(s);
  return c;
}

// The merge schedule for k and a metric.
constexpr kernels::knn_merge_config merge_config_for(int k, metric m) {
  kernels::knn_merge_config c;
  c.k = k;
  c.metric = m;
  return c;
}

namespace detail {
constexpr long long align256(long long b) { return (b + 255) / 256 * 256; }
// Workspace layout: |y|^2 [N] and |x|^2 [Q] (l2), then the partial lists f32 and i32 [Q, splits, k].
struct workspace_layout {
  long long db_norm = 0, q_norm = 0, part_dist = 0, part_idx = 0, bytes = 0;
};
inline workspace_layout layout_for(long long Q, long long N, int k, int splits, metric m) {
  workspace_layout w;
  long long at = 0;
  if (m == metric::l2) {
    w.db_norm = at, at += align256(4 * N);
    w.q_norm = at, at += align256(4 * Q);
  }
  w.part_dist = at, at += align256(4 * Q * splits * k);
  w.part_idx = at, at += align256(4 * Q * splits * k);
  w.bytes = at;
  return w;
}

inline void check_shape(const char* who, long long Q, long long N, long long D, int k) {
  auto bad = [&](const std::string& why) { throw jit::argument_error(std::string(who) + ": " + why); };
  if (Q < 1) bad("Q = " + std::to_string(Q) + " must be at least 1");
  if (N < 1) bad("N = " + std::to_string(N) + " must be at least 1");
  if (N >= (1LL << 31) - 1) bad("N = " + std::to_string(N) + " does not fit the i32 indices (at most 2^31 - 2)");
  if (k < 1 || k > max_k) bad("k = " + std::to_string(k) + " must be in 1 .. " + std::to_string(max_k));
  if (D < 8 || D > max_dim || D % 8 != 0)
    bad("D = " + std::to_string(D) + " must be a multiple of 8 in 8 .. " + std::to_string(max_dim) + " (rows of 16-byte multiples for TMA)");
  if (Q > (1LL << 40) / D || N > (1LL << 40) / D) bad("Q * D or N * D is past 2^40 elements");
}

inline const runtime_kernel& search_kernel(const kernels::knn_search_config& c, input_type t, int device) {
  using key = std::tuple<kernels::knn_search_config, input_type, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, t, device}, [&] {
    const program p = t == input_type::f16 ? kernels::knn_search_sm90<f16>(c) : kernels::knn_search_sm90<bf16>(c);
    if (!p.errors.empty())
      throw jit::error("cake::knn::search: the schedule for k = " + std::to_string(c.k) + " is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}
inline const runtime_kernel& merge_kernel(const kernels::knn_merge_config& c, int device) {
  using key = std::tuple<kernels::knn_merge_config, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, device}, [&] {
    const program p = kernels::knn_merge_program(c);
    if (!p.errors.empty())
      throw jit::error("cake::knn::search: the merge schedule for k = " + std::to_string(c.k) + " is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

inline void run_search(const kernels::knn_search_config* forced, const void* queries, const void* database, float* distances, std::int32_t* indices,
                       void* workspace, long long Q, long long N, long long D, int k, input_type t, metric m, CUstream stream, int device) {
  const char* who = "cake::knn::search";
  check_shape(who, Q, N, D, k);
  kmeans::detail::check_pointer(who, "queries", queries, 16);
  kmeans::detail::check_pointer(who, "database", database, 16);
  kmeans::detail::check_pointer(who, "distances", distances, 4);
  kmeans::detail::check_pointer(who, "indices", indices, 4);
  kmeans::detail::check_pointer(who, "workspace", workspace, 256);
  kernels::knn_search_config c = forced ? *forced : search_config_for(Q, N, D, k, m);
  c.metric = m;
  c.k = k;
  if (c.parts * 64 < D)
    throw jit::argument_error(std::string(who) + ": config.parts = " + std::to_string(c.parts) + " covers " + std::to_string(c.parts * 64) +
                              " columns, fewer than D = " + std::to_string(D));
  kmeans::detail::check_hopper(who, device);
  const auto w = layout_for(Q, N, k, c.splits, m);
  auto* base = static_cast<unsigned char*>(workspace);
  auto* db_norm = reinterpret_cast<float*>(base + w.db_norm);
  auto* q_norm = reinterpret_cast<float*>(base + w.q_norm);
  auto* part_dist = reinterpret_cast<float*>(base + w.part_dist);
  auto* part_idx = reinterpret_cast<std::int32_t*>(base + w.part_idx);
  // Everything is checked and both kernels built before the first launch (a refusal enqueues nothing).
  const runtime_kernel& search = search_kernel(c, t, device);
  const runtime_kernel& merge = merge_kernel(merge_config_for(k, m), device);
  if (m == metric::l2) {
    kmeans::norms(database, db_norm, 1, N, D, t, kmeans::metric::l2, stream, device);
    kmeans::norms(queries, q_norm, 1, Q, D, t, kmeans::metric::l2, stream, device);
  }
  const long long S = c.splits;
  const tensor_arg xa = tensor_view(queries, {Q, D}), ya = tensor_view(database, {N, D});
  const tensor_arg pd = tensor_view(part_dist, {Q, S, k}), pi = tensor_view(part_idx, {Q, S, k});
  if (m == metric::l2) {
    const tensor_arg args[] = {xa, ya, tensor_view(db_norm, {N}), pd, pi};
    search.launch(args, {}, stream);
  } else {
    const tensor_arg args[] = {xa, ya, pd, pi};
    search.launch(args, {}, stream);
  }
  const tensor_arg md = tensor_view(part_dist, {Q, S * k}), mi = tensor_view(part_idx, {Q, S * k});
  const tensor_arg od = tensor_view(distances, {Q, k}), oi = tensor_view(indices, {Q, k});
  if (m == metric::l2) {
    const tensor_arg args[] = {md, mi, tensor_view(q_norm, {Q, 1}), od, oi};
    merge.launch(args, {}, stream);
  } else {
    const tensor_arg args[] = {md, mi, od, oi};
    merge.launch(args, {}, stream);
  }
}
}  // namespace detail

// Bytes of device workspace search needs for this shape (with the schedule search_config_for picks).
inline long long search_workspace_bytes(long long Q, long long N, long long D, int k, metric m = metric::l2) {
  detail::check_shape("cake::knn::search_workspace_bytes", Q, N, D, k);
  return detail::layout_for(Q, N, k, search_config_for(Q, N, D, k, m).splits, m).bytes;
}
// The same for an explicit schedule (search_with).
inline long long search_workspace_bytes_with(const kernels::knn_search_config& config, long long Q, long long N, long long D, int k, metric m = metric::l2) {
  detail::check_shape("cake::knn::search_workspace_bytes", Q, N, D, k);
  return detail::layout_for(Q, N, k, config.splits, m).bytes;
}

// The k best database rows of every query (see the top of this header).
inline void search(const void* queries, const void* database, float* distances, std::int32_t* indices, void* workspace, long long Q, long long N,
                   long long D, int k, input_type t, metric m = metric::l2, CUstream stream = nullptr, int device = 0) {
  detail::run_search(nullptr, queries, database, distances, indices, workspace, Q, N, D, k, t, m, stream, device);
}
// The same with an explicit search schedule (tuning): config.parts * 64 >= D; config.k and config.metric
// are replaced by k and m; the workspace is search_workspace_bytes_with(config, ...).
inline void search_with(const kernels::knn_search_config& config, const void* queries, const void* database, float* distances, std::int32_t* indices,
                        void* workspace, long long Q, long long N, long long D, int k, input_type t, metric m = metric::l2, CUstream stream = nullptr,
                        int device = 0) {
  detail::run_search(&config, queries, database, distances, indices, workspace, Q, N, D, k, t, m, stream, device);
}

}  // namespace cake::knn
