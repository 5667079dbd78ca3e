#pragma once
// Attention prefill forward on Hopper (sm_90a), FlashAttention style:
//
//   O[b, i, h, :] = sum_j softmax_j(scale * Q[b, i, h, :] . K[b, j, h / G, :]) V[b, j, h / G, :]
//   LSE[b, h, i]  = log(sum_j exp(scale * Q[b, i, h, :] . K[b, j, h / G, :]))   (natural log)
//
// Q, O are [B, S, H, D] and K, V are [B, T, HK, D], bf16, the last dim contiguous (outer strides are
// run-time arguments); G = H / HK query heads share a KV head (MHA G = 1, GQA G > 1, MQA HK = 1); LSE is
// f32 [B, H, S, 1]. Causal: query i sees keys j <= i (top-left aligned, as PyTorch's is_causal; S <= T).
//
// Schedule: a CTA owns 128 query rows of one (b, h): two consumer warpgroups of 64 rows each and one
// producer warpgroup. Q is loaded once (D/64 parts of 64 columns, one 128-byte swizzle span each); K and
// V blocks of `bn` keys stream through two TMA pipelines (K and V separately, so that S = Q K^T can start
// before V lands). Per key block a consumer computes S = Q K^T on wgmma (f32), folds it into the online
// softmax in registers (exp2 with the scale folded into one FMA: exp2(s * scale - m * scale)), and adds
// P V on wgmma with P from registers (bf16) into O (its 64-column parts: o.cols(d, parts)). The
// consumers take turns at issuing their MMAs so that one's softmax overlaps the other's MMAs.
// Masks: keys past T, and (causal) keys after the query, score -inf; only the last key block of a tile
// can hold such keys, so the loop runs the unmasked blocks and then the last block with the mask.
// Everything physical (barrier counts, phases, tx bytes, offsets, the setmaxnreg split) is derived.
#include <array>
#include <string_view>

#include <cake/cake.hpp>

