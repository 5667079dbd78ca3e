// Runner of the verify corpus (see corpus.hpp): every rule fires at its annotated lines on its bad
// schedule and stays silent on the fixed twin; every rule that can fire has a case; the reference
// kernels analyze with zero errors.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "corpus.hpp"
#include "kernels/gemm/sm100_bf16.hpp"
#include "kernels/gemm/sm80_bf16.hpp"
#include "kernels/gemm/sm90_bf16.hpp"

namespace verify_corpus {

namespace {

struct annotations {
  std::vector<int> expect_lines;  // lines with `// EXPECT: <rule>` for the case's rule
  std::set<std::string> also;     // rules named in `// ALSO: <rule>` anywhere in the file
};

annotations read_annotations(const char* file, std::string_view rule) {
  annotations a;
  std::ifstream in(file);
  REQUIRE_MESSAGE(in.good(), "cannot read the case file " << std::string(file));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    for (std::string_view tag : {"// EXPECT: ", "// ALSO: "}) {
      const auto at = line.find(tag);
      if (at == std::string::npos) continue;
      std::istringstream ids(line.substr(at + tag.size()));
      std::string id;
      while (ids >> id) {
        if (tag == "// EXPECT: " && id == rule) a.expect_lines.push_back(n);
        if (tag == "// ALSO: ") a.also.insert(id);
      }
    }
  }
  return a;
}

}  // namespace

void check_case(const corpus_case& c) {
  INFO("rule " << c.rule << ", case registered at " << std::string(c.file) << ":" << c.line);
  REQUIRE(analysis::find_rule(c.rule) != analysis::rule_id::count_);
  const annotations a = read_annotations(c.file, c.rule);
  REQUIRE_MESSAGE(!a.expect_lines.empty(), "no `// EXPECT: " << c.rule << "` line in " << std::string(c.file));

  const program bad = c.bad();
  const analysis::report r = analyze(bad);
  const std::string text = analysis::to_text(r);
  INFO("bad twin:\n" << text);
  for (int line : a.expect_lines) {
    bool hit = false;
    for (const auto& d : r.diagnostics)
      hit = hit || (to_string(d.rule) == c.rule && d.loc.line == static_cast<unsigned>(line) && std::string_view{d.loc.file} == c.file);
    CHECK_MESSAGE(hit, c.rule << " does not fire at line " << line);
  }
  for (const auto& d : r.diagnostics) {
    if (d.sev() == analysis::severity::note) continue;
    const std::string id(to_string(d.rule));
    CHECK_MESSAGE((id == c.rule || a.also.count(id)), "unannounced " << id << " on the bad twin (add `// ALSO: " << id << "` if intended)");
  }

  const program good = c.good();
  const analysis::report g = analyze(good);
  INFO("good twin:\n" << analysis::to_text(g));
  CHECK(g.errors == 0);
  CHECK(g.warnings == 0);
  CHECK_FALSE(g.fired(analysis::find_rule(c.rule)));
}

}  // namespace verify_corpus

TEST_CASE("corpus: every rule that can fire has a case") {
  std::set<std::string_view> covered;
  for (const auto& c : verify_corpus::registry()) covered.insert(c.rule);
  for (const auto& r : cake::analysis::rule_table) {
    if (r.pass == cake::analysis::pass_id::type) continue;  // static_asserts: tests/compile_fail
    CHECK_MESSAGE(covered.count(r.id), "no corpus case for " << r.id);
  }
}

TEST_CASE("corpus: the reference kernels have no errors") {
  using namespace cake;
  for (const program& p : {kernels::gemm_bf16_sm80(), kernels::gemm_bf16_sm90(), kernels::gemm_bf16_sm100()}) {
    const auto r = analyze(p);
    INFO(analysis::to_text(r));
    CHECK(r.errors == 0);
    CHECK(r.protocol_runs == 2);
  }
  CHECK(analyze(verify_corpus::clean_sm90()).errors == 0);
}
