// Unit tests for register expressions (cake/ir/expr.hpp) and r.set(...): the nodes each operator and
// function builds, which operands stay index arithmetic, comparisons and masks over row()/col(), the
// node limit (ir.expr-size), how r.set records an expression in program::exprs, and how the printer
// shows expressions and the register-compute ops.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <type_traits>

#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

float imm_value(const expr_node& n) {
  float v = 0;
  std::memcpy(&v, &n.bits, sizeof v);
  return v;
}

// Handles for expressions without a kernel: register tiles 0..2 and scalar 0 (leaves only hold indices).
reg_tile<f32> tile_handle(int index) {
  reg_tile<f32> t;
  t.o.kind = operand_kind::reg;
  t.o.index = static_cast<std::uint8_t>(index);
  return t;
}
const reg_tile<f32> X = tile_handle(0), Y = tile_handle(1), Z = tile_handle(2);
const scalar<f32> alpha{0};

// The root's function and the functions of its children (-1 children are absent).
void check_root(const rx& e, math_fn fn, int kids) {
  REQUIRE(e.count > 0);
  CHECK_FALSE(e.overflow);
  CHECK(to_string(e.root().fn) == to_string(fn));
  for (int i = 0; i < 3; ++i) {
    INFO("child " << i);
    if (i < kids) {
      CHECK(e.root().kid[i] >= 0);
      CHECK(e.root().kid[i] < e.count - 1);  // children come before their parent
    } else {
      CHECK(e.root().kid[i] == -1);
    }
  }
}

// Whether a call compiles, asked in a template so that a call that does not compile answers false.
template <class P>
constexpr bool select_takes = requires(P pred) { select(pred, 1.0f, 0.0f); };
struct min_call {};
struct max_call {};
template <class T, class Which>
constexpr bool takes_number = [] {
  if constexpr (std::is_same_v<Which, min_call>) return requires(T t) { min(t, 0.0f); };
  else return requires(T t) { max(t, 0.0f); };
}();

}  // namespace

// ---- what is an expression, and what stays index arithmetic ----------------------------------------

static_assert(rx_like<reg_tile<f32>>);
static_assert(rx_like<reg_tile<bf16>>);
static_assert(rx_like<scalar<f32>>);
static_assert(rx_like<float> && rx_like<int> && rx_like<double>);
static_assert(rx_like<index_expr>);
static_assert(rx_like<rx>);
static_assert(!rx_like<smem_tile<bf16>>);
static_assert(!rx_like<tmem_tile>);
// Index arithmetic (and index with numbers) is index arithmetic: it is never turned into a register expression.
static_assert(std::is_same_v<decltype(row() + 1), index_expr>);
static_assert(std::is_same_v<decltype(row() * 64 + col()), index_expr>);
static_assert(std::is_same_v<decltype(row() - col()), index_expr>);
static_assert(std::is_same_v<decltype(-row()), index_expr>);
static_assert(!rx_pair<index_expr, index_expr>);
static_assert(!rx_pair<index_expr, int>);
static_assert(!rx_pair<float, int>);
// Anything with a register tile or a scalar in it is an expression; comparisons give expressions.
static_assert(std::is_same_v<decltype(X + row()), rx>);
static_assert(std::is_same_v<decltype(2.0f * X), rx>);
static_assert(std::is_same_v<decltype(X * alpha), rx>);
static_assert(std::is_same_v<decltype(-X), rx>);
static_assert(std::is_same_v<decltype(row() < col()), rx>);
static_assert(std::is_same_v<decltype(row() >= 3), rx>);
// min of two extents is a loop extent (r.loop(min(q + 1, tiles(T, 64)))); min of an expression is math.
static_assert(std::is_same_v<decltype(min(row() + 1, tiles("T", 64))), loop_extent>);
static_assert(std::is_same_v<decltype(min(X, Y)), rx>);
static_assert(std::is_same_v<decltype(min(X, rx(0.0f))), rx>);
static_assert(std::is_same_v<decltype(max(X, Y)), rx>);

