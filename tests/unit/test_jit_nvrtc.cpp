// NVRTC compilation for each target, target validation, diagnostics mapped to schedule ops, and the
// ptxas resource report. All of this runs without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include <cake/jit/nvrtc.hpp>

using namespace cake::jit;

namespace {

// sm_80: mma.sync (bf16 m16n8k16) and cp.async, both sm_80 instructions.
constexpr const char* sm80_kernel = R"(
extern "C" __global__ void mma80(float* d, const unsigned* ab, const float* src) {
  __shared__ __align__(16) float stage[128];
  unsigned a0 = ab[0], a1 = ab[1], a2 = ab[2], a3 = ab[3], b0 = ab[4], b1 = ab[5];
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(&stage[threadIdx.x * 4 % 128]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(src + threadIdx.x * 4 % 128));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  d[threadIdx.x] = c0 + c1 + c2 + c3 + stage[threadIdx.x % 128];
}
)";

// sm_90a: wgmma.fence and setmaxnreg exist only on the arch-specific target.
constexpr const char* sm90a_kernel = R"(
extern "C" __global__ void __launch_bounds__(128, 1) fence90(float* d) {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
  d[threadIdx.x] = 1.0f;
}
)";

// sm_100a: a tcgen05 fence.
constexpr const char* sm100a_kernel = R"(
extern "C" __global__ void fence100(float* d) {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  d[threadIdx.x] = 2.0f;
}
)";

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

const compile_message* first_error(const compile_result& r) {
  for (const auto& m : r.messages)
    if (m.level == severity::error) return &m;
  return nullptr;
}

}  // namespace

TEST_CASE("nvrtc: each target compiles its own instructions to PTX and a CUBIN") {
  struct row {
    const char* target;
    const char* source;
    const char* kernel;
  };
  for (const row& t : {row{"sm_80", sm80_kernel, "mma80"}, row{"sm_90a", sm90a_kernel, "fence90"},
                       row{"sm_100a", sm100a_kernel, "fence100"}}) {
    CAPTURE(t.target);
    const auto r = compile(t.source, t.kernel, t.target);
    INFO(r.log);
    REQUIRE(r.ok);
    CHECK(has_line(r.ptx, std::string(".target ") + t.target));
    REQUIRE(r.cubin.size() > 4);
    CHECK(std::string(r.cubin.data(), 4) == "\x7f" "ELF");
    CHECK(r.resources.function == t.kernel);
    CHECK(r.resources.registers > 0);
    CHECK(r.wall_ms > 0);
    CHECK(std::find(r.options.begin(), r.options.end(), std::string("--gpu-architecture=") + t.target) !=
          r.options.end());
  }
}

TEST_CASE("nvrtc: the CUBIN's own record of registers and frame size agrees with ptxas' report") {
  // cubin_function is the fallback for NVRTC builds whose log has no -v report (seen on the H200 image)
  for (const auto& [target, source, kernel] : {std::tuple{"sm_80", sm80_kernel, "mma80"}, std::tuple{"sm_90a", sm90a_kernel, "fence90"},
                                               std::tuple{"sm_100a", sm100a_kernel, "fence100"}}) {
    CAPTURE(target);
    const auto r = compile(source, kernel, target);
    REQUIRE(r.ok);
    REQUIRE_FALSE(r.resources.from_cubin);  // this NVRTC's log has the report: compare the two
    const std::string_view image(r.cubin.data(), r.cubin.size());
    const auto info = cubin_function(image, kernel);
    REQUIRE(info.has_value());
    CHECK(info->registers == r.resources.registers);
    CHECK(info->frame_size == r.resources.stack_frame);
    CHECK_FALSE(cubin_function(image, "no_such_kernel").has_value());
    // damaged images give nothing, never a read out of bounds
    for (std::size_t cut : {std::size_t{0}, std::size_t{3}, std::size_t{63}, image.size() / 2, image.size() - 1})
      (void)cubin_function(image.substr(0, cut), kernel);
    std::string flipped(image);
    for (std::size_t i = 0x20; i < 0x40; ++i) flipped[i] = static_cast<char>(0xff);  // section table offsets and counts
    CHECK_FALSE(cubin_function(flipped, kernel).has_value());
  }
  CHECK_FALSE(cubin_function("not an elf image at all, but long enough to pass the size test of sixty-four", "k").has_value());
}

