#pragma once
// Register tiles against global tensors (memory pass):
//
// memory.mask-coverage (warning). A register load from a global tile is bounds-checked per element:
// elements outside the tensor get the load's fill value (.fill_outside(v), 0 by default). That only
// matters where the fill value changes a result: a row reduction over the columns past the tensor's
// extent, where the value is not the reduction's identity (row_max of a row whose values are all
// negative gives 0). The pass follows each load's fill value through the ops of its role in program
// order: r.set expressions are evaluated at the padded columns with the values known there (the fill
// value, immediates, other tiles padded from the same tensor columns), convert copies it, any other
// write forgets it; a row reduction that reads a known value other than its identity (-inf for max
// and argmax, +inf for min and argmin, 0 for sum) is reported.
// What is decided statically: whether a tile CAN extend past its tensor (its columns run along the
// tensor's last dim; any extent above 1 may not divide the dim, whose value Cake never knows when it
// analyzes: dims are run-time values, and specialized ones are only fixed when the kernel is compiled),
// and the value at the padded columns when it depends on nothing else. What is not: the data (a
// row_max with fill 0 is right when the data is non-negative), a value through tiles of unknown content
// (a select() mask, a scalar, a loop-carried tile: the finding needs a known value, so masks silence it),
// loops (ops are followed in program order, one pass), rows past the tensor (a row reduction of a
// padded row only affects that row, which stores skip). A warning, not an error: the result is wrong
// only for some data and some shapes, and the fix costs nothing.
//
// dataflow.atomic-mixed (error). One tensor written by atomic_add / scatter_add and by a plain store
// (store_global, tma_store) in one kernel: CTAs (or the threads of one) that store and others that add
// are not ordered by anything Cake has (no grid-wide sync), so the elements end up with either.
#include "context.hpp"

