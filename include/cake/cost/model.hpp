#pragma once
// The cost model: estimated time of a kernel on a calibrated target for given dim values, from the
// Program and its plan alone. docs/cost-model.md derives every term; in short, per CTA:
//
//   per K block  t_k = max(mma, turnover, l2, latency)
//                mma      = MMA work x the calibrated wgmma time for its N (x the in-situ factor)
//                turnover = the fastest one SM's TMA pipeline turns over a stage of this many bytes
//                l2       = bytes the concurrent CTAs request from L2 / the aggregate L2 read rate
//                           (a multicast box is requested once per cluster)
//                latency  = (the pipeline's round trip + mma) / stages           (Little's law)
//   per tile     k_iterations x t_k + epilogue (per TMA store + per KiB of the tile); ping-pong (units on
//                alternate tiles): max(k_iterations x t_k, epilogue), MMA x the calibration's alternating factor
//   per launch   launch + (waves - 1) x wave + last + max(compute - last, hbm) + overlap_loss x min(compute - last, hbm)
//                compute = tiles_per_CTA x per tile, hbm = HBM bytes / HBM bandwidth,
//                last = one tile's epilogue (the CTA's last: no HBM stream is left to hide it),
//                waves = tiles_per_CTA of a grid that is not persistent (each later wave's prologue and fill);
//                split-K adds its sum to each tile's epilogue (per KiB through DSMEM, per tile through global);
//                the whole x the long-run factor of the tile width (1 below 0.5 ms on the H200; calibration.hpp)
//
// tiles_per_CTA = ceil(cluster-tiles / concurrent clusters) (wave quantization of a persistent grid);
// HBM bytes come from the tile schedule (cost/traffic.hpp). Hints re-evaluate the same formula with one
// decision changed (stages, tile width, cluster, raster group) and report what it would gain.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "calibration.hpp"
#include "calibrations.hpp"
#include "kernel_form.hpp"
#include "traffic.hpp"
#include "../plan/walk_balance.hpp"

