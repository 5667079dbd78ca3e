#pragma once
// Emission of individual ops. Each op becomes a short block annotated with its op id and schedule
// line. Ops whose issuer is one thread per unit are guarded by `leader`; collective ops run on every
// thread of the unit.
#include <string>
#include <utility>
#include <vector>

#include "../core/dtype.hpp"
#include "emit_topk.hpp"
#include "ptx_text.hpp"

namespace cake::lower {

class op_emitter : public topk_emitter {
 public:
  using topk_emitter::topk_emitter;

 protected:
  static ptx::mma_type mma_type_of(dtype d) {
    switch (d) {
      case dtype::f16: return ptx::mma_type::f16;
      case dtype::bf16: return ptx::mma_type::bf16;
      case dtype::tf32: return ptx::mma_type::tf32;
      case dtype::e4m3: return ptx::mma_type::e4m3;
      case dtype::e5m2: return ptx::mma_type::e5m2;
      case dtype::i8: return ptx::mma_type::s8;
      case dtype::i32: return ptx::mma_type::s32;
      default: return ptx::mma_type::f32;
    }
  }
  // scale-d of k step `kk`: 0 where the MMA overwrites the accumulator.
  std::string scale_d(const op& o) const {
    if (o.has(flag_overwrite)) return "(kk > 0 ? 1u : 0u)";
    if (o.has(flag_overwrite_first)) {
      // The first iteration of the loop is its lower bound (a split-K loop starts at its slice).
      const loop_bound* b = p_.bound_of(o.imm[2]);
      const std::string first = b ? expr(b->lo) : "0";
      return "((" + loop_var(o.imm[2]) + " != " + first + " || kk > 0) ? 1u : 0u)";
    }
    return "1u";
  }
  // Descriptor geometry of a swizzled MMA operand (K-major: rows are M or N, cols are K).
  struct mma_operand_geom {
    int row_bytes = 0, sbo = 0, k_step_bytes = 0, block_bytes = 0;
    bool mn_major = false;
    int swizzle_code90 = 0, swizzle_code100 = 0;
  };
  // which: 0 = A, 1 = B (major-ness is derived from the dim the MMA contracts, plan/dims.hpp).
  mma_operand_geom geom(int id, const operand& x, int instr_k, int which) {
    mma_operand_geom g;
    const auto& r = p_.smem[x.index];
    g.row_bytes = r.inner_bytes();
    g.mn_major = plan::operand_major(plan_.dims, id, which) == major::mn;
    if (r.swz == swizzle::none || g.row_bytes != swizzle_bytes(r.swz))
      fail(id, "an MMA operand from smem must be swizzled with its rows exactly one swizzle span wide (region " + std::string(r.nm.view()) + ": " +
                   std::to_string(g.row_bytes) + " B rows, swizzle " + to_string(r.swz) + ")");
    g.sbo = 8 * g.row_bytes;
    const int eb = size_bits(r.dt) / 8;
    g.k_step_bytes = g.mn_major ? instr_k * g.row_bytes : instr_k * eb;
    g.block_bytes = 64 * g.row_bytes;  // next 64 rows (K-major)
    g.swizzle_code90 = r.swz == swizzle::b128 ? 1 : r.swz == swizzle::b64 ? 2 : 3;
    g.swizzle_code100 = r.swz == swizzle::b128 ? 2 : r.swz == swizzle::b64 ? 4 : 6;
    return g;
  }

