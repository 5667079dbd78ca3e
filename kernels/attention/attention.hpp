#pragma once
// cake::attention: the attention entry points an engine calls, on device pointers.
//
//   cake::attention::prefill(q, k, v, o, lse, shape, stream, device)
//       o = softmax(scale * q k^T [+ causal mask]) v per (batch, query head), lse = the row's log-sum-exp
//       (natural log, f32). kernels/attention/prefill.hpp says the math and the schedule.
//
// Layouts (FlashAttention's): q and o are bf16 [B, S, H, D], k and v bf16 [B, T, HK, D], row-major and
// contiguous; lse is f32 [B, H, S]. D is 64 or 128; H is a multiple of HK (G = H / HK query heads per KV
// head: MHA, GQA, MQA). Causal masks are top-left aligned (query i sees keys 0..i, PyTorch's is_causal) and need S <= T.
// softmax_scale <= 0 means 1 / sqrt(D). The call picks the schedule (prefill_config_for), JIT-compiles it
// once per schedule and device (and on disk, docs/jit.md) and launches it on `stream`; it needs a Hopper
// device (cc 9.0).
//
// This header lives in the kernel corpus (kernels/attention/): include it as
// "kernels/attention/attention.hpp". Link cake::jit.
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>

#include <cake/runtime/kernel.hpp>
#include <cake/runtime/kernel_table.hpp>

#include "prefill.hpp"

namespace cake::attention {

struct prefill_shape {
  long long B = 1;   // batch entries
  long long S = 0;   // query rows per entry
  long long T = 0;   // keys per entry
  long long H = 1;   // query heads
  long long HK = 1;  // key / value heads (H % HK == 0)
  long long D = 128; // head dim: 64 or 128
  bool causal = false;
  float softmax_scale = 0;  // <= 0: 1 / sqrt(D)
};

// The schedule for a shape: one 64-column part per 64 of D, the GQA group, causal or not; then what
// the sweep at S = 4096 (cake_bench_attention --sweep, the tuning shape; other S are held out) measured
// faster than the first schedule (2 consumers taking turns, 2 stages, 128-key blocks): consumers issuing
// without turns (+7..15%), 3 pipeline stages at D = 128 (+7..13%), and at D = 64 non-causal three
// consumer warpgroups of 64 rows with 112-key blocks (+14..21%).
constexpr kernels::attention_prefill_config prefill_config_for(const prefill_shape& s) {
  kernels::attention_prefill_config c;
  c.parts = static_cast<int>(s.D / 64);
  c.causal = s.causal;
  c.group = static_cast<int>(s.HK > 0 ? s.H / s.HK : 1);
  c.turns = false;
  if (c.parts == 2) c.stages = 3;
  if (c.parts == 1 && !c.causal) c.wgs = 3, c.bn = 112;
  return c;
}

namespace detail {

inline const runtime_kernel& prefill_kernel(const kernels::attention_prefill_config& c, int device) {
  using key = std::tuple<kernels::attention_prefill_config, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, device}, [&] {
    const program p = kernels::attention_prefill_sm90(c);
    if (!p.errors.empty())
      throw jit::error("cake::attention::prefill: the schedule is invalid: [" + std::string(p.errors[0].rule) + "] " + std::string(p.errors[0].message));
    return runtime_kernel::build(p, {}, device);
  });
}

inline void check_prefill(const prefill_shape& s) {
  auto bad = [&](const std::string& why) { throw jit::argument_error("cake::attention::prefill: " + why); };
  auto n = [](long long v) { return std::to_string(v); };
  if (s.B < 1) bad("B = " + n(s.B) + " must be at least 1");
  if (s.S < 1) bad("S = " + n(s.S) + " must be at least 1");
  if (s.T < 1) bad("T = " + n(s.T) + " must be at least 1");
  if (s.H < 1 || s.HK < 1) bad("H = " + n(s.H) + " and HK = " + n(s.HK) + " must be at least 1");
  if (s.H % s.HK != 0) bad("H = " + n(s.H) + " must be a multiple of HK = " + n(s.HK) + " (query heads per KV head)");
  if (s.H / s.HK > 256) bad("H / HK = " + n(s.H / s.HK) + " query heads per KV head: at most 256");
  if (s.D != 64 && s.D != 128) bad("D = " + n(s.D) + " is not supported: 64 or 128");
  if (s.S * s.H * s.D > (1LL << 40) || s.T * s.HK * s.D > (1LL << 40)) bad("a tensor of more than 2^40 elements per batch entry");
  if (s.causal && s.S > s.T) bad("causal with S = " + n(s.S) + " > T = " + n(s.T) + ": the top-left aligned mask needs S <= T");
  if (!(s.softmax_scale <= 0 || std::isfinite(s.softmax_scale))) bad("softmax_scale is not finite");
}

