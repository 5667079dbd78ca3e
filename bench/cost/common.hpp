#pragma once
// Shared by the cost-model benchmarks (calibrate.cpp, sweep.cpp): the date, a tiny JSON writer, the
// embedded device helpers pasted in front of hand-written calibration kernels, and command lines.
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include <cake/device/embedded.hpp>

#include "../common.hpp"

namespace cake_bench {

inline std::string json_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (c == '\n') o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
    else o += c;
  }
  return o;
}

inline std::string num(double v, int precision = 4) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", precision, v);
  return b;
}

// The device helpers (common.cuh, sm90.cuh) as one block of source, the way lowering pastes them, so
// calibration kernels use the same mbarrier / TMA / wgmma helpers as generated kernels.
inline std::string device_prelude() {
  std::string s = "// Cake cost-model calibration kernels (bench/cost/calibrate.cpp).\n";
  for (std::string_view name : {"cake/device/common.cuh", "cake/device/sm90.cuh"}) {
    const std::string_view src = cake::device::embedded_source(name);
    std::size_t start = 0;
    while (start < src.size()) {
      std::size_t end = src.find('\n', start);
      if (end == std::string_view::npos) end = src.size();
      const std::string_view line = src.substr(start, end - start);
      if (line.rfind("#pragma once", 0) != 0 && line.rfind("#include \"cake/device/", 0) != 0) {
        s += line;
        s += '\n';
      }
      start = end + 1;
    }
  }
  s += "using namespace cake_dev;\n";
  return s;
}

inline std::string command_line(int argc, char** argv) {
  std::string c;
  for (int i = 0; i < argc; ++i) {
    if (i) c += ' ';
    std::string a = argv[i];
    if (i == 0) {
      const auto slash = a.rfind('/');
      if (slash != std::string::npos) a = a.substr(slash + 1);
    }
    c += a;
  }
  return c;
}

}  // namespace cake_bench
