// Unit tests for cake/ir/index_expr.hpp: how "which tile / which stage / which part" is written without
// addresses. An expression is ((c + sum coef * ((var / tdiv) % tmod)) / div) % mod; an operator whose
// result cannot be represented marks the expression invalid (the builder reports ir.index-expr).
#include <doctest/doctest.h>

#include "cake/ir/index_expr.hpp"

using namespace cake;

namespace {
// Variables by kind: tile coordinate t (axis 0), loop counter k (op 5), warpgroup g, warp w, rank r.
struct values {
  long long t = 0, k = 0, g = 0, w = 0, r = 0;
  long long operator()(const index_term& term) const {
    switch (term.kind) {
      case var_kind::tile_coord: return t;
      case var_kind::loop: return k;
      case var_kind::warpgroup: return g;
      case var_kind::warp: return w;
      case var_kind::cluster_rank: return r;
      default: return 0;
    }
  }
};
const index_expr T = var_index(var_kind::tile_coord, 0);
const index_expr K = var_index(var_kind::loop, 5);
const index_expr G = var_index(var_kind::warpgroup, 0);
const index_expr W = var_index(var_kind::warp, 0);
const index_expr R = var_index(var_kind::cluster_rank, 0);
}  // namespace

TEST_CASE("index_expr: a constant and a variable") {
  const index_expr c = 7;
  CHECK(c.is_constant());
  CHECK(c.valid);
  CHECK(c.eval(values{}) == 7);
  CHECK(constant_index(3) == index_expr(3));
  CHECK_FALSE(K.is_constant());
  CHECK(K.term_count == 1);
  CHECK(K.terms[0].kind == var_kind::loop);
  CHECK(K.terms[0].ref == 5);
  CHECK(K.terms[0].coef == 1);
  CHECK(K.uses(var_kind::loop));
  CHECK(K.uses(var_kind::loop, 5));
  CHECK_FALSE(K.uses(var_kind::loop, 6));
  CHECK_FALSE(K.uses(var_kind::warp));
  CHECK(K.eval(values{.k = 9}) == 9);
}

TEST_CASE("index_expr: + and * with numbers, on either side") {
  const index_expr e = T * 2 + 1;
  CHECK(e.valid);
  CHECK(e.linear());
  CHECK(e.terms[0].coef == 2);
  CHECK(e.constant == 1);
  CHECK(e.eval(values{.t = 5}) == 11);
  CHECK((3 * K).eval(values{.k = 4}) == 12);
  CHECK((1 + K).eval(values{.k = 4}) == 5);
  CHECK((K - 1).eval(values{.k = 4}) == 3);
  CHECK(((K + 2) * 3).eval(values{.k = 1}) == 9);
}

TEST_CASE("index_expr: sums of variables merge equal variables and keep up to three terms") {
  const index_expr e = T * 2 + G;
  CHECK(e.term_count == 2);
  CHECK(e.eval(values{.t = 3, .g = 1}) == 7);
  const index_expr twice = K + K * 3;
  CHECK(twice.term_count == 1);
  CHECK(twice.terms[0].coef == 4);
  const index_expr three = T + K + W;
  CHECK(three.valid);
  CHECK(three.term_count == 3);
  CHECK(three.eval(values{.t = 1, .k = 10, .w = 100}) == 111);
}

TEST_CASE("index_expr: a fourth distinct variable cannot be represented") {
  const index_expr four = T + K + W + G;
  CHECK_FALSE(four.valid);
}

TEST_CASE("index_expr: subtraction and negation of linear expressions") {
  const index_expr d = T * 4 - K;
  CHECK(d.valid);
  CHECK(d.eval(values{.t = 3, .k = 5}) == 7);
  CHECK((-K).eval(values{.k = 2}) == -2);
  CHECK((10 - K).eval(values{.k = 3}) == 7);
  const index_expr zero = K - K;
  CHECK(zero.valid);
  CHECK(zero.eval(values{.k = 42}) == 0);
}

TEST_CASE("index_expr: division and modulo of a lone variable stay inside its term") {
  const index_expr wm = W / 2;
  CHECK(wm.linear());  // the expression as a whole is still a plain sum
  CHECK(wm.terms[0].div == 2);
  CHECK(wm.terms[0].mod == 0);
  const index_expr wn = W % 2;
  CHECK(wn.terms[0].mod == 2);
  // So they can be scaled and added to other terms: the sm_80 schedule's tile.M*2 + warp/2.
  const index_expr e = T * 2 + W / 2;
  CHECK(e.valid);
  CHECK(e.term_count == 2);
  for (int w = 0; w < 4; ++w) CHECK(e.eval(values{.t = 3, .w = w}) == 6 + w / 2);
  const index_expr f = (W / 2) * 3 + W % 2;
  CHECK(f.valid);
  for (int w = 0; w < 8; ++w) CHECK(f.eval(values{.w = w}) == 3 * (w / 2) + w % 2);
}