  // One warpgroup MMA over the operands' K extent: a wgmma per instruction K step and per 64-row block
  // of the accumulator. A from smem (descriptor) or from registers (a 16-bit tile in the accumulator
  // fragment layout, e.g. P = convert(S): its k-step kk is words 4kk..4kk+3 of each 64-row block,
  // hardware-facts §3 Fragments). The accumulator may be a column part (acc.cols(i, n)): its registers
  // are contiguous per 64-row block.
  void emit_wgmma(int id, const op& o) {
    const int acc = o.d.index;
    const auto& ag = p_.regs[acc];
    const plan::extent2 as = plan::shape_of(p_, o.d);
    const bool a_regs = o.a.kind == operand_kind::reg;
    const dtype dt = plan::dtype_of(p_, o.a);
    const int instr_k = info(dt).mma_k;
    const auto gb = geom(id, o.b, instr_k, 1);
    const auto ga = a_regs ? mma_operand_geom{} : geom(id, o.a, instr_k, 0);
    const plan::extent2 a_shape = plan::shape_of(p_, o.a), b_shape = plan::shape_of(p_, o.b);
    const int k_extent = a_regs ? a_shape.cols : ga.mn_major ? a_shape.rows : a_shape.cols;
    const int n = as.cols;
    if (gb.mn_major && b_shape.cols != n) return fail(id, "an MN-major wgmma B operand must be exactly N columns wide");
    if (o.d.part == part_axis::rows) return fail(id, "wgmma into a row part of an accumulator is not lowered");
    if (a_regs && (!is_16bit_float(dt) || o.a.part != part_axis::none || lay(o.a.index).f.kind != plan::frag_kind::wgmma_acc))
      return fail(id, "wgmma with A from registers is lowered for whole 16-bit tiles in the accumulator layout");
    const int blocks = as.rows / 64;
    const int full_n = ag.cols;  // registers per 64-row block of the whole accumulator: full_n / 2
    if (ag.dt != dtype::f32) return fail(id, "wgmma is lowered with f32 accumulators only");
    const std::string part_off = o.d.part == part_axis::cols ? " + " + part_index(o.d) + " * " + std::to_string(n / 2) : "";
    w_.open("");
    if (!a_regs) w_.line("const u32 a_addr = " + smem_addr(o.a, id) + ";");
    w_.line("const u32 b_addr = " + smem_addr(o.b, id) + ";");
    for (int j = 0; j < blocks; ++j) {
      const std::string acc_name = reg_name(acc) + "_m" + std::to_string(j);
      w_.line("float (&" + acc_name + ")[" + std::to_string(n / 2) + "] = *reinterpret_cast<float(*)[" + std::to_string(n / 2) + "]>(" + reg_name(acc) + " + " +
              std::to_string(j * full_n / 2) + part_off + ");");
      if (!a_regs)
        w_.line("const u64 da" + std::to_string(j) + " = cake_dev::make_wgmma_desc(a_addr + " + std::to_string(j * ga.block_bytes) + "u, 16u, " +
                std::to_string(ga.sbo) + "u, " + std::to_string(ga.swizzle_code90) + "u);");
    }
    w_.line("const u64 db = cake_dev::make_wgmma_desc(b_addr, 16u, " + std::to_string(gb.sbo) + "u, " + std::to_string(gb.swizzle_code90) + "u);");
    w_.line("#pragma unroll");
    w_.open("for (int kk = 0; kk < " + std::to_string(k_extent / instr_k) + "; ++kk)");
    w_.line("const u32 sd = " + scale_d(o) + ";");
    for (int j = 0; j < blocks; ++j) {
      const std::string db = "db + (u64)((kk * " + std::to_string(gb.k_step_bytes) + ") >> 4)";
      ptx::asm_text t;
      if (a_regs) {
        const std::string base = std::to_string(j * a_shape.cols / 2) + " + 8 * kk";
        w_.line("const u32 afrag" + std::to_string(j) + "[4] = {" + packed_pair(o.a.index, base) + ", " + packed_pair(o.a.index, base + " + 2") + ", " +
                packed_pair(o.a.index, base + " + 4") + ", " + packed_pair(o.a.index, base + " + 6") + "};");
        t = ptx::wgmma_rs(64, n, instr_k, mma_type_of(dt), mma_type_of(p_.smem[o.b.index].dt), ptx::mma_type::f32, gb.mn_major,
                          reg_name(acc) + "_m" + std::to_string(j), "afrag" + std::to_string(j), db, "sd");
      } else {
        t = ptx::wgmma_ss(64, n, instr_k, mma_type_of(dt), mma_type_of(p_.smem[o.b.index].dt), ptx::mma_type::f32, ga.mn_major, gb.mn_major,
                          reg_name(acc) + "_m" + std::to_string(j), "da" + std::to_string(j) + " + (u64)((kk * " + std::to_string(ga.k_step_bytes) + ") >> 4)", db,
                          "sd");
      }
      if (!t.ok()) return fail(id, t.error);
      w_.raw(indent_block(t.text));
    }
    w_.close();
    w_.close();
  }
  std::string indent_block(const std::string& text) const {
    std::string out, pad(static_cast<std::size_t>(2 * w_depth()), ' ');
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      out += pad + text.substr(start, end - start) + "\n";
      start = end + 1;
    }
    return out;
  }
  int w_depth() const { return const_cast<writer&>(w_).depth(); }

  void emit_fence_accumulators() {
    for (std::size_t r = 0; r < p_.regs.size(); ++r) {
      const auto& g = p_.regs[r];
      if (g.role != role_ || !g.accumulator || lay(static_cast<int>(r)).f.kind != plan::frag_kind::wgmma_acc) continue;
      w_.line("#pragma unroll");
      w_.line("for (int e = 0; e < " + std::to_string(elements_per_thread(static_cast<int>(r))) + "; ++e) cake_dev::wgmma_fence_operand(" +
              reg_name(static_cast<int>(r)) + "[e]);");
    }
  }

