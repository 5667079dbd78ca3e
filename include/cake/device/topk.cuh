// cake/device/topk.cuh — the row top-k's merge (Cake ops topk_init / topk_rows / topk_store; the
// lowering in lower/emit_topk.hpp emits the rest inline). Nothing here but the merge and the order it
// keeps, and the warp intrinsics it calls (__syncwarp, __any_sync with the row's lane mask), so that the
// unit tier can run it on the host with G threads standing in for the lanes (tests/unit/test_topk_merge.cpp).
//
// NVRTC-clean: no host headers.
#pragma once

namespace cake_dev {

// ---- row top-k (Cake ops topk_init / topk_rows / topk_store) -------------------------------------------
// One row's state in shared memory: vals[0, K) / idx[0, K) the list, sorted best first by (value, index)
// ("smaller is better": a largest-k state holds negated values), empty entries (+inf, 0x7fffffff); then
// vals[K, K + n) / idx[K, K + n) the candidates in any order, n = *count <= SLACK. The G lanes of one
// warp that hold the row (lane_g = 0..G-1, mask gmask) call these together.
__device__ __forceinline__ bool topk_before(float a, int ia, float b, int ib) { return a < b || (a == b && ia < ib); }

// Merges the candidates into the list (it keeps its K best) and empties the buffer. Merged positions
// are ranks: a candidate goes to (its rank among the candidates) + (list entries before it); a list
// entry moves down by the number of candidates not after it (a candidate equal to a list entry, the same
// element folded twice, goes before it instead of onto it; two equal candidates in one buffer are not
// provided for: a fold gives each element its own index), entries are moved from the back (nothing is overwritten before it is read), and
// whatever lands at K or beyond is dropped. Cost: per candidate a count over the candidates and a binary
// search of the list; per moved entry one comparison, plus one per candidate passed (only the entries
// after the first candidate move).
template <int K, int SLACK, int G>
__device__ __noinline__ void topk_merge(float* vals, int* idx, int* count, int lane_g, unsigned gmask) {
  const int n = *count;
  if (n == 0) return;  // the same n for every lane of the group: nothing to do for any of them
  constexpr int C = (SLACK + G - 1) / G;
  float cv[C];
  int ci[C], rank[C], at[C];
#pragma unroll
  for (int t = 0; t < C; ++t) {
    const int j = lane_g + G * t;
    rank[t] = -1;
    at[t] = K;
    cv[t] = 0.0f;
    ci[t] = 0;
    if (j < n) {
      cv[t] = vals[K + j];
      ci[t] = idx[K + j];
      int r = 0;
      for (int m = 0; m < n; ++m) r += topk_before(vals[K + m], idx[K + m], cv[t], ci[t]) ? 1 : 0;
      int lo = 0, hi = K;
      while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (topk_before(vals[mid], idx[mid], cv[t], ci[t])) lo = mid + 1;
        else hi = mid;
      }
      rank[t] = r;
      at[t] = lo + r;
    }
  }
  __syncwarp(gmask);
  // The candidates back into the buffer in order (the list entries' binary searches below read them).
#pragma unroll
  for (int t = 0; t < C; ++t)
    if (rank[t] >= 0) vals[K + rank[t]] = cv[t], idx[K + rank[t]] = ci[t];
  __syncwarp(gmask);
  // Each lane walks its own entries from the back; an entry's shift (the candidates not after it) never
  // grows as the entries get better, so the lane's count only steps down: n + K / G steps in all, not a
  // binary search per entry (which was most of a merge's instructions at k = 100).
  int t = n;
  for (int top = K - 1; top >= 0; top -= G) {
    const int i = top - lane_g;
    float v = 0.0f;
    int x = 0, shift = 0;
    if (i >= 0) {
      v = vals[i];
      x = idx[i];
      while (t > 0 && topk_before(v, x, vals[K + t - 1], idx[K + t - 1])) --t;  // cand[0, t) are not after (v, x)
      shift = t;
    }
    // Entries before one that does not move do not move either: this chunk is the last.
    const bool last = __any_sync(gmask, i >= 0 && shift == 0) || top - G < 0;
    __syncwarp(gmask);
    if (shift > 0 && i + shift < K) vals[i + shift] = v, idx[i + shift] = x;
    if (last) break;
  }
  __syncwarp(gmask);
#pragma unroll
  for (int t = 0; t < C; ++t)
    if (at[t] < K) vals[at[t]] = cv[t], idx[at[t]] = ci[t];
  __syncwarp(gmask);
  if (lane_g == 0) *count = 0;
  __syncwarp(gmask);
}

}  // namespace cake_dev
