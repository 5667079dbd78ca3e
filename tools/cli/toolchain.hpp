#pragma once
// Compiling a schedule file into a shared library the tool loads (tools/cli/library.hpp).
//
// The file is included by a generated driver translation unit that also defines the library's two entry
// points; it is compiled with the host compiler against the Cake headers, with a precompiled header of
// <cake/cake.hpp> + <cake/cli/export.hpp> (built once per compiler, flags and header contents into the
// cache), and linked as a shared library. Libraries are cached per file: the key covers the compiler,
// the flags, every Cake header and the file; the other files it includes (-MD) are re-hashed on every
// use, so an edit anywhere rebuilds it.
//
// Where things are (first found wins):
//   Cake headers   $CAKE_INCLUDE_DIR; <exe>/../include (installed); an ancestor of <exe> holding
//                  include/cake/cake.hpp (a build tree inside the source tree); the source tree cake was
//                  built from. The kernel corpus ("kernels/...") beside them: <prefix>/include/cake/corpus
//                  or the source root.
//   compiler       --cxx, $CAKE_CXX, then the compiler cake was built with.
//   cache          $CAKE_CACHE_DIR/cli, $XDG_CACHE_HOME/cake/cli, ~/.cache/cake/cli.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <cake/jit/cache_folder.hpp>

#include "compiler_output.hpp"
#include "process.hpp"

#ifndef CAKE_CLI_CXX
#define CAKE_CLI_CXX "c++"
#endif
#ifndef CAKE_CLI_CXX_ID
#define CAKE_CLI_CXX_ID ""
#endif
#ifndef CAKE_CLI_SOURCE_DIR
#define CAKE_CLI_SOURCE_DIR ""
#endif

namespace cake_cli {

struct toolchain {
  std::string cxx, cxx_id;
  bool clang = false;
  fs::path include_dir;  // holds cake/cake.hpp
  fs::path corpus_dir;   // holds kernels/ (may be empty)
  fs::path cache_dir;    // <cache root>/cli
  std::string header_hash;

  std::vector<std::string> flags() const {
    std::vector<std::string> f = {"-std=c++20", "-fPIC", "-fvisibility=hidden", "-fvisibility-inlines-hidden", "-w"};
    if (clang) {
      f.insert(f.end(), {"-fconstexpr-steps=268435456", "-fno-color-diagnostics"});
    } else {
      f.insert(f.end(), {"-fconstexpr-ops-limit=268435456", "-fconstexpr-loop-limit=1048576", "-fdiagnostics-color=never", "-fno-diagnostics-show-caret",
                         "-ftemplate-backtrace-limit=0"});
    }
    f.push_back("-I" + include_dir.string());
    if (!corpus_dir.empty()) f.push_back("-I" + corpus_dir.string());
    return f;
  }
  std::vector<std::string> library_dirs() const { return {(include_dir / "cake").string() + "/"}; }
};

inline fs::path executable_dir() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}

