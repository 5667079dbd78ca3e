#pragma once
// Compiles one CUDA C++ translation unit with NVRTC for an exact target (sm_80, sm_90a, sm_100a):
// PTX always, CUBIN when asked. No GPU and no driver are needed (hardware-facts §7).
// A kernel that fails to compile is a result with ok == false and mapped messages, never an exception;
// environmental failures (NVRTC refusing its options, an unknown target, an NVRTC without the target)
// throw jit::error.
#include <nvrtc.h>

#include <cctype>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <cake/jit/arch.hpp>
#include <cake/jit/compile_log.hpp>
#include <cake/jit/cubin_info.hpp>
#include <cake/jit/env.hpp>
#include <cake/jit/error.hpp>

namespace cake::jit {

struct compile_options {
  bool cubin = true;             // also produce a CUBIN (NVRTC makes one for real sm_XX targets only)
  bool line_info = true;         // -lineinfo: PTX .loc lines, needed to map ptxas errors to source lines
  bool ptxas_verbose = true;     // --ptxas-options=-v: the resource report lands in the log
  bool toolkit_includes = true;  // -I for $CUDA/include/cccl and $CUDA/include (see env.hpp)
  std::vector<std::string> include_dirs;  // more -I folders
  std::vector<std::string> extra;         // more NVRTC flags, appended last (e.g. "-DBLOCK=128", "--use_fast_math")
};

struct nvrtc_version_info {
  int major = 0, minor = 0;
  std::string to_string() const { return std::to_string(major) + "." + std::to_string(minor); }
};

inline nvrtc_version_info nvrtc_version() {
  nvrtc_version_info v;
  if (nvrtcVersion(&v.major, &v.minor) != NVRTC_SUCCESS) throw error("nvrtcVersion failed: NVRTC is not usable");
  return v;
}

// Throws when this NVRTC cannot compile for the target (e.g. NVRTC 12.4 and sm_100a).
inline void require_nvrtc_support(arch target) {
  static const std::vector<int> supported = [] {
    int n = 0;
    std::vector<int> v;
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
      v.resize(static_cast<std::size_t>(n));
      if (nvrtcGetSupportedArchs(v.data()) != NVRTC_SUCCESS) v.clear();
    }
    return v;
  }();
  for (int a : supported)
    if (a == info(target).nvrtc_number) return;
  std::string list;
  for (int a : supported) list += (list.empty() ? "" : ", ") + std::to_string(a);
  throw error("NVRTC " + nvrtc_version().to_string() + " cannot compile for " + std::string(to_string(target)) +
              " (it supports compute capabilities " + list + ")");
}

// The exact NVRTC flags for a target and options (also part of the cache key).
inline std::vector<std::string> nvrtc_flags(arch target, const compile_options& o) {
  std::vector<std::string> f{"-std=c++20", "--gpu-architecture=" + std::string(to_string(target)), "-default-device"};
  if (o.line_info) f.emplace_back("-lineinfo");
  if (o.ptxas_verbose) f.emplace_back("--ptxas-options=-v");
  if (o.toolkit_includes)
    for (const auto& d : toolkit_include_dirs(find_toolkit())) f.push_back("--include-path=" + d);
  for (const auto& d : o.include_dirs) f.push_back("--include-path=" + d);
  for (const auto& e : o.extra) f.push_back(e);
  return f;
}

struct compile_result {
  bool ok = false;
  arch target = arch::sm_90a;
  std::string kernel_name;
  std::string program_name;  // the name NVRTC compiled the source under: "<kernel_name>.cu"
  std::string ptx;
  std::vector<char> cubin;   // empty unless options.cubin
  std::string log;           // NVRTC's full program log
  std::vector<compile_message> messages;
  resource_report resources;              // of kernel_name (see select_report)
  std::vector<resource_report> functions; // every entry function ptxas reported
  std::vector<std::string> options;
  double wall_ms = 0;

  bool has_errors() const {
    for (const auto& m : messages)
      if (m.level == severity::error) return true;
    return !ok;
  }
  // Every error and warning, formatted; for a failed compile with no parsable message, the raw log.
  std::string diagnostics() const {
    std::string s;
    for (const auto& m : messages)
      if (m.level != severity::info || !m.code.empty()) s += m.to_string() + "\n";
    if (!ok && s.empty()) s = log.empty() ? "NVRTC failed without a log\n" : log;
    return s;
  }
};

