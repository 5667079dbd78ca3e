// Compile-fail test: r.when takes a condition over indices; `a == b` on index expressions is a C++ bool
// (it compares the two expressions while the schedule is written), so it is refused: write eq(a, b).
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: [ir.when-condition]
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a).cluster(2);
  auto Y = k.output<f32>("Y", dims("M", "N"));
  k.role("math", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.fill(x, 1.0f);
    r.cluster_sum(x);
    r.when(eq(r.cluster_rank(), 0), [&] { r.store(Y.tile(0, 0), x); });
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
