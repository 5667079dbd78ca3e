#pragma once
// sm_90a (H100/H200): TMA (+multicast), mbarrier tx-count, wgmma, clusters, setmaxnreg (hardware-facts
// §1-§3, §6). The "a" matters: wgmma and setmaxnreg are rejected by ptxas on plain sm_90.
#include "../core/dtype.hpp"
#include "target.hpp"

namespace cake::targets {

inline constexpr target_info sm90a = {
    target_id::sm_90a, "sm_90a", 9, 0,
    {/*smem_per_block_optin*/ 232448, /*smem_per_sm*/ 233472, /*reserved*/ 1024,
     /*regs_per_sm*/ 65536, /*regs_per_block*/ 65536, /*max_regs_per_thread*/ 255,
     /*threads/block*/ 1024, /*threads/sm*/ 2048, /*blocks/sm*/ 32,
     /*cluster*/ 8, 16, /*named barriers*/ 16, /*tmem*/ 0, 0, /*setmaxnreg*/ 24, 256},
    // mma_sync ldmatrix cp_async named_bar mbarrier try_wait tx tma tma_mc stmatrix cluster wgmma setmaxnreg griddep proxy tcgen05
    {true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false},
    // wgmma per warpgroup: m64, n 8..256 step 8; mma.sync per warp as on sm_80
    {{unit_wgmma, 64, 64, 64, 8, 256, 8}, {unit_mma_sync, 16, 16, 16, 8, 8, 8}},
    2,
    unit_wgmma | unit_mma_sync,
};

}  // namespace cake::targets
