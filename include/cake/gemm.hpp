#pragma once
// cake::gemm: the entry point an inference engine calls.
//
//   D[M,N] = A[M,K] * B[N,K]^T          (bf16 in, f32 accumulate, bf16 out)
//   D[M,N] = scale * A[M,K] * B[N,K]^T  (fp8 e4m3 in, per-tensor scale = scale_a * scale_b, bf16 out)
//
// A and B are K-major (row-major with leading dimensions lda, ldb >= K), D is row-major (ldd >= N); all
// on the device. M, N, K are runtime values and need not be multiples of any tile. The call picks a
// schedule for the shape (select_gemm: the measured shape buckets of gemm_dispatch.hpp, else
// choose_gemm), JIT-compiles it once per schedule and device (cached in memory and on disk, see
// docs/jit.md) and launches it on `stream`.
//
// Requirements (checked, with an error naming the argument): sm_90a device (H100/H200); A, B, D 16-byte
// aligned; lda and ldb multiples of 16 bytes (TMA row pitch). Outputs whose rows are not 16-byte
// multiples (N or ldd not a multiple of 8) are written by a direct-store epilogue, so D's padding is
// never touched.
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "gemm_dispatch.hpp"
#include "gemm_plan.hpp"
#include "kernels/gemm/sm90_bf16.hpp"
#include "kernels/gemm/sm90_splitk.hpp"
#include "jit/device_memory.hpp"
#include "runtime/arrival_counters.hpp"
#include "runtime/kernel.hpp"
#include "runtime/kernel_table.hpp"

