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
// P V on wgmma with P from registers (bf16) into O (its 64-column parts: o.cols(d, parts)).
// Overlap (FlashAttention 3): in its turn a consumer issues S of block j and P V of block j - 1
// together, waits for S only (wgmma_wait(1)) and runs the softmax of block j while P V runs; the two
// consumers take turns at issuing, so one's softmax also overlaps the other's MMAs.
// Masks: keys past T, and (causal) keys after the query, score -inf; only the last key block of a tile
// can hold such keys, so that block goes first, masked, and the loop over the others has no mask (causal
// with query tiles of other than bn rows: the blocks crossing the diagonal are a second masked range, as varlen's).
// Everything physical (barrier counts, phases, tx bytes, offsets, the setmaxnreg split) is derived.
//
// Varlen (config.varlen, FlashAttention's varlen layout): the batch is packed along S and T, Q, O
// [S, H, D], K, V [T, HK, D], LSE [H, S, 1] (FA's [H, total_q]); entry b's queries are rows cu_q[b] ..
// cu_q[b + 1] - 1 and its keys rows cu_k[b] .. cu_k[b + 1] - 1 (i32). Each role reads them at the top of its
// point (r.read_index) and skips the query tiles past its entry's end; tiles start at element offsets
// (.elements_at), stores stop at the entry's end (.limit), keys past it score -inf (a K block may run into
// the next entry: those keys are masked). Causal is bottom-right aligned (FlashAttention >= 2.1): query i
// sees keys j <= i + len_k - len_q, so two key blocks of a tile can be partly masked: the last goes first
// and the one before is a masked loop of at most one trip. cu_q is read as [B, 2, MQ] with strides
// [1, 1, 0] ((b, 0, .) = cu_q[b], (b, 1, .) = cu_q[b + 1]; the stride-0 dim carries max_seqlen_q, which the
// query-tile axis walks), cu_k as [B, 2] with strides [1, 1].
#include <array>
#include <string_view>

#include <cake/cake.hpp>

#include "online_softmax.hpp"