TEST_CASE("nvrtc: PTX only when no CUBIN is asked for") {
  compile_options o;
  o.cubin = false;
  const auto r = compile(sm90a_kernel, "fence90", "sm_90a", o);
  REQUIRE(r.ok);
  CHECK(r.cubin.empty());
  CHECK(has_line(r.ptx, ".target sm_90a"));
}

TEST_CASE("nvrtc: targets are exact, unknown ones are rejected with the accepted list") {
  CHECK(parse_arch("sm_90a") == arch::sm_90a);
  CHECK_THROWS_WITH_AS(compile(sm90a_kernel, "fence90", "sm_90"),
                       doctest::Contains("unknown target 'sm_90': the JIT accepts exactly sm_80, sm_90a, sm_100a"),
                       cake::jit::error);
  CHECK_THROWS_WITH_AS(parse_arch("sm_90"), doctest::Contains("did you mean sm_90a?"), cake::jit::error);
  CHECK_THROWS_WITH_AS(parse_arch("compute_100a"), doctest::Contains("did you mean sm_100a?"), cake::jit::error);
  CHECK_THROWS_WITH_AS(parse_arch("sm_75"), doctest::Contains("sm_80, sm_90a, sm_100a"), cake::jit::error);
  CHECK_THROWS_AS(parse_arch(""), cake::jit::error);
}

TEST_CASE("nvrtc: an instruction from a newer target fails in ptxas on an older one") {
  const auto r = compile(sm100a_kernel, "fence100", "sm_90a");
  CHECK_FALSE(r.ok);
  const auto* e = first_error(r);
  REQUIRE(e != nullptr);
  CHECK(e->origin == message_origin::ptxas);
  CHECK(e->text.find("tcgen05.fence") != std::string::npos);
  CHECK(e->text.find("sm_90a") != std::string::npos);
}

TEST_CASE("nvrtc: a C++ error is mapped to the op annotation above it") {
  const std::string src = "// @op gemm/math/op#3 kernels/gemm.hpp:41\n"   // line 1
                          "extern \"C\" __global__ void bad(float* p) {\n"  // 2
                          "  // @op gemm/math/op#4 kernels/gemm.hpp:42\n"   // 3
                          "  p[0] = 1.0f;\n"                                // 4
                          "  // @op 5 kernels/gemm.hpp:47  store(p[1])\n"    // 5: lowering's form, op text last
                          "  p[1] = undefined_value;\n"                     // 6
                          "}\n";
  const auto r = compile(src, "bad", "sm_90a");
  CHECK_FALSE(r.ok);
  const auto* e = first_error(r);
  REQUIRE(e != nullptr);
  CHECK(e->origin == message_origin::nvrtc);
  CHECK(e->cuda_line == 6);
  CHECK(e->file == "bad.cu");
  REQUIRE(e->op.has_value());
  CHECK(e->op->op_id == "5");
  CHECK(e->op->location() == "kernels/gemm.hpp:47");
  CHECK(e->op->text == "store(p[1])");
  const auto text = e->to_string();
  CHECK(text.starts_with("kernels/gemm.hpp:47: error: identifier \"undefined_value\" is undefined"));
  CHECK(text.find("note: in op 5 store(p[1]) (generated bad.cu:6)") != std::string::npos);
  CHECK(r.diagnostics().find("kernels/gemm.hpp:47: error:") != std::string::npos);
}

TEST_CASE("nvrtc: a ptxas error is mapped through the PTX .loc lines to the op annotation") {
  const std::string src = "// @op k/op#1 sched.hpp:10\n"                         // 1
                          "extern \"C\" __global__ void bad2(float* p) {\n"      // 2
                          "  // @op k/op#2 sched.hpp:11\n"                       // 3
                          "  p[0] = 2.0f;\n"                                     // 4
                          "  // @op k/op#3 sched.hpp:12\n"                       // 5
                          "  asm volatile(\"tcgen05.fence::before_thread_sync;\");\n"  // 6
                          "  // @op k/op#4 sched.hpp:13\n"                       // 7
                          "  p[1] = 3.0f;\n"                                     // 8
                          "}\n";
  const auto r = compile(src, "bad2", "sm_90a");
  CHECK_FALSE(r.ok);
  const auto* e = first_error(r);
  REQUIRE(e != nullptr);
  CHECK(e->origin == message_origin::ptxas);
  CHECK(e->ptx_line > 0);
  CHECK(e->cuda_line == 6);
  REQUIRE(e->op.has_value());
  CHECK(e->op->op_id == "k/op#3");
  CHECK(e->to_string().starts_with("sched.hpp:12: error: Instruction 'tcgen05.fence' not supported"));
}

