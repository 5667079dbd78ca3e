// The JIT cache: memory and disk hits, what the key covers, damaged entries, concurrent writers,
// switches. Each test uses a fresh folder under the system temp directory.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <random>
#include <thread>

#include <unistd.h>

#include <cake/jit/cache.hpp>

using namespace cake::jit;
namespace fs = std::filesystem;

namespace {

struct temp_folder {
  fs::path path;
  temp_folder() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("cake-cache-test-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~temp_folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct notices {
  std::vector<std::string> lines;
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view s) { lines.emplace_back(s); };
  }
  bool any(std::string_view needle) const {
    for (const auto& l : lines)
      if (l.find(needle) != std::string::npos) return true;
    return false;
  }
};

cache_config config_in(const fs::path& dir, notices& n) {
  cache_config c;
  c.dir = dir;
  c.report = n.sink();
  return c;
}

constexpr const char* vadd = R"(
extern "C" __global__ void vadd(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

int entries_in(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string()[0] != '.') ++n;
  return n;
}
bool folder_empty(const fs::path& dir) { return !fs::exists(dir) || fs::is_empty(dir); }

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("cache: a miss compiles, the same build again is a memory hit, a new process a disk hit") {
  temp_folder tmp;
  notices n;
  cache c(config_in(tmp.path, n));
  auto t0 = std::chrono::steady_clock::now();
  const auto first = c.build(vadd, "vadd", "sm_90a");
  const double first_ms = ms_since(t0);
  REQUIRE(first.ok);
  CHECK(first.origin == artifact_origin::compiled);
  CHECK(first.digest.size() == 32);
  CHECK(first.entry == tmp.path / ("vadd." + first.digest));
  for (const char* f : {"kernel.cu", "kernel.ptx", "kernel.cubin", "metadata.txt"}) CHECK(fs::exists(first.entry / f));
  CHECK(folder_empty(tmp.path / ".tmp"));

  t0 = std::chrono::steady_clock::now();
  const auto second = c.build(vadd, "vadd", "sm_90a");
  const double second_ms = ms_since(t0);
  CHECK(second.origin == artifact_origin::memory);
  CHECK(second.digest == first.digest);
  CHECK(second.cubin == first.cubin);
  CHECK(c.stats().compiles == 1);
  CHECK(c.stats().memory_hits == 1);
  CHECK(second_ms * 5 < first_ms);

  cache fresh(config_in(tmp.path, n));  // what another process sees
  const auto third = fresh.build(vadd, "vadd", "sm_90a");
  CHECK(third.origin == artifact_origin::disk);
  CHECK(fresh.stats().compiles == 0);
  CHECK(fresh.stats().disk_hits == 1);
  CHECK(third.digest == first.digest);
  CHECK(third.ptx == first.ptx);
  CHECK(third.cubin == first.cubin);
  CHECK(third.source == vadd);
  CHECK(third.resources.registers == first.resources.registers);
  CHECK(third.resources.function == "vadd");
  CHECK(third.options == first.options);
  CHECK(entries_in(tmp.path) == 1);
  CHECK(n.lines.empty());
}

TEST_CASE("cache: the key covers source, options, target, kernel name and the cubin switch") {
  const compile_options none;
  compile_options defined;
  defined.extra = {"-DWIDTH=4"};
  compile_options ptx_only;
  ptx_only.cubin = false;
  const auto base = cache::key(vadd, "vadd", arch::sm_90a, none);
  CHECK(base == cache::key(vadd, "vadd", arch::sm_90a, none));
  CHECK(base != cache::key(std::string(vadd) + " ", "vadd", arch::sm_90a, none));
  CHECK(base != cache::key(vadd, "vadd", arch::sm_90a, defined));
  CHECK(base != cache::key(vadd, "vadd", arch::sm_80, none));
  CHECK(base != cache::key(vadd, "vadd2", arch::sm_90a, none));
  CHECK(base != cache::key(vadd, "vadd", arch::sm_90a, ptx_only));
}

