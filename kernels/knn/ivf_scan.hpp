#pragma once
// IVF-Flat search on Hopper (sm_90a), the fine step: every query scans the inverted lists its coarse step
// picked (probes [Q, P], list ids) and keeps its k best vectors among them, per probe split.
//
//   l2:            the k smallest |y|^2 - 2 x.y    (|x|^2 added by the merge, kernels/knn/merge.hpp)
//   inner_product: the k largest x.y
//
// The database is the index's list-ordered copy: list l owns rows offsets[l] .. offsets[l + 1] - 1 of
// data [N, D] (kernels/knn/ivf.hpp builds it). A CTA owns `rows` (64) queries (their tile stays in smem,
// TMA-loaded once) and one split s of the work. It walks lists: for each, both roles read the list's first
// and last row (index values) and walk its rows in tiles of `bn` whose TMA origin is the list's first row
// plus j * bn (an element origin: .elements_at); the wgmma multiplies the whole queries tile by the
// database tile and the row top-k folds the rows that take the list (the others, and the tile's rows past
// the list's end, score +inf / -inf: never kept). The indices kept are rows of the list-ordered database
// (positions); kernels/knn/ivf.hpp maps them to the original ids after the merge with the row gather below.
//   by_list = false (per query): for each probe slot p = s, s + splits, ... and each query qq of the tile
//     in turn, the query's list (probes [Q, P], read_index); only row qq folds it (1 useful row of 64).
//   by_list = true: for each list l = s, s + splits, ... that some query of the tile probes (any [QT,
//     nlist] != 0, as i32 bits), once; the rows whose query probes it (member [Q, nlist] > 0, a row
//     vector loaded on entering the list) fold it. The marks come from ivf_marks_program.
// docs/knn.md (IVF-Flat) compares the two walks.
//
// Each CTA writes its split's lists, best first, to part_dist / part_idx [Q, splits, k]; the kNN merge
// (knn_merge_program) reduces the splits, as for the exact search.
//
// ivf_gather_program: dst[e, :] = src[idx[e], :] for e < E, rows of up to `width` columns (a row of any
// 16-bit type, of f32 (bit for bit) or of i32; an index outside 0 .. rows(src) - 1, e.g. -1 for an empty entry, gives a row of
// `fill`). i32 rows pass through f32 registers (the register tiles' integer path): exact up to 2^24,
// which the entry point requires of N. One warp per row at a time: the row's index is an index value (read_index), the row a
// register tile whose origin is that value (.elements_at). Used to pick the initial centroids, to order
// the database by list, and to map positions to original ids.
#include <string_view>

#include <cake/cake.hpp>

#include "search.hpp"

