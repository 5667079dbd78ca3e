#pragma once
// Loading a build into the driver: the image is chosen by choose_image (compat.hpp), loaded with
// cuModuleLoadDataEx with error and info log buffers (so a PTX JIT failure says why), and kernels are
// looked up by their entry symbol. module and kernel are cheap, copyable handles that share ownership
// of the loaded module, so a kernel keeps its module alive.
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <cake/jit/cache_entry.hpp>
#include <cake/jit/compat.hpp>
#include <cake/jit/driver.hpp>

namespace cake::jit {

namespace detail {
struct module_state {
  CUmodule handle = nullptr;
  int ordinal = 0;
  ~module_state() {
    if (!handle || !driver::available()) return;
    try {
      const auto& d = driver::get();
      d.bind(ordinal);
      d.cuModuleUnload(handle);  // errors at teardown are not actionable
    } catch (...) {
    }
  }
};
struct kernel_state {
  std::mutex mutex;             // guards the attributes below
  int dynamic_smem_limit = -1;  // the MAX_DYNAMIC_SHARED_SIZE_BYTES value set so far (-1: default)
  bool non_portable_cluster = false;
};
}  // namespace detail

class kernel {
 public:
  kernel() = default;
  CUfunction handle() const { return function_; }
  const std::string& name() const { return name_; }
  int ordinal() const { return ordinal_; }
  int static_smem_bytes() const { return static_smem_; }  // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  int max_threads_per_block() const { return max_threads_; }
  int registers() const { return registers_; }
  explicit operator bool() const { return function_ != nullptr; }

 private:
  friend class module;
  friend struct launch_access;
  std::shared_ptr<detail::module_state> module_;
  std::shared_ptr<detail::kernel_state> state_;
  CUfunction function_ = nullptr;
  std::string name_;
  int ordinal_ = 0, static_smem_ = 0, max_threads_ = 0, registers_ = 0;
};

class module {
 public:
  module() = default;

  // Loads artifacts on a device. Throws jit::error when the build failed, when the target cannot run
  // on the device ("sm_100a code cannot run on NVIDIA H200 (cc 9.0): ..."), or when the driver refuses
  // the image (the message carries the driver's JIT error log).
  static module load(const artifacts& a, int ordinal = 0) {
    const std::string what = "'" + a.kernel_name + "' (" + std::string(to_string(a.target)) + ")";
    if (!a.ok) throw error("cannot load " + what + ": it did not compile:\n" + a.diagnostics());
    const auto& d = driver::get();
    const auto& dev = d.device(ordinal);
    const auto choice = choose_image(a.target, dev, !a.cubin.empty(), !a.ptx.empty());
    if (choice.kind == image_kind::refuse) throw error("cannot load " + what + ": " + choice.reason);
    d.bind(ordinal);

    char error_log[8192] = {};
    char info_log[8192] = {};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
    void* values[] = {error_log, reinterpret_cast<void*>(static_cast<std::uintptr_t>(sizeof error_log - 1)), info_log,
                      reinterpret_cast<void*>(static_cast<std::uintptr_t>(sizeof info_log - 1)),
                      reinterpret_cast<void*>(static_cast<std::uintptr_t>(1))};
    // PTX must be NUL-terminated; std::string::c_str() is.
    const void* image = choice.kind == image_kind::cubin ? static_cast<const void*>(a.cubin.data())
                                                         : static_cast<const void*>(a.ptx.c_str());
    auto state = std::make_shared<detail::module_state>();
    state->ordinal = ordinal;
    const CUresult r = d.cuModuleLoadDataEx(&state->handle, image, 5, opts, values);
    if (r != CUDA_SUCCESS) {
      state->handle = nullptr;
      std::string msg = "cuModuleLoadDataEx failed: " + d.describe(r) + " at loading the " +
                        std::string(to_string(choice.kind)) + " of " + what + " on " + dev.describe() + " (" +
                        choice.reason + ")";
      if (error_log[0]) msg += "\n  driver JIT error log: " + std::string(error_log);
      if (info_log[0]) msg += "\n  driver JIT info log: " + std::string(info_log);
      throw cuda_error(r, msg);
    }
    module m;
    m.state_ = std::move(state);
    m.choice_ = choice;
    m.jit_log_ = info_log;
    m.kernel_name_ = a.kernel_name;
    return m;
  }

  // The kernel with this entry symbol (extern "C" name, or the mangled name).
  kernel get_kernel(std::string_view name) const {
    if (!state_) throw error("get_kernel('" + std::string(name) + "') on an empty module");
    const auto& d = driver::get();
    d.bind(state_->ordinal);
    kernel k;
    const std::string n(name);
    const CUresult r = d.cuModuleGetFunction(&k.function_, state_->handle, n.c_str());
    if (r == CUDA_ERROR_NOT_FOUND)
      throw cuda_error(r, "no kernel named '" + n + "' in the module of '" + kernel_name_ +
                              "': the entry must be declared extern \"C\" __global__ with exactly that name");
    d.check(r, "cuModuleGetFunction", "looking up kernel '" + n + "'");
    auto attr = [&](CUfunction_attribute a, const char* what) {
      int v = 0;
      d.check(d.cuFuncGetAttribute(&v, a, k.function_), "cuFuncGetAttribute", what);
      return v;
    };
    k.static_smem_ = attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared memory size");
    k.max_threads_ = attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block");
    k.registers_ = attr(CU_FUNC_ATTRIBUTE_NUM_REGS, "register count");
    k.module_ = state_;
    k.state_ = std::make_shared<detail::kernel_state>();
    k.name_ = n;
    k.ordinal_ = state_->ordinal;
    return k;
  }

  CUmodule handle() const { return state_ ? state_->handle : nullptr; }
  const image_choice& choice() const { return choice_; }  // which image was loaded, and why
  const std::string& jit_log() const { return jit_log_; }  // the driver's info log (PTX JIT: ptxas report)

 private:
  std::shared_ptr<detail::module_state> state_;
  image_choice choice_;
  std::string jit_log_;
  std::string kernel_name_;
};

// Loads a build and returns its kernel (named artifacts.kernel_name).
inline kernel load_kernel(const artifacts& a, int ordinal = 0) {
  return module::load(a, ordinal).get_kernel(a.kernel_name);
}

}  // namespace cake::jit
