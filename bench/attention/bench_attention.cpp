// Attention prefill schedules on the GPU, alone (the same-process comparison with PyTorch SDPA / cuDNN is
// bench/peers/bench_peers.py --family attention). Issue 12's prefill shapes: B x S = 16k tokens at S = 1k
// .. 16k, 32 query heads with 32 or 8 KV heads, head dim 64 and 128, causal and not; timed with CUDA
// events, L2 flushed before each run, median of --runs; TFLOP/s = 4 B S T H D (causal: half).
//   cake_bench_attention [--runs N] [--quick] [--sweep]   (--quick: S = 4k only; --sweep: pipeline depths)
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/attention/attention.hpp"

using namespace cake;

int main(int argc, char** argv) {
  int runs = 20;
  bool quick = false, sweep = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--sweep")) sweep = true;
    else {
      std::fprintf(stderr, "usage: cake_bench_attention [--runs N] [--quick] [--sweep]\n");
      return 2;
    }
  }
  if (!jit::driver::available()) {
    std::printf("SKIPPED: %s\n", jit::driver::unavailable_reason().c_str());
    return 0;
  }
  auto rng = harness::random_source::fresh();
  const long long tokens = 16384;
  for (long long D : {64LL, 128LL})
    for (long long HK : {32LL, 8LL})
      for (bool causal : {false, true})
        for (long long S : {1024LL, 2048LL, 4096LL, 8192LL, 16384LL}) {
          if (quick && S != 4096) continue;
          const attention::prefill_shape s{tokens / S, S, S, 32, HK, D, causal};
          const std::size_t nq = static_cast<std::size_t>(s.B * s.S * s.H * s.D), nk = static_cast<std::size_t>(s.B * s.T * s.HK * s.D);
          auto q = harness::random_vector<harness::host_bf16>(nq, rng), k = harness::random_vector<harness::host_bf16>(nk, rng);
          auto dq = jit::to_device(q), dk = jit::to_device(k), dv = jit::to_device(k);
          jit::device_buffer dout(2 * nq), dlse(static_cast<std::size_t>(4 * s.B * s.H * s.S));
          const double flops = 4.0 * s.B * s.S * s.T * s.H * s.D * (causal ? 0.5 : 1.0);
          std::vector<int> depths{0};  // 0: the entry point's choice
          if (sweep)
            for (int st = 2; st <= 6; ++st) {
              kernels::attention_prefill_config c = attention::prefill_config_for(s);
              c.stages = st;
              if (kernels::attention_prefill_smem(c) <= 227 * 1024) depths.push_back(st);
            }
          for (int st : depths) try {
            kernels::attention_prefill_config c = attention::prefill_config_for(s);
            if (st) c.stages = st;
            auto work = [&](CUstream stream) {
              attention::prefill_with(c, dq.address(), dk.address(), dv.address(), dout.address(), static_cast<float*>(dlse.address()), s, stream);
            };
            harness::timing_options o;
            o.runs = runs;
            const auto t = harness::time_gpu(work, o);
            std::printf("attn D%lld H32 HK%lld S%lld B%lld %s stages %d%s | %.4f ms %.1f TFLOP/s\n", D, HK, S, s.B, causal ? "causal" : "full  ", c.stages,
                        st ? "" : " (chosen)", t.median_ms, flops / t.median_ms / 1e9);
          } catch (const std::exception& e) {
            std::printf("attn D%lld HK%lld S%lld %s | error: %.200s\n", D, HK, S, causal ? "causal" : "full", e.what());
          }
          std::fflush(stdout);
        }
}
