#pragma once
// The CUDA driver, loaded at run time with dlopen("libcuda.so.1"): Cake never links libcuda, so every
// program builds, and NVRTC works, on machines without a GPU or driver. cuda.h is used for types only.
// driver::get() loads it once per process and returns it, or throws jit::error saying why not:
//   "no CUDA driver: dlopen(libcuda.so.1) failed: ..."   "no CUDA device: ..."   "cuInit failed: ..."
// Entry points are resolved with dlsym under their versioned ABI names (cuMemAlloc_v2, ...); the
// member names are the ones cuda.h maps to those ABI names, so d.cuMemAlloc(...) reads as usual.
#include <cuda.h>
#include <dlfcn.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <cake/jit/compat.hpp>
#include <cake/jit/error.hpp>

namespace cake::jit {

// X(member, ABI names to try in order...). Checked against CUDA 13.0's cuda.h: e.g. cuMemAlloc maps to
// cuMemAlloc_v2 and cuEventElapsedTime to cuEventElapsedTime_v2 (new in 12.8; same signature as v1,
// which older drivers export). cuCtxCreate (now _v4) is not used: the primary context is.
#define CAKE_JIT_DRIVER_FUNCTIONS(X)                                   \
  X(cuGetErrorName, "cuGetErrorName")                                  \
  X(cuGetErrorString, "cuGetErrorString")                              \
  X(cuInit, "cuInit")                                                  \
  X(cuDriverGetVersion, "cuDriverGetVersion")                          \
  X(cuDeviceGetCount, "cuDeviceGetCount")                              \
  X(cuDeviceGet, "cuDeviceGet")                                        \
  X(cuDeviceGetName, "cuDeviceGetName")                                \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                      \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")              \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                                \
  X(cuCtxGetCurrent, "cuCtxGetCurrent")                                \
  X(cuCtxSynchronize, "cuCtxSynchronize")                              \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx")                          \
  X(cuModuleGetFunction, "cuModuleGetFunction")                        \
  X(cuModuleUnload, "cuModuleUnload")                                  \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                          \
  X(cuFuncGetAttribute, "cuFuncGetAttribute")                          \
  X(cuLaunchKernelEx, "cuLaunchKernelEx")                              \
  X(cuMemAlloc, "cuMemAlloc_v2")                                       \
  X(cuMemFree, "cuMemFree_v2")                                         \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                                   \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                                   \
  X(cuMemsetD8Async, "cuMemsetD8Async")                                \
  X(cuMemsetD32, "cuMemsetD32_v2")                                     \
  X(cuStreamCreate, "cuStreamCreate")                                  \
  X(cuStreamSynchronize, "cuStreamSynchronize")                        \
  X(cuStreamDestroy, "cuStreamDestroy_v2")                             \
  X(cuEventCreate, "cuEventCreate")                                    \
  X(cuEventRecord, "cuEventRecord")                                    \
  X(cuEventSynchronize, "cuEventSynchronize")                          \
  X(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime") \
  X(cuEventDestroy, "cuEventDestroy_v2")                               \
  X(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled")

// Resolved when present; null otherwise (the caller says what is missing). The graph calls are for callers
// (and tests) that capture Cake's launches into a CUDA graph; cuStreamBeginCapture and cuGraphInstantiate are
// macros of cuda.h (for cuStreamBeginCapture_v2 and cuGraphInstantiateWithFlags), so the members take those names.
#define CAKE_JIT_DRIVER_OPTIONAL_FUNCTIONS(X)                          \
  X(cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters")      \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2")                   \
  X(cuStreamEndCapture, "cuStreamEndCapture")                          \
  X(cuGraphInstantiate, "cuGraphInstantiateWithFlags")                 \
  X(cuGraphLaunch, "cuGraphLaunch")                                    \
  X(cuGraphExecDestroy, "cuGraphExecDestroy")                          \
  X(cuGraphDestroy, "cuGraphDestroy")

// A failed driver call. code is the CUresult.
class cuda_error : public error {
 public:
  cuda_error(CUresult code, const std::string& message) : error(message), code_(code) {}
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

class driver {
 public:
#define CAKE_JIT_DECLARE_MEMBER(name, ...) decltype(&::name) name = nullptr;
  CAKE_JIT_DRIVER_FUNCTIONS(CAKE_JIT_DECLARE_MEMBER)
  CAKE_JIT_DRIVER_OPTIONAL_FUNCTIONS(CAKE_JIT_DECLARE_MEMBER)
#undef CAKE_JIT_DECLARE_MEMBER

  driver(const driver&) = delete;
  driver& operator=(const driver&) = delete;
  ~driver() {
    if (handle_) ::dlclose(handle_);
  }

