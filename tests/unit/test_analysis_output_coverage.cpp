// memory.output-coverage: an output store whose coordinates remap the walk (division, modulo, let_index of
// parallel indices) is enumerated at tile counts 1..6 per axis; each way a remapping can fail (a tile
// outside the tensor, one written twice), the remappings that are bijections, what is not modelled.
#include <doctest/doctest.h>

#include <string>

#include <cake/cake.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

using namespace cake;
using analysis::rule_id;

namespace {

const analysis::diagnostic* find(const analysis::report& r, rule_id id) {
  for (const auto& d : r.diagnostics)
    if (d.rule == id) return &d;
  return nullptr;
}
bool noted(const analysis::report& r, rule_id id) {
  for (const auto& c : r.coverage)
    if (c.rule == id) return true;
  return false;
}
long long num(const analysis::diagnostic& d, std::string_view name) {
  for (int i = 0; i < d.number_count; ++i)
    if (d.numbers[i].name == name) return d.numbers[i].value;
  return -1;
}

enum class remap { identity, rotate4, identity_divmod, halve, swap_pairs, from_tensor, column_rotate_each };

// One warpgroup stores a 64 x 128 tile per point of tiles(M, 64) x tiles(N, 128), at a remapped row tile.
program store_at(remap how) {
  auto k = kernel("remapped_store").target(sm_90a);
  auto [M, N] = k.dims("M", "N");
  auto D = k.output<f32>("D", dims(M, N));
  auto Idx = k.input<i32>("Idx", dims(M));
  auto mn = k.parallel(tiles(M, 64), tiles(N, 128));
  k.role("consumer", warpgroups(1), [&](role& r) {
    auto acc = r.fragment<f32>("acc", {64, 128});
    r.for_each(mn, [&](auto m, auto n) {
      r.fill(acc, 0.0f);
      index_expr row = m;
      if (how == remap::rotate4) row = (m / 4) * 4 + r.let_index((m + n) % 4);
      if (how == remap::identity_divmod) row = (m / 4) * 4 + r.let_index(m % 4);
      if (how == remap::halve) row = m / 2;
      if (how == remap::swap_pairs) row = (m / 2) * 2 + r.let_index((m + 1) % 2);
      if (how == remap::from_tensor) row = r.read_index(Idx.at(m));
      r.store(D.tile(row, n), acc);
    });
  });
  return k.build();
}

enum class guard { first_column, first_two_columns, first_two_rows };

// Each point's row maxima (a row vector over M) stored under a when: only the first column tile may store them.
program row_store_under(guard g) {
  auto k = kernel("row_store").target(sm_90a);
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<f32>("X", dims(M, N));
  auto R = k.output<f32>("R", dims(M));
  auto mn = k.parallel(tiles(M, 64), tiles(N, 128));
  k.role("consumer", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 128});
    auto mx = r.row_vector<f32>("mx", 64);
    r.for_each(mn, [&](auto m, auto n) {
      r.load(x, X.tile(m, n));
      r.row_max(mx, x);
      auto store = [&] { r.store(R.tile(m), mx); };
      if (g == guard::first_column) r.when(eq(n, 0), store);
      if (g == guard::first_two_columns) r.when(n < 2, store);
      if (g == guard::first_two_rows) r.when(m < 2 && eq(n, 0), store);
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("output coverage: stores under a when are enumerated with the condition evaluated per point") {
  {
    const auto rep = analysis::analyze(row_store_under(guard::first_column));
    CHECK(find(rep, rule_id::memory_output_coverage) == nullptr);
    CHECK(find(rep, rule_id::memory_tile_coverage) == nullptr);
    CHECK_FALSE(noted(rep, rule_id::memory_tile_coverage));  // was "under a when: not checked for exactly-once coverage"
    CHECK_FALSE(noted(rep, rule_id::memory_output_coverage));
  }
  {
    const auto rep = analysis::analyze(row_store_under(guard::first_two_columns));
    const auto* d = find(rep, rule_id::memory_output_coverage);
    REQUIRE(d != nullptr);
    CHECK(num(*d, "kind") == 2);
    CHECK(std::string(d->message.view()).find("the point (M 0, N 1) and the point (M 0, N 0) both write M 0..63") != std::string::npos);
  }
  {
    const auto rep = analysis::analyze(row_store_under(guard::first_two_rows));
    const auto* d = find(rep, rule_id::memory_output_coverage);
    REQUIRE(d != nullptr);
    CHECK(num(*d, "kind") == 3);
    CHECK(num(*d, "axis0_count") == 3);
    CHECK(std::string(d->message.view()).find("no point writes M 128..191") != std::string::npos);
  }
}

TEST_CASE("output coverage: a rotation inside groups of 4 row tiles writes outside the tensor where the count is not a multiple of 4") {
  const auto rep = analysis::analyze(store_at(remap::rotate4));
  const auto* d = find(rep, rule_id::memory_output_coverage);
  REQUIRE(d != nullptr);
  CHECK(d->sev() == analysis::severity::error);
  const std::string msg(d->message.view());
  // the smallest failing extent: 1 row tile, 2 column tiles; the point (M 0, N 1) rotates to row tile 1
  CHECK(msg.find("M = 64 (1 block of 64), N = 256 (2 blocks of 128)") != std::string::npos);
  CHECK(msg.find("the point (M 0, N 1)") != std::string::npos);
  CHECK(msg.find("M 64..127") != std::string::npos);
  CHECK(msg.find("outside the tensor") != std::string::npos);
  CHECK(num(*d, "kind") == 1);
  CHECK(num(*d, "axis0_count") == 1);
  CHECK(num(*d, "axis1_count") == 2);
  CHECK(std::string(d->help.view()).find("bijection") != std::string::npos);
  // the let_index's definition is shown where it was written
  bool value_note = false;
  for (int i = 0; i < d->note_count; ++i) value_note = value_note || std::string(d->notes[i].text.view()).find("(tile.M + tile.N) % 4") != std::string::npos;
  CHECK(value_note);
  CHECK_FALSE(noted(rep, rule_id::memory_tile_coverage));  // checked now, so not noted as unchecked
}

TEST_CASE("output coverage: two points on one tile, and a pair swap at an odd count") {
  {
    const auto rep = analysis::analyze(store_at(remap::halve));
    const auto* d = find(rep, rule_id::memory_output_coverage);
    REQUIRE(d != nullptr);
    const std::string msg(d->message.view());
    CHECK(num(*d, "kind") == 2);
    CHECK(msg.find("the point (M 1, N 0) and the point (M 0, N 0) both write M 0..63, N 0..127") != std::string::npos);
  }
  {
    const auto rep = analysis::analyze(store_at(remap::swap_pairs));
    const auto* d = find(rep, rule_id::memory_output_coverage);
    REQUIRE(d != nullptr);
    CHECK(num(*d, "kind") == 1);
    CHECK(num(*d, "axis0_count") == 1);  // 1 row tile: row tile 0 swaps to 1
  }
}

TEST_CASE("output coverage: remappings that are bijections at every count are clean and checked") {
  for (remap how : {remap::identity, remap::identity_divmod}) {
    const auto rep = analysis::analyze(store_at(how));
    CHECK(find(rep, rule_id::memory_output_coverage) == nullptr);
    CHECK(find(rep, rule_id::memory_tile_coverage) == nullptr);
    CHECK_FALSE(noted(rep, rule_id::memory_output_coverage));
    CHECK_FALSE(noted(rep, rule_id::memory_tile_coverage));
  }
}

TEST_CASE("output coverage: a row tile read from a tensor is data, noted as unchecked, not enumerated") {
  const auto rep = analysis::analyze(store_at(remap::from_tensor));
  CHECK(find(rep, rule_id::memory_output_coverage) == nullptr);
  CHECK(noted(rep, rule_id::memory_tile_coverage));
}

TEST_CASE("output coverage: the shipped GEMM raises nothing new") {
  const auto rep = analysis::analyze(kernels::gemm_bf16_sm90());
  CHECK(find(rep, rule_id::memory_output_coverage) == nullptr);
}
