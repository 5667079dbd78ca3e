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
// issuing their MMAs, so one's argmin (ALU work) overlaps the other's MMAs (tensor work); or (overlap)
// each consumer overlaps its own argmin with its own MMAs, half a tile at a time. A centroid stage can
// carry the tile's c_norm too (cn_in_stage; NaN past K, so no mask), and the kernel can add its points
// into the update's sums once their indices are known (scatter: kmeans::step).
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
  // The MMA turn passed after this consumer's MMAs complete (wgmma_wait), not once they are issued: the
  // other consumer's MMAs then run during this one's argmin instead of queueing behind its MMAs, so the
  // two consumers' argmins do not fall into step (both folding while the tensor pipe idles).
  bool pass_after_wait = false;
  // Software-pipelined halves (rows = 128, parts <= 4): each consumer's rows are two accumulators of 64
  // rows, each its own MMA group, and a centroid stage holds a whole tile. A consumer issues one half's
  // MMAs (this tile's second half, or the next tile's first) and folds the other half meanwhile, so its
  // own argmin overlaps its own MMAs; the next tile's c_norm loads a step ahead. No turns.
  bool overlap = false;
  // A timing probe (cake_bench_kmeans --probe; the entry points refuse it): the MMAs with a row min of
  // dot + c_norm in place of the argmin (one add and min per score), idx all 0. What the schedule's
  // MMAs and loads reach without the argmin's compare and selects.
  bool mma_probe = false;
  // The update's scatter fused into the assignment (one Lloyd iteration's sums and counts, update.hpp):
  // once a consumer has its rows' indices, it adds each of its points (read back from the points tile
  // still in smem) into sums[b * K + idx, :] and 1 into counts[b * K + idx] (f32 atomics), before the
  // tile is released. The reductions then run while the tensor cores work on the next tile, instead of
  // in a kernel of their own bound by the L2's reduction rate (kmeans::step; docs/kmeans.md).
  bool scatter = false;
  // c_norm of a centroid tile carried in its pipeline stage (TMA, next to the tile's first part) instead of
  // loaded from global into registers by every consumer thread: centroids past K read NaN (fill_outside),
  // whose score loses every comparison, so neither l2 nor cosine masks by index. In the overlapped form it
  // also drops the second c_norm vector (the next tile's, held a step ahead). Not for inner_product.
  bool cn_in_stage = false;
  // What kmeans_assign_sm90 builds: a message for a configuration it cannot, or nullptr.
  constexpr const char* invalid() const {
    if (parts < 1 || parts > 8) return "parts must be 1..8";
    if (rows != 64 && rows != 128) return "rows must be 64 or 128";
    if (wgs < 2 || wgs > 4) return "wgs must be 2..4";
    if (x_stages != 1 && x_stages != 2) return "x_stages must be 1 or 2";
    if (x_stages == 2 && !persistent) return "x_stages = 2 needs the persistent walk";
    if (overlap && (rows != 128 || parts > 4)) return "overlap needs rows = 128 and parts <= 4";
    if (overlap && pass_after_wait) return "overlap takes no turns (pass_after_wait does not apply)";
    if (scatter && mma_probe) return "the MMA probe's idx is not an assignment: it cannot scatter";
    if (cn_in_stage && overlap && parts > 3) return "cn_in_stage with overlap needs parts <= 3 (a stage carries at most 4 regions)";
    return nullptr;
  }
  friend constexpr auto operator<=>(const kmeans_assign_config&, const kmeans_assign_config&) = default;
};

// Smem of a configuration in bytes (points tile + centroid stages), for the entry point's choice.
// (with overlap a centroid stage holds a whole tile: every part)
// (cn_in_stage: each centroid stage also carries the tile's c_norm, bn f32)
constexpr int kmeans_assign_smem(const kmeans_assign_config& c) {
  const bool cn = c.cn_in_stage && c.metric != kmeans_metric::inner_product;
  return (c.wgs * c.rows * c.parts * c.x_stages + c.stages * c.bn * (c.overlap ? c.parts : 1)) * 64 * 2 + (cn ? c.stages * c.bn * 4 : 0);
}

