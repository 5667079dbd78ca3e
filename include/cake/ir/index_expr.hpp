#pragma once
// Index expressions: how an op names "which tile", "which stage/part", how far a loop runs or which
// elements a mask keeps, without the user writing addresses. An expression is
// ((c + sum of coef * term) / div) % mod, each term being (var / tdiv) % tmod of one symbolic variable:
// the coordinates of the parallel iteration space, loop counters, the warpgroup/warp index inside a role,
// the CTA rank inside the cluster and the CTA index in the grid, the run-time extent of a dim, an index
// value (an integer read from a tensor, r.read_index, or an expression evaluated once, r.let_index) and
// (in masks only) the row/column of a register-tile element. Lowering turns it into C++ arithmetic; the
// analyzer evaluates it abstractly.
#include <cstdint>

namespace cake {

enum class var_kind : std::uint8_t {
  none,
  tile_coord,    // ref = axis of the parallel iteration space (0 = first axis, ...)
  loop,          // ref = op id of the loop
  warpgroup,     // index of the warpgroup inside its role
  warp,          // index of the warp inside its role
  cluster_rank,  // %cluster_ctarank
  dim,           // ref = program dim: its extent at run time (loop bounds, ragged tails)
  cta,           // the CTA's index in the grid (blockIdx.x)
  elem_row,      // masks: the row of a register-tile element inside the tile (0..rows-1)
  elem_col,      // masks: the column of a register-tile element inside the tile (0..cols-1)
  value,         // ref = op id of the read_index / let_index op that defines it (run-time data)
  walk_step,     // the CTA's step in its walk over the parallel space: 0 at its first point, 1 at its next, ...
  walk_steps,    // how many points the CTA's walk visits (1 for a grid walk; persistent: its share)
  // A split tail (k.split_tail(extent, n)): the points of a persistent walk's last, partial round are split into
  // parts of [0, extent), each walked by its own CTA; at every other point the part is the whole range.
  walk_part,     // which part of its point this is (0 at a whole point)
  walk_parts,    // how many parts the point has (1 at a whole point)
  part_begin,    // the part's range [part_begin, part_end) of [0, extent)
  part_end,
  tail_unit,     // the part's index among all the tail's parts (0 .. tail points x parts - 1; 0 at a whole point):
                 // the first part of its point is tail_unit - walk_part
};

struct index_term {
  var_kind kind = var_kind::none;
  std::uint16_t ref = 0;
  std::int16_t coef = 0;
  std::int16_t div = 1;  // the variable is divided...
  std::int16_t mod = 0;  // ...then reduced modulo this (0 = not), before scaling by coef
  constexpr bool plain() const { return div == 1 && mod == 0; }
  constexpr bool same_var(const index_term& o) const { return kind == o.kind && ref == o.ref && div == o.div && mod == o.mod; }
  template <class F>
  constexpr long long value(F&& value_of) const {
    long long v = value_of(*this) / div;
    return mod ? v % mod : v;
  }
  friend constexpr bool operator==(const index_term&, const index_term&) = default;
};

struct index_expr {
  static constexpr int max_terms = 3;
  index_term terms[max_terms]{};
  std::uint8_t term_count = 0;
  std::int32_t constant = 0;
  std::int16_t div = 1;   // applied after the sum
  std::int16_t mod = 0;   // applied after div; 0 = none
  bool valid = true;      // false when an operator could not represent the result (reported by the builder)

  constexpr index_expr() = default;
  constexpr index_expr(int c) : constant(c) {}  // a plain number is a constant index

  constexpr bool is_constant() const { return term_count == 0; }
  constexpr bool uses(var_kind k) const {
    for (int i = 0; i < term_count; ++i)
      if (terms[i].kind == k) return true;
    return false;
  }
  constexpr bool uses(var_kind k, int ref) const {
    for (int i = 0; i < term_count; ++i)
      if (terms[i].kind == k && terms[i].ref == ref) return true;
    return false;
  }
  constexpr bool linear() const { return div == 1 && mod == 0; }
  friend constexpr bool operator==(const index_expr&, const index_expr&) = default;

