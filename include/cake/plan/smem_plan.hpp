#pragma once
// The shared-memory plan: where every region, every mbarrier and the TMEM address slot live in the
// dynamic shared memory window. The one function that owns these offsets; the builder's overflow check,
// the analyzer's resource pass, the cost model and the emitter all read it.
#include "../ir/program.hpp"
#include "fragments.hpp"

namespace cake::plan {

struct smem_slot {
  int offset = 0;           // bytes from the start of dynamic shared memory
  int bytes_per_stage = 0;
  int stages = 1;
  int alignment = 128;
};

struct smem_layout {
  smem_slot regions[capacity::smem]{};
  int barrier_offset = 0;  // mbarriers, 8 B each, in barrier-plan order
  int barrier_count = 0;
  int tmem_slot_offset = -1;  // 4 B written by tcgen05.alloc, when the kernel uses TMEM
  int scratch_offset[capacity::roles]{};  // per role: cross-warp reduction / cluster-sum scratch (-1: none)
  int topk_offset[capacity::regs]{};      // per r.topk state: its lists (-1: none)
  int padding = 0;            // bytes lost to alignment
  int total = 0;              // dynamic shared memory bytes to request at launch
  int limit = 0;              // the target's per-block opt-in limit
  constexpr bool fits() const { return total <= limit; }
};

// Number of mbarrier objects: user arrays plus a full and an empty barrier per pipeline stage.
constexpr int mbarrier_objects(const program& p) {
  int n = 0;
  for (const auto& b : p.mbarriers) n += b.count;
  for (const auto& pl : p.pipelines) n += 2 * pl.stages;
  for (const auto& o : p.ops) n += o.kind == op_kind::cluster_reduce ? 2 : 0;  // 'ready' and 'done' of a cluster sum
  return n;
}

constexpr int align_up(int v, int a) { return (v + a - 1) / a * a; }

// Regions are placed largest alignment first (1024 B swizzled tiles before 128 B ones) in declaration
// order within an alignment class, so that padding is at most one alignment step per class.
constexpr smem_layout plan_smem(const program& p) {
  smem_layout L;
  L.limit = p.arch().limits.smem_per_block_optin;
  int cursor = 0;
  for (int align : {1024, 512, 256, 128}) {
    for (std::size_t i = 0; i < p.smem.size(); ++i) {
      const auto& r = p.smem[i];
      if (swizzle_alignment(r.swz) != align) continue;
      const int at = align_up(cursor, align);
      L.padding += at - cursor;
      L.regions[i] = {at, r.bytes_per_stage(), r.stages, align};
      // Every stage starts on the alignment boundary too (each is a TMA destination).
      cursor = at + align_up(r.bytes_per_stage(), align) * r.stages;
      L.padding += (align_up(r.bytes_per_stage(), align) - r.bytes_per_stage()) * r.stages;
    }
  }
  L.barrier_count = mbarrier_objects(p);
  L.barrier_offset = align_up(cursor, 8);
  cursor = L.barrier_offset + 8 * L.barrier_count;
  if (!p.tmem.empty()) {
    L.tmem_slot_offset = align_up(cursor, 16);
    cursor = L.tmem_slot_offset + 16;
  }
  const fragment_plan F = plan_fragments(p);
  for (std::size_t r = 0; r < capacity::roles; ++r) {
    L.scratch_offset[r] = -1;
    if (r >= p.roles.size() || F.scratch_bytes[r] == 0) continue;
    L.scratch_offset[r] = align_up(cursor, 16);
    cursor = L.scratch_offset[r] + F.scratch_bytes[r];
  }
  for (std::size_t r = 0; r < capacity::regs; ++r) {
    L.topk_offset[r] = -1;
    if (r >= p.regs.size() || F.topk_bytes[r] == 0) continue;
    L.topk_offset[r] = align_up(cursor, 16);
    cursor = L.topk_offset[r] + F.topk_bytes[r];
  }
  L.total = cursor;
  return L;
}

// Byte offset of stage `s` of region `r`.
constexpr int stage_offset(const smem_layout& L, int region, int s) {
  return L.regions[region].offset + s * align_up(L.regions[region].bytes_per_stage, L.regions[region].alignment);
}

}  // namespace cake::plan
