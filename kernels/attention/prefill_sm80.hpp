#pragma once
// Attention prefill forward on Ampere (sm_80), the portable fallback of prefill.hpp (FlashAttention 2
// style, the same math and tensors as the Hopper schedule's dense form):
//
//   O[b, i, h, :] = sum_j softmax_j(scale * Q[b, i, h, :] . K[b, j, h / G, :]) V[b, j, h / G, :]
//   LSE[b, h, i]  = log(sum_j exp(scale * Q[b, i, h, :] . K[b, j, h / G, :]))   (natural log)
//
// Q, O [B, S, H, D] and K, V [B, T, HK, D], bf16, the last dim contiguous; LSE f32 [B, H, S, 1]; scale
// is passed as scale * log2(e) ("scale_log2"). Causal: query i sees keys j <= i (top-left, S <= T).
//
// Schedule: a CTA owns 64 query rows of one (b, h) and 4 warps of 16 rows each; every warp both copies
// (cp.async of 16-byte chunks, zero-filled past the tensor) and computes (ldmatrix + mma.sync). Q is
// copied once per tile; K and V blocks of 64 keys go through `stages` copies, the next block's copy issued
// before this block's math. Per block a warp computes S = Q K^T (f32, 16 x 64), masks it (keys past T;
// causal: keys after the query), folds it into the online softmax in registers (exp2 with the scale in
// one FMA), and adds P V with P from registers (bf16; V is MN-major for this MMA: ldmatrix.trans). One
// CTA barrier after a block's copy lands and one after its math, before the copy that reuses its buffers.
// No TMA, no mbarriers, no wgmma: it runs on any GPU from sm_80 (on sm_90 through PTX JIT).
#include <array>

#include <cake/cake.hpp>

#include "online_softmax.hpp"