  // Warp MMA (m16n8k16) over the operands' K extent. A from smem (ldmatrix) or from registers (a
  // 16-bit tile in the mma.sync accumulator layout: its n8 blocks 2kk, 2kk+1 are the A fragment of
  // k-step kk, hardware-facts §5); B from smem, K-major (ldmatrix) or MN-major (ldmatrix.trans).
  void emit_mma_sync(int id, const op& o) {
    const plan::extent2 as = plan::shape_of(p_, o.d);
    const bool a_regs = o.a.kind == operand_kind::reg;
    if (o.b.kind != operand_kind::smem) return fail(id, "mma_sync is lowered with B from smem");
    const dtype dt = plan::dtype_of(p_, o.a);
    if (!is_16bit_float(dt) || p_.regs[o.d.index].dt != dtype::f32) return fail(id, "mma_sync is lowered for bf16/f16 inputs with f32 accumulators");
    if (o.d.part != part_axis::none) return fail(id, "mma_sync into part of an accumulator is not lowered");
    const bool b_mn = plan::operand_major(plan_.dims, id, 1) == major::mn;
    if (!a_regs && plan::operand_major(plan_.dims, id, 0) != major::k) return fail(id, "mma_sync is lowered for a K-major A operand from smem");
    if (a_regs && (o.a.part != part_axis::none || lay(o.a.index).f.kind != plan::frag_kind::mma_acc))
      return fail(id, "mma_sync with A from registers is lowered for whole 16-bit tiles in the mma.sync accumulator layout");
    const auto& rb = p_.smem[o.b.index];
    const plan::extent2 a_shape = plan::shape_of(p_, o.a);
    const int mb = as.rows / 16, nb = as.cols / 8, ks = a_shape.cols / 16;
    if (nb % 2) return fail(id, "mma_sync warp tiles need an even number of 8-column blocks");
    const std::string acc = reg_name(o.d.index);
    const std::string fn = dt == dtype::bf16 ? "cake_dev::mma_m16n8k16_bf16_f32" : "cake_dev::mma_m16n8k16_f16_f32";
    w_.open("");
    if (!a_regs) w_.line("const u32 a_base = " + smem_addr(o.a, id) + ";");
    w_.line("const u32 b_base = " + smem_addr(o.b, id) + ";");
    w_.line("float (&acc4)[" + std::to_string(mb * nb) + "][4] = *reinterpret_cast<float(*)[" + std::to_string(mb * nb) + "][4]>(" + acc + ");");
    if (o.has(flag_overwrite) || o.has(flag_overwrite_first)) {
      // mma.sync has no scale-d: D = A*B is an accumulation into zeros (on the loop's first trip).
      const loop_bound* b = o.has(flag_overwrite_first) ? p_.bound_of(o.imm[2]) : nullptr;
      const std::string first = o.has(flag_overwrite) ? "true" : loop_var(o.imm[2]) + " == " + (b ? expr(b->lo) : std::string("0"));
      w_.line("if (" + first + ") {");
      w_.line("#pragma unroll");
      w_.line("  for (int e = 0; e < " + std::to_string(mb * nb * 4) + "; ++e) " + acc + "[e] = 0.0f;");
      w_.line("}");
    }
    w_.line("#pragma unroll");
    w_.open("for (int kk = 0; kk < " + std::to_string(ks) + "; ++kk)");
    w_.line("u32 af[" + std::to_string(mb) + "][4];");
    w_.line("u32 bf[" + std::to_string(nb) + "][2];");
    w_.line("#pragma unroll");
    w_.open("for (int mi = 0; mi < " + std::to_string(mb) + "; ++mi)");
    if (a_regs) {
      const std::string blk = "(mi * " + std::to_string(a_shape.cols / 8) + " + 2 * kk) * 4";
      w_.line("af[mi][0] = " + packed_pair(o.a.index, blk) + "; af[mi][1] = " + packed_pair(o.a.index, blk + " + 2") + ";");
      w_.line("af[mi][2] = " + packed_pair(o.a.index, blk + " + 4") + "; af[mi][3] = " + packed_pair(o.a.index, blk + " + 6") + ";");
    } else {
      const auto& ra = p_.smem[o.a.index];
      w_.line("const u32 row = mi * 16 + ((lane / 8) % 2) * 8 + lane % 8, chunk = kk * 2 + lane / 16;");
      w_.line("cake_dev::ldmatrix_x4(af[mi], a_base + " + swizzled(ra.swz, "row * " + std::to_string(ra.inner_bytes()) + "u + chunk * 16u") + ");");
    }
    w_.close();
    w_.line("#pragma unroll");
    w_.open("for (int nj = 0; nj < " + std::to_string(nb) + "; nj += 2)");
    if (b_mn) {
      // B stored [K x N]: the transposing load gives each thread (k = 2 (lane % 4) + {0, 1}, n = lane / 4).
      w_.line("const u32 row = kk * 16 + ((lane / 8) % 2) * 8 + lane % 8, chunk = nj + lane / 16;");
      w_.line("u32 t[4];");
      w_.line("cake_dev::ldmatrix_x4_trans(t, b_base + " + swizzled(rb.swz, "row * " + std::to_string(rb.inner_bytes()) + "u + chunk * 16u") + ");");
    } else {
      w_.line("const u32 row = nj * 8 + (lane / 16) * 8 + lane % 8, chunk = kk * 2 + (lane / 8) % 2;");
      w_.line("u32 t[4];");
      w_.line("cake_dev::ldmatrix_x4(t, b_base + " + swizzled(rb.swz, "row * " + std::to_string(rb.inner_bytes()) + "u + chunk * 16u") + ");");
    }
    w_.line("bf[nj][0] = t[0]; bf[nj][1] = t[1]; bf[nj + 1][0] = t[2]; bf[nj + 1][1] = t[3];");
    w_.close();
    w_.line("#pragma unroll");
    w_.line("for (int mi = 0; mi < " + std::to_string(mb) + "; ++mi)");
    w_.line("#pragma unroll");
    w_.line("  for (int nj = 0; nj < " + std::to_string(nb) + "; ++nj) " + fn + "(acc4[mi * " + std::to_string(nb) + " + nj], af[mi], bf[nj], acc4[mi * " +
            std::to_string(nb) + " + nj]);");
    w_.close();
    w_.close();
  }

