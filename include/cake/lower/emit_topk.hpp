#pragma once
// Lowering of the row top-k ops (topk_init, topk_rows, topk_store): generic CUDA C++ over the derived
// shared-memory lists (plan/fragments.hpp topk_*, plan/smem_plan.hpp topk_offset) and the device helpers
// cake_dev::topk_* (device/compute.cuh).
//
// A state of k per row keeps, per row, a list of the k best (value, index) pairs sorted best first, and
// a candidate buffer of `slack` entries, in smem; in registers, each row's k-th best pair (the threshold).
// Values are kept as "smaller is better" (a topk_largest state negates them on the way in and out).
// A fold (topk_rows) first takes each row's minimum over the tile (one fminf per element); only when a
// row of the warp has a value that could beat its threshold does the warp walk the tile again, chunk by
// chunk: before a chunk, if a row's buffer could overflow, the warp's rows merge their buffers into
// their lists (cake_dev::topk_merge) and take the new thresholds; then every element that beats its
// row's threshold is appended (shared atomic on the row's count). The lists stay exact: a value is left
// out only when k better ones are already held; ties go to the lower index (the order is (value, index)).
#include <string>

#include "emit_compute.hpp"

namespace cake::lower {

class topk_emitter : public compute_emitter {
 public:
  using compute_emitter::compute_emitter;

 protected:
  struct topk_geometry {
    int k = 0, slack = 0, stride = 0, rows = 0, lanes = 1, unit_bytes = 0, offset = -1;
    bool largest = false;
  };
  topk_geometry topk_of(int state) const {
    topk_geometry t;
    const auto& g = p_.regs[state];
    t.k = g.topk;
    t.largest = g.topk_largest;
    t.rows = g.rows;
    t.slack = plan_.frags.topk_slack[state];
    t.stride = plan::topk_stride(t.k, t.slack);
    t.unit_bytes = plan::topk_unit_bytes(t.rows, t.k, t.slack);
    t.offset = plan_.smem.topk_offset[state];
    t.lanes = plan::topk_lanes(lay(state));
    if (t.lanes < 1) t.lanes = 1;
    return t;
  }
  // Pointers to the unit's lists, the lane's place in its row's lane group, the group's mask.
  void topk_pointers(const topk_geometry& t) {
    w_.line("float* const tk_v = reinterpret_cast<float*>(cake_smem + " + S(t.offset) + "u + unit * " + S(t.unit_bytes) + "u);");
    w_.line("int* const tk_i = reinterpret_cast<int*>(tk_v + " + S(t.rows * t.stride) + ");");
    w_.line("int* const tk_n = tk_i + " + S(t.rows * t.stride) + ";");
    w_.line("const int tk_lane = (int)(lane % " + S(t.lanes) + "u);");
    w_.line("const unsigned tk_mask = " + (t.lanes >= 32 ? std::string("0xffffffffu") : "(" + S((1u << t.lanes) - 1u) + "u << (lane & ~" + S(t.lanes - 1) + "u))") +
            ";");
    w_.line("(void)tk_lane; (void)tk_mask;");
  }
  std::string topk_merge_call(const topk_geometry& t, const std::string& row) const {
    return "cake_dev::topk_merge<" + S(t.k) + ", " + S(t.slack) + ", " + S(t.lanes) + ">(tk_v + " + row + " * " + S(t.stride) + ", tk_i + " + row + " * " +
           S(t.stride) + ", tk_n + " + row + ", tk_lane, tk_mask);";
  }
  // Merges every row's pending candidates (all rows of the warp together) and reloads the thresholds.
  void topk_merge_all(int state, const topk_geometry& t) {
    const auto& L = lay(state);
    const std::string tv = reg_name(state), ti = reg_name(state) + "_ti";
    w_.line("#pragma unroll");
    w_.open("for (int q = 0; q < " + S(L.count) + "; ++q)");
    w_.line("const int row = " + row_of(L, "q") + ";");
    w_.line(topk_merge_call(t, "row"));
    w_.line(tv + "[q] = tk_v[row * " + S(t.stride) + " + " + S(t.k - 1) + "]; " + ti + "[q] = tk_i[row * " + S(t.stride) + " + " + S(t.k - 1) + "];");
    w_.close();
  }
  bool topk_state_ok(int id, int state) {
    if (state < 0 || state >= static_cast<int>(p_.regs.size()) || p_.regs[state].topk < 1) {
      fail(id, "a row top-k op on a tile that is not an r.topk state");
      return false;
    }
    if (plan_.smem.topk_offset[state] < 0) {
      fail(id, "a top-k state without derived lists (no row_topk folds into it)");
      return false;
    }
    return true;
  }

