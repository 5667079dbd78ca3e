#pragma once
// cake::softmax and cake::rmsnorm: the entry points an inference engine calls, on device pointers.
//
//   cake::softmax(x, y, rows, cols, ld, stream)         y[r, :] = softmax(x[r, :])
//   cake::rmsnorm(x, w, y, rows, cols, ld, eps, stream) y[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * w
//
// x and y are bf16, row-major, rows x cols with the same leading dimension ld >= cols (in elements);
// w is bf16 [cols]; eps is f32. y may be x (in place): every row is read whole before it is written,
// by the unit that writes it. Nothing outside the rows x cols elements of y is written (the padding of
// a row, ld > cols, is left untouched). rows is any positive number; cols is 1 .. 16384.
//
// The call picks the schedule for the width (softmax_config_for / rmsnorm_config_for), JIT-compiles
// it once per schedule, width and device (cols is baked into the kernel; kernels are also cached on
// disk, docs/jit.md) and launches it on `stream`. Hopper (cc 9.0) gets the sm_90a kernel; other
// devices of cc 8.0 or newer get the same schedule compiled for sm_80.
//
// This header lives in the kernel corpus (kernels/norm/), not in include/cake/: include it as
// "kernels/norm/norm.hpp" (the project root is on cake::cake's include path in the build tree, and
// include/cake/corpus once installed). Link cake::jit.
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <cake/runtime/kernel.hpp>
#include <cake/runtime/kernel_table.hpp>

#include "rmsnorm.hpp"
#include "softmax.hpp"

