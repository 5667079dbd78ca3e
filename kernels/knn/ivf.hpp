#pragma once
// cake::knn IVF-Flat: an inverted-file index over a database (k-means lists, vectors stored flat, in list
// order) and its approximate search.
//
//   cake::knn::ivf_index idx = cake::knn::ivf_build(database, N, D, nlist, type, metric, seed, iterations,
//                                                   stream, device)
//       k-means (cake::kmeans::fit, l2) of the whole database into nlist centroids, from nlist distinct
//       database rows picked by `seed`; then every vector's list (cake::kmeans::assign to the final
//       centroids), the lists' sizes and offsets, and the database copied in list order with the
//       original row of every position (ids). The index owns its device buffers (RAII).
//   cake::knn::ivf_search(idx, queries, distances, indices, workspace, Q, k, nprobe, stream)
//       per query: the nprobe lists whose centroids are nearest (exact, l2: cake::knn::search against
//       the centroids), then (the list scan, by list or per query: ivf_scan_mode) the k best vectors of
//       those lists in the index's metric (l2: smallest
//       squared distance; inner_product: largest x.y), best first: distances f32 [Q, k] and indices i32
//       [Q, k] (original database rows; ties to the lowest position in list order; entries past the
//       candidates: index -1, distance +inf / -inf). workspace: ivf_search_workspace_bytes(...). By
//       list, the queries are first sorted by their nearest list on the device (so that a tile of 64
//       queries scans few lists) and the results put back in their order.
//
// Limits: D 8 .. 512, a multiple of 8; 1 <= nlist <= N; N <= 2^24 (ids pass through the f32 register
// path of the row gather); 1 <= k <= 256; 1 <= nprobe <= min(nlist, 256) (the coarse step is the exact
// top-k). With nprobe = nlist every list is scanned: the result is the exact search's (up to ties).
//
// Where it runs: everything on the device and on `stream`, except one step of the build: the lists'
// offsets and the order of the vectors (a counting sort of the assignment) are computed on the host from
// a copy of the assignment (4 N bytes down, 4 (N + nlist) up, one stream synchronization): a stable sort
// (the sorted k-means update's device sort places by atomics, so its order inside a list varies from run
// to run, and with it the ties of a search). The copy of the database into list order is a Cake kernel (the row gather,
// kernels/knn/ivf_scan.hpp). docs/knn.md (IVF-Flat) says how it works and what is not done.
//
// Include as "kernels/knn/ivf.hpp"; link cake::jit.
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <cake/jit/device_memory.hpp>

#include "../kmeans/init.hpp"
#include "ivf_scan.hpp"
#include "knn.hpp"

namespace cake::knn {

constexpr long long ivf_max_rows = 1LL << 24;

// An IVF-Flat index: device buffers, owned. Move-only.
struct ivf_index {
  long long N = 0, D = 0, nlist = 0;
  input_type type = input_type::bf16;
  metric m = metric::l2;
  int device = 0;
  jit::device_buffer centroids;  // [nlist, D] of type
  jit::device_buffer offsets;    // i32 [nlist + 1]: list l owns positions offsets[l] .. offsets[l + 1] - 1
  jit::device_buffer ids;        // i32 [N]: the original row of each position
  jit::device_buffer data;       // [N, D] of type, in list order
  jit::device_buffer data_norm;  // f32 [N]: |y|^2 of data (l2)
  std::vector<std::int32_t> host_offsets;  // the same offsets on the host (list sizes for callers and tests)

