#pragma once
// The generator of the builder fuzz target (tests/fuzz/fuzz_builder.cpp): bytes become a Program built
// through the public builder. Every choice reads one byte (past the end every choice is 0, so a program
// is always finite). Declarations come first (declare), then each role's body (role_gen::body), which
// draws ops by family: pipelines, TMA, MMAs, register compute, reductions and top-k, global memory
// (loads, stores, atomics, scatters, counters), shared memory (cp.async, ldmatrix, stmatrix), index values,
// synchronization (named barriers, turns, mbarriers, cluster barriers, fences, PDL), tensor memory and
// tcgen05, cluster sums, and control (loops, conditions, the next point, setmaxnreg). Shapes, counts,
// targets and placements are drawn valid and invalid alike: what matters is that every outcome is a
// diagnostic or lowered source that NVRTC assembles.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cake/cake.hpp>

namespace cake_fuzz {

using namespace cake;

// Reads bytes as small choices; past the end every choice is 0 (a finite program).
struct input {
  const std::uint8_t* data;
  std::size_t size, at = 0;
  int pick(int n) { return n <= 1 ? 0 : (at < size ? data[at++] : 0) % n; }
  bool chance(int n) { return pick(n) == 0; }  // one in n
  template <class T, std::size_t N>
  T from(const T (&options)[N]) {
    return options[pick(static_cast<int>(N))];
  }
  template <class V>
  auto& any(V& v) {
    return v[static_cast<std::size_t>(pick(static_cast<int>(v.size())))];
  }
};

// Sizes: the first ones are what schedules use, the rest are edge cases and plain wrong.
constexpr int sizes[] = {64, 128, 256, 16, 8, 1, 0, 7, 192, 1000};
constexpr int mma_rows[] = {16, 64, 32, 128, 8, 48};
constexpr int mma_cols[] = {64, 8, 16, 32, 128, 256, 24, 12};

// What the kernel declared.
struct fuzz_state {
  kernel_builder* k = nullptr;
  target_id target = target_id::sm_90a;
  int cluster = 1;
  std::vector<smem_tile<bf16>> smem;
  std::vector<tmem_tile> tmem;
  std::vector<pipeline_ref> pipes;
  std::vector<tensor<bf16>> ins, outs;    // bf16 tensors
  std::vector<tensor<f32>> fins, fouts;   // f32 tensors: atomics, scatters, cluster sums, top-k values
  std::vector<tensor<i32>> iins, iouts;   // i32 tensors: indices, counters, top-k indices
  std::vector<named_barrier_ref> named, turns;
  std::vector<mbarrier_ref> mbars;
  std::vector<scalar<f32>> params;
  dim_ref dims[3]{};
  cake::space<2> walk{};
  bool has_space = false;

  const reg_decl& reg(std::uint8_t i) const { return k->p.regs[i]; }
};

// A role's register tiles, slots and index values (shared by the nested bodies of the role).
struct role_state {
  std::vector<slot> slots;
  std::vector<reg_tile<f32>> regs;     // f32 tiles and vectors
  std::vector<reg_tile<bf16>> halves;  // 16-bit tiles: ldmatrix, stmatrix, mma.sync / wgmma A from registers
  std::vector<reg_tile<i32>> ints;     // i32 tiles and row vectors: indices and slots
  std::vector<reg_tile<f32>> topks;    // top-k states
  std::vector<index_expr> values;      // index values (read_index, let_index, count_arrival)
};

struct role_gen {
  input& in;
  fuzz_state& st;
  role& r;
  role_state rs;
  int loops = 0;  // open loops (a loop variable for overwrite_on_first)
  index_expr loop_var{};

