// A write-after-read found at compile time: the error names dataflow.war and the overwriting TMA load (op#3).
// GATE: dataflow.war op 3
#define CAKE_VERIFY_GATE
#include "cases/dataflow_war.hpp"

static_assert(cake::verify(verify_corpus::dataflow_war::bad()));
