#pragma once
// Register math as expressions. `r.set(p, exp2(s * scale - m))` records ONE op whose expression tree
// (a few nodes in program::exprs) is evaluated element by element: no temporaries, one fused loop in
// the generated code. Leaves are register tiles (full tiles, M x 1 row vectors and 1 x N column vectors
// broadcast by shape), scalar parameters, float immediates and index expressions (which may use the
// element's row() and col() inside its tile, for masks). Float math is f32; comparisons give
// predicates for select(). The op table (math_table) is the one list of functions: the builder, the
// analyzer, lowering and docs/language.md read it.
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "../core/dtype.hpp"
#include "index_expr.hpp"

namespace cake {

// Columns: enumerator, printed name, arity (0 = leaf), result (f: float, p: predicate).
#define CAKE_MATH_FNS(X)                                                     \
  X(tile, "tile", 0, 'f')        /* a register tile (ref = reg index) */     \
  X(scalar, "scalar", 0, 'f')    /* a scalar parameter (ref = index) */      \
  X(imm, "imm", 0, 'f')          /* a float constant (bits) */               \
  X(index, "index", 0, 'i')      /* an index expression (ix) */              \
  X(neg, "neg", 1, 'f')                                                      \
  X(abs, "abs", 1, 'f')                                                      \
  X(exp2, "exp2", 1, 'f')                                                    \
  X(log2, "log2", 1, 'f')                                                    \
  X(exp, "exp", 1, 'f')                                                      \
  X(log, "log", 1, 'f')                                                      \
  X(rcp, "rcp", 1, 'f')                                                      \
  X(sqrt, "sqrt", 1, 'f')                                                    \
  X(rsqrt, "rsqrt", 1, 'f')                                                  \
  X(tanh, "tanh", 1, 'f')                                                    \
  X(erf, "erf", 1, 'f')                                                      \
  X(gelu_tanh, "gelu_tanh", 1, 'f')                                          \
  X(gelu_erf, "gelu_erf", 1, 'f')                                            \
  X(silu, "silu", 1, 'f')                                                    \
  X(sigmoid, "sigmoid", 1, 'f')                                              \
  X(relu, "relu", 1, 'f')                                                    \
  X(round_bf16, "round_bf16", 1, 'f')  /* cast through bf16 and back */      \
  X(round_f16, "round_f16", 1, 'f')                                          \
  X(not_, "not", 1, 'p')                                                     \
  X(add, "add", 2, 'f')                                                      \
  X(sub, "sub", 2, 'f')                                                      \
  X(mul, "mul", 2, 'f')                                                      \
  X(div, "div", 2, 'f')                                                      \
  X(max, "max", 2, 'f')                                                      \
  X(min, "min", 2, 'f')                                                      \
  X(lt, "lt", 2, 'p')                                                        \
  X(le, "le", 2, 'p')                                                        \
  X(gt, "gt", 2, 'p')                                                        \
  X(ge, "ge", 2, 'p')                                                        \
  X(eq, "eq", 2, 'p')                                                        \
  X(ne, "ne", 2, 'p')                                                        \
  X(and_, "and", 2, 'p')                                                     \
  X(or_, "or", 2, 'p')                                                       \
  X(fma, "fma", 3, 'f')                                                      \
  X(select, "select", 3, 'f')

enum class math_fn : std::uint8_t {
#define CAKE_X(e, n, a, r) e,
  CAKE_MATH_FNS(CAKE_X)
#undef CAKE_X
      count_
};
inline constexpr int math_fn_count = static_cast<int>(math_fn::count_);

struct math_info {
  std::string_view name;
  int arity;
  char result;  // 'f' float, 'p' predicate, 'i' index (an integer value)
};
inline constexpr math_info math_table[math_fn_count] = {
#define CAKE_X(e, n, a, r) {n, a, r},
    CAKE_MATH_FNS(CAKE_X)
#undef CAKE_X
};
#undef CAKE_MATH_FNS
constexpr const math_info& info(math_fn f) { return math_table[static_cast<int>(f)]; }
constexpr std::string_view to_string(math_fn f) { return info(f).name; }

// One node of an expression tree. Children are indices into the same node array (program::exprs when
// recorded; a local array while the expression is being written).
struct expr_node {
  math_fn fn = math_fn::imm;
  std::uint8_t ref = 0xff;    // tile: reg index; scalar: scalar index
  std::int16_t kid[3] = {-1, -1, -1};
  std::int32_t bits = 0;      // imm: the float's bits
  index_expr ix{};            // index leaves
  friend constexpr bool operator==(const expr_node&, const expr_node&) = default;
};

// An expression being written: up to max_nodes nodes, the root last.
struct rx {
  static constexpr int max_nodes = 24;
  expr_node nodes[max_nodes]{};
  int count = 0;
  bool overflow = false;
  int size = 0;  // the nodes the whole expression needs (count, or more when it overflowed: ir.expr-size says it)

