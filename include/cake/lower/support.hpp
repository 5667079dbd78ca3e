#pragma once
// What lowering implements, per op and per operand form: the one list the analyzer checks
// (instruction.not-lowered) before lowering runs, so that a schedule that passes `cake check` never fails
// in the emitter. The op table (ir/ops.hpp, "lowered on" column) says which targets lower an op kind at
// all; the forms below are the cases inside a lowered kind that the emitter does not implement.
// Emitters keep their own guards as a second line of defence, with the same words.
#include "../ir/program.hpp"
#include "../plan/plan.hpp"

namespace cake::lower {

// On sm_80 a unit's leader makes the arrive of a release, a commit or an mbarrier arrive for the whole unit
// after a __syncwarp(), so that the reads and writes of the warp's other lanes are ordered before it
// (bar.warp.sync orders the memory accesses of the threads it synchronizes: PTX ISA, bar.warp.sync); the
// four warps of a warpgroup would need a named barrier of their own, which the plan does not derive for it.
constexpr const char* sm80_unit_arrive(const program& p, const op& o) {
  if (p.target != target_id::sm_80 || o.role >= p.roles.size() || p.roles[o.role].unit != role_unit::warpgroup) return nullptr;
  return "on sm_80 a unit's leader arrives for it after __syncwarp(): release, commit and arrive are lowered from warps(n) roles, not from warpgroups";
}

// nullptr when lowering implements op `id` of `p` on its target; otherwise why not, in the schedule's terms.
constexpr const char* unsupported(const program& p, const plan::kernel_plan& plan, int id) {
  const op& o = p.ops[id];
  if (!info(o.kind).lowered(p.target)) return "this op is not lowered for the kernel's target";
  // A region of several stages (a pipeline's, or copies(n)) names the stage it means: slot[region] or
  // region.stage(i). (Found by the builder fuzzer: the lowering refused it after a clean check.)
  // (tmem_alloc / tmem_dealloc take the whole region, every stage; a tile prefetch's region only gives its box.)
  const bool whole_region = o.kind == op_kind::tmem_alloc || o.kind == op_kind::tmem_dealloc || o.kind == op_kind::tma_prefetch_tile;
  for (const operand* x : {&o.d, &o.a, &o.b}) {
    if (whole_region || x->sel != stage_sel::none) continue;
    const bool smem = x->kind == operand_kind::smem && x->index < p.smem.size() && p.smem[x->index].stages > 1;
    const bool tmem = x->kind == operand_kind::tmem && x->index < p.tmem.size() && p.tmem[x->index].stages > 1;
    if (smem || tmem) return "it uses a region of several stages without naming one (slot[region] from an acquire / wait, or region.stage(i))";
  }
  auto reg_dt = [&](const operand& x) { return x.kind == operand_kind::reg && x.index < p.regs.size() ? p.regs[x.index].dt : dtype::f32; };
  // i64 is a storage dtype of global tensors (core/dtype.hpp): no register or smem tile holds it (so no TMA
  // box or cp.async copies it either: both need an smem tile of the tensor's dtype, checked at compile time).
  for (const operand* x : {&o.d, &o.a, &o.b}) {
    if (x->kind == operand_kind::reg && reg_dt(*x) == dtype::i64) return "register tiles are not i64 (it is a storage dtype of global tensors)";
    if (x->kind == operand_kind::smem && x->index < p.smem.size() && p.smem[x->index].dt == dtype::i64) return "smem tiles are not i64 (it is a storage dtype of global tensors)";
  }
  auto eight = [&](const operand& x) { return x.kind == operand_kind::reg && size_bits(reg_dt(x)) == 8; };
  auto frame = [&](const operand& x) { return x.kind == operand_kind::reg && x.index < p.regs.size() ? plan.frags.regs[x.index].f.kind : plan::frag_kind::none; };
  switch (o.kind) {
    case op_kind::fill:
    case op_kind::elementwise:
      if (o.d.part != part_axis::none) return "register compute writes whole tiles: a part (.rows/.cols) of a destination is not lowered";
      if (eight(o.d)) return "8-bit register tiles are not computed on: compute in f32 and convert";
      if (o.kind == op_kind::elementwise)
        for (int i = o.expr_first(); i < o.expr_first() + o.expr_count() && i < static_cast<int>(p.exprs.size()); ++i)
          if (p.exprs[i].fn == math_fn::tile && p.exprs[i].ref < p.regs.size() && size_bits(p.regs[p.exprs[i].ref].dt) == 8)
            return "an 8-bit register tile is read in an expression: convert it first";
      return nullptr;
    case op_kind::convert:
      if (o.d.part != part_axis::none || o.a.part != part_axis::none) return "convert moves whole tiles: a part (.rows/.cols) is not lowered";
      if (eight(o.d) && o.d.index < p.regs.size() && plan.frags.regs[o.d.index].count % 4)
        return "a conversion into an 8-bit register tile is lowered for layouts that hold whole groups of 4 elements per thread";
      if (eight(o.a) && o.a.index < p.regs.size() && plan.frags.regs[o.a.index].count % 2)
        return "a conversion from an 8-bit register tile is lowered for layouts that hold whole pairs of elements per thread";
      return nullptr;
    case op_kind::reduce_rows:
    case op_kind::arg_reduce_rows:
      if (o.d.part != part_axis::none || o.a.part != part_axis::none || o.b.part != part_axis::none)
        return "row reductions read and write whole tiles: a part (.rows/.cols) is not lowered";
      if (eight(o.a)) return "reductions of 8-bit register tiles are not lowered";
      for (int i = o.expr_first(); i < o.expr_first() + o.expr_count() && i < static_cast<int>(p.exprs.size()); ++i)
        if (p.exprs[i].fn == math_fn::tile && p.exprs[i].ref < p.regs.size() && size_bits(p.regs[p.exprs[i].ref].dt) == 8)
          return "an 8-bit register tile is read in a reduced expression: convert it first";
      if (size_bits(reg_dt(o.d)) != 32) return "a row reduction writes a 32-bit (f32 or i32) vector";
      if (o.kind == op_kind::arg_reduce_rows && reg_dt(o.b) != dtype::i32) return "an argmin/argmax index vector is i32";
      return nullptr;
    case op_kind::load_global:
    case op_kind::store_global:
    case op_kind::atomic_add: {
      const operand& g = o.kind == op_kind::load_global ? o.a : o.d;
      const operand& r = o.kind == op_kind::load_global ? o.d : o.a;
      if (g.kind != operand_kind::global || g.index >= p.tile_refs.size()) return nullptr;
      const dtype td = p.tensors[p.tile_refs[g.index].tensor].dt;
      if (size_bits(td) == 8 || eight(r)) return "register loads and stores of 8-bit data are not lowered";
      if (o.has(flag_accumulate) && (td == dtype::i64 || reg_dt(r) != dtype::f32)) return "load_add adds 16- and 32-bit tensors into f32 tiles";
      if (td == dtype::i64) {
        if (o.kind == op_kind::store_global) return "store_global into an i64 tensor is not lowered (atomic_add adds into it)";
        if (reg_dt(r) != dtype::f32) return "register loads and atomics of i64 tensors take f32 tiles";
        if (r.part != part_axis::none) return "loads and atomics of a part of a register tile are not lowered: use a tile of the part's shape";
        return nullptr;
      }
      if (o.kind == op_kind::atomic_add) {
        if (td != dtype::f32 && td != dtype::bf16) return "atomic_add is lowered into f32 and bf16 tensors";
        if (td == dtype::bf16 && p.target == target_id::sm_80) return "bf16 atomic_add needs sm_90a or sm_100a (red.add.bf16x2)";
        if (td == dtype::bf16 && !(reg_dt(r) == dtype::f32 || size_bits(reg_dt(r)) == 16)) return "atomic_add into a bf16 tensor takes an f32 or 16-bit tile";
      }
      if (r.part != part_axis::none) {
        if (o.kind != op_kind::store_global) return "loads and atomics of a part of a register tile are not lowered: use a tile of the part's shape";
        if (size_bits(td) != 16 || size_bits(reg_dt(r)) != 16) return "a store of a tile part is lowered for 16-bit tiles";
        if (r.part == part_axis::rows) return "a store of a row part of a register tile is not lowered";
        if (frame(r) == plan::frag_kind::mma_acc) return "a store of a part of an mma.sync tile is not lowered";
        // (a converted tile is stored from the layout of the tile it converts)
        const plan::frag_kind held = r.kind == operand_kind::reg && r.index < p.regs.size() && plan.frags.regs[r.index].lazy_src >= 0
                                         ? plan.frags.regs[plan.frags.regs[r.index].lazy_src].f.kind
                                         : frame(r);
        if (held != plan::frag_kind::wgmma_acc && held != plan::frag_kind::tmem_rows)
          return "a store of a tile part is lowered from wgmma accumulators and TMEM rows: store a whole tile";
      }
      return nullptr;
    }
    case op_kind::scatter_add:
      if (o.d.index < p.tile_refs.size() && p.tensors[p.tile_refs[o.d.index].tensor].dt != dtype::f32 &&
          p.tensors[p.tile_refs[o.d.index].tensor].dt != dtype::i64)
        return "scatter_add is lowered into f32 and i64 tensors";
      if (o.d.index < p.tile_refs.size() && p.tensors[p.tile_refs[o.d.index].tensor].dt == dtype::i64 && reg_dt(o.a) != dtype::f32)
        return "scatter_add into an i64 tensor takes an f32 tile";
      if (o.d.index < p.tile_refs.size() && p.tile_refs[o.d.index].rank != 2) return "scatter_add is lowered for 2-D tensors";
      if (eight(o.a)) return "scatter_add of an 8-bit tile is not lowered";
      if (o.d.index < p.tile_refs.size() && p.tile_refs[o.d.index].has_limit()) return "scatter_add with .limit(pos, end) is not lowered";
      return nullptr;
    case op_kind::scatter_store: {
      if (o.d.index >= p.tile_refs.size()) return nullptr;
      const dtype td = p.tensors[p.tile_refs[o.d.index].tensor].dt;
      if (td == dtype::i64 || size_bits(td) == 8 || p.tile_refs[o.d.index].rank != 2) return "scatter_store is lowered into 2-D tensors of 16- and 32-bit dtypes";
      if (eight(o.a)) return "scatter_store of an 8-bit tile is not lowered";
      if (o.a.part != part_axis::none) return "scatter_store of a part of a register tile is not lowered: use a tile of the part's shape";
      return nullptr;
    }
    case op_kind::fetch_add: {
      if (o.a.index >= p.tile_refs.size()) return nullptr;
      const dtype td = p.tensors[p.tile_refs[o.a.index].tensor].dt;
      if (td != dtype::i32 && td != dtype::f32) return "fetch_add is lowered for i32 and f32 counters";
      if (p.tile_refs[o.a.index].rank != 2) return "fetch_add is lowered for 2-D counter tensors";
      if (p.tile_refs[o.a.index].has_limit()) return "fetch_add with .limit(pos, end) is not lowered";
      if (size_bits(reg_dt(o.d)) != 32) return "fetch_add writes its old values into a 32-bit (i32 or f32) row vector";
      if (o.d.kind == operand_kind::reg && o.d.index < p.regs.size()) {
        const auto& L = plan.frags.regs[o.d.index];
        if (L.f.kind != plan::frag_kind::blocked || L.f.tpr > 32 || L.cls != plan::shape_class::row_vec)
          return "fetch_add is lowered for row vectors in the blocked layout whose rows stay inside one warp";
      }
      return nullptr;
    }
    case op_kind::scan_rows:
    case op_kind::reduce_cols: {
      const bool scan = o.kind == op_kind::scan_rows;
      if (o.d.part != part_axis::none || o.a.part != part_axis::none) return "scans and column reductions read and write whole tiles: a part (.rows/.cols) is not lowered";
      if (eight(o.a)) return "scans and column reductions of 8-bit register tiles are not lowered";
      if (size_bits(reg_dt(o.d)) != 32) return scan ? "row_scan writes a 32-bit (f32 or i32) tile" : "a column reduction writes a 32-bit (f32 or i32) vector";
      if (o.a.kind != operand_kind::reg || o.a.index >= p.regs.size() || o.d.kind != operand_kind::reg || o.d.index >= p.regs.size()) return nullptr;
      const auto& L = plan.frags.regs[o.a.index];
      if (scan && (L.f.kind != plan::frag_kind::blocked || L.f.tpr > 32 || (L.cls != plan::shape_class::full && L.cls != plan::shape_class::col_vec)))
        return "row_scan is lowered for tiles (and 1 x C rows) in the blocked layout (tiles loaded from memory) whose rows stay inside one warp";
      // (a destination that is not a 1 x C vector is representation.broadcast's finding)
      if (!scan && (L.f.kind != plan::frag_kind::blocked || L.threads != 32 || L.cls != plan::shape_class::full))
        return "column reductions are lowered for full tiles of a warp in the blocked layout (tiles loaded from memory), into a column vector";
      return nullptr;
    }
    case op_kind::load_shared:
    case op_kind::store_shared: {
      const operand& s = o.kind == op_kind::load_shared ? o.a : o.d;
      const operand& x = o.kind == op_kind::load_shared ? o.d : o.a;
      if (eight(x) && s.kind == operand_kind::smem && s.index < p.smem.size() && p.smem[s.index].dt != reg_dt(x))
        return "an 8-bit register tile is loaded from and stored to smem of its own dtype only (convert it in registers)";
      return nullptr;
    }
    case op_kind::wgmma:
      if (reg_dt(o.d) != dtype::f32) return "wgmma is lowered with f32 accumulators";
      if (o.d.part == part_axis::rows) return "wgmma into a row part of an accumulator is not lowered";
      if (o.a.kind == operand_kind::reg) {
        if (!is_16bit_float(reg_dt(o.a)) || o.a.part != part_axis::none || frame(o.a) != plan::frag_kind::wgmma_acc)
          return "wgmma with A from registers is lowered for whole 16-bit tiles in the accumulator layout";
      } else if (o.a.kind == operand_kind::smem && p.smem[o.a.index].swz == swizzle::none) {
        return "an MMA operand from smem must be swizzled, its rows one swizzle span wide";
      }
      if (o.b.kind == operand_kind::smem && p.smem[o.b.index].swz == swizzle::none) return "an MMA operand from smem must be swizzled, its rows one swizzle span wide";
      if (o.b.kind == operand_kind::smem && plan::operand_major(plan.dims, id, 1) == major::mn && plan::shape_of(p, o.b).cols != plan::shape_of(p, o.d).cols)
        return "an MN-major wgmma B operand must be exactly N columns wide";
      return nullptr;
    case op_kind::mma_sync:
      if (o.b.kind != operand_kind::smem) return "mma_sync is lowered with B from smem";
      if (!is_16bit_float(plan::dtype_of(p, o.a)) || reg_dt(o.d) != dtype::f32) return "mma_sync is lowered for bf16/f16 inputs with f32 accumulators";
      if (o.d.part != part_axis::none) return "mma_sync into part of an accumulator is not lowered";
      if (o.a.kind == operand_kind::smem && plan::operand_major(plan.dims, id, 0) != major::k) return "mma_sync is lowered for a K-major A operand from smem";
      if (o.a.kind == operand_kind::reg && (o.a.part != part_axis::none || frame(o.a) != plan::frag_kind::mma_acc))
        return "mma_sync with A from registers is lowered for whole 16-bit tiles in the mma.sync accumulator layout";
      if ((plan::shape_of(p, o.d).cols / 8) % 2) return "mma_sync warp tiles need an even number of 8-column blocks";
      return nullptr;
    case op_kind::tcgen05_mma:
      if (o.a.kind != operand_kind::smem) return "tcgen05.mma with A from tensor memory is not lowered";
      if (!is_16bit_float(plan::dtype_of(p, o.a))) return "tcgen05.mma is lowered for kind::f16 (bf16/f16 inputs)";
      if (o.d.part == part_axis::rows) return "TMEM operands are split by columns only (lanes belong to warps)";
      return nullptr;
    case op_kind::tma_load:
    case op_kind::tma_store:
    case op_kind::tma_prefetch_tile: {
      const operand& g = plan::tma_global_side(o);
      if (g.kind != operand_kind::global || g.index >= p.tile_refs.size()) return nullptr;
      const int rank = p.tile_refs[g.index].rank;
      if (rank < 2 || rank > 5) return "TMA is lowered for tensors of rank 2 to 5";
      if (o.has(flag_multicast) && rank > 3) return "a multicast TMA load is lowered for tensors of rank 2 and 3";
      return nullptr;
    }
    case op_kind::stmatrix: {
      if (frame(o.a) != plan::frag_kind::wgmma_acc && !(o.a.kind == operand_kind::reg && plan.frags.regs[o.a.index].lazy_src >= 0 &&
                                                       plan.frags.regs[plan.frags.regs[o.a.index].lazy_src].f.kind == plan::frag_kind::wgmma_acc))
        return "stmatrix is lowered from tiles in the wgmma accumulator layout";
      const auto ss = plan::shape_of(p, o.d), rs = plan::shape_of(p, o.a);
      if (ss.rows != rs.rows || ss.cols != rs.cols) return "stmatrix moves equal shapes: the smem part and the register part differ";
      if (rs.rows % 64 || rs.cols % 16) return "stmatrix parts are multiples of 64 rows x 16 columns";
      if (o.a.part == part_axis::rows) return "stmatrix from a row part of an accumulator is not lowered";
      return nullptr;
    }
    case op_kind::tmem_store:
      if (o.a.kind == operand_kind::reg && (p.regs[o.a.index].scope != role_unit::warpgroup || plan::shape_of(p, o.a).rows != 128 || reg_dt(o.a) != dtype::f32))
        return "tmem_store is lowered from a 128-row f32 tile held by one warpgroup";
      return nullptr;
    case op_kind::ldmatrix: {
      // (a tile held per warpgroup has the mma.sync layout of a warp's tile, which does not split over its
      // 128 threads: found by the builder fuzzer, refused by the lowering after a clean check)
      if (frame(o.d) != plan::frag_kind::mma_acc || size_bits(reg_dt(o.d)) != 16 || o.d.part != part_axis::none ||
          (o.d.kind == operand_kind::reg && o.d.index < p.regs.size() && p.regs[o.d.index].scope != role_unit::warp))
        return "ldmatrix is lowered into whole 16-bit tiles in the mma.sync layout (a warps(n) role)";
      const auto rs = plan::shape_of(p, o.d), ss = plan::shape_of(p, o.a);
      if (rs.rows != ss.rows || rs.cols != ss.cols || rs.rows % 16 || rs.cols % 16) return "ldmatrix moves equal shapes of multiples of 16 x 16";
      return nullptr;
    }
    case op_kind::tmem_load:
      if (o.d.kind == operand_kind::reg && (p.regs[o.d.index].scope != role_unit::warpgroup || plan::shape_of(p, o.d).rows != 128))
        return "tmem_load is lowered into a 128-row tile held by one warpgroup";
      // tcgen05.ld writes one 32-bit register per column: a 16-bit tile holds two columns per register (the
      // load would write past it). Found while reducing a builder-fuzzer case; NVRTC accepts the overflow.
      if (o.d.kind == operand_kind::reg && reg_dt(o.d) != dtype::f32)
        return "tmem_load is lowered into f32 tiles (TMEM cells are f32): load into an f32 tile, then convert";
      return nullptr;
    case op_kind::pipeline_release:
      if (const char* why = sm80_unit_arrive(p, o)) return why;
      if (o.has(flag_release_later)) {
        // The released stage is computed from the slot: its wait must be in the same loop body and be the
        // only op there that moves through this pipeline.
        const int w = o.a.slot_op;
        if (w >= static_cast<int>(p.ops.size()) || p.ops[w].parent != o.parent) return "a deferred release must be in the loop body of its slot's wait";
        int movers = 0;
        for (std::size_t i = 0; i < p.ops.size(); ++i) {
          const op& q = p.ops[i];
          if (q.role == o.role && (q.kind == op_kind::pipeline_wait || q.kind == op_kind::pipeline_acquire) && q.d.index == o.d.index &&
              (q.parent == o.parent || (o.parent >= 0 && p.inside(static_cast<int>(i), o.parent))))
            ++movers;
        }
        if (movers != 1) return "a deferred release needs its slot's wait to be the only wait on the pipeline inside the loop";
      }
      return nullptr;
    case op_kind::pipeline_commit:
      if (plan::cp_async_fill_of_acquire(p, o.a.slot_op) >= 0)
        return "r.commit of a stage that cp.async fills is not lowered: its copies arrive on 'full' themselves (cp.async.mbarrier.arrive.noinc after the last one)";
      if (const char* why = sm80_unit_arrive(p, o)) return why;
      return nullptr;
    case op_kind::mbarrier_arrive:
      if (p.target == target_id::sm_80 && o.has(flag_remote)) return "a remote arrive (.remote()) needs a cluster, which sm_80 does not have: arrive on this CTA's barrier";
      if (const char* why = sm80_unit_arrive(p, o)) return why;
      return nullptr;
    case op_kind::pipeline_flush: return sm80_unit_arrive(p, o);
    case op_kind::cp_async: {
      // Copies into an acquired stage complete on its 'full' barrier: every thread arrives after the last of
      // them (plan::cp_async_fill_of_acquire), which must run exactly once wherever the acquire does.
      const int acq = o.d.sel == stage_sel::slot ? o.d.slot_op : -1;
      if (plan::cp_async_fill_of_acquire(p, acq) >= 0 && (p.ops[acq].role != o.role || p.ops[acq].parent != o.parent))
        return "a cp.async into an acquired stage must be in the body of its acquire (the same role, loop or when): every thread arrives on the stage's 'full' barrier after the last copy into it";
      if (o.a.kind == operand_kind::global && o.a.index < p.tile_refs.size() && p.tile_refs[o.a.index].rank < 2) return "cp_async is lowered for tensors of rank 2 or more";
      return nullptr;
    }
    case op_kind::pipeline_held:
      // The held stage is the one before the pipeline's position; an alternating walk moves that position
      // past the stages of the points a unit skips.
      for (int q = o.parent; q >= 0; q = p.ops[q].parent)
        if (p.ops[q].kind == op_kind::tile_loop && p.ops[q].has(flag_alternate)) return "r.held(pipeline) is not lowered inside an alternating walk";
      return nullptr;
    case op_kind::pipeline_acquire:
      if (const int tx = plan::tx_bytes_of_acquire(p, id); tx > 0) {
        if (p.target == target_id::sm_80)
          return "a stage that TMA loads fill completes on transaction bytes (mbarrier expect_tx), which sm_80 does not have: fill the stage with cp.async (r.cp_async(slot[region], ...)) or retarget the kernel";
        if (plan::cp_async_fill_of_acquire(p, id) >= 0)
          return "a stage is filled by TMA or by cp.async, not both: its 'full' barrier counts transaction bytes or the copying threads' arrivals";
      }
      [[fallthrough]];
    case op_kind::pipeline_wait:
      // A unit that skips the points of an alternating walk must count the stages they consume.
      for (int q = o.parent; q >= 0; q = p.ops[q].parent)
        if (p.ops[q].kind == op_kind::tile_loop && p.ops[q].has(flag_alternate)) {
          const bool direct = o.parent == q, in_loop = !direct && p.has_bound(o.parent) && p.ops[o.parent].parent == q;
          if (!direct && !in_loop) return "a pipeline op of an alternating walk must sit at the walk's level or in a dynamic loop directly inside it";
        }
      return nullptr;
    case op_kind::topk_rows: {
      if (o.d.part != part_axis::none || o.a.part != part_axis::none || o.b.part != part_axis::none)
        return "a row top-k reads whole tiles: a part (.rows/.cols) is not lowered";
      if (eight(o.a)) return "a row top-k of an 8-bit register tile is not lowered";
      for (int i = o.expr_first(); i < o.expr_first() + o.expr_count() && i < static_cast<int>(p.exprs.size()); ++i)
        if (p.exprs[i].fn == math_fn::tile && p.exprs[i].ref < p.regs.size() && size_bits(p.regs[p.exprs[i].ref].dt) == 8)
          return "an 8-bit register tile is read in a row top-k's expression: convert it first";
      if (o.a.kind == operand_kind::reg && o.a.index < p.regs.size()) {
        // The emitter's conditions, all of them: a source of one row (1 x C, a column vector's shape class)
        // has lanes and chunks but no full-tile indexing (found by the builder fuzzer: refused after a
        // clean check).
        const auto& L = plan.frags.regs[o.a.index];
        if (L.cls != plan::shape_class::full)
          return "a row top-k folds a full tile (rows x columns): a 1 x C row or another vector as the source is not lowered; fold a tile of the state's rows";
        if (plan::topk_lanes(L) == 0 || plan::topk_chunk_cols(L) == 0)
          return "a row top-k is lowered for sources whose rows are each held inside one warp (MMA fragments, or blocked tiles of at most 32 threads per row)";
        // (a state of other rows than the source is representation.topk's finding)
        if (o.d.kind == operand_kind::reg && o.d.index < p.regs.size() && p.regs[o.d.index].rows == p.regs[o.a.index].rows) {
          const int state_lanes = plan::topk_lanes(plan.frags.regs[o.d.index]);
          if (plan::topk_lanes(L) != (state_lanes < 1 ? 1 : state_lanes)) return "a row top-k's source and state hold their rows in different lane groups";
        }
      }
      return nullptr;
    }
    case op_kind::topk_store: {
      for (const operand* g : {&o.d, &o.b}) {
        if (g->kind != operand_kind::global || g->index >= p.tile_refs.size()) continue;
        if (p.tile_refs[g->index].rank < 2) return "topk_store writes rows x k tiles: the tensors need a row and a column dim";
      }
      if (o.d.kind == operand_kind::global && o.d.index < p.tile_refs.size() && p.tensors[p.tile_refs[o.d.index].tensor].dt != dtype::f32)
        return "topk_store writes its values into an f32 tensor";
      if (o.b.kind == operand_kind::global && o.b.index < p.tile_refs.size() && p.tensors[p.tile_refs[o.b.index].tensor].dt != dtype::i32)
        return "topk_store writes its indices into an i32 tensor";
      return nullptr;
    }
    case op_kind::cluster_reduce:
      if (reg_dt(o.d) != dtype::f32)
        return o.imm[0] == static_cast<int>(reduce_kind::max) ? "cluster_max is lowered for f32 tiles" : "cluster_sum is lowered for f32 tiles";
      if (o.d.part != part_axis::none)
        return o.imm[0] == static_cast<int>(reduce_kind::max) ? "cluster_max reduces whole tiles: a part is not lowered"
                                                              : "cluster_sum reduces whole tiles: a part is not lowered";
      if (o.has(flag_scatter)) {
        // A column block is a run of each thread's registers only in the wgmma accumulator layout (8-column
        // groups of 4 registers per thread, hardware-facts §3).
        if (frame(o.d) != plan::frag_kind::wgmma_acc) return "cluster_sum_scatter is lowered for wgmma accumulators (a column block is a run of each thread's registers there)";
        if (o.d.index < p.regs.size() && p.regs[o.d.index].cols % (8 * p.launch.cluster_size()) != 0)
          return "cluster_sum_scatter splits the tile into whole 8-column groups: its columns must be a multiple of 8 x the cluster size";
      }
      return nullptr;
    default: return nullptr;
  }
}

}  // namespace cake::lower
