// What lowering answers when it cannot produce a kernel: an error naming the op and its line, no code.
#include <doctest/doctest.h>

#include <string>

#include <cake/cake.hpp>
#include <cake/lower/lower.hpp>

using namespace cake;

TEST_CASE("an op without a lowering yet is an error with the op id and schedule line") {
  auto k = kernel("rowmax").target(sm_90a);
  auto X = k.input<f32>("X", dims("M", "N"));
  (void)X;
  k.role("math", warpgroups(1), [&](role& r) {
    auto a = r.fragment<f32>("a", {64, 64});
    auto m = r.fragment<f32>("m", {64, 1});
    r.row_max(m, a);  // line of interest
  });
  const program p = k.build();
  const auto l = lower::lower(p);
  CHECK_FALSE(l.ok);
  CHECK(l.source.empty());
  CHECK(l.error.find("[lower.unsupported]") != std::string::npos);
  CHECK(l.error.find("reduce_rows is not lowered yet") != std::string::npos);
  CHECK(l.error.find("op#0") != std::string::npos);
  CHECK(l.error.find(":" + std::to_string(p.ops[0].loc.line) + ":") != std::string::npos);
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
