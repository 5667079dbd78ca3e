// The rule list (analysis/rules.hpp) is the one place rule ids live: ids are well formed and unique,
// and every rule id the builder reports (fail<"..."> and "[rule.id]" static_asserts in include/cake/ir)
// is in it, so a builder finding always maps to a documented rule.
#include <doctest/doctest.h>

#include <cake/analysis/rules.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace cake::analysis;

TEST_CASE("analysis rules: ids are category.name, unique, with their category's prefix and a doc") {
  std::set<std::string_view> seen;
  for (const auto& r : rule_table) {
    INFO(r.id);
    CHECK(seen.insert(r.id).second);
    const auto dot = r.id.find('.');
    REQUIRE(dot != std::string_view::npos);
    CHECK(r.id.substr(0, dot) == to_string(r.cat));
    CHECK(r.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") == std::string_view::npos);
    CHECK(!r.doc.empty());
    CHECK(find_rule(r.id) == r.rule);
    CHECK(info(r.rule).id == r.id);
  }
  CHECK(find_rule("sync.no-such-rule") == rule_id::count_);
  CHECK(rule_count >= 30);
}

TEST_CASE("analysis rules: at least 30 rules are checked by the analyzer itself, in all six categories") {
  int analyzer = 0;
  std::set<category> cats;
  for (const auto& r : rule_table)
    if (r.pass != pass_id::builder && r.pass != pass_id::type && r.pass != pass_id::structure && r.cat != category::ir) {
      ++analyzer;
      cats.insert(r.cat);
    }
  CHECK(analyzer >= 30);
  CHECK(cats.size() == 6);
}

TEST_CASE("analysis rules: every rule id the builder reports is in the rule list") {
  const std::filesystem::path ir = std::filesystem::path(CAKE_SOURCE_DIR) / "include" / "cake" / "ir";
  const std::regex fail_id(R"re(fail<"([a-z0-9.-]+)")re");
  const std::regex assert_id(R"re("\[([a-z]+\.[a-z0-9.-]+)\])re");
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ir)) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (const auto* re : {&fail_id, &assert_id})
      for (std::sregex_iterator it(s.begin(), s.end(), *re), end; it != end; ++it) {
        const std::string id = (*it)[1];
        INFO(entry.path().filename().string() << ": " << id);
        CHECK(find_rule(id) != rule_id::count_);
        ++found;
      }
  }
  CHECK(found > 40);  // the scan itself works
}

TEST_CASE("analysis rules: type-level rules are exactly the builder's static_assert ids") {
  const std::filesystem::path ir = std::filesystem::path(CAKE_SOURCE_DIR) / "include" / "cake" / "ir";
  const std::regex assert_id(R"re("\[([a-z]+\.[a-z0-9.-]+)\])re");
  std::set<std::string> asserted;
  for (const auto& entry : std::filesystem::directory_iterator(ir)) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (std::sregex_iterator it(s.begin(), s.end(), assert_id), end; it != end; ++it) asserted.insert((*it)[1]);
  }
  for (const auto& r : rule_table)
    if (r.pass == pass_id::type) {
      INFO(r.id);
      CHECK(asserted.count(std::string(r.id)));
    }
}
