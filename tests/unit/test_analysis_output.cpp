// The analyzer's outputs: GCC-style text that editors parse, and JSON (schema cake.diagnostics/1) that
// is valid JSON and carries the fields docs/diagnostics.md documents.
#include <doctest/doctest.h>

#include <cake/cake.hpp>
#include <cctype>
#include <regex>
#include <sstream>
#include <string>

using namespace cake;

namespace {

// A producer that expects half the bytes its TMA load delivers; the consumer hangs.
constexpr program short_expect(int bytes = 8192) {
  auto k = kernel("short_expect").target(sm_90a);
  auto A = k.input<bf16>("A", dims("M", "K"));
  auto sA = k.smem<bf16>("sA", {128, 64}, swizzle::b128);
  auto full = k.mbarrier("full");
  k.role("producer", warps(1), [&](role& r) {
    r.arrive_expect_tx(full, bytes);
    r.tma_load(sA, A.tile(0, 0), full);
  });
  k.role("consumer", warps(1), [&](role& r) { r.wait(full); });
  return k.build();
}

// A minimal JSON syntax check (objects, arrays, strings with escapes, numbers, true/false/null).
struct json_checker {
  const std::string& s;
  std::size_t i = 0;
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool lit(const char* t) {
    const std::string_view v(t);
    if (s.compare(i, v.size(), v) != 0) return false;
    i += v.size();
    return true;
  }
  bool str() {
    if (s[i] != '"') return false;
    for (++i; i < s.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == '"') return ++i, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        ++i;
        if (i >= s.size() || std::string_view("\"\\/bfnrtu").find(s[i]) == std::string_view::npos) return false;
      }
    }
    return false;
  }
  bool num() {
    const std::size_t b = i;
    if (s[i] == '-') ++i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' || s[i] == '+' || s[i] == '-')) ++i;
    return i > b;
  }
  bool value() {
    ws();
    if (i >= s.size()) return false;
    bool ok;
    if (s[i] == '{') {
      ++i, ws();
      ok = true;
      if (s[i] == '}') ++i;
      else
        for (;;) {
          ws();
          if (!str()) return false;
          ws();
          if (s[i++] != ':' || !value()) return false;
          ws();
          if (s[i] == ',') { ++i; continue; }
          if (s[i] == '}') { ++i; break; }
          return false;
        }
    } else if (s[i] == '[') {
      ++i, ws();
      ok = true;
      if (s[i] == ']') ++i;
      else
        for (;;) {
          if (!value()) return false;
          ws();
          if (s[i] == ',') { ++i; continue; }
          if (s[i] == ']') { ++i; break; }
          return false;
        }
    } else if (s[i] == '"') ok = str();
    else if (s[i] == 't') ok = lit("true");
    else if (s[i] == 'f') ok = lit("false");
    else if (s[i] == 'n') ok = lit("null");
    else ok = num();
    ws();
    return ok;
  }
  bool document() { return value() && i == s.size(); }
};

}  // namespace

TEST_CASE("analysis output: GCC-style text points at the builder call, then path, notes and help") {
  const auto r = analyze(short_expect());
  REQUIRE(r.errors == 1);
  const std::string text = analysis::to_text(r);
  INFO(text);
  std::istringstream lines(text);
  std::string first, at;
  std::getline(lines, first);
  std::getline(lines, at);
  // file:line:col: error: [rule.id] message
  const std::regex head(R"(^(.+):([0-9]+):([0-9]+): error: \[sync\.expect-tx-mismatch\] (.+)$)");
  std::smatch m;
  REQUIRE(std::regex_match(first, m, head));
  CHECK(m[1] == std::string(__FILE__));
  CHECK(std::stoi(m[2]) == 22);  // the arrive_expect_tx line of short_expect()
  CHECK(m[4].str().find("expects 8192 bytes") != std::string::npos);
  CHECK(m[4].str().find("deliver 16384") != std::string::npos);
  CHECK(at == "  at short_expect \u203a role producer \u203a op#0 mbarrier_arrive_expect_tx(full)");
  CHECK(text.find(std::string(__FILE__) + ":23:") != std::string::npos);  // note: the TMA load
  CHECK(text.find("  help: ") != std::string::npos);
  CHECK(text.find("short_expect (sm_90a): 1 error(s), 0 warning(s)") != std::string::npos);
}

TEST_CASE("analysis output: text options drop coverage and summary") {
  const auto r = analyze(short_expect(16384));
  CHECK(r.ok());
  const std::string quiet = analysis::to_text(r, {false, false});
  CHECK(quiet.empty());
  CHECK(analysis::to_text(r).find("error(s)") != std::string::npos);
}

TEST_CASE("analysis output: JSON is valid and follows cake.diagnostics/1") {
  const auto r = analyze(short_expect());
  const std::string json = analysis::to_json(r);
  INFO(json);
  json_checker check{json};
  CHECK(check.document());
  CHECK(json.rfind("{\"schema\":\"cake.diagnostics/1\",\"kernel\":\"short_expect\",\"target\":\"sm_90a\",\"ok\":false,", 0) == 0);
  for (const char* key : {"\"summary\":{", "\"errors\":1", "\"rules\":{\"passed\":", "\"protocol\":{\"runs\":", "\"diagnostics\":[{",
                          "\"rule\":\"sync.expect-tx-mismatch\"", "\"category\":\"sync\"", "\"severity\":\"error\"", "\"op\":0",
                          "\"numbers\":{\"expected_bytes\":8192,\"delivered_bytes\":16384}", "\"notes\":[{\"message\":", "\"coverage\":[",
                          "\"sync.expect-tx-mismatch\":\"failed\"", "\"sync.deadlock\":\"passed\"", "\"memory.operand-space\":\"not_run\""})
    CHECK_MESSAGE(json.find(key) != std::string::npos, key);
  // The path's separator is UTF-8 in the JSON string; quotes in messages are escaped.
  CHECK(json.find("short_expect \u203a role producer") != std::string::npos);
  CHECK(json.find("\"'full' expects") != std::string::npos);
}

TEST_CASE("analysis output: JSON escapes what it must") {
  analysis::report r;
  r.kernel = name("k\"q");
  r.target = "sm_90a";
  analysis::diagnostic d;
  d.rule = analysis::rule_id::sync_deadlock;
  d.message << "tab\there \"quoted\" back\\slash\nnewline";
  r.diagnostics.push_back(d);
  const std::string json = analysis::to_json(r);
  json_checker check{json};
  CHECK(check.document());
  CHECK(json.find("\"k\\\"q\"") != std::string::npos);
  CHECK(json.find("tab\\there \\\"quoted\\\" back\\\\slash\\nnewline") != std::string::npos);
  CHECK(json.find("\"location\":null") != std::string::npos);
  CHECK(json.find("\"op\":null") != std::string::npos);
}

TEST_CASE("analysis output: fixed_text cuts long text visibly and formats numbers") {
  analysis::fixed_text<16> t;
  t << "n=" << -9223372036854775807LL - 1;
  CHECK(t.cut);
  CHECK(t.view().size() == 15);
  CHECK(t.view().substr(12) == "...");
  analysis::fixed_text<32> u;
  u << 0 << ' ' << -42 << ' ' << 123456789u;
  CHECK(u.view() == "0 -42 123456789");
  CHECK_FALSE(u.cut);
}