TEST_CASE("cache: a truncated kernel.cubin is detected, reported once and rebuilt") {
  temp_folder tmp;
  notices n;
  fs::path entry;
  {
    cache c(config_in(tmp.path, n));
    entry = c.build(vadd, "vadd", "sm_90a").entry;
  }
  const auto full = fs::file_size(entry / "kernel.cubin");
  fs::resize_file(entry / "kernel.cubin", full / 2);

  cache c(config_in(tmp.path, n));
  const auto a = c.build(vadd, "vadd", "sm_90a");
  CHECK(a.ok);
  CHECK(a.origin == artifact_origin::compiled);
  CHECK(c.stats().corrupt_entries == 1);
  REQUIRE(n.lines.size() == 1);
  CHECK(n.any("is damaged (kernel.cubin has " + std::to_string(full / 2) + " bytes, the metadata records " +
              std::to_string(full) + "); rebuilding it"));
  CHECK(fs::file_size(entry / "kernel.cubin") == full);
  CHECK(c.build(vadd, "vadd", "sm_90a").origin == artifact_origin::memory);

  cache again(config_in(tmp.path, n));
  CHECK(again.build(vadd, "vadd", "sm_90a").origin == artifact_origin::disk);
  CHECK(n.lines.size() == 1);  // reported once: the rebuilt entry is sound
  CHECK(folder_empty(tmp.path / ".tmp"));
}

TEST_CASE("cache: damaged metadata, a flipped artifact byte and a missing file are all detected") {
  struct damage {
    const char* name;
    const char* expect;
    std::function<void(const fs::path&)> apply;
  };
  const damage cases[] = {
      {"metadata edit", "metadata.txt does not match its keyed checksum",
       [](const fs::path& e) {
         auto text = *detail::read_file(e / "metadata.txt");
         text[text.find("registers ") + 10] ^= 1;
         detail::write_file_synced(e / "metadata.txt", text);
       }},
      {"metadata truncated", "metadata.txt has no checksum line",
       [](const fs::path& e) { fs::resize_file(e / "metadata.txt", 40); }},
      {"ptx byte flipped", "kernel.ptx does not match its checksum",
       [](const fs::path& e) {
         auto text = *detail::read_file(e / "kernel.ptx");
         text[text.size() / 2] ^= 0x20;
         detail::write_file_synced(e / "kernel.ptx", text);
       }},
      {"source missing", "kernel.cu is missing", [](const fs::path& e) { fs::remove(e / "kernel.cu"); }},
      {"metadata missing", "metadata.txt is missing", [](const fs::path& e) { fs::remove(e / "metadata.txt"); }},
  };
  for (const auto& d : cases) {
    CAPTURE(d.name);
    temp_folder tmp;
    notices n;
    fs::path entry;
    {
      cache c(config_in(tmp.path, n));
      entry = c.build(vadd, "vadd", "sm_90a").entry;
    }
    d.apply(entry);
    cache c(config_in(tmp.path, n));
    CHECK(c.build(vadd, "vadd", "sm_90a").origin == artifact_origin::compiled);
    CHECK(c.stats().corrupt_entries == 1);
    CHECK(n.any(d.expect));
    cache again(config_in(tmp.path, n));
    CHECK(again.build(vadd, "vadd", "sm_90a").origin == artifact_origin::disk);
  }
}

TEST_CASE("cache: two concurrent writers of one kernel end with one valid entry") {
  temp_folder tmp;
  notices n;
  cache a(config_in(tmp.path, n)), b(config_in(tmp.path, n));  // two processes, in effect
  artifacts ra, rb;
  std::thread ta([&] { ra = a.build(vadd, "vadd", "sm_90a"); });
  std::thread tb([&] { rb = b.build(vadd, "vadd", "sm_90a"); });
  ta.join();
  tb.join();
  REQUIRE(ra.ok);
  REQUIRE(rb.ok);
  CHECK(ra.digest == rb.digest);
  CHECK(ra.cubin == rb.cubin);
  const auto sa = a.stats(), sb = b.stats();
  // Either both compiled and one lost the rename, or one was late enough to read the other's entry.
  CHECK(sa.lost_races + sb.lost_races + sa.disk_hits + sb.disk_hits == 1);
  CHECK(sa.write_failures + sb.write_failures == 0);
  CHECK(entries_in(tmp.path) == 1);
  CHECK(folder_empty(tmp.path / ".tmp"));
  cache reader(config_in(tmp.path, n));
  CHECK(reader.build(vadd, "vadd", "sm_90a").origin == artifact_origin::disk);
  CHECK(n.lines.empty());
}

