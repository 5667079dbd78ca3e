// Compile-fail test: a CAKE_EXPORT_FAMILY axis over a member that is not an int or a bool (a double).
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text; its .ok.cpp twin
// differs in one line and must compile.
// EXPECT: [cli.family-axis] a family axis is an int or bool member
#include <cake/cake.hpp>
#include <cake/cli/export.hpp>

using namespace cake;

struct params {
  int rows = 64;
  double ratio = 0.5;
};

constexpr program loader(params p) {
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {p.rows, 64}, swizzle::b128);
  k.role("load", warps(1), [&](role& r) { r.tma_load(sA, A.tile(0, 0)); });
  return k.build();
}

CAKE_EXPORT_FAMILY(loaders, loader, params{},
                   domain(axis("rows", &params::rows, {64, 128})))

int main() { return cake::cli::the_registry().families.size() == 1 ? 0 : 1; }