  void emit_topk_init(int id, const op& o) {
    const int s = o.d.index;
    if (!topk_state_ok(id, s)) return;
    const auto t = topk_of(s);
    const auto& L = lay(s);
    w_.open("");
    topk_pointers(t);
    w_.line("__syncwarp();  // the warp's last reads of the lists are over");
    w_.line("#pragma unroll");
    w_.open("for (int q = 0; q < " + S(L.count) + "; ++q)");
    w_.line("const int row = " + row_of(L, "q") + ";");
    w_.line("for (int j = tk_lane; j < " + S(t.k) + "; j += " + S(t.lanes) + ") { tk_v[row * " + S(t.stride) + " + j] = __int_as_float(0x7f800000); tk_i[row * " +
            S(t.stride) + " + j] = 0x7fffffff; }");
    w_.line("if (tk_lane == 0) tk_n[row] = 0;");
    w_.line(reg_name(s) + "[q] = __int_as_float(0x7f800000); " + reg_name(s) + "_ti[q] = 0x7fffffff;");
    w_.close();
    w_.line("__syncwarp();");
    w_.close();
  }

  // Which chunk element E (compile-time) of a source laid out as L falls in, for chunks of `cols` columns.
  std::string chunk_of(const plan::reg_layout& L, const std::string& E, int cols) const {
    const auto& f = L.f;
    const std::string e = par(E);
    switch (f.kind) {
      case plan::frag_kind::wgmma_acc: return "(((" + e + " % " + S(f.cols / 2) + ") / 4) / " + S(cols / 8) + ")";
      case plan::frag_kind::mma_acc: return "((" + e + " / 4 % " + S(f.cols / 8) + ") / " + S(cols / 8) + ")";
      case plan::frag_kind::blocked: return "((" + e + " % " + S(f.cols / (f.vec * f.tpr) * f.vec) + ") / " + S(f.vec) + ")";
      default: return "0";
    }
  }