  // ---- small draws -----------------------------------------------------------------------------------
  // Most draws of an op the target lacks are skipped (one in eight still goes in: the invalid use).
  bool native(unsigned on) { return (target_bit(st.target) & on) != 0 || in.chance(8); }
  bool warpgroup_role() const { return r.decl().unit == role_unit::warpgroup; }
  // A coordinate: the walk's indices, a loop variable, the unit, an index value, a constant.
  index_expr coord(index_expr i0, index_expr i1) {
    switch (in.pick(8)) {
      case 0: return i0;
      case 1: return i1;
      case 2: return i0 * 2 + r.warp();
      case 3: return i1 * 4 + r.warpgroup();
      case 4: return rs.values.empty() ? index_expr(in.pick(3)) : in.any(rs.values);
      case 5: return index_expr(in.pick(4));
      case 6: return loops ? loop_var : i1;
      default: return i0 + 1;
    }
  }
  shape2 tile_shape() {
    if (in.chance(3)) return {in.from(sizes), in.from(sizes)};
    return {in.from(mma_rows), in.from(mma_cols)};
  }
  // An f32 tile, preferably of the shape of `like` (or a vector of its rows / columns).
  reg_tile<f32> f32_like(reg_tile<f32> like) {
    const auto& d = st.reg(like.o.index);
    for (int tries = 0; tries < 3 && !rs.regs.empty(); ++tries) {
      auto t = in.any(rs.regs);
      const auto& e = st.reg(t.o.index);
      if ((e.rows == d.rows && (e.cols == d.cols || e.cols == 1)) || (e.rows == 1 && e.cols == d.cols)) return t;
    }
    return rs.regs.empty() ? like : in.any(rs.regs);
  }
  // A register expression of f32 tiles, scalars, immediates and indices (at most `depth` levels).
  rx expr(reg_tile<f32> dst, index_expr i0, int depth) {
    if (depth <= 0 || in.chance(3)) {
      switch (in.pick(6)) {
        case 0: return st.params.empty() ? rx(2.0f) : rx(in.any(st.params));
        case 1: return rx(0.25f * static_cast<float>(in.pick(9)) - 1.0f);
        case 2: return rx(i0 * 64 + col());
        default: return rx(f32_like(dst));
      }
    }
    const rx a = expr(dst, i0, depth - 1);
    switch (in.pick(24)) {
      case 0: return a + expr(dst, i0, depth - 1);
      case 1: return a - expr(dst, i0, depth - 1);
      case 2: return a * expr(dst, i0, depth - 1);
      case 3: return a / expr(dst, i0, depth - 1);
      case 4: return max(a, expr(dst, i0, depth - 1));
      case 5: return min(a, expr(dst, i0, depth - 1));
      case 6: return fma(a, expr(dst, i0, depth - 1), 1.0f);
      case 7: return exp2(a);
      case 8: return exp2(a, fma_share{in.pick(3), 1 + in.pick(4)});
      case 9: return log2(a);
      case 10: return rcp(a);
      case 11: return tanh(a);
      case 12: return erf(a);
      case 13: return in.pick(2) ? gelu(a) : gelu_erf(a);
      case 14: return silu(a);
      case 15: return sigmoid(a);
      case 16: return in.pick(2) ? sqrt(abs(a)) : rsqrt(a);
      case 17: return in.pick(2) ? exp(a) : log(a);
      case 18: return in.pick(2) ? relu(a) : -a;
      case 19: return in.pick(2) ? round_bf16(a) : round_f16(a);
      case 20: return select(row() > col(), neg_inf, a);
      case 21: return select(a < expr(dst, i0, depth - 1), a, pos_inf);
      case 22: return select(eq(i0, in.pick(3)) || !(a >= 0.0f), 0.0f, a);
      default: return select(i0 * 64 + col() < st.dims[in.pick(3)].extent(), a, 0.0f);
    }
  }
  template <class T>
  global_tile<T> gtile(const tensor<T>& t, index_expr i0, index_expr i1) {
    auto g = t.tile(coord(i0, i1), coord(i0, i1));
    if (in.chance(8)) g = g.limit(in.pick(3), st.dims[in.pick(3)].extent());
    if (in.chance(10)) g = g.elements_at(in.pick(3));
    return g;
  }
  // An smem operand: a region, a stage of it (a slot's, or an index), a part of it. A region of several
  // stages is mostly given a stage (the bare region is the invalid use).
  smem_tile<bf16> region(index_expr i0, index_expr i1) {
    auto s = in.any(st.smem);
    if (st.k->p.smem[s.o.index].stages > 1 && !in.chance(8)) {
      for (auto it = rs.slots.rbegin(); it != rs.slots.rend(); ++it)
        if (in.pick(3) && carries(it->pipeline, s.o.index)) return (*it)[s];
      s = s.stage(coord(i0, i1));
    }
    switch (in.pick(6)) {
      case 0: return s.stage(coord(i0, i1));
      case 1: return s.rows(r.warp(), 1 << in.pick(4));
      case 2: return s.rows(r.warpgroup(), 1 + in.pick(2));
      case 3:
        if (!rs.slots.empty()) return in.any(rs.slots)[s];
        return s;
      default: return s;
    }
  }
  bool carries(std::uint8_t pipe, std::uint8_t smem) const {
    const auto& p = st.k->p.pipelines[pipe];
    for (int i = 0; i < p.carried_count; ++i)
      if (!p.carried_tmem[i] && p.carried[i] == smem) return true;
    return false;
  }
  reg_tile<f32> new_f32() {
    const shape2 s = tile_shape();
    auto t = in.pick(2) ? r.accumulator<f32>("acc", s) : r.fragment<f32>("frag", s);
    rs.regs.push_back(t);
    return t;
  }

