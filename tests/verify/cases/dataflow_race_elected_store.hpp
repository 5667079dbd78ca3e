#pragma once
#include "dataflow_tma_store.hpp"

// The TMA store and the bulk waits run on one elected thread of the warpgroup, stmatrix on all 128 (issue 10,
// blind spot 1; on the H200 such a race gave relative error 0.77). dataflow.race: the store issued right after
// the stmatrix with no barrier of the whole warpgroup between them. Fix: r.sync(epi) before the store.
namespace verify_corpus::dataflow_race_elected_store {
constexpr program bad() { return epilogue_kernel(true, true, src_loc::current(), true, false); }  // EXPECT: dataflow.race
constexpr program good() { return epilogue_kernel(true, true); }
}  // namespace verify_corpus::dataflow_race_elected_store
CAKE_VERIFY_CASE(dataflow_race_elected_store, "dataflow.race")

