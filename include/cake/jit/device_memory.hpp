#pragma once
// A small owning device buffer for tests, examples and benchmarks, with checked copies.
#include <cuda.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <cake/jit/driver.hpp>

namespace cake::jit {

class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes, int ordinal = 0) : bytes_(bytes), ordinal_(ordinal) {
    if (bytes == 0) return;
    const auto& d = driver::get();
    d.bind(ordinal);
    d.check(d.cuMemAlloc(&ptr_, bytes), "cuMemAlloc", "allocating " + std::to_string(bytes) + " B");
  }
  device_buffer(device_buffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)), ordinal_(o.ordinal_) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, 0);
      bytes_ = std::exchange(o.bytes_, 0);
      ordinal_ = o.ordinal_;
    }
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() { release(); }

  CUdeviceptr get() const { return ptr_; }           // pass &buffer.get()'s value as a pointer argument
  void* address() const { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr_)); }  // for tensor maps
  std::size_t size() const { return bytes_; }
  int ordinal() const { return ordinal_; }

  template <class T>
  void upload(std::span<const T> host, std::size_t offset_bytes = 0) {
    require(offset_bytes + host.size_bytes(), "upload");
    const auto& d = driver::get();
    d.bind(ordinal_);
    d.check(d.cuMemcpyHtoD(ptr_ + offset_bytes, host.data(), host.size_bytes()), "cuMemcpyHtoD",
            "uploading " + std::to_string(host.size_bytes()) + " B");
  }
  template <class T>
  void upload(const std::vector<T>& host) { upload(std::span<const T>(host)); }

  template <class T>
  void download(std::span<T> host, std::size_t offset_bytes = 0) const {
    require(offset_bytes + host.size_bytes(), "download");
    const auto& d = driver::get();
    d.bind(ordinal_);
    d.check(d.cuMemcpyDtoH(host.data(), ptr_ + offset_bytes, host.size_bytes()), "cuMemcpyDtoH",
            "downloading " + std::to_string(host.size_bytes()) + " B");
  }
  // The whole buffer (or its first `count` elements) as a vector.
  template <class T>
  std::vector<T> download(std::size_t count = static_cast<std::size_t>(-1)) const {
    if (count == static_cast<std::size_t>(-1)) count = bytes_ / sizeof(T);
    std::vector<T> v(count);
    download(std::span<T>(v));
    return v;
  }

  // Fills the buffer with a 32-bit pattern (poisoning outputs before a test: 0xFFFFFFFF is a NaN in
  // f32, bf16 pairs and f16 pairs). The size must be a multiple of 4.
  void fill_u32(std::uint32_t pattern) {
    if (bytes_ % 4 != 0) throw error("fill_u32 on a buffer of " + std::to_string(bytes_) + " B (not a multiple of 4)");
    const auto& d = driver::get();
    d.bind(ordinal_);
    d.check(d.cuMemsetD32(ptr_, pattern, bytes_ / 4), "cuMemsetD32", "filling " + std::to_string(bytes_) + " B");
  }

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
  int ordinal_ = 0;

  void require(std::size_t end, const char* op) const {
    if (end > bytes_)
      throw error(std::string(op) + " of " + std::to_string(end) + " B does not fit a device buffer of " +
                  std::to_string(bytes_) + " B");
  }
  void release() noexcept {
    if (ptr_ && driver::available()) {
      const auto& d = driver::get();
      try {
        d.bind(ordinal_);
      } catch (...) {
      }
      d.cuMemFree(ptr_);
    }
    ptr_ = 0;
  }
};

// A device copy of a host vector.
template <class T>
device_buffer to_device(const std::vector<T>& host, int ordinal = 0) {
  device_buffer b(host.size() * sizeof(T), ordinal);
  if (!host.empty()) b.upload(host);
  return b;
}

}  // namespace cake::jit