  // ---- families --------------------------------------------------------------------------------------
  void pipelines(index_expr i0, index_expr i1) {
    if (st.pipes.empty() || !native(on_sm90a | on_sm100a)) return;
    auto p = in.any(st.pipes);
    switch (in.pick(7)) {
      case 0: rs.slots.push_back(r.acquire(p)); break;
      case 1: rs.slots.push_back(r.wait(p)); break;
      case 2: rs.slots.push_back(r.held(p)); break;
      case 3:
      case 4:
        if (!rs.slots.empty()) {
          auto op = r.release(p, in.any(rs.slots));
          if (in.chance(3)) op.later(in.pick(6));
        }
        break;
      case 5:
        if (!rs.slots.empty()) r.commit(p, in.any(rs.slots));
        break;
      default: r.release_pending(p); break;
    }
    (void)i0, (void)i1;
  }

  void tma(index_expr i0, index_expr i1) {
    if (!native(on_sm90a | on_sm100a)) return;
    switch (in.pick(4)) {
      case 0:
      case 1:
        if (!st.smem.empty() && !st.ins.empty()) {
          auto op = in.chance(4) && !st.mbars.empty() ? r.tma_load(region(i0, i1), gtile(in.any(st.ins), i0, i1), in.any(st.mbars))
                                                       : r.tma_load(region(i0, i1), gtile(in.any(st.ins), i0, i1));
          if (in.chance(4)) op.multicast();
          if (in.chance(6)) op.rest_unused();
          if (in.chance(8)) op.fill_outside(in.pick(2) ? nan_value : 0.0f);
        }
        break;
      case 2:
        if (!st.smem.empty() && !st.outs.empty()) {
          if (in.pick(3)) r.fence_proxy_async();
          r.tma_store(gtile(in.any(st.outs), i0, i1), region(i0, i1));
          r.bulk_commit();
          if (in.pick(2)) r.bulk_wait(in.pick(2));
          else r.bulk_wait_read(in.pick(3));
        }
        break;
      default:
        if (!st.ins.empty()) r.prefetch_tensor_map(in.any(st.ins));
        break;
    }
  }

