// Unit tests for cake/lower/support.hpp: lower::unsupported names, for every op and operand form that
// lowering does not implement, why not. One small program per reason; the reason text is checked
// exactly (the analyzer reports it as instruction.not-lowered and the emitters guard with the same words).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <cake/lower/support.hpp>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"
#include "../../kernels/gemm/sm90_splitk.hpp"
#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {

// The reason op `id` of `p` is not lowered ("" when it is).
std::string why(const program& p, int id) {
  REQUIRE(id >= 0);
  REQUIRE(static_cast<std::size_t>(id) < p.ops.size());
  const auto plan = plan::make_plan(p);
  const char* w = lower::unsupported(p, plan, id);
  return w ? std::string(w) : std::string();
}
std::string why_first(const program& p, op_kind k) { return why(p, find_op(p, k)); }

// A warpgroup role of sm_90a (or a warp role of sm_80) with register tiles and 2-D tensors of each dtype.
struct compute_kit {
  kernel_builder k;
  tensor<f32> F32;
  tensor<bf16> BF16;
  tensor<f16> F16;
  tensor<e4m3> E4M3;
  tensor<i32> I32;
  explicit compute_kit(target_id t) : k(kernel("kit")) {
    k.target(t);
    auto [M, N] = k.dims("M", "N");
    F32 = k.output<f32>("f32", dims(M, N));
    BF16 = k.output<bf16>("bf16", dims(M, N));
    F16 = k.output<f16>("f16", dims(M, N));
    E4M3 = k.output<e4m3>("e4m3", dims(M, N));
    I32 = k.output<i32>("i32", dims(M));
  }
  units_t unit() const { return k.p.target == sm_80 ? warps(1) : warpgroups(1); }
};

}  // namespace

TEST_CASE("lower::unsupported: the reference kernels and their variants lower every op") {
  auto none = [](const program& p) {
    INFO(p.kernel_name.view());
    REQUIRE(p.errors.empty());
    const auto plan = plan::make_plan(p);
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const char* w = lower::unsupported(p, plan, static_cast<int>(i));
      CHECK_MESSAGE(w == nullptr, "op#" << i << ": " << (w ? w : ""));
    }
  };
  none(kernels::gemm_bf16_sm80());
  none(kernels::gemm_bf16_sm90());
  none(kernels::gemm_bf16_sm100());
  none(kernels::gemm_splitk_sm90());
  kernels::gemm_sm90_config c;
  c.pingpong = true, c.bm = 128, c.bn = 128, c.in_flight = 1;
  c.epi.bias = c.epi.row_scale = c.epi.col_scale = c.epi.residual = true;
  c.epi.act = kernels::gemm_activation::gelu_erf;
  none(kernels::gemm_bf16_sm90(c));
}

TEST_CASE("lower::unsupported: an op the op table does not lower for the target") {
  // Every op a target admits is lowered there (test "op table: the lowered column" below), so the reason
  // shows on an op the target lacks, recorded with its builder error (instruction.not-admitted) in a
  // schedule built at run time.
  auto build = [](target_id t) {
    auto k = kernel("k").target(t);
    auto A = k.input<bf16>("A", dims("M", "K"));
    auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
    k.role("w", warps(1), [&](role& r) { r.tma_load(sA, A.tile(0, 0)); });
    return k.build();
  };
  const program on80 = build(sm_80);
  CHECK_FALSE(on80.errors.empty());
  CHECK(why(on80, 0) == "this op is not lowered for the kernel's target");
  CHECK(why(build(sm_90a), 0).empty());
}

TEST_CASE("lower::unsupported: mbarriers and pipelines on sm_80, and a multi-stage region without a stage") {
  // Found by the builder fuzzer (tests/fuzz): the multi-stage region was refused by the lowering after a clean
  // analysis. A declared pipeline nothing uses is lowered on every target (its barriers are initialized).
  auto pipe = [](target_id t) {
    auto k = kernel("k").target(t);
    auto sX = k.smem<bf16>("sX", {32, 64}, swizzle::b128);
    (void)k.pipeline("p", stages(2)).carries(sX);
    auto bar = k.mbarrier("bar", arrivals(1));
    k.role("w", warps(1), [&](role& r) {
      r.arrive(bar);
      r.wait(bar);
    });
    return k.build();
  };
  for (target_id t : {target_id::sm_80, target_id::sm_90a}) {
    const program p = pipe(t);
    REQUIRE(p.errors.empty());
    CHECK(why(p, 0).empty());
    CHECK(why(p, 1).empty());
  }
  auto staged = [](bool named) {
    auto k = kernel("k").target(sm_90a);
    auto sS = k.smem<bf16>("sS", {64, 64}, swizzle::b128, copies(2));
    k.role("w", warpgroups(1), [&](role& r) {
      auto x = r.fragment<bf16>("x", {64, 64});
      r.fill(x, 1.0f);
      if (named) r.store(sS.stage(1), x);
      else r.store(sS, x);
    });
    return k.build();
  };
  CHECK(why(staged(false), 1) == "it uses a region of several stages without naming one (slot[region] from an acquire / wait, or region.stage(i))");
  CHECK(why(staged(true), 1).empty());
  // a tile prefetch names a region only for its box: any stage's is the same
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128, copies(3));
  k.role("w", warps(1), [&](role& r) { r.prefetch_l2(sA, A.tile(0, 1)); });
  REQUIRE(k.p.errors.empty());
  CHECK(why(k.p, 0).empty());
}

TEST_CASE("lower::unsupported: the forms of mbarrier pipelines sm_80 does not lower, and cp.async fills") {
  // A producer warp (or warpgroup) fills a 2-stage pipeline, a consumer role waits and releases.
  enum class fill { cp_async, tma, both, copy_in_when, commit_after_copy };
  auto build = [](target_id t, fill how, bool warpgroup_consumer = false) {
    auto k = kernel("k").target(t);
    auto [M, K] = k.dims("M", "K");
    auto A = k.input<bf16>("A", dims(M, K));
    auto sA = k.smem<bf16>("sA", {32, 64}, swizzle::b128);
    auto sB = k.smem<bf16>("sB", {32, 64}, swizzle::b128);
    auto ab = k.pipeline("ab", stages(2)).carries(sA, sB);
    k.role("load", warps(1), [&](role& r) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);                                        // op 1
        if (how == fill::tma || how == fill::both) r.tma_load(s[sA], A.tile(0, kt));
        if (how == fill::cp_async || how == fill::commit_after_copy) r.cp_async(s[sA], A.tile(0, kt));
        if (how == fill::copy_in_when) r.when(kt < 4, [&] { r.cp_async(s[sA], A.tile(0, kt)); });
        if (how == fill::tma) r.tma_load(s[sB], A.tile(1, kt));
        else r.cp_async(s[sB], A.tile(1, kt));
        if (how == fill::commit_after_copy) r.commit(ab, s);
      });
    });
    k.role("use", warpgroup_consumer ? warpgroups(1) : warps(1), [&](role& r) {
      r.loop(tiles(K, 64), [&](auto) {
        auto s = r.wait(ab);
        r.release(ab, s);
      });
    });
    return k.build();
  };
  const program ok80 = build(sm_80, fill::cp_async);
  REQUIRE(ok80.errors.empty());
  for (std::size_t i = 0; i < ok80.ops.size(); ++i) CHECK_MESSAGE(why(ok80, static_cast<int>(i)).empty(), "op#" << i);
  // the last copy into the acquired stage is where every thread arrives: counted per thread in 'full'
  CHECK(plan::cp_async_fill_of_acquire(ok80, find_op(ok80, op_kind::pipeline_acquire)) == 3);
  CHECK(plan::make_plan(ok80).barriers.pipelines[0].full_arrivals == 32);
  CHECK(plan::make_plan(ok80).barriers.pipelines[0].empty_arrivals == 1);

  const program tma80 = build(sm_80, fill::tma);  // (the TMA load itself: instruction.not-admitted)
  CHECK(why_first(tma80, op_kind::pipeline_acquire) == "a stage that TMA loads fill completes on transaction bytes (mbarrier expect_tx), which sm_80 does not have: fill the stage with cp.async (r.cp_async(slot[region], ...)) or retarget the kernel");
  CHECK(why_first(build(sm_90a, fill::tma), op_kind::pipeline_acquire).empty());
  CHECK(why_first(build(sm_90a, fill::both), op_kind::pipeline_acquire) == "a stage is filled by TMA or by cp.async, not both: its 'full' barrier counts transaction bytes or the copying threads' arrivals");
  for (target_id t : {target_id::sm_80, target_id::sm_90a}) {
    INFO(to_string(t));
    CHECK(why_first(build(t, fill::copy_in_when), op_kind::cp_async) == "a cp.async into an acquired stage must be in the body of its acquire (the same role, loop or when): every thread arrives on the stage's 'full' barrier after the last copy into it");
    CHECK(why_first(build(t, fill::commit_after_copy), op_kind::pipeline_commit) == "r.commit of a stage that cp.async fills is not lowered: its copies arrive on 'full' themselves (cp.async.mbarrier.arrive.noinc after the last one)");
  }
  CHECK(why_first(build(sm_80, fill::cp_async, true), op_kind::pipeline_release) == "on sm_80 a unit's leader arrives for it after __syncwarp(): release, commit and arrive are lowered from warps(n) roles, not from warpgroups");
  CHECK(why_first(build(sm_90a, fill::cp_async, true), op_kind::pipeline_release).empty());

  // user barriers: a remote arrive needs a cluster
  auto arrive = [](target_id t, bool remote) {
    auto k = kernel("k").target(t);
    auto bar = k.mbarrier("bar");
    k.role("w", warps(1), [&](role& r) {
      auto a = r.arrive(bar);
      if (remote) a.remote();
      r.wait(bar);
    });
    return k.build();
  };
  CHECK(why(arrive(sm_80, true), 0) == "a remote arrive (.remote()) needs a cluster, which sm_80 does not have: arrive on this CTA's barrier");
  CHECK(why(arrive(sm_80, false), 0).empty());
  CHECK(why(arrive(sm_90a, true), 0).empty());
}