  constexpr rx() = default;
  constexpr rx(float v) {
    nodes[0].fn = math_fn::imm;
    nodes[0].bits = __builtin_bit_cast(std::int32_t, v);
    count = size = 1;
  }
  constexpr rx(double v) : rx(static_cast<float>(v)) {}
  constexpr rx(int v) : rx(static_cast<float>(v)) {}
  constexpr rx(index_expr e) {
    nodes[0].fn = math_fn::index;
    nodes[0].ix = e;
    count = size = 1;
  }
  static constexpr rx leaf(math_fn f, int ref) {
    rx r;
    r.nodes[0].fn = f;
    r.nodes[0].ref = static_cast<std::uint8_t>(ref);
    r.count = r.size = 1;
    return r;
  }
  constexpr const expr_node& root() const { return nodes[count - 1]; }
};

namespace detail {
// Append `src` to `dst`, shifting its child indices; returns the index of src's root in dst (-1 on overflow).
constexpr int append(rx& dst, const rx& src) {
  if (src.overflow || dst.count + src.count > rx::max_nodes) {
    dst.overflow = true;
    return -1;
  }
  const int base = dst.count;
  for (int i = 0; i < src.count; ++i) {
    expr_node n = src.nodes[i];
    for (auto& k : n.kid)
      if (k >= 0) k = static_cast<std::int16_t>(k + base);
    dst.nodes[dst.count++] = n;
  }
  return dst.count - 1;
}
constexpr rx make(math_fn f, const rx& a) {
  rx r;
  r.size = a.size + 1;
  const int ia = append(r, a);
  if (r.overflow || r.count == rx::max_nodes) return r.overflow = true, r;
  r.nodes[r.count] = expr_node{f, 0xff, {static_cast<std::int16_t>(ia), -1, -1}, 0, {}};
  ++r.count;
  return r;
}
constexpr rx make(math_fn f, const rx& a, const rx& b) {
  rx r;
  r.size = a.size + b.size + 1;
  const int ia = append(r, a), ib = append(r, b);
  if (r.overflow || r.count == rx::max_nodes) return r.overflow = true, r;
  r.nodes[r.count] = expr_node{f, 0xff, {static_cast<std::int16_t>(ia), static_cast<std::int16_t>(ib), -1}, 0, {}};
  ++r.count;
  return r;
}
constexpr rx make(math_fn f, const rx& a, const rx& b, const rx& c) {
  rx r;
  r.size = a.size + b.size + c.size + 1;
  const int ia = append(r, a), ib = append(r, b), ic = append(r, c);
  if (r.overflow || r.count == rx::max_nodes) return r.overflow = true, r;
  r.nodes[r.count] = expr_node{f, 0xff, {static_cast<std::int16_t>(ia), static_cast<std::int16_t>(ib), static_cast<std::int16_t>(ic)}, 0, {}};
  ++r.count;
  return r;
}
}  // namespace detail

// The element's row and column inside the register tile an expression is evaluated over (masks):
// r.set(s, select(q * 128 + row() < j * 128 + col(), -inf, s)).
constexpr index_expr row() { return var_index(var_kind::elem_row, 0); }
constexpr index_expr col() { return var_index(var_kind::elem_col, 0); }
inline constexpr float neg_inf = -__builtin_huge_valf();
inline constexpr float pos_inf = __builtin_huge_valf();
inline constexpr float nan_value = __builtin_nanf("");  // e.g. a TMA load's fill_outside(nan_value)

// Anything that converts to an expression: rx, register tiles and scalars (their handles define
// to_rx), numbers, index expressions.
template <class X>
concept rx_like = requires(const X& x) { to_rx(x); } || std::is_convertible_v<X, rx>;
template <class X>
constexpr rx as_rx(const X& x) {
  if constexpr (requires { to_rx(x); }) return to_rx(x);
  else return rx(x);
}
// At least one side must be a register expression (so that index arithmetic stays index arithmetic).
template <class A, class B>
concept rx_pair = rx_like<A> && rx_like<B> && (!std::is_arithmetic_v<A> || !std::is_arithmetic_v<B>) &&
                  (!std::is_same_v<A, index_expr> || !std::is_same_v<B, index_expr>) &&
                  !(std::is_same_v<A, index_expr> && std::is_arithmetic_v<B>) && !(std::is_arithmetic_v<A> && std::is_same_v<B, index_expr>);

template <class A, class B> requires rx_pair<A, B>
constexpr rx operator+(const A& a, const B& b) { return detail::make(math_fn::add, as_rx(a), as_rx(b)); }
template <class A, class B> requires rx_pair<A, B>
constexpr rx operator-(const A& a, const B& b) { return detail::make(math_fn::sub, as_rx(a), as_rx(b)); }
template <class A, class B> requires rx_pair<A, B>
constexpr rx operator*(const A& a, const B& b) { return detail::make(math_fn::mul, as_rx(a), as_rx(b)); }
template <class A, class B> requires rx_pair<A, B>
constexpr rx operator/(const A& a, const B& b) { return detail::make(math_fn::div, as_rx(a), as_rx(b)); }
template <class A> requires(rx_like<A> && !std::is_arithmetic_v<A> && !std::is_same_v<A, index_expr>)
constexpr rx operator-(const A& a) { return detail::make(math_fn::neg, as_rx(a)); }

// Comparisons give predicates. Between two index expressions they compare indices (masks). An integer
// compared with an index expression is an index constant, so that the comparison stays in integers (as a
// float immediate it would be exact only below 2^24).
namespace detail {
template <class X, class Other>
constexpr rx cmp_side(const X& x) {
  if constexpr (std::is_integral_v<X> && std::is_same_v<Other, index_expr>) return rx(index_expr(static_cast<int>(x)));
  else return as_rx(x);
}
}  // namespace detail
template <class A, class B> requires(rx_like<A> && rx_like<B> && (!std::is_arithmetic_v<A> || !std::is_arithmetic_v<B>))
constexpr rx operator<(const A& a, const B& b) { return detail::make(math_fn::lt, detail::cmp_side<A, B>(a), detail::cmp_side<B, A>(b)); }
template <class A, class B> requires(rx_like<A> && rx_like<B> && (!std::is_arithmetic_v<A> || !std::is_arithmetic_v<B>))
constexpr rx operator<=(const A& a, const B& b) { return detail::make(math_fn::le, detail::cmp_side<A, B>(a), detail::cmp_side<B, A>(b)); }
template <class A, class B> requires(rx_like<A> && rx_like<B> && (!std::is_arithmetic_v<A> || !std::is_arithmetic_v<B>))
constexpr rx operator>(const A& a, const B& b) { return detail::make(math_fn::gt, detail::cmp_side<A, B>(a), detail::cmp_side<B, A>(b)); }
template <class A, class B> requires(rx_like<A> && rx_like<B> && (!std::is_arithmetic_v<A> || !std::is_arithmetic_v<B>))
constexpr rx operator>=(const A& a, const B& b) { return detail::make(math_fn::ge, detail::cmp_side<A, B>(a), detail::cmp_side<B, A>(b)); }
template <class A, class B> requires rx_like<A> && rx_like<B>
constexpr rx eq(const A& a, const B& b) { return detail::make(math_fn::eq, detail::cmp_side<A, B>(a), detail::cmp_side<B, A>(b)); }
template <class A, class B> requires rx_like<A> && rx_like<B>
constexpr rx ne(const A& a, const B& b) { return detail::make(math_fn::ne, detail::cmp_side<A, B>(a), detail::cmp_side<B, A>(b)); }
constexpr rx operator&&(const rx& a, const rx& b) { return detail::make(math_fn::and_, a, b); }
constexpr rx operator||(const rx& a, const rx& b) { return detail::make(math_fn::or_, a, b); }
constexpr rx operator!(const rx& a) { return detail::make(math_fn::not_, a); }

#define CAKE_RX_UNARY(fname, fn)                                      \
  template <class A> requires(rx_like<A> && !std::is_arithmetic_v<A>) \
  constexpr rx fname(const A& a) { return detail::make(math_fn::fn, as_rx(a)); }
CAKE_RX_UNARY(abs, abs)
CAKE_RX_UNARY(exp2, exp2)
CAKE_RX_UNARY(log2, log2)
CAKE_RX_UNARY(exp, exp)
CAKE_RX_UNARY(log, log)
CAKE_RX_UNARY(rcp, rcp)
CAKE_RX_UNARY(sqrt, sqrt)
CAKE_RX_UNARY(rsqrt, rsqrt)
CAKE_RX_UNARY(tanh, tanh)
CAKE_RX_UNARY(erf, erf)
CAKE_RX_UNARY(gelu_tanh, gelu_tanh)
CAKE_RX_UNARY(gelu_erf, gelu_erf)
CAKE_RX_UNARY(silu, silu)
CAKE_RX_UNARY(sigmoid, sigmoid)
CAKE_RX_UNARY(relu, relu)
CAKE_RX_UNARY(round_bf16, round_bf16)
CAKE_RX_UNARY(round_f16, round_f16)
#undef CAKE_RX_UNARY
// exp2(x, fma_share{n, d}): 2^x with n of every d elements of the tile computed by a polynomial on the FMA
// pipe (relative error <= 3.7e-6; NaN gives 0) and the rest by the MUFU unit's ex2 (2^-22). MUFU retires 16
// results per clock per SM against the FMA pipe's 128 (a polynomial costs ~10 FMA-pipe instructions), so where
// exp2 throughput bounds a loop, moving a share to the FMA pipe trades issue slots for MUFU time (measure: the
// H200's attention prefill at head dim 64 was not so bound, and every 1/8 moved cost it 3-6%). Which elements: those whose
// index in the thread's fragment is below n modulo d (decided when compiling, no branch). 1 <= d <= 32,
// 0 <= n <= d (ir.fma-share); fma_share{0, 1} is plain exp2.
struct fma_share {
  int n = 0, d = 1;
  friend constexpr auto operator<=>(const fma_share&, const fma_share&) = default;
};
template <class A> requires(rx_like<A> && !std::is_arithmetic_v<A>)
constexpr rx exp2(const A& a, fma_share share) {
  rx r = detail::make(math_fn::exp2, as_rx(a));
  // the share rides in the node's bits (an imm's field): n in the high half, d in the low (0: plain exp2)
  if (!r.overflow && (share.n != 0 || share.d != 1))
    r.nodes[r.count - 1].bits = static_cast<std::int32_t>((static_cast<std::uint32_t>(share.n & 0xffff) << 16) | static_cast<std::uint32_t>(share.d & 0xffff));
  return r;
}
// An exp2 node's share: {0, 1} for plain exp2.
constexpr fma_share fma_share_of(const expr_node& x) {
  if (x.fn != math_fn::exp2 || x.bits == 0) return {};
  const auto u = static_cast<std::uint32_t>(x.bits);
  return {static_cast<int>(u >> 16), static_cast<int>(u & 0xffff)};
}

// gelu(x): the tanh form (what cuBLASLt's GELU epilogue computes).
template <class A> requires(rx_like<A> && !std::is_arithmetic_v<A>)
constexpr rx gelu(const A& a) { return gelu_tanh(a); }

// A value of register math (an expression, a register tile, a scalar parameter), as opposed to a number
// or an index expression: min of two indices or numbers is a loop bound (handles.hpp), not math.
template <class X>
concept rx_valued = std::is_same_v<X, rx> || requires(const X& x) { to_rx(x); };
template <class A, class B> requires(rx_like<A> && rx_like<B> && (rx_valued<A> || rx_valued<B>))
constexpr rx max(const A& a, const B& b) { return detail::make(math_fn::max, as_rx(a), as_rx(b)); }
template <class A, class B> requires(rx_like<A> && rx_like<B> && (rx_valued<A> || rx_valued<B>))
constexpr rx min(const A& a, const B& b) { return detail::make(math_fn::min, as_rx(a), as_rx(b)); }
template <class A, class B, class C> requires rx_like<A> && rx_like<B> && rx_like<C>
constexpr rx fma(const A& a, const B& b, const C& c) { return detail::make(math_fn::fma, as_rx(a), as_rx(b), as_rx(c)); }
// select(pred, a, b): a where pred holds, else b.
template <class A, class B> requires rx_like<A> && rx_like<B>
constexpr rx select(const rx& pred, const A& a, const B& b) { return detail::make(math_fn::select, pred, as_rx(a), as_rx(b)); }
// A C++ bool is decided when the schedule is built (a == b on index expressions compares the expressions):
// it is not a predicate over elements. Refused: write eq(a, b) / ne(a, b) / a < b.
template <class A, class B>
rx select(bool, const A&, const B&) = delete;

}  // namespace cake
