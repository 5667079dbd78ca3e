// Compile-fail test: rows(i, n): n must divide the rows.
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text (EXPECT-GCC /
// EXPECT-CLANG only with that compiler); its .ok.cpp twin differs in one line and must compile.
// EXPECT: ir.part-count
// EXPECT-GCC: array subscript value '3'
// EXPECT-CLANG: in call to 'reject(3)'
#include <cake/cake.hpp>

using namespace cake;

constexpr program schedule() {
  auto k = kernel("k").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto mn = k.parallel(tiles(M, 128), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(4)).carries(sA, sB);
  k.role("producer", warpgroups(1), regs(40), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt));
      });
    });
  });
  k.role("consumer", warpgroups(2), regs(232), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.for_each(mn, [&](auto, auto) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 3), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
    });
  });
  return k.build();
}
constexpr program p = schedule();

int main() { return static_cast<int>(p.ops.size()) > 0 ? 0 : 1; }
