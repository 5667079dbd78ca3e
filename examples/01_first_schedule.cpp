// Step 1: declare a schedule and print it.
//
// A kernel is a constexpr builder expression. This one copies a tile of X into shared memory with TMA,
// waits for it on an mbarrier and reads it into registers. Nothing here is an address or a byte count:
// the printed Program is what Cake recorded, and what every later stage (plan, analyzer, lowering) reads.
#include <cake/cake.hpp>
#include <cstdio>

using namespace cake;

constexpr program first_schedule() {
  auto k = kernel("first").target(sm_90a);
  auto X = k.input<bf16>("X", dims("M", "N"));                  // a global tensor over two dims (labels)
  auto sX = k.smem<bf16>("sX", {64, 64}, swizzle::b128);        // a 64x64 tile in shared memory
  auto loaded = k.mbarrier("loaded", arrivals(1));                // completes when the bytes have landed

  k.role("worker", warpgroups(1), [&](role& r) {                 // 4 warps (128 threads)
    auto x = r.fragment<bf16>("x", {64, 64});
    r.arrive_expect_tx(loaded, 64 * 64 * 2);                      // hand-written here; pipelines derive it
    r.tma_load(sX, X.tile(0, 0), loaded);                         // TMA, completing on 'loaded'
    r.wait(loaded);
    r.ldmatrix(x, sX);
  });
  return k.build();
}

constexpr program p = first_schedule();  // evaluated by the compiler: misuse would not compile
static_assert(p.errors.empty());

int main() {
  std::fputs(to_text(p).c_str(), stdout);
  std::printf("\n%zu ops in %zu role(s), %d threads per block\n", p.ops.size(), p.roles.size(), p.block_threads());
  return p.ops.size() == 4 ? 0 : 1;
}
