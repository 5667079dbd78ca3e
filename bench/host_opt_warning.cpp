// Linked into every program that times on a GPU (the benchmarks, the demo) when it is built with CAKE_BENCH_HOST_OPT
// (cake_gpu_timing_program in the top CMakeLists.txt; scripts/test.sh sets it where no GPU is present, to compile
// fast). It says so at start-up, on stderr, so that no host-side time (the analyzer's, the JIT's, a dispatch's, an
// enqueue's) is ever read from a build meant only to be compiled.
#include <cstdio>

namespace {
struct host_opt_warning {
  host_opt_warning() {
    std::fprintf(stderr,
                 "cake: this program's host code was compiled with %s (CAKE_BENCH_HOST_OPT, which scripts/test.sh sets where no GPU "
                 "is present): its host-side times are not the library's; configure with -DCAKE_BENCH_HOST_OPT= to measure\n",
                 CAKE_BENCH_HOST_OPT_FLAG);
  }
} const warning;
}  // namespace
