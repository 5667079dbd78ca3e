// cake_verify_launch: one schedule of the verify corpus (a case's bad or good twin), analyzed, lowered and,
// where a GPU can run it, launched once on a small shape with random inputs. The driver
// (tests/verify/sanitize_corpus.py, step `sancorpus` of bench/h200/session.sh) runs every case and twin in its
// own process under compute-sanitizer racecheck and synccheck and tabulates how the analyzer's verdict agrees
// with the sanitizer's (issue 10, blind spot 8). One case per process: a trap or a hang ends only that case.
//
//   cake_verify_launch --list                        every case: name, rule, target of each twin
//   cake_verify_launch --case NAME --twin bad|good [--no-launch]
//
// Output, one JSON object per line: first what is known without a GPU (the analyzer's findings, whether the
// schedule lowers and compiles for its target, the shape and the grid), then the launch's outcome. The
// process exits 0 when it got that far (whatever the verdicts), 2 on a usage error, 3 when the launch failed
// (a trap, an illegal address: the CUDA error is in the second line).
//
// The launch: every dim gets 2.5 blocks of the largest block an axis or loop cuts it into (rounded up to 16
// elements, so that TMA row strides stay 16-byte multiples): a ragged last block and a handful of CTAs. Inputs
// are random (floats in [-1, 1) of the tensor's dtype; integer tensors, which index rows, are 0), outputs
// are poisoned with 0xff bytes, every scalar is 0.5. Lowering runs with the analyzer off (emit_options::analyze
// = false) so that a bad twin the analyzer rejects still reaches the GPU, with the hang trap on
// (CAKE_HANG_TIMEOUT_MS, default 2000 here) so that a deadlock ends as a trap.
#define DOCTEST_CONFIG_IMPLEMENT  // the corpus files register doctest cases; this tool never runs them
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cake/analysis/output.hpp>
#include <cake/runtime/kernel.hpp>

#include "corpus.hpp"

namespace {

using namespace cake;

std::string json_string(std::string_view s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}

// The extent the launch gives dim d (see the file comment).
long long dim_extent(const program& p, int d) {
  long long block = 1;
  for (const auto& b : p.loops)
    if (b.block > 0 && b.dim == d && b.block > block) block = b.block;
  for (int a = 0; a < p.space.count; ++a)
    if (p.space.axes[a].kind == axis_kind::tiles && p.space.axes[a].dim == d && p.space.axes[a].extent > block) block = p.space.axes[a].extent;
  const long long v = 2 * block + block / 2;
  return (v + 15) / 16 * 16;
}

// Random contents for a tensor of dtype dt: floats in [-1, 1) in that dtype's bits; integer types 0.
std::vector<unsigned char> random_bytes(dtype dt, std::size_t count, std::mt19937_64& rng) {
  const int eb = size_bits(dt) / 8;
  std::vector<unsigned char> out(count * static_cast<std::size_t>(eb), 0);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::size_t i = 0; i < count; ++i) {
    const float f = u(rng);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const std::uint32_t sign = bits >> 31;
    switch (dt) {
      case dtype::f32:
      case dtype::tf32: std::memcpy(&out[i * 4], &bits, 4); break;
      case dtype::bf16: {
        const std::uint16_t h = static_cast<std::uint16_t>(bits >> 16);
        std::memcpy(&out[i * 2], &h, 2);
        break;
      }
      case dtype::f16: {  // exponent 13..14: magnitudes in [0.25, 1)
        const std::uint16_t h = static_cast<std::uint16_t>((sign << 15) | ((13u + (bits & 1u)) << 10) | ((bits >> 1) & 0x3ffu));
        std::memcpy(&out[i * 2], &h, 2);
        break;
      }
      case dtype::e4m3: out[i] = static_cast<unsigned char>((sign << 7) | ((5u + (bits & 1u)) << 3) | ((bits >> 1) & 7u)); break;
      case dtype::e5m2: out[i] = static_cast<unsigned char>((sign << 7) | ((13u + (bits & 1u)) << 2) | ((bits >> 1) & 3u)); break;
      default: break;  // i8, i32: 0 (index tensors stay in bounds)
    }
  }
  return out;
}

bool runnable_here(target_id t) { return t == target_id::sm_80 || t == target_id::sm_90a; }  // an H200 (sm_90)