TEST_CASE("cache: threads of one cache asking for one kernel compile it once") {
  temp_folder tmp;
  notices n;
  cache c(config_in(tmp.path, n));
  std::vector<std::thread> threads;
  std::vector<artifacts> results(4);
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { results[i] = c.build(vadd, "vadd", "sm_80"); });
  for (auto& t : threads) t.join();
  CHECK(c.stats().compiles == 1);
  CHECK(c.stats().memory_hits == 3);
  for (const auto& r : results) CHECK(r.digest == results[0].digest);
}

TEST_CASE("cache: a failed compile is returned with diagnostics and never stored") {
  temp_folder tmp;
  notices n;
  cache c(config_in(tmp.path, n));
  const char* bad = "extern \"C\" __global__ void broken(int* p) { *p = nope; }\n";
  const auto a = c.build(bad, "broken", "sm_90a");
  CHECK_FALSE(a.ok);
  CHECK(a.entry.empty());
  CHECK(a.diagnostics().find("identifier \"nope\" is undefined") != std::string::npos);
  CHECK(entries_in(tmp.path) == 0);
  CHECK_FALSE(c.build(bad, "broken", "sm_90a").ok);
  CHECK(c.stats().compiles == 2);
}

TEST_CASE("cache: disabled, every build compiles and nothing is written") {
  temp_folder tmp;
  notices n;
  auto cfg = config_in(tmp.path, n);
  cfg.enabled = false;
  cache c(cfg);
  CHECK(c.build(vadd, "vadd", "sm_80").origin == artifact_origin::compiled);
  CHECK(c.build(vadd, "vadd", "sm_80").origin == artifact_origin::compiled);
  CHECK(c.stats().compiles == 2);
  CHECK(entries_in(tmp.path) == 0);
}

TEST_CASE("cache: a folder that cannot be made falls back to memory, with one notice") {
  notices n;
  cache_config cfg;
  cfg.dir = "/proc/cake-cache-cannot-exist";
  cfg.report = n.sink();
  cache c(cfg);
  const auto a = c.build(vadd, "vadd", "sm_80");
  CHECK(a.ok);
  CHECK(a.entry.empty());
  CHECK(c.build(vadd, "vadd", "sm_80").origin == artifact_origin::memory);
  REQUIRE(n.lines.size() == 1);
  CHECK(n.any("cache folder /proc/cake-cache-cannot-exist cannot be used ("));
  CHECK(n.any("caching in memory only"));
}

TEST_CASE("cache: dump switches print the artifact paths, verbose prints one line per build") {
  temp_folder tmp;
  notices n;
  auto cfg = config_in(tmp.path, n);
  cfg.dump_source = cfg.dump_ptx = cfg.dump_sass = true;
  cfg.verbose = true;
  cache c(cfg);
  const auto a = c.build(vadd, "vadd", "sm_90a");
  CHECK(n.any("vadd (sm_90a, " + a.digest.substr(0, 12) + "): compiled in "));
  CHECK(n.any("source of vadd (sm_90a): " + (a.entry / "kernel.cu").string()));
  CHECK(n.any("PTX of vadd (sm_90a): " + (a.entry / "kernel.ptx").string()));
  const bool sass_listed = n.any("SASS of vadd (sm_90a): " + (a.entry / "kernel.sass").string());
  if (sass_listed) CHECK(fs::file_size(a.entry / "kernel.sass") > 0);
  else CHECK(n.any("SASS of vadd (sm_90a) not available"));
  c.build(vadd, "vadd", "sm_90a");
  CHECK(n.any("): memory cache"));
}

TEST_CASE("cache: dumps of an uncached build go to a dump folder") {
  temp_folder tmp;
  notices n;
  auto cfg = config_in(tmp.path, n);
  cfg.enabled = false;
  cfg.dump_source = true;
  cache c(cfg);
  const auto a = c.build(vadd, "vadd", "sm_80");
  const auto dumped = tmp.path / "dump" / ("vadd." + a.digest) / "kernel.cu";
  CHECK(n.any(dumped.string()));
  CHECK(*detail::read_file(dumped) == vadd);
}