namespace cake::kernels {

struct attention_prefill_config {
  int parts = 2;        // head dim / 64: 1 (D = 64) or 2 (D = 128)
  bool causal = false;
  int group = 1;        // query heads per KV head (G = H / HK)
  int bn = 128;         // keys per block (the S MMA's N)
  int stages = 2;       // depth of the K and of the V pipeline
  friend constexpr auto operator<=>(const attention_prefill_config&, const attention_prefill_config&) = default;
};

// Smem in bytes: Q (128 rows) + the K and V stages, D/64 parts of 64 bf16 columns each.
constexpr int attention_prefill_smem(const attention_prefill_config& c) { return (128 + 2 * c.stages * c.bn) * c.parts * 64 * 2; }

namespace attention_detail {
// "attn_fwd_d128_g4_causal" (names are cut at 31 characters)
constexpr name_builder prefill_name(const attention_prefill_config& c) {
  name_builder b;
  b.put("attn_fwd_d");
  b.put(64 * c.parts);
  b.put("_g");
  b.put(c.group);
  b.put("_n");
  b.put(c.bn);
  if (c.causal) b.put("_causal");
  return b;
}
}  // namespace attention_detail

constexpr program attention_prefill_sm90(attention_prefill_config c = {}) {
  const name_builder nm = attention_detail::prefill_name(c);
  auto k = kernel(nm.view()).target(sm_90a);
  auto [Bt, S, H, T, D, One] = k.dims("B", "S", "H", "T", "D", "one");
  // MHA: K and V have the query heads' dim (HK = H); GQA / MQA: their own, indexed by h / G.
  const dim_ref HK = c.group == 1 ? H : k.dim("HK");
  auto Q = k.input<bf16>("Q", dims(Bt, S, H, D));
  auto Kt = k.input<bf16>("K", dims(Bt, T, HK, D));
  auto V = k.input<bf16>("V", dims(Bt, T, HK, D));
  auto O = k.output<bf16>("O", dims(Bt, S, H, D));
  auto Lse = k.output<f32>("LSE", dims(Bt, H, S, One));
  auto scale = k.param<f32>("scale_log2");  // softmax scale * log2(e)
  auto space = k.parallel(tiles(S, 128), each(H), each(Bt));
  std::array<smem_tile<bf16>, 2> sQ{}, sK{}, sV{};
  for (int d = 0; d < c.parts; ++d) {
    sQ[d] = k.smem<bf16>(d ? "sQ1" : "sQ0", {128, 64}, swizzle::b128);
    sK[d] = k.smem<bf16>(d ? "sK1" : "sK0", {c.bn, 64}, swizzle::b128);
    sV[d] = k.smem<bf16>(d ? "sV1" : "sV0", {c.bn, 64}, swizzle::b128);
  }
  auto qp = c.parts == 1 ? k.pipeline("q", stages(1)).carries(sQ[0]) : k.pipeline("q", stages(1)).carries(sQ[0], sQ[1]);
  auto kp = c.parts == 1 ? k.pipeline("k", stages(c.stages)).carries(sK[0]) : k.pipeline("k", stages(c.stages)).carries(sK[0], sK[1]);
  auto vp = c.parts == 1 ? k.pipeline("v", stages(c.stages)).carries(sV[0]) : k.pipeline("v", stages(c.stages)).carries(sV[0], sV[1]);
  auto mma = k.turns("mma");
  // Key blocks of query tile q: all of T, or (causal) up to the one holding the tile's last query.
  auto last_block = [&](index_expr q) -> index_expr {
    return c.causal ? (q * 128 + 127) / c.bn : (T.extent() - 1) / c.bn;
  };
  auto blocks = [&](index_expr q) -> loop_extent {
    if (c.causal) return min(q * (128 / c.bn) + 128 / c.bn, tiles(T, c.bn));
    return loop_extent(tiles(T, c.bn));
  };

  k.role("softmax", warpgroups(2), regs(232), [&](role& r) {
    auto s = r.accumulator<f32>("s", {64, c.bn});
    auto o = r.accumulator<f32>("o", {64, 64 * c.parts});
    auto m = r.row_vector<f32>("m", 64);    // running max of the raw scores
    auto mn = r.row_vector<f32>("mn", 64);  // this block's new max
    auto ms = r.row_vector<f32>("ms", 64);  // -mn * scale: exp2(s * scale + ms)
    auto l = r.row_vector<f32>("l", 64);    // running sum of exp2
    auto ls = r.row_vector<f32>("ls", 64);
    r.for_each(space, [&](auto q, auto h, auto b) {
      auto sq = r.wait(qp);
      r.fill(o, 0.0f);
      r.fill(m, neg_inf);
      r.fill(l, 0.0f);
      const index_expr row0 = q * 128 + r.warpgroup() * 64;  // this warpgroup's first query row
      r.loop(blocks(q), [&](auto j) {
        auto sk = r.wait(kp);
        r.take_turn(mma);
        r.wgmma_fence();
        for (int d = 0; d < c.parts; ++d) {
          auto w = r.wgmma(s, sq[sQ[d]].rows(r.warpgroup(), 2), sk[sK[d]]).over(D);
          if (d == 0) w.overwrite();
        }
        r.wgmma_commit();
        r.pass_turn(mma);
        r.wgmma_wait(0);
        r.release(kp, sk);
        // keys past T, and (causal) keys after the query, do not take part
        auto masked = c.causal ? (j * c.bn + col() >= T.extent()) || (j * c.bn + col() > row0 + row()) : (j * c.bn + col() >= T.extent());
        r.set(s, select(masked, neg_inf, s));
        r.row_max(mn, s);
        r.set(mn, max(mn, m));
        r.set(ms, mn * -scale);
        r.set(s, exp2(fma(s, scale, ms)));
        r.row_sum(ls, s);
        r.set(l, l * exp2(fma(m, scale, ms)) + ls);
        r.set(o, o * exp2(fma(m, scale, ms)));
        r.set(m, mn);
        auto p = r.convert<bf16>(s);
        auto sv = r.wait(vp);
        r.wgmma_fence();
        for (int d = 0; d < c.parts; ++d) r.wgmma(o.cols(d, c.parts), p, sv[sV[d]]);
        r.wgmma_commit();
        r.wgmma_wait(0);
        r.release(vp, sv);
      });
      r.release(qp, sq);
      // LSE = ln(l) + m * scale * ln(2) = (log2(l) + m * scale) * ln(2)
      r.set(ls, (log2(l) + m * scale) * 0.6931471805599453f);
      r.store(Lse.tile(b, h, q * 2 + r.warpgroup(), 0), ls);
      r.set(o, o * rcp(l));
      r.store(O.tile(b, q * 2 + r.warpgroup(), h, 0).rows_at(1), r.convert<bf16>(o));
    });
  });
  k.role("load", warpgroups(1), regs(40), [&](role& r) {
    r.for_each(space, [&](auto q, auto h, auto b) {
      auto s = r.acquire(qp);
      for (int d = 0; d < c.parts; ++d) r.tma_load(s[sQ[d]], Q.tile(b, q, h, d).rows_at(1));
      r.loop(blocks(q), [&](auto j) {
        auto sk = r.acquire(kp);
        for (int d = 0; d < c.parts; ++d) r.tma_load(sk[sK[d]], Kt.tile(b, j, h / c.group, d).rows_at(1));
        auto sv = r.acquire(vp);
        for (int d = 0; d < c.parts; ++d) r.tma_load(sv[sV[d]], V.tile(b, j, h / c.group, d).rows_at(1));
      });
    });
  });
  (void)last_block;
  return k.build();
}

}  // namespace cake::kernels