  // Evaluate with a callback giving each variable's value.
  template <class F>
  constexpr long long eval(F&& value_of) const {
    long long v = constant;
    for (int i = 0; i < term_count; ++i) v += static_cast<long long>(terms[i].coef) * terms[i].value(value_of);
    v /= div;
    if (mod) v %= mod;
    return v;
  }
};

constexpr index_expr constant_index(int c) { return index_expr{c}; }
constexpr index_expr var_index(var_kind k, int ref) {
  index_expr e;
  e.terms[0] = {k, static_cast<std::uint16_t>(ref), 1};
  e.term_count = 1;
  return e;
}

// Coefficients are 16-bit and the constant 32-bit: a result that does not fit marks the expression
// invalid (the builder reports it) instead of wrapping around.
constexpr bool fits_coef(long long v) { return v >= -32768 && v <= 32767; }
constexpr bool fits_constant(long long v) { return v >= -2147483647LL - 1 && v <= 2147483647LL; }

constexpr index_expr operator+(index_expr a, int c) {
  if (!a.linear()) a.valid = false;
  if (!fits_constant(static_cast<long long>(a.constant) + c)) a.valid = false;
  else a.constant += c;
  return a;
}
constexpr index_expr operator+(int c, index_expr a) { return a + c; }
constexpr index_expr operator-(index_expr a, int c) { return a + (-c); }
constexpr index_expr operator*(index_expr a, int c) {
  if (!a.linear()) a.valid = false;
  if (!fits_constant(static_cast<long long>(a.constant) * c)) a.valid = false;
  else a.constant *= c;
  for (int i = 0; i < a.term_count; ++i) {
    const long long coef = static_cast<long long>(a.terms[i].coef) * c;
    if (!fits_coef(coef)) a.valid = false;
    else a.terms[i].coef = static_cast<std::int16_t>(coef);
  }
  return a;
}
constexpr index_expr operator*(int c, index_expr a) { return a * c; }
constexpr index_expr operator+(index_expr a, const index_expr& b) {
  if (!a.linear() || !b.linear()) a.valid = false;
  a.valid = a.valid && b.valid;
  if (!fits_constant(static_cast<long long>(a.constant) + b.constant)) a.valid = false;
  else a.constant += b.constant;
  for (int j = 0; j < b.term_count; ++j) {
    bool merged = false;
    for (int i = 0; i < a.term_count; ++i)
      if (a.terms[i].same_var(b.terms[j])) {
        const long long coef = static_cast<long long>(a.terms[i].coef) + b.terms[j].coef;
        if (!fits_coef(coef)) a.valid = false;
        else a.terms[i].coef = static_cast<std::int16_t>(coef);
        merged = true;
      }
    if (merged) continue;
    if (a.term_count == index_expr::max_terms) {
      a.valid = false;
      break;
    }
    a.terms[a.term_count++] = b.terms[j];
  }
  return a;
}
// a - b, and -a: linear expressions only (the difference of two divided sums is not representable).
constexpr index_expr operator-(const index_expr& a) { return a * -1; }
constexpr index_expr operator-(index_expr a, const index_expr& b) { return a + b * -1; }
// A lone variable (warp / 2) keeps the division inside its term, so it can still be added to others.
constexpr bool lone_variable(const index_expr& a) {
  return a.linear() && a.constant == 0 && a.term_count == 1 && a.terms[0].coef == 1 && a.terms[0].mod == 0;
}
constexpr index_expr operator/(index_expr a, int d) {
  if (d <= 0 || d > 32767) a.valid = false;
  else if (lone_variable(a)) {
    const long long div = static_cast<long long>(a.terms[0].div) * d;
    if (!fits_coef(div)) a.valid = false;
    else a.terms[0].div = static_cast<std::int16_t>(div);
  }
  else if (!a.linear()) a.valid = false;
  else a.div = static_cast<std::int16_t>(d);
  return a;
}
constexpr index_expr operator%(index_expr a, int m) {
  if (m <= 0 || m > 32767) a.valid = false;
  else if (lone_variable(a)) a.terms[0].mod = static_cast<std::int16_t>(m);
  else if (a.mod != 0) a.valid = false;
  else a.mod = static_cast<std::int16_t>(m);
  return a;
}

}  // namespace cake
