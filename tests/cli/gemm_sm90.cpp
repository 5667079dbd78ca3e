// The sm_90a bf16 GEMM of the corpus, exported for the cake tool: `cake check`, `cake estimate`, and on
// an H200 `cake run` / `cake bench` (checked against the gemm reference, timed against cuBLAS).
#include <cake/cake.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

CAKE_EXPORT(gemm_bf16, cake::kernels::gemm_bf16_sm90(),  //
            reference("gemm"), peer("cublas"), shape(4096, 4096, 4096), shape(256, 512, 1024), shape(1000, 1000, 1000))