TEST_CASE("expressions: leaves (tiles, scalars, numbers, index expressions)") {
  const rx t = X;
  REQUIRE(t.count == 1);
  CHECK(t.root().fn == math_fn::tile);
  CHECK(t.root().ref == 0);
  const rx s = alpha;
  REQUIRE(s.count == 1);
  CHECK(s.root().fn == math_fn::scalar);
  CHECK(s.root().ref == 0);
  const rx f = 2.5f, d = 0.25, i = 3;
  CHECK(f.root().fn == math_fn::imm);
  CHECK(imm_value(f.root()) == 2.5f);
  CHECK(imm_value(d.root()) == 0.25f);
  CHECK(imm_value(i.root()) == 3.0f);
  const rx ix = row() * 64 + col();
  CHECK(ix.root().fn == math_fn::index);
  CHECK(ix.root().ix == row() * 64 + col());
  CHECK(info(math_fn::index).result == 'i');
  CHECK(info(math_fn::lt).result == 'p');
  CHECK(info(math_fn::add).result == 'f');
}

TEST_CASE("expressions: arithmetic operators build one node over their operands, children first") {
  const rx a = X + Y;
  check_root(a, math_fn::add, 2);
  REQUIRE(a.count == 3);
  CHECK(a.nodes[a.root().kid[0]].fn == math_fn::tile);
  CHECK(a.nodes[a.root().kid[0]].ref == 0);
  CHECK(a.nodes[a.root().kid[1]].ref == 1);
  check_root(X - Y, math_fn::sub, 2);
  check_root(X * 2.0f, math_fn::mul, 2);
  check_root(2 * X, math_fn::mul, 2);
  check_root(X / alpha, math_fn::div, 2);
  check_root(-X, math_fn::neg, 1);
  // Nested: (x * alpha - y) / 2: 7 nodes, root last, every child index inside the expression.
  const rx n = (X * alpha - Y) / 2.0f;
  CHECK(n.count == 7);
  check_root(n, math_fn::div, 2);
  const expr_node& sub = n.nodes[n.root().kid[0]];
  CHECK(sub.fn == math_fn::sub);
  CHECK(n.nodes[sub.kid[0]].fn == math_fn::mul);
  CHECK(n.nodes[n.nodes[sub.kid[0]].kid[1]].fn == math_fn::scalar);
  CHECK(imm_value(n.nodes[n.root().kid[1]]) == 2.0f);
}

TEST_CASE("expressions: every function of the math table") {
  check_root(abs(X), math_fn::abs, 1);
  check_root(exp2(X), math_fn::exp2, 1);
  check_root(exp2(X, fma_share{1, 4}), math_fn::exp2, 1);  // (the share rides in the node: fma_share_of)
  CHECK(fma_share_of(exp2(X, fma_share{1, 4}).root()).n == 1);
  CHECK(fma_share_of(exp2(X, fma_share{1, 4}).root()).d == 4);
  CHECK(fma_share_of(exp2(X).root()).n == 0);
  CHECK(fma_share_of(exp2(X).root()).d == 1);
  CHECK(exp2(X, fma_share{}).root() == exp2(X).root());  // {0, 1} is plain exp2
  check_root(log2(X), math_fn::log2, 1);
  check_root(exp(X), math_fn::exp, 1);
  check_root(log(X), math_fn::log, 1);
  check_root(rcp(X), math_fn::rcp, 1);
  check_root(sqrt(X), math_fn::sqrt, 1);
  check_root(rsqrt(X), math_fn::rsqrt, 1);
  check_root(tanh(X), math_fn::tanh, 1);
  check_root(erf(X), math_fn::erf, 1);
  check_root(gelu_tanh(X), math_fn::gelu_tanh, 1);
  check_root(gelu_erf(X), math_fn::gelu_erf, 1);
  check_root(gelu(X), math_fn::gelu_tanh, 1);  // gelu is the tanh form (cuBLASLt's GELU epilogue)
  check_root(silu(X), math_fn::silu, 1);
  check_root(sigmoid(X), math_fn::sigmoid, 1);
  check_root(relu(X), math_fn::relu, 1);
  check_root(round_bf16(X), math_fn::round_bf16, 1);
  check_root(round_f16(X), math_fn::round_f16, 1);
  check_root(max(X, Y), math_fn::max, 2);
  check_root(min(X, Y), math_fn::min, 2);
  check_root(fma(X, 2.0f, Y), math_fn::fma, 3);
  check_root(select(X > 0.0f, X, Y), math_fn::select, 3);
  // arity and result type columns agree with what the builders make
  for (int f = 0; f < math_fn_count; ++f) {
    INFO(math_table[f].name);
    CHECK(math_table[f].arity >= 0);
    CHECK(math_table[f].arity <= 3);
  }
}

