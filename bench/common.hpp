#pragma once
// Shared by every benchmark program that writes bench/results/ JSON (docs/benchmarks.md).
#include <ctime>
#include <string>

namespace cake_bench {

// The UTC date of the run, YYYY-MM-DD (the "date" field).
inline std::string today() {
  const std::time_t t = std::time(nullptr);
  char b[16];
  std::strftime(b, sizeof b, "%Y-%m-%d", std::gmtime(&t));
  return b;
}

}  // namespace cake_bench