  void mma(index_expr i0, index_expr i1) {
    if (st.smem.empty()) return;
    // The target's own MMA most of the time (mma.sync everywhere), any other one in a few draws.
    int kind = in.pick(8);
    if (kind < 6) kind = st.target == target_id::sm_80 || kind == 5 || (st.target == target_id::sm_90a && !warpgroup_role()) ? 2 : st.target == target_id::sm_90a ? 0 : 4;
    switch (kind) {
      case 0:
      case 1: {  // wgmma: A from smem or a 16-bit register tile, B from smem
        if (rs.regs.empty()) new_f32();
        auto acc = in.any(rs.regs);
        if (in.pick(3)) r.wgmma_fence();
        auto op = !rs.halves.empty() && in.chance(3) ? r.wgmma(in.pick(3) ? acc : acc.cols(in.pick(2), 2), in.any(rs.halves), region(i0, i1))
                                                     : r.wgmma(acc, region(i0, i1), region(i0, i1));
        modifiers(op);
        if (in.pick(4)) r.wgmma_commit();
        if (in.pick(3)) r.wgmma_wait(in.pick(3));
        break;
      }
      case 2:
      case 3: {  // mma.sync: A and B from smem (ldmatrix) or registers
        if (rs.regs.empty()) new_f32();
        auto acc = in.any(rs.regs);
        const int w = 1 << in.pick(3);
        op_ref op = rs.halves.empty() || in.pick(2) ? r.mma_sync(acc, region(i0, i1).rows(r.warp() % w, w), region(i0, i1))
                                                     : r.mma_sync(acc, in.any(rs.halves), region(i0, i1));
        if (in.chance(6) && rs.halves.size() >= 2) op = r.mma_sync(acc, in.any(rs.halves), in.any(rs.halves));
        modifiers(op);
        break;
      }
      default: {  // tcgen05.mma into a TMEM stage (a slot's) or a TMEM region
        if (st.tmem.empty()) return;
        auto t = in.any(st.tmem);
        tmem_tile acc = !rs.slots.empty() && in.pick(2) ? in.any(rs.slots)[t] : t;
        if (in.chance(4)) acc = acc.cols(in.pick(2), 2);
        if (in.pick(2)) r.tcgen05_fence_after();
        auto op = r.tcgen05_mma(acc, region(i0, i1), region(i0, i1));
        modifiers(op);
        if (in.chance(3) && !st.mbars.empty()) r.tcgen05_commit(in.any(st.mbars));
        break;
      }
    }
  }
  void modifiers(op_ref op) {
    switch (in.pick(5)) {
      case 0: op.overwrite(); break;
      case 1:
        if (loops) op.overwrite_on_first(loop_var);
        break;
      case 2: op.over(st.dims[in.pick(3)]); break;
      default: break;
    }
  }

  void compute(index_expr i0, index_expr i1) {
    if (rs.regs.empty()) {
      new_f32();
      return;
    }
    auto a = in.any(rs.regs);
    switch (in.pick(8)) {
      case 0: r.fill(a, 0.5f * static_cast<float>(in.pick(5))); break;
      case 1: r.zero(a); break;
      case 2:
      case 3: r.set(a, expr(a, i0, 1 + in.pick(3))); break;
      case 4:
        if (!st.params.empty()) r.scale(a, in.any(st.params));
        break;
      case 5: rs.halves.push_back(r.convert<bf16>(a)); break;
      case 6:  // a row or column vector broadcast over a tile
        if (in.pick(2)) {
          auto v = r.col_vector<f32>("cv", in.from(sizes));
          r.fill(v, 1.0f);
          r.set(a, in.pick(2) ? a * v : max(a, v - 1.0f));
          rs.regs.push_back(v);
        } else {
          auto v = r.row_vector<f32>("rv", in.from(sizes));
          r.fill(v, 2.0f);
          r.set(a, in.pick(2) ? a - v : select(a > v, a, v));
          rs.regs.push_back(v);
        }
        break;
      default:
        if (!rs.halves.empty()) {  // a 16-bit tile back to f32, or a new one
          if (in.pick(2)) rs.regs.push_back(r.convert<f32>(in.any(rs.halves)));
          else rs.halves.push_back(r.fragment<bf16>("h", tile_shape()));
        } else {
          rs.halves.push_back(r.fragment<bf16>("h", tile_shape()));
        }
        break;
    }
    (void)i1;
  }