TEST_CASE("nvrtc: a ptxas error inside an inlined helper maps to the op at the call site") {
  const std::string src = "__device__ __forceinline__ void helper() {\n"         // 1
                          "  asm volatile(\"bogus.instruction;\");\n"           // 2
                          "}\n"                                                  // 3
                          "// @op h/op#1 sched.hpp:20\n"                         // 4
                          "extern \"C\" __global__ void bad3(int* p) {\n"        // 5
                          "  *p = 1;\n"                                          // 6
                          "  // @op h/op#2 sched.hpp:21\n"                       // 7
                          "  helper();\n"                                        // 8
                          "}\n";
  const auto r = compile(src, "bad3", "sm_90a");
  CHECK_FALSE(r.ok);
  const auto* e = first_error(r);
  REQUIRE(e != nullptr);
  CHECK(e->origin == message_origin::ptxas);
  CHECK(e->cuda_line == 2);
  CHECK(e->cuda_call_line == 8);
  REQUIRE(e->op.has_value());
  CHECK(e->op->op_id == "h/op#2");
  CHECK(e->to_string().find("inlined at line 8") != std::string::npos);
}

TEST_CASE("nvrtc: the resource report comes from a real build") {
  const char* src = R"(
extern "C" __global__ void smem_user(float* p) {
  __shared__ float buf[1024];
  buf[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = buf[1023 - threadIdx.x];
}
)";
  const auto r = compile(src, "smem_user", "sm_90a");
  REQUIRE(r.ok);
  CHECK(r.resources.function == "smem_user");
  CHECK(r.resources.registers > 0);
  CHECK(r.resources.smem_bytes == 4096);
  CHECK(r.resources.barriers == 1);
  CHECK(r.resources.spill_stores == 0);
  CHECK(r.resources.stack_frame == 0);
  REQUIRE(r.functions.size() == 1);
}

TEST_CASE("nvrtc: setmaxnreg without a register cap reports ptxas C7508") {
  const char* src = R"(
extern "C" __global__ void uncapped(float* p) {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
  p[threadIdx.x] = 0.0f;
}
)";
  const auto r = compile(src, "uncapped", "sm_90a");
  REQUIRE(r.ok);
  const bool in_report = std::any_of(r.resources.warnings.begin(), r.resources.warnings.end(),
                                     [](const std::string& w) { return w.find("C7508") != std::string::npos; });
  CHECK(in_report);
  const bool in_messages = std::any_of(r.messages.begin(), r.messages.end(), [](const compile_message& m) {
    return m.code == "C7508" && m.text.find("setmaxnreg") != std::string::npos;
  });
  CHECK(in_messages);
}

TEST_CASE("nvrtc: CCCL headers resolve through the toolkit include path") {
  const char* src = R"(
#include <cuda/std/cstdint>
extern "C" __global__ void uses_cccl(cuda::std::uint32_t* p) { p[threadIdx.x] = threadIdx.x; }
)";
  const auto r = compile(src, "uses_cccl", "sm_80");
  INFO(r.log);
  CHECK(r.ok);
}

TEST_CASE("nvrtc: a bad option is an environmental error, not a compile failure") {
  compile_options o;
  o.extra = {"--no-such-nvrtc-flag"};
  CHECK_THROWS_WITH_AS(compile(sm90a_kernel, "fence90", "sm_90a", o), doctest::Contains("nvrtcCompileProgram failed"),
                       cake::jit::error);
}

TEST_CASE("nvrtc: an empty or overlong kernel name is an argument error, before NVRTC sees it") {
  auto message = [](std::string_view name) {
    try {
      (void)compile("extern \"C\" __global__ void k() {}", name, arch::sm_90a);
    } catch (const argument_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(std::string(100000, 'k')) == "jit: a kernel name has 1 to 1024 characters; this one has 100000");
  CHECK(message("") == "jit: a kernel name has 1 to 1024 characters; this one has 0");
  CHECK(message("k") == "no error");
}