TEST_CASE("cache: the configuration is read from the environment") {
  // Saves the variables this test touches and puts them back afterwards.
  struct env_guard {
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    explicit env_guard(std::initializer_list<const char*> names) {
      for (const char* v : names) saved.emplace_back(v, env_string(v));
    }
    ~env_guard() {
      for (const auto& [name, value] : saved) {
        if (value) ::setenv(name.c_str(), value->c_str(), 1);
        else ::unsetenv(name.c_str());
      }
    }
  } guard{"CAKE_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "CAKE_CACHE_DISABLE", "CAKE_DUMP_SOURCE", "CAKE_DUMP_PTX",
          "CAKE_DUMP_SASS", "CAKE_JIT_VERBOSE"};
  ::setenv("CAKE_CACHE_DIR", "/some/where", 1);
  ::setenv("CAKE_CACHE_DISABLE", "1", 1);
  ::setenv("CAKE_DUMP_PTX", "yes", 1);
  ::setenv("CAKE_DUMP_SASS", "0", 1);
  ::unsetenv("CAKE_DUMP_SOURCE");
  ::setenv("CAKE_JIT_VERBOSE", "1", 1);
  auto c = cache_config::from_env();
  CHECK(c.dir == "/some/where");
  CHECK_FALSE(c.enabled);
  CHECK(c.dump_ptx);
  CHECK_FALSE(c.dump_sass);
  CHECK_FALSE(c.dump_source);
  CHECK(c.verbose);
  ::unsetenv("CAKE_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  CHECK(cache_config::from_env().dir == "/xdg/cake");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/someone", 1);
  CHECK(cache_config::from_env().dir == "/home/someone/.cache/cake");
  ::unsetenv("HOME");
  CHECK(cache_config::from_env().dir.empty());  // memory only
}

TEST_CASE("cache: a root the cache creates is private to the user (0700)") {
  temp_folder t;
  notices n;
  const fs::path root = t.path / "new" / "root";
  cache c(config_in(root, n));
  REQUIRE(c.build(vadd, "vadd", arch::sm_90a).ok);
  CHECK((fs::status(root).permissions() & fs::perms::all) == fs::perms::owner_all);
  CHECK(entries_in(root) == 1);
}

TEST_CASE("cache: a root writable by its group or by others is not used at all, and says why") {
  temp_folder t;
  {
    notices n;
    cache writer(config_in(t.path, n));
    REQUIRE(writer.build(vadd, "vadd", arch::sm_90a).ok);  // an entry someone could have planted
  }
  fs::permissions(t.path, fs::perms::all, fs::perm_options::replace);  // 0777
  notices n;
  cache c(config_in(t.path, n));
  const auto a = c.build(vadd, "vadd", arch::sm_90a);
  REQUIRE(a.ok);
  CHECK(a.origin == artifact_origin::compiled);  // the entry on disk was not read
  CHECK(n.any("is writable by its group or by others (mode 0777): it is not used"));
  CHECK(c.stats().disk_hits == 0);
  fs::permissions(t.path, fs::perms::owner_all, fs::perm_options::replace);
}

TEST_CASE("cache: a read-only root (a pre-warmed cache) is read, and new builds are not stored" *
          doctest::skip(::geteuid() == 0)) {  // root writes through any permission: only a user can see read-only
  temp_folder t;
  {
    notices n;
    cache writer(config_in(t.path, n));
    REQUIRE(writer.build(vadd, "vadd", arch::sm_90a).ok);
  }
  fs::permissions(t.path, fs::perms::owner_read | fs::perms::owner_exec, fs::perm_options::replace);  // 0500
  notices n;
  cache c(config_in(t.path, n));
  const auto a = c.build(vadd, "vadd", arch::sm_90a);
  CHECK(a.origin == artifact_origin::disk);
  CHECK(n.any("is read-only: its entries are used, new builds are not stored"));
  CHECK(c.build(std::string(vadd) + "// another kernel\n", "vadd", arch::sm_90a).ok);  // compiled, not stored
  CHECK(entries_in(t.path) == 1);
  CHECK(c.stats().write_failures == 0);
  fs::permissions(t.path, fs::perms::owner_all, fs::perm_options::replace);
}

