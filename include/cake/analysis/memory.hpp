#pragma once
// Memory pass (the static part): parts inside their regions, TMA boxes on their alignment (offsets from
// plan::plan_smem and plan/operands.hpp), TMEM capacity (plan::plan_tmem), the tcgen05.ld/st lane
// restriction per warp (warp ids from plan::plan_warps), register ownership. Index values that change
// at run time (stage and part expressions over loops) are checked by the protocol executor.
#include "context.hpp"

namespace cake::analysis {

namespace detail {

constexpr int extent_along(const program& p, const operand& o) {
  const auto full = plan::full_shape(p, o);
  return o.part == part_axis::rows ? full.rows : full.cols;
}

// Value of an index expression for one unit of a role, when it only depends on the unit index.
struct unit_value {
  bool known = false;
  long long value = 0;
};
constexpr unit_value eval_for_unit(const index_expr& e, const role_decl& r, int unit) {
  for (int i = 0; i < e.term_count; ++i)
    if (e.terms[i].kind != var_kind::warp && e.terms[i].kind != var_kind::warpgroup) return {};
  const int warp = r.unit == role_unit::warpgroup ? 4 * unit : unit;
  const int wg = r.unit == role_unit::warpgroup ? unit : unit / 4;
  return {true, e.eval([&](const index_term& t) -> long long { return t.kind == var_kind::warp ? warp : wg; })};
}

}  // namespace detail

constexpr void check_parts(context& c) {
  const program& p = c.p;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    for (const operand* x : {&o.d, &o.a, &o.b}) {
      if (x->part == part_axis::none || (x->kind != operand_kind::smem && x->kind != operand_kind::tmem && x->kind != operand_kind::reg)) continue;
      const int ext = detail::extent_along(p, *x);
      if (x->parts < 1 || ext % x->parts) {
        if (diagnostic* d = emit_op(c, rule_id::ir_part_count, static_cast<int>(i))) {
          d->message << "'" << resource_name(p, *x) << "' is cut into " << static_cast<int>(x->parts) << " parts along its "
                     << (x->part == part_axis::rows ? "rows" : "columns") << " (" << ext << "), which do not divide it evenly";
          d->num("extent", ext).num("parts", x->parts);
        }
        continue;
      }
      if (!x->part_index.is_constant() || (x->part_index.constant >= 0 && x->part_index.constant < x->parts)) continue;
      if (diagnostic* d = emit_op(c, rule_id::memory_smem_bounds, static_cast<int>(i))) {
        d->message << "part " << x->part_index.constant << " of '" << resource_name(p, *x) << "' does not exist: it is cut into "
                   << static_cast<int>(x->parts) << " parts along its " << (x->part == part_axis::rows ? "rows" : "columns");
        d->num("index", x->part_index.constant).num("parts", x->parts);
      }
    }
  }
}

constexpr void check_tma_alignment(context& c) {
  const program& p = c.p;
  const auto& L = c.plan.smem;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (!plan::is_tma_move(o.kind)) continue;
    const operand& s = plan::tma_smem_side(o);
    if (s.kind != operand_kind::smem) continue;
    const auto& r = p.smem[s.index];
    const int need = swizzle_alignment(r.swz);
    int bad_offset = -1;
    for (int st = 0; st < r.stages && bad_offset < 0; ++st)
      if (plan::stage_offset(L, s.index, st) % need) bad_offset = plan::stage_offset(L, s.index, st);
    if (bad_offset < 0 && !plan::part_alignment_ok(p, s)) bad_offset = plan::part_offset_bytes(p, s, 1);
    // A multicast box is split in rows across the cluster: each CTA's slice is a destination too.
    const int split = o.has(flag_multicast) ? p.launch.cluster_size() : 1;
    if (bad_offset < 0 && split > 1) {
      const int slice = plan::bytes_of(p, s) / split;
      if (slice % need) bad_offset = slice;
    }
    if (bad_offset < 0) continue;
    if (diagnostic* d = emit_op(c, rule_id::memory_tma_alignment, static_cast<int>(i))) {
      d->message << "the TMA box in '" << r.nm.view() << "' starts at a multiple of " << bad_offset << " B; a " << to_string(r.swz)
                 << "-swizzled box must start on " << need << " B";
      d->num("offset_bytes", bad_offset).num("alignment", need);
      d->help << "cut the region into parts of a multiple of " << need / r.inner_bytes() << " rows, or use a smaller swizzle";
    }
  }
}

