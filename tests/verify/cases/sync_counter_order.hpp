// sync.counter-order: four splits of each row block leave their partial sums in `part` and arrive on the
// block's counter; the last one adds the parts. Two mistakes the arrival cannot cover: a part read before
// its count is known (the other splits may not have written theirs), and a part stored after the arrival
// (the arrival publishes only what was written before it). Fix: read under the when, store before arriving.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::sync_counter_order {
constexpr program build(bool fixed) {
  auto k = kernel("counter_order").target(sm_90a);
  auto [R, C, NS, CR] = k.dims("R", "C", "NS", "CR");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto Part = k.output<f32>("part", dims(NS, R, C));
  auto Late = k.output<f32>("late", dims(NS, R, C));
  auto Count = k.output<i32>("count", dims(CR, C));
  auto work = k.parallel(split(4), tiles(R, 32));
  k.role("rows", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {32, 64});
    auto peek = r.fragment<f32>("peek", {32, 64});
    r.for_each(work, [&](auto s, auto i) {
      r.load(x, X.tile(i, s));
      r.store(Part.tile(s, i, 0), x);
      if (fixed) r.store(Late.tile(s, i, 0), x);
      if (!fixed) r.load(peek, Part.tile((s + 1) % 4, i, 0));  // EXPECT: sync.counter-order
      auto before = r.count_arrival(Count.at(i, 0), 4);
      if (!fixed) r.store(Late.tile(s, i, 0), x);
      r.when(eq(before, 3), [&] {
        if (fixed) r.load(peek, Part.tile((s + 1) % 4, i, 0));
        r.for_range(4, [&](auto q) {
          r.when(ne(q, s), [&] {
            r.load_add(x, Part.tile(q, i, 0));
            r.load_add(x, Late.tile(q, i, 0));  // EXPECT: sync.counter-order
          });
        });
        r.set(x, x + peek);
        r.store(Y.tile(i, 0), x);
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::sync_counter_order
CAKE_VERIFY_CASE(sync_counter_order, "sync.counter-order")