namespace cake::kernels {

struct attention_prefill_sm80_config {
  int parts = 2;        // head dim / 64: 1 (D = 64) or 2 (D = 128)
  bool causal = false;
  int group = 1;        // query heads per KV head (G = H / HK)
  int stages = 2;       // copies of the K and V buffers (2: the next block loads during this one's math)
  static constexpr int rows = 64, bn = 64, warps = 4;  // query rows per CTA, keys per block, 16 rows per warp
  constexpr bool valid() const { return (parts == 1 || parts == 2) && group >= 1 && stages >= 2 && stages <= 4; }
  friend constexpr auto operator<=>(const attention_prefill_sm80_config&, const attention_prefill_sm80_config&) = default;
};

// Smem in bytes: Q plus the K and V copies, 64-column parts of 64 rows.
constexpr int attention_prefill_sm80_smem(const attention_prefill_sm80_config& c) { return (1 + 2 * c.stages) * c.parts * 64 * 64 * 2; }

namespace attention_detail {
// "attn_fwd80_d128_g4_s2_causal"
constexpr name_builder prefill_sm80_name(const attention_prefill_sm80_config& c) {
  name_builder b;
  b.put("attn_fwd80_d");
  b.put(64 * c.parts);
  b.put("_g");
  b.put(c.group);
  b.put("_s");
  b.put(c.stages);
  if (c.causal) b.put("_causal");
  return b;
}
}  // namespace attention_detail

constexpr program attention_prefill_sm80(attention_prefill_sm80_config c = {}) {
  using cfg = attention_prefill_sm80_config;
  const name_builder nm = attention_detail::prefill_sm80_name(c);
  auto k = kernel(nm.view()).target(sm_80);
  auto [Bt, S, H, T, D, One] = k.dims("B", "S", "H", "T", "D", "one");
  const dim_ref HK = c.group == 1 ? H : k.dim("HK");
  auto Q = k.input<bf16>("Q", dims(Bt, S, H, D));
  auto Kt = k.input<bf16>("K", dims(Bt, T, HK, D));
  auto V = k.input<bf16>("V", dims(Bt, T, HK, D));
  auto O = k.output<bf16>("O", dims(Bt, S, H, D));
  auto Lse = k.output<f32>("LSE", dims(Bt, H, S, One));
  auto scale = k.param<f32>("scale_log2");  // softmax scale * log2(e)
  auto space = k.parallel(tiles(S, cfg::rows), each(H), each(Bt));
  std::array<smem_tile<bf16>, 2> sQ{}, sK{}, sV{};
  for (int d = 0; d < c.parts; ++d) {
    sQ[d] = k.smem<bf16>(d ? "sQ1" : "sQ0", {cfg::rows, 64}, swizzle::b128);
    sK[d] = k.smem<bf16>(d ? "sK1" : "sK0", {cfg::bn, 64}, swizzle::b128, copies(c.stages));
    sV[d] = k.smem<bf16>(d ? "sV1" : "sV0", {cfg::bn, 64}, swizzle::b128, copies(c.stages));
  }
  auto cta = k.named_barrier("cta");

  k.role("attn", warps(cfg::warps), [&](role& r) {
    auto s = r.accumulator<f32>("s", {16, cfg::bn});
    // O in one accumulator per 64-column part (mma.sync accumulates into whole register tiles)
    std::array<reg_tile<f32>, 2> o{};
    for (int d = 0; d < c.parts; ++d) o[d] = r.accumulator<f32>(d ? "o1" : "o0", {16, 64});
    auto p = r.fragment<bf16>("p", {16, cfg::bn});  // softmax(s) as the A operand of P V
    auto m = r.row_vector<f32>("m", 16);            // running max of the raw scores
    auto mn = r.row_vector<f32>("mn", 16);          // with this block's
    auto ms = r.row_vector<f32>("ms", 16);          // -mn * scale: exp2(s * scale + ms)
    auto al = r.row_vector<f32>("al", 16);          // exp2((m - mn) * scale): how much the old terms shrink
    auto l = r.row_vector<f32>("l", 16);            // running sum of exp2
    auto ls = r.row_vector<f32>("ls", 16);
    r.for_each(space, [&](auto q, auto h, auto b) {
      const index_expr row0 = q * cfg::rows + r.warp() * 16;  // this warp's first query row
      auto copy_kv = [&](index_expr j) {
        for (int d = 0; d < c.parts; ++d) {
          r.cp_async(sK[d].stage(j), Kt.tile(b, j, h / c.group, d).rows_at(1));
          r.cp_async(sV[d].stage(j), V.tile(b, j, h / c.group, d).rows_at(1));
        }
        r.cp_async_commit();
      };
      // Q and the first key block, one group each
      for (int d = 0; d < c.parts; ++d) r.cp_async(sQ[d], Q.tile(b, q, h, d).rows_at(1));
      r.cp_async_commit();
      copy_kv(index_expr(0));
      for (int d = 0; d < c.parts; ++d) r.fill(o[d], 0.0f);
      r.fill(m, neg_inf);
      r.fill(l, 0.0f);
      // key blocks 0 .. the diagonal's (causal) or T's last; each step first issues the next block's copy
      // (past the last block it reads nothing: every chunk is outside the tensor and zero-filled)
      r.loop(c.causal ? loop_extent(q + 1) : loop_extent(tiles(T, cfg::bn)), [&](auto j) {
        copy_kv(j + 1);
        r.cp_async_wait(1);  // everything but the copy just issued has landed: Q and block j
        r.sync(cta);         // ...for every warp's chunks
        r.fill(s, 0.0f);
        for (int d = 0; d < c.parts; ++d) r.mma_sync(s, sQ[d].rows(r.warp(), cfg::warps), sK[d].stage(j)).over(D);
        // keys past T, and (causal) keys after the query: -inf
        auto out = c.causal ? (j * cfg::bn + col() >= T.extent()) || (j * cfg::bn + col() > row0 + row()) : (j * cfg::bn + col() >= T.extent());
        r.set(s, select(out, neg_inf, s));
        attention_detail::online_softmax_step(r, s, {m, mn, ms, al, l, ls}, scale);
        for (int d = 0; d < c.parts; ++d) r.set(o[d], o[d] * al);
        r.set(p, s);
        for (int d = 0; d < c.parts; ++d) r.mma_sync(o[d], p, sV[d].stage(j));
        r.sync(cta);  // every warp is done with block j's buffers before the copy of block j + stages
      });
      r.cp_async_wait(0);  // the last (empty) copy, before the next tile's Q overwrites nothing in flight
      // LSE = ln(l) + m * scale * ln(2) = (log2(l) + m * scale) * ln(2)
      r.set(ls, (log2(l) + m * scale) * 0.6931471805599453f);
      r.store(Lse.tile(b, h, q * cfg::warps + r.warp(), 0), ls);
      r.set(l, rcp(l));
      for (int d = 0; d < c.parts; ++d) {
        r.set(o[d], o[d] * l);
        r.store(O.tile(b, q * cfg::warps + r.warp(), h, d).rows_at(1), r.convert<bf16>(o[d]));
      }
    });
  });
  return k.build();
}

}  // namespace cake::kernels