TEST_CASE("expressions: comparisons, logic and masks over row() and col()") {
  check_root(X < Y, math_fn::lt, 2);
  check_root(X <= 1.0f, math_fn::le, 2);
  check_root(X > Y, math_fn::gt, 2);
  check_root(X >= Y, math_fn::ge, 2);
  check_root(eq(X, Y), math_fn::eq, 2);
  check_root(ne(X, 0.0f), math_fn::ne, 2);
  check_root((X < Y) && (Y < Z), math_fn::and_, 2);
  check_root((X < Y) || (Y < Z), math_fn::or_, 2);
  check_root(!(X < Y), math_fn::not_, 1);
  // Between two index expressions a comparison compares indices: both leaves stay index leaves.
  const index_expr q = var_index(var_kind::tile_coord, 0), j = var_index(var_kind::loop, 3);
  const rx causal = j * 64 + col() > q * 64 + row();
  check_root(causal, math_fn::gt, 2);
  REQUIRE(causal.count == 3);
  CHECK(causal.nodes[0].fn == math_fn::index);
  CHECK(causal.nodes[0].ix == j * 64 + col());
  CHECK(causal.nodes[1].fn == math_fn::index);
  CHECK(causal.nodes[1].ix == q * 64 + row());
  // An integer compared with an index expression is an index constant (an integer comparison: a float
  // immediate would be exact only below 2^24); compared with a tile it is a number.
  const rx big = eq(q, 16777217);
  REQUIRE(big.count == 3);
  CHECK(big.nodes[0].fn == math_fn::index);
  CHECK(big.nodes[1].fn == math_fn::index);
  CHECK(big.nodes[1].ix == index_expr(16777217));
  const rx flipped = 3 < j;
  CHECK(flipped.nodes[0].fn == math_fn::index);
  CHECK(flipped.nodes[0].ix == index_expr(3));
  const rx on_tile = X < 2;
  CHECK(on_tile.nodes[1].fn == math_fn::imm);
  CHECK(imm_value(on_tile.nodes[1]) == 2.0f);
  // A mask: where the key is past the end, -inf; the score otherwise.
  const rx masked = select(j * 64 + col() >= var_index(var_kind::dim, 1), neg_inf, X * alpha);
  check_root(masked, math_fn::select, 3);
  const expr_node& pred = masked.nodes[masked.root().kid[0]];
  CHECK(pred.fn == math_fn::ge);
  CHECK(imm_value(masked.nodes[masked.root().kid[1]]) == neg_inf);
  CHECK(masked.nodes[masked.root().kid[2]].fn == math_fn::mul);
  CHECK(row() == var_index(var_kind::elem_row, 0));
  CHECK(col() == var_index(var_kind::elem_col, 0));
}

TEST_CASE("expressions: at most 24 nodes, past that the expression is marked and stays marked") {
  rx e = X;
  for (int i = 0; i < 11; ++i) e = e + X;  // 1 + 2 * 11 nodes
  CHECK(e.count == 23);
  CHECK_FALSE(e.overflow);
  const rx full = -e;  // the 24th node
  CHECK(full.count == rx::max_nodes);
  CHECK_FALSE(full.overflow);
  CHECK(full.root().fn == math_fn::neg);
  CHECK((e + X).overflow);        // 25 nodes
  CHECK((-full).overflow);        // a unary node over 24
  CHECK((full + 1.0f).overflow);  // a leaf and a node over 24
  CHECK(((e + X) * 0.0f).overflow == true);
  CHECK(exp2(e + X).overflow);    // overflow propagates through what is built on it
  CHECK(select(e + X, X, Y).overflow);
}

