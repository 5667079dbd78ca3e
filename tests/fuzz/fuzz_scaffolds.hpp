#pragma once
// Whole kernels for the builder fuzz target: one drawn freely (every declaration and role drawn), and
// scaffolds of the three mainloops Cake's schedules use, whose insertion points get drawn ops
// (role_gen::maybe) and whose parameters are drawn valid and invalid alike:
//   - cp.async: warps copy K tiles into multi-stage smem, ldmatrix + mma.sync (sm_80's GEMM; every target);
//   - TMA + wgmma: a producer fills a pipeline, warpgroups wait, issue wgmma and release, optionally
//     deferred (.later(n) + release_pending) and in turns; the epilogue stores directly, through stmatrix
//     and a TMA store, or sums over the cluster (sm_90a's GEMM);
//   - tcgen05: a producer, an MMA warp into a TMEM accumulator handed over by a pipeline, an epilogue
//     warpgroup that drains it with tcgen05.ld (sm_100a's GEMM).
// A free kernel reaches odd corners; a scaffold gets past the analyzer far more often, so that the ops
// drawn into it are lowered and assembled.
#include "fuzz_generator.hpp"

namespace cake_fuzz {

inline void declare_dims(kernel_builder& k, fuzz_state& st) {
  st.dims[0] = k.dim("M");
  st.dims[1] = k.dim("N");
  st.dims[2] = k.dim("K");
}
// Tensors and a parameter that drawn ops may use: f32 in and out, i32 indices and counters.
inline void extras(input& in, kernel_builder& k, fuzz_state& st) {
  auto d = [&] { return st.dims[in.pick(3)]; };
  if (in.chance(3)) st.fins.push_back(k.input<f32>("F", dims(d(), d())));
  if (in.chance(2)) st.fouts.push_back(k.output<f32>(in.pick(2) ? "G" : "H", dims(d(), d())));
  if (in.chance(3)) st.iins.push_back(k.input<i32>("I", in.pick(3) ? dims(d(), d()) : dims(d())));
  if (in.chance(3)) st.iouts.push_back(k.output<i32>("J", dims(d(), d())));
  if (in.chance(4)) st.params.push_back(k.param<f32>("scale"));
}

// A kernel drawn freely: target, launch, dims, tensors, the parallel space, resources; then the roles.
inline program free_kernel(input& in) {
  constexpr target_id targets[] = {target_id::sm_90a, target_id::sm_80, target_id::sm_100a};
  auto k = kernel("fuzz").target(in.from(targets));
  fuzz_state st;
  st.k = &k;
  st.target = k.p.target;
  if (in.chance(4)) k.programmatic_launch();
  if (st.target != target_id::sm_80 ? in.chance(4) : in.chance(16)) {
    st.cluster = 1 << in.pick(4);
    k.cluster(st.cluster);
  }
  if (in.chance(4)) k.persistent();
  if (in.chance(12)) k.manual_barrier_init();
  declare_dims(k, st);
  auto d = [&] { return st.dims[in.pick(3)]; };
  const char* in_names[] = {"A", "B", "C"};
  const char* out_names[] = {"D", "E"};
  const int n_in = in.pick(4), n_out = in.pick(3);
  for (int i = 0; i < n_in; ++i) st.ins.push_back(k.input<bf16>(in_names[i], dims(d(), d())));
  for (int i = 0; i < n_out; ++i) st.outs.push_back(k.output<bf16>(out_names[i], dims(d(), d())));
  extras(in, k, st);
  if (in.pick(3)) {
    st.walk = in.chance(4) ? k.parallel(split(1 + in.pick(4)), tiles(d(), in.from(sizes) + 1))
                           : k.parallel(tiles(d(), in.from(sizes) + 1), tiles(d(), in.from(sizes) + 1));
    st.has_space = true;
  }
  constexpr swizzle swz[] = {swizzle::b128, swizzle::none, swizzle::b64, swizzle::b32};
  const char* smem_names[] = {"s0", "s1", "s2", "s3"};
  const int n_smem = in.pick(5);
  for (int i = 0; i < n_smem; ++i) {
    // Half the regions as schedules declare them (a row of the swizzle span), half drawn freely.
    shape2 s{in.from(sizes), in.from(sizes)};
    swizzle w = in.from(swz);
    if (in.pick(2)) {
      constexpr int rows[] = {64, 128, 16, 32, 256, 8};
      const int span = in.pick(4);  // none, b32, b64, b128: 8, 16, 32, 64 bf16 columns
      s = {in.from(rows), 8 << span};
      w = span == 0 ? swizzle::none : span == 1 ? swizzle::b32 : span == 2 ? swizzle::b64 : swizzle::b128;
      if (span == 0 && in.pick(2)) s.cols = 8 * (1 + in.pick(16));
    }
    st.smem.push_back(in.chance(4) ? k.smem<bf16>(smem_names[i], s, w, copies(1 + in.pick(4))) : k.smem<bf16>(smem_names[i], s, w));
  }
  if (st.target == target_id::sm_100a ? in.chance(2) : in.chance(16)) st.tmem.push_back(k.tmem("t0", columns(in.from(sizes))));
  const char* pipe_names[] = {"p0", "p1"};
  const int n_pipes = (st.smem.empty() && st.tmem.empty()) || (st.target == target_id::sm_80 && !in.chance(8)) ? 0 : in.pick(3);
  for (int i = 0; i < n_pipes; ++i) {
    auto b = k.pipeline(pipe_names[i], stages(in.pick(18)));
    auto s = [&] { return in.any(st.smem); };
    if (st.smem.empty()) st.pipes.push_back(b.carries(in.any(st.tmem)));
    else if (!st.tmem.empty() && in.chance(3)) st.pipes.push_back(in.pick(2) ? b.carries(in.any(st.tmem)) : b.carries(s(), in.any(st.tmem)));
    else st.pipes.push_back(in.pick(2) && st.smem.size() >= 2 ? b.carries(s(), s()) : b.carries(s()));
  }
  if (in.pick(2)) st.named.push_back(in.chance(3) ? k.named_barrier("nb", per_unit) : k.named_barrier("nb"));
  if (in.chance(4)) st.turns.push_back(k.turns("order"));
  if (in.pick(2)) st.mbars.push_back(in.chance(4) ? k.mbarrier("mb", arrivals(in.pick(3)), 1 + in.pick(2)) : k.mbarrier("mb"));
  const char* role_names[] = {"r0", "r1", "r2"};
  const int n_roles = 1 + in.pick(3);
  constexpr int reg_counts[] = {40, 232, 24, 256, 7};
  for (int ri = 0; ri < n_roles; ++ri) {
    auto run = [&](role& r) {
      role_gen g{in, st, r, {}};
      if (st.has_space && in.pick(4)) {
        auto b = [&](auto i, auto j) { g.body(0, i, j); };
        if (in.chance(6)) r.for_each(alternating(st.walk), b);
        else r.for_each(st.walk, b);
        if (in.chance(3)) g.body(2, index_expr(0), index_expr(0));  // after the walk (a drain, a free)
      } else {
        g.body(0, index_expr(0), index_expr(0));
      }
    };
    const units_t u = in.pick(2) ? warpgroups(1 + in.pick(3)) : warps(1 + in.pick(5));
    if (u.unit == role_unit::warpgroup && st.target != target_id::sm_80 ? in.chance(3) : in.chance(12)) k.role(role_names[ri], u, regs(in.from(reg_counts)), run);
    else k.role(role_names[ri], u, run);
  }
  return k.build();
}


// cp.async mainloop (sm_80's GEMM): every warp copies and computes; stages - 1 K tiles in flight.
inline program cp_async_kernel(input& in) {
  constexpr target_id targets[] = {target_id::sm_80, target_id::sm_80, target_id::sm_90a, target_id::sm_100a};
  auto k = kernel("fuzz_cp").target(in.from(targets));
  fuzz_state st;
  st.k = &k;
  st.target = k.p.target;
  declare_dims(k, st);
  auto [M, N, K] = st.dims;
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  st.ins = {A, B};
  st.outs = {D};
  extras(in, k, st);
  constexpr int blocks[] = {64, 128, 32, 64, 16, 48};
  const int wm = 1 << in.pick(2), wn = 1 << in.pick(2), bm = in.from(blocks), bn = in.from(blocks), n_stages = 2 + in.pick(3);
  st.walk = k.parallel(tiles(M, bm), tiles(N, bn));
  st.has_space = true;
  auto sA = k.smem<bf16>("sA", {bm, 64}, swizzle::b128, copies(n_stages));
  auto sB = k.smem<bf16>("sB", {bn, 64}, swizzle::b128, copies(n_stages));
  st.smem = {sA, sB};
  auto cta = k.named_barrier("cta");
  st.named = {cta};
  const int lookahead = n_stages - 1;
  const bool reg_a = in.chance(3);  // A read once per K tile with ldmatrix, then mma.sync from registers
  k.role("mma", warps(wm * wn), [&](role& r) {
    role_gen g{in, st, r, {}};
    auto acc = r.accumulator<f32>("acc", {bm / wm, bn / wn});
    auto a = r.fragment<bf16>("a", {bm / wm, 64});
    g.rs.regs.push_back(acc);
    g.rs.halves.push_back(a);
    auto wr = r.warp() / wn, wc = r.warp() % wn;
    r.for_each(st.walk, [&](auto m, auto n) {
      r.zero(acc);
      g.maybe(1, m, n);
      r.for_range(lookahead, [&](auto s) {
        r.cp_async(sA.stage(s), A.tile(m, s));
        r.cp_async(sB.stage(s), B.tile(n, s));
        r.cp_async_commit();
      });
      r.loop(tiles(K, 64), [&](auto kt) {
        r.cp_async_wait(lookahead - 1);
        r.sync(cta);
        g.maybe(2, m, kt);
        if (reg_a) {
          r.ldmatrix(a, sA.stage(kt).rows(wr, wm));
          r.mma_sync(acc, a, sB.stage(kt).rows(wc, wn));
        } else {
          r.mma_sync(acc, sA.stage(kt).rows(wr, wm), sB.stage(kt).rows(wc, wn));
        }
        r.cp_async(sA.stage(kt + lookahead), A.tile(m, kt + lookahead));
        r.cp_async(sB.stage(kt + lookahead), B.tile(n, kt + lookahead));
        r.cp_async_commit();
        g.maybe(2, m, kt);
      });
      r.cp_async_wait(0);
      r.sync(cta);
      g.maybe(1, m, n);
      if (!st.fouts.empty() && in.chance(3)) r.atomic_add(st.fouts[0].tile(m * wm + wr, n * wn + wc), acc);
      else r.store(D.tile(m * wm + wr, n * wn + wc), r.convert<bf16>(acc));
      g.maybe(1, m, n);
    });
  });
  if (in.chance(4)) k.role("other", warps(1), [&](role& r) { role_gen{in, st, r, {}}.body(0, index_expr(0), index_expr(0)); });
  return k.build();
}

// TMA + wgmma (sm_90a's GEMM): a producer fills the pipeline, consumer warpgroups release the stages, the
// epilogue stores from registers, through stmatrix and a TMA store, or after a cluster sum.
inline program wgmma_kernel(input& in) {
  constexpr target_id targets[] = {target_id::sm_90a, target_id::sm_90a, target_id::sm_90a, target_id::sm_100a};
  auto k = kernel("fuzz_wg").target(in.from(targets));
  fuzz_state st;
  st.k = &k;
  st.target = k.p.target;
  if (in.chance(3)) {
    st.cluster = 2;
    k.cluster(2);
  }
  if (in.pick(2)) k.persistent();
  declare_dims(k, st);
  auto [M, N, K] = st.dims;
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  st.ins = {A, B};
  st.outs = {D};
  extras(in, k, st);
  constexpr int widths[] = {64, 128, 256, 64, 32, 192, 96};
  const int wgs = 1 + in.pick(2), bn = in.from(widths), n_stages = 1 + in.pick(5), in_flight = in.pick(3) == 0 ? 1 : 0, chunks = bn / 64 > 0 ? bn / 64 : 1;
  const int bm = 64 * wgs * (in.chance(4) ? 2 : 1);
  st.walk = k.parallel(tiles(M, bm), tiles(N, bn));
  st.has_space = true;
  auto sA = k.smem<bf16>("sA", {bm, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {bn, 64}, swizzle::b128);
  auto sD = k.smem<bf16>("sD", {bm, 64}, swizzle::b128);
  st.smem = {sA, sB, sD};
  auto ab = k.pipeline("ab", stages(n_stages)).carries(sA, sB);
  st.pipes.push_back(ab);
  auto epi = k.named_barrier("epi", per_unit);
  st.named = {epi};
  const bool turns = wgs > 1 && in.chance(3);
  if (turns) st.turns = {k.turns("mma")};
  const bool producer_wg = in.pick(2);
  auto producer = [&](role& r) {
    role_gen g{in, st, r, {}};
    r.for_each(st.walk, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        g.rs.slots.push_back(s);
        r.tma_load(s[sA], A.tile(m, kt));
        auto b = r.tma_load(s[sB], B.tile(n, kt));
        if (st.cluster > 1 && in.pick(2)) b.multicast();
        g.maybe(2, m, kt);
      });
    });
  };
  // A warpgroup role starts on a multiple of 4 warps: a one-warp producer goes after the consumers.
  if (producer_wg) k.role("producer", warpgroups(1), regs(40), producer);
  auto consumer = [&](role& r) {
    role_gen g{in, st, r, {}};
    auto acc = r.accumulator<f32>("acc", {bm / wgs, bn});
    g.rs.regs.push_back(acc);
    r.for_each(st.walk, [&](auto m, auto n) {
      const index_expr rows = m * wgs + r.warpgroup();
      if (turns) r.take_turn(st.turns[0]);
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        g.rs.slots.push_back(s);
        g.maybe(2, m, kt);
        r.wgmma_fence();
        r.wgmma(acc, s[sA].rows(r.warpgroup(), wgs), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(in_flight);
        if (in_flight) r.release(ab, s).later(in_flight);
        else r.release(ab, s);
        g.rs.slots.pop_back();
      });
      if (turns) r.pass_turn(st.turns[0]);
      if (in_flight) {
        r.wgmma_wait(0);
        r.release_pending(ab);
      }
      g.maybe(1, m, n);
      switch (in.pick(3)) {
        case 0: r.store(D.tile(rows, n), r.convert<bf16>(acc)); break;
        case 1: {  // stmatrix + TMA store, 64 columns at a time
          auto out = r.convert<bf16>(acc);
          r.for_range(chunks, [&](auto ch) {
            auto buf = sD.rows(r.warpgroup(), wgs);
            r.bulk_wait_read(0);
            r.sync(epi);
            r.stmatrix(buf, out.cols(ch, chunks));
            r.fence_proxy_async();
            r.sync(epi);
            r.tma_store(D.tile(rows, n * chunks + ch), buf);
            r.bulk_commit();
          });
          r.bulk_wait(0);
          break;
        }
        default:
          if (st.cluster > 1) {
            r.cluster_sum(acc);
            r.when(eq(r.cluster_rank(), 0), [&] { r.store(D.tile(rows, n), r.convert<bf16>(acc)); });
          } else {
            r.row_sum(r.row_vector<f32>("sum", bm / wgs), acc);
            r.store(D.tile(rows, n), r.convert<bf16>(acc));
          }
          break;
      }
      g.maybe(1, m, n);
    });
  };
  if (producer_wg) {
    k.role("consumer", warpgroups(wgs), regs(wgs == 1 ? 232 : 160 + 8 * in.pick(10)), consumer);
  } else {
    k.role("consumer", warpgroups(wgs), consumer);
    k.role("producer", warps(1), producer);
  }
  return k.build();
}

