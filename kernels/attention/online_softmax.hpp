#pragma once
// One key block's online-softmax update (FlashAttention's), shared by the attention schedules (prefill on
// sm_90a and sm_80, paged decode). The scores s are raw (unscaled) and already masked with -inf; scale is
// the softmax scale times log2(e), so exp2 with the scale folded into one FMA:
//   mn = max(rowmax(s), m)          the new running max
//   ms = -mn * scale                exp2(s * scale + ms) = exp2((s - mn) * scale)
//   s  = exp2(fma(s, scale, ms))    P, unnormalized
//   al = exp2(fma(m, scale, ms))    how much the terms summed so far (l, and O at the caller) shrink
//   l  = l * al + rowsum(s), m = mn
// What follows (O *= al, P to the MMA's operand type) differs by schedule and stays with the caller.
#include <cake/cake.hpp>

namespace cake::kernels::attention_detail {

// The row vectors of the online softmax (each the rows of the score tile).
struct online_softmax_rows {
  reg_tile<f32> m, mn, ms, al, l, ls;  // running max, with this block's, -mn * scale, shrink factor, sum, block sum
};

// `some_rows_empty`: a row may have seen no key yet (varlen causal), so mn may be -inf; its offset is then 0
// instead of exp2(-inf - -inf) = NaN. Every op carries the caller's source line (diagnostics point there).
// `exp2_share`: the share of the block's exp2 computed on the FMA pipe instead of MUFU (exp2(x, fma_share)).
constexpr void online_softmax_step(role& r, reg_tile<f32> s, const online_softmax_rows& v, scalar<f32> scale, bool some_rows_empty = false,
                                   fma_share exp2_share = {}, src_loc at = src_loc::current()) {
  r.row_max(v.mn, s, at);
  r.set(v.mn, max(v.mn, v.m), at);
  if (some_rows_empty) r.set(v.ms, select(v.mn <= neg_inf, 0.0f, v.mn * -scale), at);
  else r.set(v.ms, v.mn * -scale, at);
  r.set(s, exp2(fma(s, scale, v.ms), exp2_share), at);
  r.row_sum(v.ls, s, at);
  r.set(v.al, exp2(fma(v.m, scale, v.ms)), at);
  r.set(v.l, v.l * v.al + v.ls, at);
  r.set(v.m, v.mn, at);
}

}  // namespace cake::kernels::attention_detail
