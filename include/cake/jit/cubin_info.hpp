#pragma once
// What a CUBIN itself records about an entry function, for when NVRTC's log does not say it: the log
// format of ptxas' -v report differs between NVRTC builds (one seen on the H200 image printed no function
// name and no register line), while the CUBIN's .nv.info section always carries the register count and
// frame size the driver uses. ELF64 little-endian (what NVRTC emits); every read is bounds-checked and a
// malformed image gives "nothing found", never a crash.
//
// .nv.info holds attributes as (format u8, attribute u8, payload); format 0x04 has a u16 size and that many
// bytes, 0x03 two bytes, 0x02 one byte, 0x01 none. EIATTR_REGCOUNT (0x2f) and EIATTR_FRAME_SIZE (0x11) carry
// (symbol index u32, value u32), the symbol being the entry function's in .symtab.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace cake::jit {

struct cubin_function_info {
  int registers = 0;
  int frame_size = 0;  // bytes of stack frame (local memory per thread)
};

namespace detail {
template <class T>
inline std::optional<T> read_le(std::string_view b, std::uint64_t at) {
  if (at > b.size() || b.size() - at < sizeof(T)) return std::nullopt;
  T v{};
  std::memcpy(&v, b.data() + at, sizeof(T));  // x86-64 and aarch64 hosts are little-endian, like the image
  return v;
}
}  // namespace detail

// The register count and frame size of entry function `name` in `cubin`, or nullopt (not an ELF64 image,
// no such symbol, no attribute).
inline std::optional<cubin_function_info> cubin_function(std::string_view cubin, std::string_view name) {
  using detail::read_le;
  if (cubin.size() < 64 || cubin.substr(0, 4) != std::string_view("\x7f" "ELF", 4) || cubin[4] != 2 || cubin[5] != 1) return std::nullopt;
  const auto shoff = read_le<std::uint64_t>(cubin, 0x28);
  const auto shentsize = read_le<std::uint16_t>(cubin, 0x3a), shnum = read_le<std::uint16_t>(cubin, 0x3c), shstrndx = read_le<std::uint16_t>(cubin, 0x3e);
  if (!shoff || !shentsize || !shnum || !shstrndx || *shentsize < 64 || *shstrndx >= *shnum) return std::nullopt;
  struct section {
    std::uint32_t name = 0, type = 0, link = 0;
    std::uint64_t offset = 0, size = 0, entsize = 0;
  };
  auto sec = [&](unsigned i) -> std::optional<section> {
    const std::uint64_t h = *shoff + static_cast<std::uint64_t>(i) * *shentsize;
    auto nm = read_le<std::uint32_t>(cubin, h), ty = read_le<std::uint32_t>(cubin, h + 4), lk = read_le<std::uint32_t>(cubin, h + 0x28);
    auto of = read_le<std::uint64_t>(cubin, h + 0x18), sz = read_le<std::uint64_t>(cubin, h + 0x20), es = read_le<std::uint64_t>(cubin, h + 0x38);
    if (!nm || !ty || !lk || !of || !sz || !es || *of > cubin.size() || cubin.size() - *of < *sz) return std::nullopt;
    return section{*nm, *ty, *lk, *of, *sz, *es};
  };
  auto str = [&](const section& table, std::uint32_t at) -> std::string_view {
    if (at >= table.size) return {};
    const std::string_view t = cubin.substr(table.offset + at, table.size - at);
    return t.substr(0, t.find('\0'));
  };
  const auto names = sec(*shstrndx);
  if (!names) return std::nullopt;
  // the entry function's symbol index
  long long symbol = -1;
  for (unsigned i = 0; i < *shnum && symbol < 0; ++i) {
    const auto s = sec(i);
    if (!s || s->type != 2 /* SHT_SYMTAB */ || s->entsize < 24 || s->link >= *shnum) continue;
    const auto strings = sec(s->link);
    if (!strings) continue;
    for (std::uint64_t k = 0; k < s->size / s->entsize; ++k) {
      const auto st_name = read_le<std::uint32_t>(cubin, s->offset + k * s->entsize);
      if (st_name && str(*strings, *st_name) == name) {
        symbol = static_cast<long long>(k);
        break;
      }
    }
  }
  if (symbol < 0) return std::nullopt;
  std::optional<cubin_function_info> out;
  for (unsigned i = 0; i < *shnum; ++i) {
    const auto s = sec(i);
    if (!s || str(*names, s->name) != ".nv.info") continue;
    std::uint64_t at = s->offset;
    const std::uint64_t end = s->offset + s->size;
    while (at + 2 <= end) {
      const auto fmt = static_cast<unsigned char>(cubin[at]), attr = static_cast<unsigned char>(cubin[at + 1]);
      at += 2;
      std::uint64_t payload = 0;
      if (fmt == 0x04) {
        const auto size = read_le<std::uint16_t>(cubin, at);
        if (!size) break;
        at += 2;
        payload = *size;
      } else if (fmt == 0x03) {
        payload = 2;
      } else if (fmt == 0x02) {
        payload = 1;
      } else if (fmt != 0x01) {
        break;  // an unknown format: stop rather than misread
      }
      if (at + payload > end) break;
      if (fmt == 0x04 && payload >= 8 && (attr == 0x2f || attr == 0x11)) {
        const auto sym = read_le<std::uint32_t>(cubin, at), value = read_le<std::uint32_t>(cubin, at + 4);
        if (sym && value && *sym == static_cast<std::uint64_t>(symbol)) {
          if (!out) out.emplace();
          (attr == 0x2f ? out->registers : out->frame_size) = static_cast<int>(*value);
        }
      }
      at += payload;
    }
  }
  return out;
}

}  // namespace cake::jit