TEST_CASE("r.set records one op per statement: its nodes go to program::exprs with absolute child indices") {
  auto k = kernel("k").target(sm_90a);
  auto a = k.param<f32>("a");
  int first = -1, second = -1;
  unsigned line = 0;
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto m = r.row_vector<f32>("m", 64);
    r.fill(x, 1.0f);
    r.fill(m, 0.0f);
    first = r.set(x, exp2(x * a - m)).id; line = __LINE__;
    second = r.set(m, max(m, x)).id;
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  const op& o1 = p.ops[first];
  CHECK(o1.kind == op_kind::elementwise);
  CHECK(o1.loc.line == line);
  CHECK(o1.d.index == 0);
  CHECK(o1.a.kind == operand_kind::none);
  CHECK(o1.imm[0] == 0);
  CHECK(o1.imm[1] == 6);  // x, a, mul, m, sub, exp2
  const op& o2 = p.ops[second];
  CHECK(o2.imm[0] == 6);
  CHECK(o2.imm[1] == 3);  // m, x, max
  REQUIRE(p.exprs.size() == 9);
  CHECK(p.exprs[5].fn == math_fn::exp2);
  CHECK(p.exprs[5].kid[0] == 4);
  CHECK(p.exprs[4].fn == math_fn::sub);
  CHECK(p.exprs[4].kid[0] == 2);
  CHECK(p.exprs[4].kid[1] == 3);
  CHECK(p.exprs[1].fn == math_fn::scalar);
  CHECK(p.exprs[8].fn == math_fn::max);
  CHECK(p.exprs[8].kid[0] == 6);  // shifted by the first expression's 6 nodes
  CHECK(p.exprs[8].kid[1] == 7);
  // The tiles an op reads are the tile leaves of its expression.
  int reads = 0;
  bool reads_m = false;
  p.reg_reads(first, [&](const operand& x) {
    ++reads;
    reads_m = reads_m || x.index == 1;
  });
  CHECK(reads == 2);
  CHECK(reads_m);
  int writes = 0;
  p.reg_writes(first, [&](const operand& x) { writes += x.index == 0; });
  CHECK(writes == 1);
}

TEST_CASE("r.set: a number or an index expression on its own is an expression too, scale() is a set") {
  auto k = kernel("k").target(sm_90a);
  auto s = k.param<f32>("s");
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.set(x, 0.5f);
    r.set(x, row() * 64 + col());
    r.scale(x, s);
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  REQUIRE(p.ops.size() == 3);
  CHECK(p.ops[0].imm[1] == 1);
  CHECK(p.exprs[0].fn == math_fn::imm);
  CHECK(p.exprs[1].fn == math_fn::index);
  CHECK(p.exprs[1].ix == row() * 64 + col());
  CHECK(p.ops[2].kind == op_kind::elementwise);
  CHECK(p.exprs[p.ops[2].imm[0] + p.ops[2].imm[1] - 1].fn == math_fn::mul);
}

TEST_CASE("exp2(x, fma_share{n, d}) outside 1 <= d <= 32, 0 <= n <= d is ir.fma-share, with d as the value") {
  auto k = kernel("k").target(sm_90a);
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.set(x, exp2(x, fma_share{1, 0}));
    r.set(x, exp2(x, fma_share{5, 4}));
    r.set(x, exp2(x, fma_share{1, 33}));
    r.set(x, exp2(x, fma_share{-1, 4}));
    r.set(x, exp2(x, fma_share{32, 32}) + exp2(x, fma_share{0, 32}));  // the edges are fine
  });
  CHECK(count_errors(k.p, "ir.fma-share") == 4);
  CHECK(has_error(k.p, "ir.fma-share", 0));
  CHECK(has_error(k.p, "ir.fma-share", 4));
  CHECK(has_error(k.p, "ir.fma-share", 33));
}

TEST_CASE("r.set of more than 24 nodes is ir.expr-size (and nothing is appended to program::exprs)") {
  auto k = kernel("k").target(sm_90a);
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    rx e = x;
    for (int i = 0; i < 12; ++i) e = e + x;
    r.set(x, e);
    rx fits = x;
    for (int i = 0; i < 11; ++i) fits = fits + x;
    r.set(x, -fits);  // exactly 24 nodes
  });
  CHECK(count_errors(k.p, "ir.expr-size") == 1);
  CHECK(has_error(k.p, "ir.expr-size", 25));  // the nodes it needs: x and 12 times (+ x)
  CHECK(k.p.exprs.size() == 24);
  CHECK(k.p.ops[1].imm[1] == 24);
}

