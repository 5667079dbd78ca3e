#pragma once
// Exact k-nearest-neighbour search, pass 2: the splits' lists of kernels/knn/search.hpp reduced to the
// final top-k per query, with the same op (r.row_topk with given indices). The partial lists of a query
// are one row of part_dist / part_idx viewed as [Q, splits * k]; tiles of `cols` of them are folded into
// the query's list. l2 adds |x|^2 here (the search kept |y|^2 - 2 x.y), so the distances are squared
// Euclidean: |x|^2 + |y|^2 - 2 x.y in f32.
#include <string_view>

#include <cake/cake.hpp>

#include "search.hpp"

namespace cake::kernels {

struct knn_merge_config {
  int k = 10;
  int rows = 32;  // queries per CTA (one warpgroup; a row is spread over 4 threads)
  int cols = 64;  // partial entries per fold
  knn_metric metric = knn_metric::l2;
  target_id target = target_id::sm_90a;  // generic code (loads, the top-k, stores): any target
  friend constexpr auto operator<=>(const knn_merge_config&, const knn_merge_config&) = default;
};

constexpr program knn_merge_program(knn_merge_config c = {}) {
  auto k = kernel(c.metric == knn_metric::l2 ? "knn_merge_l2" : "knn_merge_ip").target(c.target);
  auto [Q, SK, Kk, one] = k.dims("Q", "SK", "K", "one");
  auto Pd = k.input<f32>("part_dist", dims(Q, SK));
  auto Pi = k.input<i32>("part_idx", dims(Q, SK));
  tensor<f32> Qn;
  if (c.metric == knn_metric::l2) Qn = k.input<f32>("q_norm", dims(Q, one));
  auto Od = k.output<f32>("dist", dims(Q, Kk));
  auto Oi = k.output<i32>("idx", dims(Q, Kk));
  auto space = k.parallel(tiles(Q, c.rows));
  k.role("merge", warpgroups(1), [&](role& r) {
    auto v = r.fragment<f32>("v", {c.rows, c.cols});
    auto ix = r.fragment<i32>("ix", {c.rows, c.cols});
    auto top = c.metric == knn_metric::l2 ? r.topk("top", c.rows, c.k) : r.topk_largest("top", c.rows, c.k);
    reg_tile<f32> qn;
    if (c.metric == knn_metric::l2) qn = r.row_vector<f32>("qn", c.rows);
    r.for_each(space, [&](auto i) {
      r.topk_init(top);
      if (c.metric == knn_metric::l2) r.load(qn, Qn.tile(i, 0));
      r.loop(tiles(SK, c.cols), [&](auto j) {
        // Entries past the splits' lists score +inf (l2) / -inf (inner product): never kept.
        r.load(v, Pd.tile(i, j)).fill_outside(c.metric == knn_metric::l2 ? pos_inf : neg_inf);
        r.load(ix, Pi.tile(i, j));
        if (c.metric == knn_metric::l2) r.row_topk(top, v + qn, ix);
        else r.row_topk(top, v, ix);
      });
      r.topk_store(Od.tile(i, 0), Oi.tile(i, 0), top);
    });
  });
  return k.build();
}

}  // namespace cake::kernels
