// Fuzz target (issue 10): bytes become a Program built through the public builder (dims, tensors, smem,
// pipelines, roles, loops, conditional bodies, register tiles and vectors, MMAs, TMA, loads and stores,
// conversions, reductions, barriers: valid and invalid shapes and counts alike), then the analyzer and the lowering run on it. The property: no crash,
// and the outcome is always a diagnostic (builder error or analyzer finding) or lowered source.
//
// Two drivers share LLVMFuzzerTestOneInput:
//   - libFuzzer (clang, -fsanitize=fuzzer[,address,undefined]): configure with CAKE_FUZZ_LIBFUZZER=ON
//     and a clang compiler; run `cake_fuzz_builder -runs=1000000`;
//   - without it (any compiler): `cake_fuzz_builder [iterations] [seed]` feeds seeded random inputs and
//     prints how far they got; the test suite runs a short batch and requires that some inputs lower and
//     none is refused by the lowering after a clean analysis (tests/fuzz/CMakeLists.txt).
// Lowering stops at CUDA C++ source: NVRTC (a tenth of a second to seconds per kernel) is left to the lowering
// tier, unless CAKE_FUZZ_NVRTC=N is set: then every N-th lowered program is also assembled by NVRTC for its
// target (a generated source NVRTC rejects after a clean analysis is a late surprise too; CAKE_FUZZ_SHOW=1
// prints each failure's diagnostics and writes its source to fuzz-nvrtc-fail-<i>.cu).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <cake/analysis.hpp>
#include <cake/cake.hpp>
#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>

using namespace cake;