  void emit_tcgen05_mma(int id, const op& o) {
    if (o.a.kind != operand_kind::smem) return fail(id, "tcgen05.mma with A from tensor memory is not lowered yet");
    const dtype dt = p_.smem[o.a.index].dt;
    if (!is_16bit_float(dt)) return fail(id, "tcgen05.mma is lowered for kind::f16 (bf16/f16 inputs) only");
    const int instr_k = info(dt).mma_k;
    const auto ga = geom(id, o.a, instr_k, 0), gb = geom(id, o.b, instr_k, 1);
    const plan::extent2 a_shape = plan::shape_of(p_, o.a), b_shape = plan::shape_of(p_, o.b);
    const int m = ga.mn_major ? a_shape.cols : a_shape.rows;
    const int n = gb.mn_major ? b_shape.cols : b_shape.rows;
    const int k_extent = ga.mn_major ? a_shape.rows : a_shape.cols;
    const unsigned ab = dt == dtype::bf16 ? 1u : 0u;
    const unsigned idesc = (1u << 4) | (ab << 7) | (ab << 10) | (unsigned(ga.mn_major) << 15) | (unsigned(gb.mn_major) << 16) |
                           ((unsigned(n) >> 3) << 17) | ((unsigned(m) >> 4) << 24);
    w_.open("if (leader)");
    w_.line("const u32 d_tmem = " + tmem_base() + " + " + tmem_column(o.d, id) + ";");
    w_.line("const u64 da = cake_dev::make_umma_smem_desc(" + smem_addr(o.a, id) + ", 16u, " + std::to_string(ga.sbo) + "u, " +
            std::to_string(ga.swizzle_code100) + "u);");
    w_.line("const u64 db = cake_dev::make_umma_smem_desc(" + smem_addr(o.b, id) + ", 16u, " + std::to_string(gb.sbo) + "u, " +
            std::to_string(gb.swizzle_code100) + "u);");
    w_.line("#pragma unroll");
    w_.line("for (int kk = 0; kk < " + std::to_string(k_extent / instr_k) + "; ++kk)");
    w_.line("  cake_dev::tcgen05_mma_f16_cg1(d_tmem, da + (u64)((kk * " + std::to_string(ga.k_step_bytes) + ") >> 4), db + (u64)((kk * " +
            std::to_string(gb.k_step_bytes) + ") >> 4), " + hex(idesc) + "u, " + scale_d(o) + ");");
    w_.close();
  }
  // Column offset (C++ text) of a TMEM operand's stage and part.
  std::string tmem_column(const operand& o, int id) {
    const auto& t = p_.tmem[o.index];
    std::string c = std::to_string(plan_.tmem.column_of[o.index]) + "u";
    if (t.stages > 1) c += " + " + stage_index(o, t.stages, id) + " * " + std::to_string(t.columns) + "u";
    if (o.part == part_axis::cols) c += " + " + part_index(o) + " * " + std::to_string(t.columns / o.parts) + "u";
    if (o.part == part_axis::rows) fail(id, "TMEM operands are split by columns only (lanes belong to warps)");
    return "(" + c + ")";
  }

  // ---- memory ---------------------------------------------------------------------------------------
  // Element coordinates of a global tile along the tensor's dims, innermost first (TMA order).
  // The tile's columns run along the last dim, its rows along the row dim (default: the second-to-last).
  static int row_pos_of(const global_tile_ref& ref) { return ref.row_pos != no_index ? ref.row_pos : ref.rank - 2; }
  std::vector<std::string> tile_coords(const operand& g, const plan::extent2& box_units) const {
    const auto& ref = p_.tile_refs[g.index];
    std::vector<std::string> c;
    for (int i = ref.rank - 1; i >= 0; --i) {
      long long unit = 1;
      if (i == ref.rank - 1) unit = box_units.cols;
      else if (i == row_pos_of(ref)) unit = box_units.rows;
      if (ref.element_coord(i)) unit = 1;  // .elements_at(i): already an element index
      c.push_back(expr(ref.coords[i]) + " * " + std::to_string(unit) + "LL");
    }
    return c;
  }
  // Index (in tile_coords' innermost-first order) of the row coordinate.
  static int row_coord_index(const global_tile_ref& ref) { return ref.rank - 1 - row_pos_of(ref); }

  void emit_tma(int id, const op& o) {
    const bool load = o.kind == op_kind::tma_load;
    const bool prefetch = o.kind == op_kind::tma_prefetch_tile;
    const operand& s = plan::tma_smem_side(o);
    const operand& g = plan::tma_global_side(o);
    const int desc = plan_.tma.of_op[id];
    if (desc < 0) return fail(id, "TMA op without a descriptor (the smem side must be an smem tile, the other a tensor tile)");
    const auto& ref = p_.tile_refs[g.index];
    if (ref.rank < 2 || ref.rank > 5) return fail(id, "TMA is lowered for tensors of rank 2 to 5");
    if (o.has(flag_multicast) && ref.rank > 3) return fail(id, "a multicast TMA load is lowered for tensors of rank 2 and 3");
    const plan::extent2 box = plan::shape_of(p_, s);
    auto c = tile_coords(g, box);
    const int split = plan_.tma.split_of_op[id];
    if (prefetch) {  // the load's box into L2: no smem address, no barrier
      std::string coords;
      for (const auto& x : c) coords += ", (int)(" + x + ")";
      w_.line("if (leader) cake_dev::tma_prefetch_l2_" + std::to_string(ref.rank) + "d(&args.tmap[" + std::to_string(desc) + "]" + coords + ");");
      return;
    }
    std::string dst = smem_addr(s, id);
    if (split > 1) {
      const int rows = box.rows / split;
      c[row_coord_index(ref)] += " + (long long)cta_rank * " + std::to_string(rows);
      dst = "(" + dst + " + cta_rank * " + std::to_string(rows * p_.smem[s.index].inner_bytes()) + "u)";
    }
    std::string coords;
    for (const auto& x : c) coords += ", (int)(" + x + ")";
    const std::string tmap = "&args.tmap[" + std::to_string(desc) + "]";
    const std::string dim = std::to_string(ref.rank) + "d";
    w_.open("if (leader)");
    if (load) {
      std::string bar;
      if (o.b.kind == operand_kind::mbarrier) bar = user_barrier(o.b);
      else if (s.sel == stage_sel::slot) bar = pipeline_barrier(p_.smem[s.index].pipeline, true, slot_name(s.slot_op));
      else return fail(id, "a TMA load needs a completion barrier: load into a pipeline slot, or pass an mbarrier");
      if (split > 1)
        w_.line("cake_dev::tma_load_" + dim + "_multicast(" + dst + ", " + tmap + ", " + bar + ", (u16)" + hex((1u << cluster()) - 1) + coords + ");");
      else
        w_.line("cake_dev::tma_load_" + dim + "(" + dst + ", " + tmap + ", " + bar + coords + ");");
    } else {
      w_.line("cake_dev::tma_store_" + dim + "(" + tmap + ", " + dst + coords + ");");
    }
    w_.close();
  }

