// A deadlock found at compile time: the error names sync.deadlock and the first blocked wait (op#1).
// GATE: sync.deadlock op 1
#define CAKE_VERIFY_GATE
#include "cases/sync_deadlock.hpp"

static_assert(cake::verify(verify_corpus::sync_deadlock::bad()));
