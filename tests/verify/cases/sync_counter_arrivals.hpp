// sync.counter-arrivals: four splits of each row block store their partial sums and arrive on the block's
// counter; the last one adds the parts. The counter is told to wait for 3 arrivals, but the 4 points of
// split(4) step each element: the count wraps after 3, the third unit combines a part that is not written
// yet, and the fourth starts a round that never ends. Fix: count_arrival(..., 4).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_counter_arrivals {
constexpr program build(bool fixed) {
  auto k = kernel("counter_arrivals").target(sm_90a);
  auto [R, C, NS, CR] = k.dims("R", "C", "NS", "CR");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto Part = k.output<f32>("part", dims(NS, R, C));
  auto Count = k.output<i32>("count", dims(CR, C));
  auto work = k.parallel(split(4), tiles(R, 32));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    r.for_each(work, [&](auto s, auto i) {
      r.load(x, X.tile(i, s));
      r.store(Part.tile(s, i, 0), x);
      auto before = fixed ? r.count_arrival(Count.at(i, 0), 4) : r.count_arrival(Count.at(i, 0), 3);  // EXPECT: sync.counter-arrivals
      r.when(eq(before, fixed ? 3 : 2), [&] {
        r.for_range(4, [&](auto q) { r.when(ne(q, s), [&] { r.load_add(x, Part.tile(q, i, 0)); }); });
        r.store(Y.tile(i, 0), x);
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::sync_counter_arrivals
CAKE_VERIFY_CASE(sync_counter_arrivals, "sync.counter-arrivals")
