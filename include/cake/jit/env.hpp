#pragma once
// Environment switches and toolkit discovery for the JIT. Every switch read here is documented in
// docs/jit.md; this is the only file that calls getenv for the JIT layer.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cake::jit {

// The value of an environment variable, or nullopt when it is unset or empty.
inline std::optional<std::string> env_string(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// A boolean switch: unset, "", "0", "false", "no", "off" mean off; any other value means on.
inline bool env_flag(const char* name) {
  const auto v = env_string(name);
  if (!v) return false;
  return !(*v == "0" || *v == "false" || *v == "FALSE" || *v == "no" || *v == "off" || *v == "OFF");
}

// CAKE_HANG_TIMEOUT_MS=<n>: kernels built by the runtime trap after an mbarrier wait of n ms and print
// the op that waited (emit_options::hang_timeout_ns), so that a schedule that would hang fails instead.
inline unsigned long long env_hang_timeout_ns() {
  const auto v = env_string("CAKE_HANG_TIMEOUT_MS");
  if (!v) return 0;
  const unsigned long long ms = std::strtoull(v->c_str(), nullptr, 10);
  return ms * 1000000ull;
}

// CAKE_TMA_L2_PROMOTION=none|64|128|256: the L2 promotion of every tensor map the runtime encodes, over
// what the program asks for (256 bytes, none for a tensor declared streamed); read once per process. An
// experiment switch for memory-bound kernels (docs/jit.md). Returns the bytes (0 for none), -2 when unset,
// -1 for a value it does not know (the runtime refuses it, naming the variable).
inline int env_tma_l2_promotion_bytes() {
  static const int bytes = [] {
    const auto v = env_string("CAKE_TMA_L2_PROMOTION");
    if (!v) return -2;
    if (*v == "none" || *v == "0") return 0;
    if (*v == "64") return 64;
    if (*v == "128") return 128;
    if (*v == "256") return 256;
    return -1;
  }();
  return bytes;
}

// CAKE_CLUSTER_EXIT=drain|barrier: how a CTA of a cluster leaves (lower::emit_options::cluster_exit), over what
// the caller asked for; read once per process. Returns 0 when unset, 1 for drain, 2 for barrier, -1 for a value
// it does not know (the runtime refuses it, naming the variable).
inline int env_cluster_exit() {
  static const int mode = [] {
    const auto v = env_string("CAKE_CLUSTER_EXIT");
    if (!v) return 0;
    if (*v == "drain") return 1;
    return *v == "barrier" ? 2 : -1;
  }();
  return mode;
}

// Where the CUDA toolkit is, and why that one. NVRTC needs the toolkit's include folders for
// <cuda/std/...> (CCCL lives in $CUDA/include/cccl since CUDA 13, hardware-facts §7).
struct toolkit_location {
  std::filesystem::path root;  // empty when none was found
  std::string found_by;        // "CAKE_CUDA_HOME", "CUDA_HOME", "CUDA_PATH", "CAKE_CUDA_INCLUDE_DIR", "default"
};

// Search order: $CAKE_CUDA_HOME, $CUDA_HOME, $CUDA_PATH, the build-time definition CAKE_CUDA_INCLUDE_DIR
// (a toolkit include folder; its parent is the root), /usr/local/cuda. The first candidate that has an
// include/ folder wins; a variable that points at something else is skipped.
inline toolkit_location find_toolkit() {
  namespace fs = std::filesystem;
  std::vector<toolkit_location> candidates;
  for (const char* var : {"CAKE_CUDA_HOME", "CUDA_HOME", "CUDA_PATH"})
    if (auto v = env_string(var)) candidates.push_back({fs::path(*v), var});
#ifdef CAKE_CUDA_INCLUDE_DIR
  candidates.push_back({fs::path(CAKE_CUDA_INCLUDE_DIR).parent_path(), "CAKE_CUDA_INCLUDE_DIR"});
#endif
  candidates.push_back({fs::path("/usr/local/cuda"), "default"});
  for (auto& c : candidates) {
    std::error_code ec;
    if (fs::is_directory(c.root / "include", ec)) return c;
  }
  return {};
}

// The include folders NVRTC gets for the toolkit: include/cccl (CUDA 13+) and include, where present.
inline std::vector<std::string> toolkit_include_dirs(const toolkit_location& tk) {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  if (tk.root.empty()) return dirs;
  std::error_code ec;
  for (const auto& d : {tk.root / "include" / "cccl", tk.root / "include"})
    if (fs::is_directory(d, ec)) dirs.push_back(d.string());
  return dirs;
}

// An executable by name: on $PATH first, then in the toolkit's bin/. Empty when not found.
inline std::filesystem::path find_program(std::string_view name) {
  namespace fs = std::filesystem;
  std::vector<fs::path> dirs;
  if (auto path = env_string("PATH")) {
    std::string_view rest = *path;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const auto piece = rest.substr(0, colon);
      if (!piece.empty()) dirs.emplace_back(std::string(piece));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (auto tk = find_toolkit(); !tk.root.empty()) dirs.push_back(tk.root / "bin");
  for (const auto& d : dirs) {
    std::error_code ec;
    const auto candidate = d / std::string(name);
    if (fs::is_regular_file(candidate, ec)) return candidate;
  }
  return {};
}

}  // namespace cake::jit