namespace {

// Reads bytes as small choices; past the end every choice is 0 (a finite program).
struct input {
  const std::uint8_t* data;
  std::size_t size, at = 0;
  int pick(int n) { return n <= 1 ? 0 : (at < size ? data[at++] : 0) % n; }
  template <class T, std::size_t N>
  T from(const T (&options)[N]) {
    return options[pick(static_cast<int>(N))];
  }
};

constexpr int sizes[] = {64, 128, 256, 16, 8, 1, 0, 7, 192, 1000};

struct fuzz_state {
  std::vector<smem_tile<bf16>> smem;
  std::vector<pipeline_ref> pipes;
  std::vector<tensor<bf16>> ins;
  std::vector<tensor<bf16>> outs;
  std::vector<named_barrier_ref> named;
  std::vector<mbarrier_ref> mbars;
  dim_ref dims[3]{};
  cake::space<2> walk{};
  bool has_space = false;
};

void body(role& r, input& in, fuzz_state& st, int depth, std::vector<slot>& slots, std::vector<reg_tile<f32>>& regs, index_expr i0, index_expr i1) {
  const int n = 1 + in.pick(8);
  for (int k = 0; k < n; ++k) {
    switch (in.pick(22)) {
      case 0:
        if (!st.pipes.empty()) slots.push_back(r.acquire(st.pipes[static_cast<std::size_t>(in.pick(static_cast<int>(st.pipes.size())))]));
        break;
      case 1:
        if (!st.pipes.empty()) slots.push_back(r.wait(st.pipes[static_cast<std::size_t>(in.pick(static_cast<int>(st.pipes.size())))]));
        break;
      case 2:
        if (!slots.empty() && !st.pipes.empty()) {
          auto op = r.release(st.pipes[static_cast<std::size_t>(in.pick(static_cast<int>(st.pipes.size())))], slots[static_cast<std::size_t>(in.pick(static_cast<int>(slots.size())))]);
          if (in.pick(4) == 0) op.later(in.pick(6));
        }
        break;
      case 3:
        if (!slots.empty() && !st.smem.empty() && !st.ins.empty()) {
          auto s = slots[static_cast<std::size_t>(in.pick(static_cast<int>(slots.size())))];
          auto op = r.tma_load(s[st.smem[static_cast<std::size_t>(in.pick(static_cast<int>(st.smem.size())))]],
                               st.ins[static_cast<std::size_t>(in.pick(static_cast<int>(st.ins.size())))].tile(i0, i1));
          if (in.pick(4) == 0) op.multicast();
        }
        break;
      case 4:
        if (!regs.empty() && st.smem.size() >= 2) {
          r.wgmma_fence();
          auto op = r.wgmma(regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))], st.smem[static_cast<std::size_t>(in.pick(static_cast<int>(st.smem.size())))],
                            st.smem[static_cast<std::size_t>(in.pick(static_cast<int>(st.smem.size())))]);
          if (in.pick(2)) op.overwrite();
          r.wgmma_commit();
          if (in.pick(3)) r.wgmma_wait(in.pick(3));
        }
        break;
      case 5:
        regs.push_back(in.pick(2) ? r.accumulator<f32>("acc", {in.from(sizes), in.from(sizes)}) : r.fragment<f32>("frag", {in.from(sizes), in.from(sizes)}));
        break;
      case 6:
        if (!regs.empty()) r.fill(regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))], 0.5f * static_cast<float>(in.pick(5)));
        break;
      case 7:
        if (regs.size() >= 2) {
          auto a = regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))];
          auto b = regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))];
          switch (in.pick(4)) {
            case 0: r.set(a, a + b); break;
            case 1: r.set(a, exp2(a - b)); break;
            case 2: r.set(a, select(row() > col(), neg_inf, a * 2.0f)); break;
            default: r.set(a, fma(a, b, 1.0f)); break;
          }
        }
        break;
      case 8:
        if (regs.size() >= 2) {
          auto a = regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))];
          auto b = regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))];
          if (in.pick(2)) r.row_sum(a, b);
          else r.row_max(a, b * b).accumulate();
        }
        break;
      case 9:
        if (!regs.empty() && !st.ins.empty()) {
          auto op = r.load(regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))], st.ins[static_cast<std::size_t>(in.pick(static_cast<int>(st.ins.size())))].tile(i0, i1));
          if (in.pick(2)) op.fill_outside(pos_inf);
        }
        break;
      case 10:
        if (!regs.empty() && !st.outs.empty())
          r.store(st.outs[static_cast<std::size_t>(in.pick(static_cast<int>(st.outs.size())))].tile(i0, i1), r.convert<bf16>(regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))]));
        break;
      case 11:
        if (depth < 3) {
          const index_expr lim = in.pick(2) ? index_expr(in.pick(5)) : index_expr(2);
          r.loop(in.pick(2) ? loop_extent(tiles(st.dims[in.pick(3)], in.from(sizes) + 1)) : loop_extent(lim),
                 [&](auto j) { body(r, in, st, depth + 1, slots, regs, i0, j); });
        }
        break;
      case 12:
        if (depth < 3) r.for_range(in.pick(4), [&](auto j) { body(r, in, st, depth + 1, slots, regs, j, i1); });
        break;
      case 13:
        if (!st.named.empty()) r.sync(st.named[static_cast<std::size_t>(in.pick(static_cast<int>(st.named.size())))]);
        break;
      case 14:
        if (!st.mbars.empty()) {
          if (in.pick(2)) r.arrive(st.mbars[static_cast<std::size_t>(in.pick(static_cast<int>(st.mbars.size())))]);
          else r.wait(st.mbars[static_cast<std::size_t>(in.pick(static_cast<int>(st.mbars.size())))]);
        }
        break;
      case 15:
        if (regs.size() >= 3) {
          auto v = regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))];
          auto i = r.row_vector<i32>("idx", in.from(sizes));
          r.row_argmin(v, i, regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))], i1 * 64).accumulate();
        }
        break;
      case 16:
        if (!st.smem.empty() && !st.outs.empty()) {
          r.fence_proxy_async();
          r.tma_store(st.outs[static_cast<std::size_t>(in.pick(static_cast<int>(st.outs.size())))].tile(i0, i1), st.smem[static_cast<std::size_t>(in.pick(static_cast<int>(st.smem.size())))]);
          r.bulk_commit();
          r.bulk_wait(in.pick(2));
        }
        break;
      case 17:  // programmatic launch (sync.griddep-missing / -no-pdl)
        if (in.pick(2)) r.griddep_wait();
        else r.griddep_launch_dependents();
        break;
      case 18:  // a body under a condition over the indices (masks, first/last trips, one rank)
        if (depth < 3) {
          const rx cond = in.pick(3) == 0 ? eq(i1, in.pick(3)) : in.pick(2) ? rx(i0 < i1 + in.pick(4)) : ne(i0, 1);
          r.when(cond, [&] { body(r, in, st, depth + 1, slots, regs, i0, i1); });
        }
        break;
      case 19:  // a column vector broadcast down the rows of a tile
        if (!regs.empty()) {
          auto a = regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))];
          auto v = r.col_vector<f32>("cv", in.from(sizes));
          r.fill(v, 1.0f);
          if (in.pick(2)) r.set(a, a * v);
          else r.set(a, max(a, v - 1.0f));
          regs.push_back(v);
        }
        break;
      case 20:  // a converted copy kept and stored later (its own register array, or a lazy conversion)
        if (!regs.empty() && !st.outs.empty()) {
          auto c = r.convert<bf16>(regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))]);
          if (in.pick(2)) r.set(regs[static_cast<std::size_t>(in.pick(static_cast<int>(regs.size())))], rx(0.0f));
          r.store(st.outs[static_cast<std::size_t>(in.pick(static_cast<int>(st.outs.size())))].tile(i0, i1), c);
        }
        break;
      default:
        if (!regs.empty()) regs.push_back(r.row_vector<f32>("rv", in.from(sizes)));
        break;
    }
  }
}

