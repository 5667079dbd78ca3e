// Fuzz target (issue 10): bytes become a Program built through the public builder (tests/fuzz/fuzz_generator.hpp
// draws every op kind of the op table: declarations, pipelines, TMA, MMAs on all three targets, register
// compute and reductions, global and shared memory, atomics and scatters, index values and counters,
// barriers of every kind, tensor memory, cluster sums, control; valid and invalid shapes, counts and
// placements alike), then the analyzer and the lowering run on it. The property: no crash, and the
// outcome is always a diagnostic (builder error or analyzer finding) or lowered source.
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
// prints each failure's diagnostics and program and writes its source to fuzz-nvrtc-fail-<i>.cu). CAKE_FUZZ_STATS=1
// prints, per op kind, how many lowered programs hold it (what the campaign reached past the analyzer).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <cake/analysis.hpp>
#include <cake/cake.hpp>
#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>

#include "fuzz_scaffolds.hpp"

using namespace cake;

namespace {

// How far inputs got (reported by the random driver: a fuzz run that never reaches the lowering tests little).
long long built_with_errors = 0, analyzer_errors = 0, lowered_ok = 0, lowering_refused = 0;
long long nvrtc_every = 0, nvrtc_built = 0, nvrtc_failed = 0;  // CAKE_FUZZ_NVRTC
long long lowered_with[op_kind_count] = {}, lowered_on[3] = {};  // lowered programs holding each op kind; per target

std::map<std::string, long long> first_builder_rule, first_analyzer_rule;  // CAKE_FUZZ_STATS: where inputs stop

void count_kinds(const program& p) {
  bool seen[op_kind_count] = {};
  for (const auto& o : p.ops) seen[static_cast<int>(o.kind)] = true;
  for (int i = 0; i < op_kind_count; ++i) lowered_with[i] += seen[i] ? 1 : 0;
  ++lowered_on[p.target == target_id::sm_80 ? 0 : p.target == target_id::sm_90a ? 1 : 2];
}

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
    std::fprintf(stderr, "NVRTC rejected a lowered program (%s, source in %s): %s\nthe program:\n%s\n", std::string(to_string(p.target)).c_str(), file.c_str(),
                 art.diagnostics().substr(0, 600).c_str(), to_text(p, {.locations = true}).c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cake_fuzz::input in{data, size};
  const program p = cake_fuzz::generate(in);
  if (!p.errors.empty()) {  // a builder error: a diagnostic
    ++built_with_errors;
    ++first_builder_rule[std::string(p.errors[0].rule)];
    return 0;
  }
  const auto report = analyze(p);
  if (report.errors > 0) {  // an analyzer finding: a diagnostic
    ++analyzer_errors;
    if (const auto* d = report.first_error()) {
      ++first_analyzer_rule[std::string(analysis::to_string(d->rule))];
      if (std::getenv("CAKE_FUZZ_WHY") && analysis::to_string(d->rule) == std::getenv("CAKE_FUZZ_WHY")) std::fprintf(stderr, "%s\n", std::string(d->message.view()).c_str());
    }
    return 0;
  }
  const auto lowered = lower::lower(p, {});
  ++(lowered.ok ? lowered_ok : lowering_refused);  // refused after a clean analysis: a late surprise (issue 9)
  if (lowered.ok) {
    count_kinds(p);
    assemble(p, lowered);
  }
  if (!lowered.ok && std::getenv("CAKE_FUZZ_SHOW"))
    std::fprintf(stderr, "lowering refused: %s\nthe program:\n%s\n", lowered.error.substr(0, 200).c_str(), to_text(p, {.locations = true}).c_str());
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
  if (std::getenv("CAKE_FUZZ_STATS")) {
    std::printf("cake_fuzz_builder: lowered per target: sm_80 %lld, sm_90a %lld, sm_100a %lld\n", lowered_on[0], lowered_on[1], lowered_on[2]);
    std::printf("cake_fuzz_builder: lowered programs holding each op kind:");
    for (int i = 0; i < op_kind_count; ++i) std::printf("%s %s %lld", i % 6 ? "," : "\n ", std::string(to_string(static_cast<op_kind>(i))).c_str(), lowered_with[i]);
    std::printf("\n");
    for (const auto* m : {&first_builder_rule, &first_analyzer_rule}) {
      std::printf("cake_fuzz_builder: first %s error:", m == &first_builder_rule ? "builder" : "analyzer");
      for (const auto& [rule, n] : *m) std::printf(" %s %lld,", rule.c_str(), n);
      std::printf("\n");
    }
  }
  if (nvrtc_every > 0) std::printf("cake_fuzz_builder: NVRTC assembled %lld of the lowered programs (every %lld-th): %lld rejected\n", nvrtc_built, nvrtc_every, nvrtc_failed);
  return iterations > 0 && nvrtc_failed == 0 ? 0 : 1;
}
#endif