TEST_CASE("index_expr: per-term division composes, then modulo applies to the quotient") {
  const index_expr e = W / 2 / 3;
  CHECK(e.terms[0].div == 6);
  const index_expr f = (W / 2) % 4;
  CHECK(f.terms[0].div == 2);
  CHECK(f.terms[0].mod == 4);
  for (int w = 0; w < 20; ++w) {
    CHECK(e.eval(values{.w = w}) == w / 6);
    CHECK(f.eval(values{.w = w}) == (w / 2) % 4);
  }
}

TEST_CASE("index_expr: division and modulo of a sum apply to the whole sum") {
  const index_expr e = (K + 1) % 2;
  CHECK_FALSE(e.linear());
  CHECK(e.mod == 2);
  CHECK(e.terms[0].mod == 0);
  for (int k = 0; k < 6; ++k) CHECK(e.eval(values{.k = k}) == (k + 1) % 2);
  const index_expr d = (T * 3 + K) / 2;
  CHECK(d.div == 2);
  CHECK(d.eval(values{.t = 1, .k = 5}) == 4);
  const index_expr dm = (T + K) / 2 % 3;
  CHECK(dm.valid);
  CHECK(dm.eval(values{.t = 4, .k = 7}) == ((4 + 7) / 2) % 3);
  // A modulo of a modulo of a lone variable: the second one applies to the whole expression.
  const index_expr mm = W % 4 % 3;
  CHECK(mm.valid);
  for (int w = 0; w < 10; ++w) CHECK(mm.eval(values{.w = w}) == (w % 4) % 3);
  // (w % 4) / 2: the division cannot go inside the term (it would come before the modulo).
  const index_expr md = W % 4 / 2;
  CHECK(md.valid);
  for (int w = 0; w < 10; ++w) CHECK(md.eval(values{.w = w}) == (w % 4) / 2);
}

TEST_CASE("index_expr: combinations that cannot be represented are flagged invalid") {
  const index_expr divided = (K + 1) / 2;
  CHECK_FALSE((divided + 1).valid);         // ((k+1)/2) + 1
  CHECK_FALSE((divided * 2).valid);         // ((k+1)/2) * 2
  CHECK_FALSE((divided + T).valid);         // a divided sum plus a variable
  CHECK_FALSE((T + divided).valid);
  CHECK_FALSE((divided / 3).valid);         // a second division of a sum
  CHECK_FALSE(((K + 1) % 2 % 2).valid);     // a second modulo of a sum
  CHECK_FALSE(((K + 1) % 4 / 2).valid);     // a division after a modulo of a sum
  CHECK_FALSE((K / 0).valid);
  CHECK_FALSE((K / -2).valid);
  CHECK_FALSE((K % 0).valid);
  CHECK_FALSE((divided - K).valid);
  CHECK_FALSE((-divided).valid);
  // Invalidity is sticky through further arithmetic.
  CHECK_FALSE(((divided + 1) + T).valid);
}

TEST_CASE("index_expr: overflowing coefficients and constants are flagged, not wrapped") {
  CHECK((K * 32767).valid);
  CHECK_FALSE((K * 32768).valid);
  CHECK_FALSE((K * 300 * 300).valid);
  CHECK_FALSE((K * 20000 + K * 20000).valid);
  CHECK_FALSE((index_expr(2100000000) + 100000000).valid);
  CHECK((index_expr(2000000000) + 100000000).valid);
  CHECK_FALSE((index_expr(100000) * 100000).valid);
  CHECK((index_expr(1000) * 1000).valid);
  CHECK_FALSE((W / 200 / 200).valid);
  CHECK_FALSE((W % 40000).valid);
}

TEST_CASE("index_expr: equality compares the whole representation") {
  CHECK(T * 2 + 1 == T * 2 + 1);
  CHECK_FALSE(T * 2 + 1 == T * 2 + 2);
  CHECK_FALSE(W / 2 == W % 2);
  CHECK(index_term{var_kind::warp, 0, 1, 2, 0}.same_var(index_term{var_kind::warp, 0, 3, 2, 0}));
  CHECK_FALSE(index_term{var_kind::warp, 0, 1, 2, 0}.same_var(index_term{var_kind::warp, 0, 1, 1, 0}));
  CHECK(index_term{var_kind::warp, 0, 1, 1, 0}.plain());
  CHECK_FALSE(index_term{var_kind::warp, 0, 1, 2, 0}.plain());
}

TEST_CASE("index_expr: per-term division keeps distinct variables apart when summed") {
  // warp/2 and warp%2 are different terms of the same variable: they must not merge.
  const index_expr e = W / 2 + W % 2;
  CHECK(e.term_count == 2);
  for (int w = 0; w < 6; ++w) CHECK(e.eval(values{.w = w}) == w / 2 + w % 2);
  const index_expr same = W / 2 + W / 2;
  CHECK(same.term_count == 1);
  CHECK(same.terms[0].coef == 2);
}

TEST_CASE("index_expr: evaluation is usable in constant expressions") {
  constexpr index_expr e = (var_index(var_kind::loop, 1) + 3) % 4;
  constexpr long long v = e.eval([](const index_term&) { return 2LL; });
  static_assert(v == 1);
  CHECK(v == 1);
}