  void reductions(index_expr i0, index_expr i1) {
    if (rs.regs.size() < 2) {
      new_f32();
      return;
    }
    auto d = in.any(rs.regs);
    auto x = in.any(rs.regs);
    switch (in.pick(9)) {
      case 0: r.row_sum(d, x); break;
      case 1: {
        auto op = in.pick(2) ? r.row_max(d, x * x) : r.row_min(d, expr(x, i0, 2));
        if (in.pick(2)) op.accumulate();
        break;
      }
      case 2:
      case 3: {  // argmin / argmax: value and index per row
        const int rows = in.chance(5) ? in.from(mma_rows) : st.reg(x.o.index).rows;
        auto v = r.row_vector<f32>("best", rows);
        auto ix = r.row_vector<i32>("arg", rows);
        rs.regs.push_back(v);
        rs.ints.push_back(ix);
        auto op = in.pick(2) ? (in.pick(2) ? r.row_argmin(v, ix, x, i1 * 64) : r.row_argmax(v, ix, x, i1 * 64))
                             : (in.pick(2) ? r.row_argmax(v, ix, x - 1.0f, i1 * 64) : r.row_argmin(v, ix, expr(x, i0, 1), i1 * 64));
        if (in.pick(2)) {
          op.accumulate();
          if (in.chance(3)) op.lazy_index();
        }
        break;
      }
      case 4:
        if (in.pick(2)) r.row_scan(d, x);
        else if (!rs.ints.empty()) r.row_scan(in.any(rs.ints), in.any(rs.ints));
        break;
      case 5:
        switch (in.pick(3)) {
          case 0: r.col_sum(d, x); break;
          case 1: r.col_max(d, x); break;
          default: r.col_min(d, x); break;
        }
        break;
      default: topk(x, i0, i1); break;
    }
  }
  void topk(reg_tile<f32> x, index_expr i0, index_expr i1) {
    if (rs.topks.empty() || in.chance(4)) {
      const int rows = in.chance(5) ? in.from(mma_rows) : st.reg(x.o.index).rows, kk = in.from(sizes);
      rs.topks.push_back(in.pick(2) ? r.topk("top", rows, kk) : r.topk_largest("top", rows, kk));
      r.topk_init(rs.topks.back());
      return;
    }
    auto t = in.any(rs.topks);
    switch (in.pick(4)) {
      case 0: r.row_topk(t, x, i1 * 64); break;
      case 1: r.row_topk(t, x * 2.0f, i1 * 64); break;
      case 2:
        if (!rs.ints.empty()) r.row_topk(t, x, in.any(rs.ints));
        break;
      default:
        if (!st.fouts.empty() && !st.iouts.empty()) r.topk_store(gtile(in.any(st.fouts), i0, i1), gtile(in.any(st.iouts), i0, i1), t);
        break;
    }
  }