TEST_CASE("r.set / r.when with an index expression that cannot be represented is ir.index-expr") {
  auto k = kernel("k").target(sm_90a);
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    const index_expr bad = (r.warp() + 1) / 2 * 2;  // a multiple of a divided sum: not ((c + sum) / d) % m
    REQUIRE_FALSE(bad.valid);
    r.set(x, select(bad < col(), x, 0.0f));
    r.when(bad < 3, [&] { r.fill(x, 0.0f); });
  });
  CHECK(count_errors(k.p, "ir.index-expr") == 2);
}

TEST_CASE("r.when records a control op whose condition is an expression, with the body inside it") {
  auto k = kernel("k").target(sm_90a).cluster(2);
  auto mn = k.parallel(tiles(k.dim("M"), 64));
  int when_op = -1;
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.for_each(mn, [&](auto m) {
      when_op = static_cast<int>(k.p.ops.size());
      r.when(eq(r.cluster_rank(), 0) && m < 3, [&] { r.fill(x, 0.0f); });
      r.fill(x, 1.0f);
    });
  });
  const program& p = k.p;
  REQUIRE(p.errors.empty());
  const op& w = p.ops[when_op];
  CHECK(w.kind == op_kind::when);
  CHECK(p.is_control(w.kind));
  CHECK(w.end == when_op + 2);
  CHECK(p.ops[when_op + 1].parent == when_op);
  CHECK(p.ops[when_op + 2].parent == 0);
  const expr_node& root = p.exprs[w.imm[0] + w.imm[1] - 1];
  CHECK(root.fn == math_fn::and_);
  const expr_node& lhs = p.exprs[root.kid[0]];
  CHECK(lhs.fn == math_fn::eq);
  CHECK(p.exprs[lhs.kid[0]].fn == math_fn::index);
  CHECK(p.exprs[lhs.kid[0]].ix == var_index(var_kind::cluster_rank, 0));
  CHECK(p.exprs[lhs.kid[1]].fn == math_fn::index);  // eq(index, 0): two index leaves, compared as integers
  CHECK(p.exprs[lhs.kid[1]].ix == index_expr(0));
  // when() reads no register tile
  int reads = 0;
  p.reg_reads(when_op, [&](const operand&) { ++reads; });
  CHECK(reads == 0);
}

// `a == b` between index expressions is C++ equality of the two expressions (a bool, decided while the
// schedule is written). r.when refuses a bool at compile time ([ir.when-condition], tests/compile_fail),
// and so does select(): a diagonal mask written select(row() == col(), 1, 0) would otherwise be the
// constant select(0, 1, 0) (row() and col() are different expressions).
TEST_CASE("select(index == index, ...) is refused rather than recorded as a constant predicate") {
  CHECK_FALSE(select_takes<bool>);
  CHECK(select_takes<rx>);
}

// min(tile, number) is an expression like max(tile, number); min(index, extent) of two indices or numbers
// stays a loop extent (a float converts to index_expr through its int constructor, so the math overload
// asks for a register value on one side).
TEST_CASE("min(tile, number) is an expression, like max(tile, number)") {
  constexpr bool max_ok = takes_number<reg_tile<f32>, max_call>;
  constexpr bool min_ok = takes_number<reg_tile<f32>, min_call>;
  CHECK(max_ok);
  CHECK(min_ok);
}

// ---- printing ------------------------------------------------------------------------------------

