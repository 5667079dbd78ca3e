// The driver as far as it can be tested anywhere: loading failures name their cause, and the choice of
// image (CUBIN, PTX or refusal) per target and device is a pure rule.
#include <doctest/doctest.h>

#include <cake/jit/driver.hpp>
#include <cake/jit/module.hpp>

using namespace cake::jit;

TEST_CASE("driver: a library that is not there gives the 'no CUDA driver' error naming it") {
  CHECK_THROWS_WITH_AS(driver::load("libcuda_cake_test_absent.so.1"),
                       doctest::Contains("no CUDA driver: dlopen(libcuda_cake_test_absent.so.1) failed: "),
                       cake::jit::error);
}

TEST_CASE("driver: get() either works or says why, naming libcuda") {
  if (driver::available()) {
    const auto& d = driver::get();
    CHECK(d.device_count() > 0);
    const auto& dev = d.device(0);
    CHECK_FALSE(dev.name.empty());
    CHECK(dev.cc_major >= 7);
    CHECK(dev.sm_count > 0);
    CHECK(dev.l2_bytes > 0);
    CHECK(dev.smem_optin_per_block >= 48 * 1024);
    CHECK_THROWS_WITH_AS(d.device(d.device_count()), doctest::Contains("no CUDA device"), cake::jit::error);
  } else {
    const auto why = driver::unavailable_reason();
    INFO(why);
    CHECK(why.find("libcuda.so.1") != std::string::npos);
    CHECK((why.starts_with("no CUDA driver: dlopen(libcuda.so.1) failed") || why.starts_with("no CUDA device") ||
           why.starts_with("CUDA driver unusable")));
    CHECK_THROWS_WITH_AS(driver::get(), doctest::Contains("libcuda.so.1"), cake::jit::error);
    CHECK_THROWS_WITH_AS(driver::get(), why.c_str(), cake::jit::error);  // the same message every time
  }
}

TEST_CASE("driver: version numbers print as major.minor") {
  CHECK(driver::version_string(13000) == "13.0");
  CHECK(driver::version_string(12080) == "12.8");
}

namespace {
device_info device(const char* name, int major, int minor) {
  device_info d;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  return d;
}
}  // namespace

TEST_CASE("compat: arch-specific targets run only on their exact compute capability") {
  const auto h200 = device("NVIDIA H200", 9, 0);
  const auto b200 = device("NVIDIA B200", 10, 0);
  const auto a100 = device("NVIDIA A100-SXM4-80GB", 8, 0);
  const auto gb300 = device("NVIDIA GB300", 10, 3);

  auto c = choose_image(arch::sm_90a, h200, true, true);
  CHECK(c.kind == image_kind::cubin);
  CHECK(c.reason == "sm_90a CUBIN runs on NVIDIA H200 (cc 9.0)");

  c = choose_image(arch::sm_90a, h200, false, true);
  CHECK(c.kind == image_kind::ptx);

  c = choose_image(arch::sm_100a, h200, true, true);
  CHECK(c.kind == image_kind::refuse);
  CHECK(c.reason.starts_with("sm_100a code cannot run on NVIDIA H200 (cc 9.0)"));

  CHECK(choose_image(arch::sm_100a, b200, true, true).kind == image_kind::cubin);
  CHECK(choose_image(arch::sm_100a, gb300, true, true).kind == image_kind::refuse);
  CHECK(choose_image(arch::sm_90a, b200, true, true).kind == image_kind::refuse);
  c = choose_image(arch::sm_90a, a100, true, true);
  CHECK(c.kind == image_kind::refuse);
  CHECK(c.reason.find("runs only on cc 9.0") != std::string::npos);
}

TEST_CASE("compat: sm_80 is a CUBIN on cc 8.x and JIT-compiled PTX on newer devices") {
  CHECK(choose_image(arch::sm_80, device("NVIDIA A100", 8, 0), true, true).kind == image_kind::cubin);
  CHECK(choose_image(arch::sm_80, device("NVIDIA L40S", 8, 9), true, true).kind == image_kind::cubin);
  const auto c = choose_image(arch::sm_80, device("NVIDIA H200", 9, 0), true, true);
  CHECK(c.kind == image_kind::ptx);
  CHECK(c.reason == "sm_80 CUBIN runs only on cc 8.x; loading its compute_80 PTX, which the driver JIT-compiles for "
                    "NVIDIA H200 (cc 9.0)");
  CHECK(choose_image(arch::sm_80, device("NVIDIA B200", 10, 0), true, true).kind == image_kind::ptx);
  CHECK(choose_image(arch::sm_80, device("NVIDIA H200", 9, 0), true, false).kind == image_kind::refuse);
  const auto old = choose_image(arch::sm_80, device("Tesla V100", 7, 0), true, true);
  CHECK(old.kind == image_kind::refuse);
  CHECK(old.reason.find("needs cc 8.0 or newer") != std::string::npos);
  CHECK(choose_image(arch::sm_80, device("NVIDIA A100", 8, 0), false, false).kind == image_kind::refuse);
}

TEST_CASE("module: loading a failed build names the compile errors before touching the driver") {
  artifacts a;
  a.ok = false;
  a.kernel_name = "broken";
  a.log = "broken.cu(1): error: something";
  CHECK_THROWS_WITH_AS(module::load(a), doctest::Contains("cannot load 'broken' (sm_90a): it did not compile"),
                       cake::jit::error);
}
