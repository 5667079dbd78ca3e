// cake/lower/ptx_text.hpp — text generators for inline-PTX statements whose operand lists are too long
// to hand-write per shape: wgmma.mma_async (N/2 accumulator registers) and wide tcgen05.ld/st.
// The emitter pastes the returned text into generated CUDA C++; the device helpers in
// cake/device/*.cuh cover everything with a fixed operand list. Syntax and limits: hardware-facts §3
// (wgmma) and §4 (tcgen05 ld/st), PTX ISA 9.1 §9.7.15.5.2 and §9.7.16.8.3-4.
//
// Every generator validates its arguments and returns an `asm_text` whose `error` names the bad
// argument and the allowed values; `text` is then empty. Nothing throws.
#pragma once

#include <string>
#include <string_view>

namespace cake::lower::ptx {

// Element types of tensor-core operands and accumulators (PTX spelling without the dot).
enum class mma_type { f16, bf16, tf32, e4m3, e5m2, s8, u8, f32, s32 };

constexpr std::string_view type_name(mma_type t) noexcept {
  switch (t) {
    case mma_type::f16: return "f16";
    case mma_type::bf16: return "bf16";
    case mma_type::tf32: return "tf32";
    case mma_type::e4m3: return "e4m3";
    case mma_type::e5m2: return "e5m2";
    case mma_type::s8: return "s8";
    case mma_type::u8: return "u8";
    case mma_type::f32: return "f32";
    case mma_type::s32: return "s32";
  }
  return "?";
}

// One generated inline-asm statement.
struct asm_text {
  std::string text;         // complete `asm volatile(...);` statement; empty when !ok()
  std::string instruction;  // the PTX mnemonic with all qualifiers, e.g. wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
  int operand_count = 0;    // asm operands %0 .. %(operand_count-1)
  std::string error;        // why no text was produced; empty on success
  bool ok() const noexcept { return error.empty(); }
};

namespace detail {

inline asm_text fail(std::string why) {
  asm_text r;
  r.error = std::move(why);
  return r;
}

enum class wgmma_family { f16, bf16, tf32, fp8, integer, invalid };

constexpr bool is_fp8(mma_type t) noexcept { return t == mma_type::e4m3 || t == mma_type::e5m2; }
constexpr bool is_int8(mma_type t) noexcept { return t == mma_type::s8 || t == mma_type::u8; }

constexpr wgmma_family family_of(mma_type a, mma_type b) noexcept {
  if (a == mma_type::f16 && b == mma_type::f16) return wgmma_family::f16;
  if (a == mma_type::bf16 && b == mma_type::bf16) return wgmma_family::bf16;
  if (a == mma_type::tf32 && b == mma_type::tf32) return wgmma_family::tf32;
  if (is_fp8(a) && is_fp8(b)) return wgmma_family::fp8;
  if (is_int8(a) && is_int8(b)) return wgmma_family::integer;
  return wgmma_family::invalid;
}

// K per instruction is fixed by the operand type [HF §3 Shapes].
constexpr int wgmma_k(wgmma_family f) noexcept {
  switch (f) {
    case wgmma_family::f16:
    case wgmma_family::bf16: return 16;
    case wgmma_family::tf32: return 8;
    case wgmma_family::fp8:
    case wgmma_family::integer: return 32;
    case wgmma_family::invalid: return 0;
  }
  return 0;
}

// Accumulator types per family [HF §3 Shapes]: bf16/tf32 → f32; f16/fp8 → f16|f32; s8/u8 → s32.
constexpr bool acc_allowed(wgmma_family f, mma_type acc) noexcept {
  switch (f) {
    case wgmma_family::f16:
    case wgmma_family::fp8: return acc == mma_type::f16 || acc == mma_type::f32;
    case wgmma_family::bf16:
    case wgmma_family::tf32: return acc == mma_type::f32;
    case wgmma_family::integer: return acc == mma_type::s32;
    case wgmma_family::invalid: return false;
  }
  return false;
}

// N: 8..256 step 8 for floating point; integer shapes are 8, 16, 24 and multiples of 16 from 32 to 256.
constexpr bool n_allowed(wgmma_family f, int n) noexcept {
  if (n < 8 || n > 256 || n % 8 != 0) return false;
  if (f == wgmma_family::integer) return n <= 24 || n % 16 == 0;
  return true;
}

inline void append_reg_list(std::string& s, int first, int count) {
  s += '{';
  for (int i = 0; i < count; ++i) {
    if (i) s += (i % 8 == 0) ? ",\"\n    \" " : ", ";
    s += '%';
    s += std::to_string(first + i);
  }
  s += '}';
}

inline void append_constraints(std::string& s, std::string_view constraint, std::string_view array, int count) {
  for (int i = 0; i < count; ++i) {
    if (i) s += (i % 8 == 0) ? ",\n      " : ", ";
    s += '"';
    s += constraint;
    s += "\"(";
    s += array;
    s += '[';
    s += std::to_string(i);
    s += "])";
  }
}

inline std::string check_common_wgmma(int m, int n, int k, mma_type a, mma_type b, mma_type acc, wgmma_family f) {
  if (m != 64) return "wgmma: M must be 64 (got " + std::to_string(m) + ")";
  if (f == wgmma_family::invalid)
    return "wgmma: unsupported operand types ." + std::string(type_name(a)) + " x ." + std::string(type_name(b)) +
           " (allowed: f16xf16, bf16xbf16, tf32xtf32, {e4m3,e5m2}x{e4m3,e5m2}, {s8,u8}x{s8,u8})";
  if (k != wgmma_k(f))
    return "wgmma: K must be " + std::to_string(wgmma_k(f)) + " for ." + std::string(type_name(a)) + " operands (got " +
           std::to_string(k) + ")";
  if (!n_allowed(f, n))
    return "wgmma: N=" + std::to_string(n) +
           (f == wgmma_family::integer ? " is not an integer wgmma shape (8, 16, 24, or 32..256 step 16)"
                                       : " is not in 8..256 step 8");
  if (!acc_allowed(f, acc))
    return "wgmma: accumulator ." + std::string(type_name(acc)) + " is not allowed with ." + std::string(type_name(a)) +
           " operands";
  return {};
}

inline std::string check_expr(std::string_view what, std::string_view expr) {
  if (expr.empty()) return std::string("wgmma: empty expression for ") + std::string(what);
  return {};
}

// Registers holding D per thread: f32/s32 → N/2, f16 (packed f16x2) → N/4 [HF §3 Shapes].
constexpr int wgmma_acc_count(int n, mma_type acc) noexcept { return acc == mma_type::f16 ? n / 4 : n / 2; }

inline std::string wgmma_mnemonic(int m, int n, int k, mma_type a, mma_type b, mma_type acc) {
  std::string s = "wgmma.mma_async.sync.aligned.m" + std::to_string(m) + "n" + std::to_string(n) + "k" +
                  std::to_string(k) + "." + std::string(type_name(acc)) + "." + std::string(type_name(a)) + "." +
                  std::string(type_name(b));
  return s;
}

// Shared tail: "%da, %db, p, 1, 1[, ta, tb]" etc. built by the callers; this wraps the statement.
inline asm_text finish_wgmma(std::string mnemonic, int n_acc, std::string_view acc_constraint, std::string_view acc_array,
                             std::string_view operands_after_d, int scale_operand, std::string inputs, int n_operands) {
  asm_text r;
  r.instruction = mnemonic;
  r.operand_count = n_operands;
  std::string& t = r.text;
  t += "asm volatile(\n";
  t += "    \"{\\n\"\n";
  t += "    \".reg .pred p;\\n\"\n";
  t += "    \"setp.ne.b32 p, %" + std::to_string(scale_operand) + ", 0;\\n\"\n";
  t += "    \"" + mnemonic + "\\n\"\n";
  t += "    \"";
  std::string regs;
  append_reg_list(regs, 0, n_acc);
  t += regs;
  t += ",\\n\"\n";
  t += "    \"";
  t += operands_after_d;
  t += ";\\n\"\n";
  t += "    \"}\\n\"\n";
  t += "    : ";
  append_constraints(t, acc_constraint, acc_array, n_acc);
  t += "\n    : ";
  t += inputs;
  t += ");\n";
  return r;
}

}  // namespace detail

// Number of accumulator registers per thread of one wgmma (0 when the accumulator type is not allowed).
constexpr int wgmma_accumulator_registers(int n, mma_type acc) noexcept {
  if (acc != mma_type::f32 && acc != mma_type::f16 && acc != mma_type::s32) return 0;
  return detail::wgmma_acc_count(n, acc);
}

// wgmma.mma_async with A and B from shared-memory descriptors:
//   D[acc_array] (+)= A(desc_a) · B(desc_b); D is scaled in (accumulated) when scale_d_expr != 0.
// trans_a/trans_b select MN-major operands and exist only for f16/bf16 [HF §3 Syntax].
// The expressions are pasted verbatim: acc_array must name an array of wgmma_accumulator_registers(n, acc)
// elements (float for f32, unsigned for f16x2, int for s32), desc_* 64-bit values, scale_d an int.
inline asm_text wgmma_ss(int m, int n, int k, mma_type dtype_a, mma_type dtype_b, mma_type dtype_acc, bool trans_a,
                         bool trans_b, std::string_view acc_array_name, std::string_view desc_a_expr,
                         std::string_view desc_b_expr, std::string_view scale_d_expr) {
  using namespace detail;
  const wgmma_family f = family_of(dtype_a, dtype_b);
  if (auto e = check_common_wgmma(m, n, k, dtype_a, dtype_b, dtype_acc, f); !e.empty()) return fail(e);
  for (auto [what, expr] : {std::pair{"acc_array_name", acc_array_name}, std::pair{"descA_expr", desc_a_expr},
                            std::pair{"descB_expr", desc_b_expr}, std::pair{"scale_d_expr", scale_d_expr}})
    if (auto e = check_expr(what, expr); !e.empty()) return fail(e);
  const bool has_trans = f == wgmma_family::f16 || f == wgmma_family::bf16;
  if (!has_trans && (trans_a || trans_b))
    return fail("wgmma: transpose (MN-major) is only allowed for f16/bf16 operands from smem; ." +
                std::string(type_name(dtype_a)) + " must be K-major");
  const int n_acc = wgmma_acc_count(n, dtype_acc);
  const int da = n_acc, db = n_acc + 1, sd = n_acc + 2;
  std::string tail = "%" + std::to_string(da) + ", %" + std::to_string(db) + ", p";
  if (f != wgmma_family::integer) tail += ", 1, 1";
  if (has_trans) tail += std::string(", ") + (trans_a ? "1" : "0") + ", " + (trans_b ? "1" : "0");
  std::string inputs = "\"l\"(" + std::string(desc_a_expr) + "), \"l\"(" + std::string(desc_b_expr) + "), \"r\"(" +
                       std::string(scale_d_expr) + ")";
  const std::string_view acc_c = dtype_acc == mma_type::f32 ? "+f" : "+r";
  return finish_wgmma(wgmma_mnemonic(m, n, k, dtype_a, dtype_b, dtype_acc), n_acc, acc_c, acc_array_name, tail, sd,
                      std::move(inputs), n_acc + 3);
}

// wgmma.mma_async with A from registers (4 × 32-bit registers per thread in the A-fragment layout of
// [HF §3 Fragments]) and B from a shared-memory descriptor. Only B may be transposed (f16/bf16).
inline asm_text wgmma_rs(int m, int n, int k, mma_type dtype_a, mma_type dtype_b, mma_type dtype_acc, bool trans_b,
                         std::string_view acc_array_name, std::string_view a_regs_array_name,
                         std::string_view desc_b_expr, std::string_view scale_d_expr) {
  using namespace detail;
  const wgmma_family f = family_of(dtype_a, dtype_b);
  if (auto e = check_common_wgmma(m, n, k, dtype_a, dtype_b, dtype_acc, f); !e.empty()) return fail(e);
  for (auto [what, expr] : {std::pair{"acc_array_name", acc_array_name}, std::pair{"a_regs_array_name", a_regs_array_name},
                            std::pair{"descB_expr", desc_b_expr}, std::pair{"scale_d_expr", scale_d_expr}})
    if (auto e = check_expr(what, expr); !e.empty()) return fail(e);
  const bool has_trans = f == wgmma_family::f16 || f == wgmma_family::bf16;
  if (!has_trans && trans_b)
    return fail("wgmma: transpose (MN-major) is only allowed for f16/bf16 operands; ." + std::string(type_name(dtype_b)) +
                " must be K-major");
  const int n_acc = wgmma_acc_count(n, dtype_acc);
  const int a0 = n_acc, db = n_acc + 4, sd = n_acc + 5;
  std::string tail = "{%" + std::to_string(a0) + ", %" + std::to_string(a0 + 1) + ", %" + std::to_string(a0 + 2) + ", %" +
         std::to_string(a0 + 3) + "}, %" + std::to_string(db) + ", p";
  if (f != wgmma_family::integer) tail += ", 1, 1";
  if (has_trans) tail += std::string(", ") + (trans_b ? "1" : "0");
  std::string inputs;
  for (int i = 0; i < 4; ++i) inputs += "\"r\"(" + std::string(a_regs_array_name) + "[" + std::to_string(i) + "]), ";
  inputs += "\"l\"(" + std::string(desc_b_expr) + "), \"r\"(" + std::string(scale_d_expr) + ")";
  const std::string_view acc_c = dtype_acc == mma_type::f32 ? "+f" : "+r";
  return finish_wgmma(wgmma_mnemonic(m, n, k, dtype_a, dtype_b, dtype_acc), n_acc, acc_c, acc_array_name, tail, sd,
                      std::move(inputs), n_acc + 6);
}

// ---- tcgen05.ld / tcgen05.st (sm_100a) [HF §4 ld/st] ------------------------------------------------

enum class tmem_shape { s16x64b, s16x128b, s16x256b, s32x32b, s16x32bx2 };

constexpr std::string_view shape_name(tmem_shape s) noexcept {
  switch (s) {
    case tmem_shape::s16x64b: return "16x64b";
    case tmem_shape::s16x128b: return "16x128b";
    case tmem_shape::s16x256b: return "16x256b";
    case tmem_shape::s32x32b: return "32x32b";
    case tmem_shape::s16x32bx2: return "16x32bx2";
  }
  return "?";
}

// 32-bit registers per thread for one tcgen05.ld/st (PTX Table 49): num × {1, 2, 4} by shape, at most
// 128; 0 when the combination is invalid. .pack::16b / .unpack::16b do not change the register count
// (ptxas 13.0 rejects a halved vector: "Argument vector size mismatch").
constexpr int tcgen05_registers(tmem_shape shape, int num) noexcept {
  if (num < 1 || num > 128 || (num & (num - 1)) != 0) return 0;
  const int per = shape == tmem_shape::s16x128b ? 2 : shape == tmem_shape::s16x256b ? 4 : 1;
  const int regs = num * per;
  return regs > 128 ? 0 : regs;
}

namespace detail {
inline std::string check_tcgen05(std::string_view op, tmem_shape shape, int num, int half_split_off,
                                 std::string_view regs, std::string_view taddr) {
  if (num < 1 || num > 128 || (num & (num - 1)) != 0)
    return std::string(op) + ": num must be one of 1, 2, 4, ..., 128 (got " + std::to_string(num) + ")";
  if (tcgen05_registers(shape, num) == 0)
    return std::string(op) + ": ." + std::string(shape_name(shape)) + ".x" + std::to_string(num) +
           " needs more than 128 registers";
  if (shape != tmem_shape::s16x32bx2 && half_split_off != 0)
    return std::string(op) + ": immHalfSplitoff applies only to .16x32bx2";
  if (half_split_off < 0) return std::string(op) + ": immHalfSplitoff must be non-negative";
  if (regs.empty()) return std::string(op) + ": empty register array name";
  if (taddr.empty()) return std::string(op) + ": empty taddr expression";
  return {};
}
}  // namespace detail

// tcgen05.ld.sync.aligned.<shape>.x<num>[.pack::16b].b32 {regs}, [taddr][, immHalfSplitoff]:
// loads into `regs_array_name[0 .. tcgen05_registers(shape, num)-1]` (unsigned), warp-collective.
inline asm_text tcgen05_ld(tmem_shape shape, int num, std::string_view regs_array_name, std::string_view taddr_expr,
                           bool pack16 = false, int half_split_off = 0) {
  using namespace detail;
  if (auto e = check_tcgen05("tcgen05_ld", shape, num, half_split_off, regs_array_name, taddr_expr); !e.empty())
    return fail(e);
  const int n = tcgen05_registers(shape, num);
  asm_text r;
  r.instruction = "tcgen05.ld.sync.aligned." + std::string(shape_name(shape)) + ".x" + std::to_string(num) +
                  (pack16 ? ".pack::16b" : "") + ".b32";
  r.operand_count = n + 1;
  std::string regs;
  append_reg_list(regs, 0, n);
  std::string& t = r.text;
  t += "asm volatile(\n    \"" + r.instruction + "\\n\"\n    \"" + regs + ",\\n\"\n    \"[%" + std::to_string(n) + "]";
  if (shape == tmem_shape::s16x32bx2) t += ", " + std::to_string(half_split_off);
  t += ";\\n\"\n    : ";
  append_constraints(t, "=r", regs_array_name, n);
  t += "\n    : \"r\"(" + std::string(taddr_expr) + ")\n    : \"memory\");\n";
  return r;
}

// tcgen05.st.sync.aligned.<shape>.x<num>[.unpack::16b].b32 [taddr][, immHalfSplitoff], {regs}.
inline asm_text tcgen05_st(tmem_shape shape, int num, std::string_view taddr_expr, std::string_view regs_array_name,
                           bool unpack16 = false, int half_split_off = 0) {
  using namespace detail;
  if (auto e = check_tcgen05("tcgen05_st", shape, num, half_split_off, regs_array_name, taddr_expr);
      !e.empty())
    return fail(e);
  const int n = tcgen05_registers(shape, num);
  asm_text r;
  r.instruction = "tcgen05.st.sync.aligned." + std::string(shape_name(shape)) + ".x" + std::to_string(num) +
                  (unpack16 ? ".unpack::16b" : "") + ".b32";
  r.operand_count = n + 1;
  std::string regs;
  append_reg_list(regs, 1, n);
  std::string& t = r.text;
  t += "asm volatile(\n    \"" + r.instruction + "\\n\"\n    \"[%0]";
  if (shape == tmem_shape::s16x32bx2) t += ", " + std::to_string(half_split_off);
  t += ",\\n\"\n    \"" + regs + ";\\n\"\n    :\n    : \"r\"(" + std::string(taddr_expr) + "),\n      ";
  append_constraints(t, "r", regs_array_name, n);
  t += "\n    : \"memory\");\n";
  return r;
}

}  // namespace cake::lower::ptx