  // An index value: one i32 element read by every thread of the role (the value is uniform, so the loads
  // of one warp coalesce into one transaction), or an index expression evaluated once.
  void emit_index_value(int id, const op& o) {
    if (o.kind == op_kind::let_index) {
      const std::string v = o.imm[0] == 1 ? "cake_dev::min_ll(" + expr(o.ix) + ", " + expr(o.d.stage) + ")" : expr(o.ix);
      w_.line("const long long " + value_var(id) + " = " + v + ";");
      return;
    }
    const auto& ref = p_.tile_refs[o.a.index];
    const std::string ti = std::to_string(ref.tensor);
    std::string at = "0LL";
    for (int i = 0; i < ref.rank; ++i) at += " + " + expr(ref.coords[i]) + " * args.stride[" + ti + "][" + std::to_string(i) + "]";
    w_.line("const long long " + value_var(id) + " = (long long)__ldg(static_cast<const int*>(args.ptr[" + ti + "]) + (" + at + "));");
  }

  // count_arrival: the unit meets (so that its threads' global writes so far happen before the step),
  // one thread steps the counter with atom.inc.acq_rel.gpu (release: those writes; acquire: the writes of
  // the units that stepped it before), and the count before the step reaches every thread of the unit: by
  // shuffle in a warp, through the role's derived scratch word and a second meeting in a warpgroup (the
  // meeting also carries the acquire to the unit's other threads, as the CTA-scope barrier it is).
  void emit_count_arrival(int id, const op& o) {
    const auto& ref = p_.tile_refs[o.a.index];
    const std::string ti = std::to_string(ref.tensor);
    std::string at = "0LL";
    for (int i = 0; i < ref.rank; ++i) at += " + " + expr(ref.coords[i]) + " * args.stride[" + ti + "][" + std::to_string(i) + "]";
    // (imm[0] 0: n is the run-time index expression o.ix, a split tail's part count)
    const std::string wrap = o.imm[0] > 0 ? std::to_string(o.imm[0] - 1) + "u" : "(unsigned)(" + expr(o.ix) + " - 1)";
    const std::string step = "cake_dev::atom_inc_acq_rel_gpu(static_cast<unsigned*>(args.ptr[" + ti + "]) + (" + at + "), " + wrap + ")";
    const auto& role = p_.roles[role_];
    const std::string v = value_var(id);
    w_.line("// op#" + std::to_string(id) + ": count_arrival (" + (o.imm[0] > 0 ? std::to_string(o.imm[0]) : expr(o.ix)) + " arrivals, then 0 again)");
    if (role.unit != role_unit::warpgroup) {
      w_.line("__syncwarp();");
      w_.line("unsigned " + v + "_c = 0u;");
      w_.line("if (lane == 0u) " + v + "_c = " + step + ";");
      w_.line("const long long " + v + " = (long long)__shfl_sync(0xffffffffu, " + v + "_c, 0);");
      return;
    }
    const int bar = plan_.named.reduce_first_id[role_], off = plan_.smem.scratch_offset[role_], slot = plan_.frags.count_offset[role_];
    if (bar < 0 || off < 0 || slot < 0) return fail(id, "a count_arrival without its derived scratch word or barrier");
    const std::string sync = "cake_dev::named_barrier_sync(" + unit_barrier_id(bar) + ", 128u);";
    const std::string word = "(smem + " + std::to_string(off + slot) + "u + unit * 4u)";
    w_.line(sync);
    w_.line("if (leader) { const unsigned c = " + step + "; asm volatile(\"st.shared.u32 [%0], %1;\" :: \"r\"(" + word + "), \"r\"(c) : \"memory\"); }");
    w_.line(sync);
    w_.line("unsigned " + v + "_c; asm volatile(\"ld.shared.u32 %0, [%1];\" : \"=r\"(" + v + "_c) : \"r\"(" + word + ") : \"memory\");");
    w_.line("const long long " + v + " = (long long)" + v + "_c;");
  }

