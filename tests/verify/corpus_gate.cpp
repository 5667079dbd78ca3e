// cake_corpus_gate: what `cake corpus-gate` compares against its baseline (docs/evolve.md, "cake corpus-gate").
// It analyzes
//   - the verify corpus (the same registry and case objects as the corpus runner, corpus.hpp): every case's
//     bad twin and its clean twin;
//   - the kernel corpus: the shipped schedules of kernels/* instantiated with the configurations their
//     entry points pick (the list below);
// and prints one tab-separated line per schedule:
//   verify  CASE    bad|good  EXPECTED-RULE|-  RULES
//   kernel  NAME    -         -                RULES
// RULES: the rule ids of its errors and warnings, sorted, comma-separated, or "-". The analyzer only: no
// lowering, no GPU. The comparison with the baseline, and the exit code, are `cake corpus-gate`'s.
#define DOCTEST_CONFIG_IMPLEMENT  // the corpus files register doctest cases; this tool never runs them
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "corpus.hpp"
#include "kernels/attention/attention.hpp"
#include "kernels/attention/prefill_sm80.hpp"
#include "kernels/gemm/sm100_bf16.hpp"
#include "kernels/gemm/sm80_bf16.hpp"
#include "kernels/gemm/sm90_bf16.hpp"
#include "kernels/gemm/sm90_splitk.hpp"
#include "kernels/kmeans/kmeans.hpp"
#include "kernels/knn/ivf.hpp"
#include "kernels/knn/knn.hpp"
#include "kernels/norm/norm.hpp"

namespace {

std::string rules_of(const cake::program& p) {
  const auto r = cake::analyze(p);
  std::set<std::string> ids;
  for (const auto& d : r.diagnostics)
    if (d.sev() == cake::analysis::severity::error || d.sev() == cake::analysis::severity::warning) ids.insert(std::string(d.about().id));
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : ",") + id;
  return s.empty() ? "-" : s;
}

void line(const char* corpus, const std::string& name, const char* twin, const std::string& expect, const std::string& rules) {
  std::printf("%s\t%s\t%s\t%s\t%s\n", corpus, name.c_str(), twin, expect.c_str(), rules.c_str());
}

