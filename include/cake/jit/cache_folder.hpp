#pragma once
// The trust model of a folder Cake keeps compiled code in and loads it from (the JIT cache's CUBIN
// entries, the cake tool's schedule libraries): whoever can write the folder can make Cake load code of
// their choosing (docs/jit.md, "Trust model"). One verdict for both users:
//   - a folder it creates is made 0700;
//   - a folder owned by another user (root excepted) or writable by its group or others is not used;
//   - a folder the user can read but not write (a pre-warmed cache in a container image) is read only.
#include <cstdio>
#include <filesystem>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

namespace cake::jit {

struct cache_folder_access {
  bool read = false, write = false;
  std::string problem;  // why it is not used, or used read-only ("" when it is fully usable)
};

inline cache_folder_access check_cache_folder(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  cache_folder_access a;
  const std::string dir = folder.string();
  std::error_code ec;
  if (!fs::exists(folder, ec) && fs::create_directories(folder, ec) && !ec) fs::permissions(folder, fs::perms::owner_all, fs::perm_options::replace, ec);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    a.problem = "cache folder " + dir + " cannot be used (" + (ec ? ec.message() : std::string("not a folder")) + ")";
    return a;
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    a.problem = "cache folder " + dir + " belongs to user id " + std::to_string(st.st_uid) + ", not to this user (" + std::to_string(::geteuid()) +
                "): it is not used (set CAKE_CACHE_DIR to a folder of your own)";
    return a;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    a.problem = "cache folder " + dir + " is writable by its group or by others (mode " + mode +
                "): it is not used (chmod go-w it, or set CAKE_CACHE_DIR to a folder of your own)";
    return a;
  }
  a.read = ::access(dir.c_str(), R_OK | X_OK) == 0;
  if (!a.read) {
    a.problem = "cache folder " + dir + " is not readable";
    return a;
  }
  a.write = ::access(dir.c_str(), W_OK) == 0;
  if (!a.write) a.problem = "cache folder " + dir + " is read-only";
  return a;
}

}  // namespace cake::jit
