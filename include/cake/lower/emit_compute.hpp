#pragma once
// Lowering of register compute: register-tile declarations in their fragment layouts (plan/fragments.hpp),
// element loops for r.set(...) expressions, row reductions across the threads that hold a row,
// conversions, loads and stores between register tiles and global or shared memory (vectorized,
// bounds-checked per element), atomics, scatter-add and the cluster sum through distributed shared
// memory. Everything here is generic CUDA C++: it is the same for sm_80, sm_90a and sm_100a.
//
// Element e of a tile (0 .. count-1, unrolled so that every index below is a compile-time constant
// except the thread's lane / warp) sits at (row_of(e), col_of(e)) of its frame; a row vector's slot
// for e is row_slot(e), a column vector's col_slot(e).
#include <string>
#include <vector>

#include "../core/dtype.hpp"
#include "emitter.hpp"

namespace cake::lower {

// Registers a thread holds for one batch of a whole tile's vector loads (r.load_add of another split's
// partial sums, below): 32, or 16 under a per-thread cap below 200, so that a batch never costs a second
// tile's worth of registers next to the accumulator it is added into.
constexpr int whole_tile_batch_regs(int regs_cap) { return regs_cap >= 200 ? 32 : 16; }

class compute_emitter : public emitter {
 public:
  using emitter::emitter;

 protected:
  const plan::reg_layout& lay(int r) const { return plan_.frags.regs[r]; }
  static std::string S(long long v) { return std::to_string(v); }
  static std::string par(const std::string& s) { return "(" + s + ")"; }

  // A wait on a barrier that peers of the cluster arrive on with release.cluster: acquire at cluster scope
  // (the memory model pairs a release.cluster with an acquire whose scope includes the releasing thread; a
  // CTA-scope try_wait's does not, with or without a fence after it), with the hang trap too.
  std::string cluster_wait_call(const std::string& bar, const std::string& parity, int id) const {
    if (opt_.hang_timeout_ns)
      return "if (!cake_dev::mbar_wait_cluster_until(" + bar + ", " + parity + ", cake_deadline)) { printf(\"cake: op#" + std::to_string(id) +
             " waited past the hang timeout (block %d thread %d)\\n\", (int)blockIdx.x, (int)tid); cake_dev::trap(); }";
    return "cake_dev::mbar_wait_cluster(" + bar + ", " + parity + ");";
  }
  // The cluster reductions (cluster_sum / cluster_max) of this role: they share one scratch (plan::fragments),
  // so where there are several, each waits before it writes for every peer to have read the scratch of the
  // role's previous one, whichever op that was (cr_done / cr_parity), not only its own previous use.
  int role_cluster_reductions() const {
    int n = 0;
    for (const auto& o : p_.ops) n += o.role == role_ && o.kind == op_kind::cluster_reduce;
    return n;
  }
  // Whether another writer of the role's scratch may follow a cluster reduction: a second cluster reduction,
  // or a row reduction across warps (emit_cross_warp), which writes the same bytes. Those writers first wait
  // for every peer to have read the scratch of the role's last cluster reduction (cr_done / cr_parity).
  bool role_shares_cluster_scratch() const {
    const int n = role_cluster_reductions();
    if (n == 0) return false;
    if (n > 1) return true;
    for (const auto& o : p_.ops)
      if (o.role == role_ && (o.kind == op_kind::reduce_rows || o.kind == op_kind::arg_reduce_rows) && o.a.kind == operand_kind::reg) {
        const auto& L = lay(o.a.index);
        if (L.f.kind == plan::frag_kind::blocked && L.f.tpr > 32) return true;
      }
    return false;
  }
  // The wait a writer of a shared scratch makes first (see role_shares_cluster_scratch).
  std::string wait_cluster_scratch_call(int id) const {
    return "if (cr_any) { " + cluster_wait_call("cr_done", "cr_parity", id) + " }  // every peer has read the scratch of the role's last cluster reduction";
  }

  // ---- coordinates -------------------------------------------------------------------------------
  // The thread's index inside its unit, for blocked frames.
  std::string unit_thread(const plan::reg_layout& L) const { return "(int)(role_thread % " + S(L.threads) + "u)"; }
  // Row / column inside the frame of element E (C++ text of a compile-time index) of a tile laid out as L.
  std::string row_of(const plan::reg_layout& L, const std::string& E) const {
    const auto& f = L.f;
    const std::string e = par(E);
    switch (f.kind) {
      case plan::frag_kind::wgmma_acc:
        if (L.cls == plan::shape_class::row_vec) return "(64 * (" + e + " / 2) + 16 * (int)warp_in_unit + (int)lane / 4 + 8 * (" + e + " % 2))";
        if (L.cls == plan::shape_class::full) {
          const std::string h = S(f.cols / 2);
          return "(64 * (" + e + " / " + h + ") + 16 * (int)warp_in_unit + (int)lane / 4 + 8 * ((" + e + " % " + h + ") / 2 % 2))";
        }
        return "0";
      case plan::frag_kind::mma_acc:
        if (L.cls == plan::shape_class::row_vec) return "(16 * (" + e + " / 2) + (int)lane / 4 + 8 * (" + e + " % 2))";
        if (L.cls == plan::shape_class::full) return "(16 * (" + e + " / 4 / " + S(f.cols / 8) + ") + (int)lane / 4 + 8 * (" + e + " % 4 / 2))";
        return "0";
      case plan::frag_kind::tmem_rows:
        if (L.cls == plan::shape_class::col_vec) return "0";
        return "(32 * (int)(warp % 4u) + (int)lane)";
      case plan::frag_kind::blocked: {
        const int rpp = f.rpp(L.threads), per_row = f.cols / (f.vec * f.tpr) * f.vec;
        const std::string t = unit_thread(L);
        if (L.cls == plan::shape_class::row_vec) return "(" + e + " * " + S(rpp) + " + " + t + " / " + S(f.tpr) + ")";
        if (L.cls == plan::shape_class::full) return "((" + e + " / " + S(per_row) + ") * " + S(rpp) + " + " + t + " / " + S(f.tpr) + ")";
        return "0";
      }
      default: return "0";
    }
  }
  // A full tile in an MMA fragment's layout: element E's row and column less those of the thread's element
  // 0 (the thread's terms of row_of / col_of dropped: what is left depends on E alone).
  std::pair<std::string, std::string> acc_offset(const plan::reg_layout& L, const std::string& E) const {
    const std::string e = par(E);
    if (L.f.kind == plan::frag_kind::wgmma_acc) {
      const std::string h = S(L.f.cols / 2);
      return {"(64 * (" + e + " / " + h + ") + 8 * ((" + e + " % " + h + ") / 2 % 2))", "(8 * ((" + e + " % " + h + ") / 4) + (" + e + " % " + h + ") % 2)"};
    }
    return {"(16 * (" + e + " / 4 / " + S(L.f.cols / 8) + ") + 8 * (" + e + " % 4 / 2))", "(8 * (" + e + " / 4 % " + S(L.f.cols / 8) + ") + " + e + " % 2)"};
  }
  std::string col_of(const plan::reg_layout& L, const std::string& E) const {
    const auto& f = L.f;
    const std::string e = par(E);
    switch (f.kind) {
      case plan::frag_kind::wgmma_acc:
        if (L.cls == plan::shape_class::col_vec) return "(8 * (" + e + " / 2) + 2 * ((int)lane % 4) + " + e + " % 2)";
        if (L.cls == plan::shape_class::full) {
          const std::string h = S(f.cols / 2);
          return "(8 * ((" + e + " % " + h + ") / 4) + 2 * ((int)lane % 4) + (" + e + " % " + h + ") % 2)";
        }
        return "0";
      case plan::frag_kind::mma_acc:
        if (L.cls == plan::shape_class::col_vec) return "(8 * (" + e + " / 2) + 2 * ((int)lane % 4) + " + e + " % 2)";
        if (L.cls == plan::shape_class::full) return "(8 * (" + e + " / 4 % " + S(f.cols / 8) + ") + 2 * ((int)lane % 4) + " + e + " % 2)";
        return "0";
      case plan::frag_kind::tmem_rows: return L.cls == plan::shape_class::row_vec || L.cls == plan::shape_class::scalar ? "0" : e;
      case plan::frag_kind::blocked: {
        const int per_row = f.cols / (f.vec * f.tpr) * f.vec;
        const std::string t = unit_thread(L);
        if (L.cls == plan::shape_class::row_vec || L.cls == plan::shape_class::scalar) return "0";
        const std::string rem = L.cls == plan::shape_class::full ? "(" + e + " % " + S(per_row) + ")" : e;
        return "(((" + rem + " / " + S(f.vec) + ") * " + S(f.tpr) + " + " + t + " % " + S(f.tpr) + ") * " + S(f.vec) + " + " + rem + " % " + S(f.vec) + ")";
      }
      default: return "0";
    }
  }
  // The slot of a row (column) vector of frame f that full-tile element E uses.
  static std::string row_slot(const plan::frame& f, const std::string& E) {
    const std::string e = par(E);
    switch (f.kind) {
      case plan::frag_kind::wgmma_acc: {
        const std::string h = S(f.cols / 2);
        return "(2 * (" + e + " / " + h + ") + (" + e + " % " + h + ") / 2 % 2)";
      }
      case plan::frag_kind::mma_acc: return "(2 * (" + e + " / 4 / " + S(f.cols / 8) + ") + " + e + " % 4 / 2)";
      case plan::frag_kind::blocked: return "(" + e + " / " + S(f.cols / (f.vec * f.tpr) * f.vec) + ")";
      default: return "0";
    }
  }
  static std::string col_slot(const plan::frame& f, const std::string& E) {
    const std::string e = par(E);
    switch (f.kind) {
      case plan::frag_kind::wgmma_acc: {
        const std::string h = S(f.cols / 2);
        return "(2 * ((" + e + " % " + h + ") / 4) + (" + e + " % " + h + ") % 2)";
      }
      case plan::frag_kind::mma_acc: return "(2 * (" + e + " / 4 % " + S(f.cols / 8) + ") + " + e + " % 2)";
      case plan::frag_kind::tmem_rows: return e;
      case plan::frag_kind::blocked: return "(" + e + " % " + S(f.cols / (f.vec * f.tpr) * f.vec) + ")";
      default: return "0";
    }
  }
  // Index of tile r's element that goes with element E of a tile laid out as `dst` (broadcast by shape).
  std::string source_index(int r, const plan::reg_layout& dst, const std::string& E) const {
    const auto& L = lay(r);
    if (L.cls == plan::shape_class::scalar) return "0";
    if (L.cls == dst.cls) return E;
    if (dst.cls == plan::shape_class::full) return L.cls == plan::shape_class::row_vec ? row_slot(dst.f, E) : col_slot(dst.f, E);
    return E;  // mismatched vectors: the analyzer refuses them (representation.broadcast)
  }

  // ---- storage ----------------------------------------------------------------------------------------
  // f32 -> float[], i32 -> int[], 16-bit -> u32[] of packed pairs, 8-bit -> u32[] of packed quads.
  std::string storage_type(dtype d) const { return d == dtype::f32 ? "float" : d == dtype::i32 ? "int" : "u32"; }
  static int storage_words(dtype d, int count) {
    const int b = size_bits(d);
    return b == 32 ? count : b == 16 ? (count + 1) / 2 : (count + 3) / 4;
  }
  // Element I (text) of tile r as a float expression.
  std::string read_elem(int r, const std::string& I) const {
    const auto& g = p_.regs[r];
    const auto& L = lay(r);
    if (L.lazy_src >= 0) return reg_name(L.lazy_src) + "[" + I + "]";
    const std::string a = reg_name(r);
    switch (g.dt) {
      case dtype::f32: return a + "[" + I + "]";
      case dtype::i32: return "(float)" + a + "[" + I + "]";
      case dtype::bf16: return "(" + par(I) + " % 2 ? cake_dev::hi_bf16(" + a + "[" + par(I) + " / 2]) : cake_dev::lo_bf16(" + a + "[" + par(I) + " / 2]))";
      case dtype::f16: return "(" + par(I) + " % 2 ? cake_dev::hi_f16(" + a + "[" + par(I) + " / 2]) : cake_dev::lo_f16(" + a + "[" + par(I) + " / 2]))";
      case dtype::e4m3:
      case dtype::e5m2: return "cake_dev::fp8_to_f32<" + fp8_e(g.dt) + ">(" + a + "[" + par(I) + " / 4], " + par(I) + " % 4)";
      default: return "0.0f";
    }
  }
  // The exponent width of an 8-bit float dtype, as the device helpers' template argument.
  static std::string fp8_e(dtype d) { return d == dtype::e5m2 ? "5" : "4"; }
  bool is8(int r) const { return size_bits(p_.regs[r].dt) == 8; }
  // Statement(s) writing float values v0 (element I) [and v1 (element I + 1)] into tile r.
  std::string write_one(int r, const std::string& I, const std::string& v) const {
    const auto& g = p_.regs[r];
    const std::string a = reg_name(r);
    if (g.dt == dtype::f32) return a + "[" + I + "] = " + v + ";";
    if (g.dt == dtype::i32) return a + "[" + I + "] = (int)(" + v + ");";
    return "";
  }
  std::string write_pair(int r, const std::string& I, const std::string& v0, const std::string& v1) const {
    const auto& g = p_.regs[r];
    const std::string fn = g.dt == dtype::bf16 ? "cake_dev::pack_bf16x2" : "cake_dev::pack_f16x2";
    return reg_name(r) + "[" + par(I) + " / 2] = " + fn + "(" + v0 + ", " + v1 + ");";
  }
  bool is16(int r) const { return size_bits(p_.regs[r].dt) == 16; }

