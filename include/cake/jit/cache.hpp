#pragma once
// The build entry point: cake::jit::build(source, kernel_name, target, options) -> artifacts.
// A build looks in a memory cache (digest -> artifacts, mutex-protected), then in the disk cache
// (cache_entry.hpp), and compiles with NVRTC only on a miss. The key (digest) covers the full source, the
// NVRTC flags, the target, the kernel name, the NVRTC version and CAKE_VERSION_STRING.
// Environment switches (read once, by default_cache(); all documented in docs/jit.md):
//   CAKE_CACHE_DIR, XDG_CACHE_HOME, HOME   where the disk cache lives
//   CAKE_CACHE_DISABLE=1                   no memory or disk cache: every build compiles
//   CAKE_DUMP_SOURCE=1 / CAKE_DUMP_PTX=1 / CAKE_DUMP_SASS=1   print the path of kernel.cu / .ptx / .sass
//   CAKE_JIT_VERBOSE=1                     one line per build: hit or compile, time, registers, spills
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include <sys/stat.h>
#include <unistd.h>

#include <cake/version.hpp>
#include <cake/jit/cache_entry.hpp>
#include <cake/jit/cache_folder.hpp>
#include <cake/jit/cache_secret.hpp>
#include <cake/jit/env.hpp>
#include <cake/jit/nvrtc.hpp>

namespace cake::jit {

struct cache_config {
  std::filesystem::path dir;  // cache root; empty: memory cache only
  bool enabled = true;        // false: neither memory nor disk cache (CAKE_CACHE_DISABLE=1)
  bool dump_source = false, dump_ptx = false, dump_sass = false;
  bool verbose = false;
  // Receives every notice (a corrupt entry, an unwritable folder, dump paths, verbose lines).
  // Empty: notices go to stderr, one line each, prefixed "cake-jit: ".
  std::function<void(std::string_view)> report;

  static cache_config from_env() {
    cache_config c;
    if (auto d = env_string("CAKE_CACHE_DIR")) c.dir = *d;
    else if (auto x = env_string("XDG_CACHE_HOME")) c.dir = std::filesystem::path(*x) / "cake";
    else if (auto h = env_string("HOME")) c.dir = std::filesystem::path(*h) / ".cache" / "cake";
    c.enabled = !env_flag("CAKE_CACHE_DISABLE");
    c.dump_source = env_flag("CAKE_DUMP_SOURCE");
    c.dump_ptx = env_flag("CAKE_DUMP_PTX");
    c.dump_sass = env_flag("CAKE_DUMP_SASS");
    c.verbose = env_flag("CAKE_JIT_VERBOSE");
    return c;
  }
};

struct cache_stats {
  long compiles = 0, memory_hits = 0, disk_hits = 0;
  long corrupt_entries = 0;  // entries found damaged and rebuilt
  long lost_races = 0;       // entries another writer renamed into place first
  long write_failures = 0;   // entries that could not be written (the build still succeeds)
};

namespace detail {
// The entry folder's name part for a kernel: [A-Za-z0-9_-], at most 64 characters.
inline std::string entry_stem(std::string_view kernel_name) {
  std::string s;
  for (char c : kernel_name.substr(0, 64))
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return s.empty() ? std::string("kernel") : s;
}
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace detail

class cache {
 public:
  explicit cache(cache_config config) : config_(std::move(config)) {}
  cache(const cache&) = delete;
  cache& operator=(const cache&) = delete;

  const cache_config& config() const { return config_; }

