// A finding about declarations rather than an op: the error names resource.register-file and op -1.
// GATE: resource.register-file op -1
#define CAKE_VERIFY_GATE
#include "cases/resource_registers.hpp"

static_assert(cake::verify(verify_corpus::resource_register_file::bad()));