namespace cake::analysis {

namespace detail {

// A float known at the padded columns of a tile, or not.
struct pad_value {
  bool known = false;
  float v = 0;
};

constexpr float f_inf = __builtin_huge_valf();
constexpr bool is_nan(float v) { return v != v; }
constexpr bool is_inf(float v) { return v == f_inf || v == -f_inf; }
constexpr float f_abs(float v) { return v < 0 ? -v : v; }
constexpr pad_value known(float v) { return {true, v}; }

// Arithmetic on known values, unknown where the result would be NaN or could overflow (constant
// evaluation refuses both, and neither is a value a finding could rest on).
constexpr pad_value pv_add(pad_value a, pad_value b) {
  if (!a.known || !b.known || is_nan(a.v) || is_nan(b.v)) return {};
  if (is_inf(a.v) && is_inf(b.v)) return a.v == b.v ? a : pad_value{};
  if (is_inf(a.v)) return a;
  if (is_inf(b.v)) return b;
  if (f_abs(a.v) > 1e30f || f_abs(b.v) > 1e30f) return {};
  return known(a.v + b.v);
}
constexpr pad_value pv_neg(pad_value a) { return a.known && !is_nan(a.v) ? known(-a.v) : pad_value{}; }
constexpr pad_value pv_mul(pad_value a, pad_value b) {
  if (!a.known || !b.known || is_nan(a.v) || is_nan(b.v)) return {};
  if (is_inf(a.v) || is_inf(b.v)) {
    if (a.v == 0 || b.v == 0) return {};
    return known((a.v < 0) != (b.v < 0) ? -f_inf : f_inf);
  }
  if (f_abs(a.v) > 1e18f || f_abs(b.v) > 1e18f) return {};
  return known(a.v * b.v);
}
constexpr pad_value pv_div(pad_value a, pad_value b) {
  if (!a.known || !b.known || is_nan(a.v) || is_nan(b.v) || b.v == 0) return {};
  if (is_inf(a.v) && is_inf(b.v)) return {};
  if (is_inf(a.v)) return known((a.v < 0) != (b.v < 0) ? -f_inf : f_inf);
  if (is_inf(b.v)) return known(0.0f);
  if (f_abs(a.v) > 1e18f || f_abs(b.v) < 1e-18f) return {};
  return known(a.v / b.v);
}
// Functions at the values where they are exact: 0, 1 and the infinities.
constexpr pad_value pv_fn(math_fn f, pad_value a) {
  if (!a.known || is_nan(a.v)) return {};
  const float x = a.v;
  switch (f) {
    case math_fn::abs: return known(f_abs(x));
    case math_fn::exp2:
    case math_fn::exp: return x == -f_inf ? known(0.0f) : x == f_inf ? known(f_inf) : x == 0 ? known(1.0f) : pad_value{};
    case math_fn::log2:
    case math_fn::log: return x == 0 ? known(-f_inf) : x == f_inf ? known(f_inf) : x == 1 ? known(0.0f) : pad_value{};
    case math_fn::rcp: return is_inf(x) ? known(0.0f) : x == 1 ? known(1.0f) : pad_value{};
    case math_fn::sqrt: return x == 0 || x == f_inf || x == 1 ? a : pad_value{};
    case math_fn::rsqrt: return x == f_inf ? known(0.0f) : x == 1 ? a : pad_value{};
    case math_fn::tanh:
    case math_fn::erf: return x == 0 ? a : x == f_inf ? known(1.0f) : x == -f_inf ? known(-1.0f) : pad_value{};
    case math_fn::sigmoid: return x == 0 ? known(0.5f) : x == f_inf ? known(1.0f) : x == -f_inf ? known(0.0f) : pad_value{};
    case math_fn::relu: return known(x > 0 ? x : 0.0f);
    case math_fn::gelu_tanh:
    case math_fn::gelu_erf:
    case math_fn::silu: return x == 0 || x == f_inf ? a : pad_value{};
    case math_fn::round_bf16:
    case math_fn::round_f16: return x == 0 || is_inf(x) || x == 1 || x == -1 ? a : pad_value{};
    default: return {};
  }
}

// Where a tile's padded columns are: the tensor dim its columns run along and the tile's column origin.
struct pad_key {
  int tensor_dim = -1;  // program dim
  index_expr col{};     // the tile coordinate along that dim
  int cols = 0;
  constexpr bool same(const pad_key& o) const { return tensor_dim == o.tensor_dim && col == o.col && cols == o.cols; }
};

struct pad_state {
  bool padded = false;  // the tile may hold columns past its tensor
  pad_value value{};
  pad_key key{};
  int load_op = -1;     // the load whose fill this is
  int via_op = -1;      // the last r.set that transformed it (-1: as loaded)
};

constexpr bool neutral(reduce_kind k, float v) {
  if (is_nan(v)) return k != reduce_kind::sum;  // fmaxf/fminf and the arg comparisons skip NaN
  switch (k) {
    case reduce_kind::max:
    case reduce_kind::argmax: return v == -f_inf;
    case reduce_kind::min:
    case reduce_kind::argmin: return v == f_inf;
    default: return v == 0;
  }
}

template <class Text>
constexpr void write_float(Text& t, float v) {
  if (is_nan(v)) {
    t << "nan";
    return;
  }
  if (v == f_inf) {
    t << "inf";
    return;
  }
  if (v == -f_inf) {
    t << "-inf";
    return;
  }
  if (v < 0) t << '-', v = -v;
  if (v >= 1e15f) {
    t << "a large value";
    return;
  }
  const long long whole = static_cast<long long>(v);
  t << whole;
  float frac = v - static_cast<float>(whole);
  if (frac > 0) {
    t << '.';
    for (int i = 0; i < 4 && frac > 0; ++i) {
      frac *= 10;
      const int d = static_cast<int>(frac);
      t << static_cast<char>('0' + d);
      frac -= static_cast<float>(d);
    }
  }
}

// The padding of register tile `r` loaded by op `id`, if its columns can run past the tensor.
constexpr pad_state padding_of_load(const program& p, int id) {
  const op& o = p.ops[id];
  pad_state s;
  if (o.d.kind != operand_kind::reg || o.a.kind != operand_kind::global) return s;
  const auto& g = p.regs[o.d.index];
  const auto& ref = p.tile_refs[o.a.index];
  const auto& t = p.tensors[ref.tensor];
  if (g.cols <= 1 || ref.rank < 1) return s;  // a row vector or one column: no columns to pad
  const int pos = ref.rank - 1;              // the columns run along the tensor's last dim
  s.padded = true;
  s.value = known(__builtin_bit_cast(float, o.imm[2]));
  s.key = {t.dims[pos], ref.coords[pos], g.cols};
  s.load_op = id;
  return s;
}

}  // namespace detail

constexpr void check_mask_coverage(context& c) {
  const program& p = c.p;
  const int n = static_cast<int>(p.ops.size());
  for (std::size_t role = 0; role < p.roles.size(); ++role) {
    detail::pad_state st[capacity::regs]{};
    for (int i = 0; i < n; ++i) {
      const op& o = p.ops[i];
      if (o.role != role) continue;
      if (o.kind == op_kind::load_global && o.d.kind == operand_kind::reg) {
        st[o.d.index] = o.has(flag_accumulate) ? detail::pad_state{} : detail::padding_of_load(p, i);  // load_add: a sum, not followed
        continue;
      }
      // The padding an expression carries (nodes [first, first + count), `cols` columns): that of its first
      // padded leaf, pushed through the expression's functions where their values are known.
      auto expr_padding = [&](int first, int count, int cols) -> detail::pad_state {
        int lead = -1;
        for (int e = first; e < first + count && lead < 0; ++e)
          if (p.exprs[e].fn == math_fn::tile && st[p.exprs[e].ref].padded) lead = p.exprs[e].ref;
        if (lead < 0 || cols <= 1) return detail::pad_state{};
        const detail::pad_key key = st[lead].key;
        detail::pad_value val[rx::max_nodes]{};
        bool pred[rx::max_nodes]{};  // known predicate values
        bool pred_known[rx::max_nodes]{};
        for (int e = first; e < first + count && e - first < rx::max_nodes; ++e) {
          const expr_node& x = p.exprs[e];
          const int k = e - first;
          auto kid = [&](int j) { return x.kid[j] - first; };
          detail::pad_value r{};
          switch (x.fn) {
            case math_fn::tile: {
              const auto& s = st[x.ref];
              if (s.padded && s.key.same(key)) r = s.value;
              break;
            }
            case math_fn::imm: r = detail::known(__builtin_bit_cast(float, x.bits)); break;
            case math_fn::neg: r = detail::pv_neg(val[kid(0)]); break;
            case math_fn::add: r = detail::pv_add(val[kid(0)], val[kid(1)]); break;
            case math_fn::sub: r = detail::pv_add(val[kid(0)], detail::pv_neg(val[kid(1)])); break;
            case math_fn::mul: r = detail::pv_mul(val[kid(0)], val[kid(1)]); break;
            case math_fn::div: r = detail::pv_div(val[kid(0)], val[kid(1)]); break;
            case math_fn::fma: r = detail::pv_add(detail::pv_mul(val[kid(0)], val[kid(1)]), val[kid(2)]); break;
            case math_fn::max:
            case math_fn::min: {
              const auto a = val[kid(0)], b = val[kid(1)];
              if (a.known && b.known && !detail::is_nan(a.v) && !detail::is_nan(b.v))
                r = detail::known(x.fn == math_fn::max ? (a.v > b.v ? a.v : b.v) : (a.v < b.v ? a.v : b.v));
              break;
            }
            case math_fn::lt:
            case math_fn::le:
            case math_fn::gt:
            case math_fn::ge:
            case math_fn::eq:
            case math_fn::ne: {
              const auto a = val[kid(0)], b = val[kid(1)];
              if (a.known && b.known && !detail::is_nan(a.v) && !detail::is_nan(b.v)) {
                pred_known[k] = true;
                pred[k] = x.fn == math_fn::lt ? a.v < b.v : x.fn == math_fn::le ? a.v <= b.v : x.fn == math_fn::gt ? a.v > b.v
                        : x.fn == math_fn::ge ? a.v >= b.v : x.fn == math_fn::eq ? a.v == b.v : a.v != b.v;
              }
              break;
            }
            case math_fn::not_:
              pred_known[k] = pred_known[kid(0)];
              pred[k] = !pred[kid(0)];
              break;
            case math_fn::and_:
            case math_fn::or_:
              if (pred_known[kid(0)] && pred_known[kid(1)]) {
                pred_known[k] = true;
                pred[k] = x.fn == math_fn::and_ ? pred[kid(0)] && pred[kid(1)] : pred[kid(0)] || pred[kid(1)];
              }
              break;
            case math_fn::select: {
              const auto a = val[kid(1)], b = val[kid(2)];
              if (pred_known[kid(0)]) r = pred[kid(0)] ? a : b;
              else if (a.known && b.known && a.v == b.v) r = a;
              break;
            }
            default:
              if (info(x.fn).arity == 1) r = detail::pv_fn(x.fn, val[kid(0)]);
              break;  // scalars, indices (row()/col() masks): not known
          }
          val[k] = r;
        }
        detail::pad_state out;
        out.padded = true;
        out.value = val[count - 1 < rx::max_nodes ? count - 1 : rx::max_nodes - 1];
        out.key = key;
        out.load_op = st[lead].load_op;
        out.via_op = i;
        return out;
      };
      if (o.kind == op_kind::elementwise && o.d.kind == operand_kind::reg) {
        st[o.d.index] = expr_padding(o.imm[0], o.imm[1], p.regs[o.d.index].cols);
        continue;
      }
      if (o.kind == op_kind::convert && o.d.kind == operand_kind::reg && o.a.kind == operand_kind::reg) {
        st[o.d.index] = st[o.a.index];
        continue;
      }
      if ((o.kind == op_kind::reduce_rows || o.kind == op_kind::arg_reduce_rows) && o.a.kind == operand_kind::reg) {
        const detail::pad_state s = o.has(flag_expr_src) ? expr_padding(o.expr_first(), o.expr_count(), p.regs[o.a.index].cols) : st[o.a.index];
        const auto k = static_cast<reduce_kind>(o.imm[0]);
        if (s.padded && s.value.known && !detail::neutral(k, s.value.v) && s.load_op >= 0)
          if (diagnostic* d = emit_op(c, rule_id::memory_mask_coverage, i)) {
            const auto& lo = p.ops[s.load_op];
            const auto& t = p.tensors[p.tile_refs[lo.a.index].tensor];
            const std::string_view dim = s.key.tensor_dim >= 0 && s.key.tensor_dim < static_cast<int>(p.dims.size()) ? p.dims[s.key.tensor_dim].nm.view()
                                                                                                                     : std::string_view{"?"};
            d->message << "row_" << to_string(k) << " of '" << resource_name(p, o.a) << "' reads its columns past " << t.nm.view() << "'s " << dim
                       << " (the " << s.key.cols << "-column tile need not divide it), which hold ";
            detail::write_float(d->message, s.value.v);
            d->message << (s.via_op >= 0 ? " computed from the fill of op#" : " (the fill of op#") << s.load_op << (s.via_op >= 0 ? "" : ")")
                       << "; " << to_string(k) << " is not neutral to it"
                       << (k == reduce_kind::sum ? " (it is added to every row's sum)"
                           : (k == reduce_kind::max || k == reduce_kind::argmax) ? " (a row whose values are all below it gets it)"
                                                                                  : " (a row whose values are all above it gets it)");
            d->num("load_op", s.load_op).num("tile_cols", s.key.cols);
            auto& ln = d->add_note(lo.loc);
            ln << "op#" << s.load_op << " loads '" << p.regs[lo.d.index].nm.view() << "' from " << t.nm.view() << " filling outside with ";
            detail::write_float(ln, __builtin_bit_cast(float, lo.imm[2]));
            if (s.via_op >= 0)
              d->add_note(p.ops[s.via_op].loc) << "op#" << s.via_op << (s.via_op == i ? " (the reduced expression)" : " (r.set)") << " turns the fill into the value above";
            const char* id = k == reduce_kind::sum ? "0.0f" : (k == reduce_kind::max || k == reduce_kind::argmax) ? "neg_inf" : "pos_inf";
            if (s.via_op < 0) d->help << ".fill_outside(" << id << ") on op#" << s.load_op << ", or ";
            d->help << "mask the columns past " << dim << " before the reduction: select(col() + ... >= " << dim << ".extent(), " << id << ", x)";
            if (s.via_op >= 0) d->help << ", or fill op#" << s.load_op << " with what op#" << s.via_op << " turns into " << id;
          }
      }
      // Any other write (fill, MMA, tmem / shared loads, cluster sum, a reduction's vectors) forgets the padding.
      p.reg_writes(i, [&](const operand& x) { st[x.index] = {}; });
    }
  }
}

constexpr void check_atomic_mixed(context& c) {
  const program& p = c.p;
  for (std::size_t t = 0; t < p.tensors.size(); ++t) {
    int atomic = -1, plain = -1;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const op& o = p.ops[i];
      // (fetch_add's counter is its a operand: it reads the old value and adds atomically)
      const operand& g = o.kind == op_kind::fetch_add ? o.a : o.d;
      if (g.kind != operand_kind::global || p.tile_refs[g.index].tensor != t) continue;
      if ((o.kind == op_kind::atomic_add || o.kind == op_kind::scatter_add || o.kind == op_kind::fetch_add) && atomic < 0) atomic = static_cast<int>(i);
      if ((o.kind == op_kind::store_global || o.kind == op_kind::tma_store || o.kind == op_kind::scatter_store) && plain < 0) plain = static_cast<int>(i);
    }
    if (atomic < 0 || plain < 0) continue;
    if (diagnostic* d = emit_op(c, rule_id::dataflow_atomic_mixed, plain)) {
      d->message << "tensor " << p.tensors[t].nm.view() << " is written here by " << to_string(p.ops[plain].kind) << " and atomically by "
                 << to_string(p.ops[atomic].kind) << " (op#" << atomic << "): nothing orders the plain writes against the atomic ones of other CTAs"
                 << " (Cake has no grid-wide sync), so elements end up with either";
      d->num("store_op", plain).num("atomic_op", atomic);
      d->add_note(p.ops[atomic].loc) << "op#" << atomic << ' ' << to_string(p.ops[atomic].kind) << " into " << p.tensors[t].nm.view();
      d->help << "write " << p.tensors[t].nm.view() << " one way: add everything atomically (clear it before the launch), or store it plainly from one place and reduce elsewhere";
    }
  }
}

constexpr void check_global_access(context& c) {
  check_mask_coverage(c);
  check_atomic_mixed(c);
}

}  // namespace cake::analysis
