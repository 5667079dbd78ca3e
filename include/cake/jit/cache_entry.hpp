#pragma once
// What a build produces (artifacts) and how it is stored on disk: one folder per entry,
//   <root>/<kernel>.<digest>/kernel.cu, kernel.ptx, kernel.cubin (when built), metadata.txt
// metadata.txt holds the versions, options, resource report, NVRTC log and, for every artifact, its
// size and keyed checksum; its last line is a keyed checksum of everything above it. The checksums are
// SipHash-2-4 under the root's secret key (cache_secret.hpp): they catch damage and refuse entries not
// written by a holder of the key. Entries are written into
// <root>/.tmp/, fsynced, and renamed into place in one step, so a reader sees a whole entry or none.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <cake/version.hpp>
#include <cake/jit/arch.hpp>
#include <cake/jit/compile_log.hpp>
#include <cake/jit/error.hpp>
#include <cake/jit/hash.hpp>
#include <cake/jit/siphash.hpp>

namespace cake::jit {

enum class artifact_origin { compiled, memory, disk };

constexpr std::string_view to_string(artifact_origin o) {
  return o == artifact_origin::compiled ? "compiled" : o == artifact_origin::memory ? "memory cache" : "disk cache";
}

struct artifacts {
  bool ok = false;           // false: the kernel did not compile; see messages / diagnostics()
  std::string kernel_name;   // the kernel's entry symbol (extern "C" name) and the cache entry's name
  arch target = arch::sm_90a;
  std::string digest;        // the cache key (32 hex digits)
  std::string program_name;  // "<kernel_name>.cu", the name in NVRTC messages
  std::string source;
  std::string ptx;
  std::vector<char> cubin;
  std::string log;           // NVRTC's program log (front end and ptxas)
  std::vector<compile_message> messages;
  resource_report resources;
  std::vector<std::string> options;
  std::string nvrtc_version;
  double compile_ms = 0;     // wall time of the NVRTC run that produced these artifacts
  artifact_origin origin = artifact_origin::compiled;
  std::filesystem::path entry;  // the cache folder; empty when the artifacts are not on disk

  std::string diagnostics() const {
    std::string s;
    for (const auto& m : messages) s += m.to_string() + "\n";
    if (!ok && s.empty()) s = log.empty() ? "compilation failed without a log\n" : log;
    return s;
  }
};

namespace detail {

inline std::string escape_value(std::string_view v) {
  std::string s;
  for (char c : v) {
    if (c == '\\') s += "\\\\";
    else if (c == '\n') s += "\\n";
    else if (c == '\r') s += "\\r";
    else s += c;
  }
  return s;
}
inline std::string unescape_value(std::string_view v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) {
      const char n = v[++i];
      s += n == 'n' ? '\n' : n == 'r' ? '\r' : n;
    } else {
      s += v[i];
    }
  }
  return s;
}

// A file of an entry; a symbolic link is not followed (it reads as missing: the entry is damaged).
inline std::optional<std::string> read_file(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return data;
}