int run_one(const verify_corpus::corpus_case& c, bool bad_twin, bool launch) {
  const program p = bad_twin ? c.bad() : c.good();
  const auto r = analyze(p);
  std::ostringstream js;
  js << "{\"case\":" << json_string(c.name) << ",\"rule\":" << json_string(c.rule) << ",\"twin\":\"" << (bad_twin ? "bad" : "good")
     << "\",\"kernel\":" << json_string(p.kernel_name.view()) << ",\"target\":\"" << to_string(p.target) << "\",\"analyzer\":{\"errors\":"
     << r.errors << ",\"warnings\":" << r.warnings << ",\"rules\":[";
  {
    std::vector<std::string> seen;
    for (const auto& d : r.diagnostics) {
      if (d.sev() == analysis::severity::note) continue;
      const std::string id(to_string(d.rule));
      bool dup = false;
      for (const auto& s : seen) dup = dup || s == id;
      if (dup) continue;
      js << (seen.empty() ? "" : ",") << json_string(id);
      seen.push_back(id);
    }
  }
  js << "]}";

  lower::emit_options opt;
  opt.analyze = false;  // the bad twins must reach the GPU too
  const char* hang = std::getenv("CAKE_HANG_TIMEOUT_MS");
  opt.hang_timeout_ns = (hang && *hang ? std::strtoull(hang, nullptr, 10) : 2000ull) * 1000000ull;
  std::vector<long long> extent(p.dims.size());
  for (std::size_t d = 0; d < p.dims.size(); ++d) {
    extent[d] = dim_extent(p, static_cast<int>(d));
    if (p.dims[d].mode == dim_mode::specialized) opt.specialized.push_back({static_cast<int>(d), extent[d]});
  }
  js << ",\"shape\":{";
  for (std::size_t d = 0; d < p.dims.size(); ++d) js << (d ? "," : "") << json_string(p.dims[d].nm.view()) << ':' << extent[d];
  js << '}';

  std::string lower_error;
  if (!p.errors.empty()) {  // lowering refuses a Program with builder findings (lower/lower.hpp)
    lower_error = "builder error [" + std::string(p.errors[0].rule) + "]: lowering refuses it";
  } else {
    const auto lowered = lower::lower(p, opt);
    if (!lowered.ok) {
      const auto tag = lowered.error.find("error: ");
      const std::string first = lowered.error.substr(0, lowered.error.find('\n'));
      lower_error = "lowering refused: " + (tag != std::string::npos && tag < first.size() ? first.substr(tag + 7) : first);
    } else {
      const auto art = jit::build(lowered.source, lowered.entry, std::string(to_string(p.target)));
      if (!art.ok) {  // the first error line of the log (warnings come first)
        const std::string log = art.diagnostics();
        auto at = log.find(": error");
        at = at == std::string::npos ? 0 : log.rfind('\n', at) == std::string::npos ? 0 : log.rfind('\n', at) + 1;
        lower_error = "NVRTC: " + log.substr(at, log.find('\n', at) - at).substr(0, 300);
      }
    }
  }
  js << ",\"lowers\":" << (lower_error.empty() ? "true" : "false") << ",\"lower_error\":" << (lower_error.empty() ? "null" : json_string(lower_error));
  js << ",\"runnable_on_h200\":" << (runnable_here(p.target) ? "true" : "false") << '}';
  std::cout << js.str() << std::endl;

  std::string why;
  if (!lower_error.empty()) why = "does not lower";
  else if (!runnable_here(p.target)) why = std::string(to_string(p.target)) + " does not run on an H200";
  else if (!launch) why = "--no-launch: not launched";
  else if (!jit::driver::available()) why = "no GPU: not launched (" + jit::driver::unavailable_reason() + ")";
  else if (jit::driver::get().device_count() < 1) why = "no GPU: not launched (no device)";
  if (!why.empty()) {
    std::cout << "{\"launched\":false,\"launch\":" << json_string(why) << "}" << std::endl;
    return 0;
  }

  try {
    const auto k = runtime_kernel::build(p, opt);
    std::mt19937_64 rng(0x5eedull + static_cast<unsigned>(bad_twin));
    std::vector<jit::device_buffer> buffers;
    std::vector<tensor_arg> args;
    buffers.reserve(p.tensors.size());
    for (const auto& t : p.tensors) {
      std::size_t count = 1;
      for (int i = 0; i < t.rank; ++i) count *= static_cast<std::size_t>(extent[t.dims[i]]);
      const std::size_t bytes = count * static_cast<std::size_t>(size_bits(t.dt) / 8);
      buffers.emplace_back((bytes + 3) / 4 * 4 + 256);
      auto& b = buffers.back();
      b.fill_u32(0xffffffffu);  // outputs poisoned; inputs overwritten below
      if (!t.output) {
        const auto data = random_bytes(t.dt, count, rng);
        b.upload(std::span<const unsigned char>(data));
      }
      tensor_arg a;
      a.ptr = b.address();
      a.rank = t.rank;
      long long stride = 1;
      for (int i = t.rank - 1; i >= 0; --i) {
        a.dims[i] = extent[t.dims[i]];
        a.strides[i] = stride;
        stride *= a.dims[i];
      }
      args.push_back(a);
    }
    const std::vector<double> scalars(p.scalars.size(), 0.5);
    const auto cfg = k.config(args);
    k.launch(args, scalars);
    const auto& d = jit::driver::get();
    d.check(d.cuCtxSynchronize(), "cuCtxSynchronize", "after the launch");
    std::cout << "{\"launched\":true,\"launch\":\"ok\",\"grid\":" << cfg.grid.x << ",\"block\":" << cfg.block.x << "}" << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    std::cout << "{\"launched\":true,\"launch\":" << json_string("error: " + msg.substr(0, 400)) << "}" << std::endl;
    return 3;
  }
}

int usage(const char* why) {
  std::cerr << "cake_verify_launch: " << why << "\nusage: cake_verify_launch --list | --case NAME --twin bad|good [--no-launch]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name, twin;
  bool list = false, launch = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") list = true;
    else if (a == "--no-launch") launch = false;
    else if (a == "--case" && i + 1 < argc) name = argv[++i];
    else if (a == "--twin" && i + 1 < argc) twin = argv[++i];
    else return usage(("unknown argument '" + a + "'").c_str());
  }
  const auto& cases = verify_corpus::registry();
  if (list) {
    for (const auto& c : cases) std::cout << c.name << ' ' << c.rule << ' ' << to_string(c.bad().target) << ' ' << to_string(c.good().target) << '\n';
    return 0;
  }
  if (name.empty()) return usage("--case NAME is required (see --list)");
  if (twin != "bad" && twin != "good") return usage("--twin must be bad or good");
  for (const auto& c : cases)
    if (c.name == name) return run_one(c, twin == "bad", launch);
  return usage(("no case named '" + name + "' (see --list)").c_str());
}
