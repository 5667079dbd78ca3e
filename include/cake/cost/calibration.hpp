#pragma once
// What the cost model knows about a GPU: rates and latencies measured by bench/cost/calibrate.cpp on
// that GPU, fitted by bench/cost/derive_calibration.py and committed with their provenance under
// cost/calibration/. Nothing here is a datasheet number. A target without a table gets no estimate
// (find_calibration returns nullptr and the model says so); docs/cost-model.md says how to add one.
#include <algorithm>
#include <span>
#include <string_view>

#include "../core/dtype.hpp"
#include "../target/target.hpp"

namespace cake::cost {

// Time of one 128-byte K block of the calibration's MMA pattern on one SM, with every SM busy: two
// warpgroups, each issuing the wgmma of a 64 x N tile over 128 bytes of K (4 x k16 for 16-bit inputs,
// 4 x k32 for fp8), then commit and wait(0) -- the inner step of the sm_90a GEMM's mainloop.
struct mma_rate {
  dtype in = dtype::bf16;
  int n = 0;
  double kblock_us = 0;
};

// A factor on the MMA time per K block at one tile width, beside mma_in_situ: the dispatcher's sweep (long,
// HBM-streaming GEMMs) ran BN 176 and 192 slower per K block than the microbenchmark's rate predicts, which the
// calibration GEMMs (short, L2-resident, N a multiple of the width) did not show. Fitted on half of that sweep
// (bench/cost/fit_sweep.py); widths not listed: 1.
struct mma_width_factor {
  int n = 0;
  double factor = 1;
};

// A long run's factor per tile width (mma_width_long, long_run_from_us .. long_run_to_us): on the dispatcher's
// sweep, runs of milliseconds at widths below 256 measured further behind BN 256 than shorter runs of the same
// schedules did (BN 176 about 5% more), which the per-K-block terms cannot say (they do not know the run's
// length). The factor multiplies a whole run's estimate, ramping from 1 at long_run_from_us to the table's
// value at long_run_to_us. Fitted on half of that sweep (bench/cost/fit_sweep.py); the cause is not measured
// (a candidate: the SM clock falls within bursts of large GEMMs, bench/results/h200/gemm_clock_probe.json).

struct calibration {
  // Provenance.
  std::string_view id;       // "sm_90a/h200"
  target_id target = target_id::sm_90a;
  std::string_view gpu, driver, cuda, date, command, raw_data;  // raw_data: the committed raw JSON files
  // The device.
  int sm_count = 0;
  double l2_bytes = 0;
  double l2_effective_bytes = 0;  // working set up to which streaming re-reads keep 90% of the L2 rate
  int max_active_clusters_2 = 0;  // 2-CTA clusters of the GEMM that fit at once; 0 = not measured
  // CTAs of clusters of each size (the index, 2..8) that run at once, for kernels of one CTA per SM: a
  // cluster stays inside one GPC, so sizes that do not divide a GPC's SMs leave some idle (H200: 120 CTAs
  // for clusters of 4 and 8, 117 of 3, 102 of 6). 0 = not measured (then SMs / size whole clusters).
  int max_cluster_ctas[9] = {};
  // Tensor cores.
  std::span<const mma_rate> mma;  // sorted by (dtype, n)
  double mma_in_situ = 1.0;       // the GEMM's time per K block at BN = 256 over the microbenchmark's
  std::span<const mma_width_factor> mma_width;  // per tile width (exact N), fitted on the sweep; 1 elsewhere
  std::span<const mma_width_factor> mma_width_long;  // per tile width, on a long run's whole time (above); 1 elsewhere
  double long_run_from_us = 0, long_run_to_us = 0;   // the ramp of mma_width_long (to = 0: no long-run factor)
  double mma_alternating = 1.0;   // the same when the warpgroups take turns issuing whole tiles (ping-pong)
  double kblock_overhead_us = 0;  // per K iteration beside the MMA (wait, fence, commit, release): favours wide tiles
  // A partly idle GPU clocks higher: the MMA time per K block is scaled by 1 - mma_idle_gain x (the share of
  // SMs the grid leaves idle). The dispatcher's sweep measured the tensor-bound rows with at most a quarter of
  // the SMs busy at 0.74-0.79 of their estimate, against 0.91-0.95 with every SM busy. Set (not fitted: a fitted
  // gain moved the other constants to a worse held-out first choice) by bench/cost/fit_sweep.py; 0 = none.
  double mma_idle_gain = 0;
  // The TMA -> smem pipeline of one SM.
  double stage_turnover_us = 0, stage_turnover_us_per_kib = 0;  // fastest a deep pipeline turns a stage over
  // The fixed part the TMA microbenchmark measured (for reference): stage_turnover_us is the sweep fit's
  // where one exists (fitted lower: the sweep's narrow, deep tiles ran faster than the measured value allows).
  double stage_turnover_microbenchmark_us = 0;
  double pipeline_round_trip_us = 0;  // a stage's round trip in the GEMM (free -> loaded -> consumed -> free), MMA excluded
  double tma_latency_us = 0, tma_latency_us_per_kib = 0;  // unloaded TMA round trip of one stage (for reference)
  double tma_latency_hbm_us = 0;                           // the same when the load misses L2
  // Bandwidth.
  double l2_read_gbps = 0;                 // aggregate TMA reads from L2 (issued bytes; a multicast box counts once)
  double l2_read_microbenchmark_gbps = 0;  // what the scattered-box microbenchmark reached (for reference)
  double hbm_read_gbps = 0, hbm_write_gbps = 0, hbm_copy_gbps = 0;
  // Per tile and per launch.
  double epilogue_us_per_store = 0;  // per TMA store (chunk) a warpgroup issues per tile
  double epilogue_us_per_kib = 0;    // per KiB of the output tile
  double launch_us = 0;              // launch, prologue, first fill and drain of a persistent GEMM
  // The part of the shorter of (mainloop + epilogue) and the HBM time that does not overlap the longer:
  // total = launch + max(a, b) + hbm_overlap_loss * min(a, b). 0 is a perfect roofline.
  double hbm_overlap_loss = 0;
  double cluster_sum_us_per_kib = 0;  // per KiB a CTA reads from the other CTAs of its cluster in a cluster_sum
  // A grid of more CTAs than run at once (any launch that is not persistent; fitted on split-K's) pays each
  // later wave's prologue and first pipeline fill again: per wave after the first.
  double wave_us = 0;
  // Split-K through global memory: per tile, the parts' fence and arrival count and the last CTA's dependent
  // read of the others' parts (a latency chain the per-KiB terms do not see).
  double global_sum_us = 0;
  // Split-K over several tile rows (64-row tiles where M gives 2 or more): each B panel is read by every row
  // tile, at about the same time, so L2 should serve all but the first reader; where the operands are larger
  // than L2 the sweep measured those schedules up to 25% slower than a single read predicts (and 64-row split-K
  // at one row tile within 1%). Counted as extra HBM reads: splitk_reread x (1 - 1 / row tiles) x the panel
  // bytes x the share of the compulsory reads past l2_effective_bytes. Fitted on the sweep; 0 = none.
  double splitk_reread = 0;
  // The most one SM streams from HBM, GB/s: a grid of few CTAs (32 tiles of BN 256 at N = 8192, M <= 128) cannot
  // draw the whole HBM rate; on the sweep such schedules read 54-56 GB/s per CTA at long K whatever their tile
  // (bf16 and e4m3 alike), 20% slower than the aggregate rate predicts. The reads take at least
  // bytes / (CTAs x sm_hbm_gbps). Fitted on the sweep; 0 = no limit.
  double sm_hbm_gbps = 0;
};

constexpr double mma_width_factor_at(const calibration& cal, int n) {
  for (const auto& w : cal.mma_width)
    if (w.n == n) return w.factor;
  return 1.0;
}

// The long-run factor of a run of tile width n estimated at t_us (1 where the calibration has none).
constexpr double long_run_factor(const calibration& cal, int n, double t_us) {
  if (cal.long_run_to_us <= cal.long_run_from_us) return 1.0;
  double f = 1.0;
  for (const auto& w : cal.mma_width_long)
    if (w.n == n) f = w.factor;
  const double s = std::clamp((t_us - cal.long_run_from_us) / (cal.long_run_to_us - cal.long_run_from_us), 0.0, 1.0);
  return 1.0 + (f - 1.0) * s;
}

// Linear interpolation in a table sorted by x (clamped at the ends). `clamped` says whether x was outside.
template <class Row, class X, class Y>
constexpr double interpolate(std::span<const Row> rows, double x, X xof, Y yof, bool* clamped = nullptr) {
  if (clamped) *clamped = false;
  if (rows.empty()) return 0;
  if (x <= xof(rows.front()) || rows.size() == 1) {
    if (clamped) *clamped = x < xof(rows.front());
    return yof(rows.front());
  }
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (x <= xof(rows[i])) {
      const double x0 = xof(rows[i - 1]), x1 = xof(rows[i]);
      const double t = (x - x0) / (x1 - x0);
      return yof(rows[i - 1]) + t * (yof(rows[i]) - yof(rows[i - 1]));
    }
  }
  if (clamped) *clamped = true;
  return yof(rows.back());
}

}  // namespace cake::cost