  // Cooperative cp.async of one smem tile by every thread of the role (16-byte chunks, zero-filled
  // outside the tensor). Any rank: the box's rows run along the row dim (.rows_at, default the
  // second-to-last), its columns along the last (contiguous) dim; the other coordinates pick the origin
  // (a coordinate outside its dim zero-fills the whole box): global_origin_along, as register loads.
  //
  // Into a stage an acquire handed out (slot[region]): after the last such copy every thread of the role arrives
  // on the stage's 'full' barrier with cp.async.mbarrier.arrive.noinc, which the hardware performs once that
  // thread's copies have landed; the barrier's init count holds these arrivals (plan::full_arrivals_per_unit,
  // hardware-facts §1 "Transaction counts"). Consumers that waited for the phase read the data [PTX §9.7.9.25.1.2].
  void emit_cp_async(int id, const op& o) {
    const auto& r = p_.smem[o.d.index];
    const plan::extent2 box = plan::shape_of(p_, o.d);
    const auto& ref = p_.tile_refs[o.a.index];
    const auto& t = p_.tensors[ref.tensor];
    if (ref.rank < 2) return fail(id, "cp_async is lowered for tensors of rank 2 or more");
    const int acq = o.d.sel == stage_sel::slot ? o.d.slot_op : -1;
    const int last_fill = plan::cp_async_fill_of_acquire(p_, acq);
    if (last_fill >= 0 && (p_.ops[acq].role != o.role || p_.ops[acq].parent != o.parent))
      return fail(id, "a cp.async into an acquired stage must be in the body of its acquire (the same role, loop or when): every thread arrives on the stage's 'full' barrier after the last copy into it");
    const int eb = size_bits(r.dt) / 8;
    const int chunks_per_row = box.cols * eb / 16;
    const int chunks = box.rows * chunks_per_row;
    const int ti = ref.tensor;
    w_.open("");
    w_.line("const u32 dst = " + smem_addr(o.d, id) + ";");
    const std::string inside = global_origin_along(o.a, row_pos_of(ref), ref.rank - 1, box.rows, box.cols);
    w_.line("const " + elem_type(t.dt) + "* src = static_cast<const " + elem_type(t.dt) + "*>(args.ptr[" + std::to_string(ti) + "]);");
    w_.line("#pragma unroll");
    w_.open("for (int q = role_thread; q < " + std::to_string(chunks) + "; q += " + std::to_string(placement().threads) + ")");
    w_.line("const int row = q / " + std::to_string(chunks_per_row) + ", chunk = q % " + std::to_string(chunks_per_row) + ";");
    w_.line("const long long gr = row0 + row, gc = col0 + chunk * " + std::to_string(16 / eb) + ";");
    w_.line("const bool in = " + inside + " && gr < rows && gc < cols;");
    w_.line("cake_dev::cp_async_cg_16(dst + " + swizzled(r.swz, "(u32)(row * " + std::to_string(r.inner_bytes()) + " + chunk * 16)") +
            ", in ? (const void*)(src + base + gr * ld + gc) : (const void*)src, in ? 16u : 0u);");
    w_.close();
    w_.close();
    if (last_fill == id)
      w_.line("cake_dev::cp_async_mbar_arrive_noinc(" + pipeline_barrier(p_.ops[acq].d.index, true, slot_name(acq)) +
              ");  // every thread: 'full' of this stage, once its copies have landed");
  }
  static std::string elem_type(dtype d) {
    switch (size_bits(d)) {
      case 8: return "unsigned char";
      case 16: return "unsigned short";
      default: return "unsigned";
    }
  }

  // stmatrix of a 16-bit register tile in wgmma accumulator layout into a 128B-swizzled smem part.
  void emit_stmatrix(int id, const op& o) {
    const int r = o.a.index;
    if (lay(r).f.kind != plan::frag_kind::wgmma_acc) return fail(id, "stmatrix is lowered from wgmma accumulator fragments only");
    const auto& sr = p_.smem[o.d.index];
    const plan::extent2 ss = plan::shape_of(p_, o.d), rs = plan::shape_of(p_, o.a);
    if (ss.rows != rs.rows || ss.cols != rs.cols)
      return fail(id, "stmatrix: the smem part is " + std::to_string(ss.rows) + "x" + std::to_string(ss.cols) + " but the register part is " +
                          std::to_string(rs.rows) + "x" + std::to_string(rs.cols));
    if (rs.rows % 64 || rs.cols % 16) return fail(id, "stmatrix parts must be multiples of 64 rows x 16 columns");
    const int acc_cols = p_.regs[r].cols;
    const int src_n2 = acc_cols / 2;  // f32 accumulator registers per 64-row block
    std::string col0 = "0";
    if (o.a.part == part_axis::cols) col0 = "(int)" + part_index(o.a) + " * " + std::to_string(rs.cols);
    if (o.a.part == part_axis::rows) return fail(id, "stmatrix from a row part of an accumulator is not lowered yet");
    w_.open("");
    w_.line("const u32 dst = " + smem_addr(o.d, id) + ";");
    w_.line("const int cg0 = (" + col0 + ") / 8;  // first 8-column group of the part");
    w_.line("#pragma unroll");
    w_.open("for (int mb = 0; mb < " + std::to_string(rs.rows / 64) + "; ++mb)");
    w_.line("#pragma unroll");
    w_.open("for (int g = 0; g < " + std::to_string(rs.cols / 8) + "; g += 2)");
    w_.line("const int e = mb * " + std::to_string(src_n2) + " + 4 * (cg0 + g);");
    w_.line("const u32 row = mb * 64 + warp_in_unit * 16 + ((lane / 8) % 2) * 8 + lane % 8, cg = g + lane / 16;");
    w_.line("cake_dev::stmatrix_x4(dst + " + swizzled(sr.swz, "row * " + std::to_string(sr.inner_bytes()) + "u + cg * 16u") + ", " + packed_pair(r, "e") +
            ", " + packed_pair(r, "e + 2") + ", " + packed_pair(r, "e + 4") + ", " + packed_pair(r, "e + 6") + ");");
    w_.close();
    w_.close();
    w_.close();
  }