constexpr void check_tmem(context& c) {
  const program& p = c.p;
  const auto& T = c.plan.tmem;
  if (!T.fits && !p.tmem.empty())
    if (diagnostic* d = emit_decl(c, rule_id::resource_tmem_overflow, p.tmem[0].loc)) {
      d->message << "the TMEM regions need " << T.used << " columns; tensor memory has 512";
      d->num("columns", T.used).num("limit", 512);
      for (std::size_t i = 0; i < p.tmem.size(); ++i)
        d->add_note(p.tmem[i].loc) << "'" << p.tmem[i].nm.view() << "': " << p.tmem[i].stages << " x " << p.tmem[i].columns << " columns";
      d->help << "use fewer accumulator stages or a narrower N tile";
    }
  // tcgen05.ld/st: warp w of the CTA reaches lanes 32*(w%4) .. 32*(w%4)+31 only.
  const auto& W = c.plan.warps;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    if (o.kind != op_kind::tmem_load && o.kind != op_kind::tmem_store) continue;
    const operand& t = o.kind == op_kind::tmem_load ? o.a : o.d;
    if (t.kind != operand_kind::tmem) continue;
    const auto& role = p.roles[o.role];
    const auto& rp = W.roles[o.role];
    const auto shape = plan::shape_of(p, t);
    const int lanes = p.tmem[t.index].lanes;
    for (int u = 0; u < role.count; ++u) {
      int first_lane = 0;
      if (t.part == part_axis::rows) {
        const auto v = detail::eval_for_unit(t.part_index, role, u);
        if (!v.known) {
          add_coverage(c, rule_id::memory_tmem_lane_access, static_cast<int>(i), o.loc,
                       "TMEM lane access: a row part that depends on loop or tile variables is not checked against the warp's lanes");
          break;
        }
        first_lane = static_cast<int>(v.value) * shape.rows;
      }
      bool ok;
      int warp = rp.first_warp + u;
      if (role.unit == role_unit::warpgroup) {
        ok = first_lane == 0 && shape.rows == lanes;  // the four warps together reach every lane
      } else {
        ok = shape.rows <= 32 && first_lane == 32 * (warp % 4);
      }
      if (ok) continue;
      if (diagnostic* d = emit_op(c, rule_id::memory_tmem_lane_access, static_cast<int>(i))) {
        if (role.unit == role_unit::warpgroup)
          d->message << "a warpgroup reaches all " << lanes << " lanes (each warp its quarter), but this access covers lanes " << first_lane
                     << ".." << first_lane + shape.rows - 1;
        else
          d->message << "warp " << warp << " (unit " << u << " of role '" << role.nm.view() << "') reaches lanes " << 32 * (warp % 4) << ".."
                     << 32 * (warp % 4) + 31 << " only, but accesses lanes " << first_lane << ".." << first_lane + shape.rows - 1;
        d->num("warp", warp).num("first_lane", first_lane).num("lanes", shape.rows);
        d->help << (role.unit == role_unit::warpgroup ? "let the warpgroup move all lanes (no row part)"
                                                      : "select the rows with .rows(r.warp(), 4) in a role whose warps w sit at w % 4 == w");
      }
      break;
    }
  }
}

constexpr void check_register_owner(context& c) {
  const program& p = c.p;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const op& o = p.ops[i];
    for (const operand* x : {&o.d, &o.a, &o.b}) {
      if (x->kind != operand_kind::reg || p.regs[x->index].role == o.role) continue;
      const auto& g = p.regs[x->index];
      if (diagnostic* d = emit_op(c, rule_id::memory_foreign_registers, static_cast<int>(i))) {
        d->message << "register tile '" << g.nm.view() << "' belongs to role '" << (g.role < p.roles.size() ? p.roles[g.role].nm.view() : std::string_view{"?"})
                   << "', but role '" << p.roles[o.role].nm.view() << "' uses it";
        d->add_note(g.loc) << "'" << g.nm.view() << "' declared here";
        d->help << "hand the data over through shared memory or TMEM";
      }
      break;
    }
  }
}

constexpr void check_memory(context& c) {
  check_parts(c);
  check_tma_alignment(c);
  check_tmem(c);
  check_register_owner(c);
}

}  // namespace cake::analysis
