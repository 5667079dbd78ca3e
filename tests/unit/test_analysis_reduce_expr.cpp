// The analyzer on reductions of an expression (r.row_sum(s, x * x), r.row_argmin(v, i, c - 2 * dot, ...)):
// the expression's leaves are checked as r.set's are (broadcast against the lead leaf, the padding that
// a masked load leaves in them and whether the reduction is neutral to it), each finding with a clean twin.
#include <doctest/doctest.h>

#include <cake/cake.hpp>
#include <string>

using namespace cake;
using cake::analysis::rule_id;

namespace {

// Row sums of a 4 x 1024 tile per warp of rows of C columns (C need not be a multiple of 1024): the
// loaded tile is padded with `fill` past C; the sum is of `what` (0: x * x, 1: x + 1, 2: x times a
// 64-row column-shaped leaf that does not broadcast).
constexpr program row_sums(float fill, int what) {
  auto k = kernel("row_sums").target(sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<bf16>("X", dims(R, C));
  auto S = k.output<f32>("S", dims(R));
  auto rows = k.parallel(tiles(R, 16));
  k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<bf16>("x", {4, 1024});
    auto odd = r.fragment<f32>("odd", {4, 512});
    auto s = r.row_vector<f32>("s", 4);
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i * 4 + r.warp(), 0)).fill_outside(fill);
      if (what == 0) r.row_sum(s, x * x);
      if (what == 1) r.row_sum(s, x + 1.0f);
      if (what == 2) {
        r.fill(odd, 1.0f);
        r.row_sum(s, x * odd);
      }
      r.store(S.tile(i * 4 + r.warp()), s);
    });
  });
  return k.build();
}

int count(const analysis::report& r, rule_id id) {
  int n = 0;
  for (const auto& d : r.diagnostics)
    if (d.rule == id) ++n;
  return n;
}
std::string message(const analysis::report& r, rule_id id) {
  for (const auto& d : r.diagnostics)
    if (d.rule == id) return std::string(d.message.view());
  return {};
}

}  // namespace

TEST_CASE("reduced expressions: the squares of a zero-padded tile are clean, so is the same program lowered") {
  const program p = row_sums(0.0f, 0);
  REQUIRE(p.errors.empty());
  const auto r = analyze(p);
  INFO(analysis::to_text(r));
  CHECK(r.errors == 0);
  CHECK(r.warnings == 0);
}

TEST_CASE("reduced expressions: a sum of x + 1 over zero padding is memory.mask-coverage, naming the expression") {
  const auto r = analyze(row_sums(0.0f, 1));
  INFO(analysis::to_text(r));
  REQUIRE(count(r, rule_id::memory_mask_coverage) == 1);
  const std::string m = message(r, rule_id::memory_mask_coverage);
  CHECK(m.find("row_sum of 'x'") != std::string::npos);
  CHECK(m.find("which hold 1") != std::string::npos);  // 0 + 1: the padding as the expression turns it
  CHECK(analysis::to_text(r).find("(the reduced expression) turns the fill into the value above") != std::string::npos);
  // The twin: padding with -1 makes x + 1 zero past C, neutral to the sum.
  const auto fixed = analyze(row_sums(-1.0f, 1));
  CHECK(count(fixed, rule_id::memory_mask_coverage) == 0);
}

TEST_CASE("reduced expressions: a leaf that does not broadcast against the lead tile is representation.broadcast") {
  const auto r = analyze(row_sums(0.0f, 2));
  INFO(analysis::to_text(r));
  REQUIRE(count(r, rule_id::representation_broadcast) >= 1);
  const std::string m = message(r, rule_id::representation_broadcast);
  CHECK(m.find("row_sum of an expression over 'x' (4x1024 bf16) reads 'odd' (4x512 f32)") != std::string::npos);
  CHECK(count(analyze(row_sums(0.0f, 0)), rule_id::representation_broadcast) == 0);
}