// The kernel corpus: each shipped schedule with the configurations its entry point picks (or the
// reference configuration where the entry point takes it as is). Names are stable: the baseline keys.
std::vector<std::pair<std::string, std::function<cake::program()>>> kernel_corpus() {
  using namespace cake;
  std::vector<std::pair<std::string, std::function<program()>>> k;
  k.push_back({"gemm_bf16_sm80", [] { return kernels::gemm_bf16_sm80(); }});
  k.push_back({"gemm_bf16_sm100", [] { return kernels::gemm_bf16_sm100(); }});
  k.push_back({"gemm_bf16_sm90", [] { return kernels::gemm_bf16_sm90(); }});
  k.push_back({"gemm_e4m3_sm90", [] { return kernels::gemm_sm90<e4m3>(); }});
  // The sm_90a GEMM's schedule knobs one at a time (the variants cake::gemm and cake evolve pick from).
  for (int bn : {64, 128, 192, 256})
    k.push_back({"gemm_bf16_sm90/bn=" + std::to_string(bn), [bn] {
                   kernels::gemm_sm90_config c;
                   c.bn = bn;
                   return kernels::gemm_bf16_sm90(c);
                 }});
  k.push_back({"gemm_bf16_sm90/pingpong,bn=128", [] {  // at bn = 256 each warpgroup's whole-tile accumulator does not fit
                 kernels::gemm_sm90_config c;
                 c.pingpong = true, c.bn = 128;
                 return kernels::gemm_bf16_sm90(c);
               }});
  k.push_back({"gemm_bf16_sm90/in_flight=1", [] {
                 kernels::gemm_sm90_config c;
                 c.in_flight = 1;
                 return kernels::gemm_bf16_sm90(c);
               }});
  k.push_back({"gemm_bf16_sm90/cluster_m=1", [] {
                 kernels::gemm_sm90_config c;
                 c.cluster_m = 1;
                 return kernels::gemm_bf16_sm90(c);
               }});
  k.push_back({"gemm_bf16_sm90/naive", [] {  // the evolve seed of docs/evolve.md
                 kernels::gemm_sm90_config c;
                 c.stages = 1, c.cluster_m = 1, c.persistent = false, c.direct_store = true;
                 return kernels::gemm_bf16_sm90(c);
               }});
  k.push_back({"gemm_splitk_sm90", [] { return kernels::gemm_splitk_sm90(); }});
  k.push_back({"gemm_splitk_sm90/global_sum", [] {  // partial sums through global memory (count_arrival)
                 kernels::gemm_splitk_config c;
                 c.global_sum = true, c.bm = 128, c.bn = 192, c.splits = 3, c.stages = 5;
                 return kernels::gemm_splitk_sm90(c);
               }});
  for (int w : {512, 1024, 4096, 16384}) {
    k.push_back({"softmax/cols=" + std::to_string(w), [w] { return kernels::softmax_program(kernels::softmax_config_for(w)); }});
    k.push_back({"rmsnorm/cols=" + std::to_string(w), [w] { return kernels::rmsnorm_program(kernels::rmsnorm_config_for(w)); }});
  }
  for (long long D : {64, 128})
    for (bool causal : {false, true}) {
      attention::prefill_shape s;
      s.S = s.T = 4096, s.H = 32, s.HK = 8, s.D = D, s.causal = causal;
      k.push_back({"attention_prefill/D=" + std::to_string(D) + (causal ? ",causal" : ""), [s] { return kernels::attention_prefill_sm90(attention::prefill_config_for(s)); }});
      k.push_back({"attention_prefill_sm80/D=" + std::to_string(D) + (causal ? ",causal" : ""), [D, causal] {
                     kernels::attention_prefill_sm80_config c;
                     c.parts = static_cast<int>(D / 64), c.causal = causal, c.group = 4;
                     return kernels::attention_prefill_sm80(c);
                   }});
    }
  for (int kk : {1, 10, 100})
    for (long long D : {64, 128})
      for (const auto m : {knn::metric::l2, knn::metric::inner_product}) {
        const std::string n = "k=" + std::to_string(kk) + ",D=" + std::to_string(D) + (m == knn::metric::l2 ? ",l2" : ",ip");
        k.push_back({"knn_search/" + n, [=] { return kernels::knn_search_sm90<bf16>(knn::search_config_for(4096, 1 << 20, D, kk, m)); }});
        if (D == 64) k.push_back({"knn_merge/" + n.substr(0, n.find(',')) + n.substr(n.rfind(',')), [=] { return kernels::knn_merge_program(knn::merge_config_for(kk, m)); }});
      }
  for (long long D : {64, 128})
    for (long long page : {16, 64}) {
      attention::decode_shape s;
      s.B = 8, s.H = 32, s.HK = 8, s.D = D, s.page_size = page, s.max_pages = 8192 / page;
      const std::string n = "D=" + std::to_string(D) + ",page=" + std::to_string(page);
      k.push_back({"attention_decode/" + n, [s] { return kernels::attention_decode_sm90(attention::decode_config_for(s)); }});
      if (page == 16) k.push_back({"attention_decode_combine/D=" + std::to_string(D), [s] { return kernels::attention_decode_combine_sm90(attention::decode_combine_config_for(s)); }});
    }
  for (int nprobe : {4, 64})
    for (const auto mode : {knn::ivf_scan_mode::by_list, knn::ivf_scan_mode::per_query})
      k.push_back({"ivf_scan/nprobe=" + std::to_string(nprobe) + (mode == knn::ivf_scan_mode::by_list ? ",by_list" : ",per_query"),
                   [=] { return kernels::ivf_scan_sm90<bf16>(knn::ivf_scan_config_for(10000, 128, 10, nprobe, knn::metric::l2, 1024, mode)); }});
  k.push_back({"ivf_marks", [] { return kernels::ivf_marks_program(); }});
  k.push_back({"ivf_query_order", [] { return kernels::ivf_query_order_program(); }});
  k.push_back({"ivf_gather/rows,D=128", [] { return kernels::ivf_gather_program<bf16>(kernels::ivf_gather_width<bf16>(128)); }});
  k.push_back({"ivf_gather/ids", [] { return kernels::ivf_gather_program<i32>(kernels::ivf_gather_width<i32>(1), -1.0f); }});
  for (long long D : {64, 128, 512})
    for (const auto m : {kmeans::metric::l2, kmeans::metric::inner_product, kmeans::metric::cosine})
      k.push_back({"kmeans_assign/D=" + std::to_string(D) + "," + kernels::to_string(m), [=] { return kernels::kmeans_assign_sm90<bf16>(kmeans::assign_config_for(D, 1024, m)); }});
  // kmeans::step's fused kernel (the scatter in the assignment, for D > 64)
  for (long long D : {128, 512})
    for (const auto m : {kmeans::metric::l2, kmeans::metric::inner_product, kmeans::metric::cosine})
      k.push_back({"kmeans_step/D=" + std::to_string(D) + "," + kernels::to_string(m), [=] {
                     auto c = kmeans::assign_config_for(D, 1024, m);
                     c.scatter = kmeans::fuse_scatter(D);
                     return kernels::kmeans_assign_sm90<bf16>(c);
                   }});
  // the update: the scatter, the finalize, and the sorted update's kernels (count, offsets, place, segment sums)
  k.push_back({"kmeans_scatter/D=128", [] { return kernels::kmeans_scatter_program<bf16>(2); }});
  k.push_back({"kmeans_finalize/D=128", [] { return kernels::kmeans_finalize_program<bf16>(2); }});
  k.push_back({"kmeans_count", [] { return kernels::kmeans_count_program(); }});
  k.push_back({"kmeans_offsets", [] { return kernels::kmeans_offsets_program(); }});
  for (int parts : {1, 2, 8}) {
    k.push_back({"kmeans_place/parts=" + std::to_string(parts), [=] { return kernels::kmeans_place_program<bf16>(parts); }});
    k.push_back({"kmeans_segment_sum/parts=" + std::to_string(parts), [=] { return kernels::kmeans_segment_sum_program<bf16>(parts); }});
  }
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  bool verify = true, kernel = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--verify-only")) kernel = false;
    else if (!std::strcmp(argv[i], "--kernels-only")) verify = false;
    else {
      std::fprintf(stderr, "usage: cake_corpus_gate [--verify-only | --kernels-only]\n");
      return 2;
    }
  }
  if (verify) {
    auto cases = verify_corpus::registry();
    std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const auto& c : cases) {
      const std::string name(c.name);
      line("verify", name, "bad", std::string(c.rule), rules_of(c.bad()));
      line("verify", name, "good", "-", rules_of(c.good()));
    }
  }
  if (kernel)
    for (const auto& [name, make] : kernel_corpus()) line("kernel", name, "-", "-", rules_of(make()));
  return 0;
}
