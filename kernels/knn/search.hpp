#pragma once
// Exact k-nearest-neighbour search on Hopper (sm_90a), pass 1: for every query x of X[Q, D], the k
// database vectors y of Y[N, D] that score best, among the database tiles of one split, never
// materializing the Q x N scores.
//
//   l2:            the k smallest |y|^2 - 2 x.y    (|x|^2 is the same for every y: added by the merge)
//   inner_product: the k largest x.y
//
// A CTA owns `wgs * rows` queries and one split s of `splits`: database tiles s, s + splits, ... (the
// split axis gives the grid more CTAs than there are query tiles; strided, so that every split sees the
// whole database's spread). The queries tile stays in smem (D/64 parts of 64 columns), database tiles
// of `bn` x 64 stream through a TMA pipeline, each consumer warpgroup multiplies its `rows` queries by
// the tile on wgmma and folds the scores into its per-row top-k (r.row_topk: the language's op, lists in
// derived smem, see docs/knn.md). The consumers take turns at issuing their MMAs, so one's top-k (ALU
// work) overlaps the other's MMAs. Each CTA writes its split's lists, best first, to
// part_dist / part_idx [Q, splits, k]; kernels/knn/merge.hpp reduces the splits.
#include <array>
#include <string_view>

#include <cake/cake.hpp>

namespace cake::kernels {

enum class knn_metric { l2, inner_product };
constexpr const char* to_string(knn_metric m) { return m == knn_metric::l2 ? "l2" : "inner_product"; }

struct knn_search_config {
  int parts = 2;    // D / 64 rounded up: 64-column parts of the queries tile (1..8)
  int rows = 64;    // queries per consumer warpgroup (64 or 128)
  int wgs = 2;      // consumer warpgroups (1..2), taking turns at the MMAs
  int bn = 128;     // database vectors per tile (the MMA's N)
  int stages = 4;   // depth of the database pipeline (64-column parts)
  int k = 10;       // neighbours per query (1..256)
  int splits = 1;   // CTAs per query tile, each on every splits-th database tile
  knn_metric metric = knn_metric::l2;
  friend constexpr auto operator<=>(const knn_search_config&, const knn_search_config&) = default;
};

template <class In = bf16>
constexpr program knn_search_sm90(knn_search_config c = {}) {
  const std::string_view name = In::value == dtype::f16 ? "knn_search_f16" : "knn_search_bf16";
  auto k = kernel(name).target(sm_90a);
  auto [Q, N, D, S, Kk] = k.dims("Q", "N", "D", "S", "K");
  auto X = k.input<In>("queries", dims(Q, D));
  auto Y = k.input<In>("database", dims(N, D));
  tensor<f32> Yn;
  if (c.metric == knn_metric::l2) Yn = k.input<f32>("db_norm", dims(N));
  auto Pd = k.output<f32>("part_dist", dims(Q, S, Kk));
  auto Pi = k.output<i32>("part_idx", dims(Q, S, Kk));
  auto space = k.parallel(tiles(Q, c.wgs * c.rows), split(c.splits));
  auto sX = k.smem<In>("sX", {c.wgs * c.rows, 64}, swizzle::b128);
  auto sY = k.smem<In>("sY", {c.bn, 64}, swizzle::b128);
  auto xp = k.pipeline("x", stages(c.parts)).carries(sX);  // one stage per 64-column part, all held
  auto yp = k.pipeline("y", stages(c.stages)).carries(sY);
  auto mma = k.turns("mma");
  // Registers: as in kernels/kmeans/assign.hpp, the producer warpgroup keeps 40 and the consumers share
  // the rest of the launch's pool (plan::consumer_register_share).
  const int producer_regs = 40;
  const int consumer_regs = plan::consumer_register_share(targets::sm90a.limits, 128 * (c.wgs + 1), 128, producer_regs, 128 * c.wgs);

  k.role("search", warpgroups(c.wgs), regs(consumer_regs), [&](role& r) {
    auto dot = r.accumulator<f32>("dot", {c.rows, c.bn});
    auto top = c.metric == knn_metric::l2 ? r.topk("top", c.rows, c.k) : r.topk_largest("top", c.rows, c.k);
    reg_tile<f32> yn;  // |y|^2 of the tile's database vectors (l2)
    if (c.metric == knn_metric::l2) yn = r.col_vector<f32>("yn", c.bn);
    r.for_each(space, [&](auto i, auto s) {
      std::array<slot, 8> sx{};
      for (int d = 0; d < c.parts; ++d) sx[static_cast<std::size_t>(d)] = r.wait(xp);
      r.topk_init(top);
      r.loop(s, tiles(N, c.bn), c.splits, [&](auto j) {
        const int group = c.parts < c.stages ? c.parts : c.stages;
        // The tile's norms, loaded before the MMAs are waited for; vectors past N score +inf (never kept).
        if (c.metric == knn_metric::l2) r.load(yn, Yn.tile(j)).fill_outside(pos_inf);
        for (int g0 = 0; g0 < c.parts; g0 += group) {
          const int g1 = g0 + group < c.parts ? g0 + group : c.parts;
          std::array<slot, 8> sy{};
          for (int d = g0; d < g1; ++d) sy[static_cast<std::size_t>(d)] = r.wait(yp);
          r.take_turn(mma);
          r.wgmma_fence();
          for (int d = g0; d < g1; ++d) {
            auto m = r.wgmma(dot, sx[static_cast<std::size_t>(d)][sX].rows(r.warpgroup(), c.wgs), sy[static_cast<std::size_t>(d)][sY]);
            if (d == 0) m.overwrite();
          }
          r.wgmma_commit();
          r.pass_turn(mma);
          r.wgmma_wait(0);
          for (int d = g0; d < g1; ++d) r.release(yp, sy[static_cast<std::size_t>(d)]);
        }
        if (c.metric == knn_metric::l2) r.row_topk(top, fma(dot, -2.0f, yn), j * c.bn);
        // (inner product: vectors past N would score 0; they score -inf, never kept)
        else r.row_topk(top, select(j * c.bn + col() >= N.extent(), neg_inf, dot), j * c.bn);
      });
      for (int d = 0; d < c.parts; ++d) r.release(xp, sx[static_cast<std::size_t>(d)]);
      r.topk_store(Pd.tile(i * c.wgs + r.warpgroup(), s, 0).rows_at(0), Pi.tile(i * c.wgs + r.warpgroup(), s, 0).rows_at(0), top);
    });
  });
  k.role("load", warpgroups(1), regs(producer_regs), [&](role& r) {
    r.for_each(space, [&](auto i, auto s) {
      for (int d = 0; d < c.parts; ++d) {
        auto st = r.acquire(xp);
        r.tma_load(st[sX], X.tile(i, d));
      }
      r.loop(s, tiles(N, c.bn), c.splits, [&](auto j) {
        for (int d = 0; d < c.parts; ++d) {
          auto st = r.acquire(yp);
          r.tma_load(st[sY], Y.tile(j, d));
        }
      });
    });
  });
  return k.build();
}

}  // namespace cake::kernels
