// Step 5: from a Program to a CUBIN, without a GPU.
//
// lower() turns the schedule into one self-contained CUDA C++ file (device helpers included); every
// op's block is annotated '// @op N file:line'. jit::build() compiles it with NVRTC for the schedule's
// target and caches the result on disk (CAKE_CACHE_DIR). ptxas's report says what the kernel costs.
#include <cstdio>
#include <string>

#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>

#include "kernels/gemm/sm90_bf16.hpp"

int main() {
  constexpr auto p = cake::kernels::gemm_bf16_sm90();
  const auto k = cake::lower::lower(p);
  if (!k.ok) {
    std::printf("%s\n", k.error.c_str());
    return 1;
  }
  // Show the source of one op: the TMA load of sA.
  const auto at = k.source.find("// @op 3 ");
  std::printf("op #3 lowers to:\n%s\n", k.source.substr(at, k.source.find("\n", k.source.find("tma_load_2d", at)) - at).c_str());

  const auto a = cake::jit::build(k.source, k.entry, to_string(p.target));
  if (!a.ok) {
    std::printf("%s\n", a.diagnostics().c_str());
    return 1;
  }
  std::printf("%s for %s: %zu B of PTX, %zu B CUBIN, %d registers, %d B spilled, %d B dynamic smem, %d threads, cluster %d\n",
              k.entry.c_str(), std::string(to_string(p.target)).c_str(), a.ptx.size(), a.cubin.size(), a.resources.registers,
              a.resources.spill_stores, k.smem_bytes, k.block_threads, k.cluster[0]);
  return a.resources.spill_stores == 0 && !a.cubin.empty() ? 0 : 1;
}
