// Unit tests for cake/lower/ptx_text.hpp: instruction names, operand counts and constraint lists of the
// generated wgmma / tcgen05 statements, the errors for invalid shapes and types, and that the text
// assembles through NVRTC+ptxas (sm_90a for wgmma, sm_100a for tcgen05).
#include <doctest/doctest.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cake/lower/ptx_text.hpp"

namespace {

using namespace cake::lower::ptx;
namespace fs = std::filesystem;

// Distinct %N operand indices used in the asm template, and the number of constraint strings.
std::set<int> operand_indices(const std::string& text) {
  std::set<int> idx;
  static const std::regex op(R"(%(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), op); it != std::sregex_iterator(); ++it)
    idx.insert(std::stoi((*it)[1].str()));
  return idx;
}
int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + needle.size())) ++n;
  return n;
}

std::vector<std::string> cuda_include_dirs() {
  std::vector<fs::path> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) && info.dli_fname)
    roots.push_back(fs::path(info.dli_fname).parent_path().parent_path());
  for (const auto& r : roots) {
    std::error_code ec;
    if (fs::exists(r / "include" / "nvrtc.h", ec)) return {(r / "include" / "cccl").string(), (r / "include").string()};
  }
  return {};
}

// NVRTC to CUBIN (so ptxas checks the asm); returns "" on success, else the log.
std::string nvrtc_to_cubin(const std::string& source, const std::string& arch, std::string* ptx_out = nullptr) {
  nvrtcProgram prog{};
  if (nvrtcCreateProgram(&prog, source.c_str(), "ptx_text_test.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    return "nvrtcCreateProgram failed";
  std::vector<std::string> opts = {"-std=c++20", "-default-device", "--gpu-architecture=" + arch};
  for (const auto& dir : cuda_include_dirs()) opts.push_back("--include-path=" + dir);
  std::vector<const char*> p;
  for (const auto& o : opts) p.push_back(o.c_str());
  const nvrtcResult res = nvrtcCompileProgram(prog, static_cast<int>(p.size()), p.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) nvrtcGetProgramLog(prog, log.data());
  size_t cubin = 0;
  if (res == NVRTC_SUCCESS) {
    nvrtcGetCUBINSize(prog, &cubin);
    if (ptx_out) {
      size_t n = 0;
      nvrtcGetPTXSize(prog, &n);
      ptx_out->resize(n);
      nvrtcGetPTX(prog, ptx_out->data());
    }
  }
  nvrtcDestroyProgram(&prog);
  if (res != NVRTC_SUCCESS) return "nvrtc failed:\n" + log + "\n--- source ---\n" + source;
  if (cubin == 0) return "empty cubin";
  return {};
}

asm_text bf16_ss(int n) {
  return wgmma_ss(64, n, 16, mma_type::bf16, mma_type::bf16, mma_type::f32, false, false, "acc", "desc_a", "desc_b",
                  "scale_d");
}

}  // namespace

TEST_CASE("wgmma_ss text: instruction name, operand and constraint counts") {
  for (int n : {8, 64, 128, 176, 192, 256}) {
    CAPTURE(n);
    const asm_text t = bf16_ss(n);
    REQUIRE(t.ok());
    CHECK(t.instruction == "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32.bf16.bf16");
    CHECK(t.text.find(t.instruction) != std::string::npos);
    CHECK(t.operand_count == n / 2 + 3);
    const auto idx = operand_indices(t.text);
    CHECK(static_cast<int>(idx.size()) == t.operand_count);
    CHECK(*idx.rbegin() == t.operand_count - 1);
    CHECK(count_of(t.text, "\"+f\"(acc[") == n / 2);
    CHECK(count_of(t.text, "\"l\"(desc_") == 2);
    CHECK(count_of(t.text, "\"r\"(scale_d)") == 1);
    CHECK(t.text.find("p, 1, 1, 0, 0;") != std::string::npos);  // scale-d predicate, +A, +B, K-major A and B
    CHECK(wgmma_accumulator_registers(n, mma_type::f32) == n / 2);
  }
  const asm_text tt = wgmma_ss(64, 64, 16, mma_type::f16, mma_type::f16, mma_type::f16, true, true, "a", "x", "y", "1");
  REQUIRE(tt.ok());
  CHECK(tt.operand_count == 64 / 4 + 3);
  CHECK(count_of(tt.text, "\"+r\"(a[") == 16);
  CHECK(tt.text.find("p, 1, 1, 1, 1;") != std::string::npos);
  const asm_text f8 = wgmma_ss(64, 32, 32, mma_type::e4m3, mma_type::e5m2, mma_type::f32, false, false, "a", "x", "y", "1");
  REQUIRE(f8.ok());
  CHECK(f8.instruction == "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e5m2");
  CHECK(f8.text.find("p, 1, 1;") != std::string::npos);  // fp8: no transpose immediates
  const asm_text i8 = wgmma_ss(64, 48, 32, mma_type::s8, mma_type::u8, mma_type::s32, false, false, "a", "x", "y", "1");
  REQUIRE(i8.ok());
  CHECK(i8.text.find("%25, p;") != std::string::npos);  // integer: no scale/transpose immediates
}

TEST_CASE("wgmma_rs text: A from four registers") {
  const asm_text t =
      wgmma_rs(64, 128, 16, mma_type::bf16, mma_type::bf16, mma_type::f32, true, "acc", "a_frag", "desc_b", "scale_d");
  REQUIRE(t.ok());
  CHECK(t.operand_count == 64 + 6);
  CHECK(count_of(t.text, "\"r\"(a_frag[") == 4);
  CHECK(t.text.find("{%64, %65, %66, %67}, %68, p, 1, 1, 1;") != std::string::npos);
  const asm_text tf =
      wgmma_rs(64, 16, 8, mma_type::tf32, mma_type::tf32, mma_type::f32, false, "acc", "a", "desc_b", "scale_d");
  REQUIRE(tf.ok());
  CHECK(tf.text.find("}, %12, p, 1, 1;") != std::string::npos);
}

TEST_CASE("wgmma generators reject invalid shapes, types and expressions with a reason") {
  auto err = [](const asm_text& t) { return t.error; };
  const auto bf = mma_type::bf16;
  CHECK(err(wgmma_ss(128, 64, 16, bf, bf, mma_type::f32, false, false, "a", "x", "y", "1")).find("M must be 64") !=
        std::string::npos);
  for (int n : {0, 4, 20, 264}) {
    CAPTURE(n);
    const asm_text t = wgmma_ss(64, n, 16, bf, bf, mma_type::f32, false, false, "a", "x", "y", "1");
    CHECK_FALSE(t.ok());
    CHECK(t.text.empty());
    CHECK(t.error.find("N=" + std::to_string(n)) != std::string::npos);
  }
  CHECK(err(wgmma_ss(64, 64, 32, bf, bf, mma_type::f32, false, false, "a", "x", "y", "1")).find("K must be 16") !=
        std::string::npos);
  CHECK(err(wgmma_ss(64, 64, 16, bf, bf, mma_type::f16, false, false, "a", "x", "y", "1")).find("accumulator .f16") !=
        std::string::npos);
  CHECK(err(wgmma_ss(64, 64, 16, mma_type::f16, bf, mma_type::f32, false, false, "a", "x", "y", "1"))
            .find("unsupported operand types .f16 x .bf16") != std::string::npos);
  CHECK(err(wgmma_ss(64, 64, 32, mma_type::e4m3, mma_type::e4m3, mma_type::f32, false, true, "a", "x", "y", "1"))
            .find("transpose") != std::string::npos);
  CHECK(err(wgmma_ss(64, 40, 32, mma_type::s8, mma_type::s8, mma_type::s32, false, false, "a", "x", "y", "1"))
            .find("integer wgmma shape") != std::string::npos);
  CHECK(err(wgmma_ss(64, 64, 16, bf, bf, mma_type::f32, false, false, "", "x", "y", "1")).find("acc_array_name") !=
        std::string::npos);
  CHECK(err(wgmma_rs(64, 64, 8, mma_type::tf32, mma_type::tf32, mma_type::f32, true, "a", "r", "y", "1"))
            .find("transpose") != std::string::npos);
}

TEST_CASE("tcgen05 ld/st text: register counts per shape and errors") {
  CHECK(tcgen05_registers(tmem_shape::s32x32b, 128) == 128);
  CHECK(tcgen05_registers(tmem_shape::s16x128b, 64) == 128);
  CHECK(tcgen05_registers(tmem_shape::s16x256b, 32) == 128);
  CHECK(tcgen05_registers(tmem_shape::s16x256b, 64) == 0);
  CHECK(tcgen05_registers(tmem_shape::s16x64b, 3) == 0);
  const asm_text ld = tcgen05_ld(tmem_shape::s32x32b, 32, "r", "taddr");
  REQUIRE(ld.ok());
  CHECK(ld.instruction == "tcgen05.ld.sync.aligned.32x32b.x32.b32");
  CHECK(ld.operand_count == 33);
  CHECK(count_of(ld.text, "\"=r\"(r[") == 32);
  CHECK(static_cast<int>(operand_indices(ld.text).size()) == 33);
  const asm_text st = tcgen05_st(tmem_shape::s16x32bx2, 4, "taddr", "v", true, 16);
  REQUIRE(st.ok());
  CHECK(st.instruction == "tcgen05.st.sync.aligned.16x32bx2.x4.unpack::16b.b32");
  CHECK(st.text.find("[%0], 16,") != std::string::npos);
  CHECK(tcgen05_ld(tmem_shape::s16x256b, 64, "r", "t").error.find("more than 128 registers") != std::string::npos);
  CHECK(tcgen05_ld(tmem_shape::s32x32b, 6, "r", "t").error.find("num must be") != std::string::npos);
  CHECK(tcgen05_ld(tmem_shape::s32x32b, 4, "r", "t", false, 8).error.find("immHalfSplitoff") != std::string::npos);
  CHECK(tcgen05_st(tmem_shape::s32x32b, 4, "", "r").error.find("taddr") != std::string::npos);
}

TEST_CASE("generated wgmma text assembles for sm_90a (NVRTC + ptxas)") {
  std::string src = "typedef unsigned long long u64;\n";
  int kernel = 0;
  auto add_kernel = [&](const asm_text& t, const std::string& acc_decl, const std::string& extra_decl = "") {
    REQUIRE_MESSAGE(t.ok(), t.error);
    src += "extern \"C\" __global__ void __launch_bounds__(128, 1) k" + std::to_string(kernel++) +
           "(float* out, u64 desc_a, u64 desc_b, int scale_d) {\n  " + acc_decl + "\n  " + extra_decl +
           "\n  asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n" + t.text +
           "  asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
           "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
           "  out[threadIdx.x] = float(acc[0]) + float(acc[1]);\n}\n";
  };
  for (int n : {8, 64, 128, 176, 192, 256})
    add_kernel(bf16_ss(n), "float acc[" + std::to_string(n / 2) + "] = {};");
  add_kernel(wgmma_ss(64, 64, 16, mma_type::f16, mma_type::f16, mma_type::f16, true, false, "acc", "desc_a", "desc_b",
                      "scale_d"),
             "unsigned acc[16] = {};");
  add_kernel(wgmma_ss(64, 96, 8, mma_type::tf32, mma_type::tf32, mma_type::f32, false, false, "acc", "desc_a",
                      "desc_b", "scale_d"),
             "float acc[48] = {};");
  add_kernel(wgmma_ss(64, 128, 32, mma_type::e4m3, mma_type::e5m2, mma_type::f32, false, false, "acc", "desc_a",
                      "desc_b", "scale_d"),
             "float acc[64] = {};");
  add_kernel(wgmma_ss(64, 256, 32, mma_type::s8, mma_type::u8, mma_type::s32, false, false, "acc", "desc_a", "desc_b",
                      "scale_d"),
             "int acc[128] = {};");
  add_kernel(wgmma_rs(64, 256, 16, mma_type::bf16, mma_type::bf16, mma_type::f32, true, "acc", "afrag", "desc_b",
                      "scale_d"),
             "float acc[128] = {};", "unsigned afrag[4] = {threadIdx.x, 1u, 2u, 3u};");
  add_kernel(wgmma_rs(64, 64, 32, mma_type::e4m3, mma_type::e4m3, mma_type::f16, false, "acc", "afrag", "desc_b",
                      "scale_d"),
             "unsigned acc[16] = {};", "unsigned afrag[4] = {threadIdx.x, 1u, 2u, 3u};");
  std::string ptx;
  const std::string err = nvrtc_to_cubin(src, "sm_90a", &ptx);
  CHECK_MESSAGE(err.empty(), err);
  for (int n : {8, 64, 128, 176, 192, 256})
    CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32.bf16.bf16") != std::string::npos);
}

TEST_CASE("generated tcgen05 ld/st text assembles for sm_100a (NVRTC + ptxas)") {
  std::string src;
  int kernel = 0;
  auto add = [&](tmem_shape shape, int num, bool pack, int split) {
    const asm_text ld = tcgen05_ld(shape, num, "r", "taddr", pack, split);
    const asm_text st = tcgen05_st(shape, num, "taddr", "r", pack, split);
    REQUIRE_MESSAGE(ld.ok(), ld.error);
    REQUIRE_MESSAGE(st.ok(), st.error);
    const int n = tcgen05_registers(shape, num);
    src += "extern \"C\" __global__ void k" + std::to_string(kernel++) + "(unsigned* out, unsigned taddr) {\n  unsigned r[" +
           std::to_string(n) + "];\n" + ld.text +
           "  asm volatile(\"tcgen05.wait::ld.sync.aligned;\" ::: \"memory\");\n" + st.text +
           "  asm volatile(\"tcgen05.wait::st.sync.aligned;\" ::: \"memory\");\n  out[threadIdx.x] = r[0] + r[" +
           std::to_string(n - 1) + "];\n}\n";
  };
  add(tmem_shape::s32x32b, 1, false, 0);
  add(tmem_shape::s32x32b, 128, false, 0);
  add(tmem_shape::s16x64b, 16, true, 0);
  add(tmem_shape::s16x128b, 64, false, 0);
  add(tmem_shape::s16x256b, 32, false, 0);
  add(tmem_shape::s16x32bx2, 8, false, 32);
  const std::string err = nvrtc_to_cubin(src, "sm_100a");
  CHECK_MESSAGE(err.empty(), err);
}
