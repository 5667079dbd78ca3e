// The doctest main of every GPU test executable. Without a usable driver or device it prints
// "SKIPPED: <reason>" and exits with 77, which ctest reports as skipped (SKIP_RETURN_CODE 77).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <exception>

#include <cake/jit/driver.hpp>

int main(int argc, char** argv) {
  try {
    const auto& d = cake::jit::driver::get();
    const auto& dev = d.device(0);
    std::printf("device 0: %s, %d SMs, %d B L2, driver for CUDA %s (%s)\n", dev.describe().c_str(), dev.sm_count,
                dev.l2_bytes, cake::jit::driver::version_string(d.version()).c_str(), d.library().c_str());
  } catch (const std::exception& e) {
    std::printf("SKIPPED: %s\n", e.what());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
