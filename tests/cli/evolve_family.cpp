// A small family for the tests of `cake evolve` (tests/cli/CMakeLists.txt, docs/evolve.md): the sm_90a
// GEMM over a domain of 2 x 3 x 2 points chosen so that every gate has work to do:
//   stages = 7   the pipeline and the epilogue staging exceed the shared memory: the analyzer rejects it
//   fused + bn = 256   a bias/row-scale epilogue with the direct-store addressing spills (NVRTC's report)
//   fused + bn = 128   lowers cleanly but has five tensors: the GPU stage (mocked in CI) sees it
// The parameter struct is the family's own; the generator maps it onto the GEMM's configuration.
#include <stdexcept>

#include <cake/cake.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

namespace evolve_test {

struct params {
  int bn = 128;
  int stages = 2;
  bool fused = false;  // bias + row scale, stored from registers
};

constexpr cake::program generate(params p) {
  cake::kernels::gemm_sm90_config c;
  c.bn = p.bn;
  c.stages = p.stages;
  c.cluster_m = 1;
  if (p.fused) {
    c.epi.bias = c.epi.row_scale = true;
    c.epi.act = cake::kernels::gemm_activation::relu;
    c.direct_store = true;
  }
  return cake::kernels::gemm_bf16_sm90(c);
}

// A generator that throws for one point: `cake evolve` reports it at the analyze gate (rule
// evolve.generator) and goes on; the seed is evaluated at compile time, where it does not throw.
constexpr cake::program generate_or_throw(params p) {
  if (p.bn == 192) throw std::invalid_argument("this generator offers no bn = 192");
  return generate(p);
}

}  // namespace evolve_test

CAKE_EXPORT_FAMILY(small_gemm, evolve_test::generate, evolve_test::params{},
                   domain(axis("bn", &evolve_test::params::bn, {128, 256}), axis("stages", &evolve_test::params::stages, {2, 4, 7}),
                          axis("fused", &evolve_test::params::fused, {false, true})),
                   reference("gemm"), peer("cublas"), shape(4096, 4096, 4096))

CAKE_EXPORT_FAMILY(throwing_gemm, evolve_test::generate_or_throw, evolve_test::params{}, domain(axis("bn", &evolve_test::params::bn, {128, 192})),
                   reference("gemm"), peer("cublas"))