  void global(index_expr i0, index_expr i1) {
    if (rs.regs.empty()) new_f32();
    auto x = in.any(rs.regs);
    switch (in.pick(12)) {
      case 0:
        if (!st.ins.empty()) {
          auto op = r.load(x, gtile(in.any(st.ins), i0, i1));
          if (in.pick(2)) op.fill_outside(pos_inf);
        }
        break;
      case 1:
        if (!st.fins.empty()) {
          if (in.pick(2)) r.load_add(x, gtile(in.any(st.fins), i0, i1));
          else r.set(x, r.loaded(f32_like(x), gtile(in.any(st.fins), i0, i1)) * 2.0f);
        }
        break;
      case 2:
        if (!st.outs.empty()) r.store(gtile(in.any(st.outs), i0, i1), r.convert<bf16>(x));
        break;
      case 3:
        if (!st.fouts.empty()) r.store(gtile(in.any(st.fouts), i0, i1), x);
        break;
      case 4:  // a converted copy kept and stored later
        if (!st.outs.empty()) {
          auto c = r.convert<bf16>(x);
          if (in.pick(2)) r.set(in.any(rs.regs), rx(0.0f));
          r.store(gtile(in.any(st.outs), i0, i1), c);
        }
        break;
      case 5:
        if (!st.fouts.empty()) r.atomic_add(gtile(in.any(st.fouts), i0, i1), x);
        else if (!st.outs.empty()) r.atomic_add(gtile(in.any(st.outs), i0, i1), x);
        break;
      case 6:
        if (!st.outs.empty() && !rs.halves.empty()) r.atomic_add(gtile(in.any(st.outs), i0, i1), in.any(rs.halves));
        break;
      case 7:
      case 8: {  // scatter by an index vector: add or store row i to row idx[i]
        auto idx = index_vector(x, i0, i1);
        if (st.fouts.empty()) break;
        if (in.pick(2)) r.scatter_add(st.fouts[0].tile(0, coord(i0, i1)), in.pick(3) ? x : f32_like(x), idx);
        else r.scatter_store(in.any(st.fouts).tile(0, coord(i0, i1)), x, idx);
        break;
      }
      case 9: {  // fetch_add: the slot of each row in its bucket, then the placement
        if (st.iouts.empty()) break;
        auto idx = index_vector(x, i0, i1);
        auto old = r.row_vector<i32>("pos", st.reg(idx.o.index).rows + (in.chance(6) ? 1 : 0));
        rs.ints.push_back(old);
        r.fetch_add(old, in.any(st.iouts).tile(0, in.pick(2)), idx, in.chance(4) ? in.pick(3) : 1);
        if (in.pick(2) && !st.fouts.empty()) r.scatter_store(in.any(st.fouts).tile(0, 0), x, old);
        break;
      }
      case 10:
        if (!st.iouts.empty() && !rs.ints.empty()) r.store(gtile(in.any(st.iouts), i0, i1), in.any(rs.ints));
        break;
      default:
        if (!st.iins.empty() && !rs.ints.empty()) r.load(in.any(rs.ints), gtile(in.any(st.iins), i0, i1));
        break;
    }
  }
  // An i32 row vector of x's rows (loaded from an i32 tensor, or a fresh one), sometimes of other rows.
  reg_tile<i32> index_vector(reg_tile<f32> x, index_expr i0, index_expr i1) {
    if (!rs.ints.empty() && in.chance(3)) return in.any(rs.ints);
    auto idx = r.row_vector<i32>("idx", in.chance(5) ? in.from(sizes) : st.reg(x.o.index).rows);
    rs.ints.push_back(idx);
    if (!st.iins.empty() && in.pick(3)) r.load(idx, st.iins[0].tile(coord(i0, i1)));
    else r.set(idx, rx(static_cast<float>(in.pick(3))));
    return idx;
  }

  void shared(index_expr i0, index_expr i1) {
    if (st.smem.empty()) return;
    switch (in.pick(7)) {
      case 0:
      case 1:
        if (!st.ins.empty()) {
          const int n = 1 + in.pick(3);
          for (int c = 0; c < n; ++c) r.cp_async(region(i0, i1), gtile(in.any(st.ins), i0, i1));
          if (in.pick(4)) r.cp_async_commit();
          if (in.pick(3)) r.cp_async_wait(in.pick(3));
        }
        break;
      case 2:
        if (!rs.regs.empty()) {
          if (in.pick(2)) r.load(in.any(rs.regs), region(i0, i1));
          else r.store(region(i0, i1), r.convert<bf16>(in.any(rs.regs)));
        }
        break;
      case 3:
      case 4: {
        auto h = rs.halves.empty() || in.chance(3) ? r.fragment<bf16>("a", {in.from(mma_rows), in.from(mma_cols)}) : in.any(rs.halves);
        rs.halves.push_back(h);
        r.ldmatrix(h, region(i0, i1));
        break;
      }
      case 5:
        if (!rs.halves.empty() && native(on_sm90a | on_sm100a)) r.stmatrix(region(i0, i1), in.pick(3) ? in.any(rs.halves) : in.any(rs.halves).cols(in.pick(2), 2));
        break;
      default:
        if (!rs.halves.empty()) r.store(region(i0, i1), in.any(rs.halves));
        break;
    }
  }

