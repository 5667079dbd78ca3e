#pragma once
// SipHash-2-4 (J.-P. Aumasson and D. J. Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed
// 64-bit MAC. The JIT cache signs its entries with it under a secret key kept in the cache root
// (cache_secret.hpp), so an entry that was not written by a holder of the key (planted, or copied from
// another cache) is refused. Unlike hash.hpp's digest, which only has to catch damage, this one has to
// resist someone who does not know the key: that is what SipHash was designed for.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cake::jit {

struct siphash_key {
  std::uint64_t k0 = 0, k1 = 0;
  friend bool operator==(const siphash_key&, const siphash_key&) = default;
};

namespace detail {
inline std::uint64_t sip_rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
inline std::uint64_t sip_load_le(const unsigned char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}
}  // namespace detail

inline std::uint64_t siphash24(const siphash_key& key, const void* data, std::size_t n) {
  using detail::sip_rotl;
  std::uint64_t v0 = 0x736f6d6570736575ull ^ key.k0, v1 = 0x646f72616e646f6dull ^ key.k1;
  std::uint64_t v2 = 0x6c7967656e657261ull ^ key.k0, v3 = 0x7465646279746573ull ^ key.k1;
  auto round = [&] {
    v0 += v1, v1 = sip_rotl(v1, 13), v1 ^= v0, v0 = sip_rotl(v0, 32);
    v2 += v3, v3 = sip_rotl(v3, 16), v3 ^= v2;
    v0 += v3, v3 = sip_rotl(v3, 21), v3 ^= v0;
    v2 += v1, v1 = sip_rotl(v1, 17), v1 ^= v2, v2 = sip_rotl(v2, 32);
  };
  const auto* p = static_cast<const unsigned char*>(data);
  const std::size_t whole = n - n % 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    const std::uint64_t m = detail::sip_load_le(p + i, 8);
    v3 ^= m;
    round(), round();
    v0 ^= m;
  }
  const std::uint64_t last = (static_cast<std::uint64_t>(n & 0xff) << 56) | detail::sip_load_le(p + whole, n % 8);
  v3 ^= last;
  round(), round();
  v0 ^= last;
  v2 ^= 0xff;
  round(), round(), round(), round();
  return v0 ^ v1 ^ v2 ^ v3;
}

// The MAC as 16 hex digits (the form cache metadata records).
inline std::string keyed_digest(const siphash_key& key, std::string_view data) {
  static constexpr char digits[] = "0123456789abcdef";
  std::uint64_t v = siphash24(key, data.data(), data.size());
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = digits[v & 0xf];
  return s;
}

}  // namespace cake::jit
