#pragma once
// Representation pass: producers and consumers of a tile must agree on what the bytes mean. A region
// records dtype, shape, major-ness and swizzle once; TMA boxes (plan::plan_tma), MMA descriptors and
// register moves all read it, so the checks here are about the places where two of them meet: the
// tensor a copy reads vs the region's contiguous dimension, the box vs the swizzle span and the TMA
// box limits, the three MMA operands vs each other, and the two sides of every move. Register compute
// (r.set broadcasting, compute dtypes, fragment layouts) is checked in compute.hpp.
#include "compute.hpp"
#include "instruction.hpp"

namespace cake::analysis {

namespace detail {

// The tensor a copy into `region` reads, and the op doing it: the first TMA load or cp.async into it.
struct fill_source {
  int op = -1;
  int tensor = -1;
};
constexpr fill_source filled_from(const program& p, int region) {
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if ((o.kind == op_kind::tma_load || o.kind == op_kind::cp_async) && o.d.kind == operand_kind::smem && o.d.index == region &&
        o.a.kind == operand_kind::global)
      return {static_cast<int>(i), p.tile_refs[o.a.index].tensor};
  }
  return {};
}

constexpr bool used_by_mma_descriptor(const program& p, int region) {
  for (const auto& o : p.ops)
    if ((o.kind == op_kind::wgmma || o.kind == op_kind::tcgen05_mma) &&
        ((o.a.kind == operand_kind::smem && o.a.index == region) || (o.b.kind == operand_kind::smem && o.b.index == region)))
      return true;
  return false;
}

}  // namespace detail

constexpr void check_regions(context& c) {
  const program& p = c.p;
  for (std::size_t i = 0; i < p.smem.size(); ++i) {
    const auto& r = p.smem[i];
    const int span = swizzle_bytes(r.swz);
    if (span && r.inner_bytes() > span)
      if (diagnostic* d = emit_decl(c, rule_id::representation_swizzle_span, r.loc)) {
        d->message << "'" << r.nm.view() << "' rows are " << r.inner_bytes() << " B (" << r.cols << " x " << to_string(r.dt)
                   << ") but its swizzle spans " << span << " B";
        d->num("row_bytes", r.inner_bytes()).num("swizzle_bytes", span);
        d->help << "split the tile into " << span / size_bytes(r.dt) << "-column parts, or use a wider swizzle";
      }
    if (r.inner_bytes() % 16)
      if (diagnostic* d = emit_decl(c, rule_id::representation_inner_bytes, r.loc)) {
        d->message << "'" << r.nm.view() << "' rows are " << r.inner_bytes() << " B; TMA and ldmatrix move rows in multiples of 16 B";
        d->num("row_bytes", r.inner_bytes());
      }
  }
}

// What each MMA contracts and the major-ness of its operands (plan/dims.hpp): the contracted dim must be
// one both operands hold, unambiguously, and a major-ness declared on a region must agree with it.
constexpr void check_major(context& c) {
  const program& p = c.p;
  const auto& D = c.plan.dims;
  auto dim_name = [&](std::uint8_t d) { return d < p.dims.size() ? p.dims[d].nm.view() : std::string_view("?"); };
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (!is_mma(o.kind)) continue;
    const int id = static_cast<int>(i);
    const plan::contraction& m = D.mma[i];
    const plan::dim_pair a = plan::detail::operand_dims(p, D, o.a), b = plan::detail::operand_dims(p, D, o.b);
    if (m.status == plan::contraction_status::ambiguous || m.status == plan::contraction_status::none_shared ||
        m.status == plan::contraction_status::not_in_operand) {
      if (diagnostic* d = emit_op(c, rule_id::representation_mma_reduce_dim, id)) {
        d->message << "A holds (" << dim_name(a.rows) << ", " << dim_name(a.cols) << "), B holds (" << dim_name(b.rows) << ", " << dim_name(b.cols) << "): ";
        if (m.status == plan::contraction_status::ambiguous) d->message << "they share both dims, so the contracted one is ambiguous";
        else if (m.status == plan::contraction_status::none_shared) d->message << "they share no dim, so nothing can be contracted";
        else d->message << "over(" << dim_name(m.reduce) << ") names a dim " << (m.missing_in == 0 ? "A" : "B") << " does not hold";
        d->help << "name the contracted dim with .over(dim), and copy each operand from a tensor tile that holds it";
      }
      continue;
    }
    for (int w = 0; w < 2; ++w) {
      const operand& x = w == 0 ? o.a : o.b;
      if (x.kind != operand_kind::smem) continue;
      const auto& r = p.smem[x.index];
      const major derived = plan::operand_major(D, id, w);
      if (!r.mj_declared || r.mj == derived || m.status != plan::contraction_status::ok) continue;
      if (diagnostic* d = emit_op(c, rule_id::representation_major_mismatch, id)) {
        const plan::dim_pair rd = D.smem[x.index];
        d->message << "'" << r.nm.view() << "' is declared " << to_string(r.mj) << ", but it holds (" << dim_name(rd.rows) << ", " << dim_name(rd.cols)
                   << ") and this MMA contracts " << dim_name(m.reduce) << ", which makes it " << to_string(derived);
        d->add_note(r.loc) << "'" << r.nm.view() << "' declared " << to_string(r.mj) << " here";
        d->help << "drop major::" << (r.mj == major::k ? "k" : "mn") << " from '" << r.nm.view() << "' (Cake derives it), or copy the other dim into its columns";
      }
    }
  }
}

