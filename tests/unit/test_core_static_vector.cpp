// Unit tests for cake/core/static_vector.hpp and compile_error.hpp: the fixed-capacity container every
// Program list is made of, and the compile-time rejection that is a no-op at run time.
#include <doctest/doctest.h>

#include "cake/core/compile_error.hpp"
#include "cake/core/static_vector.hpp"

using namespace cake;

namespace {
constexpr static_vector<int, 4> filled(int n) {
  static_vector<int, 4> v;
  for (int i = 0; i < n; ++i) v.push_back(10 * i);
  return v;
}
}  // namespace

TEST_CASE("static_vector: push_back, size, indexing, back") {
  static_vector<int, 4> v;
  CHECK(v.empty());
  CHECK(v.size() == 0);
  CHECK(v.capacity() == 4);
  CHECK(v.push_back(7));
  CHECK(v.push_back(8));
  CHECK(v.size() == 2);
  CHECK(v[0] == 7);
  CHECK(v.back() == 8);
  v[1] = 9;
  CHECK(v.back() == 9);
  CHECK_FALSE(v.empty());
  CHECK_FALSE(v.full());
}

TEST_CASE("static_vector: a full vector refuses more and stores nothing out of bounds") {
  static_vector<int, 2> v;
  CHECK(v.push_back(1));
  CHECK(v.push_back(2));
  CHECK(v.full());
  CHECK_FALSE(v.push_back(3));
  CHECK(v.size() == 2);
  CHECK(v[0] == 1);
  CHECK(v[1] == 2);
}

TEST_CASE("static_vector: iteration covers exactly the stored items") {
  const auto v = filled(3);
  int sum = 0, count = 0;
  for (int x : v) sum += x, ++count;
  CHECK(count == 3);
  CHECK(sum == 30);
  CHECK(v.end() - v.begin() == 3);
}

TEST_CASE("static_vector: usable in constant expressions and storable in constexpr variables") {
  constexpr auto v = filled(4);
  static_assert(v.size() == 4 && v.full() && v[3] == 30);
  constexpr auto over = [] {
    auto w = filled(4);
    return w.push_back(1);
  }();
  static_assert(!over);
  CHECK(v.back() == 30);
}

TEST_CASE("reject: outside constant evaluation it does nothing (the builder records the error instead)") {
  CHECK(reject<"test.rule", "a message">(5) == 0);
  CHECK(reject<"test.rule", "a message">(0) == 0);
  CHECK(reject<"test.rule", "a message">(-3) == 0);
  // In a constant expression only an out-of-range value is an error; reading index 0 is not, which is
  // why values below 1 are shifted (tested by the compile-fail tier).
  CHECK(compile_error<"test.rule", "a message">::the_value_is[0] == 0);
}
