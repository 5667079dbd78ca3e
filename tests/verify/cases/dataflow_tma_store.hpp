// The epilogue's TMA stores: their smem source must not be reused, nor abandoned at exit, while they read it.
#pragma once
#include "corpus.hpp"

namespace verify_corpus {
// The sm_90a epilogue of the reference kernel over 4 chunks of 32 columns in a double buffer;
// `wait_before_reuse` drops the bulk wait before a buffer is reused, `commit` the commit after each store.
// `sync_before_write` / `sync_before_store`: the warpgroup-wide barrier after the (elected-thread) bulk wait,
// and the one between the (all-thread) stmatrix and the (elected-thread) TMA store.
constexpr program epilogue_kernel(bool wait_before_reuse, bool commit, src_loc store_at = src_loc::current(), bool sync_before_write = true,
                                  bool sync_before_store = true, src_loc write_at = src_loc::current()) {
  auto k = kernel("tma_store").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto sD = k.smem<bf16>("sD", {g.bm, 32}, swizzle::b64, copies(2));
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  auto epi = k.named_barrier("epi", per_unit);
  tma_producer(k, g, sA, sB, ab);
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      auto out = r.convert<bf16>(acc);
      r.for_range(4, [&](auto ch) {
        auto buf = sD.stage(ch % 2).rows(r.warpgroup(), 2);
        if (wait_before_reuse) r.bulk_wait_read(1);
        if (sync_before_write) r.sync(epi);
        r.stmatrix(buf, out.cols(ch, 4), write_at);
        r.fence_proxy_async();
        if (sync_before_store) r.sync(epi);
        r.tma_store(g.D.tile(m * 2 + r.warpgroup(), n * 4 + ch), buf, store_at);
        if (commit) r.bulk_commit();
      });
    });
  });
  return k.build();
}
}  // namespace verify_corpus

// dataflow.store-source-reuse: without bulk_wait_read(1), chunk 2 overwrites the buffer that chunk 0's
// TMA store may still be reading. Fix: bulk_wait_read(1) before reusing a buffer.
namespace verify_corpus::dataflow_store_source_reuse {
constexpr program bad() { return epilogue_kernel(false, true); }  // EXPECT: dataflow.store-source-reuse
constexpr program good() { return epilogue_kernel(true, true); }
}  // namespace verify_corpus::dataflow_store_source_reuse
CAKE_VERIFY_CASE(dataflow_store_source_reuse, "dataflow.store-source-reuse")

// dataflow.store-pending-at-exit: the stores are never committed, so the drain lowering adds at the end of
// the role (wait_group 0) does not cover them; without commits the waits before reuse do not either.
// Fix: bulk_commit() after each store.
// ALSO: dataflow.store-source-reuse
namespace verify_corpus::dataflow_store_pending_at_exit {
constexpr program bad() { return epilogue_kernel(true, false); }  // EXPECT: dataflow.store-pending-at-exit
constexpr program good() { return epilogue_kernel(true, true); }
}  // namespace verify_corpus::dataflow_store_pending_at_exit
CAKE_VERIFY_CASE(dataflow_store_pending_at_exit, "dataflow.store-pending-at-exit")

