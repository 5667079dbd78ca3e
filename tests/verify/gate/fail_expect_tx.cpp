// A hang found at compile time: the error names sync.expect-tx-mismatch and the op that expects too few
// bytes (op#0, the arrive_expect_tx).
// GATE: sync.expect-tx-mismatch op 0
#define CAKE_VERIFY_GATE
#include "cases/sync_expect_tx_mismatch.hpp"

static_assert(cake::verify(verify_corpus::sync_expect_tx_mismatch::bad()));
