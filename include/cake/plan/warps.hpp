#pragma once
// Warp and register assignment: which warps each role occupies (roles are laid out in declaration
// order, without padding, so a misaligned warpgroup role is visible to the analyzer rather than
// silently fixed), the block size, the register cap at kernel entry (setmaxnreg needs one) and the
// setmaxnreg value each role switches to.
#include "../ir/program.hpp"

namespace cake::plan {

struct role_placement {
  int first_warp = 0;
  int warps = 0;
  int first_thread = 0;
  int threads = 0;
  int units = 0;           // warps or warpgroups
  int threads_per_unit = 0;
  bool warpgroup_aligned = true;  // first warp divisible by 4
  int regs = 0;            // setmaxnreg target, 0 = none
};

struct warp_plan {
  role_placement roles[capacity::roles]{};
  int role_count = 0;
  int block_threads = 0;
  int entry_regs = 0;      // per-thread register cap at launch (__launch_bounds__(threads, ctas_per_sm)), multiple of 8
  int regs_after_setmaxnreg = 0;  // registers the block holds once every role has switched
  int regs_pool = 0;       // block_threads x entry_regs: all setmaxnreg.inc can take is what setmaxnreg.dec released of it
};

// The per-thread register cap a block of `block_threads` launches with (__launch_bounds__(threads, ctas_per_sm),
// as ptxas computes it): the SM's registers over its warps, `ctas_per_sm` blocks of ceil(threads / 32), rounded up
// to the warps that get registers together (lim.reg_alloc_warps), in multiples of 8, at most max_regs_per_thread.
// So 384 threads get 168 (65536 / (12 x 32)), 416 get 128 (13 warps count as 16), two blocks of 160 get 168
// (10 warps count as 12). Its threads x this is the pool setmaxnreg re-balances (setmaxnreg.inc only takes what a
// setmaxnreg.dec released).
// The warps an SM's register file is shared among: ctas_per_sm blocks of ceil(threads / 32), rounded up to a
// multiple of lim.reg_alloc_warps.
constexpr long long register_counted_warps(const target_limits& lim, int block_threads, int ctas_per_sm = 1) {
  const int g = lim.reg_alloc_warps > 0 ? lim.reg_alloc_warps : 1;
  const long long warps = static_cast<long long>(ctas_per_sm) * ((block_threads + 31) / 32);
  return (warps + g - 1) / g * g;
}
constexpr int entry_register_cap(const target_limits& lim, int block_threads, int ctas_per_sm = 1) {
  if (block_threads <= 0 || ctas_per_sm <= 0) return 0;
  const long long counted = register_counted_warps(lim, block_threads, ctas_per_sm);
  const long long pool = lim.regs_per_sm < static_cast<long long>(ctas_per_sm) * lim.regs_per_block ? lim.regs_per_sm
                                                                                                      : static_cast<long long>(ctas_per_sm) * lim.regs_per_block;
  const long long cap = pool / (counted * 32) / 8 * 8;
  return cap > lim.max_regs_per_thread ? lim.max_regs_per_thread / 8 * 8 : static_cast<int>(cap);
}

// For a producer / consumers split: the registers each consumer thread may hold after setmaxnreg when
// the launch has `block_threads` threads, of which `producer_threads` keep `producer_regs`, and the
// `consumer_threads` share the rest of the pool: a multiple of 8, at most `at_most`. E.g. sm_90a, one
// producer warpgroup at 40 and two consumer warpgroups: 384 x 168 - 128 x 40 = 59,392 over 256 threads
// = 232; three consumers (512 threads, producer at 24): 160.
constexpr int consumer_register_share(const target_limits& lim, int block_threads, int producer_threads, int producer_regs, int consumer_threads,
                                      int at_most = 232) {
  if (consumer_threads <= 0) return 0;
  const long long pool = static_cast<long long>(block_threads) * entry_register_cap(lim, block_threads);
  const long long left = (pool - static_cast<long long>(producer_threads) * producer_regs) / consumer_threads / 8 * 8;
  return static_cast<int>(left < at_most ? left : at_most);
}

constexpr warp_plan plan_warps(const program& p) {
  warp_plan w;
  int warp = 0;
  for (std::size_t i = 0; i < p.roles.size(); ++i) {
    const auto& r = p.roles[i];
    role_placement& rp = w.roles[i];
    rp.first_warp = warp;
    rp.warps = r.warps();
    rp.first_thread = 32 * warp;
    rp.threads = r.threads();
    rp.units = r.count;
    rp.threads_per_unit = r.unit == role_unit::warpgroup ? 128 : 32;
    rp.warpgroup_aligned = warp % 4 == 0;
    rp.regs = r.regs;
    warp += r.warps();
  }
  w.role_count = static_cast<int>(p.roles.size());
  w.block_threads = 32 * warp;
  const auto& lim = p.arch().limits;
  w.entry_regs = entry_register_cap(lim, w.block_threads, p.launch.ctas_per_sm);
  w.regs_pool = w.block_threads * w.entry_regs;
  for (int i = 0; i < w.role_count; ++i)
    w.regs_after_setmaxnreg += w.roles[i].threads * (w.roles[i].regs ? w.roles[i].regs : w.entry_regs);
  return w;
}

}  // namespace cake::plan
