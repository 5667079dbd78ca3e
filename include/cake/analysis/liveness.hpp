#pragma once
// Register pressure of a role's register tiles, with liveness (resource.register-tiles).
//
// A tile is live from the op that writes it to the last op that reads it; registers per thread at an op
// are the 32-bit words per thread of the tiles live there (plan::fragment_plan: elements per thread,
// 16-bit elements packed in pairs, 8-bit in quads; a 16-bit conversion computed where it is read costs
// nothing, and a read of it is a read of its f32 source). Liveness is the usual backward dataflow over
// the role's ops: a write of the whole tile ends its earlier value (an accumulating MMA, a reduction
// with .accumulate(), a cluster sum, or a write of a part do not); a when body may be skipped; a loop
// runs any number of times, and a tile live at its back edge is counted as live through the whole
// loop (it keeps its registers while the body runs). An MMA with overwrite_on_first(k) starts its
// accumulator at loop k's entry.
//
// The budget is the role's regs(n), or the entry cap of the block (plan/warps.hpp) without it, less a
// fixed `reg_overhead` for what the generated code needs besides the tiles: addresses, loop counters,
// indices, barrier phases, predicates. 24 is what NVRTC used beyond the tiles in the reference kernels
// (docs/norm.md: about 1.3 E + 8 for E elements per thread, with the 16-bit unpacking in the E).
#include "context.hpp"

namespace cake::analysis {

inline constexpr int reg_overhead = 24;

// 32-bit registers per thread that tile r holds in its fragment layout.
constexpr int tile_words(const program& p, const plan::fragment_plan& F, int r) {
  const auto& L = F.regs[r];
  if (L.lazy_src >= 0) return 0;
  const int n = L.count > 0 ? L.count : 0;
  const int bits = size_bits(p.regs[r].dt);
  // A top-k state's threshold is a (value, index) pair per row slot (its lists are in smem).
  if (p.regs[r].topk != 0) return 2 * n;
  return bits >= 32 ? n : bits == 16 ? (n + 1) / 2 : (n + 3) / 4;
}

struct reg_pressure {
  int peak = 0;        // registers per thread in live tiles at the worst op
  int peak_op = -1;    // that op (-1: the role has no op)
  std::uint32_t live = 0;  // the tiles live there (bit r: program::regs[r])
};

namespace detail {

constexpr std::uint32_t reg_bit(const plan::fragment_plan& F, int r) {
  if (r < 0 || r >= static_cast<int>(capacity::regs)) return 0;
  if (F.regs[r].lazy_src >= 0) r = F.regs[r].lazy_src;  // a lazy conversion is read from its source
  return 1u << r;
}

struct reg_use {
  std::uint32_t reads = 0, writes = 0, kills = 0;
};

constexpr reg_use uses_of(const program& p, const plan::fragment_plan& F, int id) {
  const op& o = p.ops[id];
  reg_use u;
  p.reg_reads(id, [&](const operand& x) { u.reads |= reg_bit(F, x.index); });
  // An MMA reads its accumulator unless it overwrites it.
  if (is_mma(o.kind) && o.d.kind == operand_kind::reg && !o.has(flag_overwrite)) u.reads |= reg_bit(F, o.d.index);
  p.reg_writes(id, [&](const operand& x) {
    if (F.regs[x.index].lazy_src >= 0) return;  // computed where it is read: no registers of its own
    const std::uint32_t b = reg_bit(F, x.index);
    u.writes |= b;
    const bool whole = x.part == part_axis::none;
    const bool replaces = o.kind == op_kind::fill || o.kind == op_kind::topk_init || o.kind == op_kind::elementwise || o.kind == op_kind::convert || (o.kind == op_kind::load_global && !o.has(flag_accumulate)) ||
                          o.kind == op_kind::load_shared || o.kind == op_kind::tmem_load || o.kind == op_kind::ldmatrix ||
                          ((o.kind == op_kind::reduce_rows || o.kind == op_kind::arg_reduce_rows) && !o.has(flag_accumulate)) ||
                          (is_mma(o.kind) && o.has(flag_overwrite));
    if (whole && replaces) u.kills |= b;
  });
  return u;
}

struct liveness_walk {
  const program& p;
  const plan::fragment_plan& F;
  int role;
  std::uint32_t during[capacity::ops]{};  // tiles live while op i runs (recorded pass)

  // Backward over the ops of the body [first, end) whose parent is `parent`, with `out` live after it.
  // Returns what is live before it. `extra`: tiles live through every enclosing loop.
  constexpr std::uint32_t block(int first, int end, int parent, std::uint32_t out, bool record, std::uint32_t extra, int depth = 0) {
    std::uint32_t live = out;
    for (int i = end - 1; i >= first; --i) {
      const op& o = p.ops[i];
      if (o.parent != parent || o.role != role) continue;
      if (o.kind == op_kind::when) {
        live |= block(i + 1, o.end, i, live, record, extra, depth + 1);
        if (record) during[i] = live | extra;
        continue;
      }
      if (o.kind == op_kind::loop || o.kind == op_kind::tile_loop) {
        std::uint32_t header = live;
        for (int it = 0; it < 34 && depth < 16; ++it) {
          const std::uint32_t next = live | block(i + 1, o.end, i, header, false, 0, depth + 1);
          if (next == header) break;
          header = next;
        }
        if (record) {
          block(i + 1, o.end, i, header, true, extra | header, depth + 1);
          during[i] = header | extra;
        }
        // Accumulators that an MMA of the body overwrites on this loop's first trip start here.
        std::uint32_t starts = 0;
        for (int j = i + 1; j < o.end; ++j)
          if (is_mma(p.ops[j].kind) && p.ops[j].has(flag_overwrite_first) && p.ops[j].imm[2] == i && p.ops[j].d.kind == operand_kind::reg)
            starts |= reg_bit(F, p.ops[j].d.index);
        live = header & ~starts;
        continue;
      }
      const reg_use u = uses_of(p, F, i);
      const std::uint32_t in = (live & ~u.kills) | u.reads;
      if (record) during[i] = in | live | u.writes | extra;
      live = in;
    }
    return live;
  }
};

}  // namespace detail

constexpr reg_pressure role_reg_pressure(const program& p, const plan::fragment_plan& F, int role) {
  detail::liveness_walk w{p, F, role};
  const int n = static_cast<int>(p.ops.size());
  w.block(0, n, -1, 0, true, 0);
  reg_pressure r;
  // Control ops are not candidates: what is live through a loop is counted at every op of its body.
  for (int i = 0; i < n; ++i) {
    if (p.ops[i].role != role || (p.is_control(p.ops[i].kind) && p.ops[i].end > i + 1)) continue;
    int words = 0;
    for (int t = 0; t < static_cast<int>(p.regs.size()) && t < static_cast<int>(capacity::regs); ++t)
      if (w.during[i] & (1u << t)) words += tile_words(p, F, t);
    if (r.peak_op < 0 || words > r.peak) r.peak = words, r.peak_op = i, r.live = w.during[i];
  }
  return r;
}

}  // namespace cake::analysis
