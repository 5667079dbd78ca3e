#pragma once
// The kernel's parameter block: one struct passed by value as a __grid_constant__ parameter. The
// emitter prints its definition from this layout and the runtime packs the same bytes from it, so the
// two can never disagree. TMA descriptors come first (64-byte aligned, hardware-facts §2), then one
// global pointer per tensor, the runtime extent of every dim, per-tensor strides (elements) and the
// scalar parameters.
#include <cstddef>

#include "../ir/program.hpp"
#include "../plan/tma.hpp"

namespace cake::lower {

inline constexpr int tensor_map_bytes = 128;  // sizeof(CUtensorMap)

struct args_layout {
  int tensor_maps = 0;
  int tensors = 0;
  int dims = 0;
  int scalars = 0;
  std::size_t tmap_offset = 0;
  std::size_t ptr_offset = 0;
  std::size_t dim_offset = 0;     // long long per dim
  std::size_t stride_offset = 0;  // long long [tensors][4]: element stride of each dim (innermost = 1)
  std::size_t scalar_offset = 0;  // 8 bytes per scalar (float/int stored in the low bytes)
  std::size_t size = 0;           // whole struct, a multiple of 64
};

constexpr std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

constexpr args_layout make_args_layout(const program& p, const plan::tma_plan& tma) {
  args_layout L;
  L.tensor_maps = tma.count;
  L.tensors = static_cast<int>(p.tensors.size());
  L.dims = static_cast<int>(p.dims.size());
  L.scalars = static_cast<int>(p.scalars.size());
  std::size_t at = 0;
  L.tmap_offset = at;
  at += static_cast<std::size_t>(L.tensor_maps) * tensor_map_bytes;
  L.ptr_offset = at;
  at += 8u * static_cast<std::size_t>(L.tensors > 0 ? L.tensors : 1);
  L.dim_offset = at;
  at += 8u * static_cast<std::size_t>(L.dims > 0 ? L.dims : 1);
  L.stride_offset = at;
  at += 32u * static_cast<std::size_t>(L.tensors > 0 ? L.tensors : 1);
  L.scalar_offset = at;
  at += 8u * static_cast<std::size_t>(L.scalars > 0 ? L.scalars : 1);
  L.size = round_up(at, 64);
  return L;
}

}  // namespace cake::lower
