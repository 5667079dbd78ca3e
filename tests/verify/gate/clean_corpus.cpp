// Fixed twins of the corpus pass the compile-time gate (the same passes run in constant evaluation).
// GATE: clean
#define CAKE_VERIFY_GATE
#include "cases/dataflow_war.hpp"
#include "cases/sync_missing_proxy_fence.hpp"
#include "cases/sync_tcgen05_commit_issuer.hpp"
#include "cases/memory_tmem.hpp"

static_assert(cake::verify(verify_corpus::dataflow_war::good()));
static_assert(cake::verify(verify_corpus::sync_missing_proxy_fence::good()));
static_assert(cake::verify(verify_corpus::sync_tcgen05_commit_issuer::good()));
static_assert(cake::verify(verify_corpus::memory_tmem_lane_access::good()));
