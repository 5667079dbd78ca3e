// dataflow.operand-in-flight: a FlashAttention-3 style loop issues S = Q K^T of block j and O += P V of
// block j-1 together and waits for S only (wgmma_wait(1)); writing the next P right after the softmax
// overwrites the registers the P V wgmma is still reading. Fix: wgmma_wait(0) first, then write P.
#pragma once
#include "corpus.hpp"

namespace verify_corpus::dataflow_operand_in_flight {

constexpr program build(bool fixed) {
  auto k = kernel("p_in_flight").target(sm_90a);
  auto [S, T, D] = k.dims("S", "T", "D");
  auto Q = k.input<bf16>("Q", dims(S, D));
  auto Kt = k.input<bf16>("K", dims(T, D));
  auto V = k.input<bf16>("V", dims(T, D));
  auto O = k.output<bf16>("O", dims(S, D));
  auto qt = k.parallel(tiles(S, 64));
  auto sQ = k.smem<bf16>("sQ", {64, 64}, swizzle::b128);
  auto sK = k.smem<bf16>("sK", {64, 64}, swizzle::b128);
  auto sV = k.smem<bf16>("sV", {64, 64}, swizzle::b128);
  auto qp = k.pipeline("q", stages(1)).carries(sQ);
  auto kp = k.pipeline("k", stages(2)).carries(sK);
  auto vp = k.pipeline("v", stages(2)).carries(sV);
  k.role("math", warpgroups(1), [&](role& r) {
    auto s = r.accumulator<f32>("s", {64, 64});
    auto o = r.accumulator<f32>("o", {64, 64});
    auto p = r.fragment<bf16>("p", {64, 64});
    r.for_each(qt, [&](auto q) {
      auto sq = r.wait(qp);
      r.fill(o, 0.0f);
      auto qk = [&] {
        auto sk = r.wait(kp);
        r.wgmma_fence();
        r.wgmma(s, sq[sQ], sk[sK]).over(D).overwrite();
        r.wgmma_commit();
        return sk;
      };
      auto sk0 = qk();
      r.wgmma_wait(0);
      r.release(kp, sk0);
      r.set(p, exp2(s));
      r.loop((T.extent() - 1) / 64, [&](auto) {
        auto sk = qk();
        auto sv = r.wait(vp);
        r.wgmma(o, p, sv[sV]);
        r.wgmma_commit();
        r.wgmma_wait(1);
        r.release(kp, sk);
        r.set(s, exp2(s));
        if (!fixed) r.set(p, s);  // EXPECT: dataflow.operand-in-flight
        r.wgmma_wait(0);
        r.release(vp, sv);
        if (fixed) r.set(p, s);
      });
      auto sv = r.wait(vp);
      r.wgmma_fence();
      r.wgmma(o, p, sv[sV]);
      r.wgmma_commit();
      r.wgmma_wait(0);
      r.release(vp, sv);
      r.release(qp, sq);
      r.store(O.tile(q, 0), r.convert<bf16>(o));
    });
  });
  k.role("load", warps(1), [&](role& r) {
    r.for_each(qt, [&](auto q) {
      auto a = r.acquire(qp);
      r.tma_load(a[sQ], Q.tile(q, 0));
      r.loop(tiles(T, 64), [&](auto j) {
        auto sk = r.acquire(kp);
        r.tma_load(sk[sK], Kt.tile(j, 0));
        auto sv = r.acquire(vp);
        r.tma_load(sv[sV], V.tile(j, 0));
      });
    });
  });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }

}  // namespace verify_corpus::dataflow_operand_in_flight
CAKE_VERIFY_CASE(dataflow_operand_in_flight, "dataflow.operand-in-flight")