TEST_CASE("printer: expressions print infix for arithmetic and comparisons, as calls for functions") {
  auto k = kernel("k").target(sm_90a);
  auto [S, T] = k.dims("S", "T");
  auto scale = k.param<f32>("scale");
  auto qt = k.parallel(tiles(S, 64));
  k.role("r", warpgroups(1), [&](role& r) {
    auto s = r.fragment<f32>("s", {64, 64});
    auto m = r.row_vector<f32>("m", 64);
    auto c = r.col_vector<f32>("c", 64);
    r.for_each(qt, [&](auto q) {
      r.loop(tiles(T, 64), [&](auto j) {
        r.set(s, select(j * 64 + col() > q * 64 + row(), neg_inf, s * scale));
        r.set(s, exp2(s - m) + c);
        r.set(s, exp2(s, fma_share{3, 8}));
        r.set(s, fma(s, 0.5f, 2.0f));
        r.set(s, max(s, pos_inf) / -s);
        r.set(s, select(!(s < 0.25f) || eq(s, m), gelu(s), min(s, rsqrt(s))));
        r.set(m, 3);
      });
    });
  });
  REQUIRE(k.p.errors.empty());
  const std::string text = to_text(k.p);
  CHECK(contains(text, "#2 elementwise s = select(([k1*64 + col] > [tile.S*64 + row]), -inf, (s * scale))\n"));
  CHECK(contains(text, "#3 elementwise s = (exp2((s - m)) + c)\n"));
  CHECK(contains(text, "#4 elementwise s = exp2(s, fma 3/8)\n"));
  CHECK(contains(text, "#5 elementwise s = fma(s, 0.5, 2.0)\n"));
  CHECK(contains(text, "#6 elementwise s = (max(s, inf) / neg(s))\n"));
  CHECK(contains(text, "#7 elementwise s = select((not((s < 0.25)) || (s == m)), gelu_tanh(s), min(s, rsqrt(s)))\n"));
  CHECK(contains(text, "#8 elementwise m = 3.0\n"));
}

TEST_CASE("printer: register-compute ops (reductions, argmin, convert, loads, stores, atomics, scatter, cluster sum, when)") {
  auto k = kernel("k").target(sm_90a).cluster(2);
  auto [N, K, D] = k.dims("N", "K", "D");
  auto X = k.input<f32>("X", dims(N, D));
  auto I = k.input<i32>("idx", dims(N));
  auto Sums = k.output<f32>("sums", dims(K, D));
  auto Y = k.output<bf16>("Y", dims(N, D));
  auto pts = k.parallel(tiles(N, 64));
  auto sx = k.smem<f32>("sx", {64, 32}, copies(2));
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 32});
    auto m = r.row_vector<f32>("m", 64);
    auto best = r.row_vector<f32>("best", 64);
    auto arg = r.row_vector<i32>("arg", 64);
    auto idx = r.row_vector<i32>("i", 64);
    r.for_each(pts, [&](auto t) {
      r.load(x, X.tile(t, 0)).fill_outside(neg_inf);
      r.load(idx, I.tile(t)).fill_outside(-1.0f);
      r.row_max(m, x);
      r.row_sum(m, x).accumulate();
      r.row_min(m, x);
      r.loop(tiles(K, 32), [&](auto j) {
        r.row_argmin(best, arg, x, j * 32).accumulate();
        r.row_argmax(best, arg, x, index_expr(0));
      });
      r.store(sx.stage(1), x);
      r.load(x, sx.stage(0));
      r.atomic_add(Sums.tile(t, 0), x);
      r.scatter_add(Sums.tile(0, 0), x, idx);
      r.cluster_sum(x);
      r.when(eq(r.cluster_rank(), 0), [&] { r.store(Y.tile(t, 0), r.convert<bf16>(x)); });
    });
  });
  REQUIRE(k.p.errors.empty());
  const std::string text = to_text(k.p);
  CHECK(contains(text, "    reg m: f32 [64 x 1] per warpgroup\n"));
  CHECK(contains(text, "#1 load_global x <- X.tile(tile.N, 0) fill_outside -inf\n"));
  CHECK(contains(text, "#2 load_global i <- idx.tile(tile.N) fill_outside -1.000000\n"));
  CHECK(contains(text, "#3 reduce_rows m = row_max(x)\n"));
  CHECK(contains(text, "#4 reduce_rows m = sum(m, row_sum(x))\n"));
  CHECK(contains(text, "#5 reduce_rows m = row_min(x)\n"));
  CHECK(contains(text, "#7 arg_reduce_rows (best, arg) = row_argmin(x, col0 k6*32) accumulate\n"));
  CHECK(contains(text, "#8 arg_reduce_rows (best, arg) = row_argmax(x, col0 0)\n"));
  CHECK(contains(text, "#9 store_shared sx[stage 1] <- x\n"));
  CHECK(contains(text, "#10 load_shared x <- sx[stage 0]\n"));
  CHECK(contains(text, "#11 atomic_add sums.tile(tile.N, 0) += x\n"));
  CHECK(contains(text, "#12 scatter_add sums.tile(0, 0) rows i += x\n"));
  CHECK(contains(text, "#13 cluster_reduce x = sum over the cluster\n"));
  CHECK(contains(text, "      #14 when ([rank] == [0])\n"));
  CHECK(contains(text, "        #15 convert x.bf16 <- x\n"));
  CHECK(contains(text, "        #16 store_global Y.tile(tile.N, 0) <- x.bf16\n"));
}