// Every file under include/cake, path and contents: the precompiled header's (and every library's) key.
inline std::string hash_headers(const fs::path& include_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(include_dir / "cake", ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  hasher h;
  for (const auto& f : files) {
    h.add(f.lexically_relative(include_dir).string());
    if (auto text = read_file(f)) h.add(*text);
  }
  return h.hex();
}

inline std::string find_toolchain(toolchain& t, const std::string& cxx_override) {
  auto has_cake = [](const fs::path& dir) { return !dir.empty() && fs::exists(dir / "cake" / "cake.hpp"); };
  const fs::path exe = executable_dir();
  if (const char* e = std::getenv("CAKE_INCLUDE_DIR"); e && *e) {
    t.include_dir = e;
    if (!has_cake(t.include_dir)) return "CAKE_INCLUDE_DIR=" + std::string(e) + " holds no cake/cake.hpp";
    if (fs::exists(t.include_dir / "cake" / "corpus" / "kernels")) t.corpus_dir = t.include_dir / "cake" / "corpus";
    else if (fs::exists(t.include_dir.parent_path() / "kernels")) t.corpus_dir = t.include_dir.parent_path();
  } else if (has_cake(exe.parent_path() / "include")) {
    t.include_dir = exe.parent_path() / "include";
    if (fs::exists(t.include_dir / "cake" / "corpus" / "kernels")) t.corpus_dir = t.include_dir / "cake" / "corpus";
    else if (fs::exists(exe.parent_path() / "kernels")) t.corpus_dir = exe.parent_path();
  } else {
    for (fs::path d = exe; !d.empty() && d != d.root_path(); d = d.parent_path())
      if (has_cake(d / "include")) {
        t.include_dir = d / "include";
        if (fs::exists(d / "kernels")) t.corpus_dir = d;
        break;
      }
    if (t.include_dir.empty() && has_cake(fs::path(CAKE_CLI_SOURCE_DIR) / "include")) {
      t.include_dir = fs::path(CAKE_CLI_SOURCE_DIR) / "include";
      t.corpus_dir = CAKE_CLI_SOURCE_DIR;
    }
  }
  if (t.include_dir.empty()) return "cannot find the Cake headers (cake/cake.hpp): set CAKE_INCLUDE_DIR to the include folder";
  t.include_dir = fs::weakly_canonical(t.include_dir);
  if (!t.corpus_dir.empty()) t.corpus_dir = fs::weakly_canonical(t.corpus_dir);

  const char* env_cxx = std::getenv("CAKE_CXX");
  t.cxx = !cxx_override.empty() ? cxx_override : (env_cxx && *env_cxx ? env_cxx : CAKE_CLI_CXX);
  if (t.cxx == CAKE_CLI_CXX && *CAKE_CLI_CXX_ID) {
    t.cxx_id = CAKE_CLI_CXX_ID;
  } else {  // another compiler: ask it who it is
    const auto r = run_process({t.cxx, "--version"}, 30);
    if (!r.started) return "cannot run the host compiler: " + r.start_error + " (set CAKE_CXX or pass --cxx)";
    t.cxx_id = trim(r.output.substr(0, r.output.find('\n')));
  }
  t.clang = t.cxx_id.find("lang") != std::string::npos;

  fs::path root;
  if (const char* d = std::getenv("CAKE_CACHE_DIR"); d && *d) root = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) root = fs::path(x) / "cake";
  else if (const char* h = std::getenv("HOME"); h && *h) root = fs::path(h) / ".cache" / "cake";
  else root = fs::temp_directory_path() / ("cake-" + std::to_string(getuid()));
  t.cache_dir = root / "cli";
  // The tool dlopens the schedule libraries it keeps there: the JIT cache's trust model applies to the
  // root and to the tool's folder (cake/jit/cache_folder.hpp), and the tool needs to write it.
  for (const fs::path& folder : {root, t.cache_dir}) {
    const auto f = cake::jit::check_cache_folder(folder);
    if (!f.read || !f.write) return f.problem + " (the cake tool keeps compiled schedule libraries there and loads them)";
  }
  t.header_hash = hash_headers(t.include_dir);
  return {};
}

// ---- the precompiled header ---------------------------------------------------------------------------

struct pch_result {
  bool ok = false;
  std::vector<std::string> use_flags;  // flags that make a compile use it
  std::string key, note;               // note: why there is none (the compile goes on without it)
  bool built = false;
  double build_ms = 0;
};

// Keys hold no absolute paths (the headers count by content), so a cache built in one checkout serves a
// copy of it elsewhere: the build machine's cache can travel with binaries to a GPU machine.
inline std::string pch_key(const toolchain& t) {
  hasher h;
  h.add("cake-cli-pch-2").add(t.cxx_id).add(t.header_hash).add(t.corpus_dir.empty() ? "no-corpus" : "corpus");
  for (const auto& f : t.flags())
    if (f.rfind("-I", 0) != 0) h.add(f);
  return h.hex();
}

