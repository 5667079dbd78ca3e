// Unit tests for cake/plan/fragments.hpp: the fragment layout of every register tile. Frames are seeded by
// the ops that fix a layout (wgmma, mma.sync, ldmatrix, tcgen05.ld/st), spread through r.set, convert and
// the reductions by unification, given to loaded tiles as blocked frames (16-byte vectors, threads per
// row chosen per shape), and completed for vectors; 16-bit conversions read only by stores are lazy;
// conflicts are recorded with their op and tiles; cross-warp reductions and cluster sums get scratch.
#include <doctest/doctest.h>

#include <string>

#include "../../kernels/gemm/sm90_bf16.hpp"
#include "../../kernels/gemm/sm90_splitk.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;
using plan::frag_kind;
using plan::shape_class;

namespace {

int reg_index(const program& p, std::string_view name) {
  for (std::size_t i = 0; i < p.regs.size(); ++i)
    if (p.regs[i].nm == name) return static_cast<int>(i);
  FAIL("no register tile named " << std::string(name));
  return -1;
}

// A warpgroup role: S = A B^T on wgmma, a row max, a column scale, a bf16 copy stored to global.
program wgmma_epilogue(int rows, int cols) {
  auto k = kernel("wg").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto Cs = k.input<f32>("cs", dims(N));
  auto D = k.output<bf16>("D", dims(M, N));
  auto sA = k.smem<bf16>("sA", {rows, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {cols, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  k.role("math", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {rows, cols});
    auto m = r.row_vector<f32>("m", rows);
    auto cs = r.col_vector<f32>("cs", cols);
    r.tma_load(sA, A.tile(0, 0), bar);
    r.tma_load(sB, B.tile(0, 0), bar);
    r.wait(bar);
    r.wgmma(acc, sA, sB).overwrite();
    r.row_max(m, acc);
    r.load(cs, Cs.tile(0));
    r.set(acc, acc * cs - m);
    r.store(D.tile(0, 0), r.convert<bf16>(acc));
  });
  return k.build();
}

// One tile of `rows x cols` loaded from a tensor of dtype Src into a register tile of dtype Reg.
template <class Reg, class Src>
program loaded_tile(int rows, int cols, units_t u) {
  auto k = kernel("ld").target(sm_90a);
  auto X = k.input<Src>("X", dims("R", "C"));
  auto Y = k.output<Src>("Y", dims("R", "C"));
  k.role("rows", u, [&](role& r) {
    auto x = r.fragment<Reg>("x", {rows, cols});
    r.load(x, X.tile(0, 0));
    r.store(Y.tile(0, 0), x);
  });
  return k.build();
}

}  // namespace

TEST_CASE("fragments: wgmma seeds the accumulator frame, vectors and conversions share it") {
  const program p = wgmma_epilogue(64, 256);
  REQUIRE(p.errors.empty());
  const auto F = plan::plan_fragments(p);
  CHECK(F.conflict_op == -1);
  const auto& acc = F.regs[reg_index(p, "acc")];
  CHECK(acc.f == plan::frame{frag_kind::wgmma_acc, 64, 256});
  CHECK(acc.cls == shape_class::full);
  CHECK(acc.threads == 128);
  CHECK(acc.count == 64 * 256 / 128);
  const auto& m = F.regs[reg_index(p, "m")];
  CHECK(m.f == acc.f);  // unified through row_max and r.set
  CHECK(m.cls == shape_class::row_vec);
  CHECK(m.count == 2);  // rows g and g + 8 of the warp's 16
  const auto& cs = F.regs[reg_index(p, "cs")];
  CHECK(cs.f == acc.f);  // a loaded vector takes the frame of the tile it is combined with, not a blocked one
  CHECK(cs.cls == shape_class::col_vec);
  CHECK(cs.count == 256 / 4);
  const auto& out = F.regs[reg_index(p, "acc.bf16")];
  CHECK(out.f == acc.f);
  CHECK(out.lazy_src == reg_index(p, "acc"));  // read only by the store: computed where it is read
  CHECK(out.known());
  // Two warpgroups' worth of rows per warpgroup: two 64-row blocks.
  const program q = wgmma_epilogue(128, 64);
  const auto G = plan::plan_fragments(q);
  CHECK(G.conflict_op == -1);
  CHECK(G.regs[reg_index(q, "acc")].count == 128 * 64 / 128);
  CHECK(G.regs[reg_index(q, "m")].count == 4);
  CHECK(G.regs[reg_index(q, "cs")].count == 16);
  CHECK(G.scratch_bytes[0] == 0);  // rows of accumulator frames stay inside a warp
}

TEST_CASE("fragments: mma.sync seeds its accumulator frame per warp, ldmatrix gives the same layout") {
  auto k = kernel("mma").target(sm_80);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto sA = k.smem<bf16>("sA", {32, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {32, 64}, swizzle::b128);
  auto ready = k.named_barrier("ready");
  k.role("w", warps(4), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {32, 32});
    auto a = r.fragment<bf16>("a", {32, 64});
    auto l = r.row_vector<f32>("l", 32);
    auto c = r.col_vector<f32>("c", 32);
    r.cp_async(sA, A.tile(0, 0));
    r.cp_async(sB, B.tile(0, 0));
    r.cp_async_commit();
    r.cp_async_wait(0);
    r.sync(ready);
    r.ldmatrix(a, sA);
    r.fill(acc, 0.0f);
    r.mma_sync(acc, a, sB);
    r.row_sum(l, acc);
    r.fill(c, 1.0f);
    r.set(acc, acc * c / l);
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto F = plan::plan_fragments(p);
  CHECK(F.conflict_op == -1);
  const auto& acc = F.regs[reg_index(p, "acc")];
  CHECK(acc.f == plan::frame{frag_kind::mma_acc, 32, 32});
  CHECK(acc.threads == 32);
  CHECK(acc.count == 32 * 32 / 32);
  const auto& a = F.regs[reg_index(p, "a")];
  CHECK(a.f == plan::frame{frag_kind::mma_acc, 32, 64});
  CHECK(a.count == 64);
  CHECK(F.regs[reg_index(p, "l")].f == acc.f);
  CHECK(F.regs[reg_index(p, "l")].count == 2 * (32 / 16));
  CHECK(F.regs[reg_index(p, "c")].f == acc.f);
  CHECK(F.regs[reg_index(p, "c")].count == 32 / 4);
}

TEST_CASE("fragments: tcgen05.ld seeds one row per thread (TMEM rows), tcgen05.st keeps it") {
  auto k = kernel("tm").target(sm_100a);
  auto t = k.tmem("t", columns(64));
  k.role("epi", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {128, 64});
    auto m = r.row_vector<f32>("m", 128);
    auto c = r.col_vector<f32>("c", 64);
    r.tmem_alloc(t);
    r.tmem_load(x, t);
    r.row_max(m, x);
    r.fill(c, 2.0f);
    r.set(x, x * c - m);
    r.tmem_store(t, x);
    r.tmem_dealloc(t);
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto F = plan::plan_fragments(p);
  CHECK(F.conflict_op == -1);
  const auto& x = F.regs[reg_index(p, "x")];
  CHECK(x.f == plan::frame{frag_kind::tmem_rows, 128, 64});
  CHECK(x.count == 64);
  CHECK(F.regs[reg_index(p, "m")].count == 1);
  CHECK(F.regs[reg_index(p, "c")].count == 64);
}

TEST_CASE("fragments: blocked frames: 16-byte vectors, as few threads per row as cover the rows in whole passes") {
  struct expect {
    int rows, cols;
    dtype dt;
    int threads;
    int vec, tpr;
    bool ok;
  };
  const expect cases[] = {
      {8, 64, dtype::f32, 128, 4, 16, true},     // 16 threads per row: the 8 rows in one pass
      {64, 64, dtype::bf16, 128, 8, 2, true},    // 64 rows: two threads per row, one pass
      {128, 64, dtype::bf16, 128, 8, 1, true},   // a row per thread
      {4, 256, dtype::bf16, 32, 8, 8, true},     // a warp: 8 lanes per row
      {1, 1024, dtype::bf16, 32, 8, 32, true},   // one row over the whole warp
      {1, 4096, dtype::bf16, 128, 8, 128, true}, // one row over a warpgroup: wider than a warp
      {2, 2048, dtype::bf16, 128, 8, 64, true},  // two rows per warpgroup: two warps per row
      {32, 6, dtype::f32, 32, 2, 1, true},       // 6 columns: 8-byte vectors, 3 per row
      {32, 4, dtype::bf16, 32, 4, 1, true},      // narrower than a 16-byte vector
      {16, 12, dtype::f16, 32, 4, 1, false},     // 16 rows do not fill a pass of 32 one-thread rows
      {3, 64, dtype::f32, 128, 4, 16, false},    // 3 rows in passes of 8
      {64, 64, dtype::i32, 32, 4, 1, true},      // a row per lane, two passes
  };
  for (const auto& c : cases) {
    INFO(c.rows << " x " << c.cols << " " << to_string(c.dt) << " over " << c.threads << " threads");
    const auto f = plan::blocked_frame(c.rows, c.cols, c.dt, c.threads);
    CHECK(f.kind == frag_kind::blocked);
    CHECK(f.rows == c.rows);
    CHECK(f.cols == c.cols);
    CHECK(f.vec == c.vec);
    CHECK(f.tpr == c.tpr);
    CHECK(plan::frame_ok(f, c.threads) == c.ok);
    if (c.ok) {
      // every element of the tile is held by exactly one thread
      CHECK(plan::elements(f, shape_class::full, c.threads) * c.threads == c.rows * c.cols);
      CHECK(f.rpp(c.threads) * f.tpr == c.threads);
    }
  }
}

TEST_CASE("fragments: a loaded tile gets the blocked frame of its shape, unit and narrower dtype") {
  {
    const program p = loaded_tile<bf16, bf16>(1, 1024, warps(4));
    const auto F = plan::plan_fragments(p);
    const auto& x = F.regs[0];
    CHECK(x.f == plan::blocked_frame(1, 1024, dtype::bf16, 32));
    CHECK(x.f.vec == 8);
    CHECK(x.f.tpr == 32);
    CHECK(x.count == 32);
    CHECK(F.conflict_op == -1);
    CHECK(F.scratch_bytes[0] == 0);
  }
  {
    // An f32 tile loaded from bf16: vectors of 8 (16 bytes of the tensor's elements).
    const program p = loaded_tile<f32, bf16>(8, 256, warpgroups(1));
    const auto& x = plan::plan_fragments(p).regs[0];
    CHECK(x.f.vec == 8);
    CHECK(x.f.tpr == 16);
    CHECK(x.count == 8 * 256 / 128);
  }
  {
    // A bf16 tile loaded from f32: vectors of the narrower dtype too (8 elements: 16 bytes of the tile).
    const program p = loaded_tile<bf16, f32>(8, 256, warpgroups(1));
    const auto& x = plan::plan_fragments(p).regs[0];
    CHECK(x.f.vec == 8);
    CHECK(x.f.tpr == 16);
    CHECK(x.count == 16);
  }
  {
    const program p = loaded_tile<f32, f32>(64, 32, warps(2));
    const auto& x = plan::plan_fragments(p).regs[0];
    CHECK(x.f == plan::blocked_frame(64, 32, dtype::f32, 32));
    CHECK(x.threads == 32);
    CHECK(x.count == 64);
  }
  {
    // A shape that does not split over the unit: recorded as a conflict of the tile (op -2).
    const program p = loaded_tile<f32, f32>(3, 64, warpgroups(1));
    const auto F = plan::plan_fragments(p);
    CHECK(F.conflict_op == -2);
    CHECK(F.conflict_a == 0);
    CHECK(std::string(F.conflict_why) == "the tile does not split evenly over the threads of its unit in its layout");
  }
}

TEST_CASE("fragments: layouts spread through set, convert and reductions, argmin and scatter join their vectors") {
  auto k = kernel("spread").target(sm_90a);
  auto [N, K, D] = k.dims("N", "K", "D");
  auto X = k.input<bf16>("X", dims(N, D));
  auto I = k.input<i32>("idx", dims(N));
  auto Sums = k.output<f32>("sums", dims(K, D));
  k.role("rows", warps(2), [&](role& r) {
    auto x = r.fragment<bf16>("x", {8, 256});
    auto y = r.fragment<f32>("y", {8, 256});
    auto m = r.row_vector<f32>("m", 8);
    auto best = r.row_vector<f32>("best", 8);
    auto arg = r.row_vector<i32>("arg", 8);
    auto idx = r.row_vector<i32>("idx", 8);
    auto col = r.col_vector<f32>("col", 256);
    r.load(x, X.tile(0, 0));
    r.set(y, x * 2.0f + col);
    r.row_max(m, y);
    r.row_argmin(best, arg, y, index_expr(0));
    auto h = r.convert<f16>(y);
    r.load(idx, I.tile(0));
    r.scatter_add(Sums.tile(0, 0), y, idx);
    r.fill(col, 0.0f);
    (void)h;
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto F = plan::plan_fragments(p);
  CHECK(F.conflict_op == -1);
  const auto frame = plan::blocked_frame(8, 256, dtype::bf16, 32);
  for (const char* n : {"x", "y", "m", "best", "arg", "idx", "col", "y.f16"}) {
    INFO(n);
    CHECK(F.regs[reg_index(p, n)].f == frame);
  }
  CHECK(F.regs[reg_index(p, "y")].count == 8 * 256 / 32);
  CHECK(frame.tpr == 4);
  CHECK(F.regs[reg_index(p, "m")].count == 1);     // the 8 rows in one pass of 8 rows x 4 lanes
  CHECK(F.regs[reg_index(p, "col")].count == 64);  // 256 columns over 4 lanes
  CHECK(F.regs[reg_index(p, "y.f16")].lazy_src == reg_index(p, "y"));  // never read by compute: no registers of its own
}

TEST_CASE("fragments: vectors never combined with a full tile get a blocked frame over themselves") {
  auto k = kernel("vec").target(sm_90a);
  auto V = k.input<f32>("V", dims("N"));
  auto W = k.output<f32>("W", dims("N"));
  k.role("r", warpgroups(1), [&](role& r) {
    auto rv = r.row_vector<f32>("rv", 128);
    auto cv = r.col_vector<f32>("cv", 512);
    auto one = r.fragment<f32>("one", {1, 1});
    r.load(rv, V.tile(0));
    r.set(rv, rv + one);
    r.load(cv, V.tile(0));
    r.store(W.tile(0), cv);
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto F = plan::plan_fragments(p);
  CHECK(F.conflict_op == -1);
  const auto& rv = F.regs[reg_index(p, "rv")];
  CHECK(rv.f == plan::frame{frag_kind::blocked, 128, 1, 1, 1});
  CHECK(rv.cls == shape_class::row_vec);
  CHECK(rv.count == 1);  // one row per thread
  const auto& cv = F.regs[reg_index(p, "cv")];
  CHECK(cv.f == plan::blocked_frame(1, 512, dtype::f32, 128));
  CHECK(cv.cls == shape_class::col_vec);
  CHECK(cv.count == 4);
  const auto& one = F.regs[reg_index(p, "one")];
  CHECK(one.cls == shape_class::scalar);
  CHECK(one.known());
  CHECK(one.count == 1);
}

TEST_CASE("fragments: lazy 16-bit conversions: only when read by stores and nothing changes source or copy") {
  // The reference GEMM: the bf16 copy of the accumulator is read by stmatrix only.
  {
    constexpr program p = kernels::gemm_bf16_sm90();
    const auto F = plan::plan_fragments(p);
    CHECK(F.regs[reg_index(p, "acc.bf16")].lazy_src == reg_index(p, "acc"));
  }
  auto build = [](int variant) {
    auto k = kernel("lazy").target(sm_90a);
    auto D = k.output<bf16>("D", dims("M", "N"));
    auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128);
    auto bar = k.mbarrier("bar");
    k.role("r", warpgroups(1), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {64, 64});
      auto o = r.accumulator<f32>("o", {64, 64});
      r.fill(acc, 1.0f);
      r.fill(o, 0.0f);
      r.wait(bar);
      auto out = r.convert<bf16>(acc);
      if (variant == 1) r.set(out, out * 2.0f);   // read and written by compute: materialized
      if (variant == 2) r.fill(acc, 0.0f);        // the source changes before the store: materialized
      if (variant == 3) r.wgmma(o, out, sB);      // an MMA operand: materialized
      r.store(D.tile(0, 0), out);
    });
    return k.build();
  };
  CHECK(plan::plan_fragments(build(0)).regs[2].lazy_src == 0);
  CHECK(plan::plan_fragments(build(1)).regs[2].lazy_src == -1);
  CHECK(plan::plan_fragments(build(2)).regs[2].lazy_src == -1);
  CHECK(plan::plan_fragments(build(3)).regs[2].lazy_src == -1);
  // Not from f32, or not to 16 bits: never lazy.
  auto k = kernel("lazy2").target(sm_90a);
  auto D = k.output<bf16>("D", dims("M", "N"));
  k.role("r", warpgroups(1), [&](role& r) {
    auto a = r.accumulator<f32>("a", {64, 64});
    r.fill(a, 1.0f);
    auto h = r.convert<f16>(a);
    auto b = r.convert<bf16>(h);
    r.store(D.tile(0, 0), b);
    r.store(D.tile(0, 1), r.convert<i32>(a));
  });
  const auto F = plan::plan_fragments(k.build());
  CHECK(F.regs[1].lazy_src == -1);  // the f16 copy of f32 is read by a convert, not by a store
  CHECK(F.regs[2].lazy_src == -1);  // bf16 from f16: not from f32
  CHECK(F.regs[3].lazy_src == -1);  // i32: not 16-bit
}

TEST_CASE("fragments: conflicts name the op, the two tiles and why") {
  SUBCASE("two full tiles of different accumulator frames meet in one r.set") {
    auto k = kernel("c1").target(sm_90a);
    auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
    auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
    auto sC = k.smem<bf16>("sC", {64, 64}, swizzle::b128);
    int set = -1;
    k.role("r", warpgroups(1), [&](role& r) {
      auto a1 = r.accumulator<f32>("a1", {64, 128});
      auto a2 = r.accumulator<f32>("a2", {64, 64});
      r.wgmma(a1, sA, sB).overwrite();
      r.wgmma(a2, sA, sC).overwrite();
      set = r.set(a1, a1 + a2).id;
    });
    const auto F = plan::plan_fragments(k.build());
    CHECK(F.conflict_op == set);
    CHECK(F.conflict_a == 0);
    CHECK(F.conflict_b == 1);
    CHECK(std::string(F.conflict_why) == "the two tiles have different fragment layouts");
  }
  SUBCASE("a tile of another shape combined with a laid-out one") {
    auto k = kernel("c2").target(sm_90a);
    auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
    auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
    int set = -1;
    k.role("r", warpgroups(1), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {64, 128});
      auto y = r.fragment<f32>("y", {128, 128});
      r.wgmma(acc, sA, sB).overwrite();
      set = r.set(y, acc * 2.0f).id;
    });
    const auto F = plan::plan_fragments(k.build());
    CHECK(F.conflict_op == set);
    CHECK(std::string(F.conflict_why) == "the shapes do not broadcast (a full tile, an R x 1 or a 1 x C vector of the same R, C)");
  }
  SUBCASE("two ops fix different layouts of one tile (wgmma A operand and ldmatrix)") {
    auto k = kernel("c3").target(sm_90a);
    auto s = k.smem<bf16>("s", {64, 64}, swizzle::b128);
    auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128);
    int ldm = -1;
    k.role("r", warpgroups(1), [&](role& r) {
      auto acc = r.accumulator<f32>("acc", {64, 64});
      auto a = r.fragment<bf16>("a", {64, 64});
      r.wgmma(acc, a, sB).overwrite();
      ldm = r.ldmatrix(a, s).id;
    });
    const auto F = plan::plan_fragments(k.build());
    CHECK(F.conflict_op == ldm);
    CHECK(F.conflict_a == 1);
    CHECK(std::string(F.conflict_why) == "the tile already has another layout (two ops fix different fragment layouts)");
  }
}

