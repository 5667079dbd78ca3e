#pragma once
// Bounded text that can be built during constant evaluation: diagnostics carry their message, path,
// notes and hint in fixed buffers so that the same passes run in cake::analyze (at run time) and in
// static_assert(cake::verify(p)) (at compile time), where std::string cannot survive the evaluation.
// Text that does not fit is cut and marked with "..." rather than dropped silently.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cake::analysis {

template <std::size_t N>
struct fixed_text {
  char data[N]{};
  std::uint16_t length = 0;
  bool cut = false;

  constexpr std::string_view view() const { return {data, length}; }
  constexpr bool empty() const { return length == 0; }

  constexpr fixed_text& put(char c) {
    if (length + 1 < N) {
      data[length++] = c;
    } else if (!cut) {
      cut = true;
      for (std::size_t i = (N > 4 ? N - 4 : 0); i < N - 1; ++i) data[i] = '.';
      length = static_cast<std::uint16_t>(N - 1);
    }
    return *this;
  }
  constexpr fixed_text& operator<<(std::string_view s) {
    for (char c : s) put(c);
    return *this;
  }
  constexpr fixed_text& operator<<(const char* s) { return *this << std::string_view{s}; }
  constexpr fixed_text& operator<<(char c) { return put(c); }
  constexpr fixed_text& operator<<(long long v) {
    if (v < 0) {
      put('-');
      // -(v + 1) + 1 avoids overflow on the most negative value
      return append_unsigned(static_cast<unsigned long long>(-(v + 1)) + 1);
    }
    return append_unsigned(static_cast<unsigned long long>(v));
  }
  constexpr fixed_text& operator<<(int v) { return *this << static_cast<long long>(v); }
  constexpr fixed_text& operator<<(long v) { return *this << static_cast<long long>(v); }
  constexpr fixed_text& operator<<(unsigned v) { return append_unsigned(v); }
  constexpr fixed_text& operator<<(unsigned long v) { return append_unsigned(v); }
  constexpr fixed_text& operator<<(unsigned long long v) { return append_unsigned(v); }

 private:
  constexpr fixed_text& append_unsigned(unsigned long long v) {
    char digits[24]{};
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    while (n) put(digits[--n]);
    return *this;
  }
};

}  // namespace cake::analysis
