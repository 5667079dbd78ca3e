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
  int entry_regs = 0;      // per-thread register cap at launch (__launch_bounds__(threads, 1)), multiple of 8
  int regs_after_setmaxnreg = 0;  // registers the block holds once every role has switched
  int regs_pool = 0;       // block_threads x entry_regs: all setmaxnreg.inc can take is what setmaxnreg.dec released of it
};

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
  if (w.block_threads > 0) {
    int cap = lim.regs_per_block / w.block_threads;
    cap = cap / 8 * 8;
    w.entry_regs = cap > lim.max_regs_per_thread ? lim.max_regs_per_thread / 8 * 8 : cap;
  }
  w.regs_pool = w.block_threads * w.entry_regs;
  for (int i = 0; i < w.role_count; ++i)
    w.regs_after_setmaxnreg += w.roles[i].threads * (w.roles[i].regs ? w.roles[i].regs : w.entry_regs);
  return w;
}

}  // namespace cake::plan
