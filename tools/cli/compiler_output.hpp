#pragma once
// Compiler errors of a schedule file as Cake diagnostics. Cake's compile-time checks fail in two ways
// (docs/design.md, "Rejecting misuse at compile time"):
//   - value-level: an out-of-bounds read of cake::compile_error<"rule", "message">::the_value_is; g++
//     prints the rule, the message and the value in the error, clang quotes the fail<"rule", "message">
//     call and says "in call to 'reject(VALUE)'";
//   - type-level: a static_assert whose message starts with "[rule.id]".
// Either becomes a diagnostic with that rule id, the message with its value, and the location of the
// innermost frame of the compiler's trace that lies in the user's files (not in Cake's headers, not in
// the system's) -- the builder call that was rejected. Any other compiler error is `cli.compile-error`
// at its own location. The outer user frames become notes.
#include <regex>
#include <string>
#include <vector>

#include "diagnostic.hpp"

namespace cake_cli {

struct compiler_frame {
  std::string file;
  int line = 0, column = 0;
  std::string text;
};

namespace detail {

inline bool is_user_file(const std::string& file, const std::vector<std::string>& library_dirs) {
  if (file.empty() || file[0] == '<') return false;
  for (const auto& dir : library_dirs)
    if (!dir.empty() && file.rfind(dir, 0) == 0) return false;
  return file.rfind("/usr/", 0) != 0;
}

// "... (value: bytes needed)" -> "... (bytes needed: 262144)", as the analyzer words builder findings.
inline std::string with_value(const std::string& message, long long value) {
  const auto at = message.rfind("(value: ");
  if (at != std::string::npos && !message.empty() && message.back() == ')')
    return message.substr(0, at) + "(" + message.substr(at + 8, message.size() - at - 9) + ": " + std::to_string(value) + ")";
  return message + " (value " + std::to_string(value) + ")";
}

struct group {
  std::string severity, message, file, raw;
  int line = 0, column = 0;
  std::vector<compiler_frame> frames;  // GCC context lines (outermost first) or clang notes (innermost first)
  std::vector<compiler_frame> notes;
};

}  // namespace detail

// `library_dirs`: folders whose files are Cake's own (the include folder); `clang`: the output's dialect.
inline std::vector<diagnostic> parse_compiler_output(const std::string& output, const std::vector<std::string>& library_dirs, bool clang) {
  static const std::regex message_re(R"(^(.*?):(\d+):(\d+): (fatal error|error|warning|note): (.*)$)");
  static const std::regex frame_re(R"(^(.*?):(\d+):(\d+):\s+((?:in .constexpr. expansion of|required from|required by|in requirements|in instantiation).*)$)");
  static const std::regex compile_error_re(R"re(array subscript value '(-?\d+)' is outside the bounds of array 'cake::compile_error<cake::fixed_string<\d+>\{"([^"]+)"\}, cake::fixed_string<\d+>\{"((?:[^"\\]|\\.)*)"\}>::the_value_is')re");
  static const std::regex clang_fail_re(R"re((?:fail|reject)<"([a-z0-9-]+\.[a-z0-9.-]+)", "((?:[^"\\]|\\.)*)">)re");
  static const std::regex clang_value_re(R"(in call to 'reject\((-?\d+)\)')");
  // g++ quotes a static_assert's message in '...', clang 14 in "..." (after the requirement).
  static const std::regex rule_re(R"(\[([a-z0-9-]+\.[a-z0-9.-]+)\] (.*?)(?:['"]|$))");

  std::vector<detail::group> groups;
  std::vector<compiler_frame> pending;
  std::istringstream in(output);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, frame_re)) {
      pending.push_back({m[1], std::stoi(m[2]), std::stoi(m[3]), m[4]});
      continue;
    }
    if (std::regex_match(line, m, message_re)) {
      const std::string sev = m[4];
      compiler_frame f{m[1], std::stoi(m[2]), std::stoi(m[3]), m[5]};
      if (sev == "note") {
        if (!groups.empty()) groups.back().notes.push_back(f), groups.back().raw += line + "\n";
        continue;
      }
      if (sev == "warning") {
        pending.clear();
        continue;
      }
      detail::group g;
      g.severity = "error";
      g.message = f.text;
      g.file = f.file;
      g.line = f.line;
      g.column = f.column;
      g.frames = std::move(pending);
      g.raw = line + "\n";
      pending.clear();
      groups.push_back(std::move(g));
      continue;
    }
    // Source quotes (clang), "In file included from", "In function ...": kept for the rule search only.
    if (!groups.empty()) groups.back().raw += line + "\n";
  }

  std::vector<diagnostic> out;
  for (auto& g : groups) {
    diagnostic d;
    d.severity = "error";
    std::smatch r;
    bool recognised = false;
    if (std::regex_search(g.message, r, compile_error_re)) {
      long long v = std::stoll(r[1]);
      if (v < 0) v += 1;  // values below 1 are shown shifted by one
      d.rule = r[2];
      d.message = detail::with_value(r[3], v);
      d.value = v;
      recognised = true;
    } else if (std::regex_search(g.raw, r, clang_fail_re)) {
      d.rule = r[1];
      std::smatch vm;
      if (std::regex_search(g.raw, vm, clang_value_re)) {
        long long v = std::stoll(vm[1]);
        if (v < 0) v += 1;
        d.value = v;
        d.message = detail::with_value(r[2], v);
      } else {
        d.message = r[2];
      }
      recognised = true;
    } else if (g.message.find("static assert") != std::string::npos || g.message.find("static_assert") != std::string::npos) {
      if (std::regex_search(g.message, r, rule_re)) {
        d.rule = r[1];
        d.message = trim(r[2].str());
        recognised = true;
      }
    }
    if (!recognised) {
      d.rule = "cli.compile-error";
      d.message = g.message;
    }
    d.category = d.rule.substr(0, d.rule.find('.'));
    // Location: the innermost user frame of the trace, else the error's own place.
    std::vector<compiler_frame> user;
    if (clang) {
      // Innermost first: "in call to" (a constant expression: a value-level rejection) and "in
      // instantiation of" (a template: a type-level static_assert, e.g. inside a loop body's lambda).
      for (const auto& n : g.notes)
        if ((n.text.rfind("in call to", 0) == 0 || n.text.rfind("in instantiation of", 0) == 0) && detail::is_user_file(n.file, library_dirs))
          user.push_back(n);
    } else {
      for (auto it = g.frames.rbegin(); it != g.frames.rend(); ++it)
        if (detail::is_user_file(it->file, library_dirs)) user.push_back(*it);  // innermost first
    }
    // g++ reports the error where it happened (a user line for a syntax error, Cake's header for a
    // rejected value); clang reports it at the outermost constant expression and lists the calls inside.
    const bool error_in_user_file = detail::is_user_file(g.file, library_dirs);
    if (error_in_user_file && !(clang && !user.empty())) user.insert(user.begin(), {g.file, g.line, g.column, ""});
    if (user.empty())  // an error inside a macro of Cake's (CAKE_EXPORT): the user's line is where it was expanded
      for (const auto& n : g.notes)
        if (n.text.find("in expansion of macro") != std::string::npos && detail::is_user_file(n.file, library_dirs)) {
          user.push_back(n);
          d.notes.push_back({"inside the macro expansion at " + location_text(g.file, g.line, g.column), "", 0, 0});
          break;
        }
    if (!user.empty()) {
      d.file = user.front().file;
      d.line = user.front().line;
      d.column = user.front().column;
      for (std::size_t i = 1; i < user.size() && i <= 3; ++i) d.notes.push_back({"called from here", user[i].file, user[i].line, user[i].column});
    } else {
      d.file = g.file;
      d.line = g.line;
      d.column = g.column;
    }
    if (recognised) d.help = "a compile-time check of the schedule language rejected this call (rule table: docs/language.md, Checks and rule ids)";
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace cake_cli
