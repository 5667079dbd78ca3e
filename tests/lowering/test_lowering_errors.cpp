// What lowering answers when it cannot produce a kernel: an error naming the op and its line, no code.
#include <doctest/doctest.h>

#include <string>

#include <cake/cake.hpp>
#include <cake/lower/lower.hpp>

using namespace cake;

namespace {

// sm_80 lowers mbarrier pipelines (cp.async fills, test_wait waits), but a unit's arrive there is its
// leader's after a __syncwarp, so a release from a warpgroup is a form it does not lower (lower/support.hpp):
// the analyzer refuses such a schedule before lowering runs, and the emitter keeps the same guard.
program warpgroup_release_on_sm80() {
  auto k = kernel("mbar80").target(sm_80);
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<bf16>("X", dims(M, N));
  auto sX = k.smem<bf16>("sX", {32, 64}, swizzle::b128);
  auto p = k.pipeline("p", stages(2)).carries(sX);
  k.role("load", warps(1), [&](role& r) {
    r.loop(tiles(N, 64), [&](auto j) {
      auto s = r.acquire(p);
      r.cp_async(s[sX], X.tile(0, j));
    });
  });
  k.role("use", warpgroups(1), [&](role& r) {
    r.loop(tiles(N, 64), [&](auto) {
      auto s = r.wait(p);
      r.release(p, s);  // line of interest: op #5
    });
  });
  return k.build();
}

// An mma.sync into a column part of its accumulator: mma_sync is lowered on every target, but not into
// a part (lower/support.hpp); the emitter keeps its own guard with the same words.
program mma_sync_into_a_part() {
  auto k = kernel("mma_part").target(sm_80);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto B = k.input<bf16>("B", dims("N", "K"));
  auto sA = k.smem<bf16>("sA", {16, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {8, 64}, swizzle::b128);
  auto ready = k.named_barrier("ready");
  k.role("w", warps(1), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {16, 16});
    r.cp_async(sA, A.tile(0, 0));
    r.cp_async(sB, B.tile(0, 0));
    r.cp_async_commit();
    r.cp_async_wait(0);
    r.sync(ready);
    r.fill(acc, 0.0f);
    r.mma_sync(acc.cols(0, 2), sA, sB);  // line of interest: op #6
  });
  return k.build();
}

}  // namespace

TEST_CASE("an mbarrier form sm_80 does not lower is refused by the analyzer before lowering (instruction.not-lowered)") {
  const program p = warpgroup_release_on_sm80();
  REQUIRE(p.errors.empty());
  REQUIRE(p.ops[5].kind == op_kind::pipeline_release);
  REQUIRE(info(op_kind::pipeline_release).lowered(p.target));
  const auto l = lower::lower(p);
  CHECK_FALSE(l.ok);
  CHECK(l.source.empty());
  CHECK(l.error.find("the analyzer rejects kernel 'mbar80'") != std::string::npos);
  CHECK(l.error.find("[instruction.not-lowered]") != std::string::npos);
  CHECK(l.error.find("pipeline_release on sm_80: on sm_80 a unit's leader arrives for it after __syncwarp()") != std::string::npos);
  CHECK(l.error.find(":" + std::to_string(p.ops[5].loc.line) + ":") != std::string::npos);
}

TEST_CASE("a form of an op without a lowering is refused by the analyzer with the form's reason") {
  const program p = mma_sync_into_a_part();
  REQUIRE(p.errors.empty());
  const auto l = lower::lower(p);
  CHECK_FALSE(l.ok);
  CHECK(l.error.find("[instruction.not-lowered]") != std::string::npos);
  CHECK(l.error.find("mma_sync on sm_80: mma_sync into part of an accumulator is not lowered") != std::string::npos);
  CHECK(l.error.find(":" + std::to_string(p.ops[6].loc.line) + ":") != std::string::npos);
}

TEST_CASE("the analyzer off: the emitter's own guard is an error with the op id and schedule line") {
  const program p = mma_sync_into_a_part();
  REQUIRE(p.ops[6].kind == op_kind::mma_sync);
  lower::emit_options o;
  o.analyze = false;
  const auto l = lower::lower(p, o);
  CHECK_FALSE(l.ok);
  CHECK(l.source.empty());
  CHECK(l.error.find("[lower.unsupported]") != std::string::npos);
  CHECK(l.error.find("mma_sync into part of an accumulator is not lowered") != std::string::npos);
  CHECK(l.error.find("op#6") != std::string::npos);
  CHECK(l.error.find(":" + std::to_string(p.ops[6].loc.line) + ":") != std::string::npos);
}