namespace kmeans_assign_detail {
// (scatter) the register names of the chunks' target rows
constexpr const char* chunk_name(int q) { return q == 0 ? "to0" : q == 1 ? "to1" : q == 2 ? "to2" : "to3"; }
}  // namespace kmeans_assign_detail

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
  auto One = k.dim("one");
  auto Idx = k.output<i32>("idx", dims(Bt, N, One));
  // (scatter) the update's sums [B*K, D] and counts [B*K, 1], added into (the caller zeroes them)
  tensor<f32> Sums, Counts;
  if (c.scatter) {
    auto BK = k.dim("BK");
    Sums = k.output<f32>("sums", dims(BK, D));
    Counts = k.output<f32>("counts", dims(BK, One));
  }
  auto space = k.parallel(tiles(N, c.wgs * c.rows), each(Bt));
  auto sX = k.smem<In>("sX", {c.wgs * c.rows, 64}, swizzle::b128);
  smem_tile<In> sC{};
  if (!c.overlap) sC = k.smem<In>("sC", {c.bn, 64}, swizzle::b128);
  auto xp = k.pipeline("x", stages(c.parts * c.x_stages)).carries(sX);  // one stage per 64-column part (x_stages tiles), all held
  // a stage per part, or (overlap) a stage per tile carrying every part
  std::array<smem_tile<In>, 4> sCs{};
  if (c.overlap)
    for (int d = 0; d < c.parts && d < 4; ++d) sCs[static_cast<std::size_t>(d)] = k.smem<In>(d == 0 ? "sC0" : d == 1 ? "sC1" : d == 2 ? "sC2" : "sC3", {c.bn, 64}, swizzle::b128);
  // (cn_in_stage) the tile's c_norm, TMA-loaded with its first part
  const bool cn_stage = c.cn_in_stage && c.metric != kmeans_metric::inner_product;
  smem_tile<f32> sCn{};
  if (cn_stage) sCn = k.smem<f32>("sCn", {1, c.bn});
  auto carry = [&](auto... regions) { return cn_stage ? k.pipeline("c", stages(c.stages)).carries(regions..., sCn) : k.pipeline("c", stages(c.stages)).carries(regions...); };
  auto cp = !c.overlap    ? carry(sC)
            : c.parts == 1 ? carry(sCs[0])
            : c.parts == 2 ? carry(sCs[0], sCs[1])
            : c.parts == 3 ? carry(sCs[0], sCs[1], sCs[2])
                           : k.pipeline("c", stages(c.stages)).carries(sCs[0], sCs[1], sCs[2], sCs[3]);
  named_barrier_ref mma{};
  if (!c.overlap) mma = k.turns("mma");  // (overlap issues freely)
  named_barrier_ref stored{};  // (scatter) a warpgroup's idx stores, seen by all its threads
  if (c.scatter) stored = k.named_barrier("idx_stored", per_unit);
  // Registers: the producer warpgroup gives all but 40 (24 with 3+ consumers) to the consumers
  // (setmaxnreg), which get what is left of the pool the launch starts with (threads x the entry cap,
  // 65536 / threads in multiples of 8: setmaxnreg.inc only takes what a dec released), in multiples of
  // 8, at most 232: 40/232 with 2 consumers, 24/160 with 3, 24/112 with 4.
  const int producer_regs = c.wgs > 2 ? 24 : 40;
  const int consumer_regs = plan::consumer_register_share(targets::sm90a.limits, 128 * (c.wgs + 1), 128, producer_regs, 128 * c.wgs);

  k.role("assign", warpgroups(c.wgs), regs(consumer_regs), [&](role& r) {
    // With overlap, the warpgroup's rows are two accumulators of rows / 2, each its own MMA group.
    const int nh = c.overlap ? 2 : 1, hr = c.rows / nh;
    std::array<reg_tile<f32>, 2> dot{}, best{};
    std::array<reg_tile<i32>, 2> arg{};
    for (int h = 0; h < nh; ++h) {
      dot[h] = r.accumulator<f32>(nh == 1 ? "dot" : h ? "dot1" : "dot0", {hr, c.bn});
      best[h] = r.row_vector<f32>(nh == 1 ? "best" : h ? "best1" : "best0", hr);
      arg[h] = r.row_vector<i32>(nh == 1 ? "arg" : h ? "arg1" : "arg0", hr);
    }
    reg_tile<f32> cn;  // c_norm of the tile's centroids (not for inner_product)
    if (c.metric != kmeans_metric::inner_product) cn = r.col_vector<f32>("cn", c.bn);
    reg_tile<f32> cn_next;  // (overlap) the next tile's c_norm, loaded a half-tile step ahead
    if (c.overlap && c.metric != kmeans_metric::inner_product && !cn_stage) cn_next = r.col_vector<f32>("cn_next", c.bn);
    // (scatter) 32 of the warpgroup's points at a time, one 64-column part: 4 lanes per point, so that a
    // warp's reductions cover 8 rows of sums in 64-byte runs (a thread per point would scatter 32 rows per
    // instruction); their target rows of sums (one vector per chunk), and ones (the counts)
    constexpr int chunk = 32;
    const int chunks = c.rows / chunk;
    reg_tile<In> xs;
    std::array<reg_tile<i32>, 4> to{};
    reg_tile<f32> one;
    if (c.scatter) {
      xs = r.fragment<In>("xs", {chunk, 64});
      for (int q = 0; q < chunks; ++q) to[static_cast<std::size_t>(q)] = r.row_vector<i32>(kmeans_assign_detail::chunk_name(q), chunk);
      one = r.row_vector<f32>("one", chunk);
      r.fill(one, 1.0f);
    }
    r.for_each(space, [&](auto i, auto b) {
      std::array<slot, 8> sx{};
      for (int d = 0; d < c.parts; ++d) sx[static_cast<std::size_t>(d)] = r.wait(xp);
      for (int h = 0; h < nh; ++h) {
        r.fill(best[h], pos_inf);
        r.fill(arg[h], 0.0f);
      }
      // Folds half h's scores of the tile into its running argmin. Centroids past K score +inf (l2:
      // c_norm's fill) and are never chosen; cosine and inner product would score 0 * x there, so they
      // are masked by index.
      auto fold = [&](int h, index_expr j) {
        if (c.mma_probe) {  // one add and min per score instead of the argmin's FFMA, compare and selects
          r.row_min(best[h], dot[h] + cn);
          return;
        }
        op_ref pick{};
        if (c.metric == kmeans_metric::l2) pick = r.row_argmin(best[h], arg[h], fma(dot[h], -2.0f, cn), j * c.bn).accumulate();
        if (c.metric == kmeans_metric::cosine && cn_stage)  // past K: c_norm NaN, the score NaN, never chosen
          pick = r.row_argmin(best[h], arg[h], cn * dot[h], j * c.bn).accumulate();
        if (c.metric == kmeans_metric::cosine && !cn_stage)
          pick = r.row_argmin(best[h], arg[h], select(j * c.bn + col() >= K.extent(), pos_inf, cn * dot[h]), j * c.bn).accumulate();
        if (c.metric == kmeans_metric::inner_product)
          pick = r.row_argmin(best[h], arg[h], select(j * c.bn + col() >= K.extent(), pos_inf, -dot[h]), j * c.bn).accumulate();
        if (c.lazy_index) pick.lazy_index();
      };
      if (c.overlap) {
        // tile j's half h on the tensor pipe (one wgmma group)
        auto issue = [&](int h, slot sc) {
          r.wgmma_fence();
          for (int d = 0; d < c.parts; ++d) {
            auto m = r.wgmma(dot[h], sx[static_cast<std::size_t>(d)][sX].rows(r.warpgroup() * 2 + h, c.wgs * 2), sc[sCs[static_cast<std::size_t>(d)]]);
            if (d == 0) m.overwrite();
          }
          r.wgmma_commit();
        };
        auto load_cn = [&](reg_tile<f32> to, index_expr j) {
          if (c.metric == kmeans_metric::l2) r.load(to, Cn.tile(b, j)).fill_outside(pos_inf);
          if (c.metric == kmeans_metric::cosine) r.load(to, Cn.tile(b, j)).fill_outside(0.0f);
        };
        auto stage_cn = [&](slot sc) {  // (cn_in_stage) this tile's c_norm from its stage
          if (cn_stage) r.load(cn, sc[sCn]);
        };
        // Each half-tile step issues one half's MMAs, folds the other half (complete) meanwhile, and retires
        // its group before the step ends (a group waited for in a later trip would make ptxas serialize
        // every wgmma, C7514). Entering trip j, dot0 holds tile j's first half, complete.
        auto s0 = r.wait(cp);
        if (cn_stage) stage_cn(s0);
        else load_cn(cn, 0);
        issue(0, s0);
        r.wgmma_wait(0);
        r.loop((K.extent() - 1) / c.bn, [&](auto j) {  // tiles 0 .. last - 1
          auto sj = r.held(cp);
          issue(1, sj);
          if (!cn_stage) load_cn(cn_next, j + 1);
          fold(0, j);
          r.wgmma_wait(0);
          r.release(cp, sj);
          auto sn = r.wait(cp);
          issue(0, sn);
          fold(1, j);
          r.wgmma_wait(0);
          if (cn_stage) stage_cn(sn);  // tile j + 1's, from its stage (held into the next trip)
          else if (c.metric != kmeans_metric::inner_product) r.set(cn, cn_next);
        });
        r.loop((K.extent() - 1) / c.bn, tiles(K, c.bn), 1, [&](auto j) {  // the last tile (one trip)
          auto sl = r.held(cp);
          issue(1, sl);
          fold(0, j);
          r.wgmma_wait(0);
          r.release(cp, sl);
          fold(1, j);
        });
      } else {
        r.loop(tiles(K, c.bn), [&](auto j) {
          // The tile's parts in groups of at most `stages` (a consumer holds a whole group at once; both
          // consumers read every stage, so they take turns group by group).
          const int group = c.parts < c.stages ? c.parts : c.stages;
          // The tile's c_norm, loaded before the MMAs are waited for: its latency hides behind them (or, in
          // the stage, read once the stage is there).
          if (!cn_stage && c.metric == kmeans_metric::l2) r.load(cn, Cn.tile(b, j)).fill_outside(pos_inf);
          if (!cn_stage && c.metric == kmeans_metric::cosine) r.load(cn, Cn.tile(b, j)).fill_outside(0.0f);
          for (int g0 = 0; g0 < c.parts; g0 += group) {
            const int g1 = g0 + group < c.parts ? g0 + group : c.parts;
            std::array<slot, 8> sc{};
            for (int d = g0; d < g1; ++d) sc[static_cast<std::size_t>(d)] = r.wait(cp);
            if (cn_stage && g0 == 0) r.load(cn, sc[0][sCn]);
            r.take_turn(mma);
            r.wgmma_fence();
            for (int d = g0; d < g1; ++d) {
              auto m = r.wgmma(dot[0], sx[static_cast<std::size_t>(d)][sX].rows(r.warpgroup(), c.wgs), sc[static_cast<std::size_t>(d)][sC]);
              if (d == 0) m.overwrite();
            }
            r.wgmma_commit();
            if (!c.pass_after_wait) r.pass_turn(mma);
            r.wgmma_wait(0);
            if (c.pass_after_wait) r.pass_turn(mma);
            for (int d = g0; d < g1; ++d) r.release(cp, sc[static_cast<std::size_t>(d)]);
          }
          fold(0, j);
        });
      }
      if (!c.scatter)
        for (int d = 0; d < c.parts; ++d) r.release(xp, sx[static_cast<std::size_t>(d)]);
      for (int h = 0; h < nh; ++h) {
        if (c.mma_probe) r.set(arg[h], best[h]);  // keeps the probe's MMAs live
        r.store(Idx.tile(b, (i * c.wgs + r.warpgroup()) * nh + h, 0), arg[h]);
      }
      if (c.scatter) {
        // The indices come back in the points' layout (blocked, not the MMA's) through the idx just
        // stored; points past N load -1 and are skipped.
        // All the chunks' indices are loaded first, so that their latencies overlap.
        r.sync(stored);
        for (int q = 0; q < chunks; ++q) r.load(to[static_cast<std::size_t>(q)], Idx.tile(b, (i * c.wgs + r.warpgroup()) * chunks + q, 0)).fill_outside(-1.0f);
        for (int q = 0; q < chunks; ++q) {
          const reg_tile<i32> t = to[static_cast<std::size_t>(q)];
          r.set(t, select(t >= 0.0f, t + rx(b) * K.extent(), -1.0f));
          for (int d = 0; d < c.parts; ++d) {
            r.load(xs, sx[static_cast<std::size_t>(d)][sX].rows(r.warpgroup() * chunks + q, c.wgs * chunks));
            r.scatter_add(Sums.tile(0, d), xs, t);
          }
          r.scatter_add(Counts.tile(0, 0), one, t);
        }
        for (int d = 0; d < c.parts; ++d) r.release(xp, sx[static_cast<std::size_t>(d)]);
      }
    });
  });
  k.role("load", warpgroups(1), regs(producer_regs), [&](role& r) {
    r.for_each(space, [&](auto i, auto b) {
      for (int d = 0; d < c.parts; ++d) {
        auto s = r.acquire(xp);
        r.tma_load(s[sX], X.tile(b, i, d));
      }
      r.loop(tiles(K, c.bn), [&](auto j) {
        // (cn_in_stage) the tile's c_norm with its first part; past K it reads NaN
        if (c.overlap) {
          auto s = r.acquire(cp);
          for (int d = 0; d < c.parts; ++d) r.tma_load(s[sCs[static_cast<std::size_t>(d)]], C.tile(b, j, d));
          if (cn_stage) r.tma_load(s[sCn], Cn.tile(b, j)).fill_outside(nan_value);
        } else {
          for (int d = 0; d < c.parts; ++d) {
            auto s = r.acquire(cp);
            r.tma_load(s[sC], C.tile(b, j, d));
            if (cn_stage && d == 0) r.tma_load(s[sCn], Cn.tile(b, j)).fill_outside(nan_value);
          }
        }
      });
    });
  });

  return k.build();
}

}  // namespace cake::kernels
