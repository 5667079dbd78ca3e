#pragma once
// GPU test cases that cannot run on this machine's device say so instead of passing: require_device()
// returns false after recording the running case as skipped, with the reason and the device; the GPU
// tier's main() (tests/gpu/main.cpp) lists the skipped cases after the run and exits 77 (ctest: Skipped)
// when every case that ran was skipped. (Before, such cases returned early and counted as passed.)
//
//   if (!cake_gpu_test::require_device(9, 0, true, "the sm_90a kernels")) return;
#include <string>

#include <cake/jit/driver.hpp>

namespace cake_gpu_test {

// Records the running test case as skipped (defined in main.cpp).
void skip(const std::string& why);

// Device 0 has compute capability major.minor (exact) or at least it (!exact); else skip(...).
inline bool require_device(int major, int minor, bool exact, const char* what) {
  if (!cake::jit::driver::available()) {
    skip(std::string(what) + ": no CUDA driver (" + cake::jit::driver::unavailable_reason() + ")");
    return false;
  }
  const auto& d = cake::jit::driver::get().device(0);
  const bool ok = exact ? (d.cc_major == major && d.cc_minor == minor) : (d.cc_major > major || (d.cc_major == major && d.cc_minor >= minor));
  if (!ok)
    skip(std::string(what) + " need" + (exact ? "" : "s at least") + " compute capability " + std::to_string(major) + "." + std::to_string(minor) +
         "; device 0 is " + d.describe());
  return ok;
}

}  // namespace cake_gpu_test