  void emit_topk_rows(int id, const op& o) {
    const int s = o.d.index, src = o.a.index;
    if (!topk_state_ok(id, s)) return;
    if (o.a.kind != operand_kind::reg) return fail(id, "a row top-k needs a source register tile");
    const auto t = topk_of(s);
    const auto& Ls = lay(src);
    const auto& Lt = lay(s);
    const int chunk = plan::topk_chunk_cols(Ls);
    if (plan::topk_lanes(Ls) == 0 || chunk == 0 || Ls.cls != plan::shape_class::full)
      return fail(id, "a row top-k is lowered for sources whose rows are each held inside one warp (MMA fragments, or blocked tiles of at most 32 threads per row)");
    if (plan::topk_lanes(Ls) != t.lanes) return fail(id, "a row top-k's source and state hold their rows in different lane groups");
    const int chunks = Ls.f.cols / chunk;
    const bool expr_src = o.has(flag_expr_src);
    const int root = expr_src ? o.expr_first() + o.expr_count() - 1 : -1;
    const bool pos = expr_src && expr_uses_position(o.expr_first(), o.expr_count());
    const std::string value = expr_src ? as_float(root, node_code(root, Ls, "e")) : read_elem(src, "e");
    const std::string x = t.largest ? "-(" + value + ")" : value;
    const std::string index = o.b.kind == operand_kind::reg ? reg_name(o.b.index) + "[e]" : "(int)(tk_col0 + " + col_of(Ls, "e") + ")";
    const std::string tv = reg_name(s), ti = reg_name(s) + "_ti";
    w_.open("");
    w_.line("// row top-k (k = " + S(t.k) + (t.largest ? ", largest" : ", smallest") + "): candidate buffer of " + S(t.slack) + " per row, merged in chunks of " +
            S(chunk) + " columns");
    topk_pointers(t);
    if (o.b.kind != operand_kind::reg) w_.line("const long long tk_col0 = " + expr(o.ix) + ";");
    // 1. Each row's best value in the tile (no index needed: the test below is conservative).
    w_.line("float tk_best[" + S(Lt.count) + "];");
    w_.line("#pragma unroll");
    w_.line("for (int q = 0; q < " + S(Lt.count) + "; ++q) tk_best[q] = __int_as_float(0x7f800000);");
    w_.line("#pragma unroll");
    w_.open("for (int e = 0; e < " + S(Ls.count) + "; ++e)");
    if (pos) w_.line(position_decl(Ls, "e"));
    w_.line("tk_best[" + row_slot(Ls.f, "e") + "] = fminf(tk_best[" + row_slot(Ls.f, "e") + "], " + x + ");");
    w_.close();
    w_.line("bool tk_hit = false;");
    w_.line("#pragma unroll");
    w_.line("for (int q = 0; q < " + S(Lt.count) + "; ++q) tk_hit = tk_hit || (tk_best[q] <= " + tv + "[q] && tk_best[q] < __int_as_float(0x7f800000));");
    // 2. Rarely (once the thresholds are tight): append what beats the thresholds, chunk by chunk.
    w_.open("if (__any_sync(0xffffffffu, tk_hit))");
    w_.line("#pragma unroll");
    w_.open("for (int tk_c = 0; tk_c < " + S(chunks) + "; ++tk_c)");
    w_.line("bool tk_full = false;");
    w_.line("#pragma unroll");
    w_.line("for (int q = 0; q < " + S(Lt.count) + "; ++q) tk_full = tk_full || tk_n[" + row_of(Lt, "q") + "] > " + S(t.slack - chunk) + ";");
    w_.open("if (__any_sync(0xffffffffu, tk_full))");
    topk_merge_all(s, t);
    w_.close();
    w_.line("#pragma unroll");
    w_.open("for (int e = 0; e < " + S(Ls.count) + "; ++e)");
    w_.line("if (" + chunk_of(Ls, "e", chunk) + " != tk_c) continue;");
    w_.line("const int q = " + row_slot(Ls.f, "e") + ";");
    if (pos) w_.line(position_decl(Ls, "e"));
    w_.line("const float x = " + x + ";");
    w_.line("const int c = " + index + ";");
    w_.open("if (x < " + tv + "[q] || (x == " + tv + "[q] && c < " + ti + "[q] && x < __int_as_float(0x7f800000)))");
    w_.line("const int row = " + row_of(Lt, "q") + ";");
    w_.line("const int at = atomicAdd(tk_n + row, 1);");
    w_.line("tk_v[row * " + S(t.stride) + " + " + S(t.k) + " + at] = x; tk_i[row * " + S(t.stride) + " + " + S(t.k) + " + at] = c;");
    w_.close();
    w_.close();
    w_.line("__syncwarp();  // the chunk's appends are visible to the next chunk's counts and merges");
    w_.close();
    w_.close();
    w_.close();
  }

  void emit_topk_store(int id, const op& o) {
    const int s = o.a.index;
    if (!topk_state_ok(id, s)) return;
    const auto t = topk_of(s);
    const auto& L = lay(s);
    w_.open("");
    topk_pointers(t);
    w_.line("__syncwarp();");
    topk_merge_all(s, t);
    for (const operand* g : {&o.d, &o.b}) {
      const bool values = g == &o.d;
      const auto& ref = p_.tile_refs[g->index];
      w_.open("");
      const std::string inside = global_origin(*g, s, t.rows, t.k);
      w_.line("#pragma unroll");
      w_.open("for (int q = 0; q < " + S(L.count) + "; ++q)");
      w_.line("const int row = " + row_of(L, "q") + ";");
      w_.line("const long long gr = row0 + row;");
      w_.line("if (!(" + inside + " && gr < rows)) continue;");
      w_.open("for (int j = tk_lane; j < " + S(t.k) + "; j += " + S(t.lanes) + ")");
      w_.line("const long long gc = col0 + j;");
      w_.line("if (gc >= cols) break;");
      w_.line("const int ix = tk_i[row * " + S(t.stride) + " + j];");
      if (values) {
        w_.line("const float v = tk_v[row * " + S(t.stride) + " + j];");
        w_.line("*" + gptr(ref.tensor, "float") + " = " + (t.largest ? "-v" : "v") + ";");
      } else {
        w_.line("*" + gptr(ref.tensor, "int") + " = ix == 0x7fffffff ? -1 : ix;  // an empty entry: -1");
      }
      w_.close();
      w_.close();
      w_.close();
    }
    w_.close();
  }
};

}  // namespace cake::lower
