// The sm_90a GEMM as two families for `cake evolve` (docs/evolve.md), bf16 (`gemm_bf16`, against cuBLAS) and fp8
// e4m3 (`gemm_e4m3`, against cuBLASLt): every knob of gemm_sm90_config that changes the schedule is an axis, and the
// seed is the naive schedule (one pipeline stage, no multicast, not persistent, direct-store epilogue). From the
// seed the built-in search ranks the domain by the cost model and measures the best on the GPU:
//
//   cake evolve tests/cli/gemm_sm90_family.cpp --family gemm_bf16 --shape M=4096,N=4096,K=4096
//   cake evolve tests/cli/gemm_sm90_family.cpp --family gemm_e4m3 --shape M=4096,N=4096,K=4096
#include <cake/cake.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

namespace evolve_gemm {

using cake::kernels::gemm_sm90_config;

constexpr gemm_sm90_config naive() {
  gemm_sm90_config c;
  c.bm = 128;
  c.bn = 128;
  c.stages = 1;
  c.cluster_m = 1;
  c.persistent = false;
  c.direct_store = true;
  return c;
}

// The same axes for both input types (the analyzer gate rejects the points a type cannot run).
inline auto axes() {
  using namespace cake::cli;
  return domain(axis("bm", &gemm_sm90_config::bm, {64, 128, 256}),
                axis("bn", &gemm_sm90_config::bn, {64, 128, 192, 256}),
                axis("stages", &gemm_sm90_config::stages, {1, 2, 3, 4, 5, 6, 7}),
                axis("cluster_m", &gemm_sm90_config::cluster_m, {1, 2}),
                axis("persistent", &gemm_sm90_config::persistent, {false, true}),
                axis("raster_group", &gemm_sm90_config::raster_group, {4, 8, 16}),
                axis("pingpong", &gemm_sm90_config::pingpong, {false, true}),
                axis("in_flight", &gemm_sm90_config::in_flight, {0, 1}),
                axis("direct_store", &gemm_sm90_config::direct_store, {false, true}),
                // (the schedule builds a point where these do not fit without them, the same program as the
                // point without: evolve measures it once)
                axis("lookahead", &gemm_sm90_config::lookahead, {false, true}),
                axis("whole_tile_staging", &gemm_sm90_config::whole_tile_staging, {false, true}));
}

}  // namespace evolve_gemm

CAKE_EXPORT_FAMILY(gemm_bf16, cake::kernels::gemm_bf16_sm90, evolve_gemm::naive(), evolve_gemm::axes(),
                   reference("gemm"), peer("cublas"), shape(4096, 4096, 4096))
CAKE_EXPORT_FAMILY(gemm_e4m3, cake::kernels::gemm_e4m3_sm90, evolve_gemm::naive(), evolve_gemm::axes(),
                   reference("gemm"), peer("cublaslt"), shape(4096, 4096, 4096))