inline pch_result ensure_pch(const toolchain& t) {
  pch_result r;
  r.key = pch_key(t);
  const fs::path dir = t.cache_dir / ("pch-" + r.key);
  const fs::path header = dir / "cake_cli_pch.hpp";
  const fs::path binary = t.clang ? fs::path(header.string() + ".pch") : fs::path(header.string() + ".gch");
  auto use = [&] {
    r.ok = true;
    if (t.clang) r.use_flags = {"-include-pch", binary.string()};
    else r.use_flags = {"-include", header.string(), "-Winvalid-pch"};
  };
  if (fs::exists(binary) && fs::exists(header)) {
    use();
    return r;
  }
  stopwatch clock;
  std::error_code ec;
  const std::string header_text =
      "// Generated by the cake tool (tools/cli/toolchain.hpp): the precompiled part of every schedule.\n#pragma once\n#include <cake/cake.hpp>\n#include <cake/cli/export.hpp>\n";
  if (t.clang) {
    // clang records the header's path in the .pch and checks it when the .pch is used: the header is
    // written at its final place (once: a header rewritten under a built .pch would invalidate it) and
    // only the .pch goes through a temporary name and an atomic rename. (Built in a folder renamed
    // afterwards, as for g++ below, every later compile failed: "malformed or corrupted AST file".)
    fs::create_directories(dir, ec);
    if (!fs::exists(header)) {
      const fs::path tmp_header = dir / ("cake_cli_pch.hpp.tmp." + std::to_string(getpid()));
      write_file(tmp_header, header_text);
      fs::create_hard_link(tmp_header, header, ec);  // fails when another cake wrote it first: theirs stays
      fs::remove(tmp_header, ec);
    }
    const fs::path tmp_binary = fs::path(binary.string() + ".tmp." + std::to_string(getpid()));
    std::vector<std::string> cmd = {t.cxx};
    for (const auto& f : t.flags()) cmd.push_back(f);
    cmd.insert(cmd.end(), {"-Xclang", "-fno-pch-timestamp", "-x", "c++-header", header.string(), "-o", tmp_binary.string()});
    const auto p = run_process(cmd, 300);
    if (!p.ok()) {
      fs::remove(tmp_binary, ec);
      r.note = "the precompiled header did not build (" + (p.started ? trim(p.output.substr(0, 400)) : p.start_error) + "); compiling without it";
      return r;
    }
    fs::rename(tmp_binary, binary, ec);
    if (ec) fs::remove(tmp_binary, ec);
    r.built = true;
    r.build_ms = clock.ms();
    use();
    return r;
  }
  const fs::path tmp = t.cache_dir / ("pch-" + r.key + ".tmp." + std::to_string(getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  const fs::path tmp_header = tmp / "cake_cli_pch.hpp";
  write_file(tmp_header, header_text);
  std::vector<std::string> cmd = {t.cxx};
  for (const auto& f : t.flags()) cmd.push_back(f);
  const fs::path tmp_binary = fs::path(tmp_header.string() + ".gch");
  cmd.insert(cmd.end(), {"-x", "c++-header", tmp_header.string(), "-o", tmp_binary.string()});
  const auto p = run_process(cmd, 300);
  if (!p.ok()) {
    fs::remove_all(tmp, ec);
    r.note = "the precompiled header did not build (" + (p.started ? trim(p.output.substr(0, 400)) : p.start_error) + "); compiling without it";
    return r;
  }
  fs::rename(tmp, dir, ec);
  if (ec) fs::remove_all(tmp, ec);  // another cake built it first
  r.built = true;
  r.build_ms = clock.ms();
  use();
  return r;
}

// ---- schedule libraries -------------------------------------------------------------------------------

struct build_result {
  bool ok = false;
  bool cached = false;
  fs::path library;
  std::vector<diagnostic> diagnostics;  // compile errors, as Cake diagnostics
  std::string log;                      // the compiler's output
  std::string environment_error;        // the compiler could not run at all
  double compile_ms = 0, pch_ms = 0;
  std::string pch_note;
};

namespace detail {

// Dependencies from a make-style .d file: the files the compile read.
inline std::vector<std::string> read_depfile(const std::string& text) {
  std::vector<std::string> deps;
  std::string cur;
  bool after_colon = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      continue;
    }
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == ' ') {
      cur += ' ';
      ++i;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\t') {
      if (!cur.empty()) {
        if (!after_colon && cur.back() == ':') after_colon = true;
        else if (after_colon) deps.push_back(cur);
        cur.clear();
      }
      continue;
    }
    cur += c;
  }
  if (!cur.empty() && after_colon) deps.push_back(cur);
  return deps;
}

// Dependencies are recorded relative to the kernel corpus or the schedule's folder where they lie there.
inline std::string relocatable_dep(const std::string& abs, const toolchain& t, const fs::path& schedule_dir) {
  const auto under = [&](const fs::path& root) { return !root.empty() && abs.rfind(root.string() + "/", 0) == 0; };
  if (under(schedule_dir)) return "@schedule/" + abs.substr(schedule_dir.string().size() + 1);
  if (under(t.corpus_dir)) return "@corpus/" + abs.substr(t.corpus_dir.string().size() + 1);
  return abs;
}
inline std::string resolve_dep(const std::string& dep, const toolchain& t, const fs::path& schedule_dir) {
  if (dep.rfind("@schedule/", 0) == 0) return (schedule_dir / dep.substr(10)).string();
  if (dep.rfind("@corpus/", 0) == 0) return (t.corpus_dir / dep.substr(8)).string();
  return dep;
}

inline std::string file_hash(const std::string& path) {
  auto text = read_file(path);
  return text ? hasher().add(*text).hex() : std::string("missing");
}

}  // namespace detail