TEST_CASE("lower::unsupported: fill and r.set into an 8-bit tile") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto q = r.fragment<e4m3>("q", {64, 64});
    auto x = r.fragment<f32>("x", {64, 64});
    r.fill(q, 1.0f);
    r.set(q, x * 2.0f);
    r.fill(x, 1.0f);
  });
  CHECK(why(f.k.p, 0) == "8-bit register tiles are not computed on: compute in f32 and convert");
  CHECK(why(f.k.p, 1) == "8-bit register tiles are not computed on: compute in f32 and convert");
  CHECK(why(f.k.p, 2).empty());
}

TEST_CASE("lower::unsupported: an 8-bit tile read in a reduced expression") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto q = r.fragment<e4m3>("q", {64, 64});
    auto x = r.fragment<f32>("x", {64, 64});
    auto s = r.row_vector<f32>("s", 64);
    r.row_sum(s, x * q);  // x leads: the 8-bit tile is another leaf
    r.row_sum(s, x * x);
  });
  CHECK(why(f.k.p, 0) == "an 8-bit register tile is read in a reduced expression: convert it first");
  CHECK(why(f.k.p, 1).empty());
}

TEST_CASE("lower::unsupported: an 8-bit tile read in an expression") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto q = r.fragment<e4m3>("q", {64, 64});
    auto x = r.fragment<f32>("x", {64, 64});
    r.set(x, q * 2.0f + x);
  });
  CHECK(why(f.k.p, 0) == "an 8-bit register tile is read in an expression: convert it first");
}

TEST_CASE("lower::unsupported: conversions to and from 8-bit tiles") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto q = r.convert<e4m3>(x);
    (void)r.convert<f32>(q);
    (void)r.convert<bf16>(x);
    // a 64 x 1 row vector holds one element per row: no group of 4 per thread to pack
    auto v = r.row_vector<f32>("v", 64);
    r.fill(v, 1.0f);
    r.set(x, x + v);
    (void)r.convert<e4m3>(v);
    // a 1 x 1 tile: one element per thread, no pair to convert together
    auto one = r.fragment<e4m3>("one", {1, 1});
    (void)r.convert<f32>(one);
  });
  CHECK(why(f.k.p, 0).empty());
  CHECK(why(f.k.p, 1).empty());
  CHECK(why(f.k.p, 2).empty());
  CHECK(why(f.k.p, 5) == "a conversion into an 8-bit register tile is lowered for layouts that hold whole groups of 4 elements per thread");
  CHECK(why(f.k.p, 6) == "a conversion from an 8-bit register tile is lowered for layouts that hold whole pairs of elements per thread");
}

TEST_CASE("lower::unsupported: a row reduction of an 8-bit tile") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto q = r.fragment<e4m3>("q", {64, 64});
    auto m = r.row_vector<f32>("m", 64);
    r.row_max(m, q);
  });
  CHECK(why(f.k.p, 0) == "reductions of 8-bit register tiles are not lowered");
}

TEST_CASE("lower::unsupported: a row reduction into a vector that is not 32-bit") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto mb = r.row_vector<bf16>("mb", 64);
    auto mi = r.row_vector<i32>("mi", 64);
    auto m = r.row_vector<f32>("m", 64);
    r.row_sum(mb, x);
    r.row_argmin(mb, mi, x, index_expr(0));
    r.row_sum(m, x);
  });
  CHECK(why(f.k.p, 0) == "a row reduction writes a 32-bit (f32 or i32) vector");
  CHECK(why(f.k.p, 1) == "a row reduction writes a 32-bit (f32 or i32) vector");
  CHECK(why(f.k.p, 2).empty());
}

TEST_CASE("lower::unsupported: an argmin/argmax index vector that is not i32") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto v = r.row_vector<f32>("v", 64);
    auto fi = r.row_vector<f32>("fi", 64);
    auto ii = r.row_vector<i32>("ii", 64);
    r.row_argmax(v, fi, x, index_expr(0));
    r.row_argmax(v, ii, x, index_expr(0));
  });
  CHECK(why(f.k.p, 0) == "an argmin/argmax index vector is i32");
  CHECK(why(f.k.p, 1).empty());
}

TEST_CASE("lower::unsupported: register loads and stores of 8-bit data (global)") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto q = r.fragment<e4m3>("q", {64, 64});
    r.load(x, f.E4M3.tile(0, 0));
    r.store(f.BF16.tile(0, 0), q);
    r.store(f.E4M3.tile(0, 0), x);
    r.load(x, f.BF16.tile(0, 0));
  });
  CHECK(why(f.k.p, 0) == "register loads and stores of 8-bit data are not lowered");
  CHECK(why(f.k.p, 1) == "register loads and stores of 8-bit data are not lowered");
  CHECK(why(f.k.p, 2) == "register loads and stores of 8-bit data are not lowered");
  CHECK(why(f.k.p, 3).empty());
}

TEST_CASE("lower::unsupported: atomic_add into a tensor that is neither f32 nor bf16") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.atomic_add(f.F16.tile(0, 0), x);
    r.atomic_add(f.F32.tile(0, 0), x);
    r.atomic_add(f.BF16.tile(0, 0), x);
  });
  CHECK(why(f.k.p, 0) == "atomic_add is lowered into f32 and bf16 tensors");
  CHECK(why(f.k.p, 1).empty());
  CHECK(why(f.k.p, 2).empty());
}