  // Declares the register arrays of the current role's tiles (lazy conversions have none).
  void declare_reg_tiles() {
    for (std::size_t r = 0; r < p_.regs.size(); ++r) {
      const auto& g = p_.regs[r];
      const auto& L = lay(static_cast<int>(r));
      if (g.role != role_ || L.lazy_src >= 0) continue;
      w_.line(storage_type(g.dt) + " " + reg_name(static_cast<int>(r)) + "[" + S(storage_words(g.dt, L.count > 0 ? L.count : 1)) + "];  // " +
              std::string(g.nm.view()) + ": " + std::string(to_string(g.dt)) + " " + S(g.rows) + "x" + S(g.cols) + " per " +
              (g.scope == role_unit::warpgroup ? "warpgroup" : "warp") + ", " + std::string(plan::to_string(L.f.kind)) + " layout, " + S(L.count) +
              " per thread");
      // A top-k state's threshold is a (value, index) pair: the index of each row's k-th best.
      if (g.topk > 0) w_.line("int " + reg_name(static_cast<int>(r)) + "_ti[" + S(L.count > 0 ? L.count : 1) + "];  // the k-th best's index per row");
    }
  }
  int elements_per_thread(int r) const { return lay(r).count; }
  // A packed pair (C++ u32 text) of 16-bit elements I, I+1 of tile r (a lazy conversion packs its source).
  std::string packed_pair(int r, const std::string& first_index) const {
    const auto& L = lay(r);
    if (L.lazy_src >= 0) {
      const std::string s = reg_name(L.lazy_src);
      const std::string fn = p_.regs[r].dt == dtype::bf16 ? "cake_dev::pack_bf16x2" : "cake_dev::pack_f16x2";
      return fn + "(" + s + "[" + first_index + "], " + s + "[" + first_index + " + 1])";
    }
    return reg_name(r) + "[(" + first_index + ") / 2]";
  }