constexpr void check_mma_operands(context& c) {
  const program& p = c.p;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (!is_mma(o.kind)) continue;
    const int id = static_cast<int>(i);
    const mma_dims m = mma_dims_of(p, c.plan, id);
    const int want_m = m.acc_rows, want_n = m.acc_cols;
    if (m.a_m != want_m || m.b_n != want_n || m.a_k != m.b_k)
      if (diagnostic* d = emit_op(c, rule_id::representation_mma_operand_shape, id)) {
        d->message << "operands disagree: accumulator " << want_m << 'x' << want_n << ", A gives M=" << m.a_m << " K=" << m.a_k
                   << ", B gives N=" << m.b_n << " K=" << m.b_k;
        d->num("acc_m", want_m).num("acc_n", want_n).num("a_m", m.a_m).num("a_k", m.a_k).num("b_n", m.b_n).num("b_k", m.b_k);
        if (m.a_m != want_m) d->help << "A's rows must equal the accumulator's rows: select A's part per unit, e.g. s[sA].rows(r.warpgroup(), n)";
        else if (m.b_n != want_n) d->help << "B's rows must equal the accumulator's columns (N)";
        else d->help << "A and B must cover the same K extent";
      }
    const dtype adt = plan::dtype_of(p, o.a), acc = plan::dtype_of(p, o.d);
    if (!accumulator_legal(adt, acc))
      if (diagnostic* d = emit_op(c, rule_id::representation_accumulator_dtype, id)) {
        d->message << "a " << to_string(acc) << " accumulator is not legal for " << to_string(adt)
                   << " operands (bf16/tf32 -> f32; f16/fp8 -> f16 or f32; i8 -> i32)";
      }
    for (const operand* x : {&o.a, &o.b}) {
      if (x->kind != operand_kind::smem || o.kind == op_kind::mma_sync) continue;
      const auto& r = p.smem[x->index];
      const int span = swizzle_bytes(r.swz);
      if (span && r.inner_bytes() != span)
        if (diagnostic* d = emit_op(c, rule_id::representation_swizzle_atom, id)) {
          d->message << "'" << r.nm.view() << "' rows are " << r.inner_bytes() << " B but its " << to_string(r.swz)
                     << " swizzle atom needs rows of exactly " << span << " B for the MMA descriptor";
          d->num("row_bytes", r.inner_bytes()).num("swizzle_bytes", span);
          d->add_note(r.loc) << "'" << r.nm.view() << "' declared here";
          d->help << "use the swizzle whose span equals the row (" << r.inner_bytes() << " B), or widen the tile";
        }
    }
  }
}

constexpr void check_copies(context& c) {
  const program& p = c.p;
  const int cluster = p.launch.cluster_size();
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    const int id = static_cast<int>(i);
    if (plan::is_tma_move(o.kind) || o.kind == op_kind::cp_async) {
      const operand& s = o.kind == op_kind::cp_async ? o.d : plan::tma_smem_side(o);
      const operand& g = o.kind == op_kind::cp_async ? o.a : plan::tma_global_side(o);
      if (s.kind == operand_kind::smem && g.kind == operand_kind::global) {
        const dtype sd = p.smem[s.index].dt, gd = p.tensors[p.tile_refs[g.index].tensor].dt;
        if (sd != gd)
          if (diagnostic* d = emit_op(c, o.kind == op_kind::cp_async ? rule_id::representation_copy_dtype : rule_id::representation_tma_dtype, id)) {
            d->message << "copies bytes between " << to_string(sd) << " tile '" << p.smem[s.index].nm.view() << "' and " << to_string(gd)
                       << " tensor " << p.tensors[p.tile_refs[g.index].tensor].nm.view();
          }
        if (o.kind != op_kind::cp_async) {
          const auto box = plan::shape_of(p, s);
          const int split = o.has(flag_multicast) ? cluster : 1;
          const int rows = split > 0 ? box.rows / split : box.rows;
          if ((split > 1 && box.rows % split) || rows < 1 || rows > 256 || box.cols < 1 || box.cols > 256)
            if (diagnostic* d = emit_op(c, rule_id::representation_tma_box, id)) {
              d->message << "TMA box " << rows << 'x' << box.cols;
              if (split > 1) d->message << " (" << box.rows << " rows over " << split << " CTAs)";
              d->message << ": each box dimension must be 1..256";
              if (split > 1 && box.rows % split) d->message << " and the rows must split evenly across the cluster";
              d->num("box_rows", rows).num("box_cols", box.cols).num("split", split);
              d->help << "move the tile in parts, e.g. a region of at most 256 rows per box";
            }
        }
      }
      continue;
    }
    // Two-sided moves inside the CTA: the shapes must agree.
    if (!move_shapes_differ(p, id)) continue;
    const auto ds = plan::shape_of(p, o.d), as = plan::shape_of(p, o.a);
    if (diagnostic* d = emit_op(c, rule_id::representation_copy_shape, id)) {
      d->message << to_string(o.kind) << " moves " << as.rows << 'x' << as.cols << " ('" << resource_name(p, o.a) << "') into "
                 << ds.rows << 'x' << ds.cols << " ('" << resource_name(p, o.d) << "')";
      d->num("src_rows", as.rows).num("src_cols", as.cols).num("dst_rows", ds.rows).num("dst_cols", ds.cols);
      d->help << "select matching parts with .rows(i, n) / .cols(i, n)";
    }
  }
  // Row reductions and element-wise ops: representation.broadcast (compute.hpp).
}

constexpr void check_representation(context& c) {
  check_regions(c);
  check_major(c);
  check_mma_operands(c);
  check_copies(c);
  check_compute_representation(c);
}

}  // namespace cake::analysis
