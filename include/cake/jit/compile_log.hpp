#pragma once
// Reading NVRTC's program log: the diagnostics it holds (front-end and ptxas), each mapped back to the
// generated CUDA line and the schedule op that emitted it, and ptxas's resource report
// (--ptxas-options=-v: registers, spills, shared memory, stack frame, warnings such as C7508).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cake/jit/source_map.hpp>

namespace cake::jit {

enum class message_origin { nvrtc, ptxas };
enum class severity { error, warning, info };

constexpr std::string_view to_string(severity s) {
  return s == severity::error ? "error" : s == severity::warning ? "warning" : "info";
}

struct compile_message {
  message_origin origin = message_origin::nvrtc;
  severity level = severity::error;
  std::string text;      // the compiler's words, without its location prefix
  std::string detail;    // the lines that followed (source echo, caret, "detected during ...")
  std::string code;      // "177-D" (front end), "C7508" (ptxas), or ""
  std::string file;      // the file the compiler named: the program name, a header, or "" for ptxas
  int cuda_line = 0;     // line in the generated source, 0 when unknown
  int cuda_call_line = 0;  // for ptxas: call site of the inlined function the instruction came from
  int ptx_line = 0;      // for ptxas: line in the PTX
  std::optional<op_annotation> op;

  // GCC style, so that editors and agents can jump to it: the schedule location when the op is known,
  // else the generated source line, else the PTX line; then a note naming the op and the generated line.
  std::string to_string() const {
    std::string where;
    if (op) where = op->location();
    else if (cuda_line > 0) where = file + ":" + std::to_string(cuda_line);
    else if (ptx_line > 0) where = "<ptx>:" + std::to_string(ptx_line);
    else where = origin == message_origin::ptxas ? "ptxas" : "nvrtc";
    std::string s = where + ": " + std::string(jit::to_string(level)) + ": " + text;
    if (!code.empty()) s += " [" + code + "]";
    if (op) {
      s += "\n  note: in op " + op->op_id + (op->text.empty() ? "" : " " + op->text) + " (generated " + file + ":" +
           std::to_string(cuda_line);
      if (cuda_call_line > 0 && cuda_call_line != cuda_line) s += ", inlined at line " + std::to_string(cuda_call_line);
      if (ptx_line > 0) s += ", PTX line " + std::to_string(ptx_line);
      s += ")";
    } else if (ptx_line > 0 && cuda_line > 0) {
      s += "\n  note: PTX line " + std::to_string(ptx_line);
    }
    return s;
  }
};

namespace detail {
// "<file>(<line>): <severity>[ #<code>]: <text>", as the NVRTC front end writes it; nullopt otherwise.
inline std::optional<compile_message> parse_front_end_line(std::string_view line) {
  const auto open = line.find('(');
  const auto close = line.find("): ");
  if (open == std::string_view::npos || close == std::string_view::npos || open > close) return std::nullopt;
  const auto number = to_int(line.substr(open + 1, close - open - 1));
  auto rest = line.substr(close + 3);
  const auto colon = rest.find(": ");
  if (!number || colon == std::string_view::npos) return std::nullopt;
  auto kind = rest.substr(0, colon);
  compile_message m;
  if (const auto hash = kind.find(" #"); hash != std::string_view::npos) {
    m.code = std::string(kind.substr(hash + 2));
    kind = kind.substr(0, hash);
  }
  if (kind.ends_with("error")) m.level = severity::error;  // "error", "catastrophic error", "internal error"
  else if (kind == "warning") m.level = severity::warning;
  else if (kind == "remark") m.level = severity::info;
  else return std::nullopt;
  m.origin = message_origin::nvrtc;
  m.text = std::string(rest.substr(colon + 2));
  m.file = std::string(line.substr(0, open));
  m.cuda_line = static_cast<int>(*number);
  return m;
}
}  // namespace detail

// Parses the log. program_name is the name the source was compiled under (NVRTC prefixes front-end
// messages with it); source and ptx are used to map lines (ptx may be empty).
inline std::vector<compile_message> parse_compile_log(std::string_view log, std::string_view program_name,
                                                      std::string_view source, std::string_view ptx) {
  const source_map ops(source);
  const ptx_line_map ptx_map(ptx);
  std::vector<compile_message> out;
  bool in_message = false;  // continuation lines belong to the last front-end message until a blank line

  detail::for_each_line(log, [&](std::string_view line, int) {
    if (line.starts_with("ptxas")) {
      in_message = false;
      // "ptxas application ptx input, line 25; error   : text" | "ptxas info    : (C7508) text"
      const auto colon = line.find(" : ");
      const auto colon2 = line.find(": ");
      const auto sep = colon != std::string_view::npos ? colon + 1 : colon2;
      if (sep == std::string_view::npos) return;
      auto head = line.substr(0, sep);
      auto text = detail::trim(line.substr(sep + 1));
      compile_message m;
      m.origin = message_origin::ptxas;
      if (const auto at = head.find(", line "); at != std::string_view::npos) {
        auto rest = head.substr(at + 7);
        m.ptx_line = static_cast<int>(detail::to_int(rest.substr(0, rest.find(';'))).value_or(0));
      }
      const auto word = detail::trim(head.substr(head.rfind(';') == std::string_view::npos ? 5 : head.rfind(';') + 1));
      if (word.starts_with("error") || word.starts_with("fatal")) m.level = severity::error;
      else if (word.starts_with("warning")) m.level = severity::warning;
      else m.level = severity::info;
      if (text.starts_with("(C") && text.find(')') != std::string_view::npos) {
        m.code = std::string(text.substr(1, text.find(')') - 1));
        text = detail::trim(text.substr(text.find(')') + 1));
      }
      // Plain "info" lines are the resource report, read by parse_resource_reports.
      if (m.level == severity::info && m.code.empty()) return;
      if (text == "Ptx assembly aborted due to errors") return;  // a summary, not a finding
      m.text = std::string(text);
      if (m.ptx_line > 0) {
        if (const auto o = ptx_map.at(m.ptx_line); o && ptx_map.is_program(o->file, program_name)) {
          m.file = std::string(program_name);
          m.cuda_line = o->line;
          if (o->call_line > 0 && ptx_map.is_program(o->call_file, program_name)) m.cuda_call_line = o->call_line;
          // The op is the one around the statement in the kernel body: the call site when inlined.
          if (const auto* a = ops.op_for_line(m.cuda_call_line > 0 ? m.cuda_call_line : m.cuda_line)) m.op = *a;
        }
      }
      out.push_back(std::move(m));
      return;
    }
    // Front end: "<file>(<line>): <severity>[ #<code>]: <text>"
    if (auto m = detail::parse_front_end_line(line)) {
      if (m->file == program_name)
        if (const auto* a = ops.op_for_line(m->cuda_line)) m->op = *a;
      out.push_back(std::move(*m));
      in_message = true;
    } else if (detail::trim(line).empty()) {
      in_message = false;
    } else if (in_message && !out.empty()) {
      auto& d = out.back().detail;
      d += (d.empty() ? "" : "\n") + std::string(line);
    }
  });
  return out;
}

// ptxas's report for one entry function.
struct resource_report {
  std::string function;  // the entry function; empty when the log held no report for it
  int registers = 0;
  int spill_stores = 0;  // bytes
  int spill_loads = 0;   // bytes
  int smem_bytes = 0;    // static shared memory
  int stack_frame = 0;   // bytes
  int barriers = 0;
  std::vector<std::string> warnings;  // ptxas warnings and coded infos of the whole program, e.g. C7508
  bool from_cubin = false;  // registers and stack frame read from the CUBIN (the log had no report): spills unknown

