#pragma once
// Paged decode attention on Hopper (sm_90a): one new query token per request against a paged KV cache
// (vLLM / FlashInfer layout), split over the context, then a combine kernel.
//
//   O[b, h, :] = sum_{j < len_b} softmax_j(scale * Q[b, h, :] . K_b[j, h / G, :]) V_b[j, h / G, :]
//   LSE[b, h]  = log(sum_{j < len_b} exp(scale * Q[b, h, :] . K_b[j, h / G, :]))   (natural log)
//
// Layouts: Q, O bf16 [B, H, D] (the G = H / HK query heads of KV head hk are rows hk * G .. hk * G + G - 1);
// the caches K, V bf16 [num_pages, page_size, HK, D]; key j of request b is
// row j % page_size of page page_table[b, j / page_size] (page_table i32 [B, max_pages]); len_b = seq_lens[b]
// (i32 [B]). LSE f32 [B, H].
//
// Why this shape. Decode reads every key and value once: 2 * len * HK * D * 2 bytes per request, against
// 4 * G * len * HK * D flops, i.e. G flops per byte: it is bound by HBM, not by the tensor cores. The
// design goal is to keep enough bytes in flight on every SM (Little's law: ~4.8 TB/s x ~1.5 us is ~55 KB
// per SM of the H200's 132) with the fewest instructions per byte.
//
// - GQA packing: the G query heads of one KV head are the rows of one wgmma m64 tile (Q loaded once by TMA
//   as a 64-row box from row hk * G of [B, H, D]: the rows past the group, other heads' queries or zeros
//   past H, are computed and never stored). wgmma m64 over mma.sync m16: the MMA is 16x (G = 4) wasted either way; what matters is the
//   time per block of keys. At bn = 64 keys and D = 128 a block is 32 KB of K and V; its two MMAs (S = Q K^T,
//   O += P V) are 2 * 2 * 64 * 64 * 128 flops, ~512 cycles of an SM's tensor pipe at dense rate, and the
//   softmax is 32 elements per thread of one warpgroup (~300 issue cycles): under the ~1500 cycles the SM
//   needs to stream 32 KB at its share of HBM (~21 B/cycle), and two CTAs per SM overlap each other. The
//   wgmma path reuses the prefill's operand layouts (P from registers, V MN-major), already proven on the
//   H200; mma.sync m16 would save MMA issue that is not the bottleneck (a later option for G <= 16).
// - Split-KV: the space is (split s of `splits`, KV head, request); slice s takes key blocks s, s +
//   splits, s + 2 * splits, ... (interleaved, so that every slice of a request gets the same number of
//   blocks to within one, whatever len is). The entry point picks `splits`, the key block and the depth
//   by a rule fitted to H200 measurements (decode_config_for in attention.hpp). Each slice writes its unnormalized O, its running max (times scale, base-2
//   units) and its sum of exp2 to a workspace; attention_decode_combine_sm90 (below, a second kernel,
//   launched with PDL) reduces the slices. (Two other forms merge inside this kernel: fused_combine, the last
//   slice to arrive, and cluster_combine, the slices as one cluster over DSMEM; measured in docs/attention.md,
//   the first taken where there is one slice, the second slower than the combine kernel on an H100.)
// - Pages: a block of bn keys is bn / page_size pages; the producer reads each page's index from the page
//   table (r.read_index inside the loop) and loads one TMA box of page_size rows per page and 64-column part
//   into rows i * page_size .. of the stage (a row part of the smem region, 128-byte swizzle: a part is a
//   multiple of 8 rows, so the swizzle pattern stays aligned). Page indices past the request's last page
//   are clamped to its last page (the table's row may end there); those keys, like every key past len,
//   score -inf. Every block may hold masked keys (the last block of a request is any slice's), so every
//   block is masked: one select per score.
// - Roles: one consumer warpgroup (wgmma needs a whole warpgroup) and a one-warp TMA producer: 160 threads
//   and no setmaxnreg, so that at 64-key blocks two CTAs fit an SM by registers (at most 168 per thread: the
//   SM's 10 warps count as 12, plan::entry_register_cap; declared with k.ctas_per_sm(2), so ptxas holds to it) as by shared memory (attention_decode_smem: 80 KB at D = 128 in
//   2 stages, 112 KB in 3); 128-key blocks take one CTA per SM.
// Everything physical (barrier counts, phases, tx bytes, smem offsets) is derived by the plan.
#include <array>
#include <string_view>

#include <cake/cake.hpp>

