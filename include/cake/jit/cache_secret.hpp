#pragma once
// The secret key a cache root's entries are signed with (siphash.hpp): <root>/key, 128 random bits,
// created by the first process that writes the root, mode 0600. Entries signed under another key — planted
// by someone who could write a folder inside the root but not read the key, or copied from another
// cache — fail verification and are rebuilt (docs/jit.md, "Trust model"). A pre-warmed read-only cache
// ships its key file with it; without one its entries cannot be verified and the root is not read.
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include <cake/jit/siphash.hpp>

namespace cake::jit {

inline constexpr const char* cache_key_file = "key";
inline constexpr std::string_view cache_key_header = "cake-cache-key 1\n";

struct cache_secret_result {
  std::optional<siphash_key> key;
  std::string problem;  // why there is no key (the root's entries cannot be verified)
};

namespace detail {

inline std::string key_text(const siphash_key& k) {
  char hex[40];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(k.k0), static_cast<unsigned long long>(k.k1));
  return std::string(cache_key_header) + hex + "\n";
}

inline std::optional<siphash_key> parse_key_text(std::string_view t) {
  if (t.substr(0, cache_key_header.size()) != cache_key_header) return std::nullopt;
  t.remove_prefix(cache_key_header.size());
  if (t.size() != 33 || t[32] != '\n') return std::nullopt;
  std::uint64_t w[2] = {0, 0};
  for (int i = 0; i < 32; ++i) {
    const char c = t[static_cast<std::size_t>(i)];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    w[i / 16] = (w[i / 16] << 4) | static_cast<std::uint64_t>(d);
  }
  return siphash_key{w[0], w[1]};
}

// Reads <root>/key without following a link, checking who may have written it.
inline cache_secret_result read_cache_secret(const std::filesystem::path& file) {
  cache_secret_result r;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    r.problem = errno == ENOENT ? "" : "cannot open the key file " + file.string() + ": " + std::strerror(errno);
    return r;
  }
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= 4096) {
    text.resize(static_cast<std::size_t>(st.st_size));
    const ssize_t got = ::read(fd, text.data(), text.size());
    text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  }
  ::close(fd);
  if (!S_ISREG(st.st_mode)) r.problem = "the key file " + file.string() + " is not a regular file";
  else if (st.st_uid != ::geteuid() && st.st_uid != 0)
    r.problem = "the key file " + file.string() + " belongs to user id " + std::to_string(st.st_uid) + ", not to this user";
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    r.problem = "the key file " + file.string() + " is writable by its group or by others (mode " + mode + ")";
  } else if (!(r.key = parse_key_text(text)))
    r.problem = "the key file " + file.string() + " is malformed (expected \"cake-cache-key 1\" and 32 hex digits)";
  return r;
}

}  // namespace detail

// The root's key: read it, or (when the root is writable and has none) create it. Two processes creating
// it at once agree: each writes a private file and links it into place; the loser reads the winner's.
inline cache_secret_result load_cache_secret(const std::filesystem::path& root, bool may_create) {
  const auto file = root / cache_key_file;
  cache_secret_result r = detail::read_cache_secret(file);
  if (r.key || !r.problem.empty()) return r;
  if (!may_create) {
    r.problem = "it has no key file (" + file.string() + ") to verify its entries with";
    return r;
  }
  siphash_key k;
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      r.problem = std::string("cannot draw a random key (getrandom: ") + std::strerror(errno) + ")";
      return r;
    }
    got += static_cast<std::size_t>(n);
  }
  k.k0 = detail::sip_load_le(bytes, 8);
  k.k1 = detail::sip_load_le(bytes + 8, 8);
  static std::atomic<unsigned long> counter{0};
  const auto tmp = root / (".key." + std::to_string(::getpid()) + "." + std::to_string(counter++));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    r.problem = "cannot create the key file " + tmp.string() + ": " + std::strerror(errno);
    return r;
  }
  const std::string text = detail::key_text(k);
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  const bool linked = written && ::link(tmp.c_str(), file.c_str()) == 0;
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (!written) {
    r.problem = "cannot write the key file " + tmp.string();
    return r;
  }
  if (!linked && link_errno != EEXIST) {
    r.problem = "cannot create the key file " + file.string() + ": " + std::strerror(link_errno);
    return r;
  }
  return detail::read_cache_secret(file);  // ours, or the one another process linked first
}

}  // namespace cake::jit
