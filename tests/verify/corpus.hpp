#pragma once
// The verify corpus: for every rule a schedule that breaks it (`bad`) and its fixed twin (`good`).
//
// A case file (cases/<category>_*.hpp) defines, in its own namespace, `constexpr cake::program bad()` and
// `constexpr cake::program good()` and registers them with CAKE_VERIFY_CASE(namespace, "rule.id"). The
// line where the rule must point carries the comment `// EXPECT: rule.id`. Other errors or warnings
// the bad twin is allowed to produce are listed in `// ALSO: rule.id` comments of the same file.
// The runner (corpus_main.cpp) checks that each rule fires at each of its EXPECT lines on `bad`, that
// `bad` produces nothing else unannounced, and that `good` has no error and no warning.
//
// Cases are constexpr functions run at run time, so that builder findings are recorded in the Program
// rather than stopping compilation; tests/verify/gate runs some of them at compile time.
//
// The helpers below build the parts most cases share; they never hold the line a case points at.
#include <cake/analysis.hpp>
#include <cake/cake.hpp>
#include <string_view>
#include <vector>

namespace verify_corpus {

using namespace cake;

struct corpus_case {
  std::string_view rule;
  const char* file;
  int line;
  program (*bad)();
  program (*good)();
  std::string_view name;  // the case's namespace (tests/verify/sanitize_corpus.cpp selects cases by it)
};

inline std::vector<corpus_case>& registry() {
  static std::vector<corpus_case> cases;
  return cases;
}

void check_case(const corpus_case& c);  // corpus_main.cpp

struct registrar {
  registrar(corpus_case c) { registry().push_back(c); }
};

// ---- shared parts of the sm_90a schedules ---------------------------------------------------------

// D[M,N] = A[M,K] * B[N,K]^T, bf16, 128 x 128 output tiles over the parallel space (tiles(M, bm),
// tiles(N, bn)) and a K loop in blocks of 64 (small enough for any number of stages).
struct gemm_parts {
  dim_ref M, N, K;
  tensor<bf16> A, B, D;
  space<2> mn;
  int bm = 128, bn = 128, bk = 64;
};
constexpr gemm_parts gemm_tensors(kernel_builder& k, int bm = 128, int bn = 128, int bk = 64) {
  gemm_parts g;
  const auto d = k.dims("M", "N", "K");
  g.M = d[0], g.N = d[1], g.K = d[2];
  g.A = k.input<bf16>("A", dims(g.M, g.K));
  g.B = k.input<bf16>("B", dims(g.N, g.K));
  g.D = k.output<bf16>("D", dims(g.M, g.N));
  g.mn = k.parallel(tiles(g.M, bm), tiles(g.N, bn));
  g.bm = bm, g.bn = bn, g.bk = bk;
  return g;
}

// The TMA producer of the reference sm_90a schedule: one warpgroup loading A and B into pipeline slots.
constexpr void tma_producer(kernel_builder& k, const gemm_parts& g, smem_tile<bf16> sA, smem_tile<bf16> sB, pipeline_ref ab,
                            bool multicast_b = false) {
  k.role("producer", warpgroups(1), [&](role& r) {
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], g.A.tile(m, kt));
        auto ld = r.tma_load(s[sB], g.B.tile(n, kt));
        if (multicast_b) ld.multicast();
      });
    });
  });
}

