#pragma once
// A 128-bit content digest for cache keys and artifact checksums: two independent FNV-1a-64 streams
// (different offset bases, the second over bit-flipped bytes), each finished with a splitmix64
// avalanche and cross-mixed, printed as 32 hex digits. Not cryptographic; it only has to make accidental
// collisions between kernels negligible and catch truncated or damaged files.
#include <cstdint>
#include <string>
#include <string_view>

namespace cake::jit {

class digest_builder {
 public:
  // Raw bytes.
  digest_builder& bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      a_ = (a_ ^ p[i]) * prime;
      b_ = (b_ ^ static_cast<unsigned char>(~p[i])) * prime;
    }
    return *this;
  }
  // A field: its length first, so that ("ab","c") and ("a","bc") hash differently.
  digest_builder& field(std::string_view s) {
    const std::uint64_t n = s.size();
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    bytes(len, sizeof len);
    return bytes(s.data(), s.size());
  }

  std::string hex() const {
    const std::uint64_t x = mix(a_ ^ rotl(b_, 29));
    const std::uint64_t y = mix(b_ + 0x9e3779b97f4a7c15ull * a_);
    return to_hex(x) + to_hex(y);
  }

 private:
  static constexpr std::uint64_t prime = 0x100000001b3ull;
  std::uint64_t a_ = 0xcbf29ce484222325ull;  // the FNV-1a-64 offset basis
  std::uint64_t b_ = 0x84222325cbf29ce4ull;  // a second, different basis

  static std::uint64_t rotl(std::uint64_t v, int r) { return (v << r) | (v >> (64 - r)); }
  static std::uint64_t mix(std::uint64_t z) {  // splitmix64 finalizer
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  static std::string to_hex(std::uint64_t v) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s(16, '0');
    for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = digits[v & 0xf];
    return s;
  }
};

// Digest of one blob (artifact checksums).
inline std::string content_digest(std::string_view data) { return digest_builder{}.bytes(data.data(), data.size()).hex(); }

}  // namespace cake::jit
