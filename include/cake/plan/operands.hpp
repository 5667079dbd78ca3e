#pragma once
// Geometry of operands: the rows x cols an op actually touches after part selection, and where that
// part starts inside one stage of its region. Shared by the builder's checks, the analyzer, the
// cost model and the emitter.
#include "../ir/program.hpp"

namespace cake::plan {

struct extent2 {
  int rows = 0, cols = 0;
};

constexpr extent2 full_shape(const program& p, const operand& o) {
  switch (o.kind) {
    case operand_kind::smem: return {p.smem[o.index].rows, p.smem[o.index].cols};
    case operand_kind::reg: return {p.regs[o.index].rows, p.regs[o.index].cols};
    case operand_kind::tmem: return {p.tmem[o.index].lanes, p.tmem[o.index].columns};
    default: return {};
  }
}

constexpr extent2 shape_of(const program& p, const operand& o) {
  extent2 s = full_shape(p, o);
  if (o.parts > 0) {
    if (o.part == part_axis::rows) s.rows /= o.parts;
    if (o.part == part_axis::cols) s.cols /= o.parts;
  }
  return s;
}

constexpr dtype dtype_of(const program& p, const operand& o) {
  switch (o.kind) {
    case operand_kind::smem: return p.smem[o.index].dt;
    case operand_kind::reg: return p.regs[o.index].dt;
    case operand_kind::tmem: return p.tmem[o.index].dt;
    case operand_kind::global: return p.tensors[p.tile_refs[o.index].tensor].dt;
    case operand_kind::tensor: return p.tensors[o.index].dt;
    default: return dtype::f32;
  }
}

// Bytes one stage (copy) of an smem operand's part occupies.
constexpr int bytes_of(const program& p, const operand& o) {
  const extent2 s = shape_of(p, o);
  return s.rows * s.cols * size_bits(dtype_of(p, o)) / 8;
}

// Byte offset of part `part_value` inside one stage of a row-major smem region. Row parts are whole
// rows; column parts of a swizzled region are whole swizzle atoms only when cols/parts covers a span.
constexpr int part_offset_bytes(const program& p, const operand& o, int part_value) {
  if (o.kind != operand_kind::smem || o.part == part_axis::none) return 0;
  const auto& r = p.smem[o.index];
  const extent2 s = shape_of(p, o);
  if (o.part == part_axis::rows) return part_value * s.rows * r.inner_bytes();
  return part_value * s.cols * size_bits(r.dt) / 8;
}

// Is the part's start aligned as its region's swizzle requires? (TMA destinations and wgmma
// descriptors assume the pattern starts on the atom boundary.)
constexpr bool part_alignment_ok(const program& p, const operand& o) {
  if (o.kind != operand_kind::smem || o.part == part_axis::none) return true;
  const int a = swizzle_alignment(p.smem[o.index].swz);
  const int step = part_offset_bytes(p, o, 1);
  return step % a == 0;
}

}  // namespace cake::plan
