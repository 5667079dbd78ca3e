// The row top-k's merge (include/cake/device/topk.cuh, what topk_rows and topk_store call) run on the
// host: G threads stand in for the G lanes of a warp that hold one row, __syncwarp is a barrier of the G
// threads and __any_sync a vote through it, so the merge's own synchronization is what keeps its reads
// before the writes that would clobber them. Random lists (partly empty) and candidate buffers (values
// from a small set, so that ties are everywhere; candidates that equal list entries' values; candidates
// worse than the whole list) are merged and compared with a sort of the union by (value, index).
#include <doctest/doctest.h>

#include <algorithm>
#include <barrier>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

namespace topk_host {
// The group of threads a merge runs on (one per lane) and each thread's lane.
struct lanes {
  explicit lanes(int g) : bar(g), votes(static_cast<std::size_t>(g)) {}
  std::barrier<> bar;
  std::vector<char> votes;
};
thread_local lanes* group = nullptr;
thread_local int lane = 0;
}  // namespace topk_host

// The warp intrinsics topk.cuh calls, over the group (every lane of it takes part in each call).
inline void __syncwarp(unsigned) { topk_host::group->bar.arrive_and_wait(); }
inline bool __any_sync(unsigned, bool p) {
  auto& g = *topk_host::group;
  g.votes[static_cast<std::size_t>(topk_host::lane)] = p;
  g.bar.arrive_and_wait();
  const bool any = std::any_of(g.votes.begin(), g.votes.end(), [](char v) { return v != 0; });
  g.bar.arrive_and_wait();  // every lane has read the votes before the next vote writes them
  return any;
}
#define __device__
#define __noinline__
#define __forceinline__ inline
#include "cake/device/topk.cuh"
#undef __device__
#undef __noinline__
#undef __forceinline__

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr int empty_index = 0x7fffffff;

struct entry {
  float v;
  int i;
  friend bool operator==(const entry&, const entry&) = default;
};
bool before(const entry& a, const entry& b) { return a.v < b.v || (a.v == b.v && a.i < b.i); }

// One trial: a list of `held` entries (the rest empty) and `n` candidates, merged by G threads.
template <int K, int SLACK, int G>
void trial(std::mt19937& rng, int held, int n, int value_range) {
  std::uniform_int_distribution<int> value(0, value_range);
  std::vector<int> ids(static_cast<std::size_t>(held + n));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);  // distinct indices, in any order
  std::vector<entry> list, cands;
  for (int j = 0; j < held; ++j) list.push_back({static_cast<float>(value(rng)), ids[static_cast<std::size_t>(j)]});
  for (int j = 0; j < n; ++j) cands.push_back({static_cast<float>(value(rng) + (j % 5 == 0 ? value_range : 0)), ids[static_cast<std::size_t>(held + j)]});
  std::sort(list.begin(), list.end(), before);
  // The row's smem: list, then the candidate buffer, then the count.
  std::vector<float> vals(static_cast<std::size_t>(K + SLACK), -1.0f);
  std::vector<int> idx(static_cast<std::size_t>(K + SLACK), -2);
  for (int j = 0; j < K; ++j) {
    vals[static_cast<std::size_t>(j)] = j < held ? list[static_cast<std::size_t>(j)].v : inf;
    idx[static_cast<std::size_t>(j)] = j < held ? list[static_cast<std::size_t>(j)].i : empty_index;
  }
  for (int j = 0; j < n; ++j) vals[static_cast<std::size_t>(K + j)] = cands[static_cast<std::size_t>(j)].v, idx[static_cast<std::size_t>(K + j)] = cands[static_cast<std::size_t>(j)].i;
  int count = n;
  topk_host::lanes g(G);
  std::vector<std::thread> threads;
  for (int l = 0; l < G; ++l)
    threads.emplace_back([&, l] {
      topk_host::group = &g;
      topk_host::lane = l;
      cake_dev::topk_merge<K, SLACK, G>(vals.data(), idx.data(), &count, l, ~0u);
    });
  for (auto& t : threads) t.join();
  // Expected: the K best of the union, then empty entries.
  std::vector<entry> all = list;
  all.insert(all.end(), cands.begin(), cands.end());
  std::sort(all.begin(), all.end(), before);
  int wrong = 0;
  for (int j = 0; j < K; ++j) {
    const entry want = j < static_cast<int>(all.size()) ? all[static_cast<std::size_t>(j)] : entry{inf, empty_index};
    wrong += !(entry{vals[static_cast<std::size_t>(j)], idx[static_cast<std::size_t>(j)]} == want);
  }
  INFO("K " << K << " SLACK " << SLACK << " G " << G << " held " << held << " candidates " << n << " values 0.." << value_range);
  CHECK(wrong == 0);
  CHECK(count == 0);
}

template <int K, int SLACK, int G>
void trials(std::mt19937& rng) {
  for (int t = 0; t < 40; ++t) {
    const int held = std::uniform_int_distribution<int>(0, K)(rng);
    const int n = std::uniform_int_distribution<int>(0, SLACK)(rng);
    trial<K, SLACK, G>(rng, held, n, t % 2 ? 3 : 1000);
  }
  trial<K, SLACK, G>(rng, K, SLACK, 1);  // a full list, a full buffer, two values: ties everywhere
  trial<K, SLACK, G>(rng, 0, SLACK, 10);  // an empty list
}

}  // namespace

TEST_CASE("row top-k merge on host lanes: the K best of list and candidates, ties to the lower index") {
  std::mt19937 rng(20261202);
  trials<1, 32, 4>(rng);
  trials<10, 32, 4>(rng);
  trials<100, 32, 4>(rng);
  trials<256, 32, 4>(rng);
  trials<10, 32, 1>(rng);
  trials<32, 32, 8>(rng);
  trials<100, 64, 32>(rng);
  trials<256, 256, 32>(rng);
}
