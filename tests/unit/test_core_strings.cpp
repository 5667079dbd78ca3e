// Unit tests for cake/core/fixed_string.hpp and source_location.hpp: structural strings for compile-time
// errors, bounded names stored in a Program (never silently cut), and caller locations.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "cake/core/fixed_string.hpp"
#include "cake/core/source_location.hpp"

using namespace cake;

namespace {
template <fixed_string S>
constexpr std::string_view text_of() {
  return S.view();
}
constexpr src_loc where(src_loc at = src_loc::current()) { return at; }
constexpr located_name located(located_name n) { return n; }
}  // namespace

TEST_CASE("fixed_string: a template argument whose text the compiler can print") {
  CHECK(text_of<"resource.smem-overflow">() == "resource.smem-overflow");
  constexpr fixed_string s("abc");
  static_assert(s.view().size() == 3);
  CHECK(s.view() == "abc");
  CHECK(s.text[3] == '\0');
  CHECK(text_of<"">().empty());
}

TEST_CASE("name: holds up to its capacity of 31 characters") {
  CHECK(name::capacity == 31);
  const std::string exact(31, 'x');
  name n;
  CHECK(n.empty());
  CHECK(n.assign(exact));
  CHECK(n.view() == exact);
  CHECK(n.length == 31);
  CHECK(n.c_str()[31] == '\0');
  CHECK(name::fits(exact));
  CHECK_FALSE(name::fits(exact + "y"));
}

TEST_CASE("name: a longer text is reported (assign returns false), not silently accepted") {
  const std::string long_text(40, 'a');
  name n;
  CHECK_FALSE(n.assign(long_text));
  // What is kept is the prefix that fits; callers turn the false into ir.name-too-long.
  CHECK(n.view() == std::string(31, 'a'));
  // A later successful assign clears the old text completely.
  CHECK(n.assign("sA"));
  CHECK(n.view() == "sA");
  CHECK(n.c_str()[2] == '\0');
  CHECK(n.c_str()[30] == '\0');
}

TEST_CASE("name: comparison with names and strings") {
  const name a("sA"), b(std::string_view("sA")), c("sB");
  CHECK(a == b);
  CHECK_FALSE(a == c);
  CHECK(a == std::string_view("sA"));
  CHECK_FALSE(a == std::string_view("sA "));
  constexpr name cn("acc");
  static_assert(cn.view() == "acc");
}

TEST_CASE("src_loc: as a default argument it records the caller's line") {
  const src_loc here = where(); const unsigned line = __LINE__;
  CHECK(here.line == line);
  CHECK(here.known());
  CHECK(std::string_view(here.file).find("test_core_strings.cpp") != std::string_view::npos);
  CHECK_FALSE(src_loc{}.known());
}

TEST_CASE("located_name: a name argument that also records where it was written") {
  const located_name n = located("sA"); const unsigned line = __LINE__;
  CHECK(n.text == "sA");
  CHECK(n.loc.line == line);
  const located_name m = located(std::string_view("acc")); const unsigned line2 = __LINE__;
  CHECK(m.text == "acc");
  CHECK(m.loc.line == line2);
}

TEST_CASE("name_builder: a name up to the capacity is kept whole, a longer one ends in a hash of the whole name") {
  constexpr auto make = [](std::string_view tail) {
    name_builder b;
    b.put("attn_fwd_d");
    b.put(128);
    b.put("_g1_n128_free_p_q2_ot");
    b.put(tail);
    return b;
  };
  name_builder short_one;
  short_one.put("softmax_w");
  short_one.put(1024);
  CHECK(short_one.view() == "softmax_w1024");
  constexpr name_builder a = make("_la_sp_causal"), b = make("_sp_causal"), a2 = make("_la_sp_causal");
  CHECK(a.view().size() == name::capacity);
  CHECK(a.view().substr(0, name::capacity - 7) == "attn_fwd_d128_g1_n128_fr");
  CHECK(a.view()[name::capacity - 7] == '_');
  CHECK(a.view() != b.view());   // they differ only past the cut
  CHECK(a.view() == a2.view());  // the same name, the same hash
  for (char ch : a.view()) CHECK(((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'));
  name n;
  CHECK(n.assign(a.view()));  // it fits a Program's name
}