  // The source as the key reads it: in comment lines, every path keeps only its file name. Generated
  // sources name the schedule file in comments ("// @op 3 /home/u/src/kernels/gemm/sm90_bf16.hpp:88"),
  // and those paths depend on where the checkout lives; comments change no code, so without them the
  // same kernel has one key in every checkout (and in an installed copy).
  static std::string key_source(std::string_view source) {
    std::string out;
    out.reserve(source.size());
    std::size_t at = 0;
    while (at < source.size()) {
      std::size_t end = source.find('\n', at);
      if (end == std::string_view::npos) end = source.size();
      const std::string_view line = source.substr(at, end - at);
      const std::size_t first = line.find_first_not_of(" \t");
      if (first == std::string_view::npos || line.substr(first, 2) != "//") {
        out.append(line);
      } else {  // a comment line: each space-separated token that holds a '/' keeps what follows its last '/'
        std::size_t i = 0;
        while (i < line.size()) {
          std::size_t j = line.find(' ', i);
          if (j == std::string_view::npos) j = line.size();
          std::string_view token = line.substr(i, j - i);
          if (token.substr(0, 2) != "//" && token.find('/') != std::string_view::npos) token = token.substr(token.rfind('/') + 1);
          out.append(token);
          if (j < line.size()) out += ' ';
          i = j + 1;
        }
      }
      if (end < source.size()) out += '\n';
      at = end + 1;
    }
    return out;
  }

  // The cache key of a build.
  static std::string key(std::string_view source, std::string_view kernel_name, arch target,
                         const compile_options& options) {
    digest_builder d;
    d.field("cake-jit-key/1").field(CAKE_VERSION_STRING).field("nvrtc " + nvrtc_version().to_string());
    d.field(to_string(target)).field(kernel_name).field(options.cubin ? "cubin" : "ptx-only");
    const auto flags = nvrtc_flags(target, options);
    d.field(std::to_string(flags.size()));
    for (const auto& f : flags) d.field(f);
    return d.field(key_source(source)).hex();
  }

  std::filesystem::path entry_path(std::string_view kernel_name, std::string_view digest) const {
    if (config_.dir.empty()) return {};
    return config_.dir / (detail::entry_stem(kernel_name) + "." + std::string(digest));
  }

  artifacts build(std::string_view source, std::string_view kernel_name, arch target,
                  const compile_options& options = {}) {
    check_kernel_name(kernel_name);
    const auto digest = key(source, kernel_name, target, options);
    if (!config_.enabled) return finish(compile_now(source, kernel_name, target, options, digest));

    std::shared_ptr<slot> s;
    {
      std::lock_guard lock(slots_mutex_);
      auto& p = slots_[digest];
      if (!p) p = std::make_shared<slot>();
      s = p;
    }
    // One build per digest at a time: a second thread asking for the same kernel waits and then hits.
    std::lock_guard building(s->mutex);
    if (s->value) {
      ++memory_hits_;
      artifacts a = *s->value;
      a.origin = artifact_origin::memory;
      return finish(std::move(a));
    }
    const auto folder = disk().read ? entry_path(kernel_name, digest) : std::filesystem::path{};
    bool replace_corrupt = false;
    if (!folder.empty()) {
      std::string problem;
      if (auto a = read_entry(folder, digest, disk_.key, problem)) {
        ++disk_hits_;
        s->value = *a;
        return finish(std::move(*a));
      }
      if (!problem.empty()) {
        ++corrupt_entries_;
        replace_corrupt = true;
        notice("cache entry " + folder.string() + " is damaged (" + problem + "); rebuilding it");
      }
    }
    artifacts a = compile_now(source, kernel_name, target, options, digest);
    if (a.ok && !folder.empty() && disk().write) store(a, folder, replace_corrupt);
    if (a.ok) s->value = a;
    return finish(std::move(a));
  }

  artifacts build(std::string_view source, std::string_view kernel_name, std::string_view target,
                  const compile_options& options = {}) {
    return build(source, kernel_name, parse_arch(target), options);
  }

  cache_stats stats() const {
    return {compiles_.load(), memory_hits_.load(), disk_hits_.load(), corrupt_entries_.load(), lost_races_.load(),
            write_failures_.load()};
  }

  // Forgets the memory cache (the disk cache stays).
  void clear_memory() {
    std::lock_guard lock(slots_mutex_);
    slots_.clear();
  }

 private:
  struct slot {
    std::mutex mutex;
    std::optional<artifacts> value;
  };

