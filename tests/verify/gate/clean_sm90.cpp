// The reference sm90 schedule passes the compile-time gate.
// GATE: clean
#include <cake/cake.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

static_assert(cake::verify(cake::kernels::gemm_bf16_sm90()));