TEST_CASE("the analyzer off: an mbarrier form sm_80 does not lower is refused by the emitter's guard, not emitted") {
  const program p = warpgroup_release_on_sm80();
  lower::emit_options o;
  o.analyze = false;
  const auto l = lower::lower(p, o);
  CHECK_FALSE(l.ok);
  CHECK(l.source.empty());
  CHECK(l.error.find("[lower.unsupported] on sm_80 a unit's leader arrives for it after __syncwarp()") != std::string::npos);
  CHECK(l.error.find("op#5") != std::string::npos);
}

TEST_CASE("a fragment-layout conflict is refused: by the analyzer, and by lower() with the analyzer off") {
  auto k = kernel("conflict").target(sm_90a);
  auto sA = k.smem<bf16>("sA", {64, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128);
  auto sC = k.smem<bf16>("sC", {64, 64}, swizzle::b128);
  k.role("r", warpgroups(1), [&](role& r) {
    auto a1 = r.accumulator<f32>("a1", {64, 128});
    auto a2 = r.accumulator<f32>("a2", {64, 64});
    r.wgmma(a1, sA, sB).overwrite();
    r.wgmma(a2, sA, sC).overwrite();
    r.set(a1, a1 + a2);  // line of interest: two accumulator layouts meet
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto l = lower::lower(p);
  CHECK_FALSE(l.ok);
  CHECK(l.error.find("the analyzer rejects kernel 'conflict'") != std::string::npos);  // the shapes do not broadcast
  lower::emit_options o;
  o.analyze = false;
  const auto u = lower::lower(p, o);
  CHECK_FALSE(u.ok);
  CHECK(u.source.empty());
  CHECK(u.error.find("[representation.layout-conflict] the two tiles have different fragment layouts") != std::string::npos);
  CHECK(u.error.find(":" + std::to_string(p.ops[2].loc.line) + ":") != std::string::npos);
}

// docs/language.md: tcgen05.alloc is issued by one warp. In a warpgroup role the lowering guards the
// allocation and the free with warp_in_role == 0, so one warp allocates and writes the shared address slot.
TEST_CASE("tmem_alloc in a warpgroup role is allocated and freed by one warp") {
  auto k = kernel("alloc_wg").target(sm_100a);
  auto Y = k.output<f32>("Y", dims("M", "N"));
  auto t = k.tmem("t", columns(32));
  k.role("epi", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {128, 32});
    r.tmem_alloc(t);
    r.fill(x, 1.0f);
    r.tmem_store(t, x);
    r.tmem_load(x, t);
    r.store(Y.tile(0, 0), x);
    r.tmem_dealloc(t);
  });
  const program p = k.build();
  REQUIRE(p.errors.empty());
  const auto l = lower::lower(p);
  const auto alloc = l.source.find("tmem_alloc_cg1<");
  const auto op0 = l.source.find("// @op 0 ");
  REQUIRE(l.ok);
  REQUIRE(alloc != std::string::npos);
  REQUIRE(op0 != std::string::npos);
  CHECK(l.source.substr(op0, alloc - op0).find("if (warp_in_role == 0u)") != std::string::npos);  // one warp allocates
  const auto dealloc = l.source.find("tmem_dealloc_cg1<");
  REQUIRE(dealloc != std::string::npos);
  const auto line = l.source.rfind('\n', dealloc);
  CHECK(l.source.substr(line, dealloc - line).find("if (warp_in_role == 0u)") != std::string::npos);
}

TEST_CASE("a specialized dim needs its value at lowering") {
  auto k = kernel("spec").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", spec("K")));
  auto B = k.input<bf16>("B", dims("N", spec("K")));
  auto D = k.output<bf16>("D", dims("M", "N"));
  (void)A, (void)B, (void)D;
  k.role("r", warpgroups(1), [&](role&) {});
  const program p = k.build();
  CHECK_FALSE(lower::lower(p).ok);
  lower::emit_options o;
  o.specialized = {{p.find_dim("K"), 4096}};
  const auto l = lower::lower(p, o);
  REQUIRE(l.ok);
  CHECK(l.source.find("constexpr long long d_K = 4096LL;  // specialized") != std::string::npos);
}

TEST_CASE("a program with build errors is not lowered") {
  auto k = kernel("bad").target(sm_90a);
  k.role("r", warpgroups(1), [&](role& r) { r.wgmma_wait(9); });
  const program p = k.build();
  REQUIRE_FALSE(p.errors.empty());
  const auto l = lower::lower(p);
  CHECK_FALSE(l.ok);
  CHECK(l.error.find("[ir.wait-count]") != std::string::npos);
}
