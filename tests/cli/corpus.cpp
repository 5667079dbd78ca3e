// The three reference GEMMs of the corpus in one file: one kernel per target, so `cake lower --target`
// picks one, and `cake estimate` answers for sm_90a only (the other targets have no calibration).
#include <cake/cake.hpp>

#include "kernels/gemm/sm100_bf16.hpp"
#include "kernels/gemm/sm80_bf16.hpp"
#include "kernels/gemm/sm90_bf16.hpp"

CAKE_EXPORT(gemm_sm80, cake::kernels::gemm_bf16_sm80(), reference("gemm"), shape(512, 512, 512))
CAKE_EXPORT(gemm_sm90, cake::kernels::gemm_bf16_sm90(), reference("gemm"), peer("cublas"), shape(4096, 4096, 4096))
CAKE_EXPORT(gemm_sm90_fp8, (cake::kernels::gemm_sm90<cake::e4m3>()), reference("gemm"), peer("cublaslt"), scalar_value("scale", 0.25),
            shape(4096, 4096, 4096))
CAKE_EXPORT(gemm_sm100, cake::kernels::gemm_bf16_sm100(), reference("gemm"), shape(4096, 4096, 4096))