  // Loads a driver library, resolves every entry point, runs cuInit and checks that a device exists.
  // Uncached (get() is the cached, process-wide one); throws jit::error with the reason.
  static std::unique_ptr<driver> load(const char* library) {
    std::unique_ptr<driver> d(new driver);
    d->library_ = library;
    ::dlerror();
    d->handle_ = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!d->handle_) {
      const char* why = ::dlerror();
      throw error(std::string("no CUDA driver: dlopen(") + library + ") failed: " + (why ? why : "unknown reason"));
    }
    auto resolve = [&](const char* member, std::initializer_list<const char*> names, bool required) -> void* {
      for (const char* n : names)
        if (void* p = ::dlsym(d->handle_, n)) return p;
      if (required)
        throw error(std::string("the CUDA driver ") + library + " lacks " + *names.begin() + " (needed for " + member +
                    "): it is older than Cake requires (a CUDA 12 or newer driver); update the NVIDIA driver");
      return nullptr;
    };
#define CAKE_JIT_RESOLVE(name, ...) \
  d->name = reinterpret_cast<decltype(d->name)>(resolve(#name, {__VA_ARGS__}, required));
    {
      const bool required = true;
      CAKE_JIT_DRIVER_FUNCTIONS(CAKE_JIT_RESOLVE)
    }
    {
      const bool required = false;
      CAKE_JIT_DRIVER_OPTIONAL_FUNCTIONS(CAKE_JIT_RESOLVE)
    }
#undef CAKE_JIT_RESOLVE
    if (const CUresult r = d->cuInit(0); r != CUDA_SUCCESS)
      throw cuda_error(r, std::string(r == CUDA_ERROR_NO_DEVICE ? "no CUDA device: " : "CUDA driver unusable: ") +
                              "cuInit failed: " + d->describe(r) + " (library " + library + ")");
    d->check(d->cuDriverGetVersion(&d->version_), "cuDriverGetVersion", "querying the driver version");
    int count = 0;
    d->check(d->cuDeviceGetCount(&count), "cuDeviceGetCount", "counting devices");
    if (count <= 0)
      throw error(std::string("no CUDA device: the driver (") + library + ", CUDA " + version_string(d->version_) +
                  ") reports 0 devices");
    d->device_count_ = count;
    return d;
  }

  // The process-wide driver (libcuda.so.1), loaded on first use. Every call after a failure throws the
  // same message again.
  static const driver& get() {
    const auto& s = state();
    if (!s.loaded) throw error(s.reason);
    return *s.loaded;
  }
  static bool available() noexcept {
    try {
      return state().loaded != nullptr;
    } catch (...) {
      return false;
    }
  }
  static std::string unavailable_reason() { return state().reason; }

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
  std::string describe(CUresult r) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name) name = nullptr;
    if (cuGetErrorString(r, &text) != CUDA_SUCCESS || !text) text = nullptr;
    return std::string(name ? name : "CUDA error " + std::to_string(static_cast<int>(r))) +
           " (" + (text ? text : "no description") + ")";
  }

  // The one check every call goes through: "cuXxx failed: CUDA_ERROR_NAME (description) at <what>".
  void check(CUresult r, std::string_view call, std::string_view what) const {
    if (r != CUDA_SUCCESS) throw cuda_error(r, std::string(call) + " failed: " + describe(r) + " at " + std::string(what));
  }

  int device_count() const { return device_count_; }
  int version() const { return version_; }
  const std::string& library() const { return library_; }

  // Facts about a device, queried once.
  const device_info& device(int ordinal = 0) const {
    std::lock_guard lock(mutex_);
    if (auto it = devices_.find(ordinal); it != devices_.end()) return it->second;
    require_ordinal(ordinal);
    CUdevice dev = 0;
    check(cuDeviceGet(&dev, ordinal), "cuDeviceGet", "device " + std::to_string(ordinal));
    device_info i;
    i.ordinal = ordinal;
    char name[256] = {};
    check(cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName", "device " + std::to_string(ordinal));
    i.name = name;
    auto attr = [&](CUdevice_attribute a, const char* what) {
      int v = 0;
      check(cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute", what);
      return v;
    };
    i.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability major");
    i.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability minor");
    i.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count");
    i.smem_optin_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory per block");
    i.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 cache size");
    i.driver_version = version_;
    return devices_.emplace(ordinal, std::move(i)).first->second;
  }

  // The device's primary context, retained once and kept for the life of the process.
  CUcontext context(int ordinal = 0) const {
    std::lock_guard lock(mutex_);
    if (auto it = contexts_.find(ordinal); it != contexts_.end()) return it->second;
    require_ordinal(ordinal);
    CUdevice dev = 0;
    check(cuDeviceGet(&dev, ordinal), "cuDeviceGet", "device " + std::to_string(ordinal));
    CUcontext ctx = nullptr;
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain", "device " + std::to_string(ordinal));
    contexts_.emplace(ordinal, ctx);
    return ctx;
  }

  // Makes the device's primary context current on the calling thread (every runtime call does this).
  void bind(int ordinal = 0) const {
    const CUcontext want = context(ordinal);
    CUcontext current = nullptr;
    check(cuCtxGetCurrent(&current), "cuCtxGetCurrent", "binding device " + std::to_string(ordinal));
    if (current != want) check(cuCtxSetCurrent(want), "cuCtxSetCurrent", "binding device " + std::to_string(ordinal));
  }

  static std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

 private:
  driver() = default;

  struct load_state {
    std::unique_ptr<driver> loaded;
    std::string reason;
  };
  // Never destroyed: modules and buffers held in static objects may still release themselves through
  // the driver during static destruction, and unloading libcuda at exit is never needed.
  static const load_state& state() {
    static const load_state* s = [] {
      auto* r = new load_state;
      try {
        r->loaded = load("libcuda.so.1");
      } catch (const std::exception& e) {
        r->reason = e.what();
      }
      return r;
    }();
    return *s;
  }

  void require_ordinal(int ordinal) const {
    if (ordinal < 0 || ordinal >= device_count_)
      throw error("no CUDA device " + std::to_string(ordinal) + ": the driver reports " + std::to_string(device_count_) +
                  " device(s)");
  }

  void* handle_ = nullptr;
  std::string library_;
  int version_ = 0;
  int device_count_ = 0;
  mutable std::mutex mutex_;
  mutable std::map<int, device_info> devices_;
  mutable std::map<int, CUcontext> contexts_;
};

}  // namespace cake::jit
