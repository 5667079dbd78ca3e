// dataflow.acc-read-before-complete: the epilogue reads the TMEM accumulator before waiting for the
// commit that says the MMAs are done (it waits only afterwards, to release); it is then also not ordered
// after the allocation, nor before the next tile's MMAs overwrite what it read. Fix: wait, then read.
// ALSO: memory.tmem-alloc dataflow.war
#pragma once
#include "corpus.hpp"

namespace verify_corpus::dataflow_acc_read_before_complete {

constexpr program build(bool fixed) {
  auto k = kernel("acc_early").target(sm_100a).persistent();
  auto s = sm100_declare(k);
  k.role("epilogue", warpgroups(1), [&](role& r) {
    auto frag = r.fragment<f32>("frag", {s.g.bm, 32});
    r.for_each(s.g.mn, [&](auto m, auto n) {
      auto drain = [&] {
        r.for_range(s.chunks, [&](auto ch) {
          r.tmem_load(frag, s.acc.cols(ch, s.chunks));  // EXPECT: dataflow.acc-read-before-complete
          r.store(s.g.D.tile(m, n * s.chunks + ch), r.convert<bf16>(frag));
        });
      };
      if (!fixed) drain();
      auto a = r.wait(s.accp);
      r.tcgen05_fence_after();
      if (fixed) drain();
      r.tcgen05_fence_before();
      r.release(s.accp, a);
    });
  });
  sm100_producer(k, s);
  sm100_mma(k, s);
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::dataflow_acc_read_before_complete
CAKE_VERIFY_CASE(dataflow_acc_read_before_complete, "dataflow.acc-read-before-complete")
