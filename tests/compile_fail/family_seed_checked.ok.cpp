// Compile-fail test: the seed of a CAKE_EXPORT_FAMILY is evaluated at compile time, so a seed that breaks
// a builder check (here a shared-memory tile of 8192 x 64 bf16, 1 MiB) is a compile error with its rule,
// as a CAKE_EXPORT schedule is (the other points are generated at run time by `cake evolve`).
// The .fail.cpp must not compile and its diagnostics must contain every EXPECT text; its .ok.cpp twin
// differs in one line and must compile.
// EXPECT: resource.smem-overflow
#include <cake/cake.hpp>
#include <cake/cli/export.hpp>

using namespace cake;

struct params {
  int rows = 64;
};

constexpr program loader(params p) {
  auto k = kernel("k").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {p.rows, 64}, swizzle::b128);
  k.role("load", warps(1), [&](role& r) { r.tma_load(sA, A.tile(0, 0)); });
  return k.build();
}

CAKE_EXPORT_FAMILY(loaders, loader, params{.rows = 64}, domain(axis("rows", &params::rows, {64, 128})))

int main() { return cake::cli::the_registry().families.size() == 1 ? 0 : 1; }
