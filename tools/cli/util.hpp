#pragma once
// Small helpers of the cake tool: hashing, files, paths as the user wrote them, JSON strings, clocks.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace cake_cli {

namespace fs = std::filesystem;

// FNV-1a, 64 bits: cache keys (not security).
struct hasher {
  std::uint64_t h = 1469598103934665603ull;
  hasher& add(std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // separator: "ab"+"c" != "a"+"bc"
    return *this;
  }
  hasher& add(std::uint64_t v) { return add(std::string_view(reinterpret_cast<const char*>(&v), sizeof v)); }
  std::string hex() const {
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
    return b;
  }
};

inline std::optional<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool write_file(const fs::path& p, std::string_view text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

// A path for messages: relative to the working directory when it lies under it, else as is.
inline std::string display_path(std::string_view path) {
  if (path.empty()) return std::string(path);
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  const fs::path p(path);
  if (ec || !p.is_absolute()) return std::string(path);
  const auto rel = p.lexically_relative(cwd);
  if (rel.empty() || *rel.begin() == "..") return std::string(path);
  return rel.string();
}

inline std::string json_string(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

inline std::string json_number(double v) {
  char b[48];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

struct stopwatch {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double ms() const { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
};

inline std::string trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) s.remove_prefix(1);
  return std::string(s);
}

}  // namespace cake_cli
