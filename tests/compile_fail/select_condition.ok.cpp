// Compile-fail test: select() takes a predicate over elements; `a == b` on index expressions is a C++
// bool decided while the schedule is written (row() and col() are different expressions: always false),
// so select(bool, ...) is deleted: write eq(a, b).
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT-GCC: use of deleted function
// EXPECT-CLANG: call to deleted function
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto Y = k.output<f32>("Y", dims("M", "N"));
  k.role("math", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.fill(x, 0.0f);
    r.set(x, select(eq(row(), col()), 1.0f, x));
    r.store(Y.tile(0, 0), x);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
