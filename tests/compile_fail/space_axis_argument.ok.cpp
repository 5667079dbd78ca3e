// Compile-fail test: k.parallel(...) takes axes, tiles(dim, block), each(dim) or split(n); a bare dim is
// not one (which of the two would it be?). The >5-axes form of ir.space-axes is a builder finding
// (tests/verify/cases/ir_builder.hpp).
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: [ir.space-axes] k.parallel(...) takes tiles(dim, block), each(dim) and split(n)
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto [S, H, D] = k.dims("S", "H", "D");
  auto Q = k.input<bf16>("Q", dims(S, H, D));
  auto sp = k.parallel(tiles(S, 64), each(H));
  auto sQ = k.smem<bf16>("sQ", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  k.role("load", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto s, auto h) {
      r.arrive_expect_tx(bar, 8192);
      r.tma_load(sQ, Q.tile(s, h, 0).rows_at(0), bar);
      r.wait(bar);
    });
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
