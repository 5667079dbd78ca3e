// Unit tests for cake/ir/printer.hpp: the stable text agents read back and golden tests diff. The whole
// reference schedules are covered by tests/golden; these cases pin the individual line formats.
#include <doctest/doctest.h>

#include <string>

#include "test_ir_support.hpp"

using namespace cake;
using namespace cake_test;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr program small_gemm() {
  auto k = kernel("small").target(sm_90a).cluster(2).persistent(raster::along_n(4)).programmatic_launch();
  auto [M, N, K] = k.dims("M", "N", spec("K"));
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  k.param<f32>("alpha");
  auto mn = k.parallel(tiles(M, 128), tiles(N, 128));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {128, 64}, swizzle::b128, major::k);  // declared: printed as such
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  auto done = k.mbarrier("done", arrivals(1), 2);
  auto epi = k.named_barrier("epi", threads(128));
  k.role("load", warps(1), [&](role& r) {
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt)).multicast();
      });
    });
  });
  k.role("math", warpgroups(1), regs(232), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {128, 128});
    r.for_each(mn, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma(acc, s[sA], s[sB]).overwrite_on_first(kt).over(K);
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.arrive(done[r.warpgroup()]).remote();
      r.sync(epi);
      auto out = r.convert<bf16>(acc);
      r.store(D.tile(m, n), out);
    });
  });
  return k.build();
}
}  // namespace

TEST_CASE("printer: header, launch, dims, tensors, scalars and the parallel space") {
  const std::string s = to_text(small_gemm());
  CHECK(s.rfind("kernel small (sm_90a)\n", 0) == 0);
  CHECK(contains(s, "  launch: 160 threads, cluster 2x1x1, persistent, raster along_n(4), programmatic launch\n"));
  CHECK(contains(s, "  dim M: dynamic\n"));
  CHECK(contains(s, "  dim K: specialized\n"));
  CHECK(contains(s, "  tensor A: bf16 [M, K] input\n"));
  CHECK(contains(s, "  tensor D: bf16 [M, N] output\n"));
  CHECK(contains(s, "  scalar alpha: f32\n"));
  CHECK(contains(s, "  parallel: tiles(M, 128), tiles(N, 128)\n"));
}

TEST_CASE("printer: resources") {
  const std::string s = to_text(small_gemm());
  // Major-ness is derived from the MMAs (plan/dims.hpp); the printer shows only a declared one.
  CHECK(contains(s, "  smem sA: bf16 [128 x 64], swizzle 128B, x3 (pipeline ab)\n"));
  CHECK(contains(s, "  smem sB: bf16 [128 x 64] declared k-major, swizzle 128B, x3 (pipeline ab)\n"));
  CHECK(contains(s, "  mbarrier done: 1 arrivals, x2\n"));
  CHECK(contains(s, "  named_barrier epi: 128 threads\n"));
  CHECK(contains(s, "  pipeline ab: 3 stages, carries sA, sB\n"));
  CHECK(contains(s, "  role load: 1 warp\n"));
  CHECK(contains(s, "  role math: 1 warpgroup, regs 232\n"));
  CHECK(contains(s, "    reg acc: f32 [128 x 128] accumulator per warpgroup\n"));
  CHECK(contains(s, "    reg acc.bf16: bf16 [128 x 128] per warpgroup\n"));
}

TEST_CASE("printer: ops are numbered by op id and indented by loop depth") {
  const std::string s = to_text(small_gemm());
  CHECK(contains(s, "\n    #0 tile_loop over the parallel space\n"));
  CHECK(contains(s, "\n      #1 loop k1 in 0..ceil(K / 64)\n"));
  CHECK(contains(s, "\n        #2 pipeline_acquire ab -> slot#2\n"));
  CHECK(contains(s, "\n        #3 tma_load sA[slot#2] <- A.tile(tile.M, k1)\n"));
  CHECK(contains(s, "\n        #4 tma_load sB[slot#2] <- B.tile(tile.N, k1) multicast\n"));
  CHECK(contains(s, "\n        #8 wgmma acc += sA[slot#7], sB[slot#7] overwrite-on-first(k6) over K\n"));
  CHECK(contains(s, "\n        #9 wgmma_wait 0\n"));
  CHECK(contains(s, "\n        #10 pipeline_release ab slot#7\n"));
  CHECK(contains(s, "\n      #11 mbarrier_arrive done[wg] remote\n"));
  CHECK(contains(s, "\n      #12 named_barrier_sync epi\n"));
  CHECK(contains(s, "\n      #13 convert acc.bf16 <- acc\n"));
  CHECK(contains(s, "\n      #14 store_global D.tile(tile.M, tile.N) <- acc.bf16\n"));
}

