// Uses Cake from outside its source tree: declares a schedule, prints it and checks one derived number.
#include <cake/cake.hpp>
#include <cstdio>

using namespace cake;

constexpr program consumer_schedule() {
  auto k = kernel("consumer").target(sm_90a);
  auto [M, K] = k.dims("M", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto rows = k.parallel(tiles(M, 64));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto p = k.pipeline("p", stages(2)).carries(sA);
  k.role("load", warps(1), [&](role& r) {
    r.for_each(rows, [&](index_expr m) {  // one axis: a generic [&](auto pt) would receive the point (pt[0])
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(p);
        r.tma_load(s[sA], A.tile(m, kt));
      });
    });
  });
  k.role("use", warpgroups(1), [&](role& r) {
    r.for_each(rows, [&](auto) { r.loop(tiles(K, 64), [&](auto) { r.release(p, r.wait(p)); }); });
  });
  return k.build();
}

int main() {
  constexpr program p = consumer_schedule();
  constexpr auto plan = plan::make_plan(p);
  std::fputs(to_text(p).c_str(), stdout);
  std::printf("tx bytes per stage: %d\n", plan.barriers.pipelines[0].tx_bytes);
  return plan.barriers.pipelines[0].tx_bytes == 8192 ? 0 : 1;
}