  void index_values(index_expr i0, index_expr i1) {
    switch (in.pick(4)) {
      case 0:
        if (!st.iins.empty()) rs.values.push_back(r.read_index(in.any(st.iins).at(coord(i0, i1), coord(i0, i1))));
        break;
      case 1: rs.values.push_back(r.let_index(coord(i0, i1) + coord(i0, i1))); break;
      case 2: rs.values.push_back(r.let_min(coord(i0, i1), st.dims[in.pick(3)].extent() / 64)); break;
      default:  // split parts meeting in global memory: the last arrival combines them
        if (!st.iouts.empty()) {
          const int n = 1 + in.pick(4);
          auto before = r.count_arrival(in.any(st.iouts).at(coord(i0, i1), i1), n);
          rs.values.push_back(before);
          if (in.pick(2) && !rs.regs.empty() && !st.fouts.empty()) {
            auto x = in.any(rs.regs);
            r.when(eq(before, n - 1), [&] { r.store(gtile(in.any(st.fouts), i0, i1), x); });
          }
        }
        break;
    }
  }

  void sync(index_expr i0, index_expr i1) {
    switch (in.pick(12)) {
      case 0:
        if (!st.named.empty()) r.sync(in.any(st.named));
        break;
      case 1:
        if (!st.named.empty()) r.arrive(in.any(st.named));
        break;
      case 2:
        if (!st.turns.empty()) {  // an ordered section
          auto t = in.any(st.turns);
          if (in.pick(4)) r.take_turn(t);
          body_here(i0, i1);
          if (in.pick(4)) r.pass_turn(t);
        }
        break;
      case 3:
      case 4:
        if (!st.mbars.empty() && native(on_sm90a | on_sm100a)) {
          auto b = in.any(st.mbars);
          if (in.chance(4)) b = b[coord(i0, i1)];
          switch (in.pick(6)) {
            case 0: r.init(b, in.pick(3)); break;
            case 1: {
              auto op = r.arrive(b);
              if (in.chance(3)) op.remote();
              break;
            }
            case 2: r.expect_tx(b, in.from(sizes) * 64); break;
            case 3: {
              auto op = r.arrive_expect_tx(b, in.from(sizes) * 128);
              if (in.chance(3)) op.remote();
              break;
            }
            default: r.wait(b); break;
          }
        }
        break;
      case 5:
        if (!native(on_sm90a | on_sm100a)) break;
        if (in.pick(3)) r.cluster_sync();
        else if (in.pick(2)) r.cluster_arrive();
        else r.cluster_wait();
        break;
      case 6:
        if (native(on_sm90a | on_sm100a)) r.fence_proxy_async();
        break;
      case 7:
        if (native(on_sm90a | on_sm100a)) r.fence_mbarrier_init();
        break;
      case 8:
        if (!native(on_sm90a | on_sm100a)) break;
        if (in.pick(2)) r.griddep_wait();
        else r.griddep_launch_dependents();
        break;
      case 9:
        if (warpgroup_role() ? native(on_sm90a | on_sm100a) : in.chance(8)) r.setmaxnreg(in.from(sizes) + (in.pick(2) ? 40 : 0));
        break;
      default:
        if (!native(on_sm90a)) break;
        if (in.pick(2)) r.wgmma_fence();
        else if (in.pick(2)) r.wgmma_commit();
        else r.wgmma_wait(in.pick(9));
        break;
    }
  }

  void tensor_memory(index_expr i0, index_expr i1) {
    if (st.tmem.empty() || !native(on_sm100a)) return;
    auto t = in.any(st.tmem);
    tmem_tile v = !rs.slots.empty() && in.pick(2) ? in.any(rs.slots)[t] : t;
    if (in.chance(3)) v = v.cols(coord(i0, i1), 1 << in.pick(4));
    switch (in.pick(7)) {
      case 0: r.tmem_alloc(t); break;
      case 1: r.tmem_dealloc(t); break;
      case 2:
      case 3: {
        if (!rs.halves.empty() && in.chance(6)) {  // into a 16-bit tile (the invalid use)
          r.tmem_load(in.any(rs.halves), v);
          break;
        }
        if (rs.regs.empty() || in.chance(3)) rs.regs.push_back(r.fragment<f32>("tl", {in.from(mma_rows) * 2, in.from(mma_cols)}));
        r.tmem_load(in.any(rs.regs), v);
        break;
      }
      case 4:
        if (!rs.regs.empty()) r.tmem_store(v, in.any(rs.regs));
        break;
      case 5: r.tcgen05_fence_before(); break;
      default: r.tcgen05_fence_after(); break;
    }
  }

