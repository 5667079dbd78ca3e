// The seeded failure class of the compiler-evolution test (tests/cli/evolve_failures_test.cmake,
// docs/evolve.md "Closing the loop"): the sm_90a GEMM over bn x stages x pingpong (8 points). The
// analyzer accepts the pingpong variants (they are correct: the GEMM tests pass on the H200), but the
// test's scripted GPU stage (tests/cli/seeded_mock.txt, CAKE_GPU_MOCK) says they compute a wrong result.
// `cake evolve` must find them, cluster them under "pingpong=true", minimize a reproducer and propose a
// corpus entry; tests/cli/seeded_accepted.cpp is that entry accepted, with the rule that rejects it.
#include <cake/cake.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

namespace seeded_test {

struct params {
  int bn = 128;
  int stages = 2;
  bool pingpong = false;
};

constexpr cake::program generate(params p) {
  cake::kernels::gemm_sm90_config c;
  c.bn = p.bn;
  c.stages = p.stages;
  c.pingpong = p.pingpong;
  c.cluster_m = 1;
  return cake::kernels::gemm_bf16_sm90(c);
}

}  // namespace seeded_test

CAKE_EXPORT_FAMILY(seeded, seeded_test::generate, seeded_test::params{},
                   domain(axis("bn", &seeded_test::params::bn, {128, 256}), axis("stages", &seeded_test::params::stages, {2, 4}),
                          axis("pingpong", &seeded_test::params::pingpong, {false, true})),
                   reference("gemm"), peer("cublas"), shape(4096, 4096, 4096))