inline void check_pointer(const char* name, const void* p, unsigned align) {
  if (!p || reinterpret_cast<std::uintptr_t>(p) % align)
    throw jit::argument_error(std::string("cake::attention::prefill: ") + name + " must be a non-null device address aligned to " + std::to_string(align) +
                              " bytes");
}

inline void check_hopper(int device) {
  const auto& dev = jit::driver::get().device(device);
  if (!(dev.cc_major == 9 && dev.cc_minor == 0))
    throw jit::unsupported_error("cake::attention::prefill: needs a Hopper device (compute capability 9.0, sm_90a); device " + std::to_string(device) + " is " +
                                 dev.describe());
}

}  // namespace detail

namespace detail {
inline void run_prefill(const kernels::attention_prefill_config* forced, const void* q, const void* k, const void* v, void* o, float* lse,
                        const prefill_shape& s, CUstream stream, int device) {
  check_prefill(s);
  check_pointer("q", q, 16);
  check_pointer("k", k, 16);
  check_pointer("v", v, 16);
  check_pointer("o", o, 16);
  check_pointer("lse", lse, 4);
  kernels::attention_prefill_config c = prefill_config_for(s);
  if (forced) {
    c.stages = forced->stages, c.bn = forced->bn, c.wgs = forced->wgs, c.turns = forced->turns;
    if (!c.valid() || kernels::attention_prefill_smem(c) > 227 * 1024)
      throw jit::argument_error("cake::attention::prefill_with: no such schedule (wgs " + std::to_string(c.wgs) + ", bn " + std::to_string(c.bn) + ", stages " +
                                std::to_string(c.stages) + ", D " + std::to_string(s.D) + (s.causal ? ", causal: needs wgs 2 and bn 128" : "") +
                                "; wgs 3 is for D = 64; smem at most 227 KiB)");
  }
  check_hopper(device);
  const runtime_kernel& kern = prefill_kernel(c, device);
  const double scale = s.softmax_scale > 0 ? s.softmax_scale : 1.0 / std::sqrt(static_cast<double>(s.D));
  const tensor_arg args[] = {tensor_view(q, {s.B, s.S, s.H, s.D}), tensor_view(k, {s.B, s.T, s.HK, s.D}), tensor_view(v, {s.B, s.T, s.HK, s.D}),
                             tensor_view(o, {s.B, s.S, s.H, s.D}), tensor_view(lse, {s.B, s.H, s.S, 1})};
  const double scalars[] = {scale * 1.4426950408889634};
  kern.launch(args, scalars, stream);
}
}  // namespace detail

// o, lse from q, k, v (layouts at the top of this header). Every argument is checked before the launch.
inline void prefill(const void* q, const void* k, const void* v, void* o, float* lse, const prefill_shape& s, CUstream stream = nullptr, int device = 0) {
  detail::run_prefill(nullptr, q, k, v, o, lse, s, stream, device);
}
// The same with an explicit schedule (tuning, experiments): config's stages, bn, wgs and turns are used,
// the rest follows the shape.
inline void prefill_with(const kernels::attention_prefill_config& config, const void* q, const void* k, const void* v, void* o, float* lse,
                         const prefill_shape& s, CUstream stream = nullptr, int device = 0) {
  detail::run_prefill(&config, q, k, v, o, lse, s, stream, device);
}

}  // namespace cake::attention
