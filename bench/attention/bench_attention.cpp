// Attention prefill schedules on the GPU, alone (the same-process comparison with PyTorch SDPA / cuDNN is
// bench/peers/bench_peers.py --family attention). Issue 12's prefill shapes: B x S = 16k tokens at S = 1k
// .. 16k, 32 query heads with 32 or 8 KV heads, head dim 64 and 128, causal and not; timed with CUDA
// events, L2 flushed before each run, median of --runs; TFLOP/s = 4 B S T H D (causal: half).
//   cake_bench_attention [--runs N] [--quick] [--d256] [--max-s S] [--min-s S] [--w3 BN,STAGES] [--hk N] [--sweep] [--shape D,S,causal] [--variant V]
//   (--quick: S = 4k only; --d256: head dim 256 instead of 64 and 128 (issue 12's stretch); --max-s: sequence lengths up to S only; --sweep: pipeline depths; --shape: one
//   shape with 32 KV heads, for profiling;
//   --variant: the chosen schedule without the lookahead (attention::prefill_base_config) walked as a grid (the
//   default), persistent (one CTA per SM walks the tiles),
//   persistent-lf (and the query tiles longest first, outermost), persistent-q2 (persistent with two Q stages,
//   the K / V pipelines one stage shorter where smem needs it), persistent-q2-ot (and O stored through smem by
//   TMA), persistent-ot (O by TMA with one Q stage: 3 K / V stages at D = 128), or all six one after the other;
//   lookahead: that schedule persistent (prefill_base_config) and the same with config.lookahead (two consumers
//   issuing freely), side by side; serpentine: the entry point's schedule walking strided and serpentine, side by side;
//   lookahead-w3: the lookahead (two consumers) and the same with three consumers of 64 rows over 96..128-key blocks
//   (D = 64, not causal);
//   causal-w3: the entry point's schedule (and where it takes three consumers, from 8k, the two-consumer lookahead
//   schedule) and, causal at D = 64, three consumers of 64 rows (192-row query tiles,
//   the key blocks crossing the diagonal masked) over 96- or 112-key blocks, 2 or 3 stages, taking turns, issuing freely, or
//   issuing freely with skip_masked (a warpgroup only waits for and releases the blocks after its last row), each with
//   skip_past_rows (a warpgroup whose rows all lie past S computes nothing), the last also without it, and issuing freely with
//   neither;
//   (--w3 BN,STAGES: causal-w3 times only that key block and depth, taking turns and issuing freely with
//   skip_past_rows, issuing freely with skip_masked, and with neither; --min-s S: sequence lengths from S only)
//   skip-past: D = 64 non-causal, the entry point's schedule, and the one without the lookahead (three consumers) with and
//   without skip_past_rows (at S = 1k the entry point takes the lookahead; 192-row tiles there put 2 of 18 warpgroup-tiles past S);
//   fma-share: the entry point's schedule with 0, 1, 2, 3 and 4 of every 8 softmax exp2 on the FMA pipe (config.exp2_fma);
//   tail: not causal, the entry point's schedule, the same with its walk's last round split over key blocks into up to
//   4, 8, 16 and 32 parts (config.tail_parts: k.split_tail, then the tail combine kernel), and the schedule again;
//   the entry point's own choice is marked "(chosen)"; --hk: that many KV heads only; --sweep also times the
//   consumers taking turns where the choice has them issue freely, and the reverse, and where causal tiles mask in
//   ranges, skip_masked flipped)
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
  bool quick = false, sweep = false, d256 = false;
  long long only_d = 0, only_s = 0, max_s = 0, min_s = 0, only_hk = 0;  // --shape D,S: one head dim and one S only (profiling)
  int w3_bn = 0, w3_stages = 0;  // --w3 BN,STAGES: causal-w3's three-consumer forms at that key block and depth only
  int only_causal = -1;
  std::string variant = "grid";  // grid | persistent | persistent-lf | persistent-q2 | persistent-q2-ot | persistent-ot | all | lookahead | lookahead-sweep | serpentine | chosen | fma-share | lookahead-w3 | causal-w3 | skip-past | tail
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--sweep")) sweep = true;
    else if (!std::strcmp(argv[i], "--d256")) d256 = true;
    else if (!std::strcmp(argv[i], "--max-s") && i + 1 < argc) max_s = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--min-s") && i + 1 < argc) min_s = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--w3") && i + 1 < argc) std::sscanf(argv[++i], "%d,%d", &w3_bn, &w3_stages);
    else if (!std::strcmp(argv[i], "--hk") && i + 1 < argc) only_hk = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) std::sscanf(argv[++i], "%lld,%lld,%d", &only_d, &only_s, &only_causal);
    else if (!std::strcmp(argv[i], "--variant") && i + 1 < argc) variant = argv[++i];
    else {
      std::fprintf(stderr, "usage: cake_bench_attention [--runs N] [--quick] [--d256] [--max-s S] [--min-s S] [--w3 BN,STAGES] [--hk N] [--sweep] [--shape D,S,causal] [--variant grid|persistent|persistent-lf|persistent-q2|persistent-q2-ot|persistent-ot|all|lookahead|lookahead-sweep|serpentine|chosen|fma-share|lookahead-w3|causal-w3|skip-past|tail]\n");
      return 2;
    }
  }
  if (variant != "grid" && variant != "persistent" && variant != "persistent-lf" && variant != "persistent-q2" && variant != "persistent-q2-ot" && variant != "persistent-ot" && variant != "all" && variant != "lookahead" && variant != "serpentine" && variant != "chosen" && variant != "lookahead-sweep" && variant != "fma-share" && variant != "lookahead-w3" && variant != "causal-w3" && variant != "skip-past" && variant != "tail") {
    std::fprintf(stderr, "cake_bench_attention: --variant %s: expected grid, persistent, persistent-lf, persistent-q2, persistent-q2-ot, persistent-ot, all, lookahead, lookahead-sweep, serpentine, chosen, fma-share, lookahead-w3, causal-w3, skip-past or tail\n", variant.c_str());
    return 2;
  }
  if (!jit::driver::available()) {
    std::printf("SKIPPED: %s\n", jit::driver::unavailable_reason().c_str());
    return 0;
  }
  auto rng = harness::random_source::fresh();
  const long long tokens = 16384;
  for (long long D : {64LL, 128LL, 256LL})
    for (long long HK : {32LL, 8LL})
      for (bool causal : {false, true})
        for (long long S : {1024LL, 2048LL, 4096LL, 8192LL, 16384LL}) {
          if ((D == 256) != d256) continue;  // (head dim 256, issue 12's stretch: --d256, on its own)
          if ((quick && S != 4096) || (max_s && S > max_s) || (min_s && S < min_s) || (only_hk && HK != only_hk)) continue;
          if ((only_d && D != only_d) || (only_s && S != only_s) || (only_causal >= 0 && causal != (only_causal == 1)) || (only_d && HK != 32)) continue;
          if (variant == "causal-w3" && (D != 64 || !causal)) continue;  // (its shapes: the others have nothing to compare)
          if (variant == "skip-past" && (D != 64 || causal)) continue;
          if (variant == "tail" && causal) continue;
          const attention::prefill_shape s{tokens / S, S, S, 32, HK, D, causal};
          const std::size_t nq = static_cast<std::size_t>(s.B * s.S * s.H * s.D), nk = static_cast<std::size_t>(s.B * s.T * s.HK * s.D);
          auto q = harness::random_vector<harness::host_bf16>(nq, rng), k = harness::random_vector<harness::host_bf16>(nk, rng);
          auto dq = jit::to_device(q), dk = jit::to_device(k), dv = jit::to_device(k);
          jit::device_buffer dout(2 * nq), dlse(static_cast<std::size_t>(4 * s.B * s.H * s.S));
          const double flops = 4.0 * s.B * s.S * s.T * s.H * s.D * (causal ? 0.5 : 1.0);
          // the entry point's choice first, then (--sweep) other schedules: pipeline depth, key block,
          // a third consumer warpgroup (D = 64), consumers issuing without turns
          std::vector<kernels::attention_prefill_config> cands;
          {
            const auto chosen = attention::prefill_config_for(s), base = attention::prefill_base_config(s);  // (base: without the lookahead)
            auto with = [&](bool persistent, bool lf, int q_stages = 1, bool o_tma = false) {
              auto c = base;
              c.persistent = persistent, c.longest_first = lf, c.q_stages = q_stages, c.o_tma = o_tma;
              c.stages = c.parts == 2 ? 3 : 2;  // (the depths measured before two Q stages: 3 at D = 128) as smem allows
              while (c.stages > 1 && kernels::attention_prefill_smem(c) > 227 * 1024) --c.stages;
              return c;
            };
            if (variant == "grid" || variant == "all") cands.push_back(with(false, false));
            if (variant == "persistent" || variant == "all") cands.push_back(with(true, false));
            if (variant == "persistent-lf" || variant == "all") cands.push_back(with(true, true));
            if (variant == "persistent-q2" || variant == "all") cands.push_back(with(true, false, 2));
            if (variant == "persistent-q2-ot" || variant == "all") cands.push_back(with(true, false, 2, true));
            if (variant == "persistent-ot" || variant == "all") cands.push_back(with(true, false, 1, true));
            if (variant == "chosen") cands.push_back(chosen);
            if (variant == "lookahead-sweep") {  // the lookahead with other key blocks (non-causal) and K / V depths
              const auto la = kernels::with_lookahead(base);
              cands.push_back(la);
              for (int bn : {128, 192})
                for (int st : {2, 3}) {
                  auto c = la;
                  c.bn = bn, c.stages = st;
                  if (c != la && c.valid() && kernels::attention_prefill_smem(c) <= 227 * 1024) cands.push_back(c);
                }
            }
            if (variant == "serpentine") {  // the chosen schedule walking strided and serpentine
              for (bool sp : {false, true}) {
                auto c = chosen;
                c.serpentine = sp;
                cands.push_back(c);
              }
            }
            if (variant == "lookahead-w3" && base.parts == 1 && !base.causal) {  // three consumers with the lookahead
              const auto la = kernels::with_lookahead(base);
              cands.push_back(la);
              for (int bn : {96, 112, 128})
                for (int st : {2, 3}) {
                  auto c = la;
                  c.wgs = 3, c.bn = bn, c.stages = st;
                  if (c.valid() && kernels::attention_prefill_smem(c) <= 227 * 1024) cands.push_back(c);
                }
            }
            if (variant == "causal-w3") {  // causal D = 64: 192-row query tiles (blocks crossing the diagonal masked)
              cands.push_back(chosen);
              // (from 8k the choice is three consumers: the two-consumer lookahead schedule it replaced, beside it)
              if (base.parts == 1 && base.causal && !chosen.lookahead) cands.push_back(kernels::with_lookahead(base));
              if (base.parts == 1 && base.causal)
                for (int bn : {96, 112})  // (128: S, P and O exceed the 160 registers of three consumers)
                  for (int st : {2, 3})
                    for (int form : {0, 1, 2, 3, 4}) {  // taking turns, issuing freely, issuing freely and skipping (all three
                                                        // with skip_past_rows), the last without it, and issuing freely with neither
                      if (w3_bn && (bn != w3_bn || st != w3_stages || form == 2)) continue;
                      auto c = base;
                      c.wgs = 3, c.bn = bn, c.stages = st, c.turns = form == 0, c.skip_masked = form == 2 || form == 3,
                      c.skip_past_rows = form <= 2;
                      if (c.valid() && kernels::attention_prefill_smem(c) <= 227 * 1024) cands.push_back(c);
                    }
            }
            if (variant == "skip-past") {  // D = 64 non-causal: the chosen schedule, and the one without the lookahead
                                           // (three consumers taking turns) with and without skip_past_rows
              cands.push_back(chosen);
              if (base != chosen) cands.push_back(base);
              auto c = base;
              c.skip_past_rows = true;
              cands.push_back(c);
            }
            if (variant == "fma-share") {  // the chosen schedule with n of every 8 softmax exp2 on the FMA pipe
              for (int n : {0, 1, 2, 3, 4}) {
                auto c = chosen;
                c.exp2_fma = n ? fma_share{n, 8} : fma_share{};
                cands.push_back(c);
              }
            }
            if (variant == "tail") {  // the chosen schedule, with its last round split, and again (drift)
              cands.push_back(chosen);
              for (int n : {4, 8, 16, 32}) {
                auto c = chosen;
                c.tail_parts = n;
                cands.push_back(c);
              }
              cands.push_back(chosen);
            }
            if (variant == "lookahead") {
              cands.push_back(base);
              cands.push_back(kernels::with_lookahead(base));
            }
          }
          if (sweep) {
            const auto base = cands[0];
            auto add = [&](kernels::attention_prefill_config c) {
              if (c.valid() && kernels::attention_prefill_smem(c) <= 227 * 1024 && c != base) cands.push_back(c);
            };
            for (int st : {3, 4}) add([&] { auto c = base; c.stages = st; return c; }());
            for (int bn : {64, 176, 192}) add([&] { auto c = base; c.bn = bn; return c; }());
            // (3 consumers hold 160 registers each: 112-key blocks keep S, P and O inside that)
            add([&] { auto c = base; c.wgs = 3; c.bn = 112; return c; }());
            add([&] { auto c = base; c.wgs = 3; c.bn = 112; c.stages = 3; return c; }());
            add([&] { auto c = base; c.turns = !base.turns; return c; }());  // the consumers taking turns, or not
            // causal in ranges: the warpgroups skipping the blocks past their rows, or computing them
            if (!base.diagonal_aligned()) add([&] { auto c = base; c.skip_masked = !base.skip_masked; return c; }());
          }
          for (std::size_t ci = 0; ci < cands.size(); ++ci) try {
            const auto& c = cands[ci];
            auto work = [&](CUstream stream) {
              attention::prefill_with(c, dq.address(), dk.address(), dv.address(), dout.address(), static_cast<float*>(dlse.address()), s, stream);
            };
            harness::timing_options o;
            o.runs = runs;
            const auto t = harness::time_gpu(work, o);
            const std::string share = (c.exp2_fma.n ? " exp2-fma " + std::to_string(c.exp2_fma.n) + "/" + std::to_string(c.exp2_fma.d) : "") +
                                      (c.tail_parts ? " tail " + std::to_string(c.tail_parts) : "");
            std::printf("attn D%lld H32 HK%lld S%lld B%lld %s | wgs %d bn %d stages %d%s%s%s%s%s%s%s%s%s%s | %.4f ms %.1f TFLOP/s\n", D, HK, S, s.B, causal ? "causal" : "full  ",
                        c.wgs, c.bn, c.stages, c.turns ? "" : " free", c.persistent ? " persistent" : "", c.longest_first ? " longest-first" : "",
                        c.q_stages == 2 ? (c.o_tma ? " q2 o-tma" : " q2") : "", c.lookahead ? " lookahead" : "", c.serpentine ? " serpentine" : "", c.skip_masked ? " skip" : "", c.skip_past_rows ? " skip-past" : "", share.c_str(),
                        c == attention::prefill_config_for(s) ? " (chosen)" : "", t.median_ms, flops / t.median_ms / 1e9);
          } catch (const std::exception& e) {
            std::printf("attn D%lld HK%lld S%lld %s | error: %.200s\n", D, HK, S, causal ? "causal" : "full", e.what());
          }
          std::fflush(stdout);
        }
}