namespace cake::cost {

struct dim_value {
  std::string name;
  long long value = 0;
};

struct hint {
  std::string change;  // "stages 2 -> 4", "BN 256 -> 176", "cluster 1 -> 2", "raster group 8 -> 16", "epilogue"
  std::string text;    // one sentence with the numbers
  double time_us = 0;  // estimated time with the change (0: not estimated)
};

struct cost_estimate {
  bool ok = false;
  std::string reason;  // when !ok: why there is no estimate
  std::string kernel, target, calibration;
  std::vector<dim_value> dims;
  double time_us = 0, flops = 0, tflops = 0;
  // "tensor cores", "pipeline turnover", "L2 -> SMEM bandwidth", "TMA latency (pipeline depth)", "HBM bandwidth", "epilogue"
  std::string bottleneck;
  // Per K block (one CTA).
  double mma_us = 0, turnover_us = 0, l2_us = 0, latency_us = 0, kblock_us = 0;
  double tma_round_trip_us = 0;
  int stages = 0;
  // The grid.
  int tile_m = 0, tile_n = 0, cluster = 1;
  long long k_iterations = 0, tiles = 0, ctas = 0, tiles_per_cta = 0;
  double waves = 0;            // tiles / CTAs (fractional)
  double wave_efficiency = 0;  // tiles / (tiles_per_cta x CTAs)
  double tile_fill = 0;        // useful fraction of the padded tiles' area
  // Totals along the critical CTA.
  double launch_us = 0, mainloop_us = 0, epilogue_us = 0, epilogue_tile_us = 0, hbm_us = 0;
  // Traffic.
  double hbm_read_bytes = 0, hbm_write_bytes = 0, compulsory_read_bytes = 0, l2_to_smem_bytes = 0;
  std::vector<hint> hints;
  std::vector<std::string> notes;
  // A persistent walk's balance (plan::assess_walk_balance; assessed also when the form is not the GEMM's):
  // the busiest CTA's work over the mean, dealt strided and serpentine.
  bool walk_assessed = false;
  double walk_strided = 1, walk_serpentine = 1;
};

namespace detail {

// One evaluation of the formula for a configuration (the Program's own, or one with a decision changed).
struct eval_config {
  program grid_program;  // its parallel space and launch give the grid (plan::plan_grid)
  int k_dim = -1, tile_k = 1;  // the mainloop walks ceil(dim / tile_k) blocks
  int k_step = 1;              // ... every k_step-th of them (split-K)
  int k_run = 1;               // ... or every k_step-th run of k_run of them (split-K's k_group)
  int split = 1;               // CTAs sharing an output tile (split-K over a cluster)
  double cluster_sum_bytes = 0;
  bool global_sum = false;     // split-K through global memory: every CTA of a tile writes (its part)
  int stages = 0;
  double stage_bytes = 0;
  dtype in = dtype::bf16;
  int mma_n = 0;
  double mma_blocks = 0;
  double issued = 0, issued_multicast = 0;  // requested from L2 per K iteration per CTA (a multicast share counted once)
  double out_bytes_per_tile = 0, stores_per_tile = 0;
  bool alternating = false;                // units on alternate tiles: an epilogue overlaps the next mainloop
  std::vector<panel_stream> streams;       // bytes per K iteration per panel (filled in with K below)
};

struct eval_result {
  bool ok = false;
  std::string why;
  plan::grid_shape g{};
  long long concurrent_clusters = 0, tiles_per_cta = 0, k_iterations = 1;
  double mma = 0, turnover = 0, l2 = 0, latency = 0, round_trip = 0, kblock = 0, epi_tile = 0;
  double mainloop = 0, epilogue = 0, hbm = 0, total = 0;
  double long_run = 1;  // the calibration's long-run factor at this width and length (in total)
  traffic tr{};
  double l2_bytes = 0;
  bool mma_extrapolated = false;
};

inline double mma_kblock_us(const calibration& cal, dtype in, int n, bool& extrapolated, std::vector<std::string>* notes) {
  dtype table = dtype::bf16;
  double factor = 1;
  switch (in) {
    case dtype::bf16: case dtype::f16: table = dtype::bf16; break;
    case dtype::e4m3: case dtype::e5m2: table = dtype::e4m3; break;
    case dtype::i8:
      table = dtype::e4m3;
      if (notes) notes->push_back("i8 wgmma is costed at the calibrated e4m3 rate (same K bytes per instruction)");
      break;
    case dtype::tf32:
      factor = 2;
      if (notes) notes->push_back("tf32 wgmma is costed at twice the calibrated bf16 time (half the K elements per instruction)");
      break;
    default: break;
  }
  std::vector<mma_rate> rows;
  for (const auto& r : cal.mma)
    if (r.in == table) rows.push_back(r);
  bool clamped = false;
  const double us = interpolate(std::span<const mma_rate>(rows), n, [](const mma_rate& r) { return double(r.n); },
                                [](const mma_rate& r) { return r.kblock_us; }, &clamped);
  if (clamped) {
    extrapolated = true;
    // Outside the measured N: scale the nearest point by N (the tensor cores' time is linear in N there).
    const auto& edge = n < rows.front().n ? rows.front() : rows.back();
    return edge.kblock_us * n / edge.n * factor;
  }
  return us * factor;
}

template <class DimValue>
eval_result evaluate(const eval_config& c, DimValue dim, const calibration& cal) {
  eval_result r;
  const program& p = c.grid_program;
  r.g = plan::plan_grid(p, dim, cal.sm_count);
  const int cl = r.g.cluster;
  long long launched = r.g.ctas / cl;
  long long concurrent = p.launch.persistent ? launched : std::max(1, cal.sm_count / cl);
  if (cl == 2 && cal.max_active_clusters_2 > 0) concurrent = std::min<long long>(concurrent, cal.max_active_clusters_2);
  if (cl >= 2 && cl <= 8 && cal.max_cluster_ctas[cl] > 0) concurrent = std::min<long long>(concurrent, std::max(1, cal.max_cluster_ctas[cl] / cl));
  concurrent = std::max<long long>(1, std::min(concurrent, r.g.clusters));
  r.concurrent_clusters = concurrent;
  r.tiles_per_cta = (r.g.clusters + concurrent - 1) / concurrent;
  const double ctas = static_cast<double>(concurrent * cl);
  const double idle_share = std::max(0.0, 1.0 - ctas / std::max(1, cal.sm_count));
  r.mma = (mma_kblock_us(cal, c.in, c.mma_n, r.mma_extrapolated, nullptr) * c.mma_blocks * cal.mma_in_situ * mma_width_factor_at(cal, c.mma_n) *
               (c.alternating ? cal.mma_alternating : 1.0) +
           cal.kblock_overhead_us) *
          (1.0 - cal.mma_idle_gain * idle_share);
  r.l2 = c.issued * ctas / (cal.l2_read_gbps * 1e3);
  r.turnover = cal.stage_turnover_us + cal.stage_turnover_us_per_kib * c.stage_bytes / 1024.0;
  r.epi_tile = cal.epilogue_us_per_store * c.stores_per_tile + cal.epilogue_us_per_kib * c.out_bytes_per_tile / 1024.0 +
               cal.cluster_sum_us_per_kib * (c.split - 1) * c.cluster_sum_bytes / 1024.0 + (c.global_sum && c.split > 1 ? cal.global_sum_us : 0.0);
  const long long k_blocks = c.k_dim >= 0 ? plan::ceil_div(dim(c.k_dim), c.tile_k) : 1;
  r.k_iterations = plan::ceil_div(k_blocks, std::max(1, c.k_step));
  if (c.k_run > 1) {
    // Runs of k_run blocks, every k_step-th: the busiest CTA's blocks (CTA s takes runs s, s + step, ...; the last
    // run may be partial).
    const long long runs = plan::ceil_div(k_blocks, c.k_run), last = k_blocks - (runs - 1) * c.k_run;
    r.k_iterations = 0;
    for (long long s = 0; s < std::min<long long>(c.k_step, runs); ++s) {
      const long long mine = plan::ceil_div(runs - s, c.k_step);  // runs s, s + step, ... below runs
      const bool has_last = (runs - 1 - s) % c.k_step == 0;
      r.k_iterations = std::max(r.k_iterations, mine * c.k_run - (has_last ? c.k_run - last : 0));
    }
  }
  const double k_it = static_cast<double>(r.k_iterations);
  r.epilogue = static_cast<double>(r.tiles_per_cta) * r.epi_tile;
  // HBM traffic from the schedule.
  std::vector<panel_stream> streams = c.streams;
  for (auto& s : streams) s.bytes_per_panel *= static_cast<double>(k_blocks);  // the whole panel, over every split
  // Output bytes: the tile's output bytes per element times the useful (unpadded) output area.
  double area = 1, tile_elems = 1;
  for (int a = 0; a < p.space.count; ++a)
    if (p.space.axes[a].kind == axis_kind::tiles) {
      area *= static_cast<double>(dim(p.space.axes[a].dim));
      tile_elems *= p.space.axes[a].extent;
    }
  // (split-K through global memory: each of a tile's split CTAs writes its part)
  const double write_bytes = c.out_bytes_per_tile / tile_elems * area * (c.global_sum ? c.split : 1);
  if (c.split > 1) {
    // Split-K (small M): the walk is not a rasterized plane of tiles; every panel is read once.
    long long panels[2] = {1, 1};
    for (int a = 0, t = 0; a < p.space.count; ++a)
      if (p.space.axes[a].kind == axis_kind::tiles && t < 2) panels[t++] = plan::ceil_div(dim(p.space.axes[a].dim), p.space.axes[a].extent);
    r.tr = traffic{};
    for (const auto& s : streams) r.tr.compulsory_read_bytes += s.bytes_per_panel * static_cast<double>(s.axis == 0 || s.axis == 1 ? panels[s.axis] : 1);
    r.tr.hbm_read_bytes = r.tr.compulsory_read_bytes;
    // A column panel read by several tile rows (calibration.hpp, splitk_reread): its later readers miss L2 in
    // part once the operands outgrow it.
    const double past_l2 = r.tr.compulsory_read_bytes > 0 ? std::max(0.0, 1.0 - cal.l2_effective_bytes / r.tr.compulsory_read_bytes) : 0.0;
    if (panels[0] > 1 && past_l2 > 0)
      for (const auto& s : streams)
        if (s.axis == 1)
          r.tr.hbm_read_bytes += cal.splitk_reread * (1.0 - 1.0 / static_cast<double>(panels[0])) * s.bytes_per_panel * static_cast<double>(panels[1]) * past_l2;
    r.tr.hbm_write_bytes = write_bytes;
    r.tr.waves = (r.g.clusters + concurrent - 1) / concurrent;
  } else {
    r.tr = simulate_traffic(r.g, p.launch.rast, static_cast<int>(concurrent), streams, write_bytes, cal.l2_effective_bytes);
  }
  // (a grid of few CTAs reads at most sm_hbm_gbps each: calibration.hpp)
  const double read_gbps = cal.sm_hbm_gbps > 0 ? std::min(cal.hbm_read_gbps, cal.sm_hbm_gbps * ctas) : cal.hbm_read_gbps;
  r.hbm = r.tr.hbm_read_bytes / (read_gbps * 1e3) + r.tr.hbm_write_bytes / (cal.hbm_write_gbps * 1e3);
  r.l2_bytes = c.issued * k_it * static_cast<double>(r.g.tile_count);
  r.round_trip = cal.pipeline_round_trip_us;
  r.latency = (r.round_trip + r.mma) / std::max(1, c.stages);
  r.kblock = std::max({r.mma, r.turnover, r.l2, r.latency});
  r.mainloop = static_cast<double>(r.tiles_per_cta) * k_it * r.kblock;
  if (c.alternating) {
    // Ping-pong: a tile's epilogue runs while the other unit's mainloop holds the tensor cores, so a tile
    // costs the longer of the two; only the last epilogue is exposed.
    r.mainloop = static_cast<double>(r.tiles_per_cta) * std::max(k_it * r.kblock, r.epi_tile);
    r.epilogue = r.epi_tile;
  }
  // Streaming from HBM and the K loop overlap imperfectly: near the ridge, and where HBM bounds (small M)
  // the schedule whose K loop is shorter still measures faster, so a fitted part of the shorter one counts.
  // The CTA's last epilogue starts after its last K block has arrived: no HBM stream is left for it to
  // hide under, so it adds to the HBM-bound time as it does to the compute-bound one (the wider tile's
  // longer epilogue is why the 64-row ping-pong tile measures faster than BN 256 at small M, short K:
  // on the committed sweep the held-out first choices within 5% of the best went 71 -> 74 of 78).
  const double last = r.epi_tile, overlappable = r.mainloop + r.epilogue - last;
  const double later_waves = p.launch.persistent ? 0.0 : static_cast<double>(r.tiles_per_cta - 1);
  r.total = cal.launch_us + later_waves * cal.wave_us + last + std::max(overlappable, r.hbm) + cal.hbm_overlap_loss * std::min(overlappable, r.hbm);
  // Runs of milliseconds at widths below 256 measured slower than the terms above say (calibration.hpp).
  r.long_run = long_run_factor(cal, c.mma_n, r.total);
  r.total *= r.long_run;
  r.ok = true;
  return r;
}

inline std::string fmt(double v, int digits = 1) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

// A persistent walk whose points differ in work (causal attention's query tiles): how unevenly each order deals
// it, as a hint where the serpentine order evens it out (measured: +21% on causal prefill at S = 1k,
// docs/attention.md) or a note where the schedule already walks that way.
// `waves_reported`: the estimate's grid line already gives the waves (a kernel of the GEMM form).
inline void add_walk_balance(cost_estimate& e, const program& p, const std::vector<dim_value>& dims, int sm_count, bool waves_reported) {
  if (!p.launch.persistent) return;
  const auto w = plan::assess_walk_balance(
      p,
      [&](int d) -> long long {
        for (const auto& v : dims)
          if (p.find_dim(v.name) == d) return v.value;
        return -1;
      },
      sm_count);
  e.walk_assessed = w.assessed;
  e.walk_strided = w.strided, e.walk_serpentine = w.serpentine;
  auto f = [](double v) { return fmt(v, 2); };
  const std::string walkers = p.launch.cluster_size() > 1 ? " clusters" : " CTAs";
  // Equal points: no order evens them; where the last round is short enough to idle more than 2% of the walk,
  // say so with the numbers (prefill's 4,096 query tiles over 132 CTAs: 31.03 rounds of work in 32)
  if (w.assessed && !w.uneven()) {
    const long long rounds = w.ctas > 0 ? (w.points + w.ctas - 1) / w.ctas : 0;
    if (w.tail_parts > 1) {  // (the walk's figures deal the parts; the estimate's time does not model them or their merge)
      const double unsplit = w.points > 0 ? static_cast<double>(rounds * w.ctas) / static_cast<double>(w.points) : 1.0;
      e.notes.push_back("the persistent walk's last round holds " + std::to_string(w.points % w.ctas) + " of its " + std::to_string(w.points) +
                        " points over " + std::to_string(w.ctas) + walkers + ": k.split_tail deals each in " + std::to_string(w.tail_parts) +
                        " parts, so the busiest CTA carries " + f(w.strided) + "x the mean work (" + fmt(100.0 * (1.0 - 1.0 / w.strided), 1) +
                        "% of the walk idles; unsplit " + fmt(100.0 * (1.0 - 1.0 / unsplit), 1) + "%; the parts' merge not counted, nor in the estimate)");
      return;
    }
    if (waves_reported || w.ctas <= 0 || w.points % w.ctas == 0 || w.strided <= 1.02) return;
    e.notes.push_back("the persistent walk's " + std::to_string(w.points) + " points over " + std::to_string(w.ctas) + walkers + " take " +
                      std::to_string(rounds) + " rounds, the last holding " + std::to_string(w.points % w.ctas) + ": the busiest CTA carries " +
                      f(w.strided) + "x the mean work (" + fmt(100.0 * (1.0 - 1.0 / w.strided), 1) +
                      "% of the walk idles; no order evens equal points: a point count that fills the last round, or the last "
                      "round's points split, k.split_tail(extent, n), would)");
    return;
  }
  if (!w.uneven()) return;
  const bool serpentine = p.launch.order == walk_order::serpentine;
  const std::string what = "the persistent walk's " + std::to_string(w.points) + " points take " + std::to_string(w.min_work) + " to " +
                           std::to_string(w.max_work) + " loop trips each; over " + std::to_string(w.ctas) + walkers + " the busiest carries ";
  // (only where the order matters: a split-K walk's points differ by a trip, which neither order changes)
  if (w.serpentine >= w.strided - 0.02) return;
  if (!serpentine)
    e.hints.push_back({"walk_order::serpentine", what + f(w.strided) + "x the mean work as the walk deals it (strided), " + f(w.serpentine) +
                                                     "x dealt serpentine: k.persistent(raster, walk_order::serpentine)"});
  else
    e.notes.push_back(what + f(w.serpentine) + "x the mean work (serpentine; strided: " + f(w.strided) + "x)");
}

}  // namespace detail

// Estimate the time of `p` on its target for the given dim values (by name; every dim the tiling uses
// needs one). `cal` defaults to the committed calibration of the Program's target.
// The most output tiles estimate() walks (about a second of host time).
inline constexpr long long max_estimated_tiles = 1LL << 22;

// How much estimate() works out. `full`: the time, its terms, the notes and the hints (each hint evaluates the
// form again at another stage count, tile width, cluster or raster group: about 25 more walks of the output tiles,
// and a persistent walk's balance is assessed point by point). `time_only`: the time, its terms and the form's notes,
// with no hints and no walk balance, about 10x less work; the same time_us as `full`. For callers that rank many
// candidates by time (bench/cost/domain_rank.cpp, the sweep's model-picked width, evolve's estimate gate).
enum class estimate_scope { full, time_only };

inline cost_estimate estimate(const program& p, const std::vector<dim_value>& dims, const calibration* cal = nullptr,
                              estimate_scope scope = estimate_scope::full) {
  cost_estimate e;
  e.kernel = std::string(p.kernel_name.view());
  e.target = std::string(to_string(p.target));
  e.dims = dims;
  if (!cal) cal = find_calibration(p.target);
  if (!cal) {
    e.reason = "no cost-model calibration for " + e.target + ": the model only estimates targets measured with bench/cost/calibrate (sm_90a on the H200); see docs/cost-model.md";
    return e;
  }
  e.calibration = std::string(cal->id) + " (" + std::string(cal->gpu) + ", " + std::string(cal->date) + ")";
  const auto plan = plan::make_plan(p);
  const kernel_form f = read_kernel_form(p, plan);
  // The walk's balance is assessed for any persistent schedule, of the GEMM form or not (plan/walk_balance.hpp);
  // its notes come first, the form's after them.
  if (scope == estimate_scope::full) detail::add_walk_balance(e, p, dims, cal->sm_count, f.ok);
  if (!f.ok) {
    e.reason = "not estimated: " + f.why;
    return e;
  }
  e.notes.insert(e.notes.end(), f.notes.begin(), f.notes.end());
  // Dim values by program dim index.
  std::vector<long long> values(p.dims.size(), -1);
  for (const auto& d : dims) {
    const int i = p.find_dim(d.name);
    if (i < 0) {
      e.reason = "the kernel has no dim named '" + d.name + "'";
      return e;
    }
    if (d.value < 1) {
      e.reason = "dim " + d.name + " = " + std::to_string(d.value) + " (must be at least 1)";
      return e;
    }
    values[static_cast<std::size_t>(i)] = d.value;
  }
  for (int a = 0; a <= p.space.count; ++a) {
    const int d = a < p.space.count ? p.space.axes[a].dim : f.k_dim;
    if (a < p.space.count && p.space.axes[a].kind == axis_kind::split) continue;
    if (values[d] < 0) {
      e.reason = "dim " + std::string(p.dims[d].nm.view()) + " has no value (give every tiled dim, e.g. M=4096,N=4096,K=4096)";
      return e;
    }
  }
  auto dim = [&](int i) { return values[static_cast<std::size_t>(i)]; };
  // The traffic model walks every output tile (cost/traffic.hpp): past max_estimated_tiles it would run
  // for minutes, so such shapes are refused with the count.
  double tile_count = 1;
  for (int a = 0; a < p.space.count; ++a)
    if (p.space.axes[a].kind == axis_kind::tiles) {
      const double d = static_cast<double>(dim(p.space.axes[a].dim)), b = static_cast<double>(p.space.axes[a].extent);
      tile_count *= std::ceil(d / b);
    }
  if (tile_count > static_cast<double>(max_estimated_tiles)) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", tile_count);
    e.reason = std::string("the shape has ") + count + " output tiles; the model walks every tile and takes at most " + std::to_string(max_estimated_tiles) +
               " (estimate a smaller shape)";
    return e;
  }