namespace detail {
inline std::string nvrtc_log(nvrtcProgram p) {
  std::size_t n = 0;
  if (nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n <= 1) return {};
  std::string s(n, '\0');
  if (nvrtcGetProgramLog(p, s.data()) != NVRTC_SUCCESS) return {};
  s.resize(n - 1);  // drop the terminating NUL
  return s;
}
struct program_guard {
  nvrtcProgram p = nullptr;
  ~program_guard() {
    if (p) nvrtcDestroyProgram(&p);
  }
};
// A name NVRTC can use for the program (it shows up in messages and in PTX .file lines).
inline std::string program_name_for(std::string_view kernel_name) {
  std::string s;
  for (char c : kernel_name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return (s.empty() ? std::string("kernel") : s) + ".cu";
}
}  // namespace detail

// The longest kernel name the JIT takes (program names, cache entries and PTX entries derive from it).
// Names a Program gives are at most 31 characters; a review saw NVRTC crash on very long ones.
inline constexpr std::size_t max_kernel_name = 1024;

inline void check_kernel_name(std::string_view kernel_name) {
  if (kernel_name.empty() || kernel_name.size() > max_kernel_name)
    throw argument_error("jit: a kernel name has 1 to " + std::to_string(max_kernel_name) + " characters; this one has " + std::to_string(kernel_name.size()));
}

inline compile_result compile(std::string_view source, std::string_view kernel_name, arch target,
                              const compile_options& options = {}) {
  check_kernel_name(kernel_name);
  require_nvrtc_support(target);
  compile_result r;
  r.target = target;
  r.kernel_name = std::string(kernel_name);
  r.program_name = detail::program_name_for(kernel_name);
  r.options = nvrtc_flags(target, options);

  const auto start = std::chrono::steady_clock::now();
  const std::string text(source);  // NVRTC wants a NUL-terminated string
  detail::program_guard prog;
  if (const auto rc = nvrtcCreateProgram(&prog.p, text.c_str(), r.program_name.c_str(), 0, nullptr, nullptr);
      rc != NVRTC_SUCCESS)
    throw error(std::string("nvrtcCreateProgram failed: ") + nvrtcGetErrorString(rc));
  std::vector<const char*> argv;
  for (const auto& o : r.options) argv.push_back(o.c_str());
  const auto rc = nvrtcCompileProgram(prog.p, static_cast<int>(argv.size()), argv.data());
  r.log = detail::nvrtc_log(prog.p);
  if (rc != NVRTC_SUCCESS && rc != NVRTC_ERROR_COMPILATION) {
    std::string flags;
    for (const auto& o : r.options) flags += " " + o;
    throw error(std::string("nvrtcCompileProgram failed: ") + nvrtcGetErrorString(rc) + " (flags:" + flags + ")" +
                (r.log.empty() ? "" : "\n" + r.log));
  }
  r.ok = rc == NVRTC_SUCCESS;

  // PTX exists even when ptxas failed, and ptxas errors are mapped through it.
  std::size_t n = 0;
  if (nvrtcGetPTXSize(prog.p, &n) == NVRTC_SUCCESS && n > 1) {
    r.ptx.assign(n, '\0');
    if (nvrtcGetPTX(prog.p, r.ptx.data()) == NVRTC_SUCCESS) r.ptx.resize(n - 1);
    else r.ptx.clear();
  }
  if (r.ok && options.cubin) {
    n = 0;
    if (nvrtcGetCUBINSize(prog.p, &n) == NVRTC_SUCCESS && n > 0) {
      r.cubin.resize(n);
      if (nvrtcGetCUBIN(prog.p, r.cubin.data()) != NVRTC_SUCCESS) r.cubin.clear();
    }
    if (r.cubin.empty())
      throw error("NVRTC produced no CUBIN for " + std::string(to_string(target)) + " although compilation succeeded");
  }
  r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  r.messages = parse_compile_log(r.log, r.program_name, source, r.ptx);
  r.functions = parse_resource_reports(r.log);
  r.resources = select_report(r.functions, kernel_name);
  // A log that reported no registers for the kernel (the ptxas -v format differs between NVRTC builds): the
  // CUBIN's own record. Spills are not in it; they stay as the log said (0 when it said nothing).
  if (r.resources.registers == 0 && !r.cubin.empty())
    if (const auto info = cubin_function(std::string_view(r.cubin.data(), r.cubin.size()), kernel_name)) {
      r.resources.function = std::string(kernel_name);
      r.resources.registers = info->registers;
      r.resources.stack_frame = info->frame_size;
      r.resources.from_cubin = true;
    }
  return r;
}

// Same, with the target given as data ("sm_90a"); an unknown target throws.
inline compile_result compile(std::string_view source, std::string_view kernel_name, std::string_view target,
                              const compile_options& options = {}) {
  return compile(source, kernel_name, parse_arch(target), options);
}

}  // namespace cake::jit
