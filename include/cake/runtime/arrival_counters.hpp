#pragma once
// The i32 counters a kernel's r.count_arrival steps (docs/language.md, "Arrival counters"), and the workspace of
// partial results (partials_workspace_for), owned by the library.
// The counters:
// per device and stream, zero when allocated, and left at zero by every launch that completes (atom.inc wraps
// after the n-th arrival). Launches on one stream run in order, so the entry points that use counters (split-K
// through global memory, decode's fused combine) share one buffer per stream; launches on other streams get
// their own. The buffer grows (never shrinks) to what a launch needs; a replaced one is kept alive, as launches
// still in flight may use it.
#include <algorithm>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <cake/jit/device_memory.hpp>

namespace cake {

// `buf` grown to at least `need` bytes (at least `floor`, at least twice what it had: few growths) on `device`; the
// buffer it replaces goes to `retired`, kept alive for the launches still in flight that use it. True when it grew.
inline bool grow_retiring(jit::device_buffer& buf, std::vector<jit::device_buffer>& retired, std::size_t need, std::size_t floor, int device) {
  if (buf.size() >= need) return false;
  const std::size_t had = buf.size();
  if (had) retired.push_back(std::move(buf));
  buf = jit::device_buffer(std::max({need, floor, 2 * had}), device);
  return true;
}

// One growing device buffer per (device, stream) for each Kind, at least `need` bytes (grow_retiring; zeroed when
// made, where `zero`).
namespace detail {
struct counters_kind;  // (the Kinds of stream_buffer below)
struct partials_kind;
}  // namespace detail

template <class Kind>
inline CUdeviceptr stream_buffer(int device, CUstream stream, std::size_t need, std::size_t floor, bool zero) {
  struct entry {
    jit::device_buffer buf;
    std::vector<jit::device_buffer> retired;
  };
  static std::mutex mu;
  static std::map<std::pair<int, CUstream>, entry> cache;
  const std::lock_guard<std::mutex> lock(mu);
  entry& e = cache[{device, stream}];
  if (grow_retiring(e.buf, e.retired, need, floor, device) && zero) e.buf.fill_u32(0);
  return e.buf.get();
}

inline CUdeviceptr arrival_counters_for(int device, CUstream stream, std::size_t counters) {
  return stream_buffer<detail::counters_kind>(device, stream, counters * 4, std::size_t{4096} * 4, true);
}

// Device memory for what a launch's units leave for another unit or a later kernel to combine (split-K's partial
// sums, a split tail's parts), per device and stream (launches on one stream run in order, so the entry points that
// use it share one buffer per stream; two streams must not), grown as `arrival_counters_for` grows its counters.
// The first call on a stream allocates: under CUDA graph capture, make one call before capturing.
inline CUdeviceptr partials_workspace_for(int device, CUstream stream, std::size_t bytes) {
  return stream_buffer<detail::partials_kind>(device, stream, bytes, std::size_t{1} << 20, false);
}

}  // namespace cake