TEST_CASE("cache: a symbolic link in an entry is not followed (the entry reads as damaged and is rebuilt)") {
  temp_folder t;
  notices n;
  {
    cache writer(config_in(t.path, n));
    REQUIRE(writer.build(vadd, "vadd", arch::sm_90a).ok);
  }
  fs::path entry;
  for (const auto& e : fs::directory_iterator(t.path))
    if (e.is_directory() && e.path().filename().string()[0] != '.') entry = e.path();
  REQUIRE(!entry.empty());
  const fs::path planted = t.path / "planted.cubin";
  fs::copy_file(entry / "kernel.cubin", planted);
  fs::remove(entry / "kernel.cubin");
  fs::create_symlink(planted, entry / "kernel.cubin");
  cache c(config_in(t.path, n));
  const auto a = c.build(vadd, "vadd", arch::sm_90a);
  CHECK(a.origin == artifact_origin::compiled);
  CHECK(c.stats().corrupt_entries == 1);
  CHECK_FALSE(fs::is_symlink(entry / "kernel.cubin"));  // the rebuilt entry replaced the link
}

TEST_CASE("cache: the key does not depend on where the schedule file lives (paths in comments), only on code") {
  const std::string a = "// Generated by Cake from kernel 'k' (sm_90a), schedule /home/a/cake/kernels/x.hpp. Do not edit.\n"
                        "extern \"C\" __global__ void k(float* p) {\n"
                        "  // @op 0 /home/a/cake/kernels/x.hpp:12  #0 fill\n"
                        "  p[0] = 1.0f;  // x/y in code stays\n"
                        "}\n";
  auto with = [&](std::string_view from, std::string_view to) {
    std::string s = a;
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
  };
  const compile_options o;
  const auto key = [&](const std::string& src) { return cache::key(src, "k", arch::sm_90a, o); };
  CHECK(key(a) == key(with("/home/a/cake/", "/opt/checkout-2/")));         // another checkout
  CHECK(key(a) != key(with("x.hpp:12", "x.hpp:13")));                      // another line
  CHECK(key(a) != key(with("kernels/x.hpp", "kernels/y.hpp")));            // another file
  CHECK(key(a) != key(with("p[0] = 1.0f;  // x/y", "p[0] = 2.0f;  // x/y")));  // code
  CHECK(cache::key_source("  // @op 3 /a/b/c.hpp:4  #3 x\nint y = 1 / 2;\n") == "  // @op 3 c.hpp:4  #3 x\nint y = 1 / 2;\n");
}

