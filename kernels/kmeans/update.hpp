#pragma once
// k-means centroid update (sm_90a; the same schedules lower for sm_80 unchanged: pass target_id::sm_80):
// after the assignment (assign.hpp) gave every point x of X[B, N, D] its cluster idx[B, N] in 0..K-1,
//
//   kmeans_scatter_program   sums[b, idx, :] += f32(x), counts[b, idx] += 1 for every point
//   kmeans_finalize_program  per centroid row: c_new = sums / count (count > 0), else c_old (an empty
//                            cluster keeps its centroid); C is overwritten with In(c_new); c_norm = the
//                            norm form (below) of In(c_new); shift = sum over D of (In(c_new) - c_old)^2
//   kmeans_norms_program     c_norm of C alone (the initial centroids)
//
// Norm forms (kmeans_norm_form; for assign.hpp's metrics l2, cosine, inner_product): l2 sum(c^2); cosine
// -rsqrt(sum(c^2)) (rsqrt.approx; -inf for a zero row); none (the finalize program then has no c_norm).
//
// Tensors, in the order the caller passes them (cake::tensor_view, declaration order; row-major, packed
// or with outer strides). B is folded into the rows of the centroid-side tensors: a [B, K, D] tensor is
// passed as [B*K, D], a [B, K] one as [B*K] (or [B*K, 1] where said). Two views add a last dim of
// extent 1 (dim "one") so that a row vector's rows run along the dim before it.
//
//   kmeans_scatter_program<In>(parts[, target])
//     X [B, N, D] In, idx [B, N, 1] i32, sums [B*K, D] f32, counts [B*K, 1] f32; scalar K (i32, the
//     clusters per batch entry: launch(args, {double(K)})). sums and counts are accumulated into (the
//     caller zeroes them). The row of sums / counts of a point is b * K + idx, computed in registers in
//     f32 (exact while B * K <= 2^24); an index outside 0..K-1 is skipped, and so are the points past N
//     (their index loads as -1).
//   kmeans_finalize_program<In>(parts[, form[, target]])
//     sums [B*K, D] f32, counts [B*K] f32, C [B*K, D] In (read, then overwritten in place: each row is
//     read whole by the warp that writes it), c_norm [B*K] f32 (absent for form none), shift [B*K] f32
//   kmeans_norms_program<In>(parts[, form[, target]])
//     C [B*K, D] In, c_norm [B*K] f32 (form l2 or cosine; none builds the l2 form)
//
// D is a dynamic dim: nothing needs emit_options.specialized (one kernel per In, tile width, form and
// target). parts = ceil(D / 64), 1..8; the register tiles are W = 64 * parts rounded up to a power of two
// wide (64, 128, 256, 512: the kernel name says W, so parts 5..8 share one kernel) and D must be at most
// W; columns past D are neither read nor written. Specializing D is possible but not useful: it made the
// scatter kernel heavier (98 registers against 54 at D = 100).
//
// Schedule (all three): warp units, 4 warps per CTA (128 threads). A warp holds `rows` whole rows of
// W columns in one register tile in the derived blocked layout (each row in 16-byte vectors
// over consecutive lanes; row sums are shuffles inside the warp), rows = 1024 / W (16 at W = 64 .. 2 at
// W = 512): 32 elements per thread. A CTA takes 4 * rows consecutive rows (points, or centroid rows) per
// point of the parallel space: tiles(N, 4 * rows) x each(B) for the scatter, tiles(B*K, 4 * rows) for
// the row kernels. Rows past the tensor load 0 and are not stored.
//
// Scatter: x's elements are f32 atomic adds at their columns of row b * K + idx. The lowering groups
// each thread's 4 adjacent columns of a row into one vector reduction on sm_90a (red.global.add.v4.f32:
// 32 per point at D = 128 instead of 128 scalar ones), falling back to pairs / single elements at a
// ragged or misaligned edge; sm_80 keeps one scalar RED per element. The count is a scatter-add of a
// row vector of ones into counts [B*K, 1]: one RED per point, from one lane of the point's row (before:
// a tile of ones, the same width as x, masked down to its column 0). Registers (ptxas 13.0, sm_90a):
// scatter 40-48 (54 before these two changes), finalize 91-92 (74-80 for form none), norms 31-32.
#include <string_view>