  detail::eval_config base;
  base.grid_program = p;
  base.k_dim = f.k_dim;
  base.tile_k = f.tile_k;
  base.stages = f.stages;
  base.stage_bytes = f.stage_bytes;
  base.in = f.mma_in;
  base.mma_n = f.mma_n;
  base.mma_blocks = f.mma_blocks;
  base.issued = f.bytes_issued;
  base.issued_multicast = f.bytes_issued_multicast;
  base.out_bytes_per_tile = f.out_bytes_per_tile;
  base.stores_per_tile = f.stores_per_tile;
  base.alternating = f.alternating;
  base.k_step = f.k_step;
  base.k_run = f.k_run;
  base.split = f.split;
  base.cluster_sum_bytes = f.cluster_sum_bytes;
  base.global_sum = f.global_sum;
  for (const auto& l : f.loads) base.streams.push_back({l.tensor, l.axis, l.bytes_received});
  const auto r = detail::evaluate(base, dim, *cal);
  if (r.mma_extrapolated) e.notes.push_back("wgmma N=" + std::to_string(f.mma_n) + " is outside the calibrated range: its time is scaled from the nearest measured N");
  if (std::abs(r.long_run - 1.0) > 0.0005)
    e.notes.push_back("a run this long at BN " + std::to_string(f.mma_n) + " is costed x" + detail::fmt(r.long_run, 3) +
                      " (the calibration's long-run factor of this tile width: on the sweep it was fitted on, runs of milliseconds at widths "
                      "below 256 stood further from BN 256 than short runs did)");

