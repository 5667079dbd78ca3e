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
