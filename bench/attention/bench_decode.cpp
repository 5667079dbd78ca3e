// Paged decode (cake::attention::decode_paged) on the GPU, alone: the GPU time of the two kernels (split
// decode + combine) on issue 12's decode grid, and, with --sweep, of other schedules (split count, key
// block, pipeline depth) so that decode_config_for can be chosen from measurements. The same-process
// comparison with PyTorch SDPA is bench/peers/bench_peers.py --family attention_decode.
//   cake_bench_decode [--runs N] [--sweep] [--shape B,ctx] [--heads H,HK] [--page-size P] [--in-order] [--loads-only] [--fused-combine] [--one-slice] [--cluster-combine] [--fp8] [--json FILE]
//   (--shape: one shape, on the grid or not; --heads / --page-size: other than issue 12's 32,8 and 16, to see
//   what the cache's layout costs; --in-order: the page table in pool order instead of shuffled; --loads-only:
//   each schedule also as the probe whose consumer only waits for and releases the stages, the load side's
//   ceiling: its O is not attention; --fused-combine: each schedule also with fused_combine, the last slice to arrive
//   combining the others in the decode kernel, no combine kernel, then the schedule again, so that the pair is timed
//   both ways round; --one-slice: beside the chosen schedule, one slice with the fused combine (no combine kernel,
//   no slice state) at 64- and 128-key blocks in 3 stages, then the chosen schedule again, so that the split rule
//   can be weighed against the one-slice form it does not take where several slices fill the GPU; --cluster-combine:
//   each schedule of 2..16 slices also with cluster_combine, its slices one cluster merging in distributed shared
//   memory (at its split and depth, at 8 slices where it has 16, and in 2 stages where 3 no longer fit two CTAs
//   per SM beside the reductions' scratch), then the schedule again; --fp8: beside the chosen schedule on bf16 caches,
//   the same shape with e4m3 caches (kv_fp8: half the bytes) at the rule's schedule, at the other key block, in 2 and
//   4 stages, and as the loads-only probe, then the bf16 schedule again; GB/s counts each row's own bytes)
// Timing: CUDA events around the two launches, L2 flushed before each run, median of N (harness/timing.hpp);
// "enqueue" is the host's wall time per call over 200 calls enqueued back to back without a flush (the
// larger of the host's time per call and the GPU's). GB/s counts the K and V bytes once.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>
#include <cake/jit/device_memory.hpp>

#include "bench/common.hpp"
#include "kernels/attention/attention.hpp"

using namespace cake;

namespace {
struct decode_row {
  long long B, ctx;
  kernels::attention_decode_config c;
  bool chosen;
  double ms, enqueue_us, gbps;
};
}  // namespace