  cache_config config_;
  std::mutex slots_mutex_;
  std::unordered_map<std::string, std::shared_ptr<slot>> slots_;
  std::atomic<long> compiles_{0}, memory_hits_{0}, disk_hits_{0}, corrupt_entries_{0}, lost_races_{0},
      write_failures_{0};
  std::mutex notice_mutex_;
  std::set<std::string> dumped_;  // digests whose dump paths were printed (guarded by notice_mutex_)
  struct disk_access {
    bool read = false, write = false;
    siphash_key key;  // the root's secret (cache_secret.hpp): entries are signed and verified with it
  };
  std::once_flag disk_checked_;
  disk_access disk_;

  void notice(const std::string& text) {
    std::lock_guard lock(notice_mutex_);
    if (config_.report) config_.report(text);
    else std::fprintf(stderr, "cake-jit: %s\n", text.c_str());
  }

  // What the process may do with the cache root, decided once (and said once when it is less than both):
  // the trust model of cache_folder.hpp (not used when another user owns it or others can write it; read
  // only when it cannot be written).
  disk_access disk() {
    std::call_once(disk_checked_, [&] {
      if (config_.dir.empty()) return;
      const cache_folder_access f = check_cache_folder(config_.dir);
      if (!f.read) {
        notice(f.problem + "; caching in memory only");
        return;
      }
      const cache_secret_result secret = load_cache_secret(config_.dir, f.write);
      if (!secret.key) {
        notice("cache folder " + config_.dir.string() + ": " + secret.problem +
               "; caching in memory only (docs/jit.md, trust model)");
        return;
      }
      disk_.key = *secret.key;
      disk_.read = true;
      std::error_code ec;
      if (f.write) std::filesystem::create_directories(config_.dir / ".tmp", ec);
      disk_.write = f.write && !ec;
      if (!disk_.write) notice("cache folder " + config_.dir.string() + " is read-only: its entries are used, new builds are not stored");
    });
    return disk_;
  }

  artifacts compile_now(std::string_view source, std::string_view kernel_name, arch target,
                        const compile_options& options, const std::string& digest) {
    ++compiles_;
    compile_result r = compile(source, kernel_name, target, options);
    artifacts a;
    a.ok = r.ok;
    a.kernel_name = std::string(kernel_name);
    a.target = target;
    a.digest = digest;
    a.program_name = std::move(r.program_name);
    a.source = std::string(source);
    a.ptx = std::move(r.ptx);
    a.cubin = std::move(r.cubin);
    a.log = std::move(r.log);
    a.messages = std::move(r.messages);
    a.resources = std::move(r.resources);
    a.options = std::move(r.options);
    a.nvrtc_version = nvrtc_version().to_string();
    a.compile_ms = r.wall_ms;
    a.origin = artifact_origin::compiled;
    return a;
  }

  // Writes the entry into .tmp/, then renames it into place. A writer that loses the race deletes its copy.
  void store(artifacts& a, const std::filesystem::path& folder, bool replace_corrupt) {
    namespace fs = std::filesystem;
    static std::atomic<unsigned long> counter{0};
    const auto unique = std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
                        std::to_string(reinterpret_cast<std::uintptr_t>(this) & 0xffffff);
    const fs::path tmp = config_.dir / ".tmp" / (folder.filename().string() + "." + unique);
    std::error_code ec;
    try {
      fs::create_directories(tmp);
      write_entry_files(tmp, a, disk_.key);
      if (replace_corrupt) {  // move the damaged entry out of the way, then delete it
        const fs::path trash = config_.dir / ".tmp" / (folder.filename().string() + ".damaged." + unique);
        fs::rename(folder, trash, ec);
        fs::remove_all(trash, ec);
      }
      fs::rename(tmp, folder, ec);
      if (ec == std::errc::directory_not_empty || ec == std::errc::file_exists) {
        ++lost_races_;  // another writer was first; its entry has the same content
        fs::remove_all(tmp, ec);
      } else if (ec) {
        throw error("cannot rename " + tmp.string() + " to " + folder.string() + ": " + ec.message());
      } else {
        detail::sync_folder(config_.dir);
      }
      a.entry = folder;
    } catch (const std::exception& e) {
      ++write_failures_;
      fs::remove_all(tmp, ec);
      notice(std::string("cannot write cache entry: ") + e.what() + "; the build result is used without caching it");
    }
  }