  // Register tile -> global tile. A whole tile goes through the generic path (emit_compute.hpp); a column
  // part of an accumulator (the direct-store epilogue) is stored here, bounds-checked per element pair.
  void emit_store_global(int id, const op& o) {
    if (o.a.part == part_axis::none) return emit_global_tile(id, o);
    const int r = o.a.index;
    const auto& ref = p_.tile_refs[o.d.index];
    const auto& t = p_.tensors[ref.tensor];
    if (size_bits(t.dt) != 16 || size_bits(p_.regs[r].dt) != 16) return fail(id, "store to global is lowered for 16-bit tiles");
    const plan::extent2 rs = plan::shape_of(p_, o.a);
    w_.open("");
    // The part's origin, as for a whole tile of the part's shape: row0 / col0 along the tile's row and column
    // dims, base and the in-bounds test of the other dims, rows / cols ended early by .limit(pos, end) (a paged
    // decode's O: the G query heads of one KV head, a column block per CTA of a cluster)
    const std::string inside = global_origin(o.d, r, rs.rows, rs.cols);
    w_.line("unsigned short* dst = static_cast<unsigned short*>(args.ptr[" + std::to_string(ref.tensor) + "]) + base;");
    // A pair of adjacent 16-bit elements: one 32-bit store when aligned and inside, else element by element.
    const std::string store_pair =
        "if (" + inside + " && gr < rows) { const long long at = gr * ld + gc; if (gc + 1 < cols && (at & 1) == 0) *reinterpret_cast<u32*>(dst + at) = v; "
        "else { if (gc < cols) dst[at] = (unsigned short)(v & 0xffffu); if (gc + 1 < cols) dst[at + 1] = (unsigned short)(v >> 16); } }";
    const plan::frag_kind kind = lay(lay(r).lazy_src >= 0 ? lay(r).lazy_src : r).f.kind;
    if (kind == plan::frag_kind::mma_acc) {
      if (o.a.part != part_axis::none) return fail(id, "store of a part of an mma.sync tile is not lowered yet");
      const int mb = rs.rows / 16, nb = rs.cols / 8;
      w_.line("#pragma unroll");
      w_.open("for (int mi = 0; mi < " + std::to_string(mb) + "; ++mi)");
      w_.line("#pragma unroll");
      w_.open("for (int nj = 0; nj < " + std::to_string(nb) + "; ++nj)");
      w_.line("#pragma unroll");
      w_.open("for (int h = 0; h < 2; ++h)");
      w_.line("const long long gr = row0 + mi * 16 + lane / 4 + 8 * h, gc = col0 + nj * 8 + 2 * (lane % 4);");
      w_.line("const u32 v = " + packed_pair(r, "(mi * " + std::to_string(nb) + " + nj) * 4 + 2 * h") + ";");
      w_.line(store_pair);
      w_.close();
      w_.close();
      w_.close();
    } else if (kind == plan::frag_kind::tmem_rows) {
      w_.line("const long long gr = row0 + (warp % 4u) * 32 + lane;  // the TMEM lane this thread read");
      w_.line("#pragma unroll");
      w_.open("for (int c = 0; c < " + std::to_string(rs.cols) + "; c += 2)");
      w_.line("const long long gc = col0 + c;");
      w_.line("const u32 v = " + packed_pair(r, "c") + ";");
      w_.line(store_pair);
      w_.close();
    } else if (kind == plan::frag_kind::wgmma_acc) {
      // wgmma D fragment (hardware-facts §3): element i of 64-row block j sits at row 64j + 16w + lane/4
      // + 8((i/2)%2), col 8(i/4) + 2(lane%4) + i%2; pairs (i, i+1) are adjacent columns.
      if (o.a.part == part_axis::rows) return fail(id, "store of a row part of a wgmma accumulator is not lowered yet");
      const int n = p_.regs[lay(r).lazy_src >= 0 ? lay(r).lazy_src : r].cols;
      std::string c0 = "0";
      if (o.a.part == part_axis::cols) c0 = "(int)" + part_index(o.a) + " * " + std::to_string(rs.cols);
      w_.line("const int c0 = " + c0 + ";");
      w_.line("#pragma unroll");
      w_.open("for (int j = 0; j < " + std::to_string(rs.rows / 64) + "; ++j)");
      w_.line("#pragma unroll");
      w_.open("for (int i = 0; i < " + std::to_string(rs.cols / 2) + "; i += 2)");
      w_.line("const int e = j * " + std::to_string(n / 2) + " + (c0 / 8) * 4 + i;");
      w_.line("const long long gr = row0 + j * 64 + warp_in_unit * 16 + lane / 4 + 8 * ((i / 2) % 2), gc = col0 + 8 * (i / 4) + 2 * (lane % 4);");
      w_.line("const u32 v = " + packed_pair(r, "e") + ";");
      w_.line(store_pair);
      w_.close();
      w_.close();
    } else {
      return fail(id, "store to global from this register layout is not lowered yet");
    }
    w_.close();
  }

