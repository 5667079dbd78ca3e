#pragma once
// sm_80 (A100): mma.sync, ldmatrix, cp.async, named barriers (hardware-facts §5, §6).
#include "../core/dtype.hpp"
#include "target.hpp"

namespace cake::targets {

inline constexpr target_info sm80 = {
    target_id::sm_80, "sm_80", 8, 0,
    {/*smem_per_block_optin*/ 166912, /*smem_per_sm*/ 167936, /*reserved*/ 1024,
     /*regs_per_sm*/ 65536, /*regs_per_block*/ 65536, /*max_regs_per_thread*/ 255,
     /*threads/block*/ 1024, /*threads/sm*/ 2048, /*blocks/sm*/ 32,
     /*cluster*/ 1, 1, /*named barriers*/ 16, /*tmem*/ 0, 0, /*setmaxnreg*/ 0, 0},
    // mma_sync ldmatrix cp_async named_bar mbarrier try_wait tx tma tma_mc stmatrix cluster wgmma setmaxnreg griddep proxy tcgen05
    {true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false},
    // mma.sync per warp: m16 n8, k fixed by dtype (a warp tile is a multiple of 16x8)
    {{unit_mma_sync, 16, 16, 16, 8, 8, 8}},
    1,
    unit_mma_sync,
};

}  // namespace cake::targets
