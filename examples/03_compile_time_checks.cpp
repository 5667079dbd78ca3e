// Step 3: how a mistake shows up.
//
// In a constexpr schedule a misuse is a compile error that names the rule and the number. Uncomment the
// marked line below and compile this file: g++ 12 reports
//   error: array subscript value '260' is outside the bounds of array
//   'cake::compile_error<..."instruction.mma-shape"}, ..."wgmma: N (the accumulator's columns) must be
//   8..256 in steps of 8 (value: N)"}>::the_value_is'
// after an "in 'constexpr' expansion of" trace that leads to the line of this file. Type-level mistakes
// (a bf16 A with an f16 B, an f16 accumulator for bf16 operands) are static_asserts whose message starts
// with the rule id, e.g. "[instruction.mma-dtype-mismatch]".
//
// The same builder run outside constant evaluation (a schedule built from runtime values) does not fail
// to compile: it records the finding in program::errors, which this program prints.
#include <cake/cake.hpp>
#include <cstdio>

using namespace cake;

constexpr program mma_schedule(int n) {
  auto k = kernel("checked").target(sm_90a);
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {n, 64}, swizzle::b128);
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, n});
    r.wgmma(acc, sA, sB);  // wgmma: m64 nN k16 steps, N in 8..256 (step 8)
  });
  return k.build();
}

constexpr program good = mma_schedule(256);
// constexpr program bad = mma_schedule(260);  // <- uncomment: does not compile ([instruction.mma-shape], 260)

int main(int argc, char**) {
  std::printf("N = 256: %zu build errors\n", good.errors.size());
  const int n = 259 + argc;  // 260, known only at run time
  const program bad = mma_schedule(n);
  for (const auto& e : bad.errors)
    std::printf("N = %d: [%.*s] %.*s (value %lld) at %s:%u\n", n, static_cast<int>(e.rule.size()), e.rule.data(),
                static_cast<int>(e.message.size()), e.message.data(), e.value, e.loc.file, e.loc.line);
  return good.errors.empty() && bad.errors.size() == 1 && bad.errors[0].rule == "instruction.mma-shape" ? 0 : 1;
}
