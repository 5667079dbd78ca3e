#pragma once
// Strings that live inside constexpr values.
//   fixed_string<N>: a structural string usable as a template argument (rule ids and messages in
//                    compile-time errors, so that the compiler prints them).
//   name:            a bounded, copyable string stored inside a Program (resource and kernel names).
//   name_builder:    a kernel name put together at compile time from parts and numbers (schedules
//                    whose name says their configuration, e.g. "softmax_w1024_1x4w_f32"); past the
//                    capacity it ends in a hash of the whole name.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cake {

template <std::size_t N>
struct fixed_string {
  char text[N]{};
  constexpr fixed_string() = default;
  constexpr fixed_string(const char (&s)[N]) {
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
  constexpr std::string_view view() const { return {text, N - 1}; }
};

// A and B as one string, at compile time: a message made of parts (concat<"more tensors", " than ...">()).
template <fixed_string A, fixed_string B>
constexpr auto concat() {
  constexpr std::size_t na = A.view().size(), nb = B.view().size();
  fixed_string<na + nb + 1> r;
  for (std::size_t i = 0; i < na; ++i) r.text[i] = A.text[i];
  for (std::size_t i = 0; i < nb; ++i) r.text[na + i] = B.text[i];
  return r;
}

// A name stored by value in a Program. Longer names are a builder error (see ir/kernel_builder.hpp), never
// silently cut: the capacity is reported in that error.
struct name {
  static constexpr std::size_t capacity = 31;
  char text[capacity + 1]{};
  unsigned char length = 0;

  constexpr name() = default;
  constexpr name(const char* s) { assign(std::string_view{s}); }
  constexpr name(std::string_view s) { assign(s); }

  // Returns false when the text does not fit.
  constexpr bool assign(std::string_view s) {
    length = 0;
    for (std::size_t i = 0; i <= capacity; ++i) text[i] = 0;
    if (s.size() > capacity) {
      for (std::size_t i = 0; i < capacity; ++i) text[i] = s[i];
      length = capacity;
      return false;
    }
    for (std::size_t i = 0; i < s.size(); ++i) text[i] = s[i];
    length = static_cast<unsigned char>(s.size());
    return true;
  }
  static constexpr bool fits(std::string_view s) { return s.size() <= capacity; }
  constexpr std::string_view view() const { return {text, length}; }
  constexpr const char* c_str() const { return text; }
  constexpr bool empty() const { return length == 0; }
  friend constexpr bool operator==(const name& a, const name& b) { return a.view() == b.view(); }
  friend constexpr bool operator==(const name& a, std::string_view b) { return a.view() == b; }
  // Without this, `n == "sA"` is ambiguous (a literal converts to both name and string_view).
  friend constexpr bool operator==(const name& a, const char* b) { return a.view() == std::string_view(b); }
};

// Parts and decimal numbers appended in order; text past `name::capacity` characters is dropped (the
// builder's ir.name-too-long check sees only names that fit, so keep names short).
struct name_builder {
  char text[name::capacity + 1]{};
  int len = 0;
  std::uint32_t hash = 2166136261u;  // FNV-1a of everything put, kept or not
  bool cut = false;
  constexpr void put(std::string_view s) {
    for (char ch : s) put_char(ch);
  }
  constexpr void put(int v) {
    char d[12]{};
    int n = 0;
    if (v == 0) d[n++] = '0';
    while (v > 0 && n < 11) d[n++] = static_cast<char>('0' + v % 10), v /= 10;
    while (n > 0) put_char(d[--n]);
  }
  constexpr std::string_view view() const { return {text, static_cast<std::size_t>(len)}; }

 private:
  // A name longer than the capacity keeps its first capacity - 7 characters and ends in "_" and 6 hex digits
  // of the whole name's hash: two configurations that differ only past the cut keep different names (in a
  // profiler, in the cache's index), and the name stays a valid identifier.
  constexpr void put_char(char ch) {
    hash = (hash ^ static_cast<unsigned char>(ch)) * 16777619u;
    constexpr int cap = static_cast<int>(name::capacity), keep = cap - 7;
    if (!cut && len < cap) {
      text[len++] = ch;
      return;
    }
    cut = true;
    len = cap;
    text[keep] = '_';
    for (int i = 0; i < 6; ++i) text[keep + 1 + i] = "0123456789abcdef"[(hash >> (4 * (5 - i))) & 15u];
  }
};

}  // namespace cake
