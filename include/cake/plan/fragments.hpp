#pragma once
// Fragment layouts: how the elements of every register tile are spread over the threads of its unit.
// A schedule never names a layout; it is derived here, once, for the analyzer (shapes, register
// pressure) and lowering (element loops, reductions, loads and stores).
//
// A layout is a *frame* (the full R x C tile it is defined over, and how its elements map to threads)
// plus the tile's shape class in that frame: the full tile, an R x 1 row vector (one value per row the
// thread holds), a 1 x C column vector (one value per column the thread holds), or a 1 x 1 scalar
// (replicated). Frames come from the ops that fix a layout:
//   wgmma_acc  wgmma accumulators and A-from-register operands (hardware-facts §3 Fragments)
//   mma_acc    mma.sync accumulators and A operands (hardware-facts §5)
//   tmem_rows  tcgen05.ld 32x32b: a thread holds one row (hardware-facts §4)
//   blocked    tiles loaded from memory with no other constraint: each row in 16-byte vectors spread
//              over `tpr` consecutive threads, `rpp` rows per pass of the unit
// and spread through the ops that combine tiles (r.set, reductions, converts) by unification. Two
// frames meeting in one op is a conflict, reported by the analyzer (representation.layout-conflict).
#include "../ir/program.hpp"

namespace cake::plan {

enum class frag_kind : std::uint8_t { none, wgmma_acc, mma_acc, tmem_rows, blocked };
constexpr std::string_view to_string(frag_kind k) {
  constexpr std::string_view n[] = {"none", "wgmma accumulator", "mma.sync accumulator", "TMEM rows", "blocked"};
  return n[static_cast<int>(k)];
}
enum class shape_class : std::uint8_t { full, row_vec, col_vec, scalar };

struct frame {
  frag_kind kind = frag_kind::none;
  int rows = 0, cols = 0;  // the full tile
  int vec = 1, tpr = 1;    // blocked: elements per vector, threads per row
  friend constexpr bool operator==(const frame&, const frame&) = default;
  constexpr int rpp(int threads) const { return tpr > 0 ? threads / tpr : 1; }  // rows per pass (blocked)
};

struct reg_layout {
  frame f{};
  shape_class cls = shape_class::full;
  int threads = 128;  // of the unit that holds the tile
  int count = 0;      // elements per thread
  int lazy_src = -1;  // a 16-bit conversion computed where it is read from this f32 tile (no registers of its own)
  constexpr bool known() const { return f.kind != frag_kind::none || cls == shape_class::scalar; }
};

struct fragment_plan {
  reg_layout regs[capacity::regs]{};
  // The first conflict found (the analyzer reports it; lowering refuses the Program).
  int conflict_op = -1;
  int conflict_a = -1, conflict_b = -1;
  const char* conflict_why = "";
  frame conflict_frame_a{}, conflict_frame_b{};  // the layouts that met (kind none: the other side had none)
  // Shared-memory scratch each role needs for cross-warp row reductions and cluster reductions (bytes),
  // and whether it needs a per-unit named barrier for them.
  int scratch_bytes[capacity::roles]{};
  bool unit_barrier[capacity::roles]{};
  // Per role with a count_arrival in warpgroup units: where in its scratch each unit's leader leaves the
  // count for the unit's other warps (4 bytes per unit, past every other use of the scratch, so that a
  // later op's writes to the scratch cannot meet a slow thread's read of it; -1: none).
  int count_offset[capacity::roles]{};
  // Per r.topk state: the candidate buffer's length per row (twice the most candidates one chunk of a
  // fold can add to a row; 0 while no fold of a lowered layout reads into it) and the smem bytes of its
  // lists, for all units of its role.
  int topk_slack[capacity::regs]{};
  int topk_bytes[capacity::regs]{};
};

// Row top-k (topk_rows): the lanes of a warp that hold one row of a source of layout L (0: the row is
// not inside one warp, a form lowering does not take), and the columns of one chunk, the step at which a
// fold checks whether its candidate buffer could overflow (every candidate of a chunk fits the buffer's
// free half). MMA fragments: 4 lanes per row, 8-column groups (2 per chunk where the tile has an even
// number of them); blocked: tpr lanes, one pass of their vectors.
constexpr int topk_lanes(const reg_layout& L) {
  switch (L.f.kind) {
    case frag_kind::wgmma_acc:
    case frag_kind::mma_acc: return 4;
    case frag_kind::blocked: return L.f.tpr <= 32 ? L.f.tpr : 0;
    default: return 0;
  }
}
constexpr int topk_chunk_cols(const reg_layout& L) {
  switch (L.f.kind) {
    case frag_kind::wgmma_acc:
    case frag_kind::mma_acc: return L.f.cols % 16 == 0 ? 16 : 8;
    case frag_kind::blocked: return L.f.tpr <= 32 ? L.f.tpr * L.f.vec : 0;
    default: return 0;
  }
}
// A row's list and buffer: k + slack entries, an odd number of words apart (rows held by different lane
// groups then start in different banks); values, then indices, then one count per row.
constexpr int topk_stride(int k, int slack) { return (k + slack) | 1; }
constexpr int topk_unit_bytes(int rows, int k, int slack) { return rows * topk_stride(k, slack) * 8 + rows * 4; }

constexpr shape_class class_of(const reg_decl& g) {
  if (g.rows == 1 && g.cols == 1) return shape_class::scalar;
  if (g.cols == 1) return shape_class::row_vec;
  if (g.rows == 1) return shape_class::col_vec;
  return shape_class::full;
}
constexpr int unit_threads(const reg_decl& g) { return g.scope == role_unit::warpgroup ? 128 : 32; }

// Elements per thread of a tile of class `cls` in frame `f` (0 when the frame cannot hold it).
constexpr int elements(const frame& f, shape_class cls, int threads) {
  switch (f.kind) {
    case frag_kind::wgmma_acc:
      return cls == shape_class::full ? f.rows * f.cols / 128 : cls == shape_class::row_vec ? 2 * (f.rows / 64) : cls == shape_class::col_vec ? f.cols / 4 : 1;
    case frag_kind::mma_acc:
      return cls == shape_class::full ? f.rows * f.cols / 32 : cls == shape_class::row_vec ? 2 * (f.rows / 16) : cls == shape_class::col_vec ? f.cols / 4 : 1;
    case frag_kind::tmem_rows: return cls == shape_class::full ? f.cols : cls == shape_class::row_vec ? 1 : cls == shape_class::col_vec ? f.cols : 1;
    case frag_kind::blocked: {
      const int passes = f.rows / f.rpp(threads), per_row = f.cols / (f.vec * f.tpr) * f.vec;
      return cls == shape_class::full ? passes * per_row : cls == shape_class::row_vec ? passes : cls == shape_class::col_vec ? per_row : 1;
    }
    default: return cls == shape_class::scalar ? 1 : 0;
  }
}

// Does a tile of shape rows x cols fit frame f (as its full tile or as one of its vectors)?
constexpr bool fits(const frame& f, const reg_decl& g) {
  switch (class_of(g)) {
    case shape_class::full: return g.rows == f.rows && g.cols == f.cols;
    case shape_class::row_vec: return g.rows == f.rows;
    case shape_class::col_vec: return g.cols == f.cols;
    default: return true;
  }
}

// A vector combined with tiles of two frames keeps one layout when its slots mean the same in both:
// in accumulator frames a row vector's slots depend on the rows only and a column vector's on the
// columns only (S = Q K^T of 64 keys and O of 128 columns share the row statistics of a flash
// attention); blocked frames must also agree on how a row is spread over threads.
constexpr bool vector_compatible(const frame& f, const frame& g, shape_class cls) {
  if (f.kind != g.kind) return false;
  if (cls == shape_class::row_vec) {
    switch (f.kind) {
      case frag_kind::wgmma_acc:
      case frag_kind::mma_acc: return f.rows == g.rows;
      case frag_kind::tmem_rows: return true;
      case frag_kind::blocked: return f.rows == g.rows && f.tpr == g.tpr;
      default: return false;
    }
  }
  if (cls == shape_class::col_vec) {
    switch (f.kind) {
      case frag_kind::wgmma_acc:
      case frag_kind::mma_acc:
      case frag_kind::tmem_rows: return f.cols == g.cols;
      case frag_kind::blocked: return f.cols == g.cols && f.vec == g.vec && f.tpr == g.tpr;
      default: return false;
    }
  }
  return cls == shape_class::scalar;
}

// The blocked frame for a full rows x cols tile of a unit of `threads`, in vectors of 16 bytes of
// `dt`: as few threads per row as let the unit's threads cover the rows in whole passes (so that a row
// stays inside a warp whenever the tile has enough rows: row reductions then need no shared memory).
constexpr frame blocked_frame(int rows, int cols, dtype dt, int threads) {
  frame f;
  f.kind = frag_kind::blocked;
  f.rows = rows;
  f.cols = cols;
  f.vec = 16 / (size_bits(dt) / 8 > 0 ? size_bits(dt) / 8 : 1);
  // A tile without rows or columns (the builder reported ir.reg-shape; a program with errors is still
  // planned for its diagnostics): a frame of one vector, never divided by zero.
  if (rows < 1 || cols < 1) {
    f.vec = 1, f.tpr = 1;
    return f;
  }
  if (f.vec > cols) f.vec = cols;
  while (f.vec > 1 && cols % f.vec) f.vec /= 2;
  const int vpr = cols / f.vec;
  int t = 1;
  while (t < threads && threads / t > rows) t *= 2;
  while (t > 1 && vpr % t) t /= 2;  // cannot cover the rows evenly: frame_ok reports it
  f.tpr = t;
  return f;
}
// A frame is usable when its tiles split evenly over the unit.
constexpr bool frame_ok(const frame& f, int threads) {
  switch (f.kind) {
    case frag_kind::wgmma_acc: return threads == 128 && f.rows % 64 == 0 && f.cols % 8 == 0;
    case frag_kind::mma_acc: return threads == 32 && f.rows % 16 == 0 && f.cols % 8 == 0;
    case frag_kind::tmem_rows: return threads == 128 && f.rows == 128;
    case frag_kind::blocked: return f.rows % f.rpp(threads) == 0 && f.cols % (f.vec * f.tpr) == 0;
    default: return true;
  }
}

namespace detail {
// Whether region `smem` is one pipeline `pl` carries (not a TMEM one).
constexpr bool carried_by(const program& p, int pl, const operand& x) {
  if (x.kind != operand_kind::smem) return false;
  const auto& d = p.pipelines[pl];
  for (int i = 0; i < d.carried_count; ++i)
    if (!d.carried_tmem[i] && d.carried[i] == x.index) return true;
  return false;
}
// A wgmma of role `r` reading pipeline `pl`'s stages among ops [from, to).
constexpr bool mma_reads_between(const program& p, int r, int pl, int from, int to) {
  for (int i = from; i < to && i < static_cast<int>(p.ops.size()); ++i) {
    const op& o = p.ops[i];
    if (o.role == r && (o.kind == op_kind::wgmma || o.kind == op_kind::tcgen05_mma) && (carried_by(p, pl, o.a) || carried_by(p, pl, o.b))) return true;
  }
  return false;
}
}  // namespace detail

// Whether release op `x` (of a pipeline, by a role of warpgroup units: more than one warp per unit) frees a stage that
// the unit's warps read with generic loads (load_shared, ldmatrix) with no MMA of the unit reading the pipeline between
// that read and the release. Its leader's arrive on 'empty' then needs a sync of the unit's warps first: the leader's
// own reads are done when it arrives, the other warps' need not be. (An MMA between is enough: its completion, which the
// leader waited for, means every warp issued it, after its reads.) A read later in a loop body than the release is
// followed by the release of the next trip: the ops between are the rest of the body and its start up to the release.
constexpr bool reads_stage_generically(const program& p, int x) {
  if (x < 0 || static_cast<std::size_t>(x) >= p.ops.size()) return false;
  const op& rel = p.ops[x];
  if ((rel.kind != op_kind::pipeline_release && rel.kind != op_kind::pipeline_flush) || rel.d.kind != operand_kind::pipeline) return false;
  const int r = rel.role, pl = rel.d.index;
  if (static_cast<std::size_t>(r) >= p.roles.size() || p.roles[r].unit != role_unit::warpgroup || static_cast<std::size_t>(pl) >= p.pipelines.size()) return false;
  for (int i = 0; i < static_cast<int>(p.ops.size()); ++i) {
    const op& o = p.ops[i];
    if (o.role != r || (o.kind != op_kind::load_shared && o.kind != op_kind::ldmatrix) || !detail::carried_by(p, pl, o.a)) continue;
    if (i < x) {
      if (!detail::mma_reads_between(p, r, pl, i + 1, x)) return true;
      continue;
    }
    // the read comes after the release in the code: the innermost loop holding both carries it to the next trip's release
    int loop = rel.parent;
    while (loop >= 0 && !(p.ops[loop].kind == op_kind::loop || p.ops[loop].kind == op_kind::tile_loop)) loop = p.ops[loop].parent;
    if (loop < 0 || i >= p.ops[loop].end) continue;  // no later trip: this release never frees what the read read
    if (!detail::mma_reads_between(p, r, pl, i + 1, p.ops[loop].end) && !detail::mma_reads_between(p, r, pl, loop + 1, x)) return true;
  }
  return false;
}
// Whether any release of role `r` needs that sync (the role then gets a derived unit barrier).
constexpr bool role_reads_stages_generically(const program& p, int r) {
  for (std::size_t i = 0; i < p.ops.size(); ++i)
    if (p.ops[i].role == r && reads_stage_generically(p, static_cast<int>(i))) return true;
  return false;
}

namespace detail {

struct unifier {
  const program& p;
  fragment_plan& F;
  bool changed = false;

