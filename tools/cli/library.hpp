#pragma once
// A compiled schedule library, loaded: the kernels its CAKE_EXPORTs registered. The Programs live in
// the library (their names and source locations point into it), so it stays loaded for the tool's life.
#include <dlfcn.h>

#include <string>
#include <vector>

#include <cake/cli/export.hpp>

namespace cake_cli {

struct schedule_library {
  void* handle = nullptr;
  const cake::cli::registry* reg = nullptr;
  std::string error;  // why it could not be used

  const std::vector<cake::cli::exported_kernel>& kernels() const {
    static const std::vector<cake::cli::exported_kernel> none;
    return reg ? reg->kernels : none;
  }
};

inline schedule_library load_schedule(const std::string& path) {
  schedule_library lib;
  dlerror();
  lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    const char* e = dlerror();
    lib.error = "cannot load the compiled schedule " + path + ": " + (e ? e : "unknown reason");
    return lib;
  }
  using abi_fn = unsigned long long (*)();
  using reg_fn = const cake::cli::registry* (*)();
  auto abi = reinterpret_cast<abi_fn>(dlsym(lib.handle, "cake_cli_abi_v1"));
  auto reg = reinterpret_cast<reg_fn>(dlsym(lib.handle, "cake_cli_registry_v1"));
  if (!abi || !reg) {
    lib.error = "the compiled schedule " + path + " lacks the cake entry points";
    return lib;
  }
  if (abi() != cake::cli::abi_fingerprint()) {
    lib.error = "the schedule was compiled against other Cake headers than this cake tool was built with (the Program layout differs): rebuild the tool, or point CAKE_INCLUDE_DIR at its headers";
    return lib;
  }
  lib.reg = reg();
  return lib;
}

}  // namespace cake_cli
