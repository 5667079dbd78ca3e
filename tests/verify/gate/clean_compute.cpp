// The register-compute rules run in constant evaluation too: the fixed twins pass the compile-time gate,
// and so do the bad twins whose findings are warnings (warnings never fail cake::verify).
// GATE: clean
#define CAKE_VERIFY_GATE
#include "cases/dataflow_atomic_mixed.hpp"
#include "cases/ir_control_sanity.hpp"
#include "cases/memory_mask_coverage.hpp"
#include "cases/representation_compute.hpp"
#include "cases/resource_register_liveness.hpp"
#include "cases/sync_cluster_sum.hpp"

static_assert(cake::verify(verify_corpus::representation_broadcast::good()));
static_assert(cake::verify(verify_corpus::representation_compute_dtype::good()));
static_assert(cake::verify(verify_corpus::representation_layout_conflict::good()));
static_assert(cake::verify(verify_corpus::dataflow_atomic_mixed::good()));
static_assert(cake::verify(verify_corpus::sync_cluster_sum_divergent::good()));
static_assert(cake::verify(verify_corpus::memory_mask_coverage::bad()));
static_assert(cake::verify(verify_corpus::resource_register_liveness::bad()));
static_assert(cake::verify(verify_corpus::ir_control_sanity::bad()));