// How far inputs got (reported by the random driver: a fuzz run that never reaches the lowering tests little).
long long built_with_errors = 0, analyzer_errors = 0, lowered_ok = 0, lowering_refused = 0;
long long nvrtc_every = 0, nvrtc_built = 0, nvrtc_failed = 0;  // CAKE_FUZZ_NVRTC

// Every nvrtc_every-th lowered program through NVRTC: a source it rejects is counted (and shown).
void assemble(const program& p, const lower::lowered_kernel& lowered) {
  if (nvrtc_every <= 0 || lowered_ok % nvrtc_every != 0) return;
  const auto art = jit::build(lowered.source, lowered.entry, std::string(to_string(p.target)));
  ++nvrtc_built;
  if (art.ok) return;
  ++nvrtc_failed;
  if (std::getenv("CAKE_FUZZ_SHOW")) {
    const std::string file = "fuzz-nvrtc-fail-" + std::to_string(nvrtc_failed) + ".cu";
    if (FILE* f = std::fopen(file.c_str(), "w")) {
      std::fputs(lowered.source.c_str(), f);
      std::fclose(f);
    }
    std::fprintf(stderr, "NVRTC rejected a lowered program (%s, source in %s): %s\n", std::string(to_string(p.target)).c_str(), file.c_str(),
                 art.diagnostics().substr(0, 600).c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in{data, size};
  constexpr target_id targets[] = {target_id::sm_90a, target_id::sm_80, target_id::sm_100a};
  auto k = kernel("fuzz").target(in.from(targets));
  if (in.pick(4) == 0) k.programmatic_launch();
  fuzz_state st;
  st.dims[0] = k.dim("M");
  st.dims[1] = k.dim("N");
  st.dims[2] = k.dim("K");
  const int n_in = in.pick(4), n_out = in.pick(3);
  const char* in_names[] = {"A", "B", "C"};
  const char* out_names[] = {"D", "E"};
  for (int i = 0; i < n_in; ++i) st.ins.push_back(k.input<bf16>(in_names[i], dims(st.dims[in.pick(3)], st.dims[in.pick(3)])));
  for (int i = 0; i < n_out; ++i) st.outs.push_back(k.output<bf16>(out_names[i], dims(st.dims[in.pick(3)], st.dims[in.pick(3)])));
  if (in.pick(3)) {
    st.walk = k.parallel(tiles(st.dims[in.pick(3)], in.from(sizes) + 1), tiles(st.dims[in.pick(3)], in.from(sizes) + 1));
    st.has_space = true;
  }
  constexpr swizzle swz[] = {swizzle::b128, swizzle::none, swizzle::b64, swizzle::b32};
  const char* smem_names[] = {"s0", "s1", "s2", "s3"};
  const int n_smem = in.pick(5);
  for (int i = 0; i < n_smem; ++i) st.smem.push_back(k.smem<bf16>(smem_names[i], {in.from(sizes), in.from(sizes)}, in.from(swz)));
  const char* pipe_names[] = {"p0", "p1"};
  const int n_pipes = st.smem.empty() ? 0 : in.pick(3);
  for (int i = 0; i < n_pipes; ++i) {
    auto b = k.pipeline(pipe_names[i], stages(in.pick(18)));
    st.pipes.push_back(in.pick(2) && st.smem.size() >= 2 ? b.carries(st.smem[static_cast<std::size_t>(in.pick(static_cast<int>(st.smem.size())))],
                                                                    st.smem[static_cast<std::size_t>(in.pick(static_cast<int>(st.smem.size())))])
                                                         : b.carries(st.smem[static_cast<std::size_t>(in.pick(static_cast<int>(st.smem.size())))]));
  }
  if (in.pick(2)) st.named.push_back(k.named_barrier("nb"));
  if (in.pick(2)) st.mbars.push_back(k.mbarrier("mb"));
  const char* role_names[] = {"r0", "r1", "r2"};
  const int n_roles = 1 + in.pick(3);
  for (int ri = 0; ri < n_roles; ++ri) {
    auto run = [&](role& r) {
      std::vector<slot> slots;
      std::vector<reg_tile<f32>> regs;
      if (st.has_space && in.pick(4))
        r.for_each(st.walk, [&](auto i, auto j) { body(r, in, st, 0, slots, regs, i, j); });
      else
        body(r, in, st, 0, slots, regs, index_expr(0), index_expr(0));
    };
    if (in.pick(2)) k.role(role_names[ri], warpgroups(1 + in.pick(3)), run);
    else k.role(role_names[ri], warps(1 + in.pick(5)), run);
  }
  const program p = k.build();
  if (!p.errors.empty()) {  // a builder error: a diagnostic
    ++built_with_errors;
    return 0;
  }
  const auto report = analyze(p);
  if (report.errors > 0) {  // an analyzer finding: a diagnostic
    ++analyzer_errors;
    return 0;
  }
  const auto lowered = lower::lower(p, {});
  ++(lowered.ok ? lowered_ok : lowering_refused);  // refused after a clean analysis: a late surprise (issue 9)
  if (lowered.ok) assemble(p, lowered);
  if (!lowered.ok && std::getenv("CAKE_FUZZ_SHOW")) std::fprintf(stderr, "lowering refused: %s\n", lowered.error.substr(0, 200).c_str());
  if (!lowered.ok && lowered.error.empty()) {
    std::fprintf(stderr, "fuzz: the lowering failed without saying why\n");
    std::abort();
  }
  return 0;
}

#ifndef CAKE_FUZZ_LIBFUZZER
// The driver without libFuzzer: seeded random inputs of 16..512 bytes.
int main(int argc, char** argv) {
  const long long iterations = argc > 1 ? std::atoll(argv[1]) : 1000;
  const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::random_device{}();
  if (const char* every = std::getenv("CAKE_FUZZ_NVRTC")) nvrtc_every = std::atoll(every);
  std::printf("cake_fuzz_builder: %lld inputs, seed %llu\n", iterations, seed);
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> buf;
  for (long long i = 0; i < iterations; ++i) {
    buf.resize(16 + rng() % 497);
    for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
    LLVMFuzzerTestOneInput(buf.data(), buf.size());
  }
  std::printf("cake_fuzz_builder: %lld inputs, no crash: %lld builder errors, %lld analyzer errors, %lld lowered, %lld refused by the lowering\n", iterations,
              built_with_errors, analyzer_errors, lowered_ok, lowering_refused);
  if (nvrtc_every > 0) std::printf("cake_fuzz_builder: NVRTC assembled %lld of the lowered programs (every %lld-th): %lld rejected\n", nvrtc_built, nvrtc_every, nvrtc_failed);
  return iterations > 0 && nvrtc_failed == 0 ? 0 : 1;
}
#endif
