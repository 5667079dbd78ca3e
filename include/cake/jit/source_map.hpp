#pragma once
// Two maps that carry a compiler's complaint back to the schedule that caused it:
//   source_map    generated CUDA line -> the op annotation above it. Lowering writes
//                 `// @op <id> <file>:<line>` before each statement it emits.
//   ptx_line_map  PTX line -> CUDA line, through the `.loc`/`.file` directives that -lineinfo emits,
//                 so that ptxas errors (which only know PTX lines) reach the same annotation.
#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cake::jit {

namespace detail {
// Calls f(line, 1-based number) for every line of text ('\n' separated; a trailing '\r' is dropped).
template <class F>
void for_each_line(std::string_view text, F&& f) {
  int number = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line, ++number);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits off the next whitespace-separated token.
inline std::string_view next_token(std::string_view& s) {
  s = trim(s);
  auto end = s.find_first_of(" \t,");
  auto tok = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  if (!s.empty() && s.front() == ',') s.remove_prefix(1);
  return tok;
}

inline std::optional<long long> to_int(std::string_view s) {
  long long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}
}  // namespace detail

// One `// @op <id> <file>:<line>[ <text>]` comment of the generated source. The location is the first
// `:<digits>` that ends a word, so file paths may contain spaces and the op's text may follow.
struct op_annotation {
  int cuda_line = 0;   // line of the comment in the generated source (1-based)
  std::string op_id;   // the op's id as lowering printed it (one token, e.g. "12" or "gemm/math/op#3")
  std::string file;    // schedule file
  int line = 0;        // schedule line
  std::string text;    // what lowering wrote after the location (the op, printed), may be empty
  std::string location() const { return file + ":" + std::to_string(line); }
};

class source_map {
 public:
  explicit source_map(std::string_view source) {
    detail::for_each_line(source, [&](std::string_view line, int number) {
      const auto at = line.find("// @op");
      if (at == std::string_view::npos) return;
      auto rest = line.substr(at + 6);
      if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t') return;  // e.g. "// @opx"
      const auto id = detail::next_token(rest);
      rest = detail::trim(rest);
      for (std::size_t colon = rest.find(':'); colon != std::string_view::npos; colon = rest.find(':', colon + 1)) {
        std::size_t end = colon + 1;
        while (end < rest.size() && rest[end] >= '0' && rest[end] <= '9') ++end;
        if (end == colon + 1 || colon == 0 || (end < rest.size() && rest[end] != ' ' && rest[end] != '\t')) continue;
        const auto schedule_line = detail::to_int(rest.substr(colon + 1, end - colon - 1));
        if (id.empty() || !schedule_line) return;
        ops_.push_back({number, std::string(id), std::string(detail::trim(rest.substr(0, colon))),
                        static_cast<int>(*schedule_line), std::string(detail::trim(rest.substr(end)))});
        return;
      }
    });
  }

  // The nearest annotation at or above a line of the generated source, or nullptr.
  const op_annotation* op_for_line(int cuda_line) const {
    const auto it = std::upper_bound(ops_.begin(), ops_.end(), cuda_line,
                                     [](int l, const op_annotation& a) { return l < a.cuda_line; });
    return it == ops_.begin() ? nullptr : &*(it - 1);
  }
  const std::vector<op_annotation>& ops() const { return ops_; }

 private:
  std::vector<op_annotation> ops_;  // in line order
};

// Where a PTX instruction came from, per the last `.loc` before it.
struct ptx_origin {
  int file = 0, line = 0, column = 0;
  int call_file = 0, call_line = 0;  // `inlined_at`: the call site of the inlined function, 0 when none
};

class ptx_line_map {
 public:
  explicit ptx_line_map(std::string_view ptx) {
    detail::for_each_line(ptx, [&](std::string_view raw, int number) {
      const auto line = detail::trim(raw);
      if (line.starts_with(".loc")) {
        auto rest = line.substr(4);
        ptx_origin o;
        o.file = static_cast<int>(detail::to_int(detail::next_token(rest)).value_or(0));
        o.line = static_cast<int>(detail::to_int(detail::next_token(rest)).value_or(0));
        o.column = static_cast<int>(detail::to_int(detail::next_token(rest)).value_or(0));
        if (const auto at = rest.find("inlined_at"); at != std::string_view::npos) {
          auto call = rest.substr(at + 10);
          o.call_file = static_cast<int>(detail::to_int(detail::next_token(call)).value_or(0));
          o.call_line = static_cast<int>(detail::to_int(detail::next_token(call)).value_or(0));
        }
        marks_.push_back({number, o});
      } else if (line.starts_with(".file")) {
        auto rest = line.substr(5);
        const auto index = detail::to_int(detail::next_token(rest));
        const auto q1 = rest.find('"'), q2 = rest.find('"', q1 == std::string_view::npos ? 0 : q1 + 1);
        if (index && q1 != std::string_view::npos && q2 != std::string_view::npos)
          files_.push_back({static_cast<int>(*index), std::string(rest.substr(q1 + 1, q2 - q1 - 1))});
      } else if (line.find(".entry ") != std::string_view::npos || line.find(".func ") != std::string_view::npos) {
        marks_.push_back({number, std::nullopt});  // a new function: earlier .loc lines no longer apply
      }
    });
  }

  // The origin of a PTX line (1-based), or nullopt when no `.loc` precedes it in its function.
  std::optional<ptx_origin> at(int ptx_line) const {
    const auto it = std::upper_bound(marks_.begin(), marks_.end(), ptx_line,
                                     [](int l, const mark& m) { return l < m.ptx_line; });
    if (it == marks_.begin()) return std::nullopt;
    return (it - 1)->origin;
  }

  // The path a `.file` index stands for ("" when unknown).
  std::string file_name(int index) const {
    for (const auto& f : files_)
      if (f.index == index) return f.path;
    return {};
  }

  // Whether a file index names the program itself: NVRTC writes "<cwd>/<program name>".
  bool is_program(int index, std::string_view program_name) const {
    const auto path = file_name(index);
    if (path.size() < program_name.size() || program_name.empty()) return false;
    if (!std::string_view(path).ends_with(program_name)) return false;
    return path.size() == program_name.size() || path[path.size() - program_name.size() - 1] == '/';
  }

 private:
  struct mark {
    int ptx_line;
    std::optional<ptx_origin> origin;
  };
  struct file_entry {
    int index;
    std::string path;
  };
  std::vector<mark> marks_;
  std::vector<file_entry> files_;
};

}  // namespace cake::jit