TEST_CASE("printer: index expressions") {
  auto k = kernel("k").target(sm_80);
  auto A = k.input<bf16>("A", dims("M", "K"));
  (void)k.input<bf16>("B", dims("N", "K"));
  auto s = k.smem<bf16>("s", {64, 64}, copies(4));
  k.role("r", warps(4), [&](role& r) {
    r.loop(tiles("K", 64), [&](auto kt) {
      r.cp_async(s.stage(kt + 3), A.tile(r.warp() / 2 + 2 * (r.warp() % 2), kt * 2 - 1));
      r.cp_async(s.stage((kt + 1) % 4), A.tile(-r.warp(), (kt * 3 + 1) / 2));
      r.cp_async(s.stage(0), A.tile(r.warp() / 2 % 2 * 4, 7));
      r.for_range(2, [&](auto i) { r.cp_async(s.stage(i - kt), A.tile(0, 0)); });
    });
  });
  const std::string text = to_text(k.p);
  CHECK(contains(text, "#1 cp_async s[stage k0 + 3] <- A.tile((warp / 2) + (warp % 2)*2, k0*2 - 1)"));
  CHECK(contains(text, "#2 cp_async s[stage (k0 + 1) % 4] <- A.tile(-warp, (k0*3 + 1) / 2)"));
  CHECK(contains(text, "#3 cp_async s[stage 0] <- A.tile(((warp / 2) % 2)*4, 7)"));
  CHECK(contains(text, "#5 cp_async s[stage i4 - k0] <- A.tile(0, 0)"));
  CHECK(k.p.errors.empty());
}

TEST_CASE("printer: loop bounds (tiles, min, from and step, dim extents)") {
  auto k = kernel("k").target(sm_90a);
  auto [M, N, K] = k.dims("M", "N", "K");
  auto sp = k.parallel(tiles(M, 128), tiles(N, 64), split(4));
  k.role("r", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto m, auto, auto sl) {
      r.loop(tiles(K, 64), [&](auto) { r.fence_proxy_async(); });
      r.loop(min(m + 1, tiles(K, 128)), [&](auto) { r.fence_proxy_async(); });
      r.loop(sl, tiles(K, 64), 4, [&](auto) { r.fence_proxy_async(); });
      r.loop(K.extent() / 8, [&](auto) { r.fence_proxy_async(); });
      r.loop(index_expr(2), 10, 3, [&](auto) { r.fence_proxy_async(); });
      r.loop(min(tiles(M, 32), tiles(N, 16)), [&](auto) { r.fence_proxy_async(); });
    });
  });
  REQUIRE(k.p.errors.empty());
  const std::string text = to_text(k.p);
  CHECK(contains(text, "  parallel: tiles(M, 128), tiles(N, 64), split(4)\n"));
  CHECK(contains(text, "#1 loop k1 in 0..ceil(K / 64)\n"));
  CHECK(contains(text, "#3 loop k3 in 0..min(tile.M + 1, ceil(K / 128))\n"));
  CHECK(contains(text, "#5 loop k5 in split..ceil(K / 64) step 4\n"));
  CHECK(contains(text, "#7 loop k7 in 0..K / 8\n"));
  CHECK(contains(text, "#9 loop k9 in 2..10 step 3\n"));
  CHECK(text.find("#11 loop k11 in 0..min(") != std::string::npos);
}