TEST_CASE("lower::unsupported: bf16 atomic_add on sm_80") {
  compute_kit f(sm_80);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {16, 64});
    r.atomic_add(f.BF16.tile(0, 0), x);
    r.atomic_add(f.F32.tile(0, 0), x);
  });
  CHECK(why(f.k.p, 0) == "bf16 atomic_add needs sm_90a or sm_100a (red.add.bf16x2)");
  CHECK(why(f.k.p, 1).empty());
}

TEST_CASE("lower::unsupported: loads and atomics of a part of a register tile") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.load(x.cols(0, 2), f.F32.tile(0, 0));
    r.atomic_add(f.F32.tile(0, 0), x.cols(1, 2));
  });
  CHECK(why(f.k.p, 0) == "loads and atomics of a part of a register tile are not lowered: use a tile of the part's shape");
  CHECK(why(f.k.p, 1) == "loads and atomics of a part of a register tile are not lowered: use a tile of the part's shape");
}

TEST_CASE("lower::unsupported: a store of a part of a 32-bit tile (parts are stored for 16-bit tiles)") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.fill(x, 0.0f);
    r.store(f.F32.tile(0, 0), x.cols(0, 2));
  });
  CHECK(why(f.k.p, 1) == "a store of a tile part is lowered for 16-bit tiles");
}

TEST_CASE("lower::unsupported: a store of a part of a tile in the blocked layout (parts are stored from MMA accumulators)") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 64});
    r.load(x, f.BF16.tile(0, 0));  // a tile read from memory and never an MMA's: the blocked layout
    r.store(f.BF16.tile(0, 1), x.cols(1, 2));
  });
  CHECK(why(f.k.p, 1) == "a store of a tile part is lowered from wgmma accumulators and TMEM rows: store a whole tile");
}

TEST_CASE("lower::unsupported: a store of a row part of a register tile") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<bf16>("x", {128, 64});
    r.fill(x, 0.0f);
    r.store(f.BF16.tile(0, 0), x.rows(0, 2));
    r.store(f.BF16.tile(0, 0), x.cols(0, 2));
  });
  CHECK(why(f.k.p, 1) == "a store of a row part of a register tile is not lowered");
  CHECK(why(f.k.p, 2).empty());
}

TEST_CASE("lower::unsupported: a store of a part of a tile in the mma.sync layout") {
  auto k = kernel("k").target(sm_80);
  auto D = k.output<bf16>("D", dims("M", "N"));
  auto s = k.smem<bf16>("s", {16, 64}, swizzle::b128);
  k.role("w", warps(1), [&](role& r) {
    auto a = r.fragment<bf16>("a", {16, 64});
    r.ldmatrix(a, s);
    r.store(D.tile(0, 0), a.cols(0, 2));
  });
  CHECK(why(k.p, 1) == "a store of a part of an mma.sync tile is not lowered");
}

TEST_CASE("lower::unsupported: scatter_add into a tensor that is not f32") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto i = r.row_vector<i32>("i", 64);
    r.scatter_add(f.BF16.tile(0, 0), x, i);
    r.scatter_add(f.F32.tile(0, 0), x, i);
  });
  CHECK(why(f.k.p, 0) == "scatter_add is lowered into f32 and i64 tensors");
  CHECK(why(f.k.p, 1).empty());
}

TEST_CASE("lower::unsupported: row_scan and column reductions need the blocked layout (col_sum: of a warp), fetch_add and scatter_store their dtypes") {
  auto k = kernel("k").target(sm_90a);
  auto [M, N, One] = k.dims("M", "N", "one");
  auto X = k.input<bf16>("X", dims(M, N));
  auto F = k.output<f32>("F", dims(M, N));
  auto H = k.output<bf16>("H", dims(M, One));
  auto Q = k.output<i64>("Q", dims(M, N));
  auto C = k.output<i32>("C", dims(M, One));
  auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128);
  k.role("wg", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    auto sc = r.fragment<f32>("sc", {64, 64});
    auto xb = r.fragment<bf16>("xb", {64, 64});
    auto cs = r.col_vector<f32>("cs", 64);
    auto a = r.fragment<bf16>("a", {64, 64});
    r.fill(a, 1.0f);
    r.wgmma(acc, a, sB);      // 1: acc takes the wgmma accumulator layout
    r.row_scan(sc, acc);      // 2
    r.load(xb, X.tile(0, 0));  // 3: blocked, but a warpgroup's
    r.col_sum(cs, xb);        // 4
  });
  k.role("w", warps(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {8, 64});
    auto s = r.fragment<f32>("s", {8, 64});
    auto c = r.col_vector<f32>("c", 64);
    auto i = r.row_vector<i32>("i", 8);
    auto o = r.row_vector<i32>("o", 8);
    r.load(x, X.tile(0, 0));           // 5
    r.row_scan(s, x);                  // 6
    r.col_sum(c, x);                   // 7
    r.fill(i, 0.0f);                   // 8
    r.fetch_add(o, H.tile(0, 0), i);   // 9: a bf16 counter
    r.fetch_add(o, C.tile(0, 0), i);   // 10
    r.scatter_store(Q.tile(0, 0), s, o);  // 11: into i64
    r.scatter_store(F.tile(0, 0), s, o);  // 12
  });
  CHECK(why(k.p, 2) == "row_scan is lowered for tiles (and 1 x C rows) in the blocked layout (tiles loaded from memory) whose rows stay inside one warp");
  CHECK(why(k.p, 4) == "column reductions are lowered for full tiles of a warp in the blocked layout (tiles loaded from memory), into a column vector");
  CHECK(why(k.p, 6).empty());
  CHECK(why(k.p, 7).empty());
  CHECK(why(k.p, 9) == "fetch_add is lowered for i32 and f32 counters");
  CHECK(why(k.p, 10).empty());
  CHECK(why(k.p, 11) == "scatter_store is lowered into 2-D tensors of 16- and 32-bit dtypes");
  CHECK(why(k.p, 12).empty());
}

TEST_CASE("lower::unsupported: the forms of fetch_add, scatter_store, row_scan and column reductions that are not lowered") {
  auto k = kernel("k").target(sm_90a);
  auto [M, N, One] = k.dims("M", "N", "one");
  auto X = k.input<bf16>("X", dims(M, N));
  auto F = k.output<f32>("F", dims(M, N));
  auto C = k.output<i32>("C", dims(M, One));
  auto C3 = k.output<i32>("C3", dims(M, N, One));
  auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128);
  k.role("wg", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    auto a = r.fragment<bf16>("a", {64, 64});
    auto i = r.row_vector<i32>("iw", 64);
    auto o = r.row_vector<i32>("ow", 64);
    r.fill(a, 1.0f);                  // 0
    r.wgmma(acc, a, sB);              // 1
    r.fill(i, 0.0f);                  // 2
    r.set(acc, acc + o);              // 3: o takes the accumulator's layout
    r.fetch_add(o, C.tile(0, 0), i);  // 4
  });
  k.role("w", warps(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {8, 64});
    auto s = r.fragment<f32>("s", {8, 64});
    auto sh = r.fragment<f32>("sh", {8, 32});
    auto i = r.row_vector<i32>("i", 8);
    auto o = r.row_vector<i32>("o", 8);
    auto oh = r.row_vector<bf16>("oh", 8);
    r.load(x, X.tile(0, 0));                       // 5
    r.fill(i, 0.0f);                               // 6
    r.fetch_add(o, C3.tile(0, 0, 0), i);           // 7
    r.fetch_add(o, C.tile(0, 0).limit(0, 5), i);   // 8
    r.fetch_add(oh, C.tile(0, 0), i);              // 9
    auto e8 = r.convert<e4m3>(x);                  // 10
    r.row_scan(s, e8);                             // 11
    r.row_scan(sh, x.cols(0, 2));                  // 12
    r.scatter_store(F.tile(0, 0), x.cols(0, 2), o);  // 13
    r.scatter_store(F.tile(0, 0), e8, o);          // 14
  });
  CHECK(why(k.p, 4) == "fetch_add is lowered for row vectors in the blocked layout whose rows stay inside one warp");
  CHECK(why(k.p, 7) == "fetch_add is lowered for 2-D counter tensors");
  CHECK(why(k.p, 8) == "fetch_add with .limit(pos, end) is not lowered");
  CHECK(why(k.p, 9) == "fetch_add writes its old values into a 32-bit (i32 or f32) row vector");
  CHECK(why(k.p, 11) == "scans and column reductions of 8-bit register tiles are not lowered");
  CHECK(why(k.p, 12) == "scans and column reductions read and write whole tiles: a part (.rows/.cols) is not lowered");
  CHECK(why(k.p, 13) == "scatter_store of a part of a register tile is not lowered: use a tile of the part's shape");
  CHECK(why(k.p, 14) == "scatter_store of an 8-bit tile is not lowered");
}

