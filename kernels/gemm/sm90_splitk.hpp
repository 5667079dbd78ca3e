#pragma once
// D[M,N] = A[M,K] * B[N,K]^T for small M (64 or 128 rows per tile) on Hopper (sm_90a), bf16 or fp8 e4m3 in
// (e4m3: times a per-tensor scale), bf16 out, split along K over the CTAs of a cluster: CTA r of a cluster
// of S takes K blocks r, r + S, r + 2S, ... of the same output tile, and the partial sums meet in
// distributed shared memory as a reduce-scatter (cluster_sum_scatter): CTA r sums and stores the r-th of S
// column blocks, reading 1/S of the tile from every peer. One producer warp issues TMA; one consumer
// warpgroup per 64 rows issues wgmma (each sums its own rows). Used when M is too small to give every SM an
// output tile: 64-row tiles for the smallest M, 128-row tiles (two consumers sharing each B slice) where
// M gives a few row tiles and the 64-row split would re-read B once per 64 rows.
// With `global_sum`, the splits are not a cluster: each CTA stores its partial sums (f32) into its own slice
// of a workspace, arrives on the tile's counter (count_arrival), and the one that arrives last reads the
// other slices, adds them to its own and stores the tile. Any number of splits runs at the GPU's full CTA
// count (clusters of 3 or more hold fewer CTAs at once than there are SMs), and nobody waits for a peer.
#include <compare>

#include <cake/cake.hpp>

#include "short_a.hpp"

