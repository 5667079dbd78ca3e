#pragma once
// sm_100a (B200): tcgen05.mma with tensor memory, TMA, clusters, setmaxnreg (hardware-facts §4, §6).
// No wgmma: it is an sm_90a-only instruction.
#include "../core/dtype.hpp"
#include "target.hpp"

namespace cake::targets {

inline constexpr target_info sm100a = {
    target_id::sm_100a, "sm_100a", 10, 0,
    {/*smem_per_block_optin*/ 232448, /*smem_per_sm*/ 233472, /*reserved*/ 1024,
     /*regs_per_sm*/ 65536, /*regs_per_block*/ 65536, /*max_regs_per_thread*/ 255,
     /*threads/block*/ 1024, /*threads/sm*/ 2048, /*blocks/sm*/ 32,
     /*cluster*/ 8, 16, /*named barriers*/ 16, /*tmem*/ 512, 128, /*setmaxnreg*/ 24, 256},
    // mma_sync ldmatrix cp_async named_bar mbarrier try_wait tx tma tma_mc stmatrix cluster wgmma setmaxnreg griddep proxy tcgen05
    {true, true, true, true, true, true, true, true, true, true, true, false, true, true, true, true},
    // tcgen05.mma cta_group::1: M in {64, 128}, N 8..256 step 8 (per CTA); mma.sync per warp
    {{unit_tcgen05, 64, 128, 64, 8, 256, 8}, {unit_mma_sync, 16, 16, 16, 8, 8, 8}},
    2,
    unit_tcgen05 | unit_mma_sync,
};

}  // namespace cake::targets