TEST_CASE("lower::unsupported: load_add adds 16- and 32-bit tensors into f32 tiles, not i64 ones") {
  auto k = kernel("k").target(sm_90a);
  auto [M, N] = k.dims("M", "N");
  auto S = k.input<i64>("S", dims(M, N));
  auto H = k.input<bf16>("H", dims(M, N));
  auto F = k.input<f32>("F", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  k.role("w", warps(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});
    r.fill(x, 0.0f);                 // 0
    r.load_add(x, S.tile(0, 0));     // 1
    r.load_add(x, H.tile(0, 0));     // 2
    r.load_add(x, F.tile(0, 0));     // 3
    r.store(Y.tile(0, 0), x);        // 4
  });
  CHECK(why(k.p, 1) == "load_add adds 16- and 32-bit tensors into f32 tiles");
  CHECK(why(k.p, 2).empty());
  CHECK(why(k.p, 3).empty());
  CHECK(k.p.ops[2].has(flag_accumulate));
}

TEST_CASE("lower::unsupported: i64 is a storage dtype of global tensors (f32 tiles in and out, atomics, no store, smem, TMA, cp.async)") {
  auto k = kernel("k").target(sm_90a);
  auto [M, N] = k.dims("M", "N");
  auto S = k.output<i64>("S", dims(M, N));
  auto s64 = k.smem<i64>("s64", {64, 64});
  auto bar = k.mbarrier("bar");
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto h = r.fragment<bf16>("h", {64, 64});
    auto q = r.fragment<i64>("q", {64, 64});
    auto i = r.row_vector<i32>("i", 64);
    r.load(x, S.tile(0, 0));            // 0: converted to f32
    r.atomic_add(S.tile(0, 0), x);      // 1: rounded to integers
    r.scatter_add(S.tile(0, 0), x, i);  // 2
    r.store(S.tile(0, 0), x);           // 3
    r.load(h, S.tile(0, 0));            // 4
    r.scatter_add(S.tile(0, 0), h, i);  // 5
    r.fill(q, 0.0f);                    // 6
    r.load(x, s64);                     // 7
    r.tma_load(s64, S.tile(0, 0), bar);  // 8: a TMA box or cp.async needs an smem tile of the tensor's dtype
    r.cp_async(s64, S.tile(0, 0));      // 9
  });
  CHECK(why(k.p, 0).empty());
  CHECK(why(k.p, 1).empty());
  CHECK(why(k.p, 2).empty());
  CHECK(why(k.p, 3) == "store_global into an i64 tensor is not lowered (atomic_add adds into it)");
  CHECK(why(k.p, 4) == "register loads and atomics of i64 tensors take f32 tiles");
  CHECK(why(k.p, 5) == "scatter_add into an i64 tensor takes an f32 tile");
  CHECK(why(k.p, 6) == "register tiles are not i64 (it is a storage dtype of global tensors)");
  CHECK(why(k.p, 7) == "smem tiles are not i64 (it is a storage dtype of global tensors)");
  CHECK(why(k.p, 8) == "smem tiles are not i64 (it is a storage dtype of global tensors)");
  CHECK(why(k.p, 9) == "smem tiles are not i64 (it is a storage dtype of global tensors)");
}

TEST_CASE("lower::unsupported: .limit(pos, end) on scatter_add (on a store, of a whole tile or of a part, it is lowered)") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<bf16>("x", {128, 64});
    auto y = r.fragment<f32>("y", {64, 64});
    auto i = r.row_vector<i32>("i", 64);
    r.fill(x, 0.0f);
    r.store(f.BF16.tile(0, 0).limit(0, 100), x.cols(0, 2));  // op 1
    r.store(f.BF16.tile(0, 0).limit(0, 100), x);             // op 2
    r.scatter_add(f.F32.tile(0, 0).limit(0, 100), y, i);     // op 3
  });
  CHECK(why(f.k.p, 1).empty());
  CHECK(why(f.k.p, 2).empty());
  CHECK(why(f.k.p, 3) == "scatter_add with .limit(pos, end) is not lowered");
}

TEST_CASE("lower::unsupported: scatter_add into a tensor that is not 2-D") {
  auto k = kernel("k").target(sm_90a);
  auto T = k.output<f32>("T", dims("B", "M", "N"));
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto i = r.row_vector<i32>("i", 64);
    r.scatter_add(T.tile(0, 0, 0), x, i);
  });
  CHECK(why(k.p, 0) == "scatter_add is lowered for 2-D tensors");
}

TEST_CASE("lower::unsupported: scatter_add of an 8-bit tile") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto q = r.fragment<e4m3>("q", {64, 64});
    auto i = r.row_vector<i32>("i", 64);
    r.scatter_add(f.F32.tile(0, 0), q, i);
  });
  CHECK(why(f.k.p, 0) == "scatter_add of an 8-bit tile is not lowered");
}

TEST_CASE("lower::unsupported: register loads and stores of 8-bit smem tiles") {
  auto k = kernel("k").target(sm_90a);
  auto s8 = k.smem<e4m3>("s8", {64, 64});
  auto s16 = k.smem<bf16>("s16", {64, 64});
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto q = r.fragment<e4m3>("q", {64, 64});
    r.load(x, s8);   // converted as it arrives
    r.store(s8, x);  // converted as it leaves
    r.load(q, s8);   // the bytes as they are
    r.store(s8, q);
    r.load(q, s16);  // an 8-bit tile's bytes from bf16 smem: convert in registers instead
    r.store(s16, q);
  });
  CHECK(why(k.p, 0).empty());
  CHECK(why(k.p, 1).empty());
  CHECK(why(k.p, 2).empty());
  CHECK(why(k.p, 3).empty());
  CHECK(why(k.p, 4) == "an 8-bit register tile is loaded from and stored to smem of its own dtype only (convert it in registers)");
  CHECK(why(k.p, 5) == "an 8-bit register tile is loaded from and stored to smem of its own dtype only (convert it in registers)");
}

namespace {

// wgmma operands: sA (rows x 64) and sB (cols x 64), 128B-swizzled, K-major, filled by TMA.
struct wgmma_kit {
  kernel_builder k;
  tensor<bf16> A, B;
  mbarrier_ref bar;
  wgmma_kit() : k(kernel("wg")) {
    k.target(sm_90a);
    auto [M, N, K] = k.dims("M", "N", "K");
    A = k.input<bf16>("A", dims(M, K));
    B = k.input<bf16>("B", dims(N, K));
    bar = k.mbarrier("bar");
  }
  smem_tile<bf16> region(const char* nm, int rows, swizzle s = swizzle::b128) { return k.smem<bf16>(nm, {rows, 64}, s); }
};

}  // namespace