TEST_CASE("printer: deferred releases, their flush, alternating walks and turns") {
  auto k = kernel("k").target(sm_90a);
  auto [M, K] = k.dims("M", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto sp = k.parallel(tiles(M, 64));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(4)).carries(sA);
  auto t = k.turns("t");
  k.role("load", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto m) {
      r.loop(tiles(K, 64), [&](auto kt) { r.tma_load(r.acquire(ab)[sA], A.tile(m, kt)); });
    });
  });
  k.role("use", warpgroups(2), [&](role& r) {
    r.for_each(alternating(sp), [&](auto) {
      r.take_turn(t);
      r.loop(tiles(K, 64), [&](auto) {
        auto s = r.wait(ab);
        r.release(ab, s).later(2);
      });
      r.release_pending(ab);
      r.pass_turn(t);
    });
  });
  const std::string text = to_text(k.p);
  CHECK(contains(text, "  named_barrier t: per unit\n"));
  CHECK(contains(text, "#4 tile_loop over the parallel space, units alternating\n"));
  CHECK(contains(text, "#5 turn_take t\n"));
  CHECK(contains(text, "#7 pipeline_wait ab -> slot#7\n"));
  CHECK(contains(text, "#8 pipeline_release ab slot#7 2 iteration(s) later\n"));
  CHECK(contains(text, "#9 pipeline_flush ab\n"));
  CHECK(contains(text, "#10 turn_pass t\n"));
}

TEST_CASE("printer: scans, column reductions, scatter stores and fetch_add") {
  auto k = kernel("k").target(sm_90a);
  auto [N, K, D, One] = k.dims("N", "K", "D", "one");
  auto X = k.input<bf16>("X", dims(N, D));
  auto Cur = k.output<i32>("cursor", dims(K, One));
  auto Xs = k.output<bf16>("Xs", dims(N, D));
  auto S = k.output<f32>("S", dims(N, D));
  auto pts = k.parallel(tiles(N, 8));
  k.role("r", warps(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {8, 128});
    auto s = r.fragment<f32>("s", {8, 128});
    auto c = r.col_vector<f32>("c", 128);
    auto idx = r.row_vector<i32>("i", 8);
    auto pos = r.row_vector<i32>("pos", 8);
    r.for_each(pts, [&](auto t) {
      r.load(x, X.tile(t, 0));
      r.row_scan(s, x);
      r.col_sum(c, s);
      r.col_max(c, s);
      r.fill(idx, 0.0f);
      r.fetch_add(pos, Cur.tile(0, 0), idx, 2);
      r.scatter_store(Xs.tile(0, 0), x, pos);
      r.store(S.tile(t, 0), s);
    });
  });
  REQUIRE(k.p.errors.empty());
  const std::string text = to_text(k.p);
  CHECK(contains(text, "#2 scan_rows s = row_scan(x)\n"));
  CHECK(contains(text, "#3 reduce_cols c = col_sum(s)\n"));
  CHECK(contains(text, "#4 reduce_cols c = col_max(s)\n"));
  CHECK(contains(text, "#6 fetch_add pos = cursor.tile(0, 0) rows i, then += 2\n"));
  CHECK(contains(text, "#7 scatter_store Xs.tile(0, 0) rows pos = x\n"));
}