// Writes a file and fsyncs it; throws jit::error naming the file and the system's reason.
inline void write_file_synced(const std::filesystem::path& p, std::string_view data) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw error("cannot create " + p.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < data.size()) {
    const auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      throw error("cannot write " + p.string() + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int e = errno;
  ::close(fd);
  if (!synced) throw error("cannot fsync " + p.string() + ": " + std::strerror(e));
}

// fsync of a folder, so that the names in it (a rename) are durable. Best effort.
inline void sync_folder(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

inline std::string file_line(const siphash_key& key, std::string_view name, std::string_view data) {
  return "file " + std::string(name) + " " + std::to_string(data.size()) + " " + keyed_digest(key, data) + "\n";
}

}  // namespace detail

// The metadata text of an entry; the artifact files are written next to it by write_entry_files.
inline constexpr std::string_view entry_format_line = "cake-jit-entry 2\n";  // 2: keyed checksums

inline std::string entry_metadata(const artifacts& a, const siphash_key& key) {
  std::string m(entry_format_line);
  auto kv = [&](std::string_view k, std::string_view v) { m += std::string(k) + " " + detail::escape_value(v) + "\n"; };
  kv("cake_version", CAKE_VERSION_STRING);
  kv("nvrtc_version", a.nvrtc_version);
  kv("target", to_string(a.target));
  kv("kernel", a.kernel_name);
  kv("digest", a.digest);
  kv("program_name", a.program_name);
  kv("compile_ms", std::to_string(a.compile_ms));
  for (const auto& o : a.options) kv("option", o);
  const auto& r = a.resources;
  kv("resources.function", r.function);
  kv("resources.registers", std::to_string(r.registers));
  kv("resources.spill_stores", std::to_string(r.spill_stores));
  kv("resources.spill_loads", std::to_string(r.spill_loads));
  kv("resources.smem_bytes", std::to_string(r.smem_bytes));
  kv("resources.stack_frame", std::to_string(r.stack_frame));
  kv("resources.barriers", std::to_string(r.barriers));
  for (const auto& w : r.warnings) kv("resources.warning", w);
  kv("log", a.log);
  m += detail::file_line(key, "kernel.cu", a.source);
  m += detail::file_line(key, "kernel.ptx", a.ptx);
  if (!a.cubin.empty()) m += detail::file_line(key, "kernel.cubin", std::string_view(a.cubin.data(), a.cubin.size()));
  m += "checksum " + keyed_digest(key, m) + "\n";
  return m;
}

// Writes the files of an entry into an (empty, existing) folder, metadata last, each one fsynced.
inline void write_entry_files(const std::filesystem::path& folder, const artifacts& a, const siphash_key& key) {
  detail::write_file_synced(folder / "kernel.cu", a.source);
  detail::write_file_synced(folder / "kernel.ptx", a.ptx);
  if (!a.cubin.empty())
    detail::write_file_synced(folder / "kernel.cubin", std::string_view(a.cubin.data(), a.cubin.size()));
  detail::write_file_synced(folder / "metadata.txt", entry_metadata(a, key));
  detail::sync_folder(folder);
}

// Reads and verifies an entry. Returns the artifacts, or nullopt with `problem` saying what is wrong
// (empty problem: the entry does not exist, a plain miss).
inline std::optional<artifacts> read_entry(const std::filesystem::path& folder, std::string_view expected_digest,
                                           const siphash_key& secret, std::string& problem) {
  problem.clear();
  auto fail = [&](std::string why) -> std::optional<artifacts> {
    problem = std::move(why);
    return std::nullopt;
  };
  std::error_code ec;
  if (!std::filesystem::exists(folder, ec)) return std::nullopt;
  const auto meta = detail::read_file(folder / "metadata.txt");
  if (!meta) return fail("metadata.txt is missing");
  if (meta->compare(0, entry_format_line.size(), entry_format_line) != 0)
    return fail(meta->compare(0, 16, "cake-jit-entry 1") == 0 ? "written in entry format 1, whose checksums are not keyed"
                                                              : "metadata.txt does not start with \"cake-jit-entry 2\"");
  const auto sum_at = meta->rfind("checksum ");
  if (sum_at == std::string::npos || (sum_at > 0 && (*meta)[sum_at - 1] != '\n'))
    return fail("metadata.txt has no checksum line (truncated?)");
  const std::string_view body(meta->data(), sum_at);
  std::string_view recorded(meta->data() + sum_at + 9, meta->size() - sum_at - 9);
  while (!recorded.empty() && (recorded.back() == '\n' || recorded.back() == '\r')) recorded.remove_suffix(1);
  if (recorded != keyed_digest(secret, body))
    return fail("metadata.txt does not match its keyed checksum (damaged, or not written under this cache's key)");

  artifacts a;
  a.ok = true;
  a.origin = artifact_origin::disk;
  a.entry = folder;
  std::string target_name, file_problem;
  detail::for_each_line(body, [&](std::string_view line, int number) {
    if (number == 1 || line.empty()) return;
    const auto sp = line.find(' ');
    const auto key = line.substr(0, sp);
    const auto value = detail::unescape_value(sp == std::string_view::npos ? "" : line.substr(sp + 1));
    auto as_int = [&] { return static_cast<int>(detail::to_int(value).value_or(0)); };
    if (key == "nvrtc_version") a.nvrtc_version = value;
    else if (key == "target") target_name = value;
    else if (key == "kernel") a.kernel_name = value;
    else if (key == "digest") a.digest = value;
    else if (key == "program_name") a.program_name = value;
    else if (key == "compile_ms") a.compile_ms = std::strtod(value.c_str(), nullptr);
    else if (key == "option") a.options.push_back(value);
    else if (key == "resources.function") a.resources.function = value;
    else if (key == "resources.registers") a.resources.registers = as_int();
    else if (key == "resources.spill_stores") a.resources.spill_stores = as_int();
    else if (key == "resources.spill_loads") a.resources.spill_loads = as_int();
    else if (key == "resources.smem_bytes") a.resources.smem_bytes = as_int();
    else if (key == "resources.stack_frame") a.resources.stack_frame = as_int();
    else if (key == "resources.barriers") a.resources.barriers = as_int();
    else if (key == "resources.warning") a.resources.warnings.push_back(value);
    else if (key == "log") a.log = value;
    else if (key == "file" && file_problem.empty()) {
      // "file <name> <size> <checksum>"
      std::string_view rest = line.substr(sp + 1);
      const auto name = detail::next_token(rest);
      const auto size = detail::to_int(detail::next_token(rest));
      const auto sum = detail::next_token(rest);
      const auto data = detail::read_file(folder / std::string(name));
      if (!data) file_problem = std::string(name) + " is missing";
      else if (!size || data->size() != static_cast<std::size_t>(*size))
        file_problem = std::string(name) + " has " + std::to_string(data->size()) + " bytes, the metadata records " +
                       std::to_string(size.value_or(-1));
      else if (keyed_digest(secret, *data) != sum) file_problem = std::string(name) + " does not match its checksum";
      else if (name == "kernel.cu") a.source = std::move(*data);
      else if (name == "kernel.ptx") a.ptx = std::move(*data);
      else if (name == "kernel.cubin") a.cubin.assign(data->begin(), data->end());
    }
  });
  if (!file_problem.empty()) return fail(file_problem);
  if (a.digest != expected_digest)
    return fail("metadata.txt names digest " + a.digest + ", the folder is for " + std::string(expected_digest));
  try {
    a.target = parse_arch(target_name);
  } catch (const error&) {
    return fail("metadata.txt names an unknown target '" + target_name + "'");
  }
  a.messages = parse_compile_log(a.log, a.program_name, a.source, a.ptx);
  return a;
}

}  // namespace cake::jit