TEST_CASE("lower::unsupported: wgmma with an accumulator that is not f32") {
  auto k = kernel("k").target(sm_90a);
  auto sA = k.smem<f16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<f16>("sB", {64, 64}, swizzle::b128);
  k.role("r", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f16>("acc", {64, 64});
    r.wgmma(acc, sA, sB);
  });
  REQUIRE(k.p.errors.empty());
  CHECK(why(k.p, 0) == "wgmma is lowered with f32 accumulators");
}

TEST_CASE("lower::unsupported: wgmma into a row part of an accumulator") {
  wgmma_kit w;
  auto sA = w.region("sA", 64), sB = w.region("sB", 128), sC = w.region("sC", 64);
  w.k.role("r", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {128, 128});
    r.wgmma(acc.rows(0, 2), sA, sB);
    r.wgmma(acc.cols(0, 2), sA, sC);
  });
  REQUIRE(w.k.p.errors.empty());
  CHECK(why(w.k.p, 0) == "wgmma into a row part of an accumulator is not lowered");
  CHECK(why(w.k.p, 1).empty());
}

TEST_CASE("lower::unsupported: wgmma with A from a part of a register tile") {
  wgmma_kit w;
  auto sB = w.region("sB", 64);
  w.k.role("r", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    auto a = r.fragment<bf16>("a", {64, 128});
    r.fill(a, 1.0f);
    r.wgmma(acc, a.cols(0, 2), sB);
    auto whole = r.fragment<bf16>("whole", {64, 64});
    r.fill(whole, 1.0f);
    r.wgmma(acc, whole, sB);
  });
  CHECK(why(w.k.p, 1) == "wgmma with A from registers is lowered for whole 16-bit tiles in the accumulator layout");
  CHECK(why(w.k.p, 3).empty());
}

TEST_CASE("lower::unsupported: MMA operands from unswizzled smem") {
  wgmma_kit w;
  auto sA = w.region("sA", 64, swizzle::none), sB = w.region("sB", 64, swizzle::none);
  auto sA2 = w.region("sA2", 64), sB2 = w.region("sB2", 64);
  w.k.role("r", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {64, 64});
    r.wgmma(acc, sA, sB2);
    r.wgmma(acc, sA2, sB);
    r.wgmma(acc, sA2, sB2);
  });
  CHECK(why(w.k.p, 0) == "an MMA operand from smem must be swizzled, its rows one swizzle span wide");
  CHECK(why(w.k.p, 1) == "an MMA operand from smem must be swizzled, its rows one swizzle span wide");
  CHECK(why(w.k.p, 2).empty());
}

TEST_CASE("lower::unsupported: an MN-major wgmma B operand wider than the accumulator") {
  auto k = kernel("k").target(sm_90a);
  auto [Sq, Sk, Dh] = k.dims("Sq", "Sk", "D");
  auto P = k.input<bf16>("P", dims(Sq, Sk));
  auto V = k.input<bf16>("V", dims(Sk, Dh));
  auto sP = k.smem<bf16>("sP", {64, 64}, swizzle::b128);
  auto sV = k.smem<bf16>("sV", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  int narrow = -1, exact = -1;
  k.role("r", warpgroups(1), [&](role& r) {
    auto o32 = r.accumulator<f32>("o32", {64, 32});
    auto o64 = r.accumulator<f32>("o64", {64, 64});
    r.tma_load(sP, P.tile(0, 0), bar);
    r.tma_load(sV, V.tile(0, 0), bar);
    narrow = r.wgmma(o32, sP, sV).id;  // contracts Sk: V (Sk, D) is MN-major, 64 columns for N = 32
    exact = r.wgmma(o64, sP, sV).id;
  });
  REQUIRE(k.p.errors.empty());
  CHECK(plan::operand_major(plan::plan_dims(k.p), narrow, 1) == major::mn);
  CHECK(why(k.p, narrow) == "an MN-major wgmma B operand must be exactly N columns wide");
  CHECK(why(k.p, exact).empty());
}

namespace {

// mma.sync on sm_80: a warp, operands filled by cp.async.
struct mma_kit {
  kernel_builder k;
  dim_ref M, N, K;
  tensor<bf16> A, B, At;
  mma_kit() : k(kernel("mma")) {
    k.target(sm_80);
    const auto d = k.dims("M", "N", "K");
    M = d[0], N = d[1], K = d[2];
    A = k.input<bf16>("A", dims(M, K));
    B = k.input<bf16>("B", dims(N, K));
    At = k.input<bf16>("At", dims(K, M));
  }
};

}  // namespace

TEST_CASE("lower::unsupported: mma_sync with B from registers") {
  mma_kit m;
  auto sA = m.k.smem<bf16>("sA", {16, 64}, swizzle::b128);
  m.k.role("w", warps(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {16, 16});
    auto b = r.fragment<bf16>("b", {16, 64});
    r.mma_sync(acc, sA, b);
  });
  CHECK(why(m.k.p, 0) == "mma_sync is lowered with B from smem");
}

TEST_CASE("lower::unsupported: mma_sync on inputs other than bf16/f16 or into an accumulator other than f32") {
  auto k = kernel("k").target(sm_80);
  auto sA = k.smem<i8>("sA", {16, 128}, swizzle::b128);
  auto sB = k.smem<i8>("sB", {16, 128}, swizzle::b128);
  auto hA = k.smem<f16>("hA", {16, 64}, swizzle::b128);
  auto hB = k.smem<f16>("hB", {16, 64}, swizzle::b128);
  k.role("w", warps(1), [&](role& r) {
    auto acc = r.accumulator<i32>("acc", {16, 16});
    auto hacc = r.accumulator<f16>("hacc", {16, 16});
    r.mma_sync(acc, sA, sB);
    r.mma_sync(hacc, hA, hB);
  });
  REQUIRE(k.p.errors.empty());
  CHECK(why(k.p, 0) == "mma_sync is lowered for bf16/f16 inputs with f32 accumulators");
  CHECK(why(k.p, 1) == "mma_sync is lowered for bf16/f16 inputs with f32 accumulators");
}

TEST_CASE("lower::unsupported: mma_sync into a part of an accumulator") {
  mma_kit m;
  auto sA = m.k.smem<bf16>("sA", {16, 64}, swizzle::b128);
  auto sB = m.k.smem<bf16>("sB", {16, 64}, swizzle::b128);
  auto sB2 = m.k.smem<bf16>("sB2", {32, 64}, swizzle::b128);
  m.k.role("w", warps(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {16, 32});
    r.mma_sync(acc.cols(0, 2), sA, sB);
    r.mma_sync(acc.rows(0, 1), sA, sB2);
  });
  CHECK(why(m.k.p, 0) == "mma_sync into part of an accumulator is not lowered");
  CHECK(why(m.k.p, 1) == "mma_sync into part of an accumulator is not lowered");  // even one part of one
}

TEST_CASE("lower::unsupported: mma_sync with an MN-major A operand from smem") {
  mma_kit m;
  auto sA = m.k.smem<bf16>("sA", {64, 16}, swizzle::b32);  // (K, M): rows over K
  auto sB = m.k.smem<bf16>("sB", {16, 64}, swizzle::b128);
  auto sK = m.k.smem<bf16>("sK", {16, 64}, swizzle::b128);
  m.k.role("w", warps(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {16, 16});
    r.cp_async(sA, m.At.tile(0, 0));
    r.cp_async(sB, m.B.tile(0, 0));
    r.cp_async(sK, m.A.tile(0, 0));
    r.mma_sync(acc, sA, sB);
    r.mma_sync(acc, sK, sB);
  });
  REQUIRE(m.k.p.errors.empty());
  CHECK(why(m.k.p, 3) == "mma_sync is lowered for a K-major A operand from smem");
  CHECK(why(m.k.p, 4).empty());
}

