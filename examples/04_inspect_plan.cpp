// Step 4: the shared-memory plan of the sm_90a reference GEMM, itemised.
//
// The schedule (kernels/gemm/sm90_bf16.hpp) declares regions by shape, dtype and swizzle only. The plan
// places them: largest alignment first (a 128B-swizzled tile starts on a 1024-byte boundary), every stage
// aligned, then the mbarriers (8 bytes each), then, on sm_100a, the TMEM address slot. The same numbers
// feed the overflow check, the analyzer, the cost model and the emitted kernel.
#include <cake/cake.hpp>
#include <cstdio>

#include "gemm/sm90_bf16.hpp"

using namespace cake;

int main() {
  constexpr program p = kernels::gemm_bf16_sm90();
  constexpr plan::smem_layout L = plan::plan_smem(p);
  std::printf("%-6s %-6s %-12s %-8s %7s %9s %6s %10s\n", "region", "dtype", "shape", "swizzle", "offset", "bytes/st", "stages",
              "alignment");
  for (std::size_t i = 0; i < p.smem.size(); ++i) {
    const auto& r = p.smem[i];
    const auto& s = L.regions[i];
    char shape[16];
    std::snprintf(shape, sizeof shape, "%dx%d", r.rows, r.cols);
    std::printf("%-6s %-6s %-12s %-8s %7d %9d %6d %10d\n", r.nm.c_str(), to_string(r.dt).data(), shape, to_string(r.swz), s.offset,
                s.bytes_per_stage, s.stages, s.alignment);
  }
  std::printf("mbarriers: %d x 8 bytes at offset %d\n", L.barrier_count, L.barrier_offset);
  std::printf("padding: %d bytes\n", L.padding);
  std::printf("total: %d of %d bytes (%s), %d bytes to spare\n", L.total, L.limit, p.arch().name.data(), L.limit - L.total);
  return L.fits() && L.total == 229440 ? 0 : 1;
}