TEST_CASE("printer: axis indices are tile.<dim> (tiles), the dim's label (each) or split") {
  auto k = kernel("k").target(sm_90a);
  auto [S, H, D] = k.dims("S", "H", "D");
  auto Q = k.input<bf16>("Q", dims(S, H, D));
  auto sp = k.parallel(tiles(S, 64), each(H), split(2));
  auto s = k.smem<bf16>("s", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  k.role("r", warps(1), [&](role& r) {
    r.for_each(sp, [&](auto q, auto h, auto sl) { r.tma_load(s, Q.tile(q, h + sl, 0).rows_at(0), bar); });
    (void)r.cta();
  });
  const std::string text = to_text(k.p);
  CHECK(contains(text, "  parallel: tiles(S, 64), each(H), split(2)\n"));
  CHECK(contains(text, "#1 tma_load s <- Q.tile(tile.S, H + split, 0) completes bar\n"));
}

TEST_CASE("printer: a descending axis prints .descending()") {
  auto k = kernel("k").target(sm_90a);
  auto [S, H, D] = k.dims("S", "H", "D");
  auto Q = k.input<bf16>("Q", dims(S, H, D));
  auto sp = k.parallel(each(H), tiles(S, 64).descending());
  auto s = k.smem<bf16>("s", {64, 64}, swizzle::b128);
  auto bar = k.mbarrier("bar");
  k.role("r", warps(1), [&](role& r) { r.for_each(sp, [&](auto h, auto q) { r.tma_load(s, Q.tile(q, h, 0).rows_at(0), bar); }); });
  CHECK(contains(to_text(k.p), "  parallel: each(H), tiles(S, 64).descending()\n"));
}

TEST_CASE("printer: parts of operands, barrier elements and explicit TMA completion") {
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto s = k.smem<bf16>("s", {128, 64}, swizzle::b128, copies(2));
  auto b = k.mbarrier("b", arrivals(1), 2);
  k.role("r", warpgroups(2), [&](role& r) {
    auto x = r.fragment<bf16>("x", {64, 256});
    r.tma_load(s.stage(1), A.tile(0, 0), b[r.warpgroup()]);
    r.stmatrix(s.stage(0).rows(r.warpgroup(), 2), x.cols(3, 4));
    r.arrive_expect_tx(b[1], 16384);
    r.wait(b[0]);
    r.bulk_wait_read(1);
    r.setmaxnreg(240);
    r.fill(x, 0.5f);
    r.set(x, relu(x));
  });
  const std::string text = to_text(k.p);
  CHECK(contains(text, "#0 tma_load s[stage 1] <- A.tile(0, 0) completes b[wg]\n"));
  CHECK(contains(text, "#1 stmatrix s[stage 0].rows(wg of 2) <- x.cols(3 of 4)\n"));
  CHECK(contains(text, "#2 mbarrier_arrive_expect_tx b[1] bytes 16384\n"));
  CHECK(contains(text, "#3 mbarrier_wait b[0]\n"));
  CHECK(contains(text, "#4 bulk_wait 1 read\n"));
  CHECK(contains(text, "#5 setmaxnreg 240\n"));
  CHECK(contains(text, "#6 fill x = 0.500000\n"));
  CHECK(contains(text, "#7 elementwise x = relu(x)\n"));
}

TEST_CASE("printer: locations on request, and build errors") {
  auto k = kernel("k").target(sm_80); const unsigned line = __LINE__;
  k.role("r", warps(1), [&](role& r) {
    r.fence_proxy_async();
  });
  const std::string plain = to_text(k.p);
  CHECK_FALSE(contains(plain, "@ line"));
  const std::string located = to_text(k.p, {.locations = true});
  CHECK(contains(located, "kernel k (sm_80)  @ line " + std::to_string(line) + "\n"));
  CHECK(contains(located, "  role r: 1 warp  @ line " + std::to_string(line + 1) + "\n"));
  CHECK(contains(located, "#0 fence_proxy_async  @ line " + std::to_string(line + 2) + "\n"));
  CHECK(contains(plain, "  build error [instruction.not-admitted] fence.proxy.async needs sm_90a or sm_100a (value: op#) (value 0)\n"));
}

TEST_CASE("printer: the text of a Program is deterministic, constexpr or not") {
  constexpr program a = small_gemm();
  const program b = small_gemm();
  CHECK(to_text(a) == to_text(b));
  CHECK(to_text(a) == to_text(a));
}
