#pragma once
// The schedules cake_bench_gemm_sweep times for one shape (at most 8, so that the H200 run of the whole
// search half of the domain stays within minutes): tile widths, pipeline depths and cluster sizes of the
// persistent sm_90a schedule, ping-pong mainloops, and the split-K schedule for small M and for any M
// whose 128 x 128 tiles leave SMs idle.
// choose_gemm's pick (the dispatcher's fallback) is always among them, so a bucket can only pick a
// schedule that was timed next to the fallback on the same shape.
#include <algorithm>
#include <vector>

#include <cake/gemm.hpp>

namespace cake_bench {

inline constexpr int sweep_max_candidates = 8;
inline constexpr long long sweep_small_m = 128;  // M at or below this also tries the small-M schedules

inline cake::gemm_plan sm90_plan(int bn, int cluster, bool pingpong = false, int bm = 128, int in_flight = 0) {
  cake::gemm_plan p;
  auto& c = p.sm90;
  c.bm = bm;
  c.bn = bn;
  c.cluster_m = cluster;
  c.pingpong = pingpong;
  c.in_flight = in_flight;
  c.stages = cake::max_gemm_stages(c, 2);
  return p;
}
inline cake::gemm_plan splitk_plan(int splits, int bn = 128) {
  cake::gemm_plan p;
  p.kernel = cake::gemm_kernel::splitk;
  p.splitk.splits = splits;
  p.splitk.bn = bn;
  return p;
}

// Every schedule the sweep can time, whatever the shape (the lowering test builds each of them).
inline std::vector<cake::gemm_plan> sweep_all_candidates() {
  return {sm90_plan(256, 2), sm90_plan(256, 1),       sm90_plan(192, 2),           sm90_plan(176, 2),          sm90_plan(128, 1),
          sm90_plan(128, 2), sm90_plan(128, 2, true, 128, 1), sm90_plan(128, 1, true, 64, 1), splitk_plan(2), splitk_plan(4), splitk_plan(8)};
}

// The candidates for one shape: choose_gemm's pick first (its row is marked "fallback" in the JSON).
inline std::vector<cake::gemm_plan> sweep_candidates(long long M, long long N, long long K, int sm_count, cake::gemm_input in) {
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
    add(splitk_plan(2));
    add(splitk_plan(4));
    add(splitk_plan(8));
    add(sm90_plan(256, 2));
  } else {
    // Fewer 128 x 128 tiles than SMs (e.g. N = 2112 at M = 256: 34 tiles): the K loop split over 2 or 4
    // CTAs instead of the 128-wide cluster and ping-pong forms, which never won there (gemm_sweep.json).
    const bool few_tiles = ((M + 127) / 128) * ((N + 127) / 128) < sm_count;
    add(sm90_plan(256, 2));
    add(sm90_plan(256, 1));
    add(sm90_plan(192, 2));
    add(sm90_plan(128, 1));
    if (few_tiles) {
      add(splitk_plan(2));
      add(splitk_plan(4));
    } else {
      add(sm90_plan(128, 2));
      add(sm90_plan(128, 2, true, 128, 1));
    }
    add(sm90_plan(176, 2));
  }
  return out;
}

}  // namespace cake_bench