  void cluster(index_expr i0, index_expr i1) {
    if (rs.regs.empty() || (st.cluster < 2 && !in.chance(8))) return;
    auto x = in.any(rs.regs);
    if (in.pick(2)) {
      r.cluster_sum(x);
      if (!st.fouts.empty() && in.pick(2)) r.when(eq(r.cluster_rank(), 0), [&] { r.store(gtile(in.any(st.fouts), i0, i1), x); });
    } else {
      r.cluster_sum_scatter(x);
      const int s = st.cluster < 1 ? 1 : st.cluster;
      if (!st.fouts.empty()) {
        const int q = in.pick(s + 1);
        r.when(eq(r.cluster_rank(), q), [&] { r.store(gtile(in.any(st.fouts), i0, i1), in.pick(4) ? x.cols(q, s) : x); });
      }
    }
  }

  void control(int depth, index_expr i0, index_expr i1) {
    if (depth >= 3) return;
    switch (in.pick(6)) {
      case 0:
      case 1: {
        const index_expr lim = in.pick(2) ? index_expr(in.pick(5)) : index_expr(2);
        loop_extent e = in.pick(2) ? loop_extent(tiles(st.dims[in.pick(3)], in.from(sizes) + 1)) : loop_extent(lim);
        if (in.chance(4)) e = min(loop_extent(i0 + 1), e);
        auto f = [&](auto j) { nested(depth, i0, j, j); };
        if (in.chance(4)) r.loop(i0 % 2, e, 1 + in.pick(3), f);
        else r.loop(e, f);
        break;
      }
      case 2: r.for_range(in.pick(4), [&](auto j) { nested(depth, j, i1, j); }); break;
      case 3:
      case 4: {  // a body under a condition over the indices (masks, first/last trips, one rank)
        const rx cond = in.chance(3) ? eq(i1, in.pick(3)) : in.pick(2) ? rx(i0 < i1 + in.pick(4)) : in.pick(2) ? ne(i0, 1) : eq(r.walk_step(), 0);
        r.when(cond, [&] { body(depth + 1, i0, i1); });
        break;
      }
      default:  // inside the walk: where this CTA has a next point
        if (st.has_space) r.next_point(st.walk, [&](auto m, auto n) { body(depth + 1, m, n); });
        break;
    }
  }
  void nested(int depth, index_expr i0, index_expr i1, index_expr var) {
    const index_expr outer = loop_var;
    ++loops;
    loop_var = var;
    body(depth + 1, i0, i1);
    --loops;
    loop_var = outer;
  }
  void body_here(index_expr i0, index_expr i1) {
    const int n = 1 + in.pick(3);
    for (int k = 0; k < n; ++k) one(3, i0, i1);
  }

  // ---- the body --------------------------------------------------------------------------------------
  void one(int depth, index_expr i0, index_expr i1) {
    switch (in.pick(20)) {
      case 0:
      case 1: pipelines(i0, i1); break;
      case 2: tma(i0, i1); break;
      case 3:
      case 4: mma(i0, i1); break;
      case 5:
      case 6: compute(i0, i1); break;
      case 7: reductions(i0, i1); break;
      case 8:
      case 9: global(i0, i1); break;
      case 10: shared(i0, i1); break;
      case 11: index_values(i0, i1); break;
      case 12:
      case 13: sync(i0, i1); break;
      case 14: tensor_memory(i0, i1); break;
      case 15: cluster(i0, i1); break;
      case 16: new_f32(); break;
      default: control(depth, i0, i1); break;
    }
  }
  // A scaffold's insertion point: now and then one or two drawn ops.
  void maybe(int depth, index_expr i0, index_expr i1) {
    if (!in.chance(3)) return;
    const int n = 1 + in.pick(2);
    for (int k = 0; k < n; ++k) one(depth, i0, i1);
  }
  void body(int depth, index_expr i0, index_expr i1) {
    const int n = 1 + in.pick(8);
    for (int k = 0; k < n; ++k) one(depth, i0, i1);
  }
};

}  // namespace cake_fuzz
