// The bulk waits run on one elected thread of the warpgroup, stmatrix on all 128 (issue 10, blind spot 1).
#pragma once
#include "dataflow_tma_store.hpp"
// dataflow.store-source-reuse: the bulk_wait_read that ends the previous store's read of a buffer ran on the
// elected thread only; without a barrier of the whole warpgroup after it, the other warps' stmatrix may
// overwrite the buffer while the store still reads it. Fix: r.sync(epi) after the wait.
namespace verify_corpus::dataflow_store_source_reuse_elected {
constexpr program bad() { return epilogue_kernel(true, true, src_loc::current(), false, true, src_loc::current()); }  // EXPECT: dataflow.store-source-reuse
constexpr program good() { return epilogue_kernel(true, true); }
}  // namespace verify_corpus::dataflow_store_source_reuse_elected
CAKE_VERIFY_CASE(dataflow_store_source_reuse_elected, "dataflow.store-source-reuse")