TEST_CASE("fragments: scratch for row reductions across warps (blocked rows wider than a warp) and cluster sums") {
  auto rows = [](int rows, int cols, int units, bool arg) {
    auto k = kernel("wide").target(sm_90a);
    auto X = k.input<bf16>("X", dims("R", "C"));
    k.role("rows", warpgroups(units), [&](role& r) {
      auto x = r.fragment<bf16>("x", {rows, cols});
      auto m = r.row_vector<f32>("m", rows);
      auto i = r.row_vector<i32>("i", rows);
      r.load(x, X.tile(0, 0));
      if (arg) r.row_argmax(m, i, x, index_expr(0));
      else r.row_sum(m, x);
    });
    return k.build();
  };
  {
    const auto F = plan::plan_fragments(rows(2, 2048, 2, false));  // two warps per row
    CHECK(F.regs[0].f.tpr == 64);
    // per unit: a value and an index slot (8 bytes) per warp and row slot; two warpgroups
    CHECK(F.scratch_bytes[0] == 2 * 4 * 1 * 8);
    CHECK(F.unit_barrier[0]);
  }
  {
    const auto F = plan::plan_fragments(rows(1, 4096, 1, true));  // a row over the whole warpgroup
    CHECK(F.regs[0].f.tpr == 128);
    CHECK(F.scratch_bytes[0] == 1 * 4 * 1 * 8);
    CHECK(F.unit_barrier[0]);
  }
  {
    const auto F = plan::plan_fragments(rows(8, 1024, 1, false));  // a row inside a warp
    CHECK(F.regs[0].f.tpr == 16);
    CHECK(F.scratch_bytes[0] == 0);
    CHECK_FALSE(F.unit_barrier[0]);
  }
  {
    // The split-K GEMM: each thread's share of the 64 x 128 accumulator, for the whole role.
    constexpr program p = kernels::gemm_splitk_sm90();
    const auto F = plan::plan_fragments(p);
    const int math = 0;
    REQUIRE(p.roles[math].nm == "math");
    CHECK(F.regs[reg_index(p, "acc")].count == 64);
    CHECK(F.scratch_bytes[math] == 128 * 64 * 4);
    CHECK(F.unit_barrier[math]);
    CHECK(F.scratch_bytes[1] == 0);
  }
}
