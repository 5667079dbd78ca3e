#pragma once
// The one exception type of the JIT layer. It is thrown for environmental failures (no driver, no
// device, NVRTC refusing its options, an unknown target, a CUDA call that failed, invalid launch or
// tensor-map parameters). A kernel that does not compile is *not* an exception: compile() and build()
// return a result that carries the mapped diagnostics.
#include <stdexcept>
#include <string>

namespace cake::jit {

class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An entry point (cake::gemm, cake::softmax, ...) refusing one of its arguments; the message names it.
// Thrown before any driver call, so it is the same with or without a GPU.
class argument_error : public error {
 public:
  using error::error;
};

// The device cannot run what was asked (e.g. an sm_90a schedule on a device that is not cc 9.0).
class unsupported_error : public error {
 public:
  using error::error;
};

}  // namespace cake::jit
