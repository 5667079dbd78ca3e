// Step 2: a producer/consumer pipeline, and what Cake derives from it.
//
// pipeline("ab", stages(3)).carries(sA, sB) declares a ring of 3 stages of (sA, sB). The producer
// acquires a free stage and fills it with TMA; the consumer waits for a filled stage and releases it.
// The 'full' and 'empty' mbarriers of every stage, their arrival counts and the bytes each 'full'
// barrier expects are derived: the schedule never states them.
//
// Both roles walk the same parallel iteration space, k.parallel(tiles(M, 128), tiles(N, 128)): one
// 128x128 output tile per point; r.for_each visits this CTA's points and r.loop(tiles(K, 64), ...) runs
// over the 64-wide blocks of K.
#include <cake/cake.hpp>
#include <cstdio>

using namespace cake;

constexpr program pipelined() {
  auto k = kernel("pipelined").target(sm_90a).cluster(2);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto mn = k.parallel(tiles(M, 128), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);

  // Warpgroup roles first: a warpgroup must start at a warp index divisible by 4.
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 128});               // each warpgroup: half of the rows
    r.for_each(mn, [&](auto, auto) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);                                         // wait 'full'
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);                                             // the wgmma has read the stage
        r.release(ab, s);                                            // arrive on 'empty'
      });
    });
  });
  k.role("producer", warps(1), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);                                      // wait 'empty', expect the bytes on 'full'
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt)).multicast();                // both CTAs of the cluster receive sB
      });
    });
  });
  return k.build();
}

int main() {
  constexpr program p = pipelined();
  constexpr auto plan = plan::make_plan(p);
  const auto& pb = plan.barriers.pipelines[0];
  std::printf("pipeline 'ab': %d stages of %d bytes\n", p.pipelines[0].stages, p.pipeline_stage_bytes(0));
  std::printf("  'full'  barriers: %d arrival(s) per phase (the producer's arrive.expect_tx), %d tx bytes per stage\n",
              pb.full_arrivals, pb.tx_bytes);
  std::printf("  'empty' barriers: %d arrivals per phase (2 consumer warpgroups x 2 CTAs: sB is multicast)\n", pb.empty_arrivals);
  for (int i = 0; i < plan.barriers.count; ++i) {
    const auto& b = plan.barriers.objects[i];
    std::printf("  mbarrier %-5s stage %d  at smem offset %6d, init count %d\n",
                b.origin == plan::barrier_origin::pipeline_full ? "full" : "empty", b.element, b.offset, b.arrivals);
  }
  std::printf("TMA boxes: A %dx%d, B %dx%d (each CTA loads half of the multicast tile)\n", plan.tma.descriptors[0].box_rows,
              plan.tma.descriptors[0].box_cols, plan.tma.descriptors[1].box_rows, plan.tma.descriptors[1].box_cols);
  // The numbers are exact: 128x64 + 128x64 bf16 = 32768 bytes; 2 warpgroups x cluster of 2 = 4.
  return pb.tx_bytes == 32768 && pb.full_arrivals == 1 && pb.empty_arrivals == 4 ? 0 : 1;
}
