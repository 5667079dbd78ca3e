// The cost model (docs/cost-model.md) against the GEMM dispatcher's H200 sweep
// (bench/results/h200/gemm_sweep.json): for every timed (shape, schedule) row, the model's estimate, so
// that bench/cost/domain_rank.py can say how well it ranks the candidates of each shape. None of these
// shapes was used to calibrate the model (the calibration runs its own GEMMs; docs/cost-model.md,
// "Calibration"), so they are held out from its point of view. No GPU.
//   python3 bench/cost/domain_rank.py          (writes the rows this program reads, runs it, reports)
//   cake_cost_domain_rank < rows.tsv > estimates.tsv
// Input rows (whitespace-separated): dtype (bf16 | e4m3), M, N, K, the schedule's name, and the schedule
// as the sweep JSON's "plans" give it:
//   sm90 BM BN STAGES CLUSTER_M RASTER_GROUP PINGPONG IN_FLIGHT PERSISTENT   or   splitk BN SPLITS STAGES
// Output rows (tab-separated): the input's first five fields, then "ok TIME_US BOTTLENECK" or "no REASON".
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include <cake/cost/model.hpp>

#include "kernels/gemm/sm90_bf16.hpp"
#include "kernels/gemm/sm90_splitk.hpp"

int main() {
  std::string line;
  int rows = 0, bad = 0;
  while (std::getline(std::cin, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string dtype, kind, name;
    long long M = 0, N = 0, K = 0;
    in >> dtype >> M >> N >> K >> name >> kind;
    cake::program p;
    if (kind == "sm90") {
      cake::kernels::gemm_sm90_config c;
      int pingpong = 0, persistent = 1;
      in >> c.bm >> c.bn >> c.stages >> c.cluster_m >> c.raster_group >> pingpong >> c.in_flight >> persistent;
      c.pingpong = pingpong != 0;
      c.persistent = persistent != 0;
      p = dtype == "e4m3" ? cake::kernels::gemm_sm90<cake::e4m3>(c) : cake::kernels::gemm_sm90<cake::bf16>(c);
    } else if (kind == "splitk") {
      cake::kernels::gemm_splitk_config c;
      in >> c.bn >> c.splits >> c.stages;
      p = cake::kernels::gemm_splitk_sm90(c);
    } else {
      std::fprintf(stderr, "cake_cost_domain_rank: unknown schedule kind '%s' in: %s\n", kind.c_str(), line.c_str());
      return 2;
    }
    if (!in) {
      std::fprintf(stderr, "cake_cost_domain_rank: malformed row: %s\n", line.c_str());
      return 2;
    }
    ++rows;
    std::printf("%s\t%lld\t%lld\t%lld\t%s\t", dtype.c_str(), M, N, K, name.c_str());
    if (!p.errors.empty()) {
      ++bad;
      std::printf("no\tthe schedule does not build: %s\n", std::string(p.errors[0].message).c_str());
      continue;
    }
    const auto e = cake::cost::estimate(p, {{"M", M}, {"N", N}, {"K", K}});
    if (e.ok) std::printf("ok\t%.3f\t%s\n", e.time_us, e.bottleneck.c_str());
    else std::printf("no\t%s\n", e.reason.c_str());
  }
  std::fprintf(stderr, "cake_cost_domain_rank: %d rows, %d schedules that do not build\n", rows, bad);
  return 0;
}