#include "online_softmax.hpp"

namespace cake::kernels {

struct attention_decode_config {
  int parts = 2;        // head dim / 64: 1 (D = 64) or 2 (D = 128)
  int group = 4;        // G = H / HK query heads per KV head: 1 .. 64 (the rows of the wgmma tile)
  int page_size = 16;   // keys per page: 16, 32 or 64
  int bn = 64;          // keys per block (S's N): a multiple of page_size
  int stages = 2;       // depth of the K and of the V pipeline
  int splits = 1;       // slices of each request's context (1 .. 256)
  bool persistent = false;  // one CTA per SM walks the (slice, KV head, request) points: the pipelines run on
                            // from one point into the next (no per-CTA prologue, no partial last wave); Q
                            // gets two stages so that the next point's Q loads during this one's last blocks
  bool loads_only = false;  // a probe, not a schedule: the consumer waits for and releases every K and V stage
                            // without computing (O stays 0), so that the load side's ceiling can be timed
                            // against the whole kernel (cake_bench_decode --loads-only)
  // The slices combine themselves: each stores its partial state and arrives on a counter of its (request, KV
  // head) (r.count_arrival); the last to arrive reads the others' states, merges them into its own and writes O
  // and LSE. No combine kernel (nor its wait for the whole decode grid); with one slice nothing is stored but O
  // and LSE. The kernel then takes O, LSE and (more than one slice) the counters (i32 [B, HK], zero before the first launch).
  bool fused_combine = false;
  // The slices of a (request, KV head) are one thread-block cluster (k.cluster(splits): 2, 4 or 8 slices) and merge
  // through distributed shared memory: the running maxima by r.cluster_max, then the weighted sums l and O by
  // r.cluster_sum / r.cluster_sum_scatter, each CTA normalizing and storing its 1/splits of O's columns. No
  // combine kernel, no slice state in memory, no counters. The kernel then takes O and LSE.
  bool cluster_combine = false;
  // The caches hold fp8 (e4m3) with a per-tensor scale each (the key k_scale * stored, the value v_scale * stored,
  // as vLLM's fp8 KV cache): half the bytes of bf16. TMA brings a block's fp8 K (and V) into the stages as before;
  // the consumer loads the stage into registers, releases it at once, converts it to f16 (exact: every e4m3 value is
  // an f16; one cvt per pair, where bf16 would take three: the conversions share the SM's 16 per clock with nothing
  // else of decode's) and stores it into one f16 smem block that the wgmma reads. So the MMAs are f16: Q is converted
  // once per point (bf16 -> f16, exact within f16's range), P is f16. k_scale folds into the softmax's scale,
  // v_scale into O at the end.
  bool kv_fp8 = false;
  constexpr int pages_per_block() const { return bn / page_size; }
  constexpr bool valid() const {
    return (parts == 1 || parts == 2) && group >= 1 && group <= 64 && (page_size == 16 || page_size == 32 || page_size == 64) && bn >= 64 &&
           bn <= 128 && bn % page_size == 0 && pages_per_block() <= 8 && stages >= 1 && stages <= 8 && splits >= 1 && splits <= 256 &&
           !(loads_only && fused_combine) &&
           // (fp8 with the last slice merging the others: more ops than a Program holds; the entry point takes the
           // fused combine with one slice only, which fp8 has)
           !(kv_fp8 && fused_combine && splits > 1) &&
           // (the reduce-scatter of a 64-column O part: a whole 8-column group per slice, so 2, 4 or 8 slices)
           (!cluster_combine || (splits >= 2 && 64 % (8 * splits) == 0 && !fused_combine && !loads_only && !persistent));
  }
  friend constexpr auto operator<=>(const attention_decode_config&, const attention_decode_config&) = default;
};

// Smem in bytes: Q (64 rows, two stages when persistent) + the K and V stages, D/64 parts of 64 bf16 columns each
// (kv_fp8: 64 fp8 columns each, and one f16 block of K and of V that the consumer converts them into, and Q in f16),
// and with cluster_combine the cluster reductions' scratch (one 64 x 64 f32 part: the reductions share it).
constexpr int attention_decode_smem(const attention_decode_config& c) {
  const int stage_bytes = c.kv_fp8 ? 1 : 2;
  return ((c.persistent ? 128 : 64) * 2 + 2 * c.stages * c.bn * stage_bytes + (c.kv_fp8 ? 2 * c.bn * 2 + 64 * 2 : 0)) * c.parts * 64 +
         (c.cluster_combine ? 64 * 64 * 4 : 0);
}

// Two CTAs of the schedule fit an SM by shared memory (1 KiB beside the tiles for barriers and scratch, and the
// per-block reservation): the kernel then declares k.ctas_per_sm(2), so that ptxas holds each thread to the
// registers two CTAs may share.
constexpr bool attention_decode_two_ctas_per_sm(const attention_decode_config& c) {
  constexpr auto lim = targets::sm90a.limits;
  return 2 * (attention_decode_smem(c) + 1024 + lim.smem_reserved_per_block) <= lim.smem_per_sm;
}

namespace attention_detail {
// "attn_dec_d128g4p16n64s8", "attn_dec_d128g4p16n128t3s16P" (at most 31 characters: d128g64p64n128t8s256PL or ...s256PC)
constexpr name_builder decode_name(const attention_decode_config& c) {
  name_builder b;
  b.put("attn_dec_d");
  b.put(64 * c.parts);
  b.put("g");
  b.put(c.group);
  b.put("p");
  b.put(c.page_size);
  b.put("n");
  b.put(c.bn);
  if (c.stages != 2) {
    b.put("t");
    b.put(c.stages);
  }
  b.put("s");
  b.put(c.splits);
  if (c.persistent) b.put("P");
  if (c.loads_only) b.put("L");
  if (c.fused_combine) b.put("C");
  if (c.cluster_combine) b.put("X");
  if (c.kv_fp8) b.put("F");
  return b;
}
}  // namespace attention_detail

constexpr program attention_decode_sm90(attention_decode_config c = {}) {
  const name_builder nm = attention_detail::decode_name(c);
  auto k = kernel(nm.view()).target(sm_90a);
  if (c.persistent) k.persistent();
  if (c.cluster_combine) k.cluster(c.splits);  // along axis 0, the split: a (request, KV head)'s slices
  // Two CTAs per SM where two fit by shared memory (64-key blocks in up to 3 stages at D = 128): the second
  // CTA's loads overlap this one's math. Declared, so that ptxas keeps each thread to the registers two CTAs of
  // 160 threads may hold (168; the fused combine's merge took 182 undeclared, and an SM then ran one CTA)
  // (resource.ctas-per-sm checks the derived plan)
  if (attention_decode_two_ctas_per_sm(c)) k.ctas_per_sm(2);
  auto [Bt, H, D, HK, P, PS, MP, NS, One] = k.dims("B", "H", "D", "HK", "pages", "page_size", "max_pages", "NS", "one");
  auto Q = k.input<bf16>("Q", dims(Bt, H, D));
  // read once, a row's two 64-column boxes issued together: no L2 promotion (+1.5..4.5% on the H200)
  tensor<bf16> Kc, Vc;
  tensor<e4m3> K8, V8;
  if (c.kv_fp8) {
    K8 = k.input<e4m3>("K", dims(P, PS, HK, D));
    V8 = k.input<e4m3>("V", dims(P, PS, HK, D));
    k.streamed(K8).streamed(V8);
  } else {
    Kc = k.input<bf16>("K", dims(P, PS, HK, D));
    Vc = k.input<bf16>("V", dims(P, PS, HK, D));
    k.streamed(Kc).streamed(Vc);
  }
  auto Pt = k.input<i32>("page_table", dims(Bt, MP));
  auto Len = k.input<i32>("seq_lens", dims(Bt));
  // The slices' partial results (workspace): O unnormalized [NS, B, H, D], max * scale and sum of exp2 [NS, B, H, 1].
  auto Wo = k.output<f32>("part_o", dims(NS, Bt, H, D));
  auto Wm = k.output<f32>("part_m", dims(NS, Bt, H, One));
  auto Wl = k.output<f32>("part_l", dims(NS, Bt, H, One));
  tensor<bf16> O;
  tensor<f32> Lse;
  tensor<i32> Count;
  if (c.fused_combine || c.cluster_combine) {
    O = k.output<bf16>("O", dims(Bt, H, D));
    Lse = k.output<f32>("LSE", dims(Bt, H, One));
    // (one slice has nothing to wait for; a cluster's slices meet in DSMEM)
    if (c.fused_combine && c.splits > 1) Count = k.output<i32>("count", dims(Bt, HK));
  }
  auto scale = k.param<f32>("scale_log2");  // softmax scale * log2(e) (kv_fp8: times k_scale)
  scalar<f32> v_scale{};
  if (c.kv_fp8) v_scale = k.param<f32>("v_scale");
  auto space = k.parallel(split(c.splits), each(HK), each(Bt));
  const int ppb = c.pages_per_block();
  // K and V blocks as the MMAs read them: the pipelines' stages (bf16), or with kv_fp8 one f16 block each that the
  // consumer fills from the fp8 stages (sK8, sV8: 64 columns of one byte, so a 64-byte swizzle span), and Q in f16
  std::array<smem_tile<bf16>, 2> sQ{}, sK{}, sV{};
  std::array<smem_tile<e4m3>, 2> sK8{}, sV8{};
  std::array<smem_tile<f16>, 2> sQh{}, sKh{}, sVh{};
  for (int d = 0; d < c.parts; ++d) {
    sQ[d] = k.smem<bf16>(d ? "sQ1" : "sQ0", {64, 64}, swizzle::b128);
    if (!c.kv_fp8) {
      sK[d] = k.smem<bf16>(d ? "sK1" : "sK0", {c.bn, 64}, swizzle::b128);
      sV[d] = k.smem<bf16>(d ? "sV1" : "sV0", {c.bn, 64}, swizzle::b128);
    } else {
      sK8[d] = k.smem<e4m3>(d ? "sK8_1" : "sK8_0", {c.bn, 64}, swizzle::b64);
      sV8[d] = k.smem<e4m3>(d ? "sV8_1" : "sV8_0", {c.bn, 64}, swizzle::b64);
      sQh[d] = k.smem<f16>(d ? "sQh1" : "sQh0", {64, 64}, swizzle::b128);
      sKh[d] = k.smem<f16>(d ? "sKh1" : "sKh0", {c.bn, 64}, swizzle::b128);
      // (no copy fills them, so their major-ness is declared: K is read K-major by S = Q K^T, V MN-major by P V)
      sVh[d] = k.smem<f16>(d ? "sVh1" : "sVh0", {c.bn, 64}, swizzle::b128, major::mn);
    }
  }
  const int q_stages = c.persistent ? 2 : 1;
  auto qp = c.parts == 1 ? k.pipeline("q", stages(q_stages)).carries(sQ[0]) : k.pipeline("q", stages(q_stages)).carries(sQ[0], sQ[1]);
  auto carry = [&](std::string_view nm, auto& t) {
    return c.parts == 1 ? k.pipeline(nm, stages(c.stages)).carries(t[0]) : k.pipeline(nm, stages(c.stages)).carries(t[0], t[1]);
  };
  auto kp = c.kv_fp8 ? carry("k", sK8) : carry("k", sK);
  auto vp = c.kv_fp8 ? carry("v", sV8) : carry("v", sV);
  // (kv_fp8) the consumer warpgroup's threads, around its writes of the f16 blocks
  named_barrier_ref cvt{};
  if (c.kv_fp8) cvt = k.named_barrier("cvt", per_unit);

  // Both roles read the request's length and walk the same blocks: s, s + splits, ... below ceil(len / bn).
  struct walk {
    index_expr h0, len, blocks;  // the first query head of KV head hk, the request's length and blocks
  };
  auto read_walk = [&](role& r, index_expr hk, index_expr b) {
    walk w;
    // (a named value: the coverage rule does not model "G rows of H per KV head", and skips value origins)
    w.h0 = r.let_index(hk * c.group);
    w.len = r.read_index(Len.at(b));
    w.blocks = r.let_index((w.len + (c.bn - 1)) / c.bn);
    return w;
  };

  k.role("softmax", warpgroups(1), [&](role& r) {
    auto s = r.accumulator<f32>("s", {64, c.bn});
    // O, one 64-column accumulator per part (the fused merge loads and merges another slice's O a part at a time)
    std::array<reg_tile<f32>, 2> o{};
    for (int d = 0; d < c.parts; ++d) o[d] = r.accumulator<f32>(d ? "o1" : "o0", {64, 64});
    // softmax(s) as the A operand of P V (kv_fp8: f16, as V's block)
    reg_tile<bf16> p{};
    reg_tile<f16> ph{};
    if (c.kv_fp8) ph = r.fragment<f16>("p", {64, c.bn});
    else p = r.fragment<bf16>("p", {64, c.bn});
    auto m = r.row_vector<f32>("m", 64);         // running max of the raw scores
    auto mn = r.row_vector<f32>("mn", 64);       // with this block's
    auto ms = r.row_vector<f32>("ms", 64);       // -mn * scale: exp2(s * scale + ms)
    auto al = r.row_vector<f32>("al", 64);       // exp2((m - mn) * scale): how much the old terms shrink
    auto l = r.row_vector<f32>("l", 64);         // running sum of exp2
    auto ls = r.row_vector<f32>("ls", 64);
    // (fused_combine: 64 columns of another slice's O, read by the last slice: one part at a time, so that the
    // merge's registers stay within the 168 a thread may hold for two CTAs of 160 threads to share an SM)
    reg_tile<f32> x;
    if (c.fused_combine) x = r.accumulator<f32>("x", {64, 64});
    // (kv_fp8) a block's fp8 K or V, 64 columns per part, on its way from a stage to the f16 block (f8, then h);
    // a part of Q, converted to f16 as it is loaded (qh)
    std::array<reg_tile<e4m3>, 2> f8{};
    reg_tile<f16> h{}, qh{};
    if (c.kv_fp8) {
      for (int d = 0; d < c.parts; ++d) f8[d] = r.fragment<e4m3>(d ? "f8_1" : "f8_0", {c.bn, 64});
      h = r.fragment<f16>("h", {c.bn, 64});
      qh = c.bn == 64 ? h : r.fragment<f16>("qh", {64, 64});
    }
    // (kv_fp8) the fp8 stage into registers, the stage released at once, then f16 into the block the MMA reads. It runs
    // while an MMA of the other block is in flight (V of block j during S = Q K^T of j, K of j + splits during P V
    // of j), so the first barrier makes sure every warp has waited for the MMA that read this block last (a warp's
    // wgmma_wait covers its own share of a warpgroup MMA) and has read the stage before it is freed (without it the
    // lowering would sync the unit before the release itself); the fence and the second barrier make the writes
    // visible to the MMA that reads them.
    auto convert_block = [&](auto& pipe, std::array<smem_tile<e4m3>, 2>& fp8, std::array<smem_tile<f16>, 2>& to) {
      auto st = r.wait(pipe);
      for (int d = 0; d < c.parts; ++d) r.load(f8[d], st[fp8[d]]);
      r.sync(cvt);
      r.release(pipe, st);
      for (int d = 0; d < c.parts; ++d) {
        r.convert(h, f8[d]);
        r.store(to[d], h);
      }
      r.fence_proxy_async();  // generic-proxy writes, read by wgmma (async proxy)
      r.sync(cvt);
    };
    // the block's scores s (keys j * bn ..) into the running max m, sum l, O's scale and P
    auto online_softmax = [&](index_expr j, index_expr len) {
      r.set(s, select(j * c.bn + col() >= len, neg_inf, s));
      attention_detail::online_softmax_step(r, s, {m, mn, ms, al, l, ls}, scale);
      for (int d = 0; d < c.parts; ++d) r.set(o[d], o[d] * al);
      if (c.kv_fp8) r.set(ph, s);
      else r.set(p, s);
    };
    r.for_each(space, [&](auto sl, auto hk, auto b) {
      r.griddep_launch_dependents();  // the combine may launch now; it waits for this grid to finish (PDL)
      const walk w = read_walk(r, hk, b);
      for (int d = 0; d < c.parts; ++d) r.fill(o[d], 0.0f);
      r.fill(m, neg_inf);
      r.fill(l, 0.0f);
      // (a slice with no block, len <= sl * bn, leaves o = 0, m = -inf, l = 0: the combine weighs it 0)
      r.when(sl < w.blocks, [&] {
        auto sq = r.wait(qp);
        if (c.kv_fp8 && !c.loads_only) {  // Q in f16 for the f16 MMAs (the last point's S MMAs are complete: waited)
          for (int d = 0; d < c.parts; ++d) {
            r.load(qh, sq[sQ[d]]);
            r.store(sQh[d], qh);
          }
          r.fence_proxy_async();
          r.sync(cvt);
          convert_block(kp, sK8, sKh);  // K of the slice's first block (the loop converts each next one)
        }
        r.loop(sl, loop_extent(w.blocks), c.splits, [&](auto j) {
          if (c.loads_only) {
            r.release(kp, r.wait(kp));
            r.release(vp, r.wait(vp));
            return;
          }
          if (c.kv_fp8) {  // (the conversions overlap the MMAs: convert_block above)
            r.wgmma_fence();
            for (int d = 0; d < c.parts; ++d) {
              auto mma = r.wgmma(s, sQh[d], sKh[d]).over(D);
              if (d == 0) mma.overwrite();
            }
            r.wgmma_commit();
            convert_block(vp, sV8, sVh);  // V of this block while S runs
            r.wgmma_wait(0);
            online_softmax(j, w.len);
            r.wgmma_fence();
            for (int d = 0; d < c.parts; ++d) r.wgmma(o[d], ph, sVh[d]);
            r.wgmma_commit();
            r.when(j + c.splits < w.blocks, [&] { convert_block(kp, sK8, sKh); });  // K of the next block while P V runs
            r.wgmma_wait(0);
            return;
          }
          auto sk = r.wait(kp);
          r.wgmma_fence();
          for (int d = 0; d < c.parts; ++d) {
            auto mma = r.wgmma(s, sq[sQ[d]], sk[sK[d]]).over(D);
            if (d == 0) mma.overwrite();
          }
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(kp, sk);
          // keys past len (the request's last block, and pages clamped to its last page) score -inf; every
          // block holds at least one key below len, so mn is finite
          online_softmax(j, w.len);
          auto sv = r.wait(vp);
          r.wgmma_fence();
          for (int d = 0; d < c.parts; ++d) r.wgmma(o[d], p, sv[sV[d]]);
          r.wgmma_commit();
          r.wgmma_wait(0);
          r.release(vp, sv);
        });
        r.release(qp, sq);
        if (c.loads_only) {  // (the probe: the math once per point on zero scores, so that its tiles have their layouts)
          r.fill(s, 0.0f);
          online_softmax(sl, w.len);
        }
      });
      // the slice's partial state, rows hk * G .. hk * G + G - 1 of H (the other rows of the tile are not stored)
      r.set(ms, m * scale);
      if (c.kv_fp8)  // the values' scale, once on the sum (O is linear in V)
        for (int d = 0; d < c.parts; ++d) r.set(o[d], o[d] * v_scale);
      // (H is dim 2 of the workspace's [NS, B, H, .], dim 1 of O's and LSE's [B, H, .])
      auto group_rows = [&](auto t, int h = 2) { return t.elements_at(h).limit(h, w.h0 + c.group); };
      auto group_tile = [&](auto t, int h = 2) { return t.rows_at(h).elements_at(h).limit(h, w.h0 + c.group); };
      if (c.cluster_combine) {
        // M = max over the slices; a slice's weight exp2(m_s - M) (0 where M is -inf: no slice had a key); l and O
        // weighted, then summed over the cluster (O scattered: rank q ends with column block q of S of each part)
        const int S = c.splits;
        r.set(al, ms);
        r.cluster_max(ms);
        r.set(al, select(ms <= neg_inf, 0.0f, exp2(al - ms)));
        r.set(l, l * al);
        r.cluster_sum(l);
        for (int d = 0; d < c.parts; ++d) {
          r.set(o[d], o[d] * al);
          r.cluster_sum_scatter(o[d]);
        }
        r.when(eq(r.cluster_rank(), 0), [&] {
          r.set(ls, (log2(l) + ms) * 0.6931471805599453f);
          r.store(group_rows(Lse.tile(b, w.h0, 0), 1), ls);
        });
        for (int d = 0; d < c.parts; ++d) {
          r.set(o[d], select(l > 0.0f, o[d] * rcp(l), 0.0f));
          auto out = r.convert<bf16>(o[d]);
          r.for_range(S, [&](auto q) {
            r.when(eq(r.cluster_rank(), q), [&] { r.store(group_tile(O.tile(b, w.h0, d * S + q), 1), out.cols(q, S)); });
          });
        }
        return;
      }
      if (!c.fused_combine) {
        r.store(group_rows(Wm.tile(sl, b, w.h0, 0)), ms);
        r.store(group_rows(Wl.tile(sl, b, w.h0, 0)), l);
        for (int d = 0; d < c.parts; ++d) r.store(group_tile(Wo.tile(sl, b, w.h0, d)), o[d]);
        return;
      }
      // O = o / l, LSE = (log2 l + M) ln 2 from the merged state (M = ms, base-2 units); a request with no key
      // gets O = 0 and LSE = -inf, as from the combine kernel
      auto finish = [&] {
        r.set(ls, (log2(l) + ms) * 0.6931471805599453f);
        r.store(group_rows(Lse.tile(b, w.h0, 0), 1), ls);
        for (int d = 0; d < c.parts; ++d) {
          r.set(o[d], select(l > 0.0f, o[d] * rcp(l), 0.0f));
          r.store(group_tile(O.tile(b, w.h0, d), 1), r.convert<bf16>(o[d]));
        }
      };
      if (c.splits == 1) return finish();
      r.store(group_rows(Wm.tile(sl, b, w.h0, 0)), ms);
      r.store(group_rows(Wl.tile(sl, b, w.h0, 0)), l);
      for (int d = 0; d < c.parts; ++d) r.store(group_tile(Wo.tile(sl, b, w.h0, d)), o[d]);
      auto before = r.count_arrival(Count.at(b, hk), c.splits);
      r.when(eq(before, c.splits - 1), [&] {  // the last slice: every other slice's state is in memory
        // merged one slice at a time into (M, l, o), as the combine kernel does: M rises to the larger max and
        // what is summed so far shrinks by exp2(M_old - M_new) (while M is -inf nothing has had a key: factors 0)
        r.loop(tiles(NS, 1), [&](auto q) {
          r.when(ne(q, sl), [&] {
            r.load(mn, group_rows(Wm.tile(q, b, w.h0, 0)));
            r.set(al, max(ms, mn));                                          // M after this slice
            r.set(mn, select(al <= neg_inf, 0.0f, exp2(mn - al)));           // its weight
            r.set(ms, select(al <= neg_inf, 0.0f, exp2(ms - al)));           // how much the sums so far shrink
            for (int d = 0; d < c.parts; ++d) {
              r.load(x, group_tile(Wo.tile(q, b, w.h0, d)));
              r.set(o[d], o[d] * ms + mn * x);
            }
            r.load(ls, group_rows(Wl.tile(q, b, w.h0, 0)));
            r.set(l, l * ms + mn * ls);
            r.set(ms, al);
          });
        });
        finish();
      });
    });
  });
  k.role("load", warps(1), [&](role& r) {
    r.for_each(space, [&](auto sl, auto hk, auto b) {
      r.griddep_launch_dependents();
      const walk w = read_walk(r, hk, b);
      r.when(sl < w.blocks, [&] {
        auto sq = r.acquire(qp);
        // a 64-row box from row hk * G: the rows past the group (other KV heads' queries, or zeros past H)
        // are computed and never stored
        for (int d = 0; d < c.parts; ++d) r.tma_load(sq[sQ[d]], Q.tile(b, w.h0, d).rows_at(1).elements_at(1));
        const index_expr last_page = r.let_index((w.len - 1) / c.page_size);
        r.loop(sl, loop_extent(w.blocks), c.splits, [&](auto j) {
          std::array<index_expr, 8> page{};
          for (int i = 0; i < ppb; ++i) page[i] = r.read_index(Pt.at(b, r.let_min(j * ppb + i, last_page)));
          // one box of page_size rows per page and 64-column part into rows i * page_size .. of the stage
          auto load = [&](auto& pipe, auto& regions, auto& cache) {
            auto st = r.acquire(pipe);
            for (int i = 0; i < ppb; ++i)
              for (int d = 0; d < c.parts; ++d) r.tma_load(st[regions[d]].rows(i, ppb), cache.tile(page[i], 0, hk, d).rows_at(1));
          };
          if (c.kv_fp8) load(kp, sK8, K8), load(vp, sV8, V8);
          else load(kp, sK, Kc), load(vp, sV, Vc);
        });
      });
    });
  });
  return k.build();
}

// The combine: the slices' partial states of every (request, query head) reduced into O and LSE:
//   M = max_s m_s, w_s = exp2(m_s - M), L = sum_s w_s l_s, O = sum_s w_s o_s / L, LSE = (log2 L + M) ln 2
// (computed in one pass with a running M, below)
// (m in base-2 units, already times the scale). Slices with no key have m_s = -inf: weight 0. A request
// with no key at all (len 0) gets O = 0 and LSE = -inf. Plain loads and stores: generic code.
// Latency, not bandwidth, is what the combine fights (the partial results are small and in L2): a loop
// that loads one slice and uses it before loading the next waits one L2 latency per slice. So each trip
// loads `unroll` slices into distinct register tiles before it uses any of them (the loads are in flight
// together), in one pass (a running max, as the decode's softmax). A CTA takes `rows` query heads x 64
// columns of D, so that B = 1 still spreads over H / rows * D / 64 CTAs.
struct attention_decode_combine_config {
  int parts = 2;   // head dim / 64
  int rows = 8;    // query heads per CTA (one warpgroup: one 16-byte vector of a row per thread)
  // slices loaded per trip (register tiles: acc, its bf16, 3 x 3 slice tiles, M, L, the trip's M and the
  // shrink factor = 15 of the capacity of 16; the trip's sums below are written for 3)
  static constexpr int unroll = 3;
  friend constexpr auto operator<=>(const attention_decode_combine_config&, const attention_decode_combine_config&) = default;
};

constexpr program attention_decode_combine_sm90(attention_decode_combine_config c = {}) {
  constexpr int U = attention_decode_combine_config::unroll;
  // Launched with PDL: its CTAs may start while the decode kernel's last wave runs (the decode kernel
  // triggers its dependents at the top of each CTA) and wait for that grid's results with griddep_wait.
  auto k = kernel(c.parts == 1 ? "attn_dec_combine_d64" : "attn_dec_combine_d128").target(sm_90a).programmatic_launch();
  auto [NS, Bt, H, D, One] = k.dims("NS", "B", "H", "D", "one");
  auto Wo = k.input<f32>("part_o", dims(NS, Bt, H, D));
  auto Wm = k.input<f32>("part_m", dims(NS, Bt, H, One));
  auto Wl = k.input<f32>("part_l", dims(NS, Bt, H, One));
  auto O = k.output<bf16>("O", dims(Bt, H, D));
  auto Lse = k.output<f32>("LSE", dims(Bt, H, One));
  auto space = k.parallel(tiles(H, c.rows), tiles(D, 64), each(Bt));
  k.role("combine", warpgroups(1), [&](role& r) {
    auto acc = r.fragment<f32>("acc", {c.rows, 64});
    auto mx = r.row_vector<f32>("mx", c.rows);  // M
    auto sm = r.row_vector<f32>("sm", c.rows);  // L
    auto mn = r.row_vector<f32>("mn", c.rows);  // M after this trip's slices
    auto sh = r.row_vector<f32>("sh", c.rows);  // exp2(M before - M after): how much the sums so far shrink
    static_assert(U == 3);
    std::array<reg_tile<f32>, U> x{}, ms{}, ls{};
    constexpr std::string_view xn[] = {"x0", "x1", "x2"}, mnm[] = {"m0", "m1", "m2"}, lnm[] = {"l0", "l1", "l2"};
    for (int u = 0; u < U; ++u) {
      x[u] = r.fragment<f32>(xn[u], {c.rows, 64});
      ms[u] = r.row_vector<f32>(mnm[u], c.rows);
      ls[u] = r.row_vector<f32>(lnm[u], c.rows);
    }
    r.griddep_wait();  // the decode kernel's partial results are complete and visible
    r.for_each(space, [&](auto i, auto dc, auto b) {
      // One pass, online (as the decode's own softmax): M is the largest m seen so far; when a trip's slices
      // raise it, what is summed already shrinks by exp2(M_old - M_new). One L2 round trip per `unroll`
      // slices, where a max pass then a sum pass took two. (Slices past NS in the last trip load m = -inf,
      // l = 0, o = 0: weight 0. While M is -inf no slice has had a key: the sums are 0 and the factors 0.)
      r.fill(mx, neg_inf);
      r.fill(acc, 0.0f);
      r.fill(sm, 0.0f);
      r.loop(tiles(NS, U), [&](auto s) {
        for (int u = 0; u < U; ++u) {
          r.load(ms[u], Wm.tile(s * U + u, b, i, 0)).fill_outside(neg_inf);
          r.load(ls[u], Wl.tile(s * U + u, b, i, 0));
          r.load(x[u], Wo.tile(s * U + u, b, i, dc));
        }
        r.set(mn, max(max(max(mx, ms[0]), ms[1]), ms[2]));
        r.set(sh, select(mn <= neg_inf, 0.0f, exp2(mx - mn)));                                          // what is summed shrinks by
        for (int u = 0; u < U; ++u) r.set(ms[u], select(mn <= neg_inf, 0.0f, exp2(ms[u] - mn)));  // each slice's weight
        r.set(sm, sm * sh + ms[0] * ls[0] + ms[1] * ls[1] + ms[2] * ls[2]);
        r.set(acc, acc * sh + ms[0] * x[0] + ms[1] * x[1] + ms[2] * x[2]);
        r.set(mx, mn);
      });
      // (every column tile of D computes the same LSE; the first stores it)
      r.when(eq(dc, 0), [&] {
        r.set(ls[0], (log2(sm) + mx) * 0.6931471805599453f);
        r.store(Lse.tile(b, i, 0), ls[0]);
      });
      r.set(acc, select(sm > 0.0f, acc * rcp(sm), 0.0f));
      r.store(O.tile(b, i, dc), r.convert<bf16>(acc));
    });
  });
  return k.build();
}

}  // namespace cake::kernels
