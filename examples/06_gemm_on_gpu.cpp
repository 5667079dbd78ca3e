// Step 6: call the GEMM like an inference engine would: cake::gemm on device pointers.
//
// The first call for a shape class JIT-compiles its schedule (cached), later calls only launch.
// Without a GPU this step says so and exits 77 (ctest shows it as skipped).
#include <cstdio>
#include <vector>

#include <cake/gemm.hpp>
#include <cake/harness/gemm_check.hpp>

int main() {
  if (!cake::jit::driver::available()) {
    std::printf("skipped: %s\n", cake::jit::driver::unavailable_reason().c_str());
    return 77;
  }
  if (cake::jit::driver::get().device(0).cc_major != 9) {
    std::printf("skipped: the sm_90a GEMM needs a Hopper GPU\n");
    return 77;
  }
  const long long M = 1000, N = 2112, K = 4096;  // ragged M; N = 2112 picks 176-wide tiles
  std::printf("schedule for %lldx%lldx%lld: %s\n", M, N, K, cake::choose_gemm(M, N, K, cake::jit::driver::get().device(0).sm_count).why.c_str());
  cake::harness::gemm_operands o(cake::harness::gemm_problem{M, N, K});
  cake::harness::gemm_reference reference;
  auto rng = cake::harness::random_source::fresh();
  const auto r = cake::harness::check_gemm(o, rng, reference, [&](cake::harness::gemm_operands& x) {
    cake::gemm(x.a.address(), x.b.address(), x.d.address(), M, N, K, x.p.lda, x.p.ldb, x.p.ldd);
  });
  std::printf("relative error vs f32 reference: %.2e, unwritten or NaN: %lld\n", r.cmp.rel_err, r.cmp.nonfinite);
  return r.ok(1e-2) ? 0 : 1;
}