namespace cake {

enum class norm_kind { softmax, rmsnorm };
constexpr const char* to_string(norm_kind k) { return k == norm_kind::softmax ? "cake::softmax" : "cake::rmsnorm"; }

namespace norm_entry {

// The target for a device: sm_90a on cc 9.0, sm_80 on any other cc >= 8.0.
inline target_id target_for(const jit::device_info& dev, norm_kind kind) {
  if (dev.cc_major == 9 && dev.cc_minor == 0) return target_id::sm_90a;
  if (dev.cc_major >= 8) return target_id::sm_80;
  throw jit::unsupported_error(std::string(to_string(kind)) + ": needs a device of compute capability 8.0 or newer; device " + std::to_string(dev.ordinal) + " is " +
                   dev.describe());
}

inline program program_for(norm_kind kind, const kernels::norm_config& c) {
  return kind == norm_kind::softmax ? kernels::softmax_program(c) : kernels::rmsnorm_program(c);
}

// The compiled kernel for a schedule, a width and a device, built once (thread-safe; a build holds only
// its own key: runtime/kernel_table.hpp).
inline const runtime_kernel& kernel_for(norm_kind kind, const kernels::norm_config& c, long long cols, int device) {
  using key = std::tuple<int, int, int, bool, int, bool, bool, int, long long, int>;
  static kernel_table<key, runtime_kernel> cache;
  const key k{static_cast<int>(kind), c.width, c.rows, c.warp_units, c.units, c.f32_work, c.persistent, static_cast<int>(c.target), cols, device};
  return cache.get(k, [&] {
    const program p = program_for(kind, c);
    if (!p.errors.empty())
      throw jit::error(std::string(to_string(kind)) + ": the schedule for width " + std::to_string(c.width) + " is invalid: " + to_text(p.errors[0]));
    lower::emit_options opt;
    opt.specialized = {{1, cols}};  // dim C (the program's dims are R, C)
    return runtime_kernel::build(p, opt, device);
  });
}

inline void check_args(norm_kind kind, const void* x, const void* w, const void* y, long long rows, long long cols, long long ld) {
  const std::string who = to_string(kind);
  auto bad = [&](const std::string& why) { throw jit::argument_error(who + ": " + why); };
  if (rows < 1) bad("rows = " + std::to_string(rows) + " must be at least 1");
  if (cols < 1) bad("cols = " + std::to_string(cols) + " must be at least 1");
  if (cols > kernels::norm_max_width)
    bad("cols = " + std::to_string(cols) + " is wider than " + std::to_string(kernels::norm_max_width) + ", the widest row " + who + " holds in registers");
  if (ld < cols) bad("ld = " + std::to_string(ld) + " is smaller than cols = " + std::to_string(cols));
  auto pointer = [&](const char* name, const void* p) {
    if (!p || reinterpret_cast<std::uintptr_t>(p) % 2) bad(std::string(name) + " must be a non-null, 2-byte aligned device address (bf16)");
  };
  pointer("x", x);
  if (kind == norm_kind::rmsnorm) pointer("w", w);
  pointer("y", y);
}

inline void run(norm_kind kind, const kernels::norm_config* forced, const void* x, const void* w, void* y, long long rows, long long cols, long long ld, float eps,
                CUstream stream, int device) {
  check_args(kind, x, w, y, rows, cols, ld);
  if (kind == norm_kind::rmsnorm && !(eps >= 0.0f && std::isfinite(eps)))
    throw jit::argument_error("cake::rmsnorm: eps = " + std::to_string(eps) + " must be finite and not negative");
  kernels::norm_config c = forced ? *forced : kind == norm_kind::softmax ? kernels::softmax_config_for(cols) : kernels::rmsnorm_config_for(cols);
  if (forced && c.width < cols)
    throw jit::argument_error(std::string(to_string(kind)) + ": config.width = " + std::to_string(c.width) + " is narrower than cols = " + std::to_string(cols));
  const auto& dev = jit::driver::get().device(device);
  if (!forced) c.target = target_for(dev, kind);
  else if (c.target == target_id::sm_90a && !(dev.cc_major == 9 && dev.cc_minor == 0))
    throw jit::unsupported_error(std::string(to_string(kind)) + ": config.target is sm_90a, which needs a cc 9.0 device; device " + std::to_string(device) + " is " +
                     dev.describe());
  const runtime_kernel& k = kernel_for(kind, c, cols, device);
  if (kind == norm_kind::softmax) {
    const tensor_arg args[] = {tensor_view(x, {rows, cols}, {ld, 1}), tensor_view(y, {rows, cols}, {ld, 1})};
    k.launch(args, {}, stream);
  } else {
    const tensor_arg args[] = {tensor_view(x, {rows, cols}, {ld, 1}), tensor_view(w, {cols}, {1}), tensor_view(y, {rows, cols}, {ld, 1})};
    const double scalars[] = {eps};
    k.launch(args, scalars, stream);
  }
}

}  // namespace norm_entry

// y[r, :] = softmax(x[r, :]) over the first `cols` elements of each of `rows` rows (stride ld).
inline void softmax(const void* x, void* y, long long rows, long long cols, long long ld, CUstream stream = nullptr, int device = 0) {
  norm_entry::run(norm_kind::softmax, nullptr, x, nullptr, y, rows, cols, ld, 0.0f, stream, device);
}

// y[r, :] = bf16(bf16(x[r, :] * rsqrt(mean(x[r, :]^2) + eps)) * w[:]) (kernels/norm/rmsnorm.hpp).
inline void rmsnorm(const void* x, const void* w, void* y, long long rows, long long cols, long long ld, float eps, CUstream stream = nullptr, int device = 0) {
  norm_entry::run(norm_kind::rmsnorm, nullptr, x, w, y, rows, cols, ld, eps, stream, device);
}

// The same with an explicit schedule (tuning, experiments): config.width >= cols; config.target must
// suit the device (sm_80 runs on any cc >= 8.0 device).
inline void softmax_with(const kernels::softmax_config& config, const void* x, void* y, long long rows, long long cols, long long ld,
                         CUstream stream = nullptr, int device = 0) {
  norm_entry::run(norm_kind::softmax, &config, x, nullptr, y, rows, cols, ld, 0.0f, stream, device);
}
inline void rmsnorm_with(const kernels::rmsnorm_config& config, const void* x, const void* w, void* y, long long rows, long long cols, long long ld,
                         float eps, CUstream stream = nullptr, int device = 0) {
  norm_entry::run(norm_kind::rmsnorm, &config, x, w, y, rows, cols, ld, eps, stream, device);
}

}  // namespace cake