  // ---- expressions -------------------------------------------------------------------------------------
  // C++ text of expression node `n` at element E of a tile laid out as `dst`. Predicates are bool
  // text; index leaves are long long; everything else float.
  char node_type(int n) const {
    const auto& x = p_.exprs[n];
    if (x.fn == math_fn::index) return 'i';
    return info(x.fn).result;
  }
  std::string as_float(int n, const std::string& text) const { return node_type(n) == 'f' ? text : "(float)(" + text + ")"; }
  std::string node_code(int n, const plan::reg_layout& dst, const std::string& E) const {
    for (const auto& h : hoisted_)
      if (h.node == n) return "h" + S(n) + "[" + source_index(h.leaf, dst, E) + "]";
    const expr_node& x = p_.exprs[n];
    auto k = [&](int i) { return node_code(x.kid[i], dst, E); };
    auto kf = [&](int i) { return as_float(x.kid[i], k(i)); };
    switch (x.fn) {
      case math_fn::tile: return read_elem(x.ref, source_index(x.ref, dst, E));
      case math_fn::scalar:
        return p_.scalars[x.ref].dt == dtype::f32 ? "__uint_as_float((u32)args.scalar[" + S(x.ref) + "])" : "(float)(long long)args.scalar[" + S(x.ref) + "]";
      case math_fn::imm: {
        const float v = __builtin_bit_cast(float, x.bits);
        if (v == neg_inf) return "(-__int_as_float(0x7f800000))";
        if (v == pos_inf) return "__int_as_float(0x7f800000)";
        return "__int_as_float(" + S(x.bits) + ")";
      }
      case math_fn::index: return "(long long)" + expr(x.ix);
      case math_fn::neg: return "(-" + kf(0) + ")";
      case math_fn::abs: return "fabsf(" + kf(0) + ")";
      case math_fn::exp2: {
        // (fma_share: elements below n modulo d by the polynomial; E is an unrolled loop's index, so no branch remains)
        const fma_share sh = fma_share_of(x);
        if (sh.n == 0) return "cake_dev::exp2f_fast(" + kf(0) + ")";
        if (sh.n == sh.d) return "cake_dev::exp2f_poly(" + kf(0) + ")";
        return "((" + E + ") % " + S(sh.d) + " < " + S(sh.n) + " ? cake_dev::exp2f_poly(" + kf(0) + ") : cake_dev::exp2f_fast(" + kf(0) + "))";
      }
      case math_fn::log2: return "cake_dev::log2f_fast(" + kf(0) + ")";
      case math_fn::exp: return "cake_dev::expf_fast(" + kf(0) + ")";
      case math_fn::log: return "cake_dev::logf_fast(" + kf(0) + ")";
      case math_fn::rcp: return "cake_dev::rcpf(" + kf(0) + ")";
      case math_fn::sqrt: return "sqrtf(" + kf(0) + ")";
      case math_fn::rsqrt: return "rsqrtf(" + kf(0) + ")";
      case math_fn::tanh: return "cake_dev::tanhf_fast(" + kf(0) + ")";
      case math_fn::erf: return "erff(" + kf(0) + ")";
      case math_fn::gelu_tanh: return "cake_dev::gelu_tanhf(" + kf(0) + ")";
      case math_fn::gelu_erf: return "cake_dev::gelu_erff(" + kf(0) + ")";
      case math_fn::silu: return "cake_dev::siluf(" + kf(0) + ")";
      case math_fn::sigmoid: return "cake_dev::sigmoidf(" + kf(0) + ")";
      case math_fn::relu: return "cake_dev::reluf(" + kf(0) + ")";
      case math_fn::round_bf16: return "cake_dev::bf16_to_f32(cake_dev::f32_to_bf16(" + kf(0) + "))";
      case math_fn::round_f16: return "cake_dev::f16_to_f32(cake_dev::f32_to_f16(" + kf(0) + "))";
      case math_fn::not_: return "(!" + k(0) + ")";
      case math_fn::add: return "(" + kf(0) + " + " + kf(1) + ")";
      case math_fn::sub: return "(" + kf(0) + " - " + kf(1) + ")";
      case math_fn::mul: return "(" + kf(0) + " * " + kf(1) + ")";
      case math_fn::div: return "(" + kf(0) + " / " + kf(1) + ")";
      case math_fn::max: return "fmaxf(" + kf(0) + ", " + kf(1) + ")";
      case math_fn::min: return "fminf(" + kf(0) + ", " + kf(1) + ")";
      case math_fn::lt:
      case math_fn::le:
      case math_fn::gt:
      case math_fn::ge:
      case math_fn::eq:
      case math_fn::ne: {
        constexpr const char* ops[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
        const char* o = ops[static_cast<int>(x.fn) - static_cast<int>(math_fn::lt)];
        for (const auto& h : mask_hoists_)
          if (h.node == n) return "(" + h.elem + o + "m" + S(n) + ")";
        const bool ints = node_type(x.kid[0]) == 'i' && node_type(x.kid[1]) == 'i';
        return ints ? "(" + k(0) + o + k(1) + ")" : "(" + kf(0) + o + kf(1) + ")";
      }
      case math_fn::and_: return "(" + k(0) + " && " + k(1) + ")";
      case math_fn::or_: return "(" + k(0) + " || " + k(1) + ")";
      case math_fn::fma: return "fmaf(" + kf(0) + ", " + kf(1) + ", " + kf(2) + ")";
      case math_fn::select: return "(" + k(0) + " ? " + kf(1) + " : " + kf(2) + ")";
      default: return "0.0f";
    }
  }
  bool expr_uses_position(int first, int count) const {
    for (int i = first; i < first + count; ++i)
      if (p_.exprs[i].fn == math_fn::index && (p_.exprs[i].ix.uses(var_kind::elem_row) || p_.exprs[i].ix.uses(var_kind::elem_col))) return true;
    return false;
  }
  // The element's position for masks: er / ec (see emitter::var_text).
  std::string position_decl(const plan::reg_layout& L, const std::string& E) const {
    return "const int er = " + row_of(L, E) + ", ec = " + col_of(L, E) + "; (void)er; (void)ec;";
  }

  // ---- compute ops ----------------------------------------------------------------------------------------
  void emit_fill(int id, const op& o) {
    const int r = o.d.index;
    const float v = __builtin_bit_cast(float, o.imm[0]);
    const auto& g = p_.regs[r];
    const int n = elements_per_thread(r);
    const std::string val = "__int_as_float(" + S(o.imm[0]) + ")";
    (void)id;
    (void)v;
    w_.line("#pragma unroll");
    if (g.dt == dtype::f32) w_.line("for (int e = 0; e < " + S(n) + "; ++e) " + reg_name(r) + "[e] = " + val + ";");
    else if (g.dt == dtype::i32) w_.line("for (int e = 0; e < " + S(n) + "; ++e) " + reg_name(r) + "[e] = (int)" + val + ";");
    else if (is16(r)) w_.line("for (int e = 0; e < " + S(n) + "; e += 2) " + write_pair(r, "e", val, val));
    else return fail(id, "fill of an 8-bit register tile is not lowered");
  }

  // ---- hoisting what only broadcast vectors feed -----------------------------------------------------------
  // In r.set(o, o * rcp(l)) the reciprocal depends on the row only: evaluated per element it costs a
  // correctly rounded rcp (a dozen instructions) for each of the thread's elements of o instead of for each
  // of its rows. A subexpression whose tile leaves are all row vectors (or all column vectors) of one layout,
  // with a function worth computing once (a division, transcendental, rcp, sqrt, ...), and no element
  // position, is evaluated once per vector element before the element loop.
  struct hoist {
    int node, leaf;
  };
  std::vector<hoist> hoisted_;
  static bool costly(math_fn f) {
    switch (f) {
      case math_fn::div: case math_fn::rcp: case math_fn::exp2: case math_fn::log2: case math_fn::exp: case math_fn::log: case math_fn::sqrt:
      case math_fn::rsqrt: case math_fn::tanh: case math_fn::erf: case math_fn::gelu_tanh: case math_fn::gelu_erf: case math_fn::silu: case math_fn::sigmoid:
        return true;
      default: return false;
    }
  }
  // Is node n fed only by vectors of one class and layout (leaf: one of them; -1 none yet)? costly: a costly function inside.
  bool vector_only(int n, plan::shape_class& cls, int& leaf, bool& cost) const {
    const expr_node& x = p_.exprs[n];
    if (x.fn == math_fn::tile) {
      const auto& L = lay(x.ref);
      if (L.cls != plan::shape_class::row_vec && L.cls != plan::shape_class::col_vec) return false;
      if (leaf >= 0 && (L.cls != cls || L.count != lay(leaf).count || L.f.kind != lay(leaf).f.kind)) return false;
      cls = L.cls, leaf = leaf >= 0 ? leaf : x.ref;
      return true;
    }
    if (x.fn == math_fn::index) return !x.ix.uses(var_kind::elem_row) && !x.ix.uses(var_kind::elem_col);
    if (x.fn == math_fn::scalar || x.fn == math_fn::imm) return true;
    if (node_type(n) != 'f') return false;
    cost = cost || costly(x.fn);
    for (int i = 0; i < info(x.fn).arity; ++i)
      if (!vector_only(x.kid[i], cls, leaf, cost)) return false;
    return true;
  }
  // A mask compares index expressions of the element's row / column with uniform ones (j * 128 + col() >
  // q * 128 + row()): per element that was 64-bit arithmetic on the whole expression. The comparison is
  // rewritten as (its element terms) OP (the rest moved to the other side), the rest evaluated once before
  // the element loop and clamped to int (the element terms are small, so the clamp keeps every outcome).
  struct mask_hoist {
    int node;
    std::string elem;  // the element terms, int text over er / ec
  };
  std::vector<mask_hoist> mask_hoists_;
  void find_mask_hoists(int first, int count) {
    for (int n = first; n < first + count; ++n) {
      const expr_node& x = p_.exprs[n];
      if (static_cast<int>(x.fn) < static_cast<int>(math_fn::lt) || static_cast<int>(x.fn) > static_cast<int>(math_fn::ne)) continue;
      const expr_node &a = p_.exprs[x.kid[0]], &b = p_.exprs[x.kid[1]];
      if (a.fn != math_fn::index || b.fn != math_fn::index) continue;
      // a - b = (element terms) + (the rest): the element terms on the left, the rest negated on the right. A
      // side that is not linear (a division or modulo of a sum) must hold no element terms: it is all rest.
      std::string elem, rest = "0LL";
      bool ok = true, uniform = false;
      auto split = [&](const index_expr& e, int sign) {
        const bool per_element = e.uses(var_kind::elem_row) || e.uses(var_kind::elem_col);
        if (!e.linear()) {
          ok = ok && !per_element;
          rest += (sign > 0 ? " + " : " - ") + expr(e);
          uniform = true;
          return;
        }
        if (e.constant != 0) rest += " + " + S(static_cast<long long>(sign) * e.constant) + "LL", uniform = true;
        for (int i = 0; i < e.term_count && ok; ++i) {
          const index_term& t = e.terms[i];
          if (t.coef == 0) continue;
          const long long c = static_cast<long long>(sign) * t.coef;
          if (t.kind == var_kind::elem_row || t.kind == var_kind::elem_col) {
            ok = t.plain();
            elem += (elem.empty() ? "" : " + ") + S(c) + " * " + (t.kind == var_kind::elem_row ? "er" : "ec");
          } else {
            std::string v = var_text(t);
            if (t.div != 1) v = "(" + v + " / " + S(t.div) + ")";
            if (t.mod != 0) v = "(" + v + " % " + S(t.mod) + ")";
            rest += " + " + S(c) + "LL * " + v;
            uniform = true;
          }
        }
      };
      split(a.ix, 1);
      split(b.ix, -1);
      if (!ok || elem.empty() || !uniform) continue;
      w_.line("const long long m" + S(n) + "_ll = -(" + rest + ");  // a mask's uniform side, once");
      w_.line("const int m" + S(n) + " = m" + S(n) + "_ll > 2147483647LL ? 2147483647 : m" + S(n) + "_ll < -2147483647LL ? -2147483647 : (int)m" + S(n) + "_ll;");
      mask_hoists_.push_back({n, "(" + elem + ")"});
    }
  }
  void find_hoists(int n, const plan::reg_layout& dst, std::vector<hoist>& found) const {
    plan::shape_class cls = plan::shape_class::full;
    int leaf = -1;
    bool cost = false;
    if (vector_only(n, cls, leaf, cost)) {
      if (leaf >= 0 && cost && lay(leaf).count < dst.count) found.push_back({n, leaf});
      return;
    }
    const expr_node& x = p_.exprs[n];
    if (x.fn == math_fn::tile || x.fn == math_fn::index || x.fn == math_fn::scalar || x.fn == math_fn::imm) return;
    for (int i = 0; i < info(x.fn).arity; ++i) find_hoists(x.kid[i], dst, found);
  }

  void emit_elementwise(int id, const op& o) {
    const int d = o.d.index;
    const auto& L = lay(d);
    const int root = o.imm[0] + o.imm[1] - 1;
    const bool pos = expr_uses_position(o.imm[0], o.imm[1]);
    const int n = L.count;
    hoisted_.clear();
    std::vector<hoist> found;
    if (L.cls == plan::shape_class::full) find_hoists(root, L, found);
    const bool scoped = !found.empty() || pos;
    if (scoped) w_.open("");
    mask_hoists_.clear();
    if (pos) find_mask_hoists(o.imm[0], o.imm[1]);
    for (const auto& h : found) {
      // (evaluated in the vector's own layout, element k; the subtrees found do not nest)
      const int c = lay(h.leaf).count;
      w_.line("float h" + S(h.node) + "[" + S(c) + "];  // once per " + (lay(h.leaf).cls == plan::shape_class::row_vec ? "row" : "column") + " held, not per element");
      w_.line("#pragma unroll");
      w_.line("for (int k = 0; k < " + S(c) + "; ++k) h" + S(h.node) + "[k] = " + as_float(h.node, node_code(h.node, lay(h.leaf), "k")) + ";");
      hoisted_.push_back(h);
    }
    struct clear_hoists {
      std::vector<hoist>& v;
      std::vector<mask_hoist>& m;
      ~clear_hoists() { v.clear(), m.clear(); }
    } done{hoisted_, mask_hoists_};
    w_.line("#pragma unroll");
    if (is16(d)) {
      // Pairs of adjacent elements are packed together; each element has its own position.
      w_.open("for (int e = 0; e < " + S(n) + "; e += 2)");
      w_.line("float v[2];");
      w_.line("#pragma unroll");
      w_.open("for (int h = 0; h < 2; ++h)");
      if (pos) w_.line(position_decl(L, "e + h"));
      w_.line("v[h] = " + as_float(root, node_code(root, L, "e + h")) + ";");
      w_.close();
      w_.line(write_pair(d, "e", "v[0]", "v[1]"));
      w_.close();
    } else if (p_.regs[d].dt == dtype::f32 || p_.regs[d].dt == dtype::i32) {
      w_.open("for (int e = 0; e < " + S(n) + "; ++e)");
      if (pos) w_.line(position_decl(L, "e"));
      w_.line(write_one(d, "e", as_float(root, node_code(root, L, "e"))));
      w_.close();
    } else {
      return fail(id, "r.set into an 8-bit register tile is not lowered (convert from f32 with r.convert)");
    }
    if (scoped) w_.close();
  }

  void emit_convert(int id, const op& o) {
    const int d = o.d.index, s = o.a.index;
    if (lay(d).lazy_src >= 0) {
      w_.line("// " + reg_name(d) + " is read as a conversion of " + reg_name(s) + " where it is used");
      return;
    }
    const auto& L = lay(d);
    const int n = L.count;
    if (is8(s) && lay(s).lazy_src < 0 && n % 2 == 0 && !is8(d)) {
      // from 8-bit floats: two elements per conversion (cvt.rn.f16x2.e4m3x2 on sm_89+)
      w_.line("#pragma unroll");
      if (p_.regs[d].dt == dtype::f16) {  // exact, one instruction per pair
        w_.line("for (int e = 0; e < " + S(n) + "; e += 2) " + reg_name(d) + "[e / 2] = cake_dev::fp8x2_to_f16x2<" + fp8_e(p_.regs[s].dt) + ">(" + reg_name(s) +
                "[e / 4] >> (8 * (e % 4)));");
        return;
      }
      w_.open("for (int e = 0; e < " + S(n) + "; e += 2)");
      w_.line("float lo, hi;");
      w_.line("cake_dev::fp8x2_to_f32<" + fp8_e(p_.regs[s].dt) + ">(" + reg_name(s) + "[e / 4] >> (8 * (e % 4)), lo, hi);");
      if (is16(d)) w_.line(write_pair(d, "e", "lo", "hi"));
      else w_.line(write_one(d, "e", "lo") + " " + write_one(d, "e + 1", "hi"));
      w_.close();
      return;
    }
    if (is8(d)) {
      // to 8-bit floats: four elements per word, two per conversion (cvt.rn.satfinite.e4m3x2.f32 on sm_89+)
      if (n % 4) return fail(id, "convert into an 8-bit register tile of a layout that holds no whole groups of 4 per thread is not lowered");
      const std::string e = fp8_e(p_.regs[d].dt);
      w_.line("#pragma unroll");
      w_.line("for (int e = 0; e < " + S(n) + "; e += 4) " + reg_name(d) + "[e / 4] = cake_dev::f32x2_to_fp8<" + e + ">(" + read_elem(s, "e") + ", " +
              read_elem(s, "e + 1") + ") | (cake_dev::f32x2_to_fp8<" + e + ">(" + read_elem(s, "e + 2") + ", " + read_elem(s, "e + 3") + ") << 16);");
      return;
    }
    w_.line("#pragma unroll");
    if (is16(d)) w_.line("for (int e = 0; e < " + S(n) + "; e += 2) " + write_pair(d, "e", read_elem(s, "e"), read_elem(s, "e + 1")));
    else w_.line("for (int e = 0; e < " + S(n) + "; ++e) " + write_one(d, "e", read_elem(s, "e")));
  }

  // Lanes of a warp that hold one row of a tile of layout L: butterfly distances Lo..Hi (Lo > Hi: none).
  static std::pair<int, int> row_lanes(const plan::reg_layout& L) {
    switch (L.f.kind) {
      case plan::frag_kind::wgmma_acc:
      case plan::frag_kind::mma_acc: return {1, 2};
      case plan::frag_kind::blocked: return {1, (L.f.tpr > 32 ? 32 : L.f.tpr) / 2};
      default: return {1, 0};
    }
  }
  // The identity and combine step of a reduction, as C++ text.
  static std::string identity(reduce_kind k) {
    return k == reduce_kind::sum ? "0.0f" : (k == reduce_kind::max || k == reduce_kind::argmax) ? "(-__int_as_float(0x7f800000))" : "__int_as_float(0x7f800000)";
  }
  static std::string combine(reduce_kind k, const std::string& a, const std::string& b) {
    return k == reduce_kind::sum ? "(" + a + " + " + b + ")" : k == reduce_kind::max ? "fmaxf(" + a + ", " + b + ")" : "fminf(" + a + ", " + b + ")";
  }

  // An accumulating row min / max / argmin / argmax directly in a loop whose trips visit ascending,
  // disjoint column ranges (col0 = coef * trip + invariant terms, coef >= the tile's width), when no other op
  // of the loop reads or writes its destination: each thread folds its own elements into partials kept in
  // registers across the trips (dr<op>, dri<op>), and the reduction across the row's lanes and the combine
  // with the destination run once, after the loop (emit_loop). Ties still go to the lowest column: a thread
  // meets its columns in increasing order, and the lanes and the destination are combined comparing indices.
  // Next to the k-means assignment's 128 x 128 tile this saves the per-tile shuffles and combine (~10% of
  // the consumer's instructions per tile).
  bool reduce_deferrable(int loop_id, int id) const {
    const op& o = p_.ops[id];
    if (o.parent != loop_id || !o.has(flag_accumulate) || o.has(flag_lazy_index)) return false;
    const auto k = static_cast<reduce_kind>(o.imm[0]);
    if (o.kind == op_kind::reduce_rows && k != reduce_kind::min && k != reduce_kind::max) return false;
    if (o.kind != op_kind::reduce_rows && o.kind != op_kind::arg_reduce_rows) return false;
    const auto& Ls = lay(o.a.index);
    if (Ls.f.kind == plan::frag_kind::blocked && Ls.f.tpr > 32) return false;
    if (is16(o.d.index)) return false;
    const int d = o.d.index, idx = o.kind == op_kind::arg_reduce_rows ? o.b.index : -1;
    // the column origin: ascending and disjoint per trip (arg only; min / max do not care about order)
    if (idx >= 0) {
      const index_expr& c = o.ix;
      if (c.div != 1 || c.mod != 0 || !c.valid) return false;
      bool stepped = false;
      for (int t = 0; t < c.term_count; ++t) {
        const index_term& x = c.terms[t];
        if (x.kind == var_kind::loop && x.ref == loop_id) {
          if (!x.plain() || x.coef < p_.regs[o.a.index].cols) return false;
          stepped = true;
        } else if (x.kind == var_kind::elem_row || x.kind == var_kind::elem_col) {
          return false;
        } else if ((x.kind == var_kind::loop || x.kind == var_kind::value) && x.ref > loop_id && x.ref < p_.ops[loop_id].end) {
          return false;  // defined inside the loop: not invariant
        }
      }
      if (!stepped) return false;
    }
    // no other op of the loop touches the destination
    auto touches = [&](const op& q) {
      auto is = [&](const operand& x, int r) { return r >= 0 && x.kind == operand_kind::reg && x.index == r; };
      for (int r : {d, idx})
        if (is(q.d, r) || is(q.a, r) || is(q.b, r)) return true;
      for (int e = q.expr_first(); e < q.expr_first() + q.expr_count(); ++e) {
        const auto& n = p_.exprs[static_cast<std::size_t>(e)];
        if (n.fn == math_fn::tile && (n.ref == d || (idx >= 0 && n.ref == idx))) return true;
      }
      return false;
    };
    for (int i = loop_id + 1; i < p_.ops[loop_id].end; ++i)
      if (i != id && touches(p_.ops[i])) return false;
    {  // nor its own source expression
      const op& self = o;
      for (int e = self.expr_first(); e < self.expr_first() + self.expr_count(); ++e) {
        const auto& n = p_.exprs[static_cast<std::size_t>(e)];
        if (n.fn == math_fn::tile && (n.ref == d || (idx >= 0 && n.ref == idx))) return false;
      }
      if (!self.has(flag_expr_src) && (self.a.index == d || self.a.index == idx)) return false;
    }
    return true;
  }
  std::vector<int> deferred_reduces_;  // ops whose cross-lane reduction runs after their loop
  bool deferred(int id) const {
    for (int x : deferred_reduces_)
      if (x == id) return true;
    return false;
  }
  // Before a loop: the partials of its deferrable reductions, at the identity.
  void open_deferred_reduces(int loop_id) {
    for (int i = loop_id + 1; i < p_.ops[loop_id].end; ++i) {
      if (!reduce_deferrable(loop_id, i)) continue;
      const op& o = p_.ops[i];
      const int slots = lay(o.d.index).count;
      const auto k = static_cast<reduce_kind>(o.imm[0]);
      const bool arg = o.kind == op_kind::arg_reduce_rows;
      w_.line("// op#" + S(i) + "'s row " + std::string(to_string(k)) + ": thread partials across the loop, reduced after it");
      w_.line("float dr" + S(i) + "[" + S(slots) + "];" + (arg ? " int dri" + S(i) + "[" + S(slots) + "];" : ""));
      w_.line("#pragma unroll");
      w_.line("for (int q = 0; q < " + S(slots) + "; ++q) { dr" + S(i) + "[q] = " + identity(k) + ";" + (arg ? " dri" + S(i) + "[q] = 0x7fffffff;" : "") + " }");
      deferred_reduces_.push_back(i);
    }
  }
  // After the loop: each deferred reduction's lanes, then its destination.
  void close_deferred_reduces(int loop_id) {
    for (int i = loop_id + 1; i < p_.ops[loop_id].end; ++i) {
      if (!deferred(i)) continue;
      const op& o = p_.ops[i];
      const bool arg = o.kind == op_kind::arg_reduce_rows;
      const int slots = lay(o.d.index).count;
      w_.open("");
      w_.line("float red[" + S(slots) + "];");
      if (arg) w_.line("int redi[" + S(slots) + "];");
      w_.line("#pragma unroll");
      w_.line("for (int q = 0; q < " + S(slots) + "; ++q) { red[q] = dr" + S(i) + "[q];" + (arg ? " redi[q] = dri" + S(i) + "[q];" : "") + " }");
      emit_reduce_tail(i, o);
      w_.close();
      std::erase(deferred_reduces_, i);
    }
  }

  void emit_reduce(int id, const op& o) {
    const int d = o.d.index, s = o.a.index;
    const auto& Ls = lay(s);
    const auto& Ld = lay(d);
    const auto k = static_cast<reduce_kind>(o.imm[0]);
    const bool arg = o.kind == op_kind::arg_reduce_rows;
    const int slots = Ld.count;
    // lazy_index(): rows that span more than a warp fall back to the plain form (same results).
    if (arg && o.has(flag_lazy_index) && o.has(flag_accumulate) && !(Ls.f.kind == plan::frag_kind::blocked && Ls.f.tpr > 32))
      return emit_lazy_arg_reduce(o, Ls, Ld, k, slots, d, o.b.index);
    const bool defer = deferred(id);
    const std::string red = defer ? "dr" + S(id) : "red", redi = defer ? "dri" + S(id) : "redi";
    w_.open("");
    if (!defer) {
      w_.line("float red[" + S(slots) + "];");
      if (arg) w_.line("int redi[" + S(slots) + "];");
      w_.line("#pragma unroll");
      w_.line("for (int q = 0; q < " + S(slots) + "; ++q) { red[q] = " + identity(k) + ";" + (arg ? " redi[q] = 0x7fffffff;" : "") + " }");
    }
    if (arg) w_.line("const long long col0 = " + expr(o.ix) + ";");
    // Thread-local part: a thread's elements of one row are visited in increasing column order (every
    // fragment layout numbers them so), so a strict comparison keeps the smallest index among ties
    // without comparing indices (one compare and two selects per element).
    w_.line("#pragma unroll");
    w_.open("for (int e = 0; e < " + S(Ls.count) + "; ++e)");
    w_.line("const int q = " + row_slot(Ls.f, "e") + ";");
    if (o.has(flag_expr_src)) {  // the expression, evaluated here element by element (laid out as its lead leaf s)
      const int root = o.expr_first() + o.expr_count() - 1;
      if (expr_uses_position(o.expr_first(), o.expr_count())) w_.line(position_decl(Ls, "e"));
      w_.line("const float x = " + as_float(root, node_code(root, Ls, "e")) + ";");
    } else {
      w_.line("const float x = " + read_elem(s, "e") + ";");
    }
    if (arg) {
      w_.line("const int c = (int)(col0 + " + col_of(Ls, "e") + ");");
      const char* better = k == reduce_kind::argmin ? "<" : ">";
      w_.line(std::string("if (x ") + better + " " + red + "[q]) { " + red + "[q] = x; " + redi + "[q] = c; }");
    } else {
      w_.line(red + "[q] = " + combine(k, red + "[q]", "x") + ";");
    }
    w_.close();
    if (!defer) emit_reduce_tail(id, o);
    w_.close();
  }
  // The part of a row reduction after the thread-local fold (red / redi in scope): across the row's lanes
  // and warps, then into the destination (combined with its current value when accumulating).
  void emit_reduce_tail(int id, const op& o) {
    const int d = o.d.index;
    const auto& Ls = lay(o.a.index);
    const auto k = static_cast<reduce_kind>(o.imm[0]);
    const bool arg = o.kind == op_kind::arg_reduce_rows;
    const int slots = lay(d).count;
    const int idx = arg ? o.b.index : -1;
    // Across the lanes of a warp that hold the row.
    const auto [lo, hi] = row_lanes(Ls);
    if (lo <= hi) {
      w_.line("#pragma unroll");
      const std::string fn = arg ? (k == reduce_kind::argmin ? "warp_argmin" : "warp_argmax") : (k == reduce_kind::sum ? "warp_sum" : k == reduce_kind::max ? "warp_max" : "warp_min");
      if (arg) w_.line("for (int q = 0; q < " + S(slots) + "; ++q) cake_dev::" + fn + "<" + S(lo) + ", " + S(hi) + ">(red[q], redi[q]);");
      else w_.line("for (int q = 0; q < " + S(slots) + "; ++q) red[q] = cake_dev::" + fn + "<" + S(lo) + ", " + S(hi) + ">(red[q]);");
    }
    // Across the warps of the unit that share a row (blocked rows wider than a warp).
    if (Ls.f.kind == plan::frag_kind::blocked && Ls.f.tpr > 32) emit_cross_warp(id, Ls, k, arg, slots);
    // Into the destination (combined with its current value when accumulating).
    w_.line("#pragma unroll");
    w_.open("for (int q = 0; q < " + S(slots) + "; ++q)");
    if (arg) {
      const char* better = k == reduce_kind::argmin ? "<" : ">";
      if (o.has(flag_accumulate))
        w_.line(std::string("if (!(") + read_elem(d, "q") + " " + better + "= red[q] && (" + read_elem(d, "q") + " != red[q] || " + reg_name(idx) +
                "[q] <= redi[q]))) { " + write_one(d, "q", "red[q]") + " " + reg_name(idx) + "[q] = redi[q]; }");
      else w_.line(write_one(d, "q", "red[q]") + " " + reg_name(idx) + "[q] = redi[q];");
    } else {
      const std::string v = o.has(flag_accumulate) ? combine(k, read_elem(d, "q"), "red[q]") : "red[q]";
      if (is16(d)) return fail(id, "a row reduction into a 16-bit vector is not lowered (reduce into an f32 vector)");
      w_.line(write_one(d, "q", v));
    }
    w_.close();
  }
  // An accumulating argmin / argmax with lazy_index(): pass 1 keeps only each row's best value of the
  // tile (one min / max per element, then across the row's lanes); where some row of the warp beats its
  // running value, pass 2 re-evaluates that row's elements and keeps the lowest column that equals the
  // tile's best (the first in column order, so ties still go to the smallest index; a tile's value
  // that only ties the running one keeps the running, earlier index). NaN never wins in either form.
  void emit_lazy_arg_reduce(const op& o, const plan::reg_layout& Ls, const plan::reg_layout& Ld, reduce_kind k, int slots, int d, int idx) {
    (void)Ld;
    const bool is_min = k == reduce_kind::argmin;
    const char* better = is_min ? "<" : ">";
    const bool expr_src = o.has(flag_expr_src);
    const int root = expr_src ? o.expr_first() + o.expr_count() - 1 : -1;
    const bool pos = expr_src && expr_uses_position(o.expr_first(), o.expr_count());
    auto value_of = [&](const std::string& e) { return expr_src ? as_float(root, node_code(root, Ls, e)) : read_elem(o.a.index, e); };
    w_.open("");
    w_.line("// row_" + std::string(is_min ? "argmin" : "argmax") + ", index found lazily: pass 1, the tile's best value of each row");
    w_.line("float red[" + S(slots) + "];");
    w_.line("#pragma unroll");
    w_.line("for (int q = 0; q < " + S(slots) + "; ++q) red[q] = " + identity(k) + ";");
    w_.line("#pragma unroll");
    w_.open("for (int e = 0; e < " + S(Ls.count) + "; ++e)");
    w_.line("const int q = " + row_slot(Ls.f, "e") + ";");
    if (pos) w_.line(position_decl(Ls, "e"));
    w_.line("red[q] = " + std::string(is_min ? "fminf" : "fmaxf") + "(red[q], " + value_of("e") + ");");
    w_.close();
    const auto [lo, hi] = row_lanes(Ls);
    if (lo <= hi) {
      w_.line("#pragma unroll");
      w_.line("for (int q = 0; q < " + S(slots) + "; ++q) red[q] = cake_dev::" + std::string(is_min ? "warp_min" : "warp_max") + "<" + S(lo) + ", " + S(hi) +
              ">(red[q]);");
    }
    w_.line("const long long col0 = " + expr(o.ix) + ";");
    w_.line("#pragma unroll");
    w_.open("for (int q = 0; q < " + S(slots) + "; ++q)");
    // A tile value equal to the running one (not the identity: no element reached it) wins only with a
    // smaller column, as in the plain form's combine.
    w_.line("const float cur = " + read_elem(d, "q") + ";");
    w_.line("const bool wins = red[q] " + std::string(better) + " cur || (red[q] == cur && red[q] != " + identity(k) + ");");
    w_.line("// pass 2 (when a row of the warp improved): the lowest column of the row that holds its best");
    w_.open(lo <= hi ? "if (__any_sync(0xffffffffu, wins))" : "if (wins)");
    w_.line("int at = 0x7fffffff;");
    w_.open("if (wins)");
    w_.line("#pragma unroll");
    w_.open("for (int e = 0; e < " + S(Ls.count) + "; ++e)");
    w_.line("if (" + row_slot(Ls.f, "e") + " != q) continue;");
    if (pos) w_.line(position_decl(Ls, "e"));
    w_.line("if (" + value_of("e") + " == red[q]) at = min(at, (int)" + col_of(Ls, "e") + ");");
    w_.close();
    w_.close();
    if (lo <= hi) w_.line("at = cake_dev::warp_min_int<" + S(lo) + ", " + S(hi) + ">(at);");
    w_.line("if (wins && (red[q] != cur || col0 + at < (long long)" + reg_name(idx) + "[q])) { " + write_one(d, "q", "red[q]") + " " + reg_name(idx) +
            "[q] = (int)(col0 + at); }");
    w_.close();
    w_.close();
    w_.close();
  }
  // ---- memory: register tile <-> global / shared ---------------------------------------------------------
  // Consecutive elements of a tile that are consecutive columns of one row (one vector access).
  int group_of(int r) const {
    const auto& L = lay(r);
    if (L.cls == plan::shape_class::row_vec || L.cls == plan::shape_class::scalar) return 1;
    switch (L.f.kind) {
      case plan::frag_kind::blocked: return L.f.vec;
      case plan::frag_kind::wgmma_acc:
      case plan::frag_kind::mma_acc: return 2;
      case plan::frag_kind::tmem_rows: return L.count < 8 ? L.count : 8;
      default: return 1;
    }
  }
  // Which tensor dims a register tile's rows and columns run along: (row dim position or -1, col position).
  std::pair<int, int> tile_dims(const global_tile_ref& ref, int r) const {
    const auto cls = lay(r).cls;
    if (ref.rank == 1) return cls == plan::shape_class::row_vec ? std::pair{0, -1} : std::pair{-1, 0};
    return {ref.row_pos != no_index ? ref.row_pos : ref.rank - 2, ref.rank - 1};
  }
  // Declares base (element pointer offset of the tile's origin), row0/col0 and the in-bounds test of the
  // dims the tile does not span. Returns the C++ condition for "the other dims are inside".
  // tile_rows / tile_cols: the tile's extent when it is not the register tile's shape (a top-k state
  // stores rows x k).
  std::string global_origin(const operand& g, int r, int tile_rows = -1, int tile_cols = -1) {
    const auto [rd, cd] = tile_dims(p_.tile_refs[g.index], r);
    return global_origin_along(g, rd, cd, tile_rows > 0 ? tile_rows : p_.regs[r].rows, tile_cols > 0 ? tile_cols : p_.regs[r].cols);
  }
  // The same for a tile of tile_rows x tile_cols whose rows run along dim rd and columns along dim cd
  // (-1: the tile does not span a dim there); cp.async boxes use it directly.
  std::string global_origin_along(const operand& g, int rd, int cd, int tile_rows, int tile_cols) {
    const auto& ref = p_.tile_refs[g.index];
    const auto& t = p_.tensors[ref.tensor];
    const std::string ti = S(ref.tensor);
    std::string base = "0LL", inside = "true";
    // The extent of dim i, ended early by .limit(i, end).
    auto end_of = [&](int i) {
      const std::string d = dim_name(t.dims[i]);
      return ref.has_limit() && ref.limit_pos == i ? "cake_dev::min_ll(" + d + ", " + expr(ref.limit) + ")" : d;
    };
    for (int i = 0; i < ref.rank; ++i) {
      const std::string c = expr(ref.coords[i]);
      const bool el = ref.element_coord(i);  // .elements_at(i): an element index, not a tile index
      if (i == rd) w_.line("const long long row0 = " + c + (el ? "" : " * " + S(tile_rows) + "LL") + ";");
      else if (i == cd) w_.line("const long long col0 = " + c + (el ? "" : " * " + S(tile_cols) + "LL") + ";");
      else {
        base += " + " + c + " * args.stride[" + ti + "][" + S(i) + "]";
        inside += " && " + c + " < " + end_of(i);
      }
    }
    if (rd < 0) w_.line("const long long row0 = 0;");
    if (cd < 0) w_.line("const long long col0 = 0;");
    w_.line("const long long base = " + base + ";");
    w_.line("const long long rows = " + (rd >= 0 ? end_of(rd) : std::string("1")) + ", cols = " + (cd >= 0 ? end_of(cd) : std::string("1")) +
            ", ld = " + (rd >= 0 ? "args.stride[" + ti + "][" + S(rd) + "]" : std::string("0")) + ";");
    w_.line("const bool inside = " + inside + ";");
    w_.line("(void)row0; (void)col0; (void)rows; (void)cols; (void)ld;");
    return "inside";
  }
  // Raw bits of element j of a group held in u32 raw[]: C++ text of a float.
  static std::string raw_to_float(dtype d, const std::string& j) {
    switch (d) {
      case dtype::f32: return "__uint_as_float(raw[" + j + "])";
      case dtype::i32: return "(float)(int)raw[" + j + "]";
      case dtype::bf16: return "__uint_as_float((raw[(" + j + ") / 2] >> (16 * ((" + j + ") % 2))) << 16)";
      case dtype::f16: return "cake_dev::f16_to_f32((u16)(raw[(" + j + ") / 2] >> (16 * ((" + j + ") % 2))))";
      case dtype::e4m3:
      case dtype::e5m2: return "cake_dev::fp8_to_f32<" + fp8_e(d) + ">(raw[(" + j + ") / 4], (" + j + ") % 4)";
      default: return "0.0f";
    }
  }
  // Statement storing float v as element j of raw[] (16-bit: into its half of the word).
  static std::string float_to_raw(dtype d, const std::string& j, const std::string& v) {
    switch (d) {
      case dtype::f32: return "raw[" + j + "] = __float_as_uint(" + v + ");";
      case dtype::i32: return "raw[" + j + "] = (u32)(int)(" + v + ");";
      case dtype::bf16:
        return "raw[(" + j + ") / 2] = (raw[(" + j + ") / 2] & (0xffff0000u >> (16 * ((" + j + ") % 2)))) | ((u32)cake_dev::f32_to_bf16(" + v + ") << (16 * ((" + j + ") % 2)));";
      case dtype::f16:
        return "raw[(" + j + ") / 2] = (raw[(" + j + ") / 2] & (0xffff0000u >> (16 * ((" + j + ") % 2)))) | ((u32)cake_dev::f32_to_f16(" + v + ") << (16 * ((" + j + ") % 2)));";
      case dtype::e4m3:
      case dtype::e5m2:
        return "raw[(" + j + ") / 4] = (raw[(" + j + ") / 4] & ~(0xffu << (8 * ((" + j + ") % 4)))) | ((cake_dev::f32x2_to_fp8<" + fp8_e(d) + ">(" + v +
               ", 0.0f) & 0xffu) << (8 * ((" + j + ") % 4)));";
      default: return ";";
    }
  }
  // Global element pointer text for (gr, gc) of tensor t.
  std::string gptr(int tensor, const std::string& type) const {
    return "(static_cast<" + type + "*>(args.ptr[" + S(tensor) + "]) + base + gr * ld + gc)";
  }
  static std::string raw_type(dtype d) { return size_bits(d) == 16 ? "unsigned short" : size_bits(d) == 8 ? "unsigned char" : "unsigned"; }

  // load_global / store_global / atomic_add of a whole register tile, in groups of consecutive columns:
  // one vector access when the group is inside the tensor and aligned, element by element otherwise.
  // scatter_store takes the store path with row idx[i] (o.b) for row i of the tile, skipping invalid rows.
  void emit_global_tile(int id, const op& o) {
    const bool load = o.kind == op_kind::load_global;
    const bool atomic = o.kind == op_kind::atomic_add;
    const bool scatter = o.kind == op_kind::scatter_store;
    const operand& g = load ? o.a : o.d;
    const int r = load ? o.d.index : o.a.index;
    const auto& L = lay(r);
    const auto& ref = p_.tile_refs[g.index];
    const dtype td = p_.tensors[ref.tensor].dt;
    if (scatter && (td == dtype::i64 || ref.rank != 2)) return fail(id, "scatter_store is lowered into 2-D tensors of 16- and 32-bit dtypes");
    if (td == dtype::i64) return emit_global_i64(id, o, g, r);
    const int eb = size_bits(td) / 8;
    if (eb < 2) return fail(id, "register loads and stores of 8-bit tensors are not lowered");
    int grp = group_of(r);
    while (grp > 1 && grp * eb > 16) grp /= 2;
    // f32 atomics: groups of 2 or 4 adjacent columns are one vector reduction on sm_90a / sm_100a
    // (red_f32_group); single elements otherwise (sm_80, other group sizes).
    if (atomic && td == dtype::f32 && !(vector_red() && (grp == 2 || grp == 4))) grp = 1;
    if (atomic && td != dtype::f32 && !(is16(r) || p_.regs[r].dt == dtype::f32)) return fail(id, "atomic_add of this tile is not lowered");
    if (atomic && td != dtype::f32 && td != dtype::bf16) return fail(id, "atomic_add is lowered for f32 and bf16 tensors");
    if (atomic && td == dtype::bf16 && p_.target == target_id::sm_80) return fail(id, "bf16 atomic_add needs sm_90a or sm_100a (red.add.bf16x2)");
    if (atomic && td == dtype::bf16 && grp > 2) grp = 2;
    const int words = (grp * eb + 3) / 4;
    const std::string fill = "__int_as_float(" + S(o.imm[2]) + ")";
    w_.open("");
    const std::string inside = global_origin(g, r);
    const std::string ty = raw_type(td);
    if (load) {
      // Whole tiles get a path with no branch between their loads, so that every load is issued before
      // the first is waited on. With only a branch per group (the first form), the compiler started
      // using the first groups (and waited for their loads) before it issued the last group's load: on
      // the H200 the row kernels with 4 loads per thread ran at 60% of the copy bandwidth.
      const bool add = o.has(flag_accumulate);  // r.load_add: into an f32 tile (support.hpp)
      const auto into_tile = [&] {
        if (add) {
          w_.line("#pragma unroll");
          w_.line("for (int j = 0; j < " + S(grp) + "; ++j) " + write_one(r, "e0 + j", read_elem(r, "e0 + j") + " + " + raw_to_float(td, "j")));
        } else if (is16(r) && p_.regs[r].dt == td && grp % 2 == 0) {  // same 16-bit dtype: whole words
          w_.line("#pragma unroll");
          w_.line("for (int q = 0; q < " + S(grp / 2) + "; ++q) " + reg_name(r) + "[e0 / 2 + q] = raw[q];");
        } else if (is16(r)) {
          w_.line("#pragma unroll");
          w_.line("for (int j = 0; j < " + S(grp) + "; j += 2) " + write_pair(r, "e0 + j", raw_to_float(td, "j"), raw_to_float(td, "j + 1")));
        } else {
          w_.line("#pragma unroll");
          w_.line("for (int j = 0; j < " + S(grp) + "; ++j) " + write_one(r, "e0 + j", raw_to_float(td, "j")));
        }
      };
      const auto group_head = [&] {
        w_.line("#pragma unroll");
        w_.open("for (int e0 = 0; e0 < " + S(L.count) + "; e0 += " + S(grp) + ")");
        w_.line("const long long gr = row0 + " + row_of(L, "e0") + ", gc = col0 + " + col_of(L, "e0") + ";");
        w_.line("const bool row_in = " + inside + " && gr < rows;");
        w_.line("const " + ty + "* src = " + gptr(ref.tensor, "const " + ty) + ";");
      };
      const std::string vec_ld = "for (int q = 0; q < " + S(words) + "; q += 4 > " + S(words) + " ? " + S(words) + " : 4) cake_dev::ld_global_words<" +
                                 S(words < 4 ? words : 4) + ">(raw + q, reinterpret_cast<const u32*>(src) + q);";
      const std::string whole = "row_in && gc + " + S(grp) + " <= cols && (reinterpret_cast<unsigned long long>(src) % " + S(grp * eb) + "u) == 0";
      const bool vectors = grp * eb >= 4;  // 2-byte groups (one 16-bit element) are element loads only
      // (a) Every group this thread loads whole (inside the tensor and aligned; whole tiles, the common
      // case): plain vector loads, nothing else in between. (b) Every group whole or wholly outside the
      // tensor (ragged tails whose width is a multiple of the group): predicated vector loads over the
      // fill value. Measured on the H200: for tiles in the blocked layout of up to 16 groups per thread
      // (the row kernels'), (b) alone ran whole rows 2-3% slower than (a) first; for a bias vector in an
      // accumulator's layout (next to a 64 x 256 accumulator: 32 groups) (b) alone ran the bias+GELU GEMM
      // about 1.5% faster, and (a) + (b) spilled there and next to the ping-pong's 128 x 128 (ptxas 13.0).
      // Other full tiles (e.g. a residual tile in an accumulator's layout) take neither: with (b) the
      // residual epilogues spilled (tests/lowering: the fused-epilogue configurations).
      const bool plain_path = L.f.kind == plan::frag_kind::blocked && (L.count + grp - 1) / grp <= 16;
      const bool fast_paths = plain_path || L.cls != plan::shape_class::full;
      // (r.load_add only for now: a fused epilogue's residual tile would take the same path, which has not
      // run on a GPU for it yet)
      const bool whole_tile_path =
          o.has(flag_accumulate) && L.cls == plan::shape_class::full && (L.f.kind == plan::frag_kind::wgmma_acc || L.f.kind == plan::frag_kind::mma_acc);
      // The fill value as raw words of the tensor's dtype (16-bit: the value in both halves).
      const std::string fill_bits = td == dtype::f32 ? "__float_as_uint(" + fill + ")"
                                    : td == dtype::i32 ? "(u32)(int)" + fill
                                    : "((u32)cake_dev::f32_to_" + std::string(td == dtype::bf16 ? "bf16" : "f16") + "(" + fill + ") * 0x10001u)";
      // One group whole or wholly outside: the fill value, and the vector load where `inside` holds.
      const auto load_or_fill = [&](const std::string& inside_test) {
        w_.line("u32 raw[" + S(words) + "];");
        w_.line("#pragma unroll");
        w_.line("for (int q = 0; q < " + S(words) + "; ++q) raw[q] = " + fill_bits + ";");
        w_.line("if (" + inside_test + ")");
        w_.line("  #pragma unroll");
        w_.line("  " + vec_ld);
        into_tile();
      };
      const bool pair_vector = L.cls == plan::shape_class::col_vec && grp == 2 &&
                               (L.f.kind == plan::frag_kind::wgmma_acc || L.f.kind == plan::frag_kind::mma_acc);
      if (vectors && fast_paths) {
        w_.line(plain_path ? "bool whole_groups = true, whole_or_outside = true;" : "bool whole_or_outside = true;");
        if (!pair_vector) group_head();
        else w_.open("");
        if (plain_path) {
          w_.line("const bool whole = " + whole + ";");
          w_.line("whole_groups = whole_groups && whole;");
          w_.line("whole_or_outside = whole_or_outside && (whole || !row_in || gc >= cols);");
        } else if (!pair_vector) {
          w_.line("whole_or_outside = whole_or_outside && ((" + whole + ") || !row_in || gc >= cols);");
        }
        w_.close();
        if (pair_vector) {
          // A column vector in an MMA fragment's layout: the thread's groups are column pairs at even
          // offsets from col0 on one row, so every group is whole or wholly outside when the row's first
          // pair is aligned and the tensor's edge falls on a pair boundary (or past the tile): one test
          // instead of one per group (16 per thread next to a 64 x 128 accumulator).
          w_.open("");
          w_.line("const long long gr = row0, gc = col0;");
          w_.line("const " + ty + "* src = " + gptr(ref.tensor, "const " + ty) + ";");
          w_.line("whole_or_outside = !(" + inside + " && gr < rows) || ((cols - gc) % " + S(grp) + " == 0 || gc + " + S(L.f.cols) +
                  " <= cols) && (reinterpret_cast<unsigned long long>(src) % " + S(grp * eb) + "u) == 0;");
          w_.close();
        }
        if (plain_path) {
          w_.open("if (whole_groups)");
          group_head();
          w_.line("(void)row_in;");
          w_.line("u32 raw[" + S(words) + "];");
          w_.line("#pragma unroll");
          w_.line(vec_ld);
          into_tile();
          w_.close();
          w_.close();
          w_.open("else if (whole_or_outside)");
        } else {
          w_.open("if (whole_or_outside)");
        }
        if (pair_vector) {
          // One row (plain_path never holds here): its pointer and the columns left past the tile's origin
          // are computed once; each pair is then a constant offset and one 32-bit test (per pair, the row's
          // address and bounds in 64 bits cost ~10 instructions that ptxas did not hoist out of the
          // predicated loads: next to the k-means argmin, a fifth of the consumer's instructions per tile).
          w_.line("const long long gr = row0, gc = col0;");
          w_.line("const bool row_in = " + inside + " && gr < rows;");
          w_.line("const long long left = row_in ? cols - gc : 0;");
          w_.line("const int lim = left < " + S(L.f.cols) + " ? (int)left : " + S(L.f.cols) + ";");
          w_.line("const " + ty + "* src0 = " + gptr(ref.tensor, "const " + ty) + ";");
          w_.line("#pragma unroll");
          w_.open("for (int e0 = 0; e0 < " + S(L.count) + "; e0 += " + S(grp) + ")");
          w_.line("const int c = " + col_of(L, "e0") + ";");
          w_.line("const " + ty + "* src = src0 + c;");
          load_or_fill("c < lim");
        } else {
          group_head();
          load_or_fill("row_in && gc < cols");
        }
        w_.close();
        w_.close();
        w_.open("else");
      } else if (vectors && whole_tile_path) {
        // A full tile in an MMA fragment's layout added into the tile (another split's partial sums): when the whole
        // tile lies inside the tensor and its groups are aligned (one test), branch-free vector loads in
        // batches, each batch issued before any of it is used. With only the branch per group below, each
        // group's load was used before the next was issued (PTX: load, add, branch, per group): the global-sum
        // split-K's last CTA waited one L2 round trip per group and part (2 x 48 at 128 x 192 over 3 splits;
        // 0.064 ms on the H200 at 512 x 2112 x 7168, 0.048 with this path; docs/gemm.md). A batch holds
        // whole_tile_batch_regs of the role's cap, not a second tile.
        const int cap = role_decl_().regs ? role_decl_().regs : plan_.warps.entry_regs;
        const int batch = std::max(1, whole_tile_batch_regs(cap) / words) * grp;
        // Addresses from one pointer to the thread's first element: an element's row and column differ from
        // the first's by constants in an MMA fragment, so each load is that pointer plus a constant (or one
        // row stride times a constant), not 64-bit row and column arithmetic per group, which the compiler
        // kept live from the tile's other accesses (spills at 168 and at 255 registers). The path for tiles
        // that are not whole (below) takes its addresses from the same pointer.
        w_.line("const int rt = " + row_of(L, "0") + ", ct = " + col_of(L, "0") + ";");
        w_.line("const " + ty + "* tp = static_cast<const " + ty + "*>(args.ptr[" + S(ref.tensor) + "]) + base + (row0 + rt) * ld + col0 + ct;");
        w_.line("const bool tile_whole = " + inside + " && row0 + " + S(L.f.rows) + " <= rows && col0 + " + S(L.f.cols) + " <= cols && ld % " + S(grp) +
                " == 0 && (reinterpret_cast<unsigned long long>(tp - ct) % " + S(grp * eb) + "u) == 0;");
        w_.open("if (tile_whole)");
        w_.line("#pragma unroll");
        w_.open("for (int b0 = 0; b0 < " + S(L.count) + "; b0 += " + S(batch) + ")");
        w_.line("u32 rawb[" + S(batch / grp) + "][" + S(words) + "];");
        w_.line("#pragma unroll");
        w_.open("for (int e0 = b0; e0 < b0 + " + S(batch) + " && e0 < " + S(L.count) + "; e0 += " + S(grp) + ")");
        const auto [br, bc] = acc_offset(L, "e0");
        w_.line("const " + ty + "* src = tp + (long long)" + br + " * ld + " + bc + ";");
        w_.line("#pragma unroll");
        w_.line("for (int q = 0; q < " + S(words) + "; q += 4 > " + S(words) + " ? " + S(words) + " : 4) cake_dev::ld_global_words<" + S(words < 4 ? words : 4) +
                ">(rawb[(e0 - b0) / " + S(grp) + "] + q, reinterpret_cast<const u32*>(src) + q);");
        w_.close();
        w_.line("#pragma unroll");
        w_.open("for (int e0 = b0; e0 < b0 + " + S(batch) + " && e0 < " + S(L.count) + "; e0 += " + S(grp) + ")");
        w_.line("const u32* raw = rawb[(e0 - b0) / " + S(grp) + "];");
        into_tile();
        w_.close();
        w_.close();
        w_.close();
        w_.open("else");
      } else {
        w_.open("");
      }
      // Otherwise (ragged tails, masked rows, misaligned views): a branch per group, element by element
      // where a group is not whole. Measured on the H200 against two branch-free forms of this path
      // (predicated vector loads of the whole groups first, then the partial groups with predicated
      // element loads, or a branch each): both ran rows of 5000 columns at 58-63% of the copy bandwidth,
      // this one at 80%; the branch-free forms also spilled next to a GEMM accumulator.
      if (vectors && whole_tile_path) {
        const auto [dr, dc] = acc_offset(L, "e0");
        w_.line("#pragma unroll");
        w_.open("for (int e0 = 0; e0 < " + S(L.count) + "; e0 += " + S(grp) + ")");
        w_.line("const long long gr = row0 + rt + " + dr + ", gc = col0 + ct + " + dc + ";");
        w_.line("const bool row_in = " + inside + " && gr < rows;");
        w_.line("const " + ty + "* src = tp + (long long)" + dr + " * ld + " + dc + ";");
      } else {
        group_head();
      }
      w_.line("u32 raw[" + S(words) + "] = {};");
      if (vectors) {
        w_.open("if (" + whole + ")");
        w_.line("#pragma unroll");
        w_.line(vec_ld);
        w_.close();
        w_.open("else");
      } else {
        w_.open("");
      }
      w_.line("#pragma unroll");
      if (eb == 4) {  // f32 / i32: the bits as they are
        w_.line("for (int j = 0; j < " + S(grp) + "; ++j) raw[j] = (row_in && gc + j < cols) ? reinterpret_cast<const u32*>(src)[j] : " + fill_bits + ";");
      } else {
        w_.line("for (int j = 0; j < " + S(grp) + "; ++j) { const float v = (row_in && gc + j < cols) ? " +
                std::string(td == dtype::bf16 ? "cake_dev::bf16_to_f32(src[j])" : "cake_dev::f16_to_f32(src[j])") + " : " + fill + "; " +
                float_to_raw(td, "j", "v") + " }");
      }
      w_.close();
      into_tile();
      w_.close();
      w_.close();
      w_.close();
      return;
    }
    w_.line("#pragma unroll");
    w_.open("for (int e0 = 0; e0 < " + S(L.count) + "; e0 += " + S(grp) + ")");
    if (scatter) w_.line("const long long gr = (long long)" + reg_name(o.b.index) + "[" + source_index(o.b.index, L, "e0") + "], gc = col0 + " + col_of(L, "e0") + ";");
    else w_.line("const long long gr = row0 + " + row_of(L, "e0") + ", gc = col0 + " + col_of(L, "e0") + ";");
    // An atomic row (column) vector adds each row's (column's) value once; a store may write the same value
    // from every copy.
    const std::string owner = !atomic ? "" : L.cls == plan::shape_class::row_vec ? " && " + row_owner(L) : L.cls == plan::shape_class::col_vec ? " && " + col_owner(L) : "";
    w_.line("const bool row_in = " + inside + owner + (scatter ? " && gr >= 0" : "") + " && gr < rows;");
    w_.line("u32 raw[" + S(words) + "] = {};");
    {
      // From the register tile into raw[] in the tensor's dtype.
      if (is16(r) && p_.regs[r].dt == td && grp % 2 == 0 && lay(r).lazy_src < 0) {
        w_.line("#pragma unroll");
        w_.line("for (int q = 0; q < " + S(grp / 2) + "; ++q) raw[q] = " + reg_name(r) + "[e0 / 2 + q];");
      } else if (is16(r) && p_.regs[r].dt == td && grp % 2 == 0) {
        w_.line("#pragma unroll");
        w_.line("for (int q = 0; q < " + S(grp / 2) + "; ++q) raw[q] = " + packed_pair(r, "e0 + 2 * q") + ";");
      } else {
        w_.line("#pragma unroll");
        w_.line("for (int j = 0; j < " + S(grp) + "; ++j) { " + float_to_raw(td, "j", read_elem(r, "e0 + j")) + " }");
      }
      w_.line(ty + "* dst = " + gptr(ref.tensor, ty) + ";");
      if (atomic) {
        if (td == dtype::f32 && grp > 1) {
          w_.line(red_f32_group(grp, "reinterpret_cast<float*>(dst)", "row_in"));
        } else if (td == dtype::f32) {
          w_.line("if (row_in && gc < cols) cake_dev::red_add_f32(reinterpret_cast<float*>(dst), __uint_as_float(raw[0]));");
        } else {
          w_.line("if (row_in && gc + 2 <= cols && (reinterpret_cast<unsigned long long>(dst) % 4u) == 0) cake_dev::red_add_bf16x2(dst, raw[0]);");
          w_.line("else { if (row_in && gc < cols) cake_dev::red_add_bf16(dst, (u16)(raw[0] & 0xffffu)); if (row_in && gc + 1 < cols) cake_dev::red_add_bf16(dst + 1, (u16)(raw[0] >> 16)); }");
        }
      } else {
        if (grp * eb >= 4) {
          w_.open("if (row_in && gc + " + S(grp) + " <= cols && (reinterpret_cast<unsigned long long>(dst) % " + S(grp * eb) + "u) == 0)");
          w_.line("#pragma unroll");
          w_.line("for (int q = 0; q < " + S(words) + "; q += 4 > " + S(words) + " ? " + S(words) + " : 4) cake_dev::st_global_words<" +
                  S(words < 4 ? words : 4) + ">(reinterpret_cast<u32*>(dst) + q, raw + q);");
          w_.close();
          w_.open("else");
        } else {
          w_.open("");
        }
        const std::string elem = td == dtype::f32 || td == dtype::i32 ? "raw[j]" : "(" + ty + ")(raw[j / 2] >> (16 * (j % 2)))";
        w_.line("#pragma unroll");
        w_.line("for (int j = 0; j < " + S(grp) + "; ++j) if (row_in && gc + j < cols) dst[j] = " + elem + ";");
        w_.close();
      }
    }
    w_.close();
    w_.close();
  }

  // An i64 tensor (exact sums, core/dtype.hpp): a load converts each element to the f32 tile
  // (cvt.rn.f32.s64, one rounding of the exact sum); atomic_add adds each f32 element rounded to the
  // nearest integer (red_add_s64_rn). Element by element: there is no vector form of the 64-bit
  // reduction, and the loads are of sums read once per kernel.
  void emit_global_i64(int id, const op& o, const operand& g, int r) {
    const bool load = o.kind == op_kind::load_global;
    if (p_.regs[r].dt != dtype::f32) return fail(id, "register loads and atomics of i64 tensors take f32 tiles");
    if (!load && o.kind != op_kind::atomic_add) return fail(id, "store_global into an i64 tensor is not lowered (atomic_add adds into it)");
    const auto& L = lay(r);
    const auto& ref = p_.tile_refs[g.index];
    w_.open("");
    const std::string inside = global_origin(g, r);
    const std::string owner = !load && L.cls == plan::shape_class::row_vec ? " && " + row_owner(L) : "";
    w_.line("#pragma unroll");
    w_.open("for (int e0 = 0; e0 < " + S(L.count) + "; ++e0)");
    w_.line("const long long gr = row0 + " + row_of(L, "e0") + ", gc = col0 + " + col_of(L, "e0") + ";");
    w_.line("const bool in = " + inside + owner + " && gr < rows && gc < cols;");
    if (load) {
      w_.line(write_one(r, "e0", "(in ? (float)*" + gptr(ref.tensor, "const long long") + " : __int_as_float(" + S(o.imm[2]) + "))"));
    } else {
      w_.line("if (in) cake_dev::red_add_s64_rn(" + gptr(ref.tensor, "long long") + ", " + read_elem(r, "e0") + ");");
    }
    w_.close();
    w_.close();
  }

  // f32 vector reductions (red.global.add.v2.f32 / .v4.f32) exist from sm_90 on: sm_90a and sm_100a.
  bool vector_red() const { return p_.target == target_id::sm_90a || p_.target == target_id::sm_100a; }
  // Statement adding the G (2 or 4) f32 of raw[] at dst[0..G) of a row that `row_ok` says is inside the
  // tensor, the columns gc + j < cols only: one vector reduction when the whole group is inside the row and
  // its address is aligned to 4 * G bytes (tested at run time: the row stride and the tile's origin are
  // launch values), aligned pairs and then single elements at a ragged or misaligned edge.
  static std::string red_f32_group(int G, const std::string& dst, const std::string& row_ok) {
    return "if (" + row_ok + ") cake_dev::red_add_f32_group<" + S(G) + ">(" + dst + ", raw, cols - gc);";
  }
  // The thread that adds a row vector's value for its row, where several threads hold copies of it (a
  // blocked frame's row is spread over tpr threads; an MMA fragment's over the 4 lanes of a quad): the
  // one that holds the row's first columns. Every thread of a tmem_rows frame holds its own row.
  std::string row_owner(const plan::reg_layout& L) const {
    switch (L.f.kind) {
      case plan::frag_kind::blocked: return L.f.tpr > 1 ? "(" + unit_thread(L) + " % " + S(L.f.tpr) + " == 0)" : "true";
      case plan::frag_kind::wgmma_acc:
      case plan::frag_kind::mma_acc: return "((int)lane % 4 == 0)";
      default: return "true";
    }
  }

  // The thread that adds a column vector's value for its column, where several threads hold copies of it
  // (the row groups of a blocked frame, the lane quads and warps of an accumulator's): the first.
  std::string col_owner(const plan::reg_layout& L) const {
    switch (L.f.kind) {
      case plan::frag_kind::blocked: return "(" + unit_thread(L) + " < " + S(L.f.tpr) + ")";
      case plan::frag_kind::wgmma_acc: return "((int)lane < 4 && warp_in_unit == 0u)";
      case plan::frag_kind::mma_acc: return "((int)lane < 4)";
      default: return "(" + unit_thread(L) + " == 0)";
    }
  }

  // Row i of the tile is added to row index[i] of the tensor (f32 atomics), at the tile's columns. Groups
  // of 2 or 4 adjacent columns of one row are one vector reduction on sm_90a / sm_100a (red_f32_group).
  // A row vector adds its value once per row (from row_owner's thread), at the tensor's column 0 + col0.
  void emit_scatter_add(int id, const op& o) {
    const int r = o.a.index, ix = o.b.index;
    const auto& L = lay(r);
    const auto& ref = p_.tile_refs[o.d.index];
    const dtype td = p_.tensors[ref.tensor].dt;
    if (td != dtype::f32 && td != dtype::i64) return fail(id, "scatter_add is lowered into f32 and i64 tensors");
    if (td == dtype::i64 && p_.regs[r].dt != dtype::f32) return fail(id, "scatter_add into an i64 tensor takes an f32 tile");
    if (ref.rank != 2) return fail(id, "scatter_add is lowered for 2-D tensors");
    int grp = group_of(r);
    while (grp > 1 && grp * 4 > 16) grp /= 2;
    if (!(vector_red() && (grp == 2 || grp == 4)) || td == dtype::i64) grp = 1;  // i64: no vector reduction
    w_.open("");
    const std::string inside = global_origin(o.d, r);
    const std::string owner = L.cls == plan::shape_class::row_vec ? " && " + row_owner(L) : "";
    w_.line("#pragma unroll");
    w_.open("for (int e0 = 0; e0 < " + S(L.count) + "; e0 += " + S(grp) + ")");
    w_.line("const long long gr = (long long)" + reg_name(ix) + "[" + source_index(ix, L, "e0") + "], gc = col0 + " + col_of(L, "e0") + ";");
    if (td == dtype::i64) {
      w_.line("if (" + inside + owner + " && gr >= 0 && gr < rows && gc < cols) cake_dev::red_add_s64_rn(" + gptr(ref.tensor, "long long") + ", " +
              read_elem(r, "e0") + ");");
    } else if (grp == 1) {
      w_.line("if (" + inside + owner + " && gr >= 0 && gr < rows && gc < cols) cake_dev::red_add_f32(" + gptr(ref.tensor, "float") + ", " + read_elem(r, "e0") +
              ");");
    } else {
      w_.line("u32 raw[" + S(grp) + "];");
      w_.line("#pragma unroll");
      w_.line("for (int j = 0; j < " + S(grp) + "; ++j) raw[j] = __float_as_uint(" + read_elem(r, "e0 + j") + ");");
      w_.line(red_f32_group(grp, gptr(ref.tensor, "float"), inside + owner + " && gr >= 0 && gr < rows"));
    }
    w_.close();
    w_.close();
  }

  // Per row i of the index vector: old[i] = counter[idx[i]], counter[idx[i]] += n (atom.global.add), from
  // the one thread that holds the row's first columns (row_owner), then shuffled to the row's other copies
  // (a blocked frame's row spreads over tpr consecutive lanes: width-tpr shuffles from lane 0 of the group).
  void emit_fetch_add(int id, const op& o) {
    const int d = o.d.index, ix = o.b.index;
    const auto& L = lay(d);
    const auto& ref = p_.tile_refs[o.a.index];
    const dtype td = p_.tensors[ref.tensor].dt;
    if (td != dtype::i32 && td != dtype::f32) return fail(id, "fetch_add is lowered for i32 and f32 counters");
    if (ref.rank != 2) return fail(id, "fetch_add is lowered for 2-D counter tensors");
    if (L.f.kind != plan::frag_kind::blocked || L.f.tpr > 32 || L.cls != plan::shape_class::row_vec)
      return fail(id, "fetch_add is lowered for row vectors in the blocked layout whose rows stay inside one warp");
    const int tpr = L.f.tpr;
    w_.open("");
    const std::string inside = global_origin(o.a, d);
    w_.line("#pragma unroll");
    w_.open("for (int e0 = 0; e0 < " + S(L.count) + "; ++e0)");
    w_.line("const long long gr = (long long)" + reg_name(ix) + "[" + source_index(ix, L, "e0") + "], gc = col0;");
    w_.line(std::string(td == dtype::i32 ? "int" : "float") + " old = -1;");
    const std::string owner = tpr > 1 ? " && " + row_owner(L) : "";
    w_.line("if (" + inside + owner + " && gr >= 0 && gr < rows && gc < cols) old = atomicAdd(" + gptr(ref.tensor, td == dtype::i32 ? "int" : "float") + ", " +
            (td == dtype::i32 ? S(o.imm[0]) : S(o.imm[0]) + ".0f") + ");");
    if (tpr > 1) w_.line("old = __shfl_sync(0xffffffffu, old, 0, " + S(tpr) + ");");
    w_.line(write_one(d, "e0", "old"));
    w_.close();
    w_.close();
  }

  // Inclusive prefix sum along each row of a blocked tile whose rows stay in one warp. A thread's elements
  // of a row come in chunks of `vec` consecutive columns, chunk j of lane l (of the row's tpr lanes) at
  // columns (j * tpr + l) * vec .. (a 1 x C tile is a column vector: one such row, held by every row
  // group of its frame alike): per chunk, the thread's running sum, a width-tpr shuffle scan of the
  // lanes' chunk totals (exclusive: shifted by one lane), and the carry of the chunks before.
  void emit_scan(int id, const op& o) {
    const int d = o.d.index, a = o.a.index;
    const auto& L = lay(a);
    if (L.f.kind != plan::frag_kind::blocked || L.f.tpr > 32 || (L.cls != plan::shape_class::full && L.cls != plan::shape_class::col_vec))
      return fail(id, "row_scan is lowered for tiles (and 1 x C rows) in the blocked layout (tiles loaded from memory) whose rows stay inside one warp");
    if (size_bits(p_.regs[d].dt) != 32) return fail(id, "row_scan writes a 32-bit (f32 or i32) tile");
    const int tpr = L.f.tpr, vec = L.f.vec, per_row = L.f.cols / (vec * tpr) * vec, passes = L.count / per_row;
    w_.open("");
    w_.line("// op#" + S(id) + ": row_scan over " + S(tpr) + " lanes per row, " + S(per_row / vec) + " chunks of " + S(vec) + " columns per thread");
    w_.line("const int rl = " + unit_thread(L) + " % " + S(tpr) + ";");
    w_.line("(void)rl;");
    w_.line("#pragma unroll");
    w_.open("for (int q = 0; q < " + S(passes) + "; ++q)");
    w_.line("float carry = 0.0f;");
    w_.line("#pragma unroll");
    w_.open("for (int j = 0; j < " + S(per_row / vec) + "; ++j)");
    w_.line("float run[" + S(vec) + "];");
    w_.line("float acc = 0.0f;");
    w_.line("#pragma unroll");
    w_.line("for (int i = 0; i < " + S(vec) + "; ++i) { acc += " + read_elem(a, "q * " + S(per_row) + " + j * " + S(vec) + " + i") + "; run[i] = acc; }");
    w_.line("float incl = acc;");
    if (tpr > 1) {
      w_.line("#pragma unroll");
      w_.line("for (int dl = 1; dl < " + S(tpr) + "; dl *= 2) { const float y = __shfl_up_sync(0xffffffffu, incl, dl, " + S(tpr) + "); if (rl >= dl) incl += y; }");
      w_.line("float before = __shfl_up_sync(0xffffffffu, incl, 1, " + S(tpr) + ");");
      w_.line("if (rl == 0) before = 0.0f;");
    } else {
      w_.line("const float before = 0.0f;");
    }
    w_.line("#pragma unroll");
    w_.line("for (int i = 0; i < " + S(vec) + "; ++i) " + write_one(d, "q * " + S(per_row) + " + j * " + S(vec) + " + i", "carry + before + run[i]"));
    w_.line(tpr > 1 ? "carry += __shfl_sync(0xffffffffu, incl, " + S(tpr - 1) + ", " + S(tpr) + ");" : "carry += incl;");
    w_.close();
    w_.close();
    w_.close();
  }

  // Column reduction of a warp's blocked tile into a column vector of the same frame: a thread folds its
  // rows (a column vector's slot is the element's column slot), then the lanes that hold the same columns
  // of other rows (lane bits tpr .. 16) combine by butterfly shuffles: every copy ends with the result.
  void emit_reduce_cols(int id, const op& o) {
    const int d = o.d.index, a = o.a.index;
    const auto& L = lay(a);
    const auto k = static_cast<reduce_kind>(o.imm[0]);
    if (L.f.kind != plan::frag_kind::blocked || L.threads != 32 || L.cls != plan::shape_class::full || lay(d).cls != plan::shape_class::col_vec)
      return fail(id, "column reductions are lowered for full tiles of a warp in the blocked layout (tiles loaded from memory), into a column vector");
    if (size_bits(p_.regs[d].dt) != 32) return fail(id, "a column reduction writes a 32-bit (f32 or i32) vector");
    const int slots = lay(d).count;
    w_.open("");
    w_.line("float red[" + S(slots) + "];");
    w_.line("#pragma unroll");
    w_.line("for (int c = 0; c < " + S(slots) + "; ++c) red[c] = " + identity(k) + ";");
    w_.line("#pragma unroll");
    w_.line("for (int e = 0; e < " + S(L.count) + "; ++e) red[" + col_slot(L.f, "e") + "] = " + combine(k, "red[" + col_slot(L.f, "e") + "]", read_elem(a, "e")) + ";");
    if (L.f.tpr < 32) {
      w_.line("#pragma unroll");
      w_.open("for (int c = 0; c < " + S(slots) + "; ++c)");
      w_.line("#pragma unroll");
      w_.line("for (int m = " + S(L.f.tpr) + "; m < 32; m *= 2) red[c] = " + combine(k, "red[c]", "__shfl_xor_sync(0xffffffffu, red[c], m)") + ";");
      w_.close();
    }
    w_.line("#pragma unroll");
    w_.line("for (int c = 0; c < " + S(slots) + "; ++c) " + write_one(d, "c", "red[c]"));
    w_.close();
  }

  // Register tile <-> one stage / part of an smem region, in groups inside a 16-byte chunk.
  void emit_shared_tile(int id, const op& o) {
    const bool load = o.kind == op_kind::load_shared;
    const operand& sm = load ? o.a : o.d;
    const int r = load ? o.d.index : o.a.index;
    const auto& L = lay(r);
    const auto& reg = p_.smem[sm.index];
    const int eb = size_bits(reg.dt) / 8;
    // (an 8-bit register tile moves its bytes as they are: from and to a region of its own dtype, support.hpp)
    if (is8(r) && p_.regs[r].dt != reg.dt) return fail(id, "an 8-bit register tile is loaded from and stored to smem of its own dtype only");
    int grp = group_of(r);
    while (grp > 1 && grp * eb > 16) grp /= 2;
    if (is8(r) && grp % 4 && grp > 2) return fail(id, "an 8-bit register tile moves to and from smem in groups of 1, 2 or a multiple of 4 elements");
    const int words = (grp * eb + 3) / 4;
    // 8 and 16 bytes move as one vector access (a group lies inside one 16-byte chunk of the swizzle, aligned to its size)
    const std::string vec = words == 4 ? ".v4" : words == 2 ? ".v2" : "";
    const std::string regs_out = words == 4 ? "{%0, %1, %2, %3}, [%4]" : words == 2 ? "{%0, %1}, [%2]" : "%0, [%1]";
    const std::string outs = words == 4 ? "\"=r\"(raw[0]), \"=r\"(raw[1]), \"=r\"(raw[2]), \"=r\"(raw[3])" : words == 2 ? "\"=r\"(raw[0]), \"=r\"(raw[1])" : "\"=r\"(raw[0])";
    const std::string regs_in = words == 4 ? "[%0], {%1, %2, %3, %4}" : words == 2 ? "[%0], {%1, %2}" : "[%0], %1";
    const std::string ins = words == 4 ? "\"r\"(raw[0]), \"r\"(raw[1]), \"r\"(raw[2]), \"r\"(raw[3])" : words == 2 ? "\"r\"(raw[0]), \"r\"(raw[1])" : "\"r\"(raw[0])";
    w_.open("");
    w_.line("const u32 region = " + smem_addr(sm, id) + ";");
    w_.line("#pragma unroll");
    w_.open("for (int e0 = 0; e0 < " + S(L.count) + "; e0 += " + S(grp) + ")");
    w_.line("const u32 off = " + swizzled(reg.swz, "(u32)(" + row_of(L, "e0") + ") * " + S(reg.inner_bytes()) + "u + (u32)(" + col_of(L, "e0") + ") * " + S(eb) + "u") + ";");
    w_.line("u32 raw[" + S(words) + "] = {};");
    if (load) {
      if (grp * eb >= 4 && words == 3) w_.line("for (int q = 0; q < 3; ++q) asm volatile(\"ld.shared.b32 %0, [%1];\" : \"=r\"(raw[q]) : \"r\"(region + off + 4u * q));");
      else if (grp * eb >= 4) w_.line("asm volatile(\"ld.shared" + vec + ".b32 " + regs_out + ";\" : " + outs + " : \"r\"(region + off));");
      else if (grp * eb == 2) w_.line("{ unsigned short h; asm volatile(\"ld.shared.b16 %0, [%1];\" : \"=h\"(h) : \"r\"(region + off)); raw[0] = h; }");
      else w_.line("{ unsigned short h; asm volatile(\"ld.shared.u8 %0, [%1];\" : \"=h\"(h) : \"r\"(region + off)); raw[0] = h & 0xffu; }");
      if (is8(r) && grp % 4 == 0) {
        w_.line("#pragma unroll");
        w_.line("for (int q = 0; q < " + S(grp / 4) + "; ++q) " + reg_name(r) + "[e0 / 4 + q] = raw[q];");
      } else if (is8(r)) {  // (1 or 2 bytes: into their place in the word)
        w_.line(reg_name(r) + "[e0 / 4] = (" + reg_name(r) + "[e0 / 4] & ~(" + (grp == 2 ? "0xffffu" : "0xffu") + " << (8 * (e0 % 4)))) | (raw[0] << (8 * (e0 % 4)));");
      } else if (is16(r) && p_.regs[r].dt == reg.dt && grp % 2 == 0) {
        w_.line("#pragma unroll");
        w_.line("for (int q = 0; q < " + S(grp / 2) + "; ++q) " + reg_name(r) + "[e0 / 2 + q] = raw[q];");
      } else if (is16(r)) {
        w_.line("#pragma unroll");
        w_.line("for (int j = 0; j < " + S(grp) + "; j += 2) " + write_pair(r, "e0 + j", raw_to_float(reg.dt, "j"), raw_to_float(reg.dt, "j + 1")));
      } else {
        w_.line("#pragma unroll");
        w_.line("for (int j = 0; j < " + S(grp) + "; ++j) " + write_one(r, "e0 + j", raw_to_float(reg.dt, "j")));
      }
    } else {
      if (is8(r) && grp % 4 == 0) {
        w_.line("#pragma unroll");
        w_.line("for (int q = 0; q < " + S(grp / 4) + "; ++q) raw[q] = " + reg_name(r) + "[e0 / 4 + q];");
      } else if (is8(r)) {
        w_.line("raw[0] = (" + reg_name(r) + "[e0 / 4] >> (8 * (e0 % 4))) & " + (grp == 2 ? "0xffffu" : "0xffu") + ";");
      } else if (is16(r) && p_.regs[r].dt == reg.dt && grp % 2 == 0) {
        w_.line("#pragma unroll");
        w_.line("for (int q = 0; q < " + S(grp / 2) + "; ++q) raw[q] = " + packed_pair(r, "e0 + 2 * q") + ";");
      } else {
        w_.line("#pragma unroll");
        w_.line("for (int j = 0; j < " + S(grp) + "; ++j) { " + float_to_raw(reg.dt, "j", read_elem(r, "e0 + j")) + " }");
      }
      if (grp * eb >= 4 && words == 3) w_.line("for (int q = 0; q < 3; ++q) asm volatile(\"st.shared.b32 [%0], %1;\" :: \"r\"(region + off + 4u * q), \"r\"(raw[q]) : \"memory\");");
      else if (grp * eb >= 4) w_.line("asm volatile(\"st.shared" + vec + ".b32 " + regs_in + ";\" :: \"r\"(region + off), " + ins + " : \"memory\");");
      else if (grp * eb == 2) w_.line("asm volatile(\"st.shared.b16 [%0], %1;\" :: \"r\"(region + off), \"h\"((unsigned short)raw[0]) : \"memory\");");
      else w_.line("asm volatile(\"st.shared.u8 [%0], %1;\" :: \"r\"(region + off), \"h\"((unsigned short)raw[0]) : \"memory\");");
    }
    w_.close();
    w_.close();
  }

  // Warps of a unit that hold parts of the same rows exchange their partial results through the role's
  // scratch (plan_smem) between two syncs of the unit's derived named barrier.
  void emit_cross_warp(int id, const plan::reg_layout& L, reduce_kind k, bool arg, int slots) {
    const int wpr = L.f.tpr / 32;  // warps per row group
    const int warps = L.threads / 32;
    const int bar = plan_.named.reduce_first_id[role_];
    const int off = plan_.smem.scratch_offset[role_];
    if (bar < 0 || off < 0) return fail(id, "a cross-warp row reduction without its derived scratch or barrier");
    const std::string base = "(smem + " + S(off) + "u + unit * " + S(warps * slots * 8) + "u)";
    const std::string sync = "cake_dev::named_barrier_sync(" + unit_barrier_id(bar) + ", " + S(L.threads) + "u);";
    w_.line("// across the " + S(wpr) + " warps that share each row: scratch and the unit's barrier are derived");
    if (role_shares_cluster_scratch()) w_.line(wait_cluster_scratch_call(id));
    w_.line(sync + "  // the previous use of the scratch is over");
    w_.open("if (lane == 0)");
    w_.line("#pragma unroll");
    w_.line("for (int q = 0; q < " + S(slots) + "; ++q) { asm volatile(\"st.shared.f32 [%0], %1;\" :: \"r\"(" + base + " + (u32)((warp_in_unit * " +
            S(slots) + " + q) * 8)), \"f\"(red[q]) : \"memory\"); " +
            (arg ? "asm volatile(\"st.shared.s32 [%0], %1;\" :: \"r\"(" + base + " + (u32)((warp_in_unit * " + S(slots) + " + q) * 8 + 4)), \"r\"(redi[q]) : \"memory\"); " : "") + "}");
    w_.close();
    w_.line(sync);
    w_.line("#pragma unroll");
    w_.open("for (int q = 0; q < " + S(slots) + "; ++q)");
    w_.line("float acc = " + identity(k) + ";" + (arg ? " int acci = 0x7fffffff;" : ""));
    w_.line("#pragma unroll");
    w_.open("for (int w = 0; w < " + S(wpr) + "; ++w)");
    w_.line("const u32 at = " + base + " + (u32)((((int)warp_in_unit / " + S(wpr) + ") * " + S(wpr) + " + w) * " + S(slots) + " + q) * 8;");
    w_.line("float x; asm volatile(\"ld.shared.f32 %0, [%1];\" : \"=f\"(x) : \"r\"(at) : \"memory\");");
    if (arg) {
      w_.line("int xi; asm volatile(\"ld.shared.s32 %0, [%1];\" : \"=r\"(xi) : \"r\"(at + 4u) : \"memory\");");
      const char* better = k == reduce_kind::argmin ? "<" : ">";
      w_.line(std::string("if (x ") + better + " acc || (x == acc && xi < acci)) { acc = x; acci = xi; }");
    } else {
      w_.line("acc = " + combine(k, "acc", "x") + ";");
    }
    w_.close();
    w_.line(std::string("red[q] = acc;") + (arg ? " redi[q] = acci;" : ""));
    w_.close();
  }
};

}  // namespace cake::lower
