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

}  // namespace cake::jit
