#pragma once
// The schedules cake_bench_gemm_sweep times for one shape (at most 10, so that the H200 run of the whole
// search half of the domain stays within minutes): tile widths, pipeline depths and cluster sizes of the
// persistent sm_90a schedule, ping-pong mainloops, and the split-K schedule for small M and for any M
// whose 128 x 128 tiles leave SMs idle.
// choose_gemm's pick (the dispatcher's fallback) is always among them, so a bucket can only pick a
// schedule that was timed next to the fallback on the same shape.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <cake/cost/model.hpp>
#include <cake/gemm.hpp>

namespace cake_bench {

inline constexpr int sweep_max_candidates = 10;
inline constexpr long long sweep_small_m = 128;  // M at or below this also tries the small-M schedules

inline cake::gemm_plan sm90_plan(int bn, int cluster, bool pingpong = false, int bm = 128, int in_flight = 0, int max_stages = 6) {
  cake::gemm_plan p;
  auto& c = p.sm90;
  c.bm = bm;
  c.bn = bn;
  c.cluster_m = cluster;
  c.pingpong = pingpong;
  c.in_flight = in_flight;
  c.stages = cake::max_gemm_stages(c, 2, max_stages);
  return p;
}
// Narrow tiles with deep pipelines, as cuBLAS runs where 128 x 128 tiles are too few for the SMs
// (bench/results/h100/gemm_peer_kernels.json: 64 x 64 tiles with 13 stages, 64 x 128 with 8, picked so that
// the tiles make one wave of 128-132 CTAs): 128 x 64 tiles (8 stages), and 64-row ping-pong tiles of 64 or
// 96 columns (12 and 10 stages). On an H100 (bench/results/h100/small_tiles/) they were the fastest of the
// sweep's schedules at bf16 512 x 2112 x 7168 (128 x 64: 34.7 us against 40.4 for the best before), 256 x 4096
// x 4096 (26.3 against 30.3), 256 x 2112 x 7168 (64 x 64: 31.2 against 32.3; e4m3 19.5 against 21.9) and 128 x
// 6144 x 4096 (64 x 96: 30.9 against 32.1), and slower than 128 x 128 at e4m3 512 x 2112 x 7168.
inline constexpr int sweep_deep_stages = 12;
inline cake::gemm_plan narrow_plan(int bm, int bn, int cluster) {
  return bm == 64 ? sm90_plan(bn, cluster, true, 64, 1, sweep_deep_stages) : sm90_plan(bn, cluster, false, 128, 0, sweep_deep_stages);
}
inline constexpr std::array<std::pair<int, int>, 5> narrow_tiles = {{{128, 96}, {128, 64}, {64, 128}, {64, 96}, {64, 64}}};  // (rows, columns), larger first
// Of the narrow tiles, the one whose tiles fill their waves of the SMs best (tiles / (waves x SMs)), as cuBLAS
// picks (the larger tile on a tie; clusters of 2 along M, sharing B, where there are two row tiles or more;
// 128-row tiles only above 64 rows). On the shapes above it picks the measured fastest narrow tile at all four
// bf16 shapes; the rule was written after seeing them, so they do not validate it (the H200 re-sweep will).
// How full the waves of bm x bn tiles (clusters of `cluster` along M) are: tiles / (waves x SMs).
inline double wave_fill(long long M, long long N, int bm, int bn, int cluster, int sm_count) {
  const long long rows = (M + bm - 1) / bm;
  const long long tiles = (rows + cluster - 1) / cluster * cluster * ((N + bn - 1) / bn), waves = (tiles + sm_count - 1) / sm_count;
  return static_cast<double>(tiles) / static_cast<double>(waves * sm_count);
}
inline cake::gemm_plan wave_fill_plan(long long M, long long N, int sm_count) {
  cake::gemm_plan best;
  double best_fill = -1;
  for (auto [bm, bn] : narrow_tiles) {
    if (bm == 128 && M <= 64) continue;
    const int cluster = (M + bm - 1) / bm >= 2 ? 2 : 1;
    const double fill = wave_fill(M, N, bm, bn, cluster, sm_count);
    if (fill > best_fill) best = narrow_plan(bm, bn, cluster), best_fill = fill;
  }
  return best;
}
// The widths of the cooperative 128-row tile between 128 and 256 (multiples of 16: the TMA-store epilogue's
// narrowest chunk) that the sweep's own widths (128, 176, 192, 256) leave out.
inline constexpr std::array<int, 5> between_widths = {144, 160, 208, 224, 240};
// The cooperative 128-row tile in clusters of 2 at the width between the sweep's own that the cost model
// estimates fastest for the shape, where it estimates it at least `margin` faster than the fastest of the sweep's own
// widths (nothing otherwise, or where no width can be estimated). Past one wave a width's time goes by whole waves of
// tiles, so a width between the sweep's own can leave fewer SMs idle in the last wave: 2048 x 2112 x 7168 at BN 176
// is 16 x 12 = 192 tiles (2 waves, the second 45% full), at BN 144 16 x 15 = 240 (2 waves, 82% full) of tiles 18%
// narrower. The model ranks by that and by each width's MMA rate; the margin keeps out the many-wave shapes, where
// the widths differ by their MMA rates alone (the calibration's microbenchmark puts e4m3 at BN 224 2.9% faster per
// column than at 256, which no GEMM has confirmed).
// Only above the small-M schedules' M and where 128 x 128 tiles are at least as many as the SMs (the shapes whose
// candidates are the cooperative and ping-pong tiles; the rule was measured there only).
inline constexpr double model_width_margin = 0.03;
inline std::optional<cake::gemm_plan> model_width_plan(long long M, long long N, long long K, int sm_count, cake::gemm_input in) {
  if (M <= sweep_small_m || ((M + 127) / 128) * ((N + 127) / 128) < sm_count) return std::nullopt;
  std::optional<cake::gemm_plan> best;
  double best_us = 0, own_us = 0;
  for (int bn = 128; bn <= 256; bn += 16) {
    const cake::gemm_plan p = sm90_plan(bn, 2);
    const cake::program prog = in == cake::gemm_input::bf16 ? cake::kernels::gemm_sm90<cake::bf16>(p.sm90) : cake::kernels::gemm_sm90<cake::e4m3>(p.sm90);
    const auto e = cake::cost::estimate(prog, {{"M", M}, {"N", N}, {"K", K}}, nullptr, cake::cost::estimate_scope::time_only);
    if (!e.ok) return std::nullopt;
    const bool own = std::find(between_widths.begin(), between_widths.end(), bn) == between_widths.end();
    if (own) own_us = own_us > 0 ? std::min(own_us, e.time_us) : e.time_us;
    else if (!best || e.time_us <= best_us) best = p, best_us = e.time_us;
  }
  if (best && best_us < (1 - model_width_margin) * own_us) return best;
  return std::nullopt;
}

inline cake::gemm_plan splitk_plan(int splits, int bn = 128, int bm = 64, bool global_sum = false) {
  cake::gemm_plan p;
  p.kernel = cake::gemm_kernel::splitk;
  p.splitk.splits = splits;
  p.splitk.bn = bn;
  p.splitk.bm = bm;
  p.splitk.global_sum = global_sum;
  p.splitk.stages = cake::max_splitk_stages(bn, bm, global_sum);
  return p;
}

// How many CTAs of each split-K schedule (bm, bn, splits; splits 1 for the global-sum form, whose CTAs are
// not clusters) run at once: measured on the device by the sweep (runtime_kernel::max_active_clusters x the
// cluster's CTAs); absent entries assume sm_count / splits whole clusters (the global form: sm_count).
using splitk_concurrency = std::map<std::tuple<int, int, int>, long long>;

// The cluster a split-K schedule's concurrency is kept per (the global-sum form: no cluster, and its concurrency
// does not depend on the splits: one entry per width).
inline int splitk_concurrency_cluster(const cake::gemm_plan& p) { return p.splitk.global_sum ? 1 : p.splitk.splits; }
// Records that `clusters` clusters of p ran at once (0 or less: not measured; the fill then assumes SMs / splits).
inline void record_splitk_concurrency(splitk_concurrency& conc, const cake::gemm_plan& p, int clusters) {
  const int cluster = splitk_concurrency_cluster(p);
  conc[{p.splitk.bm, p.splitk.bn, cluster}] = clusters > 0 ? static_cast<long long>(clusters) * cluster : -1;
}

// cake::splitk_fill_config_for's pick for the shape (the split-K tile width and splits that fill the SMs).
inline cake::gemm_plan splitk_fill_plan(long long M, long long N, long long K, int sm_count, cake::gemm_input in, const splitk_concurrency* conc,
                                        int max_bn = 256, bool between = true, int max_bm = 128) {
  cake::gemm_plan p;
  p.kernel = cake::gemm_kernel::splitk;
  p.splitk = cake::splitk_fill_config_for(
      M, N, K, sm_count,
      [&](int bm, int bn, int splits) {
        if (conc) {
          const auto it = conc->find({bm, bn, splits});
          if (it != conc->end() && it->second > 0) return it->second;
        }
        return static_cast<long long>(sm_count / splits * splits);
      },
      in, max_bn, between, max_bm);
  return p;
}

// splitk_global_fill_config_for's pick for the shape (partial sums through global memory, not a cluster).
inline cake::gemm_plan splitk_global_fill_plan(long long M, long long N, long long K, int sm_count, cake::gemm_input in, const splitk_concurrency* conc) {
  cake::gemm_plan p;
  p.kernel = cake::gemm_kernel::splitk;
  p.splitk = cake::splitk_global_fill_config_for(
      M, N, K, sm_count,
      [&](int bm, int bn) {
        if (conc) {
          const auto it = conc->find({bm, bn, 1});
          if (it != conc->end() && it->second > 0) return it->second;
        }
        return static_cast<long long>(sm_count);
      },
      in);
  return p;
}

// Every schedule the sweep can time, whatever the shape (the lowering test builds each of them).
// (splitk_fill_plan can return any width and split of its search space: all of them.)
inline std::vector<cake::gemm_plan> sweep_all_candidates() {
  std::vector<cake::gemm_plan> all = {sm90_plan(256, 2), sm90_plan(256, 1),       sm90_plan(192, 2),           sm90_plan(176, 2),
                                      sm90_plan(128, 1), sm90_plan(128, 2), sm90_plan(128, 2, true, 128, 1), sm90_plan(128, 1, true, 64, 1)};
  for (int bn : between_widths) all.push_back(sm90_plan(bn, 2));  // (model_width_plan's other choices)
  // the narrow, deep tiles (wave_fill_plan's choices, and the two the few-tile shapes always try), clusters of 1 and 2
  for (auto [bm, bn] : narrow_tiles)
    for (int cluster : {1, 2}) all.push_back(narrow_plan(bm, bn, cluster));
  // 64- and 128-row tiles (M over 64: B read by half as many row tiles) of every width and split the fill can
  // take (splitk_min_stages: not 128 x 256)
  for (int bm : {64, 128})
    for (int bn : {256, 192, 160, 128, 112, 96, 64})
      for (int splits = 2; splits <= 8; ++splits)
        if ((bn / 8) % splits == 0 && cake::max_splitk_stages(bn, bm) >= cake::splitk_min_stages) all.push_back(splitk_plan(splits, bn, bm));
  // the global-sum form: every width and split its fill can take
  for (int bm : {64, 128})
    for (int bn : cake::splitk_global_widths)
      for (int splits = 2; splits <= cake::splitk_global_max_fill_splits; ++splits) all.push_back(splitk_plan(splits, bn, bm, true));
  return all;
}

// The candidates for one shape: choose_gemm's pick first (its row is marked "fallback" in the JSON).
inline std::vector<cake::gemm_plan> sweep_candidates(long long M, long long N, long long K, int sm_count, cake::gemm_input in,
                                                    const splitk_concurrency* conc = nullptr) {
  std::vector<cake::gemm_plan> out;
  auto add = [&](const cake::gemm_plan& p) {
    if (out.size() < sweep_max_candidates && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  cake::gemm_plan fallback;
  fallback.sm90 = cake::choose_gemm(M, N, K, sm_count, in).config;
  add(fallback);
  if (M <= sweep_small_m) {
    // Few row tiles: no cluster along M (a 2-CTA cluster would pad one row tile to two), narrow tiles
    // and 64-row ping-pong tiles for more CTAs, and (bf16) the K loop split over a cluster.
    add(sm90_plan(256, 1));
    add(sm90_plan(128, 1));
    add(sm90_plan(128, 1, true, 64, 1));
    add(wave_fill_plan(M, N, sm_count));  // (M = 128, N = 6144: 64 x 96 tiles, 2 x 64 of them)
    add(splitk_plan(2));
    add(splitk_fill_plan(M, N, K, sm_count, in, conc));
    add(splitk_global_fill_plan(M, N, K, sm_count, in, conc));  // (any split at the full CTA count: no cluster)
    add(splitk_fill_plan(M, N, K, sm_count, in, conc, 256, false));  // the pick among the coarse widths too
    add(splitk_fill_plan(M, N, K, sm_count, in, conc, 128));
    add(splitk_fill_plan(M, N, K, sm_count, in, conc, 256, true, 64));  // (M over 64: the pick among 64-row tiles too)
    // (last, where the list is full they go: over the committed sweep's 108 searched (type, M <= 128) pairs
    // sk4_bn128_s6 came within 1% of the fastest once and was never the fastest)
    add(splitk_plan(4));
    add(splitk_plan(8));
  } else {
    // Fewer 128 x 128 tiles than SMs (e.g. N = 2112 at M = 256: 34 tiles): the K loop split over 2 or 4
    // CTAs instead of the 128-wide cluster and ping-pong forms, which never won there (gemm_sweep.json),
    // with 64-row tiles and with 128-row ones (two consumers share each B slice: half the B re-reads).
    const bool few_tiles = ((M + 127) / 128) * ((N + 127) / 128) < sm_count;
    if (few_tiles) {
      // (BN 192 and 256 never came within 3% of the fastest on these shapes in the committed sweep; the
      // narrow tiles take their places)
      add(wave_fill_plan(M, N, sm_count));
      add(narrow_plan(128, 64, 2));
      add(narrow_plan(64, 64, 2));
      add(sm90_plan(128, 1));
      add(splitk_plan(2));
      add(splitk_fill_plan(M, N, K, sm_count, in, conc));  // (128-row tiles among its choices)
      add(splitk_global_fill_plan(M, N, K, sm_count, in, conc));
      add(splitk_fill_plan(M, N, K, sm_count, in, conc, 256, false));
      add(splitk_plan(2, 128, 128));
      add(splitk_fill_plan(M, N, K, sm_count, in, conc, 256, true, 64));
      add(sm90_plan(128, 2));
    } else {
      add(sm90_plan(256, 2));
      add(sm90_plan(256, 1));
      add(sm90_plan(192, 2));
      add(sm90_plan(128, 1));
      add(sm90_plan(128, 2));
      add(sm90_plan(128, 2, true, 128, 1));
      add(sm90_plan(176, 2));
      // the width the cost model estimates fastest, where it is none of the above (2048 x 2112 x 7168: BN 144)
      if (const auto w = model_width_plan(M, N, K, sm_count, in)) add(*w);
      // (Not the wave-fill tile where 128 x 128 tiles leave the last wave mostly empty: timed on an H100 on
      // 2026-12-06 at 1024 x 2112 x 7168 and 256 x 10240 x 8192, both types, it was 1.18-1.75x slower than BN 176
      // in clusters of 2; bench/results/h100/gemm_widefill.json.)
    }
  }
  return out;
}

}  // namespace cake_bench
