// The reference sm80 schedule passes the compile-time gate.
// GATE: clean
#include <cake/cake.hpp>

#include "kernels/gemm/sm80_bf16.hpp"

static_assert(cake::verify(cake::kernels::gemm_bf16_sm80()));
