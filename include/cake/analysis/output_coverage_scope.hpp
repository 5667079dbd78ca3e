#pragma once
// Which stores memory.output-coverage (output_coverage.hpp) enumerates: an output store whose tile
// coordinates remap the walk's indices, or that runs under a when (its condition evaluated per point), and whose
// every part the check can evaluate. memory.tile-coverage
// leaves those to it instead of noting them unchecked.
#include "context.hpp"

namespace cake::analysis {

namespace output_cov {

// A coordinate memory.tile-coverage does not check term by term: a non-plain parallel index, a division or
// modulo of the sum, or a let_index value.
constexpr bool remapped(const index_expr& x) {
  if (!x.linear()) return x.uses(var_kind::tile_coord) || x.uses(var_kind::value);
  for (int k = 0; k < x.term_count; ++k)
    if ((x.terms[k].kind == var_kind::tile_coord && !x.terms[k].plain()) || x.terms[k].kind == var_kind::value) return true;
  return false;
}

}  // namespace output_cov

// Whether memory.output-coverage enumerates op i (a store whose coordinates remap the walk and whose every
// part it can evaluate): memory.tile-coverage then leaves it to this check instead of noting it unchecked.
constexpr bool output_coverage_enumerable(const program& p, int i) {
  const op& o = p.ops[i];
  if (o.kind != op_kind::store_global && o.kind != op_kind::tma_store) return false;
  if (o.d.kind != operand_kind::global || (o.a.kind != operand_kind::reg && o.a.kind != operand_kind::smem)) return false;
  const auto& ref = p.tile_refs[o.d.index];
  bool any = false;  // coordinates memory.tile-coverage cannot check term by term, or a when it cannot follow
  for (int j = 0; j < ref.rank; ++j) any = any || output_cov::remapped(ref.coords[j]);
  for (int a = o.parent; a >= 0 && p.ops[a].kind != op_kind::tile_loop; a = p.ops[a].parent)
    any = any || (p.ops[a].kind == op_kind::when && !p.ops[a].has(flag_next_point));
  if (!any) return false;
  for (int j = 0; j < ref.rank; ++j)
    if (ref.coords[j].uses(var_kind::value))
      for (int k = 0; k < ref.coords[j].term_count; ++k)
        if (ref.coords[j].terms[k].kind == var_kind::value && p.ops[ref.coords[j].terms[k].ref].kind != op_kind::let_index)
          return false;
  int writers = 0;
  for (const op& w : p.ops)
    if ((w.kind == op_kind::store_global || w.kind == op_kind::tma_store) && w.d.kind == operand_kind::global && p.tile_refs[w.d.index].tensor == ref.tensor) ++writers;
  if (writers > 1) return false;
  for (int a = o.parent; a >= 0; a = p.ops[a].parent) {
    const op& ctl = p.ops[a];
    if (ctl.kind == op_kind::tile_loop) return !ctl.has(flag_alternate);  // an alternating walk hands points to units in turn: not enumerated
    if (ctl.kind == op_kind::when && !ctl.has(flag_next_point)) continue;  // its condition is evaluated per point
    if (ctl.kind != op_kind::loop || !ctl.has(flag_static_trip)) return false;
  }
  return false;  // outside the walk
}

}  // namespace cake::analysis