#include <cake/cake.hpp>

namespace cake::kernels {

// The form of c_norm (assign.hpp's kmeans_metric maps onto it: l2 -> l2, cosine -> cosine,
// inner_product -> none). Its own enum so that this header stands alone.
enum class kmeans_norm_form { l2, cosine, none };
// How the scatter adds the points of a cluster: f32 atomics (fast; the order the atomics land in changes
// the last bits from run to run), or i64 fixed point (x * 2^e rounded to integers, added exactly: the same
// bits on every run; one 64-bit reduction per element instead of one vector reduction per 4).
enum class kmeans_sums { f32_atomic, i64_fixed };
constexpr const char* to_string(kmeans_norm_form f) { return f == kmeans_norm_form::l2 ? "l2" : f == kmeans_norm_form::cosine ? "cosine" : "none"; }

namespace kmeans_update_detail {
// The register tile's width: 64 * parts rounded up to a power of two (64, 128, 256, 512), so that its rows
// split evenly over the lanes of a warp in the blocked layout (320 columns over 16 lanes would not).
constexpr int width_for(int parts) {
  int w = 64;
  while (w < 64 * parts) w *= 2;
  return w;
}
// The rows a warp holds: 32 elements per thread (1024 / width, at least 1).
constexpr int rows_for(int parts) { return width_for(parts) >= 1024 ? 1 : 1024 / width_for(parts); }
constexpr int units = 4;  // warps per CTA

// "kmeans_<what>_<in>_w<width>[_<form>][_80]", e.g. "kmeans_final_bf16_w512_none_80" (30 characters;
// a longer name keeps 24 characters and a hash of the whole: name_builder).
template <class In>
constexpr name_builder name(std::string_view what, int width, std::string_view form, target_id t) {
  name_builder b;
  b.put("kmeans_");
  b.put(what);
  b.put(In::value == dtype::f16 ? "_f16_w" : "_bf16_w");
  b.put(width);
  b.put(form);
  if (t == target_id::sm_80) b.put("_80");
  return b;
}
constexpr std::string_view form_tag(kmeans_norm_form m) {
  return m == kmeans_norm_form::l2 ? "" : m == kmeans_norm_form::cosine ? "_cos" : "_none";
}

// c_norm of the In-rounded rows held in c: the form's function of the row sum of squares.
template <class In>
constexpr void norm_of(role& r, reg_tile<In> c, reg_tile<f32> cn, kmeans_norm_form m) {
  r.row_sum(cn, c * c);
  if (m == kmeans_norm_form::cosine) r.set(cn, -rsqrt(cn));
}
}  // namespace kmeans_update_detail

// sums[b * K + idx[b, n], :] += f32(X[b, n, :]), counts[b * K + idx[b, n], 0] += 1 (the header says
// the tensors). parts = ceil(D / 64), 1..8.
template <class In = bf16>
constexpr program kmeans_scatter_program(int parts, target_id t = target_id::sm_90a, kmeans_sums sums = kmeans_sums::f32_atomic) {
  namespace d = kmeans_update_detail;
  const bool exact = sums == kmeans_sums::i64_fixed;
  const int rows = d::rows_for(parts), width = d::width_for(parts);
  const name_builder nm = d::name<In>(exact ? "scatterx" : "scatter", width, "", t);
  auto k = kernel(nm.view()).target(t);
  auto [Bt, N, BK, D, One] = k.dims("B", "N", "BK", "D", "one");
  auto X = k.input<In>("X", dims(Bt, N, D));
  auto I = k.input<i32>("idx", dims(Bt, N, One));  // [B, N, 1]: a row vector's rows run along N
  tensor<f32> Sums;
  tensor<i64> SumsX;
  if (exact) SumsX = k.output<i64>("sums", dims(BK, D));
  else Sums = k.output<f32>("sums", dims(BK, D));
  auto Counts = k.output<f32>("counts", dims(BK, One));
  auto Kc = k.param<i32>("K");
  scalar<f32> scale;  // exact: 2^e, the fixed point's unit (launch(args, {K, scale}))
  if (exact) scale = k.param<f32>("scale");
  auto space = k.parallel(tiles(N, rows * d::units), each(Bt));
  k.role("points", warps(d::units), [&](role& r) {
    auto x = r.fragment<In>("x", {rows, width});
    auto one = r.row_vector<f32>("one", rows);  // 1 per row: the count of a point
    auto idx = r.row_vector<i32>("idx", rows);
    reg_tile<f32> xs;  // exact: x * scale, rounded to integers by the i64 reduction
    if (exact) xs = r.fragment<f32>("xs", {rows, width});
    r.fill(one, 1.0f);
    r.for_each(space, [&](auto i, auto b) {
      const index_expr g = i * d::units + r.warp();  // this warp's block of points
      r.load(x, X.tile(b, g, 0));                     // columns past D read 0 (and are not added)
      r.load(idx, I.tile(b, g, 0)).fill_outside(-1.0f);  // points past N: index -1, skipped
      // the row of sums / counts: b * K + idx, or -1 (skipped) for an index outside 0..K-1
      r.set(idx, select(idx >= 0.0f && idx < Kc, idx + rx(b) * Kc, -1.0f));
      if (exact) {
        r.set(xs, x * scale);  // a power of two: exact in f32
        r.scatter_add(SumsX.tile(0, 0), xs, idx);
      } else {
        r.scatter_add(Sums.tile(0, 0), x, idx);
      }
      r.scatter_add(Counts.tile(0, 0), one, idx);  // a row vector: one add per point (from one lane of its row)
    });
  });
  return k.build();
}

// Per centroid row: c_new = count > 0 ? sums / count : c_old, written into C; c_norm and shift (the
// header says the tensors). parts = ceil(D / 64), 1..8.
template <class In = bf16>
constexpr program kmeans_finalize_program(int parts, kmeans_norm_form form = kmeans_norm_form::l2, target_id t = target_id::sm_90a,
                                          kmeans_sums sums = kmeans_sums::f32_atomic) {
  namespace d = kmeans_update_detail;
  const bool exact = sums == kmeans_sums::i64_fixed;
  const int rows = d::rows_for(parts), width = d::width_for(parts);
  const name_builder nm = d::name<In>(exact ? "finalx" : "final", width, d::form_tag(form), t);
  auto k = kernel(nm.view()).target(t);
  auto [R, D] = k.dims("BK", "D");
  tensor<f32> Sums;
  tensor<i64> SumsX;
  if (exact) SumsX = k.input<i64>("sums", dims(R, D));
  else Sums = k.input<f32>("sums", dims(R, D));
  auto Counts = k.input<f32>("counts", dims(R));
  auto C = k.output<In>("C", dims(R, D));
  tensor<f32> Cn;
  if (form != kmeans_norm_form::none) Cn = k.output<f32>("c_norm", dims(R));
  auto Shift = k.output<f32>("shift", dims(R));
  scalar<f32> inv_scale;  // exact: 2^-e (launch(args, {inv_scale}))
  if (exact) inv_scale = k.param<f32>("inv_scale");
  auto space = k.parallel(tiles(R, rows * d::units));
  k.role("rows", warps(d::units), [&](role& r) {
    auto s = r.fragment<f32>("s", {rows, width});
    auto c = r.fragment<In>("c", {rows, width});
    auto cnt = r.row_vector<f32>("cnt", rows);
    auto sh = r.row_vector<f32>("sh", rows);
    reg_tile<f32> cn;  // declared only where it is used (a tile no op touches has no layout)
    if (form != kmeans_norm_form::none) cn = r.row_vector<f32>("cn", rows);
    r.for_each(space, [&](auto i) {
      const index_expr g = i * d::units + r.warp();
      r.load(cnt, Counts.tile(g));
      r.load(c, C.tile(g, 0));
      if (exact) {
        r.load(s, SumsX.tile(g, 0));  // the exact fixed-point sum, rounded once to f32
        r.set(s, select(cnt > 0.0f, s * inv_scale / cnt, c));
      } else {
        r.load(s, Sums.tile(g, 0));
        r.set(s, select(cnt > 0.0f, s / cnt, c));  // the new centroid (f32)
      }
      if constexpr (In::value == dtype::f16) r.row_sum(sh, (round_f16(s) - c) * (round_f16(s) - c));
      else r.row_sum(sh, (round_bf16(s) - c) * (round_bf16(s) - c));
      r.set(c, s);  // rounded to In
      r.store(C.tile(g, 0), c);
      r.store(Shift.tile(g), sh);
      if (form != kmeans_norm_form::none) {
        d::norm_of(r, c, cn, form);
        r.store(Cn.tile(g), cn);
      }
    });
  });
  return k.build();
}

// c_norm of C (the initial centroids; the header says the tensors). parts = ceil(D / 64), 1..8.
template <class In = bf16>
constexpr program kmeans_norms_program(int parts, kmeans_norm_form form = kmeans_norm_form::l2, target_id t = target_id::sm_90a) {
  namespace d = kmeans_update_detail;
  if (form == kmeans_norm_form::none) form = kmeans_norm_form::l2;
  const int rows = d::rows_for(parts), width = d::width_for(parts);
  const name_builder nm = d::name<In>("norms", width, d::form_tag(form), t);
  auto k = kernel(nm.view()).target(t);
  auto [R, D] = k.dims("BK", "D");
  auto C = k.input<In>("C", dims(R, D));
  auto Cn = k.output<f32>("c_norm", dims(R));
  auto space = k.parallel(tiles(R, rows * d::units));
  k.role("rows", warps(d::units), [&](role& r) {
    auto c = r.fragment<In>("c", {rows, width});
    auto cn = r.row_vector<f32>("cn", rows);
    r.for_each(space, [&](auto i) {
      const index_expr g = i * d::units + r.warp();
      r.load(c, C.tile(g, 0));
      d::norm_of(r, c, cn, form);
      r.store(Cn.tile(g), cn);
    });
  });
  return k.build();
}

// ---- the sorted (segmented) update -------------------------------------------------------------------
// The other way to the same sums (issue: "segmented reduction after sorting by cluster id, or scatter-add
// -- measure both"): a counting sort of the points by cluster, then sums over contiguous rows, with one
// atomic add per cluster and chunk of 256 rows instead of one per point. Four kernels, then
// kmeans_finalize_program as above:
//
//   kmeans_count_program()              counts [B*K, 1] f32 += 1 per point (a scatter_add of ones)
//   kmeans_offsets_program()            per batch entry b: start[b*K + k] = cursor[b*K + k] = b*N + the
//                                       exclusive prefix sum of counts[b, 0..k) (row_scan, a carry across
//                                       the chunks of 1,024 clusters)
//   kmeans_place_program<In>(parts)     per point: pos = fetch_add(cursor[b*K + idx]), then row pos of
//                                       Xs [B*N, D] In = x and of ids [B*N, 1] i32 = b*K + idx
//                                       (scatter_store); cursor ends at each segment's end
//   kmeans_segment_sum_program<In>(parts)  per chunk of 256 rows of Xs, one warp: for each cluster g
//                                       whose rows start[g] .. cursor[g] - 1 meet the chunk, the column
//                                       sum of those rows added into sums[g, :] (f32)
//
// Tensors: counts [B*K, 1] f32 (zeroed by the caller), counts viewed [B, K] by the offsets kernel; start
// and cursor [B*K, 1] i32 (written whole by the offsets kernel); Xs [B*N, D] In and ids [B*N, 1] i32 (the
// points in cluster order: scratch, written whole); sums [B*K, D] f32 (zeroed by the caller). Positions
// are computed in f32 registers: B*N <= 2^24. Within a cluster the order of its points
// is that of the atomics (run to run it varies, so the f32 sums' last bits can; use kmeans_sums::i64_fixed
// with the scatter for the same bits every run).

// counts[b * K + idx[b, n], 0] += 1 (X is not read: the histogram of the sort; one kernel for every input type).
constexpr program kmeans_count_program(target_id t = target_id::sm_90a) {
  namespace d = kmeans_update_detail;
  constexpr int rows = 32;  // points per warp per step: one per lane
  auto k = kernel(t == target_id::sm_80 ? "kmeans_count_80" : "kmeans_count").target(t);
  auto [Bt, N, BK, One] = k.dims("B", "N", "BK", "one");
  auto I = k.input<i32>("idx", dims(Bt, N, One));
  auto Counts = k.output<f32>("counts", dims(BK, One));
  auto Kc = k.param<i32>("K");
  auto space = k.parallel(tiles(N, rows * d::units), each(Bt));
  k.role("points", warps(d::units), [&](role& r) {
    auto one = r.row_vector<f32>("one", rows);
    auto idx = r.row_vector<i32>("idx", rows);
    r.fill(one, 1.0f);
    r.for_each(space, [&](auto i, auto b) {
      r.load(idx, I.tile(b, i * d::units + r.warp(), 0)).fill_outside(-1.0f);
      r.set(idx, select(idx >= 0.0f && idx < Kc, idx + rx(b) * Kc, -1.0f));
      r.scatter_add(Counts.tile(0, 0), one, idx);
    });
  });
  return k.build();
}

// start = cursor = b * N + the exclusive prefix sum of counts over each batch entry's K clusters.
constexpr program kmeans_offsets_program(target_id t = target_id::sm_90a) {
  namespace d = kmeans_update_detail;
  constexpr int chunk = 1024;  // clusters a warp scans per step (32 per lane)
  name_builder nm;
  nm.put("kmeans_offsets");
  if (t == target_id::sm_80) nm.put("_80");
  auto k = kernel(nm.view()).target(t);
  auto [Bt, K] = k.dims("B", "K");
  auto Counts = k.input<f32>("counts", dims(Bt, K));
  auto Start = k.output<i32>("start", dims(Bt, K));
  auto Cursor = k.output<i32>("cursor", dims(Bt, K));
  auto Np = k.param<i32>("N");  // points per batch entry: entry b's rows of Xs start at b * N
  auto space = k.parallel(tiles(Bt, d::units));
  k.role("scan", warps(d::units), [&](role& r) {
    auto c = r.fragment<f32>("c", {1, chunk});
    auto s = r.fragment<f32>("s", {1, chunk});
    auto tot = r.row_vector<f32>("tot", 1);
    auto carry = r.row_vector<f32>("carry", 1);
    r.for_each(space, [&](auto i) {
      const index_expr b = r.let_index(i * d::units + r.warp());
      r.when(b < Bt.extent(), [&] {
        r.fill(carry, 0.0f);
        r.loop(tiles(K, chunk), [&](auto j) {
          r.load(c, Counts.tile(b, j));  // clusters past K load 0
          r.row_scan(s, c);
          r.set(s, s - c + carry + rx(b) * Np);  // exclusive, plus the entry's first row in Xs
          r.store(Start.tile(b, j), s);
          r.store(Cursor.tile(b, j), s);
          r.row_sum(tot, c);
          r.set(carry, carry + tot);
        });
      });
    });
  });
  return k.build();
}

// Row fetch_add(cursor[b * K + idx]) of Xs = x and of ids = b * K + idx: the points in cluster order, with
// their cluster rows (the header says the tensors).
template <class In = bf16>
constexpr program kmeans_place_program(int parts, target_id t = target_id::sm_90a) {
  namespace d = kmeans_update_detail;
  const int rows = d::rows_for(parts), width = d::width_for(parts);
  const name_builder nm = d::name<In>("place", width, "", t);
  auto k = kernel(nm.view()).target(t);
  auto [Bt, N, BK, BN, D, One] = k.dims("B", "N", "BK", "BN", "D", "one");
  auto X = k.input<In>("X", dims(Bt, N, D));
  auto I = k.input<i32>("idx", dims(Bt, N, One));
  auto Cursor = k.output<i32>("cursor", dims(BK, One));
  auto Xs = k.output<In>("Xs", dims(BN, D));
  auto Ids = k.output<i32>("ids", dims(BN, One));
  auto Kc = k.param<i32>("K");
  auto space = k.parallel(tiles(N, rows * d::units), each(Bt));
  k.role("points", warps(d::units), [&](role& r) {
    auto x = r.fragment<In>("x", {rows, width});
    auto idx = r.row_vector<i32>("idx", rows);
    auto pos = r.row_vector<i32>("pos", rows);
    r.for_each(space, [&](auto i, auto b) {
      const index_expr g = i * d::units + r.warp();
      r.load(x, X.tile(b, g, 0));
      r.load(idx, I.tile(b, g, 0)).fill_outside(-1.0f);
      r.set(idx, select(idx >= 0.0f && idx < Kc, idx + rx(b) * Kc, -1.0f));
      r.fetch_add(pos, Cursor.tile(0, 0), idx);  // the point's row in Xs (-1 for a skipped point)
      r.scatter_store(Xs.tile(0, 0), x, pos);
      r.scatter_store(Ids.tile(0, 0), idx, pos);
    });
  });
  return k.build();
}

// Per chunk of `chunk_rows` consecutive rows of Xs (one warp each), per cluster g whose segment meets the
// chunk (ids of the chunk's first and last rows, and the clusters between): the sum of the segment's rows
// inside the chunk, added into sums[g, :] (atomically: f32 reductions, one per column group; a cluster
// spread over c chunks gets c adds, so a cluster holding a third of the points costs no more than
// the others per row). sums is zeroed by the caller. The warp adds `rows` rows per step into an f32 tile
// (rows past the segment load 0), sums the tile's rows once per segment (col_sum) and adds the column
// vector. Balanced by rows whatever the clusters' sizes: one warp per cluster ran a cluster of 131,072
// points alone (9.7 ms, against 2.1 ms for the scatter; the skewed rows of docs/kmeans.md).
constexpr int kmeans_segment_chunk = 256;
template <class In = bf16>
constexpr program kmeans_segment_sum_program(int parts, target_id t = target_id::sm_90a) {
  namespace d = kmeans_update_detail;
  const int rows = d::rows_for(parts), width = d::width_for(parts);
  constexpr int chunk = kmeans_segment_chunk;
  const name_builder nm = d::name<In>("segsum", width, "", t);
  auto k = kernel(nm.view()).target(t);
  auto [BK, BN, D, One] = k.dims("BK", "BN", "D", "one");
  auto Xs = k.input<In>("Xs", dims(BN, D));
  auto Ids = k.input<i32>("ids", dims(BN, One));
  auto Start = k.input<i32>("start", dims(BK, One));
  auto Cursor = k.input<i32>("cursor", dims(BK, One));
  auto Sums = k.output<f32>("sums", dims(BK, D));
  auto space = k.parallel(tiles(BN, chunk * d::units));
  k.role("chunks", warps(d::units), [&](role& r) {
    auto x = r.fragment<In>("x", {rows, width});
    auto acc = r.fragment<f32>("acc", {rows, width});
    auto sum = r.col_vector<f32>("sum", width);
    r.for_each(space, [&](auto i) {
      const index_expr c0 = r.let_index((i * d::units + r.warp()) * chunk);  // the chunk's first row
      r.when(c0 < BN.extent(), [&] {
        const index_expr c1 = r.let_min(c0 + chunk, BN.extent());  // one past its last
        const index_expr g0 = r.read_index(Ids.at(c0, 0)), g1 = r.read_index(Ids.at(c1 - 1, 0));
        r.loop(g0, loop_extent(g1 + 1), 1, [&](auto g) {
          const index_expr y0 = -r.let_min(-r.read_index(Start.at(g, 0)), -c0);  // max(start, c0)
          const index_expr y1 = r.let_min(r.read_index(Cursor.at(g, 0)), c1);
          r.when(y0 < y1, [&] {
            r.zero(acc);
            r.loop(y0, loop_extent(y1), rows, [&](auto y) {
              r.load(x, Xs.tile(y, 0).elements_at(0).limit(0, y1));  // rows past the segment load 0
              r.set(acc, acc + x);
            });
            r.col_sum(sum, acc);
            r.atomic_add(Sums.tile(g, 0), sum);
          });
        });
      });
    });
  });
  return k.build();
}

}  // namespace cake::kernels