TEST_CASE("lower::unsupported: mma_sync with A from a part of a register tile") {
  mma_kit m;
  auto sB = m.k.smem<bf16>("sB", {16, 32}, swizzle::b64);
  m.k.role("w", warps(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {16, 16});
    auto a = r.fragment<bf16>("a", {16, 64});
    r.fill(a, 1.0f);
    r.mma_sync(acc, a.cols(0, 2), sB);
  });
  CHECK(why(m.k.p, 1) == "mma_sync with A from registers is lowered for whole 16-bit tiles in the mma.sync accumulator layout");
}

TEST_CASE("lower::unsupported: mma_sync warp tiles with an odd number of 8-column blocks") {
  mma_kit m;
  auto sA = m.k.smem<bf16>("sA", {16, 64}, swizzle::b128);
  auto sB = m.k.smem<bf16>("sB", {8, 64}, swizzle::b128);
  m.k.role("w", warps(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {16, 8});
    r.mma_sync(acc, sA, sB);
  });
  REQUIRE(m.k.p.errors.empty());
  CHECK(why(m.k.p, 0) == "mma_sync warp tiles need an even number of 8-column blocks");
}

TEST_CASE("lower::unsupported: tcgen05.mma forms (A from TMEM, kinds other than f16, row parts of TMEM)") {
  auto k = kernel("k").target(sm_100a);
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto qA = k.smem<e4m3>("qA", {128, 128}, swizzle::b128);
  auto qB = k.smem<e4m3>("qB", {128, 128}, swizzle::b128);
  auto acc = k.tmem("acc", columns(128));
  auto a = k.tmem("a", columns(64));
  k.role("mma", warps(1), [&](role& r) {
    r.tcgen05_mma(acc, sA, sB);
    r.tcgen05_mma(acc, qA, qB);
    r.tcgen05_mma(acc.rows(0, 2), sA, sB);
    r.tcgen05_mma(acc, sA, sB);  // becomes A from TMEM below
  });
  program p = k.p;
  REQUIRE(p.errors.empty());
  CHECK(why(p, 0).empty());
  CHECK(why(p, 1) == "tcgen05.mma is lowered for kind::f16 (bf16/f16 inputs)");
  CHECK(why(p, 2) == "TMEM operands are split by columns only (lanes belong to warps)");
  // TMEM A operands are f32 handles in the builder (its element type), so no dtype-correct call writes one:
  // the form is made by editing the op's A operand.
  p.ops[3].a = a.o;
  CHECK(why(p, 3) == "tcgen05.mma with A from tensor memory is not lowered");
}

TEST_CASE("lower::unsupported: TMA of rank-1 tensors, multicast of rank-4 tensors") {
  auto k = kernel("k").target(sm_90a).cluster(2);
  auto [B, H, S, D] = k.dims("B", "H", "S", "D");
  auto V = k.input<bf16>("V", dims(D));
  auto X = k.input<bf16>("X", dims(B, H, S, D));
  auto s1 = k.smem<bf16>("s1", {1, 64}, swizzle::b128);
  auto s4 = k.smem<bf16>("s4", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  k.role("load", warps(1), [&](role& r) {
    r.tma_load(s1, V.tile(0), bar);
    r.tma_load(s4, X.tile(0, 0, 0, 0), bar).multicast();
    r.tma_load(s4, X.tile(0, 0, 0, 0), bar);
    r.tma_store(V.tile(0), s1);
  });
  REQUIRE(k.p.errors.empty());
  CHECK(why(k.p, 0) == "TMA is lowered for tensors of rank 2 to 5");
  CHECK(why(k.p, 1) == "a multicast TMA load is lowered for tensors of rank 2 and 3");
  CHECK(why(k.p, 2).empty());
  CHECK(why(k.p, 3) == "TMA is lowered for tensors of rank 2 to 5");
}

TEST_CASE("lower::unsupported: cp_async of a 1-D tensor (any rank from 2 is lowered)") {
  auto k = kernel("k").target(sm_80);
  auto V = k.input<bf16>("V", dims("K"));
  auto X = k.input<bf16>("X", dims("B", "M", "H", "K"));
  auto Y = k.input<bf16>("Y", dims("M", "K"));
  auto s = k.smem<bf16>("s", {64, 64}, swizzle::b128);
  auto v = k.smem<bf16>("v", {1, 64});
  k.role("w", warps(4), [&](role& r) {
    r.cp_async(v, V.tile(0));
    r.cp_async(s, X.tile(0, 0, 0, 0).rows_at(1));
    r.cp_async(s, Y.tile(0, 0));
  });
  CHECK(why(k.p, 0) == "cp_async is lowered for tensors of rank 2 or more");
  CHECK(why(k.p, 1).empty());
  CHECK(why(k.p, 2).empty());
}

TEST_CASE("lower::unsupported: stmatrix forms (layout, shapes, multiples of 64 x 16, row parts)") {
  wgmma_kit w;
  auto X = w.k.input<bf16>("X", dims("M", "N"));
  auto sA = w.region("sA", 64), sB = w.region("sB", 128), sB3 = w.region("sB3", 64);
  auto sB8 = w.k.smem<bf16>("sB8", {8, 64}, swizzle::b128);
  auto sD = w.k.smem<bf16>("sD", {64, 64}, swizzle::b128);
  auto sD8 = w.k.smem<bf16>("sD8", {64, 8});
  auto sA2 = w.region("sA2", 128);
  w.k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 64});
    r.load(x, X.tile(0, 0));                    // #0: blocked layout
    r.stmatrix(sD, x);                          // #1
    auto acc = r.accumulator<f32>("acc", {64, 128});
    r.wgmma(acc, sA, sB).overwrite();           // #2
    auto out = r.convert<bf16>(acc);            // #3
    r.stmatrix(sD, out);                        // #4: 64 x 64 smem, 64 x 128 registers
    r.stmatrix(sD, out.cols(0, 2));             // #5: fine
    auto n8 = r.accumulator<f32>("n8", {64, 8});
    r.wgmma(n8, sA, sB8).overwrite();           // #6
    r.stmatrix(sD8, r.convert<bf16>(n8));       // #7 convert, #8 stmatrix
    auto tall = r.accumulator<f32>("tall", {128, 64});
    r.wgmma(tall, sA2, sB3).overwrite();               // #9
    r.stmatrix(sD, r.convert<bf16>(tall).rows(1, 2));  // #10 convert, #11 stmatrix
  });
  const program& p = w.k.p;
  REQUIRE(p.errors.empty());
  CHECK(why(p, 1) == "stmatrix is lowered from tiles in the wgmma accumulator layout");
  CHECK(why(p, 4) == "stmatrix moves equal shapes: the smem part and the register part differ");
  CHECK(why(p, 5).empty());
  CHECK(why(p, 8) == "stmatrix parts are multiples of 64 rows x 16 columns");
  CHECK(why(p, 11) == "stmatrix from a row part of an accumulator is not lowered");
}

TEST_CASE("lower::unsupported: tmem_load and tmem_store need a 128-row tile of one warpgroup") {
  auto k = kernel("k").target(sm_100a);
  auto t = k.tmem("t", columns(64));
  k.role("w", warps(4), [&](role& r) {
    auto x = r.fragment<f32>("x", {128, 64});
    r.tmem_load(x, t);
    r.tmem_store(t, x);
  });
  k.role("wg", warpgroups(1), [&](role& r) {
    auto y = r.fragment<f32>("y", {64, 64});
    auto z = r.fragment<f32>("z", {128, 64});
    auto h = r.fragment<bf16>("h", {128, 64});
    r.tmem_load(y, t);
    r.tmem_store(t, y);
    r.tmem_load(z, t);
    r.tmem_store(t, z);
    r.tmem_store(t, h);
    r.tmem_load(h, t);  // a 16-bit tile: tcgen05.ld writes a 32-bit register per column (found while reducing a fuzzer case)
  });
  const program& p = k.p;
  CHECK(why(p, 0) == "tmem_load is lowered into a 128-row tile held by one warpgroup");
  CHECK(why(p, 1) == "tmem_store is lowered from a 128-row f32 tile held by one warpgroup");
  CHECK(why(p, 2) == "tmem_load is lowered into a 128-row tile held by one warpgroup");
  CHECK(why(p, 3) == "tmem_store is lowered from a 128-row f32 tile held by one warpgroup");
  CHECK(why(p, 4).empty());
  CHECK(why(p, 5).empty());
  CHECK(why(p, 6) == "tmem_store is lowered from a 128-row f32 tile held by one warpgroup");
  CHECK(why(p, 7) == "tmem_load is lowered into f32 tiles (TMEM cells are f32): load into an f32 tile, then convert");
}