  artifacts finish(artifacts a) {
    if (config_.verbose) {
      std::string line = a.kernel_name + " (" + std::string(to_string(a.target)) + ", " + a.digest.substr(0, 12) +
                         "): " + std::string(to_string(a.origin));
      if (a.origin == artifact_origin::compiled) {
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.1f", a.compile_ms);
        line += std::string(" in ") + ms + " ms";
      }
      if (!a.ok) line += ", FAILED";
      else
        line += ", " + std::to_string(a.resources.registers) + " registers, " + std::to_string(a.resources.spill_stores) +
                " B spill stores, " + std::to_string(a.resources.spill_loads) + " B spill loads, " +
                std::to_string(a.resources.smem_bytes) + " B static smem";
      if (!a.entry.empty()) line += " -> " + a.entry.string();
      notice(line);
    }
    if (config_.dump_source || config_.dump_ptx || config_.dump_sass) dump(a);
    return a;
  }

  void dump(const artifacts& a) {
    namespace fs = std::filesystem;
    {
      std::lock_guard lock(notice_mutex_);
      if (!dumped_.insert(a.digest).second) return;  // once per kernel and process
    }
    fs::path folder = a.entry;
    try {
      if (folder.empty()) {  // not on disk: write the dumps to a folder of their own
        const auto root = config_.dir.empty() ? fs::temp_directory_path() / "cake-dump" : config_.dir / "dump";
        folder = root / (detail::entry_stem(a.kernel_name) + "." + a.digest);
        fs::create_directories(folder);
        if (config_.dump_source) detail::write_file_synced(folder / "kernel.cu", a.source);
        if (config_.dump_ptx) detail::write_file_synced(folder / "kernel.ptx", a.ptx);
        if (config_.dump_sass && !a.cubin.empty())
          detail::write_file_synced(folder / "kernel.cubin", std::string_view(a.cubin.data(), a.cubin.size()));
      }
    } catch (const std::exception& e) {
      notice(std::string("cannot write dumps: ") + e.what());
      return;
    }
    const std::string what = a.kernel_name + " (" + std::string(to_string(a.target)) + ")";
    if (config_.dump_source) notice("source of " + what + ": " + (folder / "kernel.cu").string());
    if (config_.dump_ptx) notice("PTX of " + what + ": " + (folder / "kernel.ptx").string());
    if (!config_.dump_sass) return;
    if (a.cubin.empty()) return notice("SASS of " + what + " not available: no CUBIN was built");
    const auto cuobjdump = find_program("cuobjdump");
    const auto nvdisasm = cuobjdump.empty() ? find_program("nvdisasm") : fs::path{};
    if (cuobjdump.empty() && nvdisasm.empty())
      return notice("SASS of " + what + " not available: neither cuobjdump nor nvdisasm was found on PATH or in "
                    "the CUDA toolkit's bin/");
    const auto sass = folder / "kernel.sass";
    const std::string cmd =
        (cuobjdump.empty() ? detail::shell_quote(nvdisasm.string()) : detail::shell_quote(cuobjdump.string()) + " --dump-sass") +
        " " + detail::shell_quote((folder / "kernel.cubin").string()) + " > " + detail::shell_quote(sass.string()) + " 2>&1";
    if (std::system(cmd.c_str()) == 0) notice("SASS of " + what + ": " + sass.string());
    else notice("SASS of " + what + " not available: `" + cmd + "` failed (output in " + sass.string() + ")");
  }
};

// The process-wide cache, configured from the environment on first use.
inline cache& default_cache() {
  static cache c(cache_config::from_env());
  return c;
}

// Compiles (or finds) the artifacts of one kernel. Never throws for a kernel that does not compile:
// check .ok and .diagnostics(). Throws jit::error for an unknown target or an unusable NVRTC.
inline artifacts build(std::string_view source, std::string_view kernel_name, std::string_view target,
                       const compile_options& options = {}) {
  return default_cache().build(source, kernel_name, target, options);
}
inline artifacts build(std::string_view source, std::string_view kernel_name, arch target,
                       const compile_options& options = {}) {
  return default_cache().build(source, kernel_name, target, options);
}

}  // namespace cake::jit