namespace cake::kernels {

struct gemm_splitk_config {
  int bn = 128;      // output tile columns
  int bm = 64;       // output tile rows: 64 (one consumer warpgroup) or 128 (two)
  int splits = 4;    // CTAs sharing one output tile (a cluster's; any with global_sum), each on every splits-th K block
  int stages = 6;
  // Rows of A each stage loads: 0 for the whole tile, 8, 16 or 32 at M <= that (short_a.hpp; derived from M
  // by cake::gemm, not a tuning choice).
  int a_rows = 0;
  // The partial sums meet in a global workspace (the last of the splits to arrive adds them) instead of in
  // the cluster's distributed shared memory.
  bool global_sum = false;
  // K blocks a split takes in a row before the next split's (1: block s, s + S, ...; G: blocks sG .. sG + G - 1, then
  // (s + S)G ...; G = ceil(K blocks / S): one run per split, the classic split). Through the workspace the splits
  // do not run in step, and every S-th 128-byte span read 1.15x B's bytes from DRAM at 64 x 8192 x 28672; runs gain
  // 5-11% where K is long and B far past L2 and lose up to 24% elsewhere (docs/gemm.md, "Runs of K blocks"), so the
  // sweep and the fill keep 1 and a plan may name another.
  int k_group = 1;
  // The schedules that exist: 64- or 128-row tiles, a width of whole 8-column groups up to 256; in a cluster
  // 2..8 CTAs (the portable limit) that cut the width into whole 8-column groups (cluster_sum_scatter);
  // through the workspace 2..32 splits of any such width.
  constexpr bool valid() const {
    const bool meet = global_sum ? splits >= 2 && splits <= max_global_splits : splits >= 2 && splits <= 8 && (bn / 8) % splits == 0;
    return (bm == 64 || bm == 128) && bn >= 8 && bn <= 256 && bn % 8 == 0 && meet && stages >= 1 && (a_rows == 0 || a_rows == 8 || a_rows == 16 || a_rows == 32) &&
           k_group >= 1 && k_group <= max_k_group;
  }
  static constexpr int max_global_splits = 32;
  // (a run's K extent, G x 128 bytes of elements, is a tile size of the loop bound: at most 32767 elements, so
  // 255 runs of e4m3's 128-element blocks)
  static constexpr int max_k_group = 255;
  // Ordered field by field (cake::gemm's kernel table keys on the configuration).
  friend constexpr auto operator<=>(const gemm_splitk_config&, const gemm_splitk_config&) = default;
};

template <class In = bf16>
constexpr program gemm_splitk_sm90(gemm_splitk_config c = {}) {
  constexpr bool fp8 = is_float8(In::value);
  // (runs of K blocks named apart, so that a profiler tells the two forms of the workspace's split apart)
  const bool runs = c.global_sum && c.k_group > 1;
  auto k = kernel(fp8 ? (runs ? "gemm_e4m3_splitk_gruns_sm90" : c.global_sum ? "gemm_e4m3_splitk_global_sm90" : "gemm_e4m3_splitk_sm90")
                      : (runs ? "gemm_bf16_splitk_gruns_sm90" : c.global_sum ? "gemm_bf16_splitk_global_sm90" : "gemm_bf16_splitk_sm90"))
               .target(sm_90a);
  if (!c.global_sum) k.cluster(c.splits);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<In>("A", dims(M, K));
  auto B = k.input<In>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  // global_sum: the workspace, one f32 slice of the output per split, and one counter per 64-row block and
  // column tile (i32, zero before the first launch; the last arrival leaves it at zero again).
  tensor<f32> Part;
  tensor<i32> Count;
  if (c.global_sum) {
    auto [NS, CM, CN] = k.dims("NS", "CM", "CN");
    Part = k.output<f32>("part", dims(NS, M, N));
    Count = k.output<i32>("count", dims(CM, CN));
  }
  scalar<f32> scale;  // fp8: the per-tensor scale (scale_a * scale_b), applied to the splits' sum
  if constexpr (fp8) scale = k.param<f32>("scale");
  const int bk = 128 / size_bytes(In::value);  // K step: one 128-byte swizzle span (64 bf16, 128 e4m3)
  // The split axis first: clusters group CTAs along it.
  const int wgs = c.bm / 64;
  // Split s's K blocks (k_group: one at a time, every splits-th; or runs of k_group, every splits-th run).
  auto k_blocks = [&](role& r, auto s, auto body) {
    if (c.k_group == 1) return r.loop(s, tiles(K, bk), c.splits, body);
    r.loop(s, tiles(K, bk * c.k_group), c.splits, [&](auto g) { r.loop(g * c.k_group, min(g * c.k_group + c.k_group, tiles(K, bk)), 1, body); });
  };
  auto work = k.parallel(split(c.splits), tiles(M, c.bm), tiles(N, c.bn));
  auto sA = k.smem<In>("sA", {c.bm, bk}, swizzle::b128);
  auto sB = k.smem<In>("sB", {c.bn, bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(c.stages)).carries(sA, sB);

  auto math = [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, c.bn});
    r.for_each(work, [&](auto s, auto m, auto n) {
      r.fill(acc, 0.0f);  // a split with no K block still adds its zeros
      k_blocks(r, s, [&](auto kt) {
        auto st = r.wait(ab);
        r.wgmma_fence();
        // (one warpgroup: the whole A tile, so that its address needs no warpgroup index)
        if (wgs == 1) r.wgmma(acc, st[sA], st[sB]);
        else r.wgmma(acc, st[sA].rows(r.warpgroup(), wgs), st[sB]);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, st);
        (void)kt;
      });
      const auto rows = m * wgs + r.warpgroup();  // this warpgroup's 64-row block
      if (c.global_sum) {
        r.store(Part.tile(s, rows, n), acc);
        auto before = r.count_arrival(Count.at(rows, n), c.splits);
        r.when(eq(before, c.splits - 1), [&] {  // the last to arrive: every other split's part is in memory
          // (added as they arrive: no register tile of their own next to acc)
          r.for_range(c.splits, [&](auto q) { r.when(ne(q, s), [&] { r.load_add(acc, Part.tile(q, rows, n)); }); });
          if constexpr (fp8) r.scale(acc, scale);
          r.store(D.tile(rows, n), r.convert<bf16>(acc));
        });
        return;
      }
      // Reduce-scatter: CTA `rank` sums (and stores) only the rank-th of `splits` column blocks (each block
      // a static part, so that its registers are indexed by constants).
      r.cluster_sum_scatter(acc);
      if constexpr (fp8) r.scale(acc, scale);
      auto out = r.convert<bf16>(acc);
      r.for_range(c.splits, [&](auto q) {
        r.when(eq(r.cluster_rank(), q), [&] { r.store(D.tile(rows, n * c.splits + q), out.cols(q, c.splits)); });
      });
    });
  };

  auto load = [&](role& r) {
    r.for_each(work, [&](auto s, auto m, auto n) {
      k_blocks(r, s, [&](auto kt) {
        auto st = r.acquire(ab);
        load_a(r, st[sA], A, m, kt, c.bm, c.a_rows, wgs);  // (each consumer warpgroup reads its own 64 rows)
        r.tma_load(st[sB], B.tile(n, kt));
      });
    });
  };
  if (c.global_sum && wgs == 2) {
    // Nine warps leave 168 registers a thread (four register files of 16K, one holding three warps), which
    // the partial sums' traffic next to a 64 x 136+ accumulator outgrows; a producer warpgroup that gives
    // its registers back (24 of them) leaves the consumers 240.
    k.role("math", warpgroups(wgs), regs(240), math);
    k.role("load", warpgroups(1), regs(24), load);
  } else {
    k.role("math", warpgroups(wgs), math);
    k.role("load", warps(1), load);
  }
  return k.build();
}

}  // namespace cake::kernels
