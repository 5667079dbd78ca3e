#pragma once
// A compilation target as data: its limits and which instruction families it admits.
// One file per target (sm80.hpp, sm90a.hpp, sm100a.hpp) fills a target_info; targets.hpp looks them up.
// Matching is exact: sm_90a is not sm_90 and never runs as sm_100a (hardware-facts §3, §7).
#include <string_view>

namespace cake {

enum class target_id : unsigned char { sm_80, sm_90a, sm_100a };
inline constexpr int target_count = 3;

// Instruction families. Ops map to one family each (ir/ops.hpp); a target admits a set of them.
enum class feature : unsigned char {
  mma_sync,          // mma.sync.aligned (sm_80+)
  ldmatrix,          // ldmatrix (sm_75+)
  cp_async,          // cp.async (sm_80+)
  named_barrier,     // bar.sync / bar.arrive
  mbarrier,          // mbarrier.init/arrive/test_wait (sm_80+)
  mbarrier_try_wait, // mbarrier.try_wait (sm_90+)
  mbarrier_tx,       // expect_tx / complete_tx (sm_90+)
  tma,               // cp.async.bulk.tensor (sm_90+)
  tma_multicast,     // .multicast::cluster (sm_90a/sm_100a)
  stmatrix,          // stmatrix (sm_90+)
  cluster,           // thread-block clusters, barrier.cluster, mapa (sm_90+)
  wgmma,             // wgmma.mma_async (sm_90a only)
  setmaxnreg,        // setmaxnreg (sm_90a, sm_100a)
  griddepcontrol,    // griddepcontrol (sm_90+)
  fence_proxy_async, // fence.proxy.async (sm_90+)
  tcgen05,           // tcgen05.* and tensor memory (sm_100a)
  count_
};
inline constexpr int feature_count = static_cast<int>(feature::count_);

constexpr std::string_view to_string(feature f) {
  constexpr std::string_view names[] = {"mma.sync", "ldmatrix", "cp.async", "named barriers", "mbarrier",
                                        "mbarrier.try_wait", "mbarrier tx-count", "TMA (cp.async.bulk.tensor)",
                                        "TMA multicast", "stmatrix", "clusters", "wgmma", "setmaxnreg",
                                        "griddepcontrol", "fence.proxy.async", "tcgen05 / tensor memory"};
  return names[static_cast<int>(f)];
}

struct target_limits {
  int smem_per_block_optin;  // bytes a block may use after opting in (dynamic + static)
  int smem_per_sm;
  int smem_reserved_per_block;
  int regs_per_sm;
  int regs_per_block;
  int max_regs_per_thread;
  int max_threads_per_block;
  int max_threads_per_sm;
  int max_blocks_per_sm;
  int max_cluster_portable;     // 1 where clusters do not exist
  int max_cluster_nonportable;
  int named_barriers;
  int tmem_columns;             // 0 where tensor memory does not exist
  int tmem_lanes;
  int setmaxnreg_min, setmaxnreg_max;
  // Registers go to warps in groups of this many (one warp per SM sub-partition; each holds a quarter of the
  // register file): ptxas caps a thread at regs_per_sm / (the SM's warps rounded up to a multiple of it x 32),
  // e.g. 128 at 13 warps (416 threads, not 152) and 168 at two blocks of 5 warps (160 threads; not 200). The
  // same on sm_80, sm_90a and sm_100a (four sub-partitions); checked against ptxas in tests/lowering.
  int reg_alloc_warps = 4;
};

// Legal MMA instruction shapes per warp (mma.sync), warpgroup (wgmma) or CTA (tcgen05).
struct mma_shape_rule {
  unsigned unit;      // unit_mask from core/dtype.hpp
  int m_min, m_max, m_step;
  int n_min, n_max, n_step;
};

struct target_info {
  target_id id;
  std::string_view name;        // as spelled in --gpu-architecture
  int cc_major, cc_minor;       // the exact compute capability an "a" target runs on
  target_limits limits;
  bool admits[feature_count];
  mma_shape_rule mma_rules[3];
  int mma_rule_count;
  unsigned mma_units;           // unit_mask of matrix units present

  constexpr bool admitted(feature f) const { return admits[static_cast<int>(f)]; }
};

}  // namespace cake
