#pragma once
// Indented text output for the emitter.
#include <string>
#include <string_view>

namespace cake::lower {

class writer {
 public:
  void line(std::string_view s) {
    text_.append(static_cast<std::size_t>(2 * depth_), ' ');
    text_ += s;
    text_ += '\n';
  }
  void raw(std::string_view s) { text_ += s; }
  void open(std::string_view s) {  // "for (...) {" and indent
    line(std::string(s) + " {");
    ++depth_;
  }
  void close(std::string_view tail = "") {
    --depth_;
    line("}" + std::string(tail));
  }
  std::string& text() { return text_; }
  int depth() const { return depth_; }

 private:
  std::string text_;
  int depth_ = 0;
};

inline std::string str(long long v) { return std::to_string(v); }
inline std::string hex(unsigned long long v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

}  // namespace cake::lower
