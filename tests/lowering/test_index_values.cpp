// Lowering tier for index values (r.read_index, r.let_index, r.let_min), element origins and load/store
// limits: a copy of the rows of each entry of a packed batch (entry b owns rows Off[b] .. Off[b + 1] - 1),
// analyzed clean and assembled by NVRTC for every target the op table lowers them on.
#include <doctest/doctest.h>

#include "lower_check.hpp"
#include "tests/kernels/split_tail_sum.hpp"

using namespace cake;
using lower_check::has;
using lower_check::lower_and_build;

namespace {
program packed_rows(target_id t) {
  auto k = kernel("packed_rows").target(t);
  auto [R, C, N, MR] = k.dims("R", "C", "N", "MR");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<f32>("Y", dims(R, C));
  auto Off = k.input<i32>("Off", dims(N, MR));  // (b, 0) = Off[b], viewed with strides [1, 0]
  auto sp = k.parallel(tiles(MR, 32), each(N));
  k.role("rows", warps(4), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.for_each(sp, [&](auto q, auto b) {
      const index_expr start = r.read_index(Off.at(b, 0)), end = r.read_index(Off.at(b + 1, 0));
      const index_expr len = r.let_index(end - start);
      const index_expr last = r.let_min(q * 32 + 32, len);
      r.when(q * 32 < len, [&] {
        r.loop(tiles(C, 64), [&](auto j) {
          const index_expr row = start + q * 32 + r.warp() * 8;
          r.load(x, X.tile(row, j).elements_at(0).limit(0, start + last));
          r.store(Y.tile(row, j).elements_at(0).limit(0, end), x);
        });
      });
    });
  });
  return k.build();
}
}  // namespace

TEST_CASE("index values lower on every target the op table lowers them on") {
  const auto targets = lower_check::lowering_targets({op_kind::read_index, op_kind::let_index, op_kind::load_global, op_kind::store_global});
  CHECK(targets.size() == 3);
  for (target_id t : targets) {
    const program p = packed_rows(t);
    const auto b = lower_and_build(p);
    CHECK(has(b.ptx(), "ld.global.nc"));  // the offsets (__ldg)
    CHECK(has(b.source(), "cake_dev::min_ll(d_R, "));
  }
}

// count_arrival and load_add: each of 4 splits of a row block stores its part, arrives on the block's counter,
// and the last adds the others' parts (one warp per unit: the count broadcast by shuffle; a warpgroup: by a
// scratch word between two barriers of the warpgroup).
namespace {
program split_rows(target_id t, bool warpgroup) {
  auto k = kernel("split_rows").target(t);
  auto [R, C, NS, CR] = k.dims("R", "C", "NS", "CR");
  auto X = k.input<f32>("X", dims(R, C));
  auto Y = k.output<bf16>("Y", dims(R, C));
  auto Part = k.output<f32>("part", dims(NS, R, C));
  auto Count = k.output<i32>("count", dims(CR, C));
  const int rows = warpgroup ? 64 : 32;
  auto sp = k.parallel(split(4), tiles(R, rows), tiles(C, 64));
  auto body = [&](role& r) {
    auto x = r.fragment<f32>("x", {rows, 64});
    r.for_each(sp, [&](auto s, auto i, auto j) {
      r.load(x, X.tile(i, j));
      r.set(x, x * 0.25f);
      r.store(Part.tile(s, i, j), x);
      auto before = r.count_arrival(Count.at(i, j), 4);
      r.when(eq(before, 3), [&] {
        r.for_range(4, [&](auto q) { r.when(ne(q, s), [&] { r.load_add(x, Part.tile(q, i, j)); }); });
        r.store(Y.tile(i, j), r.convert<bf16>(x));
      });
    });
  };
  if (warpgroup) k.role("rows", warpgroups(1), body);
  else k.role("rows", warps(1), body);
  return k.build();
}
}  // namespace

TEST_CASE("count_arrival and load_add lower on every target the op table lowers them on") {
  const auto targets = lower_check::lowering_targets({op_kind::count_arrival, op_kind::load_global, op_kind::store_global, op_kind::when});
  CHECK(targets.size() == 3);
  for (target_id t : targets)
    for (bool wg : {false, true}) {
      INFO(to_string(t) << (wg ? " warpgroup" : " warp"));
      const auto b = lower_and_build(split_rows(t, wg));
      CHECK(lower_check::count(b.ptx(), "atom.acq_rel.gpu.global.inc.u32") == 1);
      CHECK_FALSE(has(b.ptx(), "ld.global.nc"));  // the parts are read coherently
      CHECK(has(b.ptx(), wg ? "bar.sync" : "shfl.sync"));
    }
}

// k.split_tail: the walk's units (the last round's points split over a range), the part's range as a loop's
// bounds, and count_arrival with a run-time count (r.walk_parts()); analyzed clean and assembled for every
// target the op table lowers the ops on (tests/kernels/split_tail_sum.hpp; run on a GPU: tests/gpu/test_compute.cpp).
TEST_CASE("a split tail lowers on every target: units, part ranges and a run-time arrival count") {
  const auto targets = lower_check::lowering_targets({op_kind::count_arrival, op_kind::load_global, op_kind::store_global, op_kind::when, op_kind::loop});
  CHECK(targets.size() == 3);
  for (target_id t : targets)
    for (bool wg : {false, true})
      for (bool serp : {false, true}) {
        const std::string what = std::string(to_string(t)) + (wg ? " warpgroup" : " warp") + (serp ? " serpentine" : "");
        INFO(what);
        const auto b = lower_and_build(cake_test::split_tail_sum(t, 8, serp, wg));
        CHECK(has(b.source(), "t_units = t_whole + (walk - t_whole) * t_parts"));
        CHECK(has(b.source(), "t_stride / rest < 8 ? t_stride / rest : 8"));
        // the whole rounds in a loop, their points' part variables constants; the last round a second copy of the body
        CHECK(has(b.source(), "for (int t_iter = t_first, t_step = 0; t_step < (t_steps < t_whole / t_stride ? t_steps : t_whole / t_stride);"));
        CHECK(has(b.source(), "const int t_point = t_unit;  // (a whole round)"));
        CHECK(has(b.source(), "if (((long long)(1LL) == (long long)((1)))) {"));  // r.walk_parts() == 1 in a whole round: a constant
        CHECK(has(b.source(), "if (((long long)((long long)(t_unit >= t_whole ? t_parts : 1)) == (long long)((1)))) {"));  // in the last round
        CHECK(has(b.source(), "// the last round\n"));
        CHECK(has(b.source(), "if (t_steps > t_whole / t_stride) {"));
        CHECK(has(b.source(), "(unsigned)(((long long)(t_unit >= t_whole ? t_parts : 1)) - 1))"));  // the counter wraps at the run-time part count
        CHECK(lower_check::count(b.ptx(), "atom.acq_rel.gpu.global.inc.u32") == 1);
      }
  // without a split tail nothing of it is emitted
  const auto plain = lower_and_build(split_rows(sm_90a, true));
  CHECK_FALSE(has(plain.source(), "t_units"));
  CHECK_FALSE(has(plain.source(), "t_parts"));
}