namespace cake::kernels {

struct ivf_scan_config {
  int parts = 2;    // D / 64 rounded up: 64-column parts of the queries tile (1..8)
  int bn = 64;      // database rows per tile (the MMA's N); lists average N / nlist rows
  int stages = 4;   // depth of the database pipeline (64-column parts)
  int k = 10;       // neighbours per query (1..256)
  int splits = 1;   // CTAs per query tile, each on every splits-th probe slot (by_list: every splits-th list)
  bool by_list = false;  // walk the lists the tile's queries probe, once each (below), instead of each query's
  knn_metric metric = knn_metric::l2;
  friend constexpr auto operator<=>(const ivf_scan_config&, const ivf_scan_config&) = default;
};

constexpr int ivf_scan_rows = 64;  // queries per CTA (one consumer warpgroup, one wgmma M)

template <class In = bf16>
constexpr program ivf_scan_sm90(ivf_scan_config c = {}) {
  const std::string_view name = In::value == dtype::f16 ? "ivf_scan_f16" : "ivf_scan_bf16";
  constexpr int rows = ivf_scan_rows;
  auto k = kernel(name).target(sm_90a);
  auto [Q, N, D, P, L, S, Kk] = k.dims("Q", "N", "D", "P", "L", "S", "K");
  auto [NL, QT] = k.dims("NL", "QT");  // by_list: nlist, and the query tiles ceil(Q / 64)
  auto X = k.input<In>("queries", dims(Q, D));
  auto Y = k.input<In>("data", dims(N, D));
  tensor<f32> Yn;
  if (c.metric == knn_metric::l2) Yn = k.input<f32>("data_norm", dims(N));
  tensor<i32> Pr, Any;
  tensor<f32> Member;
  if (!c.by_list) Pr = k.input<i32>("probes", dims(Q, P));
  else {
    // (ivf_marks_program's f32 counts: "any" is read as i32 bits, zero exactly when no query of the tile
    // probes the list; "member" as f32)
    Member = k.input<f32>("member", dims(Q, NL));
    Any = k.input<i32>("any", dims(QT, NL));
  }
  auto Off = k.input<i32>("offsets", dims(L));  // nlist + 1 entries
  auto Pd = k.output<f32>("part_dist", dims(Q, S, Kk));
  auto Pi = k.output<i32>("part_idx", dims(Q, S, Kk));
  auto space = k.parallel(tiles(Q, rows), split(c.splits));
  auto sX = k.smem<In>("sX", {rows, 64}, swizzle::b128);
  auto sY = k.smem<In>("sY", {c.bn, 64}, swizzle::b128);
  auto xp = k.pipeline("x", stages(c.parts)).carries(sX);  // one stage per 64-column part, all held
  auto yp = k.pipeline("y", stages(c.stages)).carries(sY);
  const int producer_regs = 40;
  const int consumer_regs = plan::consumer_register_share(targets::sm90a.limits, 128 * 2, 128, producer_regs, 128);

  // Both roles walk the same lists. Per query (by_list false): for each probe slot of the split, each
  // query of the tile (up to Q), its list's row tiles. By list: for each list of the split that some query
  // of the tile probes ("any"), its row tiles, once. The lists' bounds are index values each role reads for
  // itself; `enter(l)` runs when a list is entered (the consumer loads the rows' membership there).
  struct list_rows {
    index_expr y0, y1, qq;  // qq: the one query row that takes the list (per query), unused by list
  };
  auto walk = [&](role& r, index_expr i, index_expr s, auto&& enter, auto&& step) {
    auto tiles_of = [&](index_expr l, index_expr qq) {
      list_rows lr;
      lr.y0 = r.read_index(Off.at(l));
      lr.y1 = r.read_index(Off.at(l + 1));
      lr.qq = qq;
      const index_expr n_tiles = r.let_index((lr.y1 - lr.y0 + (c.bn - 1)) / c.bn);
      r.loop(loop_extent(n_tiles), [&](auto j) { step(lr, j); });
    };
    if (c.by_list) {
      r.loop(s, loop_extent(NL.extent()), c.splits, [&](auto l) {
        const index_expr any = r.read_index(Any.at(i, l));
        r.when(ne(any, 0), [&] {
          enter(l);
          tiles_of(l, index_expr(0));
        });
      });
      return;
    }
    const index_expr nq = r.let_min(Q.extent() - i * rows, rows);  // queries of this tile
    r.loop(s, loop_extent(P.extent()), c.splits, [&](auto p) {
      r.loop(loop_extent(nq), [&](auto qq) { tiles_of(r.read_index(Pr.at(i * rows + qq, p)), qq); });
    });
  };

  k.role("scan", warpgroups(1), regs(consumer_regs), [&](role& r) {
    auto dot = r.accumulator<f32>("dot", {rows, c.bn});
    auto top = c.metric == knn_metric::l2 ? r.topk("top", rows, c.k) : r.topk_largest("top", rows, c.k);
    reg_tile<f32> yn, member;
    if (c.metric == knn_metric::l2) yn = r.col_vector<f32>("yn", c.bn);
    if (c.by_list) member = r.row_vector<f32>("member", rows);  // > 0: the row's query probes the list
    r.for_each(space, [&](auto i, auto s) {
      std::array<slot, 8> sx{};
      for (int d = 0; d < c.parts; ++d) sx[static_cast<std::size_t>(d)] = r.wait(xp);
      r.topk_init(top);
      auto enter = [&](index_expr l) { r.load(member, Member.tile(i, l)).fill_outside(0.0f); };
      walk(r, i, s, enter, [&](const list_rows& lr, index_expr j) {
        const index_expr first = r.let_index(lr.y0 + j * c.bn);  // the tile's first row (a position)
        if (c.metric == knn_metric::l2) r.load(yn, Yn.tile(first).elements_at(0)).fill_outside(pos_inf);
        const int group = c.parts < c.stages ? c.parts : c.stages;
        for (int g0 = 0; g0 < c.parts; g0 += group) {
          const int g1 = g0 + group < c.parts ? g0 + group : c.parts;
          std::array<slot, 8> sy{};
          for (int d = g0; d < g1; ++d) sy[static_cast<std::size_t>(d)] = r.wait(yp);
          r.wgmma_fence();
          for (int d = g0; d < g1; ++d) {
            auto m = r.wgmma(dot, sx[static_cast<std::size_t>(d)][sX], sy[static_cast<std::size_t>(d)][sY]);
            if (d == 0) m.overwrite();
          }
          r.wgmma_commit();
          r.wgmma_wait(0);
          for (int d = g0; d < g1; ++d) r.release(yp, sy[static_cast<std::size_t>(d)]);
        }
        // Only row qq (by list: the rows whose query probes the list) takes it; rows of the tile past the
        // list's end belong to the next list.
        const rx out = (c.by_list ? member <= 0.0f : ne(row(), lr.qq)) || first + col() >= lr.y1;
        if (c.metric == knn_metric::l2) r.row_topk(top, select(out, pos_inf, fma(dot, -2.0f, yn)), first);
        else r.row_topk(top, select(out, neg_inf, dot), first);
      });
      for (int d = 0; d < c.parts; ++d) r.release(xp, sx[static_cast<std::size_t>(d)]);
      r.topk_store(Pd.tile(i, s, 0).rows_at(0), Pi.tile(i, s, 0).rows_at(0), top);
    });
  });
  k.role("load", warpgroups(1), regs(producer_regs), [&](role& r) {
    r.for_each(space, [&](auto i, auto s) {
      for (int d = 0; d < c.parts; ++d) {
        auto st = r.acquire(xp);
        r.tma_load(st[sX], X.tile(i, d));
      }
      walk(r, i, s, [](index_expr) {}, [&](const list_rows& lr, index_expr j) {
        for (int d = 0; d < c.parts; ++d) {
          auto st = r.acquire(yp);
          r.tma_load(st[sY], Y.tile(lr.y0 + j * c.bn, d).elements_at(0));
        }
      });
    });
  });
  return k.build();
}

// By-list walk, its marks: for every (query q, probe slot p) with l = probes[q, p]:
//   member[q * nlist + l] += 1      (viewed by the scan as f32 [Q, nlist]: does query q probe list l)
//   any[(q / 64) * nlist + l] += 1  (viewed by the scan as [ceil(Q / 64), nlist]: does a query of tile q / 64)
// f32 scatter-adds of ones (the caller zeroes both); the rows are computed in f32 registers, exact while
// Q * nlist <= 2^24 (the entry point's condition for this walk). Tensors: probes i32 [Q, P], member f32
// [Q * nlist, 1], any f32 [ceil(Q / 64) * nlist, 1], scalar nlist (i32). One warp per 32 queries, one probe
// slot at a time.
constexpr program ivf_marks_program(target_id t = target_id::sm_90a) {
  constexpr int units = 4, rows = 32;  // rows divides 64: a warp's queries share one query tile
  auto k = kernel(t == target_id::sm_80 ? "ivf_marks_80" : "ivf_marks").target(t);
  auto [Q, P, QL, TL, One] = k.dims("Q", "P", "QL", "TL", "one");
  auto Pr = k.input<i32>("probes", dims(Q, P));
  auto Member = k.output<f32>("member", dims(QL, One));
  auto Any = k.output<f32>("any", dims(TL, One));
  auto Lc = k.param<i32>("nlist");
  auto space = k.parallel(tiles(Q, units * rows));
  k.role("pairs", warps(units), [&](role& r) {
    auto one = r.row_vector<f32>("one", rows);
    auto l = r.row_vector<i32>("l", rows);
    auto m = r.row_vector<i32>("m", rows);
    auto a = r.row_vector<i32>("a", rows);
    r.fill(one, 1.0f);
    r.for_each(space, [&](auto i) {
      const index_expr g = i * units + r.warp();  // this warp's block of queries
      r.loop(loop_extent(P.extent()), [&](auto p) {
        r.load(l, Pr.tile(g, p)).fill_outside(-1.0f);  // queries past Q: -1, skipped
        r.set(m, select(l >= 0.0f, l + (rx(g * rows) + row()) * Lc, -1.0f));
        r.set(a, select(l >= 0.0f, l + rx(g * rows / 64) * Lc, -1.0f));
        r.scatter_add(Member.tile(0, 0), one, m);
        r.scatter_add(Any.tile(0, 0), one, a);
      });
    });
  });
  return k.build();
}

// The register row's width for rows of `cols` elements of T: a power of two, at least cols and at least one
// 16-byte vector per lane of the warp (256 for 16-bit types, 128 for i32), so that a 1-row tile splits
// evenly over the warp in the blocked layout; columns past the row are neither read nor written.
template <class T>
constexpr int ivf_gather_width(long long cols) {
  int w = 32 * (16 / static_cast<int>(size_bits(T::value) / 8));
  while (w < cols) w *= 2;
  return w;
}

// The row gather (see the top of this header). T: the row's element type (f16, bf16 or i32); width:
// ivf_gather_width<T>(row length).
template <class T>
constexpr program ivf_gather_program(int width, float fill = 0.0f, target_id t = target_id::sm_90a) {
  name_builder nm;
  nm.put("ivf_gather_");
  nm.put(T::value == dtype::f16 ? "f16" : T::value == dtype::bf16 ? "bf16" : T::value == dtype::f32 ? "f32" : "i32");
  nm.put("_w");
  nm.put(width);
  if (t == target_id::sm_80) nm.put("_80");
  constexpr int units = 4;  // warps per CTA
  constexpr int per_warp = 8;  // rows a warp moves per point of the space
  auto k = kernel(nm.view()).target(t);
  auto [E, R, W, One] = k.dims("E", "R", "W", "one");
  auto Src = k.input<T>("src", dims(R, W));
  auto Idx = k.input<i32>("idx", dims(E, One));
  auto Dst = k.output<T>("dst", dims(E, W));
  auto space = k.parallel(tiles(E, units * per_warp));
  k.role("rows", warps(units), [&](role& r) {
    auto v = r.fragment<T>("v", {1, width});
    r.for_each(space, [&](auto i) {
      r.loop(per_warp, [&](auto e) {
        const index_expr row = r.let_index(i * (units * per_warp) + r.warp() * per_warp + e);
        r.when(row < E.extent(), [&] {
          const index_expr src = r.read_index(Idx.at(row, 0));
          // (a load's bounds check is against the rows' end only: a negative index is tested here)
          r.when(src >= 0 && src < R.extent(), [&] { r.load(v, Src.tile(src, 0).elements_at(0)); });
          r.when(src < 0 || src >= R.extent(), [&] { r.fill(v, fill); });
          r.store(Dst.tile(row, 0).elements_at(0), v);
        });
      });
    });
  });
  return k.build();
}

// The order of the queries by their nearest list (the by-list walk's query sort, kernels/knn/ivf.hpp): per
// query q, its slot in the list probes[q, 0] (fetch_add on cursor, which the k-means offsets kernel set to
// each list's first position), perm[slot] = q (scatter_store) and inv[q] = slot. Tensors: probes [Q, P]
// i32 (column 0 read), cursor [nlist, 1] i32, perm [Q, 1] i32, inv [Q, 1] i32. The order inside a list is
// the atomics' (it moves no result: each query's lists and top-k are its own).
constexpr program ivf_query_order_program(target_id t = target_id::sm_90a) {
  constexpr int units = 4, rows = 32;  // a warp places 32 queries, one per lane
  auto k = kernel(t == target_id::sm_80 ? "ivf_query_order_80" : "ivf_query_order").target(t);
  auto [Q, P, L, One] = k.dims("Q", "P", "L", "one");
  auto Pr = k.input<i32>("probes", dims(Q, P));
  auto Cursor = k.output<i32>("cursor", dims(L, One));
  auto Perm = k.output<i32>("perm", dims(Q, One));
  auto Inv = k.output<i32>("inv", dims(Q, One));
  auto space = k.parallel(tiles(Q, rows * units));
  k.role("queries", warps(units), [&](role& r) {
    auto list = r.row_vector<i32>("list", rows);
    auto slot = r.row_vector<i32>("slot", rows);
    auto q = r.row_vector<i32>("q", rows);
    r.for_each(space, [&](auto i) {
      const index_expr g = i * units + r.warp();
      r.load(list, Pr.tile(g, 0)).fill_outside(-1.0f);  // the nearest list (queries past Q: -1, skipped)
      r.fetch_add(slot, Cursor.tile(0, 0), list);
      r.set(q, row() + rx(g * rows));
      r.scatter_store(Perm.tile(0, 0), q, slot);
      r.store(Inv.tile(g, 0), slot);
    });
  });
  return k.build();
}

}  // namespace cake::kernels