// tcgen05 (sm_100a's GEMM): an epilogue warpgroup drains a TMEM accumulator that an MMA warp fills from a
// TMA pipeline; the accumulator is handed over and back by a one-stage pipeline.
inline program tcgen05_kernel(input& in) {
  constexpr target_id targets[] = {target_id::sm_100a, target_id::sm_100a, target_id::sm_100a, target_id::sm_90a};
  auto k = kernel("fuzz_tc").target(in.from(targets));
  fuzz_state st;
  st.k = &k;
  st.target = k.p.target;
  if (in.pick(2)) k.persistent();
  declare_dims(k, st);
  auto [M, N, K] = st.dims;
  auto A = k.input<bf16>("A", dims(M, K));
  auto B = k.input<bf16>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  st.ins = {A, B};
  st.outs = {D};
  extras(in, k, st);
  constexpr int widths[] = {64, 128, 256, 32, 64, 16, 200};
  constexpr int drains[] = {32, 16, 64, 8, 32};
  const int bm = in.chance(4) ? 64 : 128, bn = in.from(widths), drain = in.from(drains), n_stages = 1 + in.pick(5);
  const int chunks = bn / drain > 0 ? bn / drain : 1;
  st.walk = k.parallel(tiles(M, bm), tiles(N, bn));
  st.has_space = true;
  auto sA = k.smem<bf16>("sA", {bm, 64}, swizzle::b128);
  auto sB = k.smem<bf16>("sB", {bn, 64}, swizzle::b128);
  auto tacc = k.tmem("acc", columns(bn));
  st.smem = {sA, sB};
  st.tmem = {tacc};
  auto ab = k.pipeline("ab", stages(n_stages)).carries(sA, sB);
  auto accp = k.pipeline("accp", stages(1 + (in.chance(4) ? 1 : 0))).carries(tacc);
  st.pipes.push_back(ab);
  st.pipes.push_back(accp);
  k.role("epilogue", warpgroups(1), [&](role& r) {
    role_gen g{in, st, r, {}};
    auto frag = r.fragment<f32>("frag", {bm, drain});
    g.rs.regs.push_back(frag);
    r.for_each(st.walk, [&](auto m, auto n) {
      auto a = r.wait(accp);
      g.rs.slots.push_back(a);
      r.tcgen05_fence_after();
      r.for_range(chunks, [&](auto ch) {
        r.tmem_load(frag, a[tacc].cols(ch, chunks));
        g.maybe(2, m, ch);
        r.store(D.tile(m, n * chunks + ch), r.convert<bf16>(frag));
      });
      g.maybe(1, m, n);
      r.tcgen05_fence_before();
      r.release(accp, a);
      g.rs.slots.pop_back();
    });
  });
  k.role("producer", warps(1), [&](role& r) {
    role_gen g{in, st, r, {}};
    r.for_each(st.walk, [&](auto m, auto n) {
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.acquire(ab);
        r.tma_load(s[sA], A.tile(m, kt));
        r.tma_load(s[sB], B.tile(n, kt));
        g.maybe(2, m, kt);
      });
    });
  });
  k.role("mma", warps(1), [&](role& r) {
    role_gen g{in, st, r, {}};
    r.tmem_alloc(tacc);
    r.for_each(st.walk, [&](auto m, auto n) {
      auto a = r.acquire(accp);
      r.tcgen05_fence_after();
      r.loop(tiles(K, 64), [&](auto kt) {
        auto s = r.wait(ab);
        r.tcgen05_fence_after();
        r.tcgen05_mma(a[tacc], s[sA], s[sB]).overwrite_on_first(kt);
        g.maybe(2, m, kt);
        r.release(ab, s);
      });
      r.commit(accp, a);
      g.maybe(1, m, n);
    });
    r.acquire(accp);
    r.tmem_dealloc(tacc);
  });
  return k.build();
}


