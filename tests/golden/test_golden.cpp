// Golden printer tests: to_text(program) of the reference schedules and of a few small schedules must equal
// the committed tests/golden/<name>.txt byte for byte. The printed form is what agents read back, so a
// change to it is a change of interface and shows up here as a diff.
//
// Updating: after an intended change, run with CAKE_UPDATE_GOLDEN=1 in the environment, e.g.
//   CAKE_UPDATE_GOLDEN=1 ctest --test-dir build -R golden
// which rewrites the .txt files (the tests then pass and say so); review them with `git diff`.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "../../kernels/gemm/sm100_bf16.hpp"
#include "../../kernels/gemm/sm80_bf16.hpp"
#include "../../kernels/gemm/sm90_bf16.hpp"

using namespace cake;

namespace {

std::string golden_path(const std::string& name) { return std::string(CAKE_GOLDEN_DIR) + "/" + name + ".txt"; }

bool update_mode() {
  const char* v = std::getenv("CAKE_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

// The first line where two texts differ, 1-based; 0 if they are equal.
int first_difference(const std::string& a, const std::string& b, std::string& line_a, std::string& line_b) {
  std::istringstream sa(a), sb(b);
  for (int n = 1;; ++n) {
    const bool ra = static_cast<bool>(std::getline(sa, line_a)), rb = static_cast<bool>(std::getline(sb, line_b));
    if (!ra) line_a = "<end of text>";
    if (!rb) line_b = "<end of text>";
    if (!ra && !rb) return 0;
    if (!ra || !rb || line_a != line_b) return n;
  }
}

void check_golden(const std::string& name, const program& p) {
  const std::string actual = to_text(p);
  const std::string path = golden_path(name);
  if (update_mode()) {
    std::ofstream(path, std::ios::binary) << actual;
    MESSAGE("CAKE_UPDATE_GOLDEN=1: wrote " << path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing golden file " << path << " (create it with CAKE_UPDATE_GOLDEN=1)");
  std::stringstream expected;
  expected << in.rdbuf();
  std::string line_expected, line_actual;
  const int line = first_difference(expected.str(), actual, line_expected, line_actual);
  INFO("golden file: " << path << "\nfirst difference at line " << line << "\n  expected: " << line_expected << "\n  actual:   "
                       << line_actual << "\n(if the change is intended, rerun with CAKE_UPDATE_GOLDEN=1 and review the diff)");
  CHECK(line == 0);
}

// A plain sm_80 copy-and-compute kernel without tiling loops.
constexpr program small_sm80_copy() {
  auto k = kernel("copy_sm80").target(sm_80);
  auto X = k.input<f16>("X", dims("M", "N"));
  auto Y = k.output<f16>("Y", dims("M", "N"));
  auto s = k.smem<f16>("s", {64, 64}, swizzle::b128, copies(2));
  auto bar = k.named_barrier("cta");
  k.role("w", warps(4), [&](role& r) {
    auto x = r.fragment<f16>("x", {16, 64});
    r.cp_async(s.stage(0), X.tile(0, 0));
    r.cp_async_commit();
    r.cp_async_wait(0);
    r.sync(bar);
    r.load(x, s.stage(0).rows(r.warp(), 4));
    r.set(x, relu(x));
    r.store(Y.tile(r.warp(), 0), x);
  });
  return k.build();
}

// An explicit mbarrier protocol on sm_90a: expect_tx, TMA completing on a barrier array, parity waits.
constexpr program small_sm90_mbarrier() {
  auto k = kernel("mbarrier_sm90").target(sm_90a).manual_barrier_init();
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128, copies(2));
  auto full = k.mbarrier("full", arrivals(1), 2);
  k.role("load", warps(1), [&](role& r) {
    r.init(full[0], 1);
    r.init(full[1], 1);
    r.fence_mbarrier_init();
    r.for_range(2, [&](auto i) {
      r.arrive_expect_tx(full[i], 8192);
      r.tma_load(sA.stage(i), A.tile(0, i), full[i]);
    });
  });
  k.role("use", warpgroups(1), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 64});
    r.for_range(2, [&](auto i) {
      r.wait(full[i]);
      r.ldmatrix(x, sA.stage(i));
    });
  });
  return k.build();
}

// Row reductions and conversions in an sm_90a epilogue-like role, persistent with programmatic launch.
constexpr program small_sm90_rows() {
  auto k = kernel("rows_sm90").target(sm_90a).persistent(raster::along_n(2)).programmatic_launch();
  auto [M, N, K] = k.dims("M", "N", "K");
  auto X = k.input<f32>("X", dims(M, N, K));
  auto Y = k.output<bf16>("Y", dims(M, N));
  auto mn = k.parallel(tiles(M, 64), tiles(N, 128));
  k.param<f32>("scale");
  k.role("rows", warpgroups(1), regs(168), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 128});
    auto m = r.fragment<f32>("m", {64, 1});
    auto s = r.fragment<f32>("s", {64, 1});
    r.griddep_wait();
    r.for_each(mn, [&](auto tile_m, auto tile_n) {
      r.load(x, X.tile(tile_m, tile_n, 0));
      r.row_max(m, x);
      r.set(x, x - m);
      r.set(x, exp2(x));
      r.row_sum(s, x);
      auto y = r.convert<bf16>(x);
      r.store(Y.tile(tile_m, tile_n), y);
    });
    r.griddep_launch_dependents();
  });
  return k.build();
}

