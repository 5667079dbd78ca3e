// Registers: the setmaxnreg pool (issue 10, blind spot 2).
#pragma once
#include "resource_registers.hpp"

// resource.register-file: 128 x 32 + 256 x 240 = 65536 registers fit the register file but not the
// block's pool. 384 threads launch with the entry cap of 168 registers (65536 / 384 rounded down to 8),
// 64512 in all, and setmaxnreg.inc only takes what setmaxnreg.dec released of those: the consumers'
// increase would wait forever for the last 1024. Fix: regs(232) = (64512 - 128 x 32) / 256 = 236,
// rounded down to 8.
namespace verify_corpus::resource_register_pool {
constexpr program bad() { return regs_kernel(warpgroups(1), 32, 240); }  // EXPECT: resource.register-file
constexpr program good() { return regs_kernel(warpgroups(1), 32, 232); }
}  // namespace verify_corpus::resource_register_pool
CAKE_VERIFY_CASE(resource_register_pool, "resource.register-file")