inline build_result build_schedule(const toolchain& t, const fs::path& schedule) {
  build_result r;
  const fs::path file = fs::weakly_canonical(schedule);
  const auto text = read_file(file);
  if (!text) {
    r.environment_error = "cannot read " + schedule.string();
    return r;
  }
  hasher h;
  h.add("cake-cli-lib-2").add(pch_key(t)).add(file.filename().string()).add(*text);
  const std::string key = h.hex();
  const fs::path entry = t.cache_dir / ("lib-" + file.stem().string().substr(0, 40) + "-" + key);
  r.library = entry / "schedule.so";
  // A cached library is valid while every file it read (outside Cake's headers, which the key covers) is unchanged.
  auto fresh = [&] {
    auto deps = read_file(entry / "deps.txt");
    if (!deps || !fs::exists(r.library)) return false;
    std::istringstream in(*deps);
    std::string line;
    while (std::getline(in, line)) {
      const auto tab = line.find('\t');
      if (tab == std::string::npos) continue;
      if (detail::file_hash(detail::resolve_dep(line.substr(tab + 1), t, file.parent_path())) != line.substr(0, tab)) return false;
    }
    return true;
  };
  if (fresh()) {
    r.ok = true;
    r.cached = true;
    return r;
  }
  const auto pch = ensure_pch(t);  // only a compile needs it
  r.pch_ms = pch.build_ms;
  r.pch_note = pch.note;
  stopwatch clock;
  std::error_code ec;
  const fs::path tmp = t.cache_dir / ("lib-" + key + ".tmp." + std::to_string(getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  const fs::path driver = tmp / "driver.cpp";
  std::string src = "// Generated by the cake tool (tools/cli/toolchain.hpp): the schedule file and the library's entry points.\n";
  if (!pch.ok) src += "#include <cake/cake.hpp>\n#include <cake/cli/export.hpp>\n";
  src += "#include \"" + file.string() + "\"\n";
  src += "extern \"C\" __attribute__((visibility(\"default\"))) const cake::cli::registry* cake_cli_registry_v1() { return &cake::cli::the_registry(); }\n";
  src += "extern \"C\" __attribute__((visibility(\"default\"))) unsigned long long cake_cli_abi_v1() { return cake::cli::abi_fingerprint(); }\n";
  write_file(driver, src);
  std::vector<std::string> cmd = {t.cxx};
  for (const auto& f : t.flags()) cmd.push_back(f);
  for (const auto& f : pch.use_flags) cmd.push_back(f);
  cmd.insert(cmd.end(), {"-shared", "-o", (tmp / "schedule.so").string(), driver.string(), "-MD", "-MF", (tmp / "deps.d").string()});
  setenv("LC_ALL", "C", 1);  // plain ASCII quotes in the compiler's messages
  const auto p = run_process(cmd, 600);
  r.compile_ms = clock.ms();
  r.log = p.output;
  if (!p.started) {
    fs::remove_all(tmp, ec);
    r.environment_error = p.start_error + " (set CAKE_CXX or pass --cxx)";
    return r;
  }
  if (!p.ok()) {
    fs::remove_all(tmp, ec);
    r.diagnostics = parse_compiler_output(p.output, t.library_dirs(), t.clang);
    if (p.timed_out) r.diagnostics.push_back(make_diagnostic("cli.compile-timeout", "the host compiler ran past 600 s on " + schedule.string()));
    else if (p.signal) r.diagnostics.push_back(make_diagnostic("cli.compile-error", "the host compiler was ended by " + signal_name(p.signal)));
    if (r.diagnostics.empty())
      r.diagnostics.push_back(make_diagnostic("cli.compile-error", "the host compiler failed (exit " + std::to_string(p.exit_code) + "): " + trim(p.output.substr(0, 2000))));
    return r;
  }
  // Record the dependencies outside Cake's headers with their hashes.
  std::string deps_txt;
  const std::string cake_headers = (t.include_dir / "cake").string() + "/";
  for (const auto& d : detail::read_depfile(read_file(tmp / "deps.d").value_or(""))) {
    if (d.rfind(cake_headers, 0) == 0 || d.rfind("/usr/", 0) == 0 || d == driver.string() || d.find("cake_cli_pch.hpp") != std::string::npos) continue;
    const std::string abs = fs::weakly_canonical(d).string();
    deps_txt += detail::file_hash(abs) + "\t" + detail::relocatable_dep(abs, t, file.parent_path()) + "\n";
  }
  write_file(tmp / "deps.txt", deps_txt);
  write_file(tmp / "compile.log", p.output);
  // Into place in one step. If an entry is there already, a concurrent cake may have just written it
  // (use it), or it is stale (move it aside first: a reader never sees a half-removed entry).
  for (int attempt = 0; attempt < 3; ++attempt) {
    fs::rename(tmp, entry, ec);
    if (!ec) break;
    if (fresh()) {
      fs::remove_all(tmp, ec);
      break;
    }
    const fs::path trash = t.cache_dir / ("stale-" + key + "." + std::to_string(getpid()) + "." + std::to_string(attempt));
    fs::rename(entry, trash, ec);
    fs::remove_all(trash, ec);
  }
  r.ok = fs::exists(r.library);
  if (!r.ok) r.environment_error = "the compiled library is missing from " + entry.string();
  return r;
}

}  // namespace cake_cli