TEST_CASE("lower::unsupported: ldmatrix into a part, or between different shapes") {
  mma_kit m;
  auto s = m.k.smem<bf16>("s", {16, 64}, swizzle::b128);
  auto s32 = m.k.smem<bf16>("s32", {16, 32}, swizzle::b64);
  m.k.role("w", warps(1), [&](role& r) {
    auto a = r.fragment<bf16>("a", {16, 128});
    auto b = r.fragment<bf16>("b", {16, 64});
    r.ldmatrix(a.cols(0, 2), s);
    r.ldmatrix(b, s32);
    r.ldmatrix(b, s);
  });
  const program& p = m.k.p;
  REQUIRE(p.errors.empty());
  CHECK(why(p, 0) == "ldmatrix is lowered into whole 16-bit tiles in the mma.sync layout (a warps(n) role)");
  CHECK(why(p, 1) == "ldmatrix moves equal shapes of multiples of 16 x 16");
  CHECK(why(p, 2).empty());
}

namespace {

// A TMA producer and a consumer warpgroup on a 2-stage pipeline over `loops` K loops; the consumer's
// body is given.
template <class Consumer>
program pipeline_kit(Consumer consumer, bool alternate = false) {
  auto k = kernel("pipe").target(sm_90a);
  auto [M, K] = k.dims("M", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto sp = k.parallel(tiles(M, 64));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(2)).carries(sA);
  k.role("use", warpgroups(2), [&](role& r) {
    if (alternate) r.for_each(alternating(sp), [&](auto) { consumer(r, ab); });
    else r.for_each(sp, [&](auto) { consumer(r, ab); });
  });
  k.role("load", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto m) {
      r.loop(tiles(K, 64), [&](auto kt) { r.tma_load(r.acquire(ab)[sA], A.tile(m, kt)); });
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("lower::unsupported: a deferred release outside the loop body of its slot's wait") {
  const program p = pipeline_kit([](role& r, pipeline_ref ab) {
    slot s{};
    r.loop(tiles("K", 64), [&](auto) { s = r.wait(ab); });
    r.release(ab, s).later(1);
  });
  CHECK(why_first(p, op_kind::pipeline_release) == "a deferred release must be in the loop body of its slot's wait");
}

TEST_CASE("lower::unsupported: a deferred release with another wait on the pipeline in the loop") {
  const program p = pipeline_kit([](role& r, pipeline_ref ab) {
    r.loop(tiles("K", 64), [&](auto) {
      auto s = r.wait(ab);
      auto t = r.wait(ab);
      r.release(ab, s).later(1);
      r.release(ab, t);
    });
    r.release_pending(ab);
  });
  CHECK(why_first(p, op_kind::pipeline_release) == "a deferred release needs its slot's wait to be the only wait on the pipeline inside the loop");
  const program ok = pipeline_kit([](role& r, pipeline_ref ab) {
    r.loop(tiles("K", 64), [&](auto) {
      auto s = r.wait(ab);
      r.release(ab, s).later(1);
    });
    r.release_pending(ab);
  });
  CHECK(why_first(ok, op_kind::pipeline_release).empty());
}

TEST_CASE("lower::unsupported: a pipeline op of an alternating walk nested deeper than one dynamic loop") {
  const program p = pipeline_kit(
      [](role& r, pipeline_ref ab) {
        r.for_range(2, [&](auto) { r.release(ab, r.wait(ab)); });
      },
      true);
  CHECK(why_first(p, op_kind::pipeline_wait) == "a pipeline op of an alternating walk must sit at the walk's level or in a dynamic loop directly inside it");
  const program ok = pipeline_kit(
      [](role& r, pipeline_ref ab) {
        r.loop(tiles("K", 64), [&](auto) { r.release(ab, r.wait(ab)); });
        r.release(ab, r.wait(ab));
      },
      true);
  CHECK(why_first(ok, op_kind::pipeline_wait).empty());
  CHECK(why(ok, find_op(ok, op_kind::pipeline_wait, 1)).empty());
  // The producer acquires in a dynamic loop of a plain walk: never refused.
  CHECK(why_first(ok, op_kind::pipeline_acquire).empty());
}

TEST_CASE("lower::unsupported: r.held inside an alternating walk (the pipeline's position skips other units' stages)") {
  const program p = pipeline_kit(
      [](role& r, pipeline_ref ab) {
        r.wait(ab);
        r.release(ab, r.held(ab));
      },
      true);
  CHECK(why_first(p, op_kind::pipeline_held) == "r.held(pipeline) is not lowered inside an alternating walk");
  const program ok = pipeline_kit(
      [](role& r, pipeline_ref ab) {
        r.wait(ab);
        r.release(ab, r.held(ab));
      },
      false);
  CHECK(why_first(ok, op_kind::pipeline_held).empty());
}

TEST_CASE("lower::unsupported: register compute into a part of a destination (fill, set)") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.fill(x.cols(0, 2), 0.0f);
    r.set(x.rows(1, 2), x * 2.0f);
    r.set(x, x * 2.0f);
  });
  CHECK(why(f.k.p, 0) == "register compute writes whole tiles: a part (.rows/.cols) of a destination is not lowered");
  CHECK(why(f.k.p, 1) == "register compute writes whole tiles: a part (.rows/.cols) of a destination is not lowered");
  CHECK(why(f.k.p, 2).empty());
}

TEST_CASE("lower::unsupported: row top-k of a part, of 8-bit tiles, of rows wider than a warp") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto q = r.fragment<e4m3>("q", {64, 64});
    auto w = r.fragment<f32>("w", {2, 1024});  // blocked: a row over 64 threads
    auto top = r.topk("top", 64, 10);
    auto top2 = r.topk("top2", 2, 4);
    r.row_topk(top, x.cols(0, 2), index_expr(0));
    r.row_topk(top, q, index_expr(0));
    r.row_topk(top, x * q, index_expr(0));  // x leads: the 8-bit tile is another leaf
    r.row_topk(top2, w, index_expr(0));
    r.row_topk(top, x, index_expr(0));
  });
  CHECK(why(f.k.p, 0) == "a row top-k reads whole tiles: a part (.rows/.cols) is not lowered");
  CHECK(why(f.k.p, 1) == "a row top-k of an 8-bit register tile is not lowered");
  CHECK(why(f.k.p, 2) == "an 8-bit register tile is read in a row top-k's expression: convert it first");
  CHECK(why(f.k.p, 3) == "a row top-k is lowered for sources whose rows are each held inside one warp (MMA fragments, or blocked tiles of at most 32 threads per row)");
  CHECK(why(f.k.p, 4).empty());
}