// Register compute (norms, k-means, k-NN): tiles loaded from global memory in the blocked layout, reduced by
// rows and columns, scanned, folded into top-k lists, scattered and counted; on sm_100a sometimes through
// tensor memory and back, elsewhere sometimes through shared memory.
inline program compute_kernel(input& in) {
  constexpr target_id targets[] = {target_id::sm_80, target_id::sm_90a, target_id::sm_100a};
  auto k = kernel("fuzz_rc").target(in.from(targets));
  fuzz_state st;
  st.k = &k;
  st.target = k.p.target;
  declare_dims(k, st);
  auto [M, N, K] = st.dims;
  auto X = k.input<f32>("X", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  auto I = k.input<i32>("I", dims(M, K));
  auto C = k.output<i32>("C", dims(K, N));
  st.fins = {X};
  st.fouts = {Y};
  st.iins = {I};
  st.iouts = {C};
  if (in.chance(3)) st.params.push_back(k.param<f32>("scale"));
  constexpr int rows_of[] = {8, 16, 32, 64, 128, 4, 1};
  constexpr int cols_of[] = {64, 32, 128, 16, 8, 100, 256};
  const bool wg = in.chance(3);
  const int units = 1 + in.pick(wg ? 2 : 4), rows = in.from(rows_of), cols = in.from(cols_of);
  st.walk = k.parallel(tiles(M, rows * units), tiles(N, cols));
  st.has_space = true;
  const bool via_tmem = st.target == target_id::sm_100a && in.chance(3), via_smem = in.chance(4);
  smem_tile<f32> sX{};
  if (via_smem) sX = k.smem<f32>("sX", {rows * units, cols});
  tmem_tile t{};
  named_barrier_ref allocated{}, drained{};
  if (via_tmem) {
    t = k.tmem("t", columns(cols));
    st.tmem = {t};
    allocated = k.named_barrier("allocated");
    drained = k.named_barrier("drained");
  }
  auto cta = k.named_barrier("cta");
  st.named = {cta};
  auto body = [&](role& r) {
    role_gen g{in, st, r, {}};
    auto x = r.fragment<f32>("x", {rows, cols});
    auto v = r.row_vector<f32>("v", rows);
    auto ix = r.row_vector<i32>("ix", rows);
    g.rs.regs = {x, v};
    g.rs.ints = {ix};
    if (via_tmem) {
      r.sync(allocated);
      r.tcgen05_fence_after();
    }
    r.for_each(st.walk, [&](auto m, auto n) {
      const index_expr row = wg ? m * units + r.warpgroup() : m * units + r.warp();
      r.load(x, X.tile(row, n)).fill_outside(in.pick(2) ? 0.0f : pos_inf);
      g.maybe(1, m, n);
      switch (in.pick(10)) {
        case 0: r.row_sum(v, x * x); break;
        case 1: r.row_argmin(v, ix, x, n * cols).accumulate(); break;
        case 2: {
          auto op = r.row_argmax(v, ix, x - 1.0f, n * cols).accumulate();
          if (in.pick(2)) op.lazy_index();
          break;
        }
        case 3: r.row_scan(x, x); break;
        case 4: r.col_sum(r.col_vector<f32>("cs", cols), x); break;
        case 5: {
          auto top = in.pick(2) ? r.topk("top", rows, 1 + in.pick(16)) : r.topk_largest("top", rows, in.from(sizes));
          r.topk_init(top);
          if (in.pick(2)) r.row_topk(top, x, n * cols);
          else r.row_topk(top, x + v, n * cols);
          r.topk_store(Y.tile(row, 0), C.tile(row, 0), top);
          break;
        }
        case 6:
          r.load(ix, I.tile(row, 0)).fill_outside(-1.0f);
          r.scatter_add(Y.tile(0, n), x, ix);
          break;
        case 7: {
          auto pos = r.row_vector<i32>("pos", rows);
          r.load(ix, I.tile(row, 0));
          r.fetch_add(pos, C.tile(0, 0), ix);
          r.scatter_store(Y.tile(0, n), x, pos);
          break;
        }
        case 8:
          if (via_smem) {
            r.sync(cta);
            r.store(sX.rows(wg ? r.warpgroup() : r.warp(), units), x);
            r.sync(cta);
            r.load(x, sX.rows(wg ? r.warpgroup() : r.warp(), units));
          }
          break;
        default: r.atomic_add(Y.tile(row, n), x); break;
      }
      if (via_tmem && in.pick(2)) {  // through tensor memory and back
        r.tmem_store(in.pick(4) ? t : t.cols(0, 2), x);
        r.tmem_load(x, t);
      }
      g.maybe(1, m, n);
      r.store(Y.tile(row, n), x);
    });
    if (via_tmem) {
      r.tcgen05_fence_before();
      r.sync(drained);
    }
  };
  if (wg) k.role("rc", warpgroups(units), body);
  else k.role("rc", warps(units), body);
  if (via_tmem)
    k.role("alloc", warps(1), [&](role& r) {
      r.tmem_alloc(t);
      r.tcgen05_fence_before();
      r.sync(allocated);
      r.sync(drained);
      r.tcgen05_fence_after();
      r.tmem_dealloc(t);
    });
  return k.build();
}

// Hand-written synchronization: an mbarrier a producer arms with the bytes of its TMA load (or plain
// arrivals, or a tcgen05.commit), a consumer waits on; barriers initialized by Cake or by the schedule
// (init, fence, cluster sync); named-barrier hand-offs; ordered sections of an alternating walk.
inline program barrier_kernel(input& in) {
  constexpr target_id targets[] = {target_id::sm_90a, target_id::sm_100a, target_id::sm_80};
  auto k = kernel("fuzz_sync").target(in.from(targets));
  fuzz_state st;
  st.k = &k;
  st.target = k.p.target;
  const bool manual = in.chance(3);
  if (manual) k.manual_barrier_init();
  if (in.chance(4)) {
    st.cluster = 2;
    k.cluster(2);
  }
  declare_dims(k, st);
  auto [M, N, K] = st.dims;
  auto A = k.input<bf16>("A", dims(M, K));
  auto D = k.output<bf16>("D", dims(M, K));
  st.ins = {A};
  st.outs = {D};
  extras(in, k, st);
  constexpr int rows_of[] = {64, 128, 32, 16};
  const int rows = in.from(rows_of);
  st.walk = k.parallel(tiles(M, rows), tiles(K, 64));
  st.has_space = true;
  auto sA = k.smem<bf16>("sA", {rows, 64}, swizzle::b128);
  st.smem = {sA};
  auto full = k.mbarrier("full", arrivals(manual || in.chance(4) ? 1 : 0));
  auto empty = k.mbarrier("empty");
  st.mbars = {full, empty};
  auto hand = k.named_barrier("hand");
  auto order = k.turns("order");
  st.named = {hand};
  st.turns = {order};
  const int form = in.pick(4);  // 0: TMA + expect_tx, 1: plain arrivals, 2: named-barrier hand-off, 3: turns
  const bool cluster_sync = manual && in.pick(2), split_tx = in.pick(2);
  k.role("producer", warps(1), [&](role& r) {
    role_gen g{in, st, r, {}};
    if (manual) {
      r.init(full, 1);
      r.init(empty, 1);
      r.fence_mbarrier_init();
      if (cluster_sync) r.cluster_sync();
      else r.sync(hand);
    }
    r.for_each(st.walk, [&](auto m, auto n) {
      g.maybe(2, m, n);
      if (form == 0) {
        if (split_tx) {
          r.expect_tx(full, rows * 64 * 2);
          r.tma_load(sA, A.tile(m, n), full);
          r.arrive(full);
        } else {
          r.arrive_expect_tx(full, rows * 64 * 2);
          r.tma_load(sA, A.tile(m, n), full);
        }
      } else if (form == 1) {
        r.arrive(full);
      } else {
        r.arrive(hand);
      }
      if (form <= 1) r.wait(empty);  // the consumer is done with the stage
    });
  });
  k.role("consumer", warps(1 + in.pick(2)), [&](role& r) {
    role_gen g{in, st, r, {}};
    auto x = r.fragment<f32>("x", {rows, 64});
    g.rs.regs = {x};
    if (manual && cluster_sync) r.cluster_sync();
    else if (manual) r.sync(hand);
    auto each = [&](auto m, auto n) {
      if (form <= 1) r.wait(full);
      else if (form == 2) r.sync(hand);
      g.maybe(2, m, n);
      if (form == 3) r.take_turn(order);
      if (form == 0) r.load(x, sA);
      else r.fill(x, 1.0f);
      r.store(D.tile(m, n), r.convert<bf16>(x));
      if (form == 3) r.pass_turn(order);
      if (form <= 1) r.arrive(empty);
    };
    if (form == 3) r.for_each(alternating(st.walk), each);
    else r.for_each(st.walk, each);
  });
  return k.build();
}

inline program generate(input& in) {
  switch (in.pick(7)) {
    case 0: return cp_async_kernel(in);
    case 1: return wgmma_kernel(in);
    case 2: return tcgen05_kernel(in);
    case 3: return compute_kernel(in);
    case 4: return barrier_kernel(in);
    default: return free_kernel(in);
  }
}

}  // namespace cake_fuzz