namespace cake::kernels {

struct attention_prefill_config {
  int parts = 2;        // head dim / 64: 1 (D = 64), 2 (D = 128) or 4 (D = 256)
  bool causal = false;
  int group = 1;        // query heads per KV head (G = H / HK)
  int bn = 128;         // keys per block (the S MMA's N)
  int stages = 2;       // depth of the K and of the V pipeline
  int wgs = 2;          // consumer warpgroups of 64 query rows each (2, or 3 for D = 64): 64 * wgs rows per CTA
  bool turns = true;    // the consumers take turns at issuing their MMAs (ping-pong); false: they issue freely
  bool varlen = false;  // packed entries of different lengths (cu_seqlens); causal is then bottom-right aligned
  bool persistent = false;  // one CTA per SM walks the query tiles (the next tile's Q, K, V load during this one's epilogue)
  bool longest_first = false;  // the query-tile axis is walked last to first, outermost: causal tiles in decreasing work
  int q_stages = 1;     // depth of the Q pipeline: 2 lets a persistent producer load the next tile's Q (and then its first
                        // K / V blocks) while the consumers still work on this tile, so its first S = Q K^T need not wait
  bool o_tma = false;   // O leaves through smem (stmatrix) and a TMA store per 64-column part, not from registers (two bf16
                        // per st.global); not with varlen (a TMA store cannot stop at an entry's end)
  bool serpentine = false;  // (persistent) the walk deals its odd rounds to the CTAs in reverse (walk_order::serpentine): causal
                            // tiles' work grows along the query axis, and a strided walk gave some CTAs only the long ones
  bool lookahead = false;  // (persistent, dense, consumers issuing freely) a consumer issues the next tile's first S = Q K^T
                           // before this tile's last P V and runs its masked softmax while P V runs (r.next_point)
  bool skip_masked = false;  // (dense causal, the diagonal in ranges, consumers issuing freely) the blocks crossing the diagonal go
                             // last to first, and a consumer warpgroup only waits for and releases those after its last row
                             // (they hold no key its rows see) instead of computing them
  bool skip_past_rows = false;  // (not with the lookahead) a consumer warpgroup whose 64 rows all lie past S (or the entry's
                                // length) only waits for and releases the stages (and takes its turns) instead of computing
                                // them: the last tile of a power-of-two S with 192-row tiles
  int tail_parts = 0;  // (persistent, dense, not causal, D <= 128) a stream-K tail (k.split_tail): where the walk's last round is
                       // partial, each of its query tiles is split over its key blocks into up to this many parts, one CTA each,
                       // and a second kernel (attention_prefill_tail_combine_sm90) merges their (O, LSE) (0: not split)
  fma_share exp2_fma{};  // the share of the softmax's exp2 computed by a polynomial on the FMA pipe (exp2(x, fma_share)); none
                        // by default: on the H200 each 1/8 cost 3-6% (the MUFU pipe ran at 49% of its peak; docs/attention.md)
  // Causal with rows() == bn (wgs 2, bn 128): the diagonal block is q, the one masked block; else (3 consumers of
  // 64 rows, or other key blocks) the blocks that cross the tile's diagonal are masked, the first one first.
  // The lookahead is written for the aligned form.
  constexpr bool diagonal_aligned() const { return !causal || rows() == bn; }
  constexpr int rows() const { return 64 * wgs; }
  constexpr bool valid() const {
    return (parts == 1 || parts == 2 || parts == 4) && (wgs == 2 || (wgs == 3 && parts == 1)) && bn % 16 == 0 && bn >= 64 && bn <= 256 && stages >= 1 &&
           (q_stages == 1 || q_stages == 2) && !(o_tma && varlen) && (!lookahead || (persistent && !varlen && !turns)) &&
           (!causal || !lookahead || rows() == bn) && (!skip_masked || (causal && rows() != bn && !varlen && !turns && !lookahead)) && (!skip_past_rows || !lookahead) &&
           (tail_parts == 0 || (tail_parts >= 2 && tail_parts <= 64 && parts <= 2 && persistent && !causal && !varlen && !longest_first && !skip_past_rows)) && exp2_fma.d >= 1 && exp2_fma.d <= 32 && exp2_fma.n >= 0 && exp2_fma.n <= exp2_fma.d;
  }
  friend constexpr auto operator<=>(const attention_prefill_config&, const attention_prefill_config&) = default;
};

// Smem in bytes: the Q stages (64 * wgs rows each) + the K and V stages (+ O's staging), D/64 parts of 64 bf16 columns each.
constexpr int attention_prefill_smem(const attention_prefill_config& c) {
  return ((c.q_stages + (c.o_tma ? 1 : 0)) * c.rows() + 2 * c.stages * c.bn) * c.parts * 64 * 2;
}

// c with the lookahead: two consumer warpgroups issuing freely over 128-key blocks (what the lookahead is
// written for), K / V pipelines one stage shorter where smem needs it.
constexpr attention_prefill_config with_lookahead(attention_prefill_config c) {
  c.lookahead = true, c.turns = false, c.wgs = 2, c.bn = 128;
  while (c.stages > 1 && attention_prefill_smem(c) > 227 * 1024) --c.stages;
  return c;
}

namespace attention_detail {
// The walk over the query tiles (q, h, b) of a dense prefill: its space, and where persistent its raster, order and
// split tail. The prefill kernel and its tail combine (attention_prefill_tail_combine_sm90) declare it alike, so
// that a unit of one walk is the same point and part in the other (one grid size: both one CTA per SM).
template <class K>
constexpr auto prefill_walk(K& k, const attention_prefill_config& c, dim_ref Bt, dim_ref MQ, dim_ref H, dim_ref T) {
  if (c.persistent) k.persistent(raster::along_m(8), c.serpentine ? walk_order::serpentine : walk_order::strided);
  if (c.tail_parts > 0) k.split_tail((T.extent() + (c.bn - 1)) / c.bn, c.tail_parts);  // a part: a range of key blocks
  // Longest first (causal): the query tiles outermost and descending, so that the walk hands out every
  // (head, batch) of the last tile row first and the short first rows last (the tail of a persistent walk
  // then has little left to balance). Else the query tiles of one head are adjacent (they share K, V in L2).
  return c.longest_first ? k.parallel(each(H), each(Bt), tiles(MQ, c.rows()).descending()) : k.parallel(tiles(MQ, c.rows()), each(H), each(Bt));
}

// "attn_fwd_d128_g4_causal" (a name past 31 characters keeps 24 and ends in a hash of the whole: name_builder)
constexpr name_builder prefill_name(const attention_prefill_config& c) {
  name_builder b;
  b.put("attn_fwd_d");
  b.put(64 * c.parts);
  b.put("_g");
  b.put(c.group);
  b.put("_n");
  b.put(c.bn);
  if (c.wgs != 2) b.put("_w3");
  if (!c.turns) b.put("_free");
  if (c.varlen) b.put("_vl");
  if (c.persistent) b.put("_p");
  if (c.longest_first) b.put("_lf");
  if (c.q_stages != 1) b.put("_q2");
  if (c.o_tma) b.put("_ot");
  if (c.lookahead) b.put("_la");
  if (c.serpentine) b.put("_sp");
  if (c.skip_masked) b.put("_sk");
  if (c.skip_past_rows) b.put("_pr");
  if (c.tail_parts > 0) {
    b.put("_t");
    b.put(c.tail_parts);
  }
  if (c.exp2_fma.n > 0) {
    b.put("_e");
    b.put(c.exp2_fma.n);
    b.put("o");
    b.put(c.exp2_fma.d);
  }
  if (c.causal) b.put("_causal");
  return b;
}
}  // namespace attention_detail

constexpr program attention_prefill_sm90(attention_prefill_config c = {}) {
  const name_builder nm = attention_detail::prefill_name(c);
  auto k = kernel(nm.view()).target(sm_90a);
  auto [Bt, S, H, T, D, One] = k.dims("B", "S", "H", "T", "D", "one");
  // A stream-K tail: the last round's query tiles split over their key blocks (k.split_tail, in prefill_walk)
  const bool split = c.tail_parts > 0;
  // MHA: K and V have the query heads' dim (HK = H); GQA / MQA: their own, indexed by h / G.
  const dim_ref HK = c.group == 1 ? H : k.dim("HK");
  const bool vl = c.varlen;
  auto Q = k.input<bf16>("Q", vl ? dims(S, H, D) : dims(Bt, S, H, D));
  auto Kt = k.input<bf16>("K", vl ? dims(T, HK, D) : dims(Bt, T, HK, D));
  auto V = k.input<bf16>("V", vl ? dims(T, HK, D) : dims(Bt, T, HK, D));
  auto O = k.output<bf16>("O", vl ? dims(S, H, D) : dims(Bt, S, H, D));
  auto Lse = k.output<f32>("LSE", vl ? dims(H, S, One) : dims(Bt, H, S, One));
  // (split tail) a part's normalized O and LSE [units, 64 * wgs rows, .], at its tail unit (r.tail_unit())
  tensor<f32> Wo{}, Wl{};
  if (split) {
    auto [NU, TR] = k.dims("NU", "TR");
    Wo = k.output<f32>("part_o", dims(NU, TR, D));
    Wl = k.output<f32>("part_lse", dims(NU, TR, One));
  }
  auto scale = k.param<f32>("scale_log2");  // softmax scale * log2(e)
  tensor<i32> CuQ{}, CuK{};
  dim_ref MQ = S;  // the query-tile axis walks S, or (varlen) max_seqlen_q
  if (vl) {
    const auto more = k.dims("MQ", "two");
    MQ = more[0];
    CuQ = k.input<i32>("cu_q", dims(Bt, more[1], MQ));
    CuK = k.input<i32>("cu_k", dims(Bt, more[1]));
  }
  auto space = attention_detail::prefill_walk(k, c, Bt, MQ, H, T);
  // every role walks the points as (q, h, b), whichever the axes' order
  auto for_each_point = [&](role& r, auto&& body) {
    if (c.longest_first) r.for_each(space, [&](auto h, auto b, auto q) { body(q, h, b); });
    else r.for_each(space, [&](auto q, auto h, auto b) { body(q, h, b); });
  };
  auto next_point_of = [&](role& r, auto&& body) {  // (lookahead) the walk's next point, as (q, h, b)
    if (c.longest_first) r.next_point(space, [&](auto h, auto b, auto q) { body(q, h, b); });
    else r.next_point(space, [&](auto q, auto h, auto b) { body(q, h, b); });
  };
  // one smem tile per 64-column part of D (a 128-byte swizzle span each)
  std::array<smem_tile<bf16>, 4> sQ{}, sK{}, sV{}, sO{};
  constexpr const char* part_names[4][4] = {{"sQ0", "sQ1", "sQ2", "sQ3"}, {"sK0", "sK1", "sK2", "sK3"}, {"sV0", "sV1", "sV2", "sV3"}, {"sO0", "sO1", "sO2", "sO3"}};
  for (int d = 0; d < c.parts; ++d) {
    sQ[d] = k.smem<bf16>(part_names[0][d], {c.rows(), 64}, swizzle::b128);
    sK[d] = k.smem<bf16>(part_names[1][d], {c.bn, 64}, swizzle::b128);
    sV[d] = k.smem<bf16>(part_names[2][d], {c.bn, 64}, swizzle::b128);
    if (c.o_tma) sO[d] = k.smem<bf16>(part_names[3][d], {c.rows(), 64}, swizzle::b128);
  }
  named_barrier_ref epi{};  // (o_tma) a consumer warpgroup's threads, around its writes of O's staging
  if (c.o_tma) epi = k.named_barrier("epi", per_unit);
  // a pipeline carries the parts of its tile
  auto carrying = [&](const char* name, int depth, const std::array<smem_tile<bf16>, 4>& t) {
    auto pl = k.pipeline(name, stages(depth));
    return c.parts == 1 ? pl.carries(t[0]) : c.parts == 2 ? pl.carries(t[0], t[1]) : pl.carries(t[0], t[1], t[2], t[3]);
  };
  auto qp = carrying("q", c.q_stages, sQ);
  auto kp = carrying("k", c.stages, sK);
  auto vp = carrying("v", c.stages, sV);
  named_barrier_ref mma{};
  if (c.turns) mma = k.turns("mma");
  // The masked key block goes first (FlashAttention 3's order): only the last block of a query tile can
  // hold masked keys (past T, or after a query when causal), so the first step is the one masked step and
  // the loop after it, over blocks 0 .. last - 1, has no mask. The last block is the diagonal one, q, when
  // causal (S <= T, 128-key blocks), else (T - 1) / bn. The masked step is a loop of one trip, from
  // `last` to `last + 1` (tiles(T, bn) when not causal), so that its K / V coordinates are a loop index,
  // which the coverage rule reads as a walk over T (a query-tile index there would read as a mistake).
  // (split tail: a part's blocks [part_begin, part_end), its last first, masked: the point's last at a whole point)
  auto last_block = [&](role& r, index_expr q) -> index_expr { return c.causal ? q : split ? r.part_end() - 1 : (T.extent() - 1) / c.bn; };
  auto after_last = [&](role& r, index_expr q) -> loop_extent { return c.causal ? loop_extent(q + 1) : split ? loop_extent(r.part_end()) : loop_extent(tiles(T, c.bn)); };
  // Varlen: entry b's rows and keys (read by each role), and its key blocks: `last` (masked, first), the
  // masked ones before it from `full` on (causal), and the unmasked ones below. Dense causal with query tiles
  // of other than bn rows: the same three ranges, from the tile's rows (diag_entry).
  struct entry {
    index_expr q0, q1, k0, len_q, len_k, diag, last, full;
  };
  const bool diag_ranges = c.causal && (vl || !c.diagonal_aligned());  // key blocks in three ranges (above)
  auto diag_entry = [&](role& r, index_expr q) {
    entry e;
    e.diag = r.let_index(q * c.rows());  // the last key the tile's first row sees (top-left aligned)
    e.last = r.let_min((q * c.rows() + c.rows() - 1) / c.bn, (T.extent() - 1) / c.bn);
    e.full = r.let_min((e.diag + 1) / c.bn, e.last);  // (<= last whenever S <= T; the min keeps the roles' walks equal regardless)
    return e;
  };
  auto read_entry = [&](role& r, index_expr q, index_expr b) {
    entry e;
    e.q0 = r.read_index(CuQ.at(b, 0, 0));
    e.q1 = r.read_index(CuQ.at(b, 1, 0));
    e.k0 = r.read_index(CuK.at(b, 0));
    e.len_q = r.let_index(e.q1 - e.q0);
    e.len_k = r.let_index(r.read_index(CuK.at(b, 1)) - e.k0);
    if (c.causal) {
      e.diag = r.let_index(q * c.rows() + e.len_k - e.len_q);  // the last key the tile's first row sees
      const index_expr row_end = r.let_min(q * c.rows() + c.rows(), e.len_q);
      e.last = r.let_index((row_end - 1 + e.len_k - e.len_q) / c.bn);
      e.full = r.let_index((e.diag + 1) / c.bn);  // blocks every row of the tile sees whole
    } else {
      e.last = r.let_index((e.len_k - 1) / c.bn);
    }
    return e;
  };
  // Both roles walk the key blocks alike: the last one, then the masked ones (varlen causal), then the rest.
  auto key_blocks = [&](role& r, index_expr q, const entry& e, auto&& step) {
    if (c.skip_masked) {  // (the producer's order when consumers skip: the blocks crossing the diagonal last to first, then the rest)
      r.loop(loop_extent(e.last + 1 - e.full), [&](auto i) { step(e.last - i, true, false); });  // (full <= last: diag_entry)
      r.loop(loop_extent(e.full), [&](auto j) { step(j, false, false); });
      return;
    }
    const bool own_last = vl || diag_ranges;
    const index_expr last = own_last ? e.last : last_block(r, q);
    r.loop(last, own_last ? loop_extent(last + 1) : after_last(r, q), 1, [&](auto j) { step(j, true, true); });
    if (diag_ranges) r.loop(e.full, loop_extent(last), 1, [&](auto j) { step(j, true, false); });
    if (split) r.loop(r.part_begin(), loop_extent(last), 1, [&](auto j) { step(j, false, false); });
    else r.loop(diag_ranges ? min(e.full, last) : loop_extent(last), [&](auto j) { step(j, false, false); });
  };
  // Varlen: the body runs only for the query tiles that start inside their entry.
  auto in_entry = [&](role& r, index_expr q, index_expr b, auto&& body) {
    if (!vl) return body(diag_ranges ? diag_entry(r, q) : entry{});
    const entry e = read_entry(r, q, b);
    r.when(q * c.rows() < e.len_q, [&] { body(e); });
  };

  // Registers: the producer warpgroup keeps 40 (24 with 3 consumers, 32 if also persistent); the consumers get what is left of
  // the launch's pool (65536 / threads each, in multiples of 8), at most 232: 232 with 2, 160 with 3.
  // (persistent with 3 consumers: 32, for the walk's state across points; the consumers keep 160)
  // (a split tail's walk is three more ints of state: at 32 the producer of three consumers spilled 40 bytes)
  const int producer_regs = c.wgs > 2 ? (c.persistent ? (split ? 40 : 32) : 24) : 40;
  const int consumer_regs = plan::consumer_register_share(targets::sm90a.limits, 128 * (c.wgs + 1), 128, producer_regs, 128 * c.wgs);

  k.role("softmax", warpgroups(c.wgs), regs(consumer_regs), [&](role& r) {
    auto s = r.accumulator<f32>("s", {64, c.bn});
    auto o = r.accumulator<f32>("o", {64, 64 * c.parts});
    auto p = r.fragment<bf16>("p", {64, c.bn});  // softmax(s) as the A operand of P V
    auto m = r.row_vector<f32>("m", 64);         // running max of the raw scores
    auto mn = r.row_vector<f32>("mn", 64);       // with this block's
    auto ms = r.row_vector<f32>("ms", 64);       // -mn * scale: exp2(s * scale + ms)
    auto al = r.row_vector<f32>("al", 64);       // exp2((m - mn) * scale): how much the old terms shrink
    auto l = r.row_vector<f32>("l", 64);         // running sum of exp2
    auto ls = r.row_vector<f32>("ls", 64);
    reg_tile<f32> lse, rl;  // (lookahead) the finished tile's LSE and 1 / l, taken before the next tile's softmax resets l
    if (c.lookahead) lse = r.row_vector<f32>("lse", 64), rl = r.row_vector<f32>("rl", 64);
    // S = Q K^T of the next K stage (commits one wgmma group)
    auto qk = [&](slot sq) {
      auto sk = r.wait(kp);
      r.wgmma_fence();
      for (int d = 0; d < c.parts; ++d) {
        auto w = r.wgmma(s, sq[sQ[d]].rows(r.warpgroup(), c.wgs), sk[sK[d]]).over(D);
        if (d == 0) w.overwrite();
      }
      r.wgmma_commit();
      return sk;
    };
    // O += P V of the next V stage (commits one wgmma group). The fence after the wait: between the
    // one before S and these wgmmas lies the V wait's spin loop, across which ptxas does not trust the
    // register operands (P, O) and would inject the fence itself (C7519), as FlashAttention 3 writes it.
    auto pv = [&] {
      auto sv = r.wait(vp);
      r.wgmma_fence();
      for (int d = 0; d < c.parts; ++d) r.wgmma(o.cols(d, c.parts), p, sv[sV[d]]);
      r.wgmma_commit();
      return sv;
    };
    // the online softmax of s (block j of query tile q): s = exp2(...), m and l updated, al = the factor O must shrink by
    auto softmax = [&](index_expr q, index_expr j, bool masked, const entry& e) {
      if (masked) {
        // (non-causal: j is T's last block, whose last key is column (T - 1) % bn; causal: keys after the row,
        // which covers the keys past T for every stored row, as S <= T (rows past S, not stored, see keys up to
        // their own index: K's rows past T read as zeros, so they stay finite); varlen: keys past the entry's,
        // or (causal) after row + len_k - len_q)
        const index_expr row0 = q * c.rows() + r.warpgroup() * 64;  // this warpgroup's first query row
        auto out = vl ? (c.causal ? j * c.bn + col() > e.diag + r.warpgroup() * 64 + row() : j * c.bn + col() >= e.len_k)
                      : c.causal ? (j * c.bn + col() > row0 + row())
                      : split    ? (j * c.bn + col() >= T.extent())  // (a part's last block need not be T's)
                                 : (col() > (T.extent() - 1) % c.bn);
        r.set(s, select(out, neg_inf, s));
      }
      // (varlen, or causal blocks crossing the diagonal in several ranges: a row may have seen no key yet)
      attention_detail::online_softmax_step(r, s, {m, mn, ms, al, l, ls}, scale, (vl || diag_ranges) && masked, c.exp2_fma);
    };
    // One unmasked key block: S of this block and P V of the one before go out together (in this warpgroup's
    // turn); the softmax of S overlaps P V (and the other warpgroup's MMAs).
    auto steady_step = [&](slot sq, index_expr q, index_expr j, bool masked, const entry& e) {
      if (c.turns) r.take_turn(mma);
      auto sk = qk(sq);
      auto sv = pv();
      if (c.turns) r.pass_turn(mma);
      r.wgmma_wait(1);
      r.release(kp, sk);
      softmax(q, j, masked, e);
      r.wgmma_wait(0);  // P V done: P may be overwritten, O rescaled
      r.release(vp, sv);
      r.set(o, o * al);
      r.set(p, s);
    };
    // LSE and O (normalized by rl, or by 1 / l) stored for this point (q, h, b)
    enum class norm { by_rl, by_l };
    auto store_o = [&](index_expr q, index_expr h, index_expr b, const entry& e, const index_expr& row0, reg_tile<f32> lse_of, norm n) {
      // (varlen: rows from the entry's first, stores up to its end)
      r.store(vl ? Lse.tile(h, e.q0 + row0, 0).elements_at(1).limit(1, e.q1) : Lse.tile(b, h, q * c.wgs + r.warpgroup(), 0), lse_of);
      if (n == norm::by_rl) r.set(o, o * rl);
      else r.set(o, o * rcp(l));
      if (c.o_tma) {
        // this warpgroup's 64 rows of each part through smem: the last tile's stores have read it (issued a
        // whole tile ago), the warpgroup writes it, and one thread stores it (rows past S are clipped by TMA)
        auto ob = r.convert<bf16>(o);
        r.bulk_wait_read(0);
        r.sync(epi);
        for (int d = 0; d < c.parts; ++d) r.stmatrix(sO[d].rows(r.warpgroup(), c.wgs), ob.cols(d, c.parts));
        r.fence_proxy_async();
        r.sync(epi);
        for (int d = 0; d < c.parts; ++d) r.tma_store(O.tile(b, q * c.wgs + r.warpgroup(), h, d).rows_at(1), sO[d].rows(r.warpgroup(), c.wgs));
        r.bulk_commit();
      } else {
        r.store(vl ? O.tile(e.q0 + row0, h, 0).rows_at(0).elements_at(0).limit(0, e.q1) : O.tile(b, q * c.wgs + r.warpgroup(), h, 0).rows_at(1),
                r.convert<bf16>(o));
      }
    };
    // The point's result: stored, or (split tail, a part of the point) its O normalized in f32 and its LSE stored at its
    // tail unit, for the combine kernel (attention_prefill_tail_combine_sm90, launched after this one) to merge.
    auto finish = [&](index_expr q, index_expr h, index_expr b, const entry& e, const index_expr& row0, reg_tile<f32> lse_of, norm n) {
      if (!split) return store_o(q, h, b, e, row0, lse_of, n);
      r.when(eq(r.walk_parts(), 1), [&] { store_o(q, h, b, e, row0, lse_of, n); });
      r.when(r.walk_parts() > 1, [&] {
        r.set(o, n == norm::by_rl ? o * rl : o * rcp(l));
        r.store(Wo.tile(r.tail_unit(), r.warpgroup(), 0).rows_at(1), o);
        r.store(Wl.tile(r.tail_unit(), r.warpgroup(), 0), lse_of);
      });
    };
    // Lookahead: a tile's first (masked) block, S issued and its softmax run, is what the previous point did
    // at its end (r.next_point), or the CTA's first point's prologue; the tile's body picks up its Q and K stages
    // with r.held. This tile's last P V then runs while the next tile's first S and softmax do.
    auto first_block = [&](index_expr q, bool issued) {
      if (!issued) qk(r.wait(qp));
      // (the wait outside the one-trip loop: ptxas serializes every wgmma when a group may outlive a loop
      // of unknown trips and its accumulator is read after it, C7514)
      r.wgmma_wait(issued ? 1 : 0);
      r.release(kp, r.held(kp));
      r.loop(last_block(r, q), after_last(r, q), 1, [&](auto j) {  // one trip: the masked block (its index a loop variable)
        r.fill(m, neg_inf);
        r.fill(l, 0.0f);
        softmax(q, j, true, entry{});
      });
    };
    for_each_point(r, [&](auto q, auto h, auto b) { in_entry(r, q, b, [&](const entry& e) {
      const index_expr row0 = q * c.rows() + r.warpgroup() * 64;  // this warpgroup's first query row
      if (c.lookahead) {
        r.when(eq(r.walk_step(), 0), [&] { first_block(q, false); });
        auto sq = r.held(qp);
        r.fill(o, 0.0f);
        r.set(p, s);
        if (split) r.loop(r.part_begin(), loop_extent(last_block(r, q)), 1, [&](auto j) { steady_step(sq, q, j, false, e); });
        else r.loop(loop_extent(last_block(r, q)), [&](auto j) { steady_step(sq, q, j, false, e); });
        r.release(qp, sq);
        // The last P V, and (where the walk goes on) before it the next tile's first S, whose softmax then runs
        // while P V does. Each branch issues and retires its own wgmma groups (ptxas serializes them when a
        // group issued under one condition is waited for under another).
        auto last_pv = [&] {
          pv();
          r.set(lse, (log2(l) + m * scale) * 0.6931471805599453f);
          r.set(rl, rcp(l));
        };
        next_point_of(r, [&](auto q2, auto, auto) {
          qk(r.wait(qp));
          last_pv();
          first_block(q2, true);
        });
        r.when(r.walk_step() + 1 >= r.walk_steps(), last_pv);
        r.wgmma_wait(0);
        r.release(vp, r.held(vp));
        finish(q, h, b, e, row0, lse, norm::by_rl);
        return;
      }
      // skip_past_rows: a warpgroup whose 64 rows all lie past the query rows (S, or the entry's length) computes
      // nothing; it waits for and releases every stage as the others do, and takes its turns. 192-row tiles
      // leave a power-of-two S a last tile of one or two warpgroups' rows past S: at S = 1k, causal, a fifth of
      // the consumers' key-block steps, 6% at 2k and 4k, 3% non-causal at 2k and 4k. (With 128-row tiles only
      // where S is not a multiple of 128; at D = 256 the branch costs the consumers 8 bytes of spill.)
      const index_expr rows_end = vl ? e.len_q : S.extent();
      if (c.skip_past_rows) r.when(row0 >= rows_end, [&] {
        auto sq = r.wait(qp);
        key_blocks(r, q, e, [&](index_expr, bool, bool) {
          if (c.turns) r.take_turn(mma);
          auto sk = r.wait(kp);
          auto sv = r.wait(vp);
          if (c.turns) r.pass_turn(mma);
          r.release(kp, sk);
          r.release(vp, sv);
        });
        r.release(qp, sq);
      });
      auto tile = [&] {
        auto sq = r.wait(qp);
        r.fill(o, 0.0f);
        r.fill(m, neg_inf);
        r.fill(l, 0.0f);
        // the first block, masked: S, its softmax, P (no P V before it)
        auto first_masked = [&](index_expr j) {
          if (c.turns) r.take_turn(mma);
          auto sk = qk(sq);
          if (c.turns) r.pass_turn(mma);
          r.wgmma_wait(0);
          r.release(kp, sk);
          softmax(q, j, true, e);
          r.set(p, s);
        };
        if (c.skip_masked) {
          // This warpgroup's last block with a key its rows see; the ones after it (first in the walk) are
          // waited for and released only. Then its masked blocks down to `full`, then the unmasked ones.
          const index_expr last_w = r.let_min(e.last, (row0 + 63) / c.bn);
          r.loop(loop_extent(e.last - last_w), [&](auto) {
            r.release(kp, r.wait(kp));
            r.release(vp, r.wait(vp));
          });
          r.loop(last_w, loop_extent(last_w + 1), 1, [&](auto j) { first_masked(j); });  // (one trip: j a loop variable)
          r.loop(loop_extent(last_w - e.full), [&](auto i) { steady_step(sq, q, last_w - 1 - i, true, e); });
          r.loop(loop_extent(e.full), [&](auto j) { steady_step(sq, q, j, false, e); });
        } else {
          key_blocks(r, q, e, [&](index_expr j, bool masked, bool first) {
            if (first) return first_masked(j);  // the last block, masked
            steady_step(sq, q, j, masked, e);
          });
        }
        // every S = Q K^T of the tile is complete (each step waited for its S): Q goes back to the producer
        // before the last P V, so the next tile's Q loads during it and the epilogue
        r.release(qp, sq);
        auto sv = pv();
        r.wgmma_wait(0);
        r.release(vp, sv);
        // LSE = ln(l) + m * scale * ln(2) = (log2(l) + m * scale) * ln(2)
        r.set(ls, (log2(l) + m * scale) * 0.6931471805599453f);
        finish(q, h, b, e, row0, ls, norm::by_l);
      };
      if (c.skip_past_rows) r.when(row0 < rows_end, tile);
      else tile();
    }); });
  });
  k.role("load", warpgroups(1), regs(producer_regs), [&](role& r) {
    for_each_point(r, [&](auto q, auto h, auto b) { in_entry(r, q, b, [&](const entry& e) {
      // (varlen: tiles start at the entry's first row or key, an element offset)
      auto rows = [&](auto T_, index_expr i, index_expr hh, int d, index_expr first, int block) {
        return vl ? T_.tile(first + i * block, hh, d).rows_at(0).elements_at(0) : T_.tile(b, i, hh, d).rows_at(1);
      };
      auto s = r.acquire(qp);
      for (int d = 0; d < c.parts; ++d) r.tma_load(s[sQ[d]], rows(Q, q, h, d, e.q0, c.rows()));
      key_blocks(r, q, e, [&](index_expr j, bool, bool) {
        auto sk = r.acquire(kp);
        for (int d = 0; d < c.parts; ++d) r.tma_load(sk[sK[d]], rows(Kt, j, h / c.group, d, e.k0, c.bn));
        auto sv = r.acquire(vp);
        for (int d = 0; d < c.parts; ++d) r.tma_load(sv[sV[d]], rows(V, j, h / c.group, d, e.k0, c.bn));
      });
    }); });
  });
  return k.build();
}

// The merge of a split tail's parts (attention_prefill_config::tail_parts), launched after the prefill kernel (PDL:
// its CTAs may start as the prefill's finish, and wait for all of its results with griddep_wait). It walks the
// prefill's units alike (attention_detail::prefill_walk: the same space, raster, order, split and grid). A split
// tile's blocks of 64 query rows x 64 columns of D (wgs x D / 64 of them) are spread over its parts' units: part p
// merges block p, the last part also the blocks from there on (a tile of fewer parts than blocks); one warpgroup:
//   M = max_u lse_u, O = sum_u 2^(lse_u - M) o_u / sum_u 2^(lse_u - M), LSE = M + log(sum_u 2^(lse_u - M))
// (lse in base 2 here; each part's o is normalized by its own sum; every part has a key block, so every lse is
// finite), in one pass with a running M, loading four parts per trip before using any (the parts are in L2:
// latency, not bandwidth, is what it waits on; decode's combine measured one pass with several loads a trip twice
// as fast as two passes). T reaches the walk (its split's extent: the key blocks) as the stride-0 last dim of
// part_lse, [NU, TR, T] with strides [TR, 1, 0]: no tensor here has it.
constexpr program attention_prefill_tail_combine_sm90(attention_prefill_config c) {
  constexpr int U = 4;  // parts loaded per trip (registers: the sum and U parts' 64 x 64 blocks, 32 each)
  const int blocks = c.wgs * c.parts;
  name_builder nm = attention_detail::prefill_name(c);
  nm.put("_tc");
  auto k = kernel(nm.view()).target(sm_90a).programmatic_launch();
  auto [Bt, S, H, T, D, One, NU, TR] = k.dims("B", "S", "H", "T", "D", "one", "NU", "TR");
  auto O = k.output<bf16>("O", dims(Bt, S, H, D));
  auto Lse = k.output<f32>("LSE", dims(Bt, H, S, One));
  auto Wo = k.input<f32>("part_o", dims(NU, TR, D));
  auto Wl = k.input<f32>("part_lse", dims(NU, TR, T));
  auto space = attention_detail::prefill_walk(k, c, Bt, S, H, T);
  k.role("combine", warpgroups(1), [&](role& r) {
    auto acc = r.fragment<f32>("acc", {64, 64});
    auto mx = r.row_vector<f32>("mx", 64);  // M
    auto sm = r.row_vector<f32>("sm", 64);  // the sum of the weights
    auto mn = r.row_vector<f32>("mn", 64);  // M after this trip's parts
    auto sh = r.row_vector<f32>("sh", 64);  // exp2(M before - M after): how much the sums so far shrink
    std::array<reg_tile<f32>, U> x{}, ls{};
    constexpr std::string_view xn[] = {"x0", "x1", "x2", "x3"}, lnm[] = {"l0", "l1", "l2", "l3"};
    for (int u = 0; u < U; ++u) x[u] = r.fragment<f32>(xn[u], {64, 64}), ls[u] = r.row_vector<f32>(lnm[u], 64);
    r.griddep_wait();  // the prefill's parts are complete and visible
    for (int u = 0; u < U; ++u) r.fill(x[u], 0.0f);  // (a part past the tile's weighs 0: its block must be finite)
    r.for_each(space, [&](auto q, auto h, auto b) {
      r.when(r.walk_parts() > 1, [&] {  // (a whole point stored its own O and LSE)
        const index_expr p = r.walk_part(), n = r.walk_parts();
        const index_expr first = r.let_index(r.tail_unit() - p);  // the tile's part 0
        // blocks [p, hi): hi = p + 1 but for the last part, blocks; as min(blocks, max(p + 1, blocks - (n - 1 - p) * blocks))
        const index_expr neg_hi = r.let_min(-(p + 1), (n - 1 - p) * blocks - blocks);
        r.loop(p, min(loop_extent(index_expr(blocks)), loop_extent(-neg_hi)), 1, [&](auto blk) {
          const index_expr rb = blk % c.wgs, d = blk / c.wgs;  // the block's 64 rows of the tile and 64 columns of D
          r.fill(mx, neg_inf);
          r.fill(acc, 0.0f);
          r.fill(sm, 0.0f);
          r.loop(loop_extent((n + (U - 1)) / U), [&](auto t) {
            for (int u = 0; u < U; ++u) {
              r.fill(ls[u], neg_inf);
              r.when(t * U + u < n, [&] {
                r.load(ls[u], Wl.tile(first + t * U + u, rb, 0));
                r.load(x[u], Wo.tile(first + t * U + u, rb, d).rows_at(1));
              });
              r.set(ls[u], ls[u] * 1.4426950408889634f);  // (base 2; -inf stays -inf)
            }
            r.set(mn, max(max(max(max(mx, ls[0]), ls[1]), ls[2]), ls[3]));
            r.set(sh, exp2(mx - mn));                                    // (mn is finite from the first trip on: part 0)
            for (int u = 0; u < U; ++u) r.set(ls[u], exp2(ls[u] - mn));  // each part's weight (0 past the parts)
            r.set(sm, sm * sh + ls[0] + ls[1] + ls[2] + ls[3]);
            r.set(acc, acc * sh + ls[0] * x[0] + ls[1] * x[1] + ls[2] * x[2] + ls[3] * x[3]);
            r.set(mx, mn);
          });
          r.when(eq(d, 0), [&] {  // (every column block of a row block computes the same LSE; the first stores it)
            r.set(ls[0], (log2(sm) + mx) * 0.6931471805599453f);
            r.store(Lse.tile(b, h, q * c.wgs + rb, 0), ls[0]);
          });
          r.set(acc, acc * rcp(sm));
          r.store(O.tile(b, q * c.wgs + rb, h, d).rows_at(1), r.convert<bf16>(acc));
        });
      });
    });
  });
  return k.build();
}

}  // namespace cake::kernels
