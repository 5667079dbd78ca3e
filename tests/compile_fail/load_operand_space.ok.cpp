// Compile-fail test: a register tile is loaded from a global tile or an smem tile, not from another
// register tile (that is r.set(dst, src)).
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: [memory.operand-space] load reads a global tile or an smem tile
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_80);
  auto s = k.smem<f32>("s", {16, 64});
  k.role("w", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {16, 64});
    auto y = r.fragment<f32>("y", {16, 64});
    r.fill(y, 1.0f);
    r.load(x, s);
    r.store(s, x);
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
