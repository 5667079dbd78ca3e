#pragma once
// Which image of a build a device can run: the CUBIN, the PTX (JIT-compiled by the driver), or neither.
//   sm_90a   runs only on cc 9.0;  sm_100a only on cc 10.0   ("a" targets: exact match, hardware-facts §7)
//   sm_80    CUBIN on cc 8.x; on a newer device the PTX (.target sm_80) is loaded and the driver JITs it
// This is a pure function of the target and the device's facts, so it is tested without a GPU.
#include <string>
#include <string_view>

#include <cake/jit/arch.hpp>

namespace cake::jit {

// What the runtime knows about a device (driver.hpp fills it from cuDeviceGetAttribute).
struct device_info {
  int ordinal = 0;
  std::string name;              // "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int smem_optin_per_block = 0;  // bytes: CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
  int l2_bytes = 0;
  int driver_version = 0;        // cuDriverGetVersion: 13000 for CUDA 13.0

  std::string cc() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }
  // "NVIDIA H200 (cc 9.0)"
  std::string describe() const { return name + " (cc " + cc() + ")"; }
};

enum class image_kind { cubin, ptx, refuse };

constexpr std::string_view to_string(image_kind k) {
  return k == image_kind::cubin ? "CUBIN" : k == image_kind::ptx ? "PTX" : "refused";
}

struct image_choice {
  image_kind kind = image_kind::refuse;
  std::string reason;  // one sentence, with the target, the device and its compute capability
};

inline image_choice choose_image(arch target, const device_info& dev, bool have_cubin, bool have_ptx) {
  const auto& t = info(target);
  const std::string tname(t.name);
  const std::string exact = std::to_string(t.cc_major) + "." + std::to_string(t.cc_minor);
  const auto cubin_or_ptx = [&](const std::string& why) -> image_choice {
    if (have_cubin) return {image_kind::cubin, tname + " CUBIN " + why};
    if (have_ptx) return {image_kind::ptx, "no " + tname + " CUBIN was built; the driver JIT-compiles the PTX for " +
                                               dev.describe()};
    return {image_kind::refuse, "neither a CUBIN nor PTX of the " + tname + " build is available"};
  };
  if (t.arch_specific) {
    if (dev.cc_major == t.cc_major && dev.cc_minor == t.cc_minor) return cubin_or_ptx("runs on " + dev.describe());
    return {image_kind::refuse, tname + " code cannot run on " + dev.describe() + ": arch-specific '" + tname +
                                    "' code runs only on cc " + exact + " devices; build for the device's own target"};
  }
  // sm_80: binary-compatible across cc 8.x; PTX forward-compatible to newer majors.
  if (dev.cc_major == t.cc_major && dev.cc_minor >= t.cc_minor) return cubin_or_ptx("runs on " + dev.describe());
  if (dev.cc_major > t.cc_major) {
    if (have_ptx)
      return {image_kind::ptx, tname + " CUBIN runs only on cc " + std::to_string(t.cc_major) + ".x; loading its compute_" +
                                   std::to_string(t.nvrtc_number) + " PTX, which the driver JIT-compiles for " +
                                   dev.describe()};
    return {image_kind::refuse, tname + " CUBIN cannot run on " + dev.describe() + " and no PTX is available"};
  }
  return {image_kind::refuse, tname + " code cannot run on " + dev.describe() + ": it needs cc " + exact + " or newer"};
}

}  // namespace cake::jit
