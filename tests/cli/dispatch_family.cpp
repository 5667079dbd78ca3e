// Small sm_90a GEMM families (bf16 and e4m3) for the dispatcher generator's evolve input (tools/gen/gemm_dispatch.py
// --from-evolve; tests/cli/gemm_dispatch_evolve_test.py): every field of a dispatcher plan is an axis, as in
// tests/cli/gemm_sm90_family.cpp, but with few values (16 points), and the seed uses the direct-store epilogue,
// which no plan can express (so the generator must skip it). The GPU verdicts come from
// tests/cli/dispatch_mock_a.txt, dispatch_mock_b.txt (bf16) and dispatch_mock_c.txt (e4m3) (CAKE_GPU_MOCK).
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

inline auto axes() {
  using namespace cake::cli;
  return domain(axis("bm", &gemm_sm90_config::bm, {128}),
                axis("bn", &gemm_sm90_config::bn, {128, 256}),
                axis("stages", &gemm_sm90_config::stages, {4}),
                axis("cluster_m", &gemm_sm90_config::cluster_m, {1, 2}),
                axis("persistent", &gemm_sm90_config::persistent, {true}),
                axis("raster_group", &gemm_sm90_config::raster_group, {8}),
                axis("pingpong", &gemm_sm90_config::pingpong, {false, true}),
                axis("in_flight", &gemm_sm90_config::in_flight, {0}),
                axis("direct_store", &gemm_sm90_config::direct_store, {false, true}));
}

}  // namespace dispatch_family

CAKE_EXPORT_FAMILY(dispatch_bf16, cake::kernels::gemm_bf16_sm90, dispatch_family::seed(), dispatch_family::axes(),
                   reference("gemm"), peer("cublas"), shape(4096, 4096, 4096))
// The same for e4m3 inputs against cuBLASLt (search C of the test: the generator's fp8 table from an evolve log).
CAKE_EXPORT_FAMILY(dispatch_e4m3, cake::kernels::gemm_e4m3_sm90, dispatch_family::seed(), dispatch_family::axes(),
                   reference("gemm"), peer("cublaslt"), shape(4096, 4096, 4096))
