#pragma once
// Where a builder call was written. Every op and resource records one, so that diagnostics point at the
// user's schedule line (GCC-style file:line:col).
//
// g++ 12 has std::source_location but no __builtin_COLUMN; clang 14 has the builtins but cannot use
// libstdc++ 12's std::source_location. Either way, as a default argument it records the caller.
#include <string_view>
#if !defined(__clang__)
#include <source_location>
#endif

namespace cake {

struct src_loc {
  const char* file = "";
  unsigned line = 0;
  unsigned column = 0;

  // As a default argument, records the caller's position: `void f(src_loc at = src_loc::current())`.
#if defined(__clang__)
  static constexpr src_loc current(const char* f = __builtin_FILE(), unsigned l = __builtin_LINE(),
                                   unsigned c = __builtin_COLUMN()) {
    return {f, l, c};
  }
#else
  static constexpr src_loc current(std::source_location s = std::source_location::current()) {
    return {s.file_name(), static_cast<unsigned>(s.line()), static_cast<unsigned>(s.column())};
  }
#endif
  constexpr bool known() const { return line != 0; }
};

// A name argument that also records where it was written: lets builder methods that take a variadic
// tail (which cannot end in a defaulted location parameter) still locate the user's call.
struct located_name {
  std::string_view text;
  src_loc loc;
  constexpr located_name(const char* s, src_loc l = src_loc::current()) : text(s), loc(l) {}
  constexpr located_name(std::string_view s, src_loc l = src_loc::current()) : text(s), loc(l) {}
};

}  // namespace cake
