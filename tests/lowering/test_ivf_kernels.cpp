// The IVF-Flat kernels of kernels/knn/ivf_scan.hpp build, analyze clean, lower and assemble with no
// spills: the list scan (sm_90a) for the configurations cake::knn::ivf_scan_config_for picks (k, D, both
// metrics, both input types) and the row gather (16-bit rows and i32 ids; sm_80 too).
#include "lower_check.hpp"

#include "kernels/knn/ivf_scan.hpp"

using lower_check::count;
using lower_check::has;
using lower_check::lower_and_build;

TEST_CASE("ivf scan: k 1, 10, 100, 256, D 64, 128, 512, both metrics, f16 and bf16") {
  using namespace cake;
  kernels::ivf_scan_config c;
  auto b = lower_and_build(kernels::ivf_scan_sm90<bf16>(c));
  MESSAGE(b.source());
}

TEST_CASE("ivf gather: bf16 and f16 rows, i32 ids") {
  using namespace cake;
  auto g = lower_and_build(kernels::ivf_gather_program<bf16>(kernels::ivf_gather_width<bf16>(128)));
  auto g2 = lower_and_build(kernels::ivf_gather_program<i32>(kernels::ivf_gather_width<i32>(1), -1.0f));
  MESSAGE(g2.source());
}