  e.ok = true;
  e.time_us = r.total;
  e.flops = 2.0;
  for (int a = 0; a < p.space.count; ++a)
    if (p.space.axes[a].kind == axis_kind::tiles) e.flops *= static_cast<double>(dim(p.space.axes[a].dim));
  e.flops *= static_cast<double>(dim(f.k_dim));
  e.tflops = e.flops / (e.time_us * 1e-6) / 1e12;
  e.mma_us = r.mma;
  e.turnover_us = r.turnover;
  e.l2_us = r.l2;
  e.latency_us = r.latency;
  e.kblock_us = r.kblock;
  e.tma_round_trip_us = r.round_trip;
  e.stages = f.stages;
  e.tile_m = f.tile[0];
  e.tile_n = f.tile[1];
  e.cluster = r.g.cluster;
  e.k_iterations = r.k_iterations;
  e.tiles = r.g.tile_count;
  e.ctas = r.concurrent_clusters * r.g.cluster;
  e.tiles_per_cta = r.tiles_per_cta;
  e.waves = static_cast<double>(r.g.tile_count) / static_cast<double>(e.ctas);
  e.wave_efficiency = static_cast<double>(r.g.tile_count) / static_cast<double>(r.tiles_per_cta * e.ctas);
  {
    double useful = 1, padded = 1;
    for (int a = 0; a < p.space.count; ++a) {
      const auto& ax = p.space.axes[a];
      if (ax.kind != axis_kind::tiles) continue;
      useful *= static_cast<double>(dim(ax.dim));
    }
    padded = static_cast<double>(r.g.tile_count) * f.tile[0] * f.tile[1];
    e.tile_fill = useful / padded;
  }
  e.launch_us = cal->launch_us;
  e.mainloop_us = r.mainloop;
  e.epilogue_us = r.epilogue;
  e.epilogue_tile_us = r.epi_tile;
  e.hbm_us = r.hbm;
  e.hbm_read_bytes = r.tr.hbm_read_bytes;
  e.hbm_write_bytes = r.tr.hbm_write_bytes;
  e.compulsory_read_bytes = r.tr.compulsory_read_bytes;
  e.l2_to_smem_bytes = r.l2_bytes;
  if (r.hbm > r.mainloop + r.epilogue) e.bottleneck = "HBM bandwidth";
  else if (r.epilogue > 0.5 * (r.mainloop + r.epilogue)) e.bottleneck = "epilogue";
  else if (r.kblock == r.mma) e.bottleneck = "tensor cores";
  else if (r.kblock == r.turnover) e.bottleneck = "pipeline turnover";
  else if (r.kblock == r.l2) e.bottleneck = "L2 -> SMEM bandwidth";
  else e.bottleneck = "TMA latency (pipeline depth)";
  if (scope == estimate_scope::time_only) return e;

