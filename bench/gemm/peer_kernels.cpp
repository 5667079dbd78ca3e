// Which kernel the peer runs for a shape: calls cuBLAS (bf16) and cuBLASLt (e4m3, fast accumulation) exactly as
// the GEMM benchmarks do (bench/gemm/peers.hpp), a few times per shape and nothing else, so that a profiler run
// over this program sees only the peer's kernels (their names carry cuBLAS's tile, cluster and split choices):
//   ncu --csv --metrics gpu__time_duration.sum,launch__grid_size,launch__cluster_dim_x,... cake_bench_gemm_peer_kernels ...
// (bench/h200/session.sh, step peerkernels). For e4m3 it also prints the cuBLASLt algorithm's configuration
// (tile, stages, split-K count, reduction scheme, cluster shape ids: cublasLt.h's enums), which needs no profiler.
//   cake_bench_gemm_peer_kernels [--dtype bf16|e4m3|both] [--calls N] M,N,K [M,N,K ...]
// Without a GPU it says so and exits 0 (it is a probe, not a test).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "peers.hpp"
#include "sweep_common.hpp"

using namespace cake_bench;

namespace {

// The chosen algorithm's configuration attributes (cublasLtMatmulAlgoConfigGetAttribute), as name=value.
std::string algo_config(const cublasLtMatmulAlgo_t& algo) {
  struct attr {
    const char* name;
    cublasLtMatmulAlgoConfigAttributes_t id;
    bool wide;  // a 32-bit attribute; else 16-bit
  };
  static constexpr attr attrs[] = {
      {"id", CUBLASLT_ALGO_CONFIG_ID, true},
      {"tile", CUBLASLT_ALGO_CONFIG_TILE_ID, true},
      {"stages", CUBLASLT_ALGO_CONFIG_STAGES_ID, true},
      {"splitk", CUBLASLT_ALGO_CONFIG_SPLITK_NUM, true},
      {"reduction", CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, true},
      {"swizzle", CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, true},
      {"custom", CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, true},
      {"inner", CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, false},
      {"cluster", CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, false},
  };
  std::string s;
  for (const auto& a : attrs) {
    std::size_t written = 0;
    std::uint32_t v32 = 0;
    std::uint16_t v16 = 0;
    const auto st = a.wide ? cublasLtMatmulAlgoConfigGetAttribute(&algo, a.id, &v32, sizeof v32, &written)
                           : cublasLtMatmulAlgoConfigGetAttribute(&algo, a.id, &v16, sizeof v16, &written);
    s += std::string(s.empty() ? "" : " ") + a.name + "=" + (st == CUBLAS_STATUS_SUCCESS ? std::to_string(a.wide ? v32 : v16) : "?");
  }
  return s;
}

bool parse_shape(const std::string& text, shape& s) {
  return std::sscanf(text.c_str(), "%lld,%lld,%lld", &s.m, &s.n, &s.k) == 3 && s.m > 0 && s.n > 0 && s.k > 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dtype = "both";
  int calls = 2;
  std::vector<shape> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    shape s{};
    if (a == "--dtype" && i + 1 < argc) dtype = argv[++i];
    else if (a == "--calls" && i + 1 < argc) calls = std::atoi(argv[++i]);
    else if (parse_shape(a, s)) shapes.push_back(s);
    else {
      std::fprintf(stderr, "cake_bench_gemm_peer_kernels: '%s' is neither an option nor a shape M,N,K of positive integers "
                           "(usage: [--dtype bf16|e4m3|both] [--calls N] M,N,K ...)\n", a.c_str());
      return 2;
    }
  }
  if (shapes.empty() || calls < 1 || (dtype != "bf16" && dtype != "e4m3" && dtype != "both")) {
    std::fprintf(stderr, "cake_bench_gemm_peer_kernels: give at least one shape M,N,K, --calls >= 1 and --dtype bf16, e4m3 or both\n");
    return 2;
  }
  try {
    if (!cake::jit::driver::available()) {
      std::printf("cake_bench_gemm_peer_kernels: no GPU: %s\n", cake::jit::driver::unavailable_reason().c_str());
      return 0;
    }
    (void)cake::jit::driver::get().device(0);
    auto rng = cake::harness::random_source::fresh();
    peers& P = *new peers;  // (never destroyed: cuBLAS's teardown at exit races the driver's)
    std::vector<cake::gemm_domain::shape> all;
    for (const auto& s : shapes) all.push_back({s.m, s.n, s.k, 0, false});
    for (auto in : {cake::gemm_input::e4m3, cake::gemm_input::bf16}) {
      if (dtype != "both" && dtype != input_name(in)) continue;
      operands o(in, all, rng);
      for (const auto& s : shapes) {
        peer_run peer(P, o, s);
        for (int c = 0; c < calls; ++c) peer(nullptr);
        cake::jit::driver::get().cuCtxSynchronize();
        std::printf("%s %lldx%lldx%lld: %d calls%s%s\n", input_name(in), s.m, s.n, s.k, calls, in == cake::gemm_input::e4m3 ? "; cuBLASLt algo " : "",
                    in == cake::gemm_input::e4m3 ? algo_config(peer.plan.algo.algo).c_str() : "");
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cake_bench_gemm_peer_kernels: %s\n", e.what());
    return 1;
  }
  return 0;
}