  constexpr void conflict(int op, int a, int b, const char* why, frame fa, frame fb) {
    if (F.conflict_op >= 0) return;
    F.conflict_op = op, F.conflict_a = a, F.conflict_b = b, F.conflict_why = why;
    F.conflict_frame_a = fa, F.conflict_frame_b = fb;
  }
  constexpr void seed(int op, int r, frame f) {
    if (r < 0 || r >= static_cast<int>(p.regs.size())) return;
    auto& L = F.regs[r];
    if (class_of(p.regs[r]) == shape_class::scalar) return;
    if (L.f.kind == frag_kind::none) {
      if (!fits(f, p.regs[r])) return conflict(op, r, -1, "the tile's shape does not fit the layout this op gives it", f, frame{});
      L.f = f;
      changed = true;
    } else if (!(L.f == f)) {
      conflict(op, r, -1, "the tile already has another layout (two ops fix different fragment layouts)", L.f, f);
    }
  }
  // A full tile without a layout combined with a vector laid out over another shape: the same kind of
  // layout over the tile's own shape, when the vector's slots mean the same in it (a row vector of S
  // used with O; see vector_compatible).
  constexpr bool adopt(const frame& f, int vec, int tile, frame& out) const {
    const shape_class cv = class_of(p.regs[vec]);
    const auto& g = p.regs[tile];
    if (cv == shape_class::full || cv == shape_class::scalar || class_of(g) != shape_class::full) return false;
    out = f.kind == frag_kind::blocked ? blocked_frame(g.rows, g.cols, g.dt, unit_threads(g)) : frame{f.kind, g.rows, g.cols};
    return frame_ok(out, unit_threads(g)) && fits(out, g) && vector_compatible(f, out, cv);
  }
  // Both tiles take part in one element-wise op (or a reduction): they must share a frame.
  constexpr void unify(int op, int a, int b) {
    if (a < 0 || b < 0 || a == b || a >= static_cast<int>(p.regs.size()) || b >= static_cast<int>(p.regs.size())) return;
    if (p.regs[a].role != p.regs[b].role) return;  // foreign registers: memory.foreign-registers
    auto& A = F.regs[a];
    auto& B = F.regs[b];
    const bool sa = class_of(p.regs[a]) == shape_class::scalar, sb = class_of(p.regs[b]) == shape_class::scalar;
    if (sa || sb) return;
    if (A.f.kind != frag_kind::none && B.f.kind == frag_kind::none) {
      frame g = A.f;
      if (!fits(A.f, p.regs[b]) && !adopt(A.f, a, b, g))
        return conflict(op, a, b, "the shapes do not broadcast (a full tile, an R x 1 or a 1 x C vector of the same R, C)", A.f, frame{});
      B.f = g;
      changed = true;
    } else if (B.f.kind != frag_kind::none && A.f.kind == frag_kind::none) {
      frame g = B.f;
      if (!fits(B.f, p.regs[a]) && !adopt(B.f, b, a, g))
        return conflict(op, a, b, "the shapes do not broadcast (a full tile, an R x 1 or a 1 x C vector of the same R, C)", frame{}, B.f);
      A.f = g;
      changed = true;
    } else if (A.f.kind != frag_kind::none && !(A.f == B.f)) {
      const shape_class ca = class_of(p.regs[a]), cb = class_of(p.regs[b]);
      if (ca != shape_class::full && fits(B.f, p.regs[a]) && vector_compatible(A.f, B.f, ca)) return;
      if (cb != shape_class::full && fits(A.f, p.regs[b]) && vector_compatible(B.f, A.f, cb)) return;
      conflict(op, a, b, "the two tiles have different fragment layouts", A.f, B.f);
    }
  }
};

constexpr int reg_of(const operand& o) { return o.kind == operand_kind::reg ? o.index : -1; }

}  // namespace detail

constexpr fragment_plan plan_fragments(const program& p) {
  fragment_plan F;
  for (std::size_t r = 0; r < p.regs.size(); ++r) {
    F.regs[r].cls = class_of(p.regs[r]);
    F.regs[r].threads = unit_threads(p.regs[r]);
  }
  detail::unifier U{p, F};
  const int n = static_cast<int>(p.ops.size());
  // 1. Ops that fix a layout.
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    const int d = detail::reg_of(o.d), a = detail::reg_of(o.a);
    if (o.kind == op_kind::wgmma) {
      if (d >= 0) U.seed(i, d, {frag_kind::wgmma_acc, p.regs[d].rows, p.regs[d].cols});
      if (a >= 0) U.seed(i, a, {frag_kind::wgmma_acc, p.regs[a].rows, p.regs[a].cols});
    } else if (o.kind == op_kind::mma_sync) {
      if (d >= 0) U.seed(i, d, {frag_kind::mma_acc, p.regs[d].rows, p.regs[d].cols});
      if (a >= 0) U.seed(i, a, {frag_kind::mma_acc, p.regs[a].rows, p.regs[a].cols});
    } else if (o.kind == op_kind::tmem_load && d >= 0) {
      U.seed(i, d, {frag_kind::tmem_rows, p.regs[d].rows, p.regs[d].cols});
    } else if (o.kind == op_kind::tmem_store && a >= 0) {
      U.seed(i, a, {frag_kind::tmem_rows, p.regs[a].rows, p.regs[a].cols});
    } else if (o.kind == op_kind::ldmatrix && d >= 0) {
      U.seed(i, d, {frag_kind::mma_acc, p.regs[d].rows, p.regs[d].cols});
    }
  }
  // 2. Spread through the ops that combine tiles, to a fixpoint; then give loaded tiles without a layout
  //    the blocked one and spread again; what is left takes its unit's accumulator layout.
  auto spread = [&] {
    for (int pass = 0; pass < 8; ++pass) {
      U.changed = false;
      for (int i = 0; i < n; ++i) {
        const op& o = p.ops[i];
        const int d = detail::reg_of(o.d);
        switch (o.kind) {
          case op_kind::elementwise:
          case op_kind::convert:
          case op_kind::reduce_rows:
          case op_kind::arg_reduce_rows:
          case op_kind::topk_rows:
          case op_kind::scatter_add:
          case op_kind::scatter_store:
          case op_kind::scan_rows:
          case op_kind::reduce_cols:
          case op_kind::fetch_add:
            if (o.has(flag_expr_src)) {  // a reduced expression: its leaves meet at its lead leaf, and so does the vector
              const int lead = detail::reg_of(o.a);
              p.reg_reads(i, [&](const operand& x) { U.unify(i, lead, x.index); });
              if (d >= 0) U.unify(i, d, lead);
            } else {
              p.reg_reads(i, [&](const operand& x) { U.unify(i, d >= 0 ? d : detail::reg_of(o.a), x.index); });
            }
            if (o.kind == op_kind::arg_reduce_rows || o.kind == op_kind::scatter_add || o.kind == op_kind::scatter_store || o.kind == op_kind::topk_rows)
              U.unify(i, detail::reg_of(o.a), detail::reg_of(o.b));
            break;
          default: break;
        }
      }
      if (!U.changed) break;
    }
  };
  spread();
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    if (o.kind != op_kind::load_global && o.kind != op_kind::load_shared) continue;
    const int d = detail::reg_of(o.d);
    if (d < 0 || F.regs[d].known() || F.regs[d].cls != shape_class::full) continue;
    const dtype src = o.kind == op_kind::load_global && o.a.index < p.tile_refs.size() ? p.tensors[p.tile_refs[o.a.index].tensor].dt : p.regs[d].dt;
    const dtype narrow = size_bits(src) < size_bits(p.regs[d].dt) ? src : p.regs[d].dt;
    U.seed(i, d, blocked_frame(p.regs[d].rows, p.regs[d].cols, narrow, F.regs[d].threads));
    spread();
  }
  for (std::size_t r = 0; r < p.regs.size(); ++r) {
    auto& L = F.regs[r];
    if (L.known()) continue;
    const auto& g = p.regs[r];
    // An unconstrained tile: the accumulator layout of its unit if the shape allows, else blocked.
    const frame acc = g.scope == role_unit::warpgroup ? frame{frag_kind::wgmma_acc, g.rows, g.cols} : frame{frag_kind::mma_acc, g.rows, g.cols};
    if (L.cls == shape_class::full) L.f = frame_ok(acc, L.threads) ? acc : blocked_frame(g.rows, g.cols, g.dt, L.threads);
    U.changed = true;
    spread();
  }
  for (std::size_t r = 0; r < p.regs.size(); ++r) {
    auto& L = F.regs[r];
    // A vector whose frame is still unknown (never combined with a full tile): one value per row
    // (column) of a blocked frame over itself.
    if (L.f.kind == frag_kind::none && L.cls != shape_class::scalar) {
      const auto& g = p.regs[r];
      L.f = L.cls == shape_class::row_vec ? frame{frag_kind::blocked, g.rows, 1, 1, 1} : blocked_frame(1, g.cols, g.dt, L.threads);
    }
    if (!frame_ok(L.f, L.threads) && F.conflict_op < 0) {
      F.conflict_op = -2;
      F.conflict_a = static_cast<int>(r);
      F.conflict_why = "the tile does not split evenly over the threads of its unit in its layout";
      F.conflict_frame_a = L.f;
    }
    L.count = elements(L.f, L.cls, L.threads);
  }
  // 3. 16-bit conversions read only by stores of fragments are computed where they are read.
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    if (o.kind != op_kind::convert || o.d.kind != operand_kind::reg || o.a.kind != operand_kind::reg) continue;
    const int d = o.d.index, s = o.a.index;
    if (p.regs[s].dt != dtype::f32 || size_bits(p.regs[d].dt) != 16 || F.regs[d].cls != shape_class::full) continue;
    bool lazy = true;
    for (int j = i + 1; j < n && lazy; ++j) {
      const op& q = p.ops[j];
      if (q.role != o.role) continue;
      p.reg_writes(j, [&](const operand& x) { lazy = lazy && x.index != s && x.index != d; });
      p.reg_reads(j, [&](const operand& x) { lazy = lazy && !(x.index == d && q.kind != op_kind::stmatrix && q.kind != op_kind::store_global); });
    }
    for (int j = 0; j < i && lazy; ++j) p.reg_reads(j, [&](const operand& x) { lazy = lazy && x.index != d; });
    if (lazy) F.regs[d].lazy_src = s;
  }
  // 4. Scratch for reductions that cross warps (blocked rows wider than a warp) and cluster sums.
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    if (o.role >= p.roles.size()) continue;
    const auto& role = p.roles[o.role];
    int bytes = 0;
    if ((o.kind == op_kind::reduce_rows || o.kind == op_kind::arg_reduce_rows) && o.a.kind == operand_kind::reg) {
      const auto& L = F.regs[o.a.index];
      if (L.f.kind == frag_kind::blocked && L.f.tpr > 32) {
        const int slots = elements(L.f, shape_class::row_vec, L.threads);
        // per unit: one value (and index) per warp of the row group, per row slot, per row of a pass
        bytes = role.count * (L.threads / 32) * slots * 8;
        F.unit_barrier[o.role] = true;
      }
    } else if (o.kind == op_kind::cluster_reduce && o.d.kind == operand_kind::reg) {
      bytes = role.threads() * F.regs[o.d.index].count * 4;
      F.unit_barrier[o.role] = true;  // the unit syncs before its leader signals the peers
    }
    if (bytes > F.scratch_bytes[o.role]) F.scratch_bytes[o.role] = bytes;
  }
  // A warpgroup that reads a pipeline's stages with generic loads (ld.shared, ldmatrix): its warps sync before the
  // leader arrives on 'empty' (reads_stage_generically above), so a refill cannot overwrite what another warp still reads.
  for (std::size_t r = 0; r < p.roles.size(); ++r)
    if (role_reads_stages_generically(p, static_cast<int>(r))) F.unit_barrier[r] = true;
  for (std::size_t r = 0; r < capacity::roles; ++r) F.count_offset[r] = -1;
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    if (o.kind != op_kind::count_arrival || o.role >= p.roles.size() || F.count_offset[o.role] >= 0) continue;
    const auto& role = p.roles[o.role];
    if (role.unit != role_unit::warpgroup) continue;  // a warp broadcasts by shuffle
    F.count_offset[o.role] = (F.scratch_bytes[o.role] + 15) / 16 * 16;
    F.scratch_bytes[o.role] = F.count_offset[o.role] + (role.count * 4 + 15) / 16 * 16;
    F.unit_barrier[o.role] = true;
  }
  // 5. The lists of every r.topk state: a buffer of twice the largest chunk of the folds into it.
  for (int i = 0; i < n; ++i) {
    const op& o = p.ops[i];
    if (o.kind != op_kind::topk_rows || o.d.kind != operand_kind::reg || o.a.kind != operand_kind::reg) continue;
    if (o.d.index >= p.regs.size() || o.a.index >= p.regs.size()) continue;
    const int slack = 2 * topk_chunk_cols(F.regs[o.a.index]);
    if (slack > F.topk_slack[o.d.index]) F.topk_slack[o.d.index] = slack;
  }
  for (std::size_t r = 0; r < p.regs.size(); ++r) {
    const auto& g = p.regs[r];
    if (g.topk < 1 || g.role >= p.roles.size()) continue;
    F.topk_bytes[r] = p.roles[g.role].count * topk_unit_bytes(g.rows, g.topk, F.topk_slack[r]);
  }
  return F;
}

}  // namespace cake::plan