  using detail::fmt;
  const double limit = static_cast<double>(p.arch().limits.smem_per_block_optin);
  const double other_smem = static_cast<double>(plan.smem.total) - f.stages * f.stage_bytes;
  const auto better = [&](double t) { return t < e.time_us * 0.99; };
  // Deeper pipeline.
  {
    const int fit = static_cast<int>(std::floor((limit - other_smem) / f.stage_bytes));
    double best = e.time_us;
    int best_s = f.stages;
    for (int s = f.stages + 1; s <= std::min(fit, 8); ++s) {
      auto c = base;
      c.stages = s;
      c.grid_program.pipelines[f.pipeline].stages = s;
      const double t = detail::evaluate(c, dim, *cal).total;
      if (t < best - 1e-9) best = t, best_s = s;
    }
    if (best_s != f.stages && better(best))
      e.hints.push_back({"stages " + std::to_string(f.stages) + " -> " + std::to_string(best_s),
                         "stages " + std::to_string(f.stages) + " -> " + std::to_string(best_s) + " hides the " + fmt(r.round_trip, 2) +
                             " us pipeline round trip (TMA load, hand-off, release) behind the wgmma of the other stages (est. " + fmt(e.time_us) + " -> " +
                             fmt(best) + " us)",
                         best});
    else if (e.bottleneck == "TMA latency (pipeline depth)" && fit <= f.stages)
      e.notes.push_back("the pipeline is latency-bound but a deeper one does not fit in shared memory (" + std::to_string(plan.smem.total) + " of " +
                        fmt(limit, 0) + " bytes)");
  }
  // Another tile width along the second parallel axis (GEMM-like forms: B rows, MMA N and the output
  // tile's columns all equal the tile's N extent).
  int axis_n_tile = -1;  // the program axis of the second tiles(...) axis (a split axis may come first)
  for (int a = 0, t = 0; a < p.space.count; ++a)
    if (p.space.axes[a].kind == axis_kind::tiles && t++ == 1) axis_n_tile = a;
  bool scalable = axis_n_tile >= 0 && f.mma_n == f.tile[1];
  for (const auto& l : f.loads) scalable = scalable && (l.axis == 0 || l.axis == 1);
  if (scalable) {
    double b_stage = 0;
    for (const auto& l : f.loads)
      if (l.axis == 1) b_stage += l.bytes_received;
    double best = e.time_us;
    int best_n = f.tile[1], best_s = f.stages;
    double best_waves = 0, best_eff = 0;
    for (int n = 64; n <= 256; n += 16) {
      if (n == f.tile[1]) continue;
      const double scale = static_cast<double>(n) / f.tile[1];
      auto c = base;
      c.mma_n = n;
      c.stage_bytes = f.stage_bytes + b_stage * (scale - 1);
      c.stages = std::min(f.stages, static_cast<int>(std::floor((limit - other_smem) / c.stage_bytes)));  // one change at a time
      if (c.stages < 2) continue;
      c.issued = 0;
      c.issued_multicast = 0;
      for (std::size_t i = 0; i < f.loads.size(); ++i) {
        const auto& l = f.loads[i];
        const double s = l.axis == 1 ? scale : 1.0;
        c.issued += l.bytes_issued * s;
        if (l.multicast) c.issued_multicast += l.bytes_issued * s;
        c.streams[i].bytes_per_panel = l.bytes_received * s;
      }
      c.out_bytes_per_tile = f.out_bytes_per_tile * scale;
      c.stores_per_tile = f.stores_per_tile * scale;  // the epilogue's chunks scale with the tile width
      c.grid_program.space.axes[axis_n_tile].extent = n;
      c.grid_program.pipelines[f.pipeline].stages = c.stages;
      const auto rr = detail::evaluate(c, dim, *cal);
      if (rr.total < best - 1e-9) {
        best = rr.total, best_n = n, best_s = c.stages;
        best_waves = static_cast<double>(rr.g.tile_count) / static_cast<double>(rr.concurrent_clusters * rr.g.cluster);
        best_eff = static_cast<double>(rr.g.tile_count) / static_cast<double>(rr.tiles_per_cta * rr.concurrent_clusters * rr.g.cluster);
      }
    }
    if (best_n != f.tile[1] && best < e.time_us * 0.97) {
      std::string why = best_eff > e.wave_efficiency + 0.05
                            ? "removes a partial wave (" + fmt(e.waves, 2) + " -> " + fmt(best_waves, 2) + " waves of " + std::to_string(e.ctas) + " CTAs)"
                            : "fits the problem better";
      e.hints.push_back({"BN " + std::to_string(f.tile[1]) + " -> " + std::to_string(best_n),
                         "BN " + std::to_string(f.tile[1]) + " -> " + std::to_string(best_n) + (best_s != f.stages ? " (" + std::to_string(best_s) + " stages)" : "") +
                             " " + why + " (est. " + fmt(e.time_us) + " -> " + fmt(best) + " us)",
                         best});
    }
  }
  // Multicast across a cluster when L2 -> SMEM traffic limits the K loop.
  if (e.cluster == 1 && r.l2 >= 0.9 * r.mma) {
    bool has_b = false;
    for (const auto& l : f.loads) has_b = has_b || l.axis == 1;
    if (has_b) {
      auto c = base;
      c.grid_program.launch.cluster[0] = 2;
      c.issued = 0;
      c.issued_multicast = 0;
      for (const auto& l : f.loads) {
        const double issued = l.axis == 1 ? l.bytes_issued / 2 : l.bytes_issued;
        c.issued += issued;
        if (l.axis == 1) c.issued_multicast += issued;
      }
      const double t = detail::evaluate(c, dim, *cal).total;
      if (better(t))
        e.hints.push_back({"cluster 1 -> 2", "cluster 1 -> 2 with the B load multicast halves B's L2 -> SMEM traffic (" + fmt(r.l2, 2) + " us per K block against " +
                                                 fmt(r.mma, 2) + " us of wgmma; est. " + fmt(e.time_us) + " -> " + fmt(t) + " us)",
                           t});
    }
  }
  // Raster group when HBM traffic matters.
  if (r.hbm > 0.5 * (r.mainloop + r.epilogue) && p.launch.persistent) {
    double best = e.time_us;
    int best_g = p.launch.rast.group;
    for (int g : {1, 2, 4, 8, 16, 32}) {
      if (g == p.launch.rast.group) continue;
      auto c = base;
      c.grid_program.launch.rast.group = g;
      const double t = detail::evaluate(c, dim, *cal).total;
      if (t < best - 1e-9) best = t, best_g = g;
    }
    if (best_g != p.launch.rast.group && better(best))
      e.hints.push_back({"raster group " + std::to_string(p.launch.rast.group) + " -> " + std::to_string(best_g),
                         "raster group " + std::to_string(p.launch.rast.group) + " -> " + std::to_string(best_g) + " keeps more operand panels in L2 (HBM reads " +
                             fmt(r.tr.hbm_read_bytes / 1048576.0, 0) + " MiB, compulsory " + fmt(r.tr.compulsory_read_bytes / 1048576.0, 0) + " MiB; est. " +
                             fmt(e.time_us) + " -> " + fmt(best) + " us)",
                         best});
  }
  // The epilogue does not overlap the consumers' mainloop in this form.
  if (r.epilogue > 0.15 * e.time_us)
    e.hints.push_back({"epilogue", "the epilogue is " + fmt(100 * r.epilogue / e.time_us, 0) + "% of the time (" + fmt(r.epi_tile, 2) + " us per tile against " +
                                       fmt(r.k_iterations * r.kblock, 2) + " us of K loop): overlap it with the next tile's mainloop (consumer warpgroups on alternate tiles) or use longer tiles",
                       0});
  std::sort(e.hints.begin(), e.hints.end(), [](const hint& a, const hint& b) {
    return (a.time_us > 0 ? a.time_us : 1e300) < (b.time_us > 0 ? b.time_us : 1e300);
  });
  return e;
}

}  // namespace cake::cost