// Found by the builder fuzzer (the emitter refused them after a clean check): a source of one row (1 x C, a
// vector's shape), and a source whose rows are held by other lane groups than the state it folds into.
TEST_CASE("lower::unsupported: row top-k of one row, and of a source whose rows sit in other lanes than its state's") {
  compute_kit f(sm_90a);
  f.k.role("r", warps(1), [&](role& r) {
    auto v = r.fragment<f32>("v", {1, 128});
    auto x = r.fragment<f32>("x", {16, 64});  // mma.sync layout: 4 lanes per row (the state takes it)
    auto z = r.fragment<f32>("z", {16, 2});   // blocked: one thread per row
    auto top1 = r.topk("top1", 1, 4);
    auto top = r.topk("top", 16, 4);
    r.row_topk(top1, v, index_expr(0));
    r.row_topk(top, x, index_expr(0));
    r.row_topk(top, z, index_expr(0));
  });
  REQUIRE(f.k.p.errors.empty());
  CHECK(why(f.k.p, 0) == "a row top-k folds a full tile (rows x columns): a 1 x C row or another vector as the source is not lowered; fold a tile of the state's rows");
  CHECK(why(f.k.p, 1).empty());
  CHECK(why(f.k.p, 2) == "a row top-k's source and state hold their rows in different lane groups");
}

TEST_CASE("lower::unsupported: topk_store into tensors of other ranks and dtypes") {
  compute_kit f(sm_90a);
  auto I2 = f.k.output<i32>("i2", dims("M", "N"));
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto top = r.topk("top", 64, 10);
    r.row_topk(top, x, index_expr(0));
    r.topk_store(f.I32.tile(0), f.I32.tile(0), top);
    r.topk_store(f.BF16.tile(0, 0), I2.tile(0, 0), top);
    r.topk_store(f.F32.tile(0, 0), f.F32.tile(0, 0), top);
    r.topk_store(f.F32.tile(0, 0), I2.tile(0, 0), top);
  });
  CHECK(why(f.k.p, 1) == "topk_store writes rows x k tiles: the tensors need a row and a column dim");
  CHECK(why(f.k.p, 2) == "topk_store writes its values into an f32 tensor");
  CHECK(why(f.k.p, 3) == "topk_store writes its indices into an i32 tensor");
  CHECK(why(f.k.p, 4).empty());
}

TEST_CASE("lower::unsupported: convert of a part") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    (void)r.convert<bf16>(x.cols(0, 2));
  });
  CHECK(why(f.k.p, 0) == "convert moves whole tiles: a part (.rows/.cols) is not lowered");
}

TEST_CASE("lower::unsupported: row reductions of or into a part") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    auto m = r.row_vector<f32>("m", 64);
    auto i = r.row_vector<i32>("i", 64);
    r.row_max(m, x.cols(0, 2));
    r.row_argmin(m, i.rows(0, 1), x, index_expr(0));
  });
  CHECK(why(f.k.p, 0) == "row reductions read and write whole tiles: a part (.rows/.cols) is not lowered");
  CHECK(why(f.k.p, 1) == "row reductions read and write whole tiles: a part (.rows/.cols) is not lowered");
}

TEST_CASE("lower::unsupported: atomic_add into a bf16 tensor from a tile that is neither f32 nor 16-bit") {
  compute_kit f(sm_90a);
  f.k.role("r", f.unit(), [&](role& r) {
    auto n = r.fragment<i32>("n", {64, 64});
    auto h = r.fragment<f16>("h", {64, 64});
    r.atomic_add(f.BF16.tile(0, 0), n);
    r.atomic_add(f.BF16.tile(0, 0), h);
  });
  CHECK(why(f.k.p, 0) == "atomic_add into a bf16 tensor takes an f32 or 16-bit tile");
  CHECK(why(f.k.p, 1).empty());
}

TEST_CASE("lower::unsupported: cluster_sum of a tile that is not f32, or of a part") {
  auto k = kernel("k").target(sm_90a).cluster(2);
  k.role("r", warpgroups(1), [&](role& r) {
    auto h = r.fragment<bf16>("h", {64, 64});
    auto x = r.fragment<f32>("x", {64, 64});
    r.cluster_sum(h);
    r.cluster_sum(x.cols(0, 2));
    r.cluster_sum(x);
  });
  REQUIRE(k.p.errors.empty());
  CHECK(why(k.p, 0) == "cluster_sum is lowered for f32 tiles");
  CHECK(why(k.p, 1) == "cluster_sum reduces whole tiles: a part is not lowered");
  CHECK(why(k.p, 2).empty());
}

TEST_CASE("lower::unsupported: cluster_sum_scatter of a tile that is not a wgmma accumulator, or whose columns do not split") {
  auto k = kernel("k").target(sm_90a).cluster(4);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {64, 64}, swizzle::b128);
  auto sB2 = k.smem<bf16>("sB2", {48, 64}, swizzle::b128);
  k.role("r", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {8, 64});  // 8 rows: the blocked layout, not a wgmma accumulator
    auto acc = r.accumulator<f32>("acc", {64, 64});
    auto narrow = r.accumulator<f32>("narrow", {64, 48});
    r.tma_load(sA, A.tile(0, 0));
    r.tma_load(sB, B.tile(0, 0));
    r.tma_load(sB2, B.tile(0, 0));
    r.wgmma(acc, sA, sB);
    r.wgmma(narrow, sA, sB2);
    r.fill(x, 0.0f);
    r.cluster_sum_scatter(x);       // op 6
    r.cluster_sum_scatter(narrow);  // op 7: 6 groups of 8 columns over 4 CTAs
    r.cluster_sum_scatter(acc);     // op 8
  });
  REQUIRE(k.p.errors.empty());
  CHECK(why(k.p, 6) == "cluster_sum_scatter is lowered for wgmma accumulators (a column block is a run of each thread's registers there)");
  CHECK(why(k.p, 7) == "cluster_sum_scatter splits the tile into whole 8-column groups: its columns must be a multiple of 8 x the cluster size");
  CHECK(why(k.p, 8).empty());
}

TEST_CASE("lower::unsupported: every reason in lower/support.hpp is checked by a case of this file") {
  auto read = [](const std::filesystem::path& f) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string support = read(std::filesystem::path(CAKE_SOURCE_DIR) / "include" / "cake" / "lower" / "support.hpp");
  const std::string tests = read(std::filesystem::path(CAKE_SOURCE_DIR) / "tests" / "unit" / "test_lower_support.cpp");
  const std::regex reason(R"re(return "([^"]+)")re");
  std::set<std::string> reasons;
  for (std::sregex_iterator it(support.begin(), support.end(), reason), end; it != end; ++it) reasons.insert((*it)[1]);
  CHECK(reasons.size() >= 50);  // the scan works
  for (const auto& r : reasons) {
    INFO(r);
    CHECK(tests.find("== \"" + r + "\"") != std::string::npos);
  }
}

TEST_CASE("op table: the lowered column (a target lowers only what it admits, every op is lowered somewhere)") {
  for (int i = 0; i < op_kind_count; ++i) {
    const op_info& o = op_table[i];
    INFO(o.name);
    int lowered = 0;
    for (target_id t : {target_id::sm_80, target_id::sm_90a, target_id::sm_100a}) {
      const bool admitted = o.needs == feature::count_ || target_of(t).admitted(o.needs);
      if (o.lowered(t)) {
        ++lowered;
        CHECK_MESSAGE(admitted, to_string(t));  // lowering something the hardware lacks would be a contradiction
      }
    }
    CHECK(lowered > 0);
    if (o.needs == feature::count_) CHECK(o.lowered_on == on_all);  // generic code is the same everywhere
  }
  CHECK(info(op_kind::wgmma).lowered_on == on_sm90a);
  CHECK(info(op_kind::tcgen05_mma).lowered_on == on_sm100a);
  CHECK(info(op_kind::cluster_reduce).lowered_on == (on_sm90a | on_sm100a));
  CHECK(info(op_kind::mma_sync).lowered_on == on_all);
  CHECK(info(op_kind::turn_take).lowered_on == on_all);
  CHECK(target_bit(target_id::sm_80) == on_sm80);
  CHECK(target_bit(target_id::sm_90a) == on_sm90a);
  CHECK(target_bit(target_id::sm_100a) == on_sm100a);
}