  // tcgen05.st of an f32 register tile held one row per thread (the layout tmem_load gives) into TMEM.
  void emit_tmem_store(int id, const op& o) {
    const int r = o.a.index;
    const plan::extent2 rs = plan::shape_of(p_, o.a);
    if (p_.regs[r].scope != role_unit::warpgroup || rs.rows != 128 || p_.regs[r].dt != dtype::f32)
      return fail(id, "tmem_store is lowered from a 128-row f32 tile held by one warpgroup");
    w_.open("");
    w_.line("const u32 taddr = " + tmem_base() + " + (((warp % 4u) * 32u) << 16) + " + tmem_column(o.d, id) + ";");
    for (const auto& [first, num] : tmem_chunks(rs.cols)) {  // one tcgen05.st per power-of-two run of columns
      const auto t = ptx::tcgen05_st(ptx::tmem_shape::s32x32b, num, "taddr + " + std::to_string(first) + "u", "regs_u32");
      if (!t.ok()) return fail(id, t.error);
      w_.open("");
      w_.line("u32 (&regs_u32)[" + std::to_string(num) + "] = *reinterpret_cast<u32(*)[" + std::to_string(num) + "]>(" + reg_name(r) + " + " + std::to_string(first) + ");");
      w_.raw(indent_block(t.text));
      w_.close();
    }
    w_.line("cake_dev::tmem_wait_st();");
    w_.close();
  }
  // tcgen05.ld/st move 1, 2, 4, ..., 128 columns of 32-bit cells per instruction (.32x32b.xN): a row of any
  // other width is moved by one instruction per set bit of its width (100 = 64 + 32 + 4), and a row wider
  // than 128 columns by runs of 128 first. (Found by the builder fuzzer: a 128 x 96 tile was refused by the
  // lowering after a clean check.)
  static std::vector<std::pair<int, int>> tmem_chunks(int cols) {
    std::vector<std::pair<int, int>> runs;  // (first column, columns)
    int first = 0;
    for (; cols - first >= 128; first += 128) runs.emplace_back(first, 128);
    for (int num = 64; num >= 1; num /= 2)
      if (cols - first >= num) {
        runs.emplace_back(first, num);
        first += num;
      }
    return runs;
  }
  // ldmatrix of a 16-bit smem tile into a register tile in the mma.sync layout: one .x4 per 16 x 16 block
  // (rows g and g + 8 of two n8 blocks: exactly the A fragment order, hardware-facts §5).
  void emit_ldmatrix(int id, const op& o) {
    const int r = o.d.index;
    const auto& sr = p_.smem[o.a.index];
    const plan::extent2 rs = plan::shape_of(p_, o.d), ss = plan::shape_of(p_, o.a);
    if (lay(r).f.kind != plan::frag_kind::mma_acc || size_bits(p_.regs[r].dt) != 16 || o.d.part != part_axis::none)
      return fail(id, "ldmatrix is lowered into whole 16-bit tiles in the mma.sync layout");
    if (rs.rows != ss.rows || rs.cols != ss.cols || rs.rows % 16 || rs.cols % 16) return fail(id, "ldmatrix moves equal shapes of multiples of 16 x 16");
    w_.open("");
    w_.line("const u32 base = " + smem_addr(o.a, id) + ";");
    w_.line("#pragma unroll");
    w_.open("for (int mi = 0; mi < " + std::to_string(rs.rows / 16) + "; ++mi)");
    w_.line("#pragma unroll");
    w_.open("for (int pj = 0; pj < " + std::to_string(rs.cols / 16) + "; ++pj)");
    w_.line("const u32 row = mi * 16 + ((lane / 8) % 2) * 8 + lane % 8, chunk = pj * 2 + lane / 16;");
    w_.line("u32 (&q)[4] = *reinterpret_cast<u32(*)[4]>(" + reg_name(r) + " + (mi * " + std::to_string(rs.cols / 8) + " + 2 * pj) * 2);");
    w_.line("cake_dev::ldmatrix_x4(q, base + " + swizzled(sr.swz, "row * " + std::to_string(sr.inner_bytes()) + "u + chunk * 16u") + ");");
    w_.close();
    w_.close();
    w_.close();
  }
  void emit_tmem_load(int id, const op& o) {
    const int r = o.d.index;
    const plan::extent2 rs = plan::shape_of(p_, o.d);
    if (p_.regs[r].scope != role_unit::warpgroup || rs.rows != 128) return fail(id, "tmem_load is lowered into a 128-row tile held by one warpgroup");
    if (p_.regs[r].dt != dtype::f32) return fail(id, "tmem_load is lowered into f32 tiles (TMEM cells are f32): load into an f32 tile, then convert");
    w_.open("");
    // The hardware lets warp w reach lanes 32*(w % 4) .. +31 only (hardware-facts §4), whatever its role.
    w_.line("const u32 taddr = " + tmem_base() + " + (((warp % 4u) * 32u) << 16) + " + tmem_column(o.a, id) + ";");
    for (const auto& [first, num] : tmem_chunks(rs.cols)) {
      const auto t = ptx::tcgen05_ld(ptx::tmem_shape::s32x32b, num, "regs_u32", "taddr + " + std::to_string(first) + "u");
      if (!t.ok()) return fail(id, t.error);
      w_.open("");
      w_.line("u32 (&regs_u32)[" + std::to_string(num) + "] = *reinterpret_cast<u32(*)[" + std::to_string(num) + "]>(" + reg_name(r) + " + " + std::to_string(first) + ");");
      w_.raw(indent_block(t.text));
      w_.close();
    }
    w_.line("cake_dev::tmem_wait_ld();");
    w_.close();
  }
};

}  // namespace cake::lower