// A clean wgmma consumer: two warpgroups, each on half the rows of sA; the accumulator goes to global.
constexpr void wgmma_consumer(kernel_builder& k, const gemm_parts& g, smem_tile<bf16> sA, smem_tile<bf16> sB, pipeline_ref ab) {
  k.role("consumer", warpgroups(2), [&](role& r) {
    auto acc = r.accumulator<f32>("acc", {g.bm / 2, g.bn});
    r.for_each(g.mn, [&](auto m, auto n) {
      r.loop(tiles(g.K, g.bk), [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      auto out = r.convert<bf16>(acc);
      r.store(g.D.tile(m * 2 + r.warpgroup(), n), out);
    });
  });
}

// ---- shared parts of the sm_100a schedules (the reference structure: epilogue warpgroup first, so that
// its warps reach their TMEM lanes; a TMA warp; an MMA warp; TMEM accumulator handed over by a pipeline)

struct sm100_parts {
  gemm_parts g;
  smem_tile<bf16> sA, sB;
  tmem_tile acc;
  pipeline_ref ab, accp;
  int chunks = 4;
};
constexpr sm100_parts sm100_declare(kernel_builder& k, int bn = 128) {
  sm100_parts s;
  s.g = gemm_tensors(k, 128, bn, 64);
  s.sA = k.smem<bf16>("sA", {s.g.bm, s.g.bk}, swizzle::b128);
  s.sB = k.smem<bf16>("sB", {s.g.bn, s.g.bk}, swizzle::b128);
  s.acc = k.tmem("acc", columns(s.g.bn));
  s.ab = k.pipeline("ab", stages(2)).carries(s.sA, s.sB);
  s.accp = k.pipeline("accp", stages(1)).carries(s.acc);
  s.chunks = s.g.bn / 32;
  return s;
}
constexpr void sm100_epilogue(kernel_builder& k, const sm100_parts& s) {
  k.role("epilogue", warpgroups(1), [&](role& r) {
    auto frag = r.fragment<f32>("frag", {s.g.bm, 32});
    r.for_each(s.g.mn, [&](auto m, auto n) {
      auto a = r.wait(s.accp);
      r.tcgen05_fence_after();
      r.for_range(s.chunks, [&](auto ch) {
        r.tmem_load(frag, a[s.acc].cols(ch, s.chunks));
        auto out = r.convert<bf16>(frag);
        r.store(s.g.D.tile(m, n * s.chunks + ch), out);
      });
      r.tcgen05_fence_before();
      r.release(s.accp, a);
    });
  });
}
constexpr void sm100_producer(kernel_builder& k, const sm100_parts& s) {
  k.role("producer", warps(1), [&](role& r) {
    r.for_each(s.g.mn, [&](auto m, auto n) {
      r.loop(tiles(s.g.K, s.g.bk), [&](auto kt) {
        auto slot = r.acquire(s.ab);
        r.tma_load(slot[s.sA], s.g.A.tile(m, kt));
        r.tma_load(slot[s.sB], s.g.B.tile(n, kt));
      });
    });
  });
}
constexpr void sm100_mma(kernel_builder& k, const sm100_parts& s) {
  k.role("mma", warps(1), [&](role& r) {
    r.tmem_alloc(s.acc);
    r.for_each(s.g.mn, [&](auto, auto) {
      auto a = r.acquire(s.accp);
      r.tcgen05_fence_after();
      r.loop(tiles(s.g.K, s.g.bk), [&](auto kt) {
        auto slot = r.wait(s.ab);
        r.tcgen05_fence_after();
        r.tcgen05_mma(a[s.acc], slot[s.sA], slot[s.sB]).overwrite_on_first(kt);
        r.release(s.ab, slot);
      });
      r.commit(s.accp, a);
    });
    r.acquire(s.accp);
    r.tmem_dealloc(s.acc);
  });
}
constexpr program clean_sm100() {
  auto k = kernel("clean_sm100").target(sm_100a).persistent();
  auto s = sm100_declare(k);
  sm100_epilogue(k, s);
  sm100_producer(k, s);
  sm100_mma(k, s);
  return k.build();
}

// An sm_90a GEMM (one CTA per tile, or persistent) whose consumer is written by the case: `consumer(k, g, sA, sB, ab)`.
template <class Consumer>
constexpr program sm90_with(Consumer consumer, int bk = 64, swizzle swz = swizzle::b128, bool persistent = false) {
  auto k = kernel("sm90").target(sm_90a);
  if (persistent) k.persistent();
  auto g = gemm_tensors(k, 128, 128, bk);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swz);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swz);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  tma_producer(k, g, sA, sB, ab);
  consumer(k, g, sA, sB, ab);
  return k.build();
}
// The whole clean sm_90a schedule built from the two roles above.
constexpr program clean_sm90() {
  auto k = kernel("clean_sm90").target(sm_90a).persistent();
  auto g = gemm_tensors(k);
  auto sA = k.smem<bf16>("sA", {g.bm, g.bk}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {g.bn, g.bk}, swizzle::b128);
  auto ab = k.pipeline("ab", stages(3)).carries(sA, sB);
  tma_producer(k, g, sA, sB, ab);
  wgmma_consumer(k, g, sA, sB, ab);
  return k.build();
}

}  // namespace verify_corpus

#define CAKE_VERIFY_CAT2(a, b) a##b
#define CAKE_VERIFY_CAT(a, b) CAKE_VERIFY_CAT2(a, b)
// Registers the case in namespace verify_corpus::NS for rule RULE (one doctest case per corpus case).
// Gate files (tests/verify/gate) include cases without doctest: they define CAKE_VERIFY_GATE first.
#ifdef CAKE_VERIFY_GATE
#define CAKE_VERIFY_CASE(NS, RULE)
#else
#define CAKE_VERIFY_CASE(NS, RULE)                                                                               \
  namespace verify_corpus {                                                                                      \
  inline const registrar CAKE_VERIFY_CAT(NS, _registrar){{RULE, __FILE__, __LINE__, &NS::bad, &NS::good, #NS}};   \
  }                                                                                                              \
  TEST_CASE("corpus " RULE " (" #NS ")") {                                                                       \
    for (const auto& c : ::verify_corpus::registry())                                                             \
      if (c.bad == &::verify_corpus::NS::bad) ::verify_corpus::check_case(c);                                    \
  }
#endif