TEST_CASE("siphash: SipHash-2-4 gives the reference vectors (key 00..0f, messages 00..(n-1))") {
  const siphash_key key{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
  unsigned char msg[64];
  for (int i = 0; i < 64; ++i) msg[i] = static_cast<unsigned char>(i);
  CHECK(siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ull);   // the paper's vectors.h, entry 0
  CHECK(siphash24(key, msg, 15) == 0xa129ca6149be45e5ull);  // the paper's appendix A example
  CHECK(siphash24(key, msg, 8) != siphash24(key, msg, 7));
  CHECK(siphash24(siphash_key{key.k0 ^ 1, key.k1}, msg, 15) != 0xa129ca6149be45e5ull);  // the key matters
}

TEST_CASE("cache: the root gets a private key file, and every process of the root uses the same key") {
  temp_folder t;
  notices n;
  {
    cache c(config_in(t.path, n));
    REQUIRE(c.build(vadd, "vadd", arch::sm_90a).ok);
  }
  const fs::path key = t.path / cache_key_file;
  REQUIRE(fs::is_regular_file(key));
  CHECK((fs::status(key).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  const auto text = *detail::read_file(key);
  cache again(config_in(t.path, n));
  CHECK(again.build(vadd, "vadd", arch::sm_90a).origin == artifact_origin::disk);
  CHECK(*detail::read_file(key) == text);
  CHECK(n.lines.empty());
}

TEST_CASE("cache: an entry signed under another cache's key (planted or copied) is refused and rebuilt") {
  temp_folder a, b;
  notices n;
  fs::path entry_a, entry_b;
  {
    cache ca(config_in(a.path, n)), cb(config_in(b.path, n));
    entry_a = ca.build(vadd, "vadd", arch::sm_90a).entry;
    entry_b = cb.build(vadd, "vadd", arch::sm_90a).entry;
  }
  REQUIRE(entry_a.filename() == entry_b.filename());  // same kernel, same cache key
  CHECK(*detail::read_file(a.path / cache_key_file) != *detail::read_file(b.path / cache_key_file));
  // Plant b's (valid, but foreign) entry in a: every byte of it is well formed, only the key differs.
  fs::remove_all(entry_a);
  fs::copy(entry_b, entry_a, fs::copy_options::recursive);
  cache c(config_in(a.path, n));
  const auto got = c.build(vadd, "vadd", arch::sm_90a);
  CHECK(got.origin == artifact_origin::compiled);
  CHECK(c.stats().corrupt_entries == 1);
  CHECK(n.any("does not match its keyed checksum (damaged, or not written under this cache's key)"));
  cache again(config_in(a.path, n));
  CHECK(again.build(vadd, "vadd", arch::sm_90a).origin == artifact_origin::disk);  // rebuilt under a's key
}

TEST_CASE("cache: an entry in the unkeyed format 1 is refused and rebuilt") {
  temp_folder t;
  notices n;
  fs::path entry;
  {
    cache c(config_in(t.path, n));
    entry = c.build(vadd, "vadd", arch::sm_90a).entry;
  }
  auto text = *detail::read_file(entry / "metadata.txt");
  text.replace(0, entry_format_line.size(), "cake-jit-entry 1\n");
  detail::write_file_synced(entry / "metadata.txt", text);
  cache c(config_in(t.path, n));
  CHECK(c.build(vadd, "vadd", arch::sm_90a).origin == artifact_origin::compiled);
  CHECK(n.any("written in entry format 1, whose checksums are not keyed"));
}

TEST_CASE("cache: a key file others can write, a malformed one or a link makes the root unused, and says why") {
  struct bad_key {
    const char* name;
    const char* expect;
    std::function<void(const fs::path&)> apply;
  };
  const bad_key cases[] = {
      {"writable by others", "is writable by its group or by others (mode 0666)",
       [](const fs::path& k) { fs::permissions(k, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                                     fs::perms::group_write | fs::perms::others_read | fs::perms::others_write,
                                                 fs::perm_options::replace); }},
      {"malformed", "is malformed", [](const fs::path& k) { detail::write_file_synced(k, "cake-cache-key 1\nxyz\n"); }},
      {"a symbolic link", "cannot open the key file",
       [](const fs::path& k) {
         fs::rename(k, k.parent_path() / "elsewhere");
         fs::create_symlink(k.parent_path() / "elsewhere", k);
       }},
  };
  for (const auto& d : cases) {
    CAPTURE(d.name);
    temp_folder t;
    notices n;
    {
      cache c(config_in(t.path, n));
      REQUIRE(c.build(vadd, "vadd", arch::sm_90a).ok);
    }
    d.apply(t.path / cache_key_file);
    cache c(config_in(t.path, n));
    const auto got = c.build(vadd, "vadd", arch::sm_90a);
    CHECK(got.ok);
    CHECK(got.origin == artifact_origin::compiled);  // the disk entry was not trusted
    CHECK(n.any(d.expect));
    CHECK(n.any("caching in memory only"));
    CHECK(c.stats().disk_hits == 0);
  }
}

TEST_CASE("cache: a read-only root without its key file is not read (its entries cannot be verified)" *
          doctest::skip(::geteuid() == 0)) {
  temp_folder t;
  {
    notices n;
    cache writer(config_in(t.path, n));
    REQUIRE(writer.build(vadd, "vadd", arch::sm_90a).ok);
  }
  fs::remove(t.path / cache_key_file);
  fs::permissions(t.path, fs::perms::owner_read | fs::perms::owner_exec, fs::perm_options::replace);  // 0500
  notices n;
  cache c(config_in(t.path, n));
  CHECK(c.build(vadd, "vadd", arch::sm_90a).origin == artifact_origin::compiled);
  CHECK(n.any("it has no key file"));
  fs::permissions(t.path, fs::perms::owner_all, fs::perm_options::replace);
}