  long long list_size(long long l) const { return host_offsets[static_cast<std::size_t>(l + 1)] - host_offsets[static_cast<std::size_t>(l)]; }
};

namespace detail {
// Does the scan schedule fit the target's shared memory (queries tile, database stages, top-k lists)?
inline bool scan_fits(const kernels::ivf_scan_config& c) {
  static std::mutex mu;
  static std::map<kernels::ivf_scan_config, bool> known;
  {
    std::lock_guard lock(mu);
    if (auto it = known.find(c); it != known.end()) return it->second;
  }
  const program p = kernels::ivf_scan_sm90<bf16>(c);
  const bool fits = p.errors.empty() && plan::plan_smem(p).fits();
  std::lock_guard lock(mu);
  known.emplace(c, fits);
  return fits;
}
}  // namespace detail

// How the fine step walks the lists (docs/knn.md, IVF-Flat): per_query, each query tile folds each of its
// queries' probed lists in turn (one useful row of 64 per list tile); by_list, each query tile walks the
// lists any of its queries probes, each once, folding every row whose query probes it (marks made by
// ivf_marks_program: Q * nlist f32 counts, exact while Q * nlist <= 2^24). automatic: by_list when the
// marks fit, else per_query.
enum class ivf_scan_mode { automatic, per_query, by_list };

constexpr long long ivf_marks_max = 1LL << 24;

// The fine step's schedule: one part per 64 columns; bn 64 (lists hold N / nlist rows: 1024 at 2^20 /
// 1024, so wider tiles would mostly be masked at list ends); the most stages that fit next to the queries
// tile and the lists, from 8 down to 1 (D 512 at k 256 leaves room for one); splits: the probe slots (by
// list: the lists) shared among enough CTAs that the grid has target_ctas CTAs, at most nprobe (nlist).
// Derived, not tuned.
inline kernels::ivf_scan_config ivf_scan_config_for(long long Q, long long D, int k, int nprobe, metric m, long long nlist,
                                                    ivf_scan_mode mode = ivf_scan_mode::automatic) {
  kernels::ivf_scan_config c;
  c.metric = m;
  c.k = k;
  c.parts = static_cast<int>((D + 63) / 64);
  c.bn = 64;
  c.by_list = mode == ivf_scan_mode::by_list || (mode == ivf_scan_mode::automatic && Q * nlist <= ivf_marks_max);
  c.splits = 1;
  for (c.stages = 8; c.stages > 1 && !detail::scan_fits(c); --c.stages) {
  }
  const long long q_tiles = (Q + kernels::ivf_scan_rows - 1) / kernels::ivf_scan_rows;
  const long long most = c.by_list ? nlist : nprobe;
  while (c.splits < most && q_tiles * c.splits < target_ctas) ++c.splits;
  return c;
}

namespace detail {

inline void ivf_check(const char* who, long long N, long long D) {
  auto bad = [&](const std::string& why) { throw jit::argument_error(std::string(who) + ": " + why); };
  if (N < 1) bad("N = " + std::to_string(N) + " must be at least 1");
  if (N > ivf_max_rows) bad("N = " + std::to_string(N) + " is past 2^24 (ids pass through the row gather's f32 registers)");
  if (D < 8 || D > max_dim || D % 8 != 0)
    bad("D = " + std::to_string(D) + " must be a multiple of 8 in 8 .. " + std::to_string(max_dim) + " (rows of 16-byte multiples for TMA)");
}

inline const runtime_kernel& ivf_scan_kernel(const kernels::ivf_scan_config& c, input_type t, int device) {
  using key = std::tuple<kernels::ivf_scan_config, input_type, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, t, device}, [&] {
    const program p = t == input_type::f16 ? kernels::ivf_scan_sm90<f16>(c) : kernels::ivf_scan_sm90<bf16>(c);
    if (!p.errors.empty())
      throw jit::error("cake::knn::ivf_search: the scan schedule for k = " + std::to_string(c.k) + " is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

inline const runtime_kernel& marks_kernel(int device) {
  static kernel_table<int, runtime_kernel> cache;
  return cache.get(device, [&] {
    const program p = kernels::ivf_marks_program();
    if (!p.errors.empty())
      throw jit::error("cake::knn::ivf_search: the marks schedule is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

// The by-list walk's query order (kernels::ivf_query_order_program).
inline const runtime_kernel& order_kernel(int device) {
  static kernel_table<int, runtime_kernel> cache;
  return cache.get(device, [&] {
    const program p = kernels::ivf_query_order_program();
    if (!p.errors.empty())
      throw jit::error("cake::knn::ivf_search: the query-order schedule is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

// The row gather (0: f16 rows, 1: bf16 rows, 2: i32 ids, fill -1) is the k-means initialization's
// (kernels/kmeans/init.hpp): one kernel table.
using kmeans::detail::gather_kernel;
using kmeans::detail::gather_rows;

inline const void* ptr(const jit::device_buffer& b) { return b.address(); }

}  // namespace detail

// nlist distinct rows of 0 .. N-1, from `seed`: the k-means initialization's draw (kmeans::initial_rows).
inline std::vector<std::int32_t> ivf_initial_rows(long long N, long long nlist, std::uint64_t seed) { return kmeans::initial_rows(N, nlist, seed); }

// The inverted lists of an assignment (list ids in 0 .. nlist - 1): offsets [nlist + 1] (exclusive prefix
// sum of the sizes, offsets[nlist] = N) and order [N] (the original rows by list, ascending within a list:
// a stable counting sort). Throws jit::error on an id outside 0 .. nlist - 1 (a broken assignment).
struct ivf_lists {
  std::vector<std::int32_t> offsets, order;
};
inline ivf_lists ivf_lists_of(const std::vector<std::int32_t>& assignment, long long nlist) {
  ivf_lists r;
  r.offsets.assign(static_cast<std::size_t>(nlist + 1), 0);
  for (const std::int32_t c : assignment) {
    if (c < 0 || c >= nlist) throw jit::error("cake::knn::ivf_build: the assignment gave list " + std::to_string(c) + " outside 0 .. " + std::to_string(nlist - 1));
    ++r.offsets[static_cast<std::size_t>(c) + 1];
  }
  for (long long l = 0; l < nlist; ++l) r.offsets[static_cast<std::size_t>(l + 1)] += r.offsets[static_cast<std::size_t>(l)];
  std::vector<std::int32_t> next(r.offsets.begin(), r.offsets.end() - 1);
  r.order.resize(assignment.size());
  for (std::size_t i = 0; i < assignment.size(); ++i) r.order[static_cast<std::size_t>(next[static_cast<std::size_t>(assignment[i])]++)] = static_cast<std::int32_t>(i);
  return r;
}

// The index of `database` [N, D] (see the top of this header). Synchronizes `stream` once (the lists).
inline ivf_index ivf_build(const void* database, long long N, long long D, long long nlist, input_type t, metric m = metric::l2, std::uint64_t seed = 0,
                           int iterations = 10, CUstream stream = nullptr, int device = 0) {
  const char* who = "cake::knn::ivf_build";
  detail::ivf_check(who, N, D);
  if (nlist < 1 || nlist > N)
    throw jit::argument_error(std::string(who) + ": nlist = " + std::to_string(nlist) + " must be in 1 .. N = " + std::to_string(N));
  if (iterations < 1) throw jit::argument_error(std::string(who) + ": iterations = " + std::to_string(iterations) + " must be at least 1");
  kmeans::detail::check_pointer(who, "database", database, 16);
  kmeans::detail::check_hopper(who, device);
  const auto& drv = jit::driver::get();
  drv.bind(device);
  const std::size_t esz = 2;
  ivf_index x;
  x.N = N, x.D = D, x.nlist = nlist, x.type = t, x.m = m, x.device = device;
  x.centroids = jit::device_buffer(static_cast<std::size_t>(nlist * D) * esz, device);
  x.offsets = jit::device_buffer(static_cast<std::size_t>(nlist + 1) * 4, device);
  x.ids = jit::device_buffer(static_cast<std::size_t>(N) * 4, device);
  x.data = jit::device_buffer(static_cast<std::size_t>(N * D) * esz, device);
  x.data_norm = jit::device_buffer(static_cast<std::size_t>(N) * 4, device);
  // k-means (l2) of the whole database, from nlist distinct rows.
  jit::device_buffer init = jit::to_device(ivf_initial_rows(N, nlist, seed), device);
  jit::device_buffer assign(static_cast<std::size_t>(N) * 4, device), c_norm(static_cast<std::size_t>(nlist) * 4, device),
      shift(static_cast<std::size_t>(nlist) * 4, device), work(static_cast<std::size_t>(kmeans::update_workspace_bytes(1, nlist, D)), device);
  detail::gather_rows(database, N, static_cast<const std::int32_t*>(init.address()), x.centroids.address(), nlist, D, false, t, stream, device);
  auto* a = static_cast<std::int32_t*>(assign.address());
  auto* cn = static_cast<float*>(c_norm.address());
  kmeans::fit(database, x.centroids.address(), a, cn, static_cast<float*>(shift.address()), work.address(), 1, N, nlist, D, t, kmeans::metric::l2, iterations,
              stream, device);
  kmeans::assign(database, x.centroids.address(), cn, a, 1, N, nlist, D, t, kmeans::metric::l2, stream, device);  // to the final centroids
  // The lists: a stable counting sort of the assignment, on the host (see the top of this header).
  drv.check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize", "waiting for the IVF assignment");
  ivf_lists lists = ivf_lists_of(assign.download<std::int32_t>(), nlist);
  x.host_offsets = std::move(lists.offsets);
  x.offsets.upload(x.host_offsets);
  x.ids.upload(lists.order);
  // The database in list order, and its norms.
  detail::gather_rows(database, N, static_cast<const std::int32_t*>(x.ids.address()), x.data.address(), N, D, false, t, stream, device);
  if (m == metric::l2) kmeans::norms(x.data.address(), static_cast<float*>(x.data_norm.address()), 1, N, D, t, kmeans::metric::l2, stream, device);
  // (the temporaries are freed at return: cuMemFree waits for the device to finish with them)
  drv.check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize", "finishing the IVF build");
  return x;
}

namespace detail {
// Workspace: the coarse search's workspace, the probes (f32 distances, i32 lists) [Q, nprobe], |x|^2 [Q],
// the partial lists f32 + i32 [Q, splits, k], the merged positions i32 [Q, k].
struct ivf_layout {
  long long coarse = 0, probe_dist = 0, probes = 0, q_norm = 0, part_dist = 0, part_idx = 0, pos = 0, member = 0, any = 0, marks_bytes = 0, bytes = 0;
  // by list: the queries sorted by their nearest list (list counts, first positions and cursors; the
  // order and its inverse; the sorted queries and probes; the distances in sorted order)
  long long counts = 0, start = 0, cursor = 0, perm = 0, inv = 0, sorted_q = 0, sorted_probes = 0, sorted_dist = 0;
};
inline ivf_layout ivf_layout_for(const ivf_index& x, long long Q, int k, int nprobe, ivf_scan_mode mode) {
  ivf_layout w;
  const auto c = ivf_scan_config_for(Q, x.D, k, nprobe, x.m, x.nlist, mode);
  long long at = 0;
  if (c.by_list) {  // first: one memset zeroes both
    const long long q_tiles = (Q + kernels::ivf_scan_rows - 1) / kernels::ivf_scan_rows;
    w.member = at, at += align256(4 * Q * x.nlist);
    w.any = at, at += align256(4 * q_tiles * x.nlist);
    w.marks_bytes = at;
  }
  w.coarse = at, at += align256(search_workspace_bytes(Q, x.nlist, x.D, nprobe, metric::l2));
  w.probe_dist = at, at += align256(4 * Q * nprobe);
  w.probes = at, at += align256(4 * Q * nprobe);
  w.q_norm = at, at += align256(4 * Q);
  w.part_dist = at, at += align256(4 * Q * c.splits * k);
  w.part_idx = at, at += align256(4 * Q * c.splits * k);
  w.pos = at, at += align256(4 * Q * k);
  if (c.by_list) {
    w.counts = at, at += align256(4 * x.nlist);
    w.start = at, at += align256(4 * x.nlist);
    w.cursor = at, at += align256(4 * x.nlist);
    w.perm = at, at += align256(4 * Q);
    w.inv = at, at += align256(4 * Q);
    w.sorted_q = at, at += align256(2 * Q * x.D);
    w.sorted_probes = at, at += align256(4 * Q * nprobe);
    w.sorted_dist = at, at += align256(4 * Q * k);
  }
  w.bytes = at;
  return w;
}
inline void ivf_check_search(const char* who, const ivf_index& x, long long Q, int k, int nprobe, ivf_scan_mode mode) {
  auto bad = [&](const std::string& why) { throw jit::argument_error(std::string(who) + ": " + why); };
  if (x.N < 1 || x.host_offsets.empty()) bad("the index is empty (not built, or moved from)");
  if (Q < 1) bad("Q = " + std::to_string(Q) + " must be at least 1");
  if (Q > (1LL << 40) / x.D) bad("Q * D is past 2^40 elements");
  if (k < 1 || k > max_k) bad("k = " + std::to_string(k) + " must be in 1 .. " + std::to_string(max_k));
  const long long most = x.nlist < max_k ? x.nlist : max_k;
  if (nprobe < 1 || nprobe > most)
    bad("nprobe = " + std::to_string(nprobe) + " must be in 1 .. " + std::to_string(most) + " (at most nlist = " + std::to_string(x.nlist) +
        " and 256: the coarse step is the exact top-k)");
  if (mode == ivf_scan_mode::by_list && Q * x.nlist > ivf_marks_max)
    bad("the by-list walk needs Q * nlist <= 2^24 (its marks are f32 rows); Q = " + std::to_string(Q) + ", nlist = " + std::to_string(x.nlist) +
        " (use per_query or automatic)");
}
}  // namespace detail

inline long long ivf_search_workspace_bytes(const ivf_index& x, long long Q, int k, int nprobe, ivf_scan_mode mode = ivf_scan_mode::automatic) {
  detail::ivf_check_search("cake::knn::ivf_search_workspace_bytes", x, Q, k, nprobe, mode);
  return detail::ivf_layout_for(x, Q, k, nprobe, mode).bytes;
}

// The k best vectors of each query's nprobe nearest lists (see the top of this header).
// mode: the fine step's walk (ivf_scan_mode; the workspace must be ivf_search_workspace_bytes for the same mode).
inline void ivf_search(const ivf_index& x, const void* queries, float* distances, std::int32_t* indices, void* workspace, long long Q, int k, int nprobe,
                       CUstream stream = nullptr, ivf_scan_mode mode = ivf_scan_mode::automatic) {
  const char* who = "cake::knn::ivf_search";
  detail::ivf_check_search(who, x, Q, k, nprobe, mode);
  kmeans::detail::check_pointer(who, "queries", queries, 16);
  kmeans::detail::check_pointer(who, "distances", distances, 4);
  kmeans::detail::check_pointer(who, "indices", indices, 4);
  kmeans::detail::check_pointer(who, "workspace", workspace, 256);
  kmeans::detail::check_hopper(who, x.device);
  const auto c = ivf_scan_config_for(Q, x.D, k, nprobe, x.m, x.nlist, mode);
  const auto w = detail::ivf_layout_for(x, Q, k, nprobe, mode);
  auto* base = static_cast<unsigned char*>(workspace);
  auto* probe_dist = reinterpret_cast<float*>(base + w.probe_dist);
  auto* probes = reinterpret_cast<std::int32_t*>(base + w.probes);
  auto* q_norm = reinterpret_cast<float*>(base + w.q_norm);
  auto* part_dist = reinterpret_cast<float*>(base + w.part_dist);
  auto* part_idx = reinterpret_cast<std::int32_t*>(base + w.part_idx);
  auto* pos = reinterpret_cast<std::int32_t*>(base + w.pos);
  // Every kernel built before the first launch (a refusal enqueues nothing).
  const runtime_kernel& scan = detail::ivf_scan_kernel(c, x.type, x.device);
  const runtime_kernel& merge = detail::merge_kernel(merge_config_for(k, x.m), x.device);
  detail::gather_kernel(2, kernels::ivf_gather_width<i32>(1), x.device);
  const auto l2form = kmeans::detail::norm_form(kmeans::metric::l2);
  if (c.by_list) {
    detail::marks_kernel(x.device);
    detail::order_kernel(x.device);
    kmeans::detail::update_kernel_for(kmeans::detail::update_kernel::count, 1, x.type, l2form, x.device);
    kmeans::detail::update_kernel_for(kmeans::detail::update_kernel::offsets, 1, x.type, l2form, x.device);
    detail::gather_kernel(x.type == input_type::f16 ? 0 : 1, kernels::ivf_gather_width<f16>(x.D), x.device);
    detail::gather_kernel(2, kernels::ivf_gather_width<i32>(nprobe), x.device);
    detail::gather_kernel(2, kernels::ivf_gather_width<i32>(k), x.device);
    detail::gather_kernel(3, kernels::ivf_gather_width<f32>(k), x.device);
  }
  // Coarse: the nprobe nearest centroids (l2, as the lists were made).
  search(queries, detail::ptr(x.centroids), probe_dist, probes, base + w.coarse, Q, x.nlist, x.D, nprobe, x.type, metric::l2, stream, x.device);
  // By list: the queries sorted by their nearest list (a counting sort: the k-means count and offsets
  // kernels, then the query order), so that a tile of 64 queries probes few lists in all (the union its
  // walk scans); the scan and merge run on the sorted queries, and the results are put back in order.
  const void* qs = queries;
  const std::int32_t* ps = probes;
  std::int32_t* inv = nullptr;
  if (c.by_list) {
    auto* counts = reinterpret_cast<float*>(base + w.counts);
    auto* start = reinterpret_cast<std::int32_t*>(base + w.start);
    auto* cursor = reinterpret_cast<std::int32_t*>(base + w.cursor);
    auto* perm = reinterpret_cast<std::int32_t*>(base + w.perm);
    inv = reinterpret_cast<std::int32_t*>(base + w.inv);
    const auto& drv = jit::driver::get();
    drv.bind(x.device);
    drv.check(drv.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(counts), 0, static_cast<std::size_t>(4 * x.nlist), stream), "cuMemsetD8Async",
              "zeroing the IVF list counts");
    const long long P = nprobe;
    const double nl[] = {static_cast<double>(x.nlist)}, nq[] = {static_cast<double>(Q)};
    {
      const tensor_arg a[] = {tensor_view(probes, {1, Q, 1}, {Q * P, P, 1}), tensor_view(counts, {x.nlist, 1})};
      kmeans::detail::update_kernel_for(kmeans::detail::update_kernel::count, 1, x.type, l2form, x.device).launch(a, nl, stream);
    }
    {
      const tensor_arg a[] = {tensor_view(counts, {1, x.nlist}), tensor_view(start, {1, x.nlist}), tensor_view(cursor, {1, x.nlist})};
      kmeans::detail::update_kernel_for(kmeans::detail::update_kernel::offsets, 1, x.type, l2form, x.device).launch(a, nq, stream);
    }
    {
      const tensor_arg a[] = {tensor_view(probes, {Q, P}), tensor_view(cursor, {x.nlist, 1}), tensor_view(perm, {Q, 1}), tensor_view(inv, {Q, 1})};
      detail::order_kernel(x.device).launch(a, {}, stream);
    }
    detail::gather_rows(queries, Q, perm, base + w.sorted_q, Q, x.D, false, x.type, stream, x.device);
    detail::gather_rows(probes, Q, perm, base + w.sorted_probes, Q, P, true, x.type, stream, x.device);
    qs = base + w.sorted_q;
    ps = reinterpret_cast<const std::int32_t*>(base + w.sorted_probes);
  }
  // Fine: the lists scanned per probe split, then the splits merged (positions in list order).
  const long long S = c.splits;
  const tensor_arg xa = tensor_view(qs, {Q, x.D}), ya = tensor_view(detail::ptr(x.data), {x.N, x.D});
  const tensor_arg pr = tensor_view(ps, {Q, static_cast<long long>(nprobe)}), off = tensor_view(detail::ptr(x.offsets), {x.nlist + 1});
  const tensor_arg pd = tensor_view(part_dist, {Q, S, static_cast<long long>(k)}), pi = tensor_view(part_idx, {Q, S, static_cast<long long>(k)});
  // The scan's list inputs: the probes (per query), or the marks (by list), made here from the probes.
  std::vector<tensor_arg> lists;
  if (c.by_list) {
    const long long q_tiles = (Q + kernels::ivf_scan_rows - 1) / kernels::ivf_scan_rows;
    auto* member = reinterpret_cast<float*>(base + w.member);
    auto* any = reinterpret_cast<float*>(base + w.any);
    const auto& drv = jit::driver::get();
    drv.bind(x.device);
    drv.check(drv.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(base), 0, static_cast<std::size_t>(w.marks_bytes), stream), "cuMemsetD8Async",
              "zeroing the IVF marks");
    const tensor_arg margs[] = {pr, tensor_view(member, {Q * x.nlist, 1}), tensor_view(any, {q_tiles * x.nlist, 1})};
    const double scalars[] = {static_cast<double>(x.nlist)};
    detail::marks_kernel(x.device).launch(margs, scalars, stream);
    lists = {tensor_view(member, {Q, x.nlist}), tensor_view(any, {q_tiles, x.nlist})};
  } else {
    lists = {pr};
  }
  std::vector<tensor_arg> args = {xa, ya};
  if (x.m == metric::l2) {
    kmeans::norms(qs, q_norm, 1, Q, x.D, x.type, kmeans::metric::l2, stream, x.device);
    args.push_back(tensor_view(detail::ptr(x.data_norm), {x.N}));
  }
  args.insert(args.end(), lists.begin(), lists.end());
  args.push_back(off);
  args.push_back(pd);
  args.push_back(pi);
  scan.launch(args, {}, stream);
  const tensor_arg md = tensor_view(part_dist, {Q, S * k}), mi = tensor_view(part_idx, {Q, S * k});
  float* dist_out = c.by_list ? reinterpret_cast<float*>(base + w.sorted_dist) : distances;  // by list: in the sorted order first
  const tensor_arg od = tensor_view(dist_out, {Q, static_cast<long long>(k)}), oi = tensor_view(pos, {Q, static_cast<long long>(k)});
  if (x.m == metric::l2) {
    const tensor_arg margs[] = {md, mi, tensor_view(q_norm, {Q, 1}), od, oi};
    merge.launch(margs, {}, stream);
  } else {
    const tensor_arg margs[] = {md, mi, od, oi};
    merge.launch(margs, {}, stream);
  }
  // By list: the rows back in the queries' order (the distances as f32 rows; the positions into the partial
  // lists' buffer, free after the merge).
  if (c.by_list) {
    {
      const tensor_arg a[] = {tensor_view(dist_out, {Q, static_cast<long long>(k)}), tensor_view(inv, {Q, 1}), tensor_view(distances, {Q, static_cast<long long>(k)})};
      detail::gather_kernel(3, kernels::ivf_gather_width<f32>(k), x.device).launch(a, {}, stream);
    }
    detail::gather_rows(pos, Q, inv, part_idx, Q, k, true, x.type, stream, x.device);
    pos = part_idx;
  }
  // Positions to original rows (an empty entry, -1, stays -1).
  detail::gather_rows(detail::ptr(x.ids), x.N, pos, indices, Q * k, 1, true, x.type, stream, x.device);
}

}  // namespace cake::knn