  bool spills() const { return spill_stores > 0 || spill_loads > 0; }
};

namespace detail {
// The integer right before `suffix` in line ("1200 bytes stack frame" -> 1200), or 0.
inline int number_before(std::string_view line, std::string_view suffix) {
  const auto at = line.find(suffix);
  if (at == std::string_view::npos) return 0;
  auto end = at;
  auto begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  return static_cast<int>(to_int(line.substr(begin, end - begin)).value_or(0));
}
inline std::string quoted_name(std::string_view line) {
  const auto q1 = line.find('\'');
  const auto q2 = line.find('\'', q1 == std::string_view::npos ? 0 : q1 + 1);
  if (q1 == std::string_view::npos || q2 == std::string_view::npos) return {};
  return std::string(line.substr(q1 + 1, q2 - q1 - 1));
}
}  // namespace detail

// One report per entry function, in log order.
inline std::vector<resource_report> parse_resource_reports(std::string_view log) {
  std::vector<resource_report> reports;
  std::vector<std::string> warnings;
  std::string properties_of;  // the function whose "Function properties" block is open
  auto find = [&](const std::string& name) -> resource_report* {
    for (auto& r : reports)
      if (r.function == name) return &r;
    return nullptr;
  };
  detail::for_each_line(log, [&](std::string_view line, int) {
    if (!line.starts_with("ptxas")) return;
    if (line.find("Compiling entry function") != std::string_view::npos) {
      resource_report r;
      r.function = detail::quoted_name(line);
      reports.push_back(std::move(r));
    } else if (const auto at = line.find("Function properties for "); at != std::string_view::npos) {
      properties_of = std::string(detail::trim(line.substr(at + 24)));
    } else if (line.find("bytes stack frame") != std::string_view::npos) {
      if (auto* r = find(properties_of)) {
        r->stack_frame = detail::number_before(line, " bytes stack frame");
        r->spill_stores = detail::number_before(line, " bytes spill stores");
        r->spill_loads = detail::number_before(line, " bytes spill loads");
      }
    } else if (line.find(" registers") != std::string_view::npos && line.find("Used ") != std::string_view::npos) {
      if (!reports.empty()) {
        auto& r = reports.back();
        r.registers = detail::number_before(line, " registers");
        r.barriers = detail::number_before(line, " barriers");
        r.smem_bytes = detail::number_before(line, " bytes smem");
      }
    } else if (line.find("warning") != std::string_view::npos || line.find(": (C") != std::string_view::npos) {
      const auto colon = line.find(": ");
      warnings.emplace_back(detail::trim(colon == std::string_view::npos ? line : line.substr(colon + 2)));
    }
  });
  for (auto& r : reports) r.warnings = warnings;
  if (reports.empty() && !warnings.empty()) {
    resource_report r;
    r.warnings = warnings;
    reports.push_back(std::move(r));
  }
  return reports;
}

// The report of kernel_name; with no exact match, the only report, else a merge (max of registers,
// smem and stack, sum of spills) whose function is empty.
inline resource_report select_report(const std::vector<resource_report>& reports, std::string_view kernel_name) {
  for (const auto& r : reports)
    if (!kernel_name.empty() && r.function == kernel_name) return r;
  if (reports.size() == 1) return reports.front();
  resource_report merged;
  for (const auto& r : reports) {
    merged.registers = std::max(merged.registers, r.registers);
    merged.smem_bytes = std::max(merged.smem_bytes, r.smem_bytes);
    merged.stack_frame = std::max(merged.stack_frame, r.stack_frame);
    merged.barriers = std::max(merged.barriers, r.barriers);
    merged.spill_stores += r.spill_stores;
    merged.spill_loads += r.spill_loads;
    merged.warnings = r.warnings;
  }
  return merged;
}

}  // namespace cake::jit
