// A small sm_90a bf16 GEMM family for the dispatcher generator's evolve input (tools/gen/gemm_dispatch.py
// --from-evolve; tests/cli/gemm_dispatch_evolve_test.py): every field of a dispatcher plan is an axis, as in
// tests/cli/gemm_sm90_family.cpp, but with few values (16 points), and the seed uses the direct-store epilogue,
// which no plan can express (so the generator must skip it). The GPU verdicts come from
// tests/cli/dispatch_mock_a.txt and dispatch_mock_b.txt (CAKE_GPU_MOCK).
#include <cake/cake.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

namespace dispatch_family {

using cake::kernels::gemm_sm90_config;

constexpr gemm_sm90_config seed() {
  gemm_sm90_config c;
  c.bm = 128;
  c.bn = 128;
  c.stages = 4;
  c.cluster_m = 1;
  c.direct_store = true;
  return c;
}

}  // namespace dispatch_family

CAKE_EXPORT_FAMILY(dispatch_bf16, cake::kernels::gemm_bf16_sm90, dispatch_family::seed(),
                   domain(axis("bm", &dispatch_family::gemm_sm90_config::bm, {128}),
                          axis("bn", &dispatch_family::gemm_sm90_config::bn, {128, 256}),
                          axis("stages", &dispatch_family::gemm_sm90_config::stages, {4}),
                          axis("cluster_m", &dispatch_family::gemm_sm90_config::cluster_m, {1, 2}),
                          axis("persistent", &dispatch_family::gemm_sm90_config::persistent, {true}),
                          axis("raster_group", &dispatch_family::gemm_sm90_config::raster_group, {8}),
                          axis("pingpong", &dispatch_family::gemm_sm90_config::pingpong, {false, true}),
                          axis("in_flight", &dispatch_family::gemm_sm90_config::in_flight, {0}),
                          axis("direct_store", &dispatch_family::gemm_sm90_config::direct_store, {false, true})),
                   reference("gemm"), peer("cublas"), shape(4096, 4096, 4096))