int main(int argc, char** argv) {
  int runs = 30;
  bool sweep = false;
  long long only_b = 0, only_ctx = 0;
  long long H = 32, HK = 8, ps = 16;
  bool in_order = false, loads_only = false, fused = false, one_slice = false, cluster = false, fp8 = false;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--sweep")) sweep = true;
    else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%lld,%lld", &only_b, &only_ctx) != 2 || only_b < 1 || only_ctx < 1) {
        std::fprintf(stderr, "cake_bench_decode: --shape %s: expected B,ctx (both positive)\n", argv[i]);
        return 2;
      }
    }
    else if (!std::strcmp(argv[i], "--heads") && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%lld,%lld", &H, &HK) != 2 || H < 1 || HK < 1 || H % HK) {
        std::fprintf(stderr, "cake_bench_decode: --heads %s: expected H,HK with H a multiple of HK\n", argv[i]);
        return 2;
      }
    }
    else if (!std::strcmp(argv[i], "--page-size") && i + 1 < argc) ps = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--in-order")) in_order = true;
    else if (!std::strcmp(argv[i], "--loads-only")) loads_only = true;
    else if (!std::strcmp(argv[i], "--fused-combine")) fused = true;
    else if (!std::strcmp(argv[i], "--one-slice")) one_slice = true;
    else if (!std::strcmp(argv[i], "--fp8")) fp8 = true;
    else if (!std::strcmp(argv[i], "--cluster-combine")) cluster = true;
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else {
      std::fprintf(stderr, "usage: cake_bench_decode [--runs N] [--sweep] [--shape B,ctx] [--heads H,HK] [--page-size P] [--in-order] [--loads-only] [--fused-combine] [--one-slice] [--cluster-combine] [--fp8] [--json FILE]\n");
      return 2;
    }
  }
  if (runs < 1) {
    std::fprintf(stderr, "cake_bench_decode: --runs must be at least 1\n");
    return 2;
  }
  if (one_slice && (sweep || loads_only || fused)) {
    std::fprintf(stderr, "cake_bench_decode: --one-slice times its own four schedules per shape: not with --sweep, --loads-only or --fused-combine\n");
    return 2;
  }
  if (fp8 && (sweep || one_slice || cluster || loads_only || fused)) {
    std::fprintf(stderr, "cake_bench_decode: --fp8 times its own forms per shape: not with --sweep, --one-slice, --cluster-combine, --loads-only or --fused-combine\n");
    return 2;
  }
  if (cluster && (one_slice || loads_only || fused)) {
    std::fprintf(stderr, "cake_bench_decode: --cluster-combine times its own forms of each schedule: not with --one-slice, --loads-only or --fused-combine\n");
    return 2;
  }
  if (!jit::driver::available()) {
    std::printf("SKIPPED: %s\n", jit::driver::unavailable_reason().c_str());
    return 0;
  }
  // issue 12's decode grid (the same as bench_peers.py's DECODE_GRID): 32 query heads, 8 KV heads, D 128, pages of 16
  std::vector<std::pair<long long, long long>> grid = {{1, 1024},   {1, 8192},   {1, 32768},  {8, 4096},   {16, 32768}, {32, 8192},
                                                             {64, 1024},  {64, 4096},  {64, 16384}, {128, 2048}, {256, 1024}, {256, 4096}};
  const long long D = 128;
  // --shape B,ctx: that shape alone, on the grid or not (ctx a multiple of the page size)
  if (only_b > 0 && only_ctx > 0) {
    if (only_ctx % ps) {
      std::fprintf(stderr, "cake_bench_decode: --shape %lld,%lld: ctx must be a multiple of the page size %lld\n", only_b, only_ctx, ps);
      return 2;
    }
    grid = {{only_b, only_ctx}};
  }
  auto rng = harness::random_source::fresh();
  std::vector<decode_row> rows;
  for (auto [B, ctx] : grid) {
    attention::decode_shape s;
    s.B = B, s.H = H, s.HK = HK, s.D = D, s.page_size = ps;
    s.max_pages = ctx / ps, s.num_pages = B * s.max_pages, s.max_seq_len = ctx;
    // the pool's pages in a random order
    std::vector<int> table(static_cast<std::size_t>(s.num_pages));
    std::iota(table.begin(), table.end(), 0);
    if (!in_order)
      for (std::size_t i = table.size(); i > 1; --i) std::swap(table[i - 1], table[static_cast<std::size_t>(rng.engine()() % i)]);
    std::vector<int> lens(static_cast<std::size_t>(B), static_cast<int>(ctx));
    const std::size_t nk = static_cast<std::size_t>(s.num_pages * ps * HK * D), nq = static_cast<std::size_t>(B * H * D);
    jit::device_buffer dk(2 * nk), dv(2 * nk);
    dk.fill_u32(0x3c003c00u);  // bf16 pairs of small values: the time does not depend on them
    dv.fill_u32(0x3c003c00u);
    auto q = harness::random_vector<harness::host_bf16>(nq, rng);
    auto dq = jit::to_device(q), dt = jit::to_device(table), dl = jit::to_device(lens);
    jit::device_buffer dout(2 * nq), dlse(4 * static_cast<std::size_t>(B * H));
    const double kv_bytes = 2.0 * B * ctx * HK * D * 2;
    const kernels::attention_decode_config base = attention::decode_config_for(s);
    std::vector<kernels::attention_decode_config> cands{base};
    if (sweep) {
      const long long blocks64 = (ctx + 63) / 64;
      for (int bn : {64, 128})
        for (int st : {2, 3, 4})
          for (int sp = 1; sp <= 32 && sp <= blocks64; sp *= 2)  // (64 and more never won on the grid)
            for (bool pers : {false, true}) {
              auto c = base;
              c.bn = bn, c.stages = st, c.splits = sp, c.persistent = pers;
              // (persistent launches one CTA per SM: only schedules that fit one CTA per SM anyway)
              if (pers && kernels::attention_decode_smem(c) <= 113 * 1024) continue;
              if (c.valid() && kernels::attention_decode_smem(c) <= 227 * 1024 && c != base) cands.push_back(c);
            }
    }
    if (loads_only) {
      std::vector<kernels::attention_decode_config> both;
      for (auto c : cands) {
        both.push_back(c);
        c.loads_only = true;
        both.push_back(c);
      }
      cands = both;
    }
    if (fused) {
      std::vector<kernels::attention_decode_config> three;
      for (auto c : cands) {
        three.push_back(c);
        c.fused_combine = true;
        three.push_back(c);
        c.fused_combine = false;
        three.push_back(c);
      }
      cands = three;
    }
    if (cluster) {
      std::vector<kernels::attention_decode_config> with;
      for (const auto& c : cands) {
        with.push_back(c);
        if (c.splits < 2 || c.persistent) continue;
        auto two_per_sm = [](const kernels::attention_decode_config& x) { return kernels::attention_decode_two_ctas_per_sm(x); };
        std::vector<kernels::attention_decode_config> forms;
        auto x = c;
        x.splits = c.splits > 8 ? 8 : c.splits, x.cluster_combine = true;
        if (x.valid() && kernels::attention_decode_smem(x) <= 227 * 1024) forms.push_back(x);
        if (two_per_sm(c) && !two_per_sm(x) && x.stages > 2) {  // the scratch cost the second CTA: also at depth 2
          x.stages = 2;
          if (x.valid() && two_per_sm(x)) forms.push_back(x);
        }
        for (const auto& f : forms) with.push_back(f);
        if (!forms.empty()) with.push_back(c);
      }
      cands = with;
    }
    if (one_slice) {
      std::vector<kernels::attention_decode_config> four{base};
      for (int bn : {64, 128}) {
        auto c = base;
        c.bn = bn, c.stages = 3, c.splits = 1, c.persistent = false, c.fused_combine = true;
        if (c.valid() && c != base) four.push_back(c);
      }
      four.push_back(base);
      cands = four;
    }
    attention::decode_shape s8 = s;  // (--fp8) the same shape over e4m3 caches (the buffers' first half: their bytes are small values)
    s8.kv_fp8 = true, s8.k_scale = 0.5f, s8.v_scale = 0.25f;
    if (fp8) {
      const auto r8 = attention::decode_config_for(s8);
      std::vector<kernels::attention_decode_config> forms{base, r8};
      auto other = r8;
      other.bn = r8.bn == 64 ? 128 : 64;
      if (other.valid() && kernels::attention_decode_smem(other) <= 227 * 1024) forms.push_back(other);
      for (int st : {2, 4}) {  // the depth: fewer stages, or more (one CTA per SM at 4)
        auto d = r8;
        d.stages = st;
        if (d.valid() && kernels::attention_decode_smem(d) <= 227 * 1024) forms.push_back(d);
      }
      auto probe = r8;
      probe.loads_only = true, probe.fused_combine = false;
      forms.push_back(probe);
      forms.push_back(base);
      cands = forms;
    }
    for (std::size_t ci = 0; ci < cands.size(); ++ci) try {
      const auto& c = cands[ci];
      const attention::decode_shape& sc = c.kv_fp8 ? s8 : s;
      const double bytes = c.kv_fp8 ? kv_bytes / 2 : kv_bytes;
      jit::device_buffer dws(static_cast<std::size_t>(attention::decode_workspace_bytes_with(c, sc)));
      auto work = [&](CUstream stream) {
        if (c.loads_only)
          attention::probe::decode_paged_loads_only(c, dq.address(), dk.address(), dv.address(), static_cast<const int*>(dt.address()),
                                                    static_cast<const int*>(dl.address()), dout.address(), static_cast<float*>(dlse.address()), dws.address(), sc,
                                                    stream);
        else
          attention::decode_paged_with(c, dq.address(), dk.address(), dv.address(), static_cast<const int*>(dt.address()), static_cast<const int*>(dl.address()),
                                       dout.address(), static_cast<float*>(dlse.address()), dws.address(), sc, stream);
      };
      harness::timing_options o;
      o.runs = runs;
      o.warmup_ms = ci ? 20 : 200;  // the clock is up after the first candidate
      const auto t = harness::time_gpu(work, o);
      const auto t0 = std::chrono::steady_clock::now();
      constexpr int calls = 200;
      for (int i = 0; i < calls; ++i) work(nullptr);
      jit::driver::get().check(jit::driver::get().cuCtxSynchronize(), "cuCtxSynchronize", "enqueue timing");
      const double enq = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
      rows.push_back({B, ctx, c, ci == 0, t.median_ms, enq, bytes / t.median_ms / 1e6});
      std::printf("decode B%-4lld ctx%-6lld | bn %3d stages %d splits %3d%s%s%s | %.4f ms %7.1f GB/s | enqueue %.1f us\n", B, ctx, c.bn, c.stages, c.splits,
                  c.loads_only ? " L" : c.fused_combine ? " C" : c.cluster_combine ? " X" : c.persistent ? " P" : "  ", c.kv_fp8 ? " fp8" : "    ",
                  ci ? "         " : " (chosen)", t.median_ms, bytes / t.median_ms / 1e6, enq);
      std::fflush(stdout);
    } catch (const std::exception& e) {
      std::printf("decode B%lld ctx%lld | bn %d stages %d splits %d | error: %.200s\n", B, ctx, cands[ci].bn, cands[ci].stages, cands[ci].splits, e.what());
    }
    if (sweep) {  // the best per shape
      const decode_row* best = nullptr;
      for (const auto& r : rows)
        if (r.B == B && r.ctx == ctx && (!best || r.ms < best->ms)) best = &r;
      for (const auto& r : rows)
        if (best && r.B == B && r.ctx == ctx && r.chosen)
          std::printf("best   B%-4lld ctx%-6lld | bn %3d stages %d splits %3d%s | %.4f ms (%.3fx the chosen)\n", B, ctx, best->c.bn, best->c.stages,
                      best->c.splits, best->c.persistent ? " P" : "  ", best->ms, r.ms / best->ms);
    }
  }
  if (!json.empty()) {
    std::ofstream f(json);
    f << "{\n  \"gpu\": \"" << jit::driver::get().device(0).name << "\", \"date\": \"" << cake_bench::today()
      << "\",\n  \"command\": \"cake_bench_decode --runs " << runs << (sweep ? " --sweep" : "") << " --heads " << H << "," << HK << " --page-size " << ps
      << (in_order ? " --in-order" : "") << (loads_only ? " --loads-only" : "") << (fused ? " --fused-combine" : "") << (one_slice ? " --one-slice" : "") << (cluster ? " --cluster-combine" : "") << (fp8 ? " --fp8" : "") << (only_b > 0 ? " --shape " + std::to_string(only_b) + "," + std::to_string(only_ctx) : std::string())
      << "\",\n"
      << "  \"method\": \"CUDA events around decode + combine, L2 flushed before each run, median of runs; enqueue: host wall time per call over 200 calls\",\n"
      << "  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      f << "    {\"kernel\": \"attention_decode_paged\", \"shape\": {\"B\": " << r.B << ", \"ctx\": " << r.ctx << ", \"H\": " << H << ", \"HK\": " << HK
        << ", \"D\": " << D << ", \"page_size\": " << ps << "}, \"bn\": " << r.c.bn << ", \"stages\": " << r.c.stages << ", \"splits\": " << r.c.splits << ", \"persistent\": " << (r.c.persistent ? "true" : "false") << ", \"loads_only\": " << (r.c.loads_only ? "true" : "false") << ", \"fused_combine\": " << (r.c.fused_combine ? "true" : "false") << ", \"cluster_combine\": " << (r.c.cluster_combine ? "true" : "false") << ", \"kv_fp8\": " << (r.c.kv_fp8 ? "true" : "false")
        << ", \"chosen\": " << (r.chosen ? "true" : "false") << ", \"ms\": " << r.ms << ", \"gbps\": " << r.gbps << ", \"enqueue_us\": " << r.enqueue_us << "}"
        << (i + 1 < rows.size() ? ",\n" : "\n");
    }
    f << "  ]\n}\n";
  }
}