namespace cake {

// Fused epilogue of cake::gemm: D = act(acc * row_scale[m] * col_scale[n] + bias[n]) + residual[m, n],
// each part optional (a null pointer leaves it out). All on the device, 16-byte aligned.
struct gemm_epilogue_args {
  const void* bias = nullptr;         // bf16 [N]
  const float* row_scale = nullptr;   // f32 [M]
  const float* col_scale = nullptr;   // f32 [N]
  const void* residual = nullptr;     // bf16 [M, N], leading dimension ldr (>= N)
  long long ldr = 0;
  kernels::gemm_activation activation = kernels::gemm_activation::none;
  constexpr kernels::gemm_epilogue flags() const {
    kernels::gemm_epilogue e;
    e.bias = bias != nullptr;
    e.row_scale = row_scale != nullptr;
    e.col_scale = col_scale != nullptr;
    e.residual = residual != nullptr;
    e.act = activation;
    return e;
  }
};

struct gemm_choice {
  kernels::gemm_sm90_config config;
  long long tiles = 0;      // output tiles (cluster-padded)
  long long waves = 0;      // ceil(tiles / concurrent CTAs)
  double efficiency = 0;    // useful fraction of the tiles' work, times the tile width's relative speed
  std::string why;
};

// Deepest pipeline whose stages (and epilogue staging) fit the sm_90a shared-memory opt-in limit, at most
// `cap` (6: the depth the tiles of 128 rows and 128 or more columns reach anyway; narrow tiles go deeper,
// as cuBLAS's do: 64 x 64 tiles with 12 stages, bench/gemm/sweep_candidates.hpp).
constexpr int max_gemm_stages(const kernels::gemm_sm90_config& c, int in_bytes, int cap = 6) {
  const int stage = (c.bm + c.bn) * 128;  // one 128-byte K slice of A and B
  const int staging = c.staging_buffers() * c.bm * c.store_chunk() * 2;  // the schedule's sD
  const int budget = targets::sm90a.limits.smem_per_block_optin - staging - 256;
  (void)in_bytes;
  int s = budget / stage;
  return s > cap ? cap : s;
}

// Shape-based choice among tile widths. A persistent CTA runs ceil(tiles / CTAs) tiles, so the cost
// of a width is waves * width / (its measured relative speed): 256 is the fastest per FLOP, narrower
// tiles win when they quantize better (N = 2112: 176 gives 12 even column tiles, 256 gives 8.25).
// The relative speeds come from the prototype sweep on the H200 (docs/gemm.md).
inline gemm_choice choose_gemm(long long M, long long N, long long K, int sm_count, gemm_input in = gemm_input::bf16,
                               kernels::gemm_epilogue epi = {}, bool direct_store = false) {
  (void)K;
  // A residual tile or a column-scale vector in registers next to a 64 x BN accumulator spills above
  // BN = 128 (NVRTC's report, tests/lowering), and so does any fused epilogue with the direct-store
  // epilogue's addressing: those take BN <= 128.
  const int max_bn = epi.residual || epi.col_scale || (direct_store && epi.any()) ? 128 : 256;
  struct width {
    int bn;
    double speed;
  };
  constexpr width widths[] = {{256, 1.0}, {192, 0.96}, {176, 0.95}, {128, 0.90}};
  gemm_choice best;
  double best_cost = 0;
  for (const auto& w : widths) {
    if (w.bn > max_bn) continue;
    kernels::gemm_sm90_config c;
    c.bn = w.bn;
    c.epi = epi;
    c.stages = max_gemm_stages(c, in == gemm_input::bf16 ? 2 : 1);
    const long long tiles_m = (M + c.bm - 1) / c.bm, tiles_n = (N + c.bn - 1) / c.bn;
    const long long tiles = (tiles_m + c.cluster_m - 1) / c.cluster_m * c.cluster_m * tiles_n;
    const long long ctas = sm_count / c.cluster_m * c.cluster_m;
    const long long waves = (tiles + ctas - 1) / ctas;
    const double cost = static_cast<double>(waves) * w.bn / w.speed;
    if (best.tiles == 0 || cost < best_cost) {
      best_cost = cost;
      best.config = c;
      best.tiles = tiles;
      best.waves = waves;
      best.efficiency = static_cast<double>(M) * N / (static_cast<double>(waves) * ctas * c.bm * c.bn) * w.speed;
    }
  }
  best.why = "BN=" + std::to_string(best.config.bn) + ", " + std::to_string(best.config.stages) + " stages: " + std::to_string(best.tiles) + " tiles in " +
             std::to_string(best.waves) + " waves";
  return best;
}

// Deepest split-K pipeline (at most 6 stages) that fits the sm_90a opt-in shared memory next to the
// cluster sum's scratch (the BM x BN f32 accumulators of the consumer warpgroups; none where the partial
// sums meet in global memory).
constexpr int max_splitk_stages(int bn, int bm = 64, bool global_sum = false) {
  const int stage = (bm + bn) * 128;  // one 128-byte K slice of A (bm rows) and B (bn rows)
  const int budget = targets::sm90a.limits.smem_per_block_optin - (global_sum ? 0 : bm * bn * 4) - 1024;
  const int s = budget / stage;
  return s > 6 ? 6 : s;
}

// The fewest stages a split-K schedule the fill picks or the sweep times may have: with fewer, the loads of a
// K block no longer overlap two others (the cluster sum's scratch leaves 128 x 256 tiles 2, and their two
// 64 x 256 accumulators per thread spill).
inline constexpr int splitk_min_stages = 3;

// The split-K schedule that fills the GPU best for a small-M shape, among 64-row tiles (and 128-row ones
// at M over 64), tile widths 64..max_bn and splits 2..8 that cut the tile into whole 8-column groups
// (cluster_sum_scatter). A CTA streams ceil(K blocks / splits) K blocks of a BM x BN tile, and the CTAs run
// in waves of what the device holds at once (`concurrent_ctas(bm, bn, splits)`: whole clusters, each inside
// one GPC, so possibly fewer than the SMs; or more, where two narrow CTAs share an SM and its bandwidth), so
// the time goes as waves x CTAs per SM x ceil(K blocks / splits) x the rows a K block loads (A's, short at
// M <= 32, plus BN of B); ties go to the taller tile, then the wider (fewer re-reads of B and of A), then to
// fewer splits (less to sum). Small M is memory bound: this is about how many SMs stream B.
// N = 2112 (17 tiles of 128) at M = 1: BN = 64 with 4 splits gives 132 CTAs in one wave, where BN = 128
// gives 68 (4 splits) or 136 (8: two waves). At M = 256, 64-row tiles read B four times over; 128-row tiles
// of 192 columns over 6 splits make 2 x 11 x 6 = 132 CTAs that read it twice. The widths between (160, 112,
// 96) fill other N: 6144 is 64 tiles of 96 (128 CTAs in clusters of 2, which pack the SMs, where 128 CTAs
// of 192-wide tiles need clusters of 4, of which the H200 holds 120 CTAs at once), 7168 is 64 of 112, 10240
// 64 of 160. `between = false` leaves those three out: the model is rough, and the H200 sweep (2026-12-03)
// found the coarse widths' pick faster on some shapes where the model preferred one between (N = 36864: 192
// over 112), so the sweep times both picks; `max_bm = 64` leaves the 128-row tiles out (the sweep times both).
template <class ConcurrentCtas>
kernels::gemm_splitk_config splitk_fill_config_for(long long M, long long N, long long K, int sm_count, ConcurrentCtas concurrent_ctas,
                                                   gemm_input in = gemm_input::bf16, int max_bn = 256, bool between = true, int max_bm = 128) {
  const long long bk = in == gemm_input::bf16 ? 64 : 128, kblocks = (K + bk - 1) / bk;
  kernels::gemm_splitk_config best;
  long long best_cost = -1;
  for (int bm : {128, 64}) {
    if (bm > max_bm || (bm == 128 && M <= 64)) continue;
    const int a_rows = kernels::short_a_rows(M) ? kernels::short_a_rows(M) * (bm / 64) : bm;  // A's rows per K block
    for (int bn : {256, 192, 160, 128, 112, 96, 64}) {
      if (bn > max_bn || (!between && (bn == 160 || bn == 112 || bn == 96))) continue;
      if (max_splitk_stages(bn, bm) < splitk_min_stages) continue;
      for (int splits = 2; splits <= 8; ++splits) {
        if ((bn / 8) % splits != 0) continue;
        const long long at_once = std::max<long long>(splits, concurrent_ctas(bm, bn, splits));
        const long long ctas = (M + bm - 1) / bm * ((N + bn - 1) / bn) * splits;
        // CTAs that share an SM (narrow tiles fit two) share its bandwidth: a wave costs its CTAs per SM.
        const long long per_sm = (std::min(ctas, at_once) + sm_count - 1) / sm_count;
        const long long cost = (ctas + at_once - 1) / at_once * per_sm * ((kblocks + splits - 1) / splits) * (a_rows + bn);
        if (best_cost < 0 || cost < best_cost) {  // strict: the first (tallest, widest, fewest splits) of equals stays
          best_cost = cost;
          best.bm = bm;
          best.bn = bn;
          best.splits = splits;
          best.stages = max_splitk_stages(bn, bm);
        }
      }
    }
  }
  return best;
}
// The widths the split-K schedule whose partial sums meet in global memory (global_sum) is filled with:
// per 64-row consumer warpgroup, its accumulator and the addresses of the partial-sum traffic stay in
// registers (sm_90a, ptxas 13.0: 64-row tiles up to 208 wide take 92-255 registers, 224 spills; 128-row
// tiles, whose producer warpgroup gives the consumers 240, up to 192, 208 spills), and 2..8 splits (the
// domain's few-tile shapes fill the SMs with those; the schedule takes up to 32).
inline constexpr int splitk_global_widths[] = {192, 176, 160, 144, 136, 128, 112, 96, 64};
inline constexpr int splitk_global_max_fill_splits = 8;

// The split-K schedule through global memory that fills the GPU best for a shape (cf. splitk_fill_config_for):
// its CTAs are not clusters, so any split runs as many CTAs at once as the SMs hold (`ctas_at_once(bm, bn)`),
// and any width of whole 8-column groups is possible. A CTA streams ceil(K blocks / splits) K blocks of a
// BM x BN tile and writes its BM x BN f32 partial sums; the last of a tile's splits also reads the others'
// (splits - 1 of them): in units of a K block's 128-byte rows, BM x BN / 32 per partial. The waves cost as in
// the cluster's fill. N = 2,112 at M = 512: 128 x 128 tiles over 2 splits are 4 x 17 x 2 = 136 CTAs (two
// waves), 64 x 136 ones over 2 are 8 x 16 x 2 = 256 (two waves of 132 at one CTA per SM)...: the model
// weighs them; the sweep times its pick.
template <class CtasAtOnce>
kernels::gemm_splitk_config splitk_global_fill_config_for(long long M, long long N, long long K, int sm_count, CtasAtOnce ctas_at_once,
                                                          gemm_input in = gemm_input::bf16) {
  const long long bk = in == gemm_input::bf16 ? 64 : 128, kblocks = (K + bk - 1) / bk;
  kernels::gemm_splitk_config best;
  best.global_sum = true;
  long long best_cost = -1;
  for (int bm : {128, 64}) {
    if (bm == 128 && M <= 64) continue;
    const int a_rows = kernels::short_a_rows(M) ? kernels::short_a_rows(M) * (bm / 64) : bm;
    for (int bn : splitk_global_widths) {
      for (int splits = 2; splits <= splitk_global_max_fill_splits; ++splits) {
        const long long at_once = std::max<long long>(1, ctas_at_once(bm, bn));
        const long long ctas = (M + bm - 1) / bm * ((N + bn - 1) / bn) * splits;
        const long long per_sm = (std::min(ctas, at_once) + sm_count - 1) / sm_count;
        const long long partial = static_cast<long long>(bm) * bn / 32;
        const long long cost = (ctas + at_once - 1) / at_once * per_sm * (((kblocks + splits - 1) / splits) * (a_rows + bn) + partial * splits);
        if (best_cost < 0 || cost < best_cost) {
          best_cost = cost;
          best.bm = bm;
          best.bn = bn;
          best.splits = splits;
          best.stages = max_splitk_stages(bn, bm, true);
        }
      }
    }
  }
  return best;
}

// The same, assuming every SM holds one CTA and clusters pack the SMs.
inline kernels::gemm_splitk_config splitk_fill_config(long long M, long long N, long long K, int sm_count, gemm_input in = gemm_input::bf16,
                                                      int max_bn = 256) {
  return splitk_fill_config_for(
      M, N, K, sm_count, [&](int, int, int splits) { return static_cast<long long>(sm_count / splits * splits); }, in, max_bn);
}

// What cake::gemm runs for a shape: the plan of the shape bucket that holds it (gemm_dispatch.hpp,
// generated from a measured sweep) when the guards hold, else choose_gemm's schedule (the fallback).
// The guards: the table comes from measurements (not the placeholder), on a GPU with the same SM count
// (tile quantization depends on it), no fused epilogue (the sweep timed plain GEMMs; the split-K
// schedule has no epilogue; choose_gemm's BN caps keep epilogue registers from spilling), and an output
// TMA can store (the sweep timed no direct-store epilogue: every N of the domain is a multiple of 8).
// A bucket lookup is a few comparisons and builds no string (cake::gemm pays it on every call).
struct gemm_selection {
  gemm_plan plan;
  bool from_bucket = false;
  const char* evidence = nullptr;  // the tables' evidence file (from_bucket)
  std::string why() const {
    return plan_name(plan) + (from_bucket ? std::string(" (shape bucket, ") + evidence + ")" : std::string(" (choose_gemm)"));
  }
};

// A set of dispatch tables (the generated ones, or a test's).
struct gemm_dispatch_tables {
  std::span<const gemm_plan> plans;
  std::span<const gemm_dispatch_cell> cells;
  std::span<const gemm_dispatch_bucket> buckets;
  bool measured = false;
  int sm_count = 0;
  const char* evidence = "";
};

inline constexpr gemm_dispatch_tables generated_gemm_dispatch{gemm_dispatch_table::plans, gemm_dispatch_table::cells, gemm_dispatch_table::buckets,
                                                              gemm_dispatch_table::measured, gemm_dispatch_table::sm_count, gemm_dispatch_table::evidence};

inline gemm_selection select_gemm_in(const gemm_dispatch_tables& t, long long M, long long N, long long K, int sm_count, gemm_input in,
                                     kernels::gemm_epilogue epi, bool direct_store) {
  gemm_selection s;
  if (t.measured && sm_count == t.sm_count && !epi.any() && !direct_store) {
    const int i = find_gemm_bucket(t.cells, t.buckets, in, M, N, K);
    if (i >= 0) {
      s.plan = t.plans[static_cast<std::size_t>(i)];
      s.from_bucket = true;
      s.evidence = t.evidence;
      return s;
    }
  }
  s.plan.sm90 = choose_gemm(M, N, K, sm_count, in, epi, direct_store).config;
  return s;
}

inline gemm_selection select_gemm(long long M, long long N, long long K, int sm_count, gemm_input in = gemm_input::bf16, kernels::gemm_epilogue epi = {},
                                  bool direct_store = false) {
  return select_gemm_in(generated_gemm_dispatch, M, N, K, sm_count, in, epi, direct_store);
}

namespace gemm_detail {

// The in-memory kernel table's key: the whole schedule configuration (every field, compared field by
// field: two configurations that differ anywhere are two kernels), the input type and the device.
using kernel_key = std::tuple<kernels::gemm_sm90_config, gemm_input, int>;

// The Program of a schedule for an input type (built, not analyzed).
inline program program_for(const kernels::gemm_sm90_config& c, gemm_input in) {
  return in == gemm_input::bf16 ? kernels::gemm_sm90<bf16>(c) : kernels::gemm_sm90<e4m3>(c);
}
inline program program_for(const kernels::gemm_splitk_config& c, gemm_input in) {
  return in == gemm_input::bf16 ? kernels::gemm_splitk_sm90<bf16>(c) : kernels::gemm_splitk_sm90<e4m3>(c);
}
inline program program_for(const gemm_plan& p, gemm_input in) {
  return p.kernel == gemm_kernel::splitk ? program_for(p.splitk, in) : program_for(p.sm90, in);
}

inline const runtime_kernel& kernel_for(const kernels::gemm_sm90_config& c, gemm_input in, int device) {
  static kernel_table<kernel_key, runtime_kernel> kernels;
  return kernels.get(kernel_key{c, in, device}, [&] {
    const program p = program_for(c, in);
    if (!p.errors.empty())
      throw jit::error("cake::gemm: the schedule for BN=" + std::to_string(c.bn) + " is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

// The plan as cake::gemm runs it at this M: the rows of A each stage loads derived from M (short_a_rows;
// the benches JIT these before timing).
constexpr gemm_plan as_run(gemm_plan p, long long M) {
  p.sm90.a_rows = p.splitk.a_rows = kernels::short_a_rows(M);
  return p;
}

inline const runtime_kernel& splitk_kernel_for(const kernels::gemm_splitk_config& c, gemm_input in, int device) {
  static kernel_table<std::tuple<kernels::gemm_splitk_config, gemm_input, int>, runtime_kernel> kernels;
  return kernels.get({c, in, device}, [&] {
    const program p = program_for(c, in);
    if (!p.errors.empty())
      throw jit::error("cake::gemm: the split-K schedule " + plan_name({gemm_kernel::splitk, {}, c}) + " is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

// The workspace of the split-K schedule whose partial sums meet in global memory (global_sum): one f32
// slice of the output per split and the tiles' arrival counters, per device and stream (launches on one
// stream run in order, so they can share it; two streams must not). The counters are zeroed when a buffer
// is made, and every complete launch leaves them at zero (count_arrival wraps). A larger need makes new
// buffers (at least twice the old: few growths) and keeps the old ones until exit, so that a launch another
// host thread is enqueuing with them never sees them freed. A launch cut short (an error, a trap) leaves
// counters elsewhere: the context is lost then anyway. The first call on a stream allocates (cuMemAlloc):
// under CUDA graph capture, make one call before capturing.
struct splitk_workspace {
  CUdeviceptr part = 0, count = 0;
};
// The partial sums' slices (partials_workspace_for) and the arrival counters (arrival_counters_for).
inline splitk_workspace splitk_workspace_for(int device, CUstream stream, std::size_t part_bytes, std::size_t counters) {
  return {partials_workspace_for(device, stream, part_bytes), arrival_counters_for(device, stream, counters)};
}

inline void check_args(const void* A, const void* B, void* D, long long M, long long N, long long K, long long lda, long long ldb, long long ldd,
                       int in_bytes) {
  auto bad = [](const std::string& why) { throw jit::argument_error("cake::gemm: " + why); };
  if (M < 1 || N < 1 || K < 1) bad("M, N, K must be at least 1 (got " + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + ")");
  if (lda < K) bad("lda = " + std::to_string(lda) + " is smaller than K = " + std::to_string(K));
  if (ldb < K) bad("ldb = " + std::to_string(ldb) + " is smaller than K = " + std::to_string(K));
  if (ldd < N) bad("ldd = " + std::to_string(ldd) + " is smaller than N = " + std::to_string(N));
  // TMA row pitches are below 2^40 bytes (hardware-facts: cuTensorMapEncodeTiled's globalStrides); checked
  // first, so that the byte counts below cannot overflow.
  for (auto [name, ld] : {std::pair{"lda", lda}, std::pair{"ldb", ldb}, std::pair{"ldd", ldd}})
    if (ld >= (1LL << 40) / in_bytes) bad(std::string(name) + " = " + std::to_string(ld) + " elements: a row pitch must be below 2^40 bytes (TMA)");
  if ((lda * in_bytes) % 16) bad("lda * element size = " + std::to_string(lda * in_bytes) + " bytes is not a multiple of 16 (TMA row pitch)");
  if ((ldb * in_bytes) % 16) bad("ldb * element size = " + std::to_string(ldb * in_bytes) + " bytes is not a multiple of 16 (TMA row pitch)");
  for (auto [name, p] : {std::pair{"A", A}, std::pair{"B", B}, std::pair<const char*, const void*>{"D", D}})
    if (!p || reinterpret_cast<std::uintptr_t>(p) % 16) bad(std::string(name) + " must be a non-null, 16-byte aligned device address");
}

inline void run(gemm_input in, const gemm_plan* forced, const void* A, const void* B, void* D, long long M, long long N, long long K,
                long long lda, long long ldb, long long ldd, double scale, CUstream stream, int device, const gemm_epilogue_args& epi = {}) {
  const int eb = in == gemm_input::bf16 ? 2 : 1;
  check_args(A, B, D, M, N, K, lda, ldb, ldd, eb);
  auto bad = [](const std::string& why) { throw jit::argument_error("cake::gemm: " + why); };
  for (auto [name, p] : {std::pair<const char*, const void*>{"bias", epi.bias}, std::pair<const char*, const void*>{"row_scale", epi.row_scale},
                         std::pair<const char*, const void*>{"col_scale", epi.col_scale}, std::pair<const char*, const void*>{"residual", epi.residual}})
    if (p && reinterpret_cast<std::uintptr_t>(p) % 16) bad(std::string(name) + " must be a 16-byte aligned device address");
  if (epi.residual && epi.ldr >= (1LL << 39))
    bad("ldr = " + std::to_string(epi.ldr) + " elements: the residual's row pitch must be below 2^40 bytes");
  if (epi.residual && epi.ldr < N) bad("ldr = " + std::to_string(epi.ldr) + " is smaller than N = " + std::to_string(N) + " (residual's leading dimension)");
  const auto& dev = jit::driver::get().device(device);
  if (dev.cc_major != 9 || dev.cc_minor != 0)
    throw jit::unsupported_error("cake::gemm: the sm_90a schedules need a cc 9.0 device; device " + std::to_string(device) + " is " + dev.describe());
  const bool direct = N % 8 != 0 || ldd % 8 != 0;  // TMA stores clip at 16 bytes: such outputs are stored from registers
  // Tensor parameters in the schedule's order: A, B, D, then the epilogue's parts that are on.
  std::vector<tensor_arg> args = {tensor_view(A, {M, K}, {lda, 1}), tensor_view(B, {N, K}, {ldb, 1}), tensor_view(D, {M, N}, {ldd, 1})};
  const gemm_plan plan = as_run(forced ? *forced : select_gemm(M, N, K, dev.sm_count, in, epi.flags(), direct).plan, M);
  const double scalars[] = {scale};
  const std::span<const double> fp8_scale(scalars, in == gemm_input::bf16 ? 0 : 1);  // e4m3 schedules take the per-tensor scale
  if (plan.kernel == gemm_kernel::splitk) {  // stores from registers, bounds-checked: any N and ldd
    if (epi.flags().any()) bad("the split-K schedule " + plan_name(plan) + " has no fused epilogue");
    if (!plan.splitk.valid())
      bad("no such split-K schedule " + plan_name(plan) +
          " (bm 64 or 128; bn a multiple of 8 up to 256; in a cluster 2..8 splits that cut bn into whole 8-column groups, through global memory 2..32; k_group 1.." +
          std::to_string(kernels::gemm_splitk_config::max_k_group) + ")");
    if (plan.splitk.global_sum) {
      const auto& c = plan.splitk;
      const long long row_blocks = (M + c.bm - 1) / c.bm * (c.bm / 64), col_tiles = (N + c.bn - 1) / c.bn;
      const splitk_workspace w = splitk_workspace_for(device, stream, static_cast<std::size_t>(c.splits) * M * N * 4,
                                                      static_cast<std::size_t>(row_blocks * col_tiles));
      auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); };
      args.push_back(tensor_view(ptr(w.part), {c.splits, M, N}, {M * N, N, 1}));
      args.push_back(tensor_view(ptr(w.count), {row_blocks, col_tiles}, {col_tiles, 1}));
    }
    splitk_kernel_for(plan.splitk, in, device).launch(args, fp8_scale, stream);
    return;
  }
  kernels::gemm_sm90_config config = plan.sm90;
  if (!config.lookahead_fits())
    bad("the schedule " + plan_name(plan) + " asks for the lookahead, which is written for the persistent cooperative schedule with no wgmma group in flight");
  // (an output TMA cannot store takes the direct store below; whole-tile staging then has nothing to stage)
  if (!config.whole_tile_staging_fits())
    bad("the schedule " + plan_name(plan) + " asks for whole-tile staging, which is written for the cooperative schedule's TMA-store epilogue");
  if (forced) config.epi = epi.flags();
  config.direct_store = config.direct_store || direct;
  const runtime_kernel& k = kernel_for(config, in, device);
  if (epi.bias) args.push_back(tensor_view(epi.bias, {N}));
  if (epi.row_scale) args.push_back(tensor_view(epi.row_scale, {M}));
  if (epi.col_scale) args.push_back(tensor_view(epi.col_scale, {N}));
  if (epi.residual) args.push_back(tensor_view(epi.residual, {M, N}, {epi.ldr, 1}));
  k.launch(args, fp8_scale, stream);
}

}  // namespace gemm_detail

inline void gemm(const void* A, const void* B, void* D, long long M, long long N, long long K, long long lda, long long ldb, long long ldd,
                 CUstream stream = nullptr, int device = 0) {
  gemm_detail::run(gemm_input::bf16, nullptr, A, B, D, M, N, K, lda, ldb, ldd, 1.0, stream, device);
}

// The same with a fused epilogue (bias, activation, residual, row/column scales).
inline void gemm(const void* A, const void* B, void* D, long long M, long long N, long long K, long long lda, long long ldb, long long ldd,
                 const gemm_epilogue_args& epilogue, CUstream stream = nullptr, int device = 0) {
  gemm_detail::run(gemm_input::bf16, nullptr, A, B, D, M, N, K, lda, ldb, ldd, 1.0, stream, device, epilogue);
}

// The same with an explicit schedule configuration instead of choose_gemm's (tuning, experiments).
inline void gemm_with(const kernels::gemm_sm90_config& config, gemm_input in, const void* A, const void* B, void* D, long long M, long long N,
                      long long K, long long lda, long long ldb, long long ldd, float scale = 1.0f, CUstream stream = nullptr, int device = 0) {
  gemm_plan plan;
  plan.sm90 = config;
  gemm_detail::run(in, &plan, A, B, D, M, N, K, lda, ldb, ldd, scale, stream, device);
}

// An explicit schedule configuration with a fused epilogue (the configuration's own epilogue flags are
// replaced by the arguments': tuning, experiments).
inline void gemm_with(const kernels::gemm_sm90_config& config, const void* A, const void* B, void* D, long long M, long long N, long long K,
                      long long lda, long long ldb, long long ldd, const gemm_epilogue_args& epilogue, CUstream stream = nullptr, int device = 0) {
  gemm_plan plan;
  plan.sm90 = config;
  gemm_detail::run(gemm_input::bf16, &plan, A, B, D, M, N, K, lda, ldb, ldd, 1.0, stream, device, epilogue);
}

// The same with any plan the dispatcher can return (the persistent schedule or split-K; split-K is bf16 only).
inline void gemm_with(const gemm_plan& plan, gemm_input in, const void* A, const void* B, void* D, long long M, long long N, long long K, long long lda,
                      long long ldb, long long ldd, float scale = 1.0f, CUstream stream = nullptr, int device = 0) {
  gemm_detail::run(in, &plan, A, B, D, M, N, K, lda, ldb, ldd, scale, stream, device);
}

inline void gemm_fp8(const void* A, const void* B, void* D, long long M, long long N, long long K, long long lda, long long ldb, long long ldd,
                     float scale, CUstream stream = nullptr, int device = 0) {
  gemm_detail::run(gemm_input::e4m3, nullptr, A, B, D, M, N, K, lda, ldb, ldd, scale, stream, device);
}

}  // namespace cake
