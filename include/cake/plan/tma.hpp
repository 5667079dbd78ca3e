#pragma once
// The TMA plan: the tensor maps (descriptors) a kernel needs and which one each TMA op uses. A
// descriptor is fixed by (tensor, box, swizzle, out-of-bounds fill); the box is the smem part an op moves, and for a
// multicast load each CTA of the cluster moves rows/cluster_size of it (hardware-facts §2).
#include "../ir/program.hpp"
#include "operands.hpp"

namespace cake::plan {

struct tma_descriptor {
  std::uint8_t tensor = no_index;
  std::uint8_t row_pos = 0;        // the tensor dim the box's rows run along (its columns: the last dim)
  int box_rows = 0, box_cols = 0;  // the box's extents along those dims; 1 along every other dim
  swizzle swz = swizzle::none;
  bool nan_fill = false;  // elements outside the tensor arrive as NaN (a load's fill_outside(nan)), else 0
  friend constexpr bool operator==(const tma_descriptor&, const tma_descriptor&) = default;
};

struct tma_plan {
  static constexpr int max_descriptors = 8;
  tma_descriptor descriptors[max_descriptors]{};
  int count = 0;
  std::int8_t of_op[capacity::ops]{};  // descriptor index per op id, -1 if the op is not a TMA op
  int split_of_op[capacity::ops]{};    // CTAs that share a multicast load (1 otherwise)
  bool overflow = false;
};

// TMA ops with a box: loads, stores and tile prefetches (a prefetch's smem operand only gives the box, the
// shape of the load it runs ahead of, so that both use one tensor map).
constexpr bool is_tma_move(op_kind k) { return k == op_kind::tma_load || k == op_kind::tma_store || k == op_kind::tma_prefetch_tile; }
constexpr bool tma_reads_global(op_kind k) { return k == op_kind::tma_load || k == op_kind::tma_prefetch_tile; }

// The smem side and the global side of a TMA op.
constexpr const operand& tma_smem_side(const op& o) { return tma_reads_global(o.kind) ? o.d : o.a; }
constexpr const operand& tma_global_side(const op& o) { return tma_reads_global(o.kind) ? o.a : o.d; }

constexpr tma_plan plan_tma(const program& p) {
  tma_plan T;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    T.of_op[i] = -1;
    T.split_of_op[i] = 1;
    const op& o = p.ops[i];
    if (!is_tma_move(o.kind)) continue;
    const operand& s = tma_smem_side(o);
    const operand& g = tma_global_side(o);
    if (s.kind != operand_kind::smem || g.kind != operand_kind::global) continue;
    const extent2 box = shape_of(p, s);
    const int split = o.has(flag_multicast) ? p.launch.cluster_size() : 1;
    const auto& ref = p.tile_refs[g.index];
    const int row_pos = ref.row_pos != no_index ? ref.row_pos : (ref.rank >= 2 ? ref.rank - 2 : 0);
    tma_descriptor d{ref.tensor, static_cast<std::uint8_t>(row_pos), split > 0 ? box.rows / split : box.rows, box.cols, p.smem[s.index].swz,
                     o.kind == op_kind::tma_load && o.has(flag_oob_nan)};
    int found = -1;
    for (int j = 0; j < T.count; ++j)
      if (T.descriptors[j] == d) found = j;
    // (a prefetch fills nothing: any descriptor of its box serves it, whatever that one's out-of-bounds fill)
    if (o.kind == op_kind::tma_prefetch_tile)
      for (int j = 0; j < T.count && found < 0; ++j) {
        tma_descriptor e = T.descriptors[j];
        e.nan_fill = false;
        if (e == d) found = j;
      }
    if (found < 0) {
      if (T.count == tma_plan::max_descriptors) {
        T.overflow = true;
        continue;
      }
      T.descriptors[T.count] = d;
      found = T.count++;
    }
    T.of_op[i] = static_cast<std::int8_t>(found);
    T.split_of_op[i] = split;
  }
  return T;
}

}  // namespace cake::plan
