#pragma once
// What cake::gemm can run for a shape (a gemm_plan: the persistent sm_90a schedule or the split-K
// schedule for small M) and the shape-bucket tables the dispatcher looks plans up in. The tables
// themselves are generated from measured evidence (include/cake/gemm_dispatch.hpp, written by
// tools/gen/gemm_dispatch.py); this header holds their types and the lookup, so that the lookup is
// written (and tested) once, whatever the tables hold.
#include <charconv>
#include <compare>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/gemm/sm90_bf16.hpp"
#include "kernels/gemm/sm90_splitk.hpp"

namespace cake {

enum class gemm_input { bf16, e4m3 };

enum class gemm_kernel { sm90, splitk };

struct gemm_plan {
  gemm_kernel kernel = gemm_kernel::sm90;
  kernels::gemm_sm90_config sm90{};      // kernel == sm90
  kernels::gemm_splitk_config splitk{};  // kernel == splitk (bf16 or e4m3, as the call's input)
  friend constexpr auto operator<=>(const gemm_plan&, const gemm_plan&) = default;
};

// The canonical name of a plan, as the sweep writes it into its evidence and the generated header
// repeats it: bn256_s4_c2 (cooperative 128 x BN tile, stages, cluster), with _pp<BM> for ping-pong,
// _f1 for one wgmma group in flight, _r4 for a raster group other than the default 8 (the sweep never varies it; a
// `cake evolve` search does), _np for one CTA per tile, _la for the lookahead, _wt for whole-tile staging; sk4_bn128_s6
// for split-K (sk2_bm128_bn128_s5 with 128-row tiles; sk3_bn136_s6_g where the partial sums meet in global memory, not
// in a cluster; _kg8 where each split takes runs of 8 K blocks, not every splits-th block).
inline std::string plan_name(const gemm_plan& p) {
  if (p.kernel == gemm_kernel::splitk)
    return "sk" + std::to_string(p.splitk.splits) + (p.splitk.bm != 64 ? "_bm" + std::to_string(p.splitk.bm) : std::string()) + "_bn" +
           std::to_string(p.splitk.bn) + "_s" + std::to_string(p.splitk.stages) + (p.splitk.global_sum ? "_g" : "") +
           (p.splitk.k_group != 1 ? "_kg" + std::to_string(p.splitk.k_group) : std::string());
  const auto& c = p.sm90;
  std::string s = "bn" + std::to_string(c.bn) + "_s" + std::to_string(c.stages) + "_c" + std::to_string(c.cluster_m);
  if (c.pingpong) s += "_pp" + std::to_string(c.bm);
  else if (c.bm != 128) s += "_bm" + std::to_string(c.bm);
  if (c.in_flight) s += "_f" + std::to_string(c.in_flight);
  if (c.raster_group != kernels::gemm_sm90_config{}.raster_group) s += "_r" + std::to_string(c.raster_group);
  if (!c.persistent) s += "_np";
  if (c.lookahead) s += "_la";
  if (c.whole_tile_staging) s += "_wt";
  return s;
}

// The plan a canonical name stands for (the inverse of plan_name), or nothing when the text is no such name:
// so that a bench can be asked to time a schedule the sweep does not offer (cake_bench_gemm_sweep --plans).
// Only the name's grammar is checked here; whether the schedule fits the GPU is the analyzer's to say.
inline std::optional<gemm_plan> parse_plan_name(std::string_view name) {
  // "<key><number>" at the front of `name`, consumed; false when it is not there
  auto take = [&name](std::string_view key, int& value) {
    if (!name.starts_with(key)) return false;
    const char* first = name.data() + key.size();
    const auto [end, ec] = std::from_chars(first, name.data() + name.size(), value);
    if (ec != std::errc{} || end == first || value < 0) return false;
    name.remove_prefix(static_cast<std::size_t>(end - name.data()));
    return true;
  };
  auto part = [&name](std::string_view key) { return name.starts_with(key) && (name.remove_prefix(key.size()), true); };
  gemm_plan p;
  if (take("sk", p.splitk.splits)) {
    p.kernel = gemm_kernel::splitk;
    auto& c = p.splitk;
    c.bm = 64;
    if (part("_") && (name.starts_with("bm") ? take("bm", c.bm) && part("_") : true) && take("bn", c.bn) && part("_") && take("s", c.stages)) {
      c.global_sum = part("_g");
      if (name.starts_with("_kg") && !take("_kg", c.k_group)) return std::nullopt;
      if (name.empty()) return p;
    }
    return std::nullopt;
  }
  auto& c = p.sm90;
  if (!(take("bn", c.bn) && part("_") && take("s", c.stages) && part("_") && take("c", c.cluster_m))) return std::nullopt;
  c.bm = 128;
  if (name.starts_with("_pp")) {
    c.pingpong = true;
    if (!take("_pp", c.bm)) return std::nullopt;
  } else if (name.starts_with("_bm") && !take("_bm", c.bm)) {
    return std::nullopt;
  }
  if (name.starts_with("_f") && !take("_f", c.in_flight)) return std::nullopt;
  if (name.starts_with("_r") && !take("_r", c.raster_group)) return std::nullopt;
  if (part("_np")) c.persistent = false;
  if (part("_la")) c.lookahead = true;
  if (part("_wt")) c.whole_tile_staging = true;
  if (!name.empty()) return std::nullopt;
  return p;
}

// A cell of the shape space: one input type, N in [n_lo, n_hi), K in [k_lo, k_hi); its M buckets are
// buckets[first, first + count), in increasing M.
struct gemm_dispatch_cell {
  gemm_input in;
  long long n_lo, n_hi, k_lo, k_hi;
  int first, count;
};
// M in [m_lo, m_hi] (inclusive) runs plans[plan].
struct gemm_dispatch_bucket {
  long long m_lo, m_hi;
  int plan;
};

// The plan index for a shape, or -1 when no bucket holds it (the caller falls back). Cost: a scan of
// the cells (a few comparisons each), then of one cell's M buckets.
constexpr int find_gemm_bucket(std::span<const gemm_dispatch_cell> cells, std::span<const gemm_dispatch_bucket> buckets, gemm_input in,
                               long long M, long long N, long long K) {
  for (const auto& c : cells) {
    if (c.in != in || N < c.n_lo || N >= c.n_hi || K < c.k_lo || K >= c.k_hi) continue;
    for (int i = c.first; i < c.first + c.count; ++i)
      if (M >= buckets[static_cast<std::size_t>(i)].m_lo && M <= buckets[static_cast<std::size_t>(i)].m_hi) return buckets[static_cast<std::size_t>(i)].plan;
    return -1;  // cells do not overlap: no other cell holds (N, K)
  }
  return -1;
}

}  // namespace cake