// A three-axis space with causal loop bounds (sm_90a): query blocks x heads x a split of the keys, a key
// loop up to the diagonal, the score MMA contracting the head dim (over(D)), tiles of 3-D tensors with
// rows along a chosen dim (rows_at), and the CTA index.
constexpr program small_sm90_space() {
  auto k = kernel("space_sm90").target(sm_90a);
  auto [S, H, D] = k.dims("S", "H", spec("D"));
  auto Q = k.input<bf16>("Q", dims(S, H, D));
  auto Kx = k.input<bf16>("K", dims(S, H, D));
  auto sp = k.parallel(tiles(S, 64), each(H), split(2));
  auto sQ = k.smem<bf16>("sQ", {64, 64}, swizzle::b128);
  auto sK = k.smem<bf16>("sK", {64, 64}, swizzle::b128);
  auto kv = k.pipeline("kv", stages(2)).carries(sK);
  auto qb = k.mbarrier("q");
  k.role("load", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto q, auto h, auto part) {
      r.arrive_expect_tx(qb, 8192);
      r.tma_load(sQ, Q.tile(q, h, 0).rows_at(0), qb);
      r.loop(part, min(q + 1, tiles(S, 64)), 2, [&](auto j) {
        auto s = r.acquire(kv);
        r.tma_load(s[sK], Kx.tile(j, h, 0).rows_at(0));
      });
    });
  });
  k.role("score", warpgroups(1), [&](role& r) {
    auto acc = r.accumulator<f32>("s", {64, 64});
    r.for_each(sp, [&](auto q, auto, auto part) {
      r.wait(qb);
      r.loop(part, min(q + 1, tiles(S, 64)), 2, [&](auto j) {
        auto s = r.wait(kv);
        r.wgmma_fence();
        r.wgmma(acc, sQ, s[sK]).overwrite_on_first(j).over(D);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(kv, s);
      });
      r.loop(D.extent() / 64 + r.cta() % 2, [&](auto) { r.wgmma_fence(); });
    });
  });
  return k.build();
}

// A schedule with misuse, built at run time: the build errors are part of the printed text.
program small_with_errors() {
  auto k = kernel("with_errors").target(sm_80).cluster(2);
  auto sA = k.smem<bf16>("sA", {64, 128}, swizzle::b128);
  k.role("r", warpgroups(1), regs(40), [&](role& r) {
    r.fence_proxy_async();
    (void)sA;
  });
  return k.build();
}

}  // namespace

TEST_CASE("sm_80 reference GEMM (kernels/gemm/sm80_bf16.hpp)") {
  constexpr program p = kernels::gemm_bf16_sm80();
  check_golden("gemm_sm80_bf16", p);
}

TEST_CASE("sm_90a reference GEMM (kernels/gemm/sm90_bf16.hpp)") {
  constexpr program p = kernels::gemm_bf16_sm90();
  check_golden("gemm_sm90_bf16", p);
}

TEST_CASE("sm_100a reference GEMM (kernels/gemm/sm100_bf16.hpp)") {
  constexpr program p = kernels::gemm_bf16_sm100();
  check_golden("gemm_sm100_bf16", p);
}

TEST_CASE("sm_90a reference GEMM, another configuration (3 stages, no cluster, 128-wide N)") {
  kernels::gemm_sm90_config c;
  c.stages = 3;
  c.bn = 128;
  c.cluster_m = 1;  // no cluster: B is loaded by each CTA, without multicast
  check_golden("gemm_sm90_bf16_small", kernels::gemm_bf16_sm90(c));
}

TEST_CASE("small sm_80 copy kernel") {
  constexpr program p = small_sm80_copy();
  check_golden("copy_sm80", p);
}

TEST_CASE("explicit mbarrier protocol (sm_90a)") {
  constexpr program p = small_sm90_mbarrier();
  check_golden("mbarrier_sm90", p);
}

TEST_CASE("row reductions, persistent, programmatic launch (sm_90a)") {
  constexpr program p = small_sm90_rows();
  check_golden("rows_sm90", p);
}

TEST_CASE("a three-axis space, causal loop bounds, over() and rows_at (sm_90a)") {
  constexpr program p = small_sm90_space();
  static_assert(p.errors.empty());
  check_golden("space_sm90", p);
}

TEST_CASE("build errors are printed after the schedule") { check_golden("with_errors", small_with_errors()); }
