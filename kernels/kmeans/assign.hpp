#pragma once
// k-means assignment on Hopper (sm_90a): for every point x of X[B, N, D] the centroid of C[B, K, D]
// that scores lowest, never materializing the N x K distances.
//
//   l2:            argmin_k |c_k|^2 - 2 x.c_k      (|x|^2 is the same for every k; c_norm = |c_k|^2)
//   inner_product: argmax_k x.c_k                  (written as argmin of -x.c_k)
//   cosine:        argmax_k x.c_k / |c_k|          (c_norm = -1 / |c_k|, argmin of c_norm * x.c_k)
//
// Ties go to the lowest centroid index. A CTA owns `2 * rows` points of one batch entry: the points
// tile stays in smem (D/64 parts of 64 columns), centroid tiles of `bn` x 64 stream through a TMA
// pipeline, each of two consumer warpgroups multiplies its `rows` points by the centroid tile on wgmma
// and folds the tile's scores into an argmin carried in registers. The two consumers take turns at
// issuing their MMAs, so one's argmin (ALU work) overlaps the other's MMAs (tensor work).
#include <array>
#include <string_view>

#include <cake/cake.hpp>

namespace cake::kernels {

enum class kmeans_metric { l2, inner_product, cosine };
constexpr const char* to_string(kmeans_metric m) {
  return m == kmeans_metric::l2 ? "l2" : m == kmeans_metric::inner_product ? "inner_product" : "cosine";
}

struct kmeans_assign_config {
  int parts = 2;     // D / 64 rounded up: 64-column parts of the points tile (1..8)
  int rows = 128;    // points per consumer warpgroup (64 or 128)
  int wgs = 2;       // consumer warpgroups (2..4), taking turns at the MMAs
  int bn = 128;      // centroids per tile (the MMA's N)
  int stages = 4;    // depth of the centroid pipeline
  kmeans_metric metric = kmeans_metric::l2;
  // The argmin's index found only for rows whose tile score beats the running one (row_argmin's
  // lazy_index()): one min per score instead of a compare and two selects, plus a second pass over the
  // rows that improved. Pays when K has many tiles (improvements get rare).
  bool lazy_index = false;
  // One CTA per SM walks the points tiles (k.persistent()), and with x_stages = 2 the producer loads the
  // next tile's points while the consumers still work on this one (the points tile is held whole, so a
  // second copy is what lets its load overlap).
  bool persistent = false;
  int x_stages = 1;
  friend constexpr auto operator<=>(const kmeans_assign_config&, const kmeans_assign_config&) = default;
};

// Smem of a configuration in bytes (points tile + centroid stages), for the entry point's choice.
constexpr int kmeans_assign_smem(const kmeans_assign_config& c) { return (c.wgs * c.rows * c.parts * c.x_stages + c.stages * c.bn) * 64 * 2; }

template <class In = bf16>
constexpr program kmeans_assign_sm90(kmeans_assign_config c = {}) {
  const std::string_view name = In::value == dtype::f16 ? "kmeans_assign_f16" : "kmeans_assign_bf16";
  auto k = kernel(name).target(sm_90a);
  if (c.persistent) k.persistent();
  auto [Bt, N, K, D] = k.dims("B", "N", "K", "D");
  auto X = k.input<In>("X", dims(Bt, N, D));
  auto C = k.input<In>("C", dims(Bt, K, D));
  tensor<f32> Cn;
  if (c.metric != kmeans_metric::inner_product) Cn = k.input<f32>("c_norm", dims(Bt, K));
  // idx as [B, N, 1]: a row vector (one value per point) is stored down the rows of its tile, so the
  // points must be the rows, and the unit column the last dim.
  auto Idx = k.output<i32>("idx", dims(Bt, N, k.dim("one")));
  auto space = k.parallel(tiles(N, c.wgs * c.rows), each(Bt));
  auto sX = k.smem<In>("sX", {c.wgs * c.rows, 64}, swizzle::b128);
  auto sC = k.smem<In>("sC", {c.bn, 64}, swizzle::b128);
  auto xp = k.pipeline("x", stages(c.parts * c.x_stages)).carries(sX);  // one stage per 64-column part (x_stages tiles), all held
  auto cp = k.pipeline("c", stages(c.stages)).carries(sC);
  auto mma = k.turns("mma");
  // Registers: the producer warpgroup gives all but 40 (24 with 3+ consumers) to the consumers
  // (setmaxnreg), which get what is left of the pool the launch starts with (threads x the entry cap,
  // 65536 / threads in multiples of 8: setmaxnreg.inc only takes what a dec released), in multiples of
  // 8, at most 232: 40/232 with 2 consumers, 24/160 with 3, 24/112 with 4.
  const int producer_regs = c.wgs > 2 ? 24 : 40;
  const int consumer_regs = plan::consumer_register_share(targets::sm90a.limits, 128 * (c.wgs + 1), 128, producer_regs, 128 * c.wgs);

  k.role("assign", warpgroups(c.wgs), regs(consumer_regs), [&](role& r) {
    auto dot = r.accumulator<f32>("dot", {c.rows, c.bn});
    auto best = r.row_vector<f32>("best", c.rows);
    auto arg = r.row_vector<i32>("arg", c.rows);
    reg_tile<f32> cn;  // c_norm of the tile's centroids (not for inner_product)
    if (c.metric != kmeans_metric::inner_product) cn = r.col_vector<f32>("cn", c.bn);
    r.for_each(space, [&](auto i, auto b) {
      std::array<slot, 8> sx{};
      for (int d = 0; d < c.parts; ++d) sx[static_cast<std::size_t>(d)] = r.wait(xp);
      r.fill(best, pos_inf);
      r.fill(arg, 0.0f);
      r.loop(tiles(K, c.bn), [&](auto j) {
        // The tile's parts in groups of at most `stages` (a consumer holds a whole group at once; both
        // consumers read every stage, so they take turns group by group).
        const int group = c.parts < c.stages ? c.parts : c.stages;
        // The tile's c_norm, loaded before the MMAs are waited for: its latency hides behind them.
        if (c.metric == kmeans_metric::l2) r.load(cn, Cn.tile(b, j)).fill_outside(pos_inf);
        if (c.metric == kmeans_metric::cosine) r.load(cn, Cn.tile(b, j)).fill_outside(0.0f);
        for (int g0 = 0; g0 < c.parts; g0 += group) {
          const int g1 = g0 + group < c.parts ? g0 + group : c.parts;
          std::array<slot, 8> sc{};
          for (int d = g0; d < g1; ++d) sc[static_cast<std::size_t>(d)] = r.wait(cp);
          r.take_turn(mma);
          r.wgmma_fence();
          for (int d = g0; d < g1; ++d) {
            auto m = r.wgmma(dot, sx[static_cast<std::size_t>(d)][sX].rows(r.warpgroup(), c.wgs), sc[static_cast<std::size_t>(d)][sC]);
            if (d == 0) m.overwrite();
          }
          r.wgmma_commit();
          r.pass_turn(mma);
          r.wgmma_wait(0);
          for (int d = g0; d < g1; ++d) r.release(cp, sc[static_cast<std::size_t>(d)]);
        }
        // Centroids past K score +inf (l2: c_norm's fill) and are never chosen.
        op_ref pick{};
        if (c.metric == kmeans_metric::l2) pick = r.row_argmin(best, arg, fma(dot, -2.0f, cn), j * c.bn).accumulate();
        // (cosine, inner product: centroids past K would score 0 * x; they are masked by index)
        if (c.metric == kmeans_metric::cosine)
          pick = r.row_argmin(best, arg, select(j * c.bn + col() >= K.extent(), pos_inf, cn * dot), j * c.bn).accumulate();
        if (c.metric == kmeans_metric::inner_product)
          pick = r.row_argmin(best, arg, select(j * c.bn + col() >= K.extent(), pos_inf, -dot), j * c.bn).accumulate();
        if (c.lazy_index) pick.lazy_index();
      });
      for (int d = 0; d < c.parts; ++d) r.release(xp, sx[static_cast<std::size_t>(d)]);
      r.store(Idx.tile(b, i * c.wgs + r.warpgroup(), 0), arg);
    });
  });
  k.role("load", warpgroups(1), regs(producer_regs), [&](role& r) {
    r.for_each(space, [&](auto i, auto b) {
      for (int d = 0; d < c.parts; ++d) {
        auto s = r.acquire(xp);
        r.tma_load(s[sX], X.tile(b, i, d));
      }
      r.loop(tiles(K, c.bn), [&](auto j) {
        for (int d = 0; d < c.parts; ++d) {
          auto s = r.acquire(cp);
          r.tma_load(s[sC], C.tile(b, j, d));
        }
      });
    });
  });

  return k.build();
}

}  // namespace cake::kernels
