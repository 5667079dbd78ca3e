#pragma once
// The body of a role: `k.role("math", warpgroups(2), regs(232), [&](auto& r) { ... })`. Every method
// records one op (with the caller's source line) into the role being built; loops take a lambda whose
// ops form the loop body.
#include <type_traits>
#include <utility>

#include "../plan/operands.hpp"
#include "expr.hpp"
#include "kernel_builder.hpp"

namespace cake {

// Returned by ops that take modifiers: r.tma_load(...).multicast(), r.wgmma(...).overwrite_on_first(kt).
struct op_ref {
  kernel_builder* k = nullptr;
  int id = 0;
  constexpr op& get() const { return k->p.ops[id]; }
  // TMA load to every CTA of the cluster (each CTA loads its share and all receive the whole tile).
  constexpr op_ref multicast() const {
    if (get().kind != op_kind::tma_load)
      k->fail<"ir.modifier", "multicast() applies to a tma_load (value: op#)">(id, get().loc);
    if (k->p.launch.cluster_size() < 2)
      k->fail<"instruction.multicast-without-cluster", "multicast needs a cluster of 2 or more CTAs: call k.cluster(...) first (value: op#)">(id, get().loc);
    get().flags |= flag_multicast;
    return *this;
  }
  // A TMA load into a part of a region (st[sA].rows(0, 8)) whose other rows are read (by an MMA over the
  // whole region) but what they produce is never used: e.g. the output rows past M of a GEMM at small M.
  // Without it the analyzer reports the read of rows no write fills (dataflow.partial-fill).
  constexpr op_ref rest_unused() const {
    if (get().kind != op_kind::tma_load) k->fail<"ir.modifier", "rest_unused() applies to a tma_load (value: op#)">(id, get().loc);
    get().flags |= flag_rest_unused;
    return *this;
  }
  // MMA writes D = A*B instead of D += A*B.
  constexpr op_ref overwrite() const {
    check_mma();
    get().flags |= flag_overwrite;
    return *this;
  }
  // MMA writes D = A*B on the first iteration of loop `it`, accumulates afterwards.
  constexpr op_ref overwrite_on_first(index_expr it) const {
    check_mma();
    if (it.term_count != 1 || it.terms[0].kind != var_kind::loop)
      k->fail<"ir.overwrite-first", "overwrite_on_first takes a loop variable (value: op#)">(id, get().loc);
    get().flags |= flag_overwrite_first;
    get().imm[2] = it.terms[0].ref;
    return *this;
  }
  // MMA contracts this dim (by default: the one dim A and B hold in common). S = Q Kᵀ: over(D).
  constexpr op_ref over(dim_name_or_ref d) const {
    check_mma();
    const int idx = k->resolve_dim(d, get().loc);
    get().flags |= flag_over;
    get().imm[1] = idx < 0 ? 0 : idx;
    return *this;
  }
  // Reductions: combine with the destination's current value instead of overwriting it.
  constexpr op_ref accumulate() const {
    if (get().kind != op_kind::reduce_rows && get().kind != op_kind::arg_reduce_rows)
      k->fail<"ir.modifier", "accumulate() applies to a row reduction (value: op#)">(id, get().loc);
    get().flags |= flag_accumulate;
    return *this;
  }
  // Accumulating argmin / argmax: each element costs one min (max); the index is searched for only in
  // the rows whose tile value beats the running one, by a second pass over their elements. Fewer
  // instructions per element when improvements are rare (many tiles: after tile j a row improves with
  // probability about 1/j on unordered data), more when they are frequent. Same results, ties included.
  constexpr op_ref lazy_index() const {
    if (get().kind != op_kind::arg_reduce_rows || !get().has(flag_accumulate)) {
      k->fail<"ir.modifier", "lazy_index() applies to an accumulating row_argmin / row_argmax: call .accumulate() first (value: op#)">(id, get().loc);
      return *this;
    }
    get().flags |= flag_lazy_index;
    return *this;
  }
  // Loads from global: the value elements outside the tensor get (default 0). A TMA load takes 0 or NaN,
  // the two out-of-bounds fills a tensor map has (NaN for floating-point tensors only): e.g. a norm
  // vector whose padded entries must lose every comparison (a NaN compares false) without a mask.
  constexpr op_ref fill_outside(float v) const {
    if (get().kind == op_kind::tma_load) {
      const operand& g = get().a;
      const bool floating = g.kind == operand_kind::global && g.index < k->p.tile_refs.size() && tma_float(k->p.tensors[k->p.tile_refs[g.index].tensor].dt);
      if (v != v && !floating)
        k->fail<"ir.modifier", "fill_outside(nan) on a TMA load needs an f32, f16, bf16 or tf32 tensor: other tensor maps fill with 0 only (value: op#)">(id, get().loc);
      else if (v != v)
        get().flags |= flag_oob_nan;
      else if (v != 0.0f)
        k->fail<"ir.modifier", "fill_outside(v) on a TMA load takes 0 or NaN, the tensor map's two out-of-bounds fills (value: op#)">(id, get().loc);
      return *this;
    }
    if (get().kind != op_kind::load_global) k->fail<"ir.modifier", "fill_outside() applies to a load from a global tile or a TMA load (value: op#)">(id, get().loc);
    get().imm[2] = __builtin_bit_cast(std::int32_t, v);
    return *this;
  }
  // A pipeline release that takes effect n iterations of the enclosing loop later (the stage stays
  // held while wgmma groups that read it may be in flight: the wgmma_wait(1) pattern). The last n
  // releases happen when the loop ends.
  constexpr op_ref later(int n) const {
    if (get().kind != op_kind::pipeline_release) k->fail<"ir.modifier", "later(n) applies to a pipeline release (value: op#)">(id, get().loc);
    if (n < 1 || n > 4) k->fail<"ir.modifier", "later(n) takes 1..4 iterations (value: n)">(n, get().loc);
    get().flags |= flag_release_later;
    get().imm[1] = n;
    return *this;
  }
  // mbarrier arrive on the same barrier in every CTA of the cluster.
  constexpr op_ref remote() const {
    if (get().kind != op_kind::mbarrier_arrive && get().kind != op_kind::mbarrier_arrive_expect_tx)
      k->fail<"ir.modifier", "remote() applies to an mbarrier arrive (value: op#)">(id, get().loc);
    get().flags |= flag_remote;
    return *this;
  }

 private:
  constexpr void check_mma() const {
    const op_kind kd = get().kind;
    if (kd != op_kind::wgmma && kd != op_kind::mma_sync && kd != op_kind::tcgen05_mma)
      k->fail<"ir.modifier", "overwrite()/overwrite_on_first() apply to an MMA (value: op#)">(id, get().loc);
  }
};

template <class X> using element_of = typename X::element;

class role {
 public:
  template <class F, int N, int... I>
  static constexpr void call_with_axes(F& body, space_point<N> pt, std::integer_sequence<int, I...>) {
    // One axis: the index itself. Several: one index per parameter, or the point (pt[0], pt[1], ...).
    if constexpr (N == 1) body(pt[0]);
    else if constexpr (std::is_invocable_v<F&, decltype(pt[I])...>) body(pt[I]...);
    else body(pt);
  }

  constexpr role(kernel_builder* k, int role) : k_(k), role_(static_cast<std::uint8_t>(role)) {}

  // ---- index variables ------------------------------------------------------------------------
  constexpr index_expr warpgroup() const { return var_index(var_kind::warpgroup, 0); }
  constexpr index_expr warp() const { return var_index(var_kind::warp, 0); }
  constexpr index_expr cluster_rank() const { return var_index(var_kind::cluster_rank, 0); }
  // The CTA's index in the grid (blockIdx.x).
  constexpr index_expr cta() const { return var_index(var_kind::cta, 0); }
  // The CTA's step in its walk (0 at its first point) and how many points it walks (1 for a grid walk):
  // r.when(eq(r.walk_step(), 0), [&] { ...the first point's prologue... }).
  constexpr index_expr walk_step() const { return var_index(var_kind::walk_step, 0); }
  constexpr index_expr walk_steps() const { return var_index(var_kind::walk_steps, 0); }
  // A split tail (k.split_tail(extent, n)): this point's part, [part_begin, part_end) of [0, extent), part
  // walk_part of walk_parts, and the part's index in the whole tail (tail_unit; its point's first part is
  // tail_unit - walk_part). At a whole point: [0, extent), part 0 of 1, tail_unit 0. Without a split tail every
  // point is whole.
  constexpr index_expr part_begin() const { return var_index(var_kind::part_begin, 0); }
  constexpr index_expr part_end() const { return var_index(var_kind::part_end, 0); }
  constexpr index_expr walk_part() const { return var_index(var_kind::walk_part, 0); }
  constexpr index_expr walk_parts() const { return var_index(var_kind::walk_parts, 0); }
  constexpr index_expr tail_unit() const { return var_index(var_kind::tail_unit, 0); }
  constexpr const role_decl& decl() const { return k_->p.roles[role_]; }

  // ---- index values ---------------------------------------------------------------------------------
  // An integer read from a tensor at element coordinates (one per dim), usable wherever an index
  // expression is: loop bounds, tile and element origins, mask and store limits, when conditions.
  //   auto q0 = r.read_index(CuSeqQ.at(b, 0));   // entry b's first row in a packed batch
  // Every thread of the role reads it (one ld.global, at this point of the body: place it where its
  // coordinates are defined, outside the loops it does not depend on). The value is run-time data: the
  // analyzer models a tensor read as non-decreasing along each coordinate (cumulative offsets), nothing
  // more; values outside what the schedule expects are the caller's contract. The tensor must be i32.
  template <class T>
  constexpr index_expr read_index(global_tile<T> g, src_loc at = src_loc::current()) {
    if (T::value != dtype::i32)
      k_->fail<"ir.index-value", "read_index reads an integer index: the tensor must be i32 (value: the tensor's dtype code)">(static_cast<int>(T::value), at);
    op o;
    o.kind = op_kind::read_index;
    o.a = global_operand(g, at);
    return var_index(var_kind::value, emit(o, at).id);
  }
  // The arrival of this unit (warp or warpgroup) on a counter shared by the units that each leave a part
  // of one result in global memory, of which the last one to arrive combines them (a split's partial
  // sums, meeting outside a cluster):
  //   r.store(Part.tile(s, m, n), acc);                    // this split's partial sums
  //   auto before = r.count_arrival(Count.at(m, n), S);    // S units arrive on this counter
  //   r.when(eq(before, S - 1), [&] { ...the last one reads the other S - 1 parts and stores the sum... });
  // The unit's threads first meet (its barrier), so that its global writes before this point are
  // released at GPU scope; then one thread steps the counter (atom.inc.acq_rel.gpu: 0, 1, ..., n - 1, then
  // 0 again, so the counter is back to 0 for the next launch once all n have arrived) and every thread of
  // the unit gets the count before its step, with the global writes of the units that arrived earlier
  // visible to its later loads. The counter is an i32 tensor that holds 0 before the first launch (the
  // caller zeroes it once); a launch cut short leaves it elsewhere (zero it again). Nobody waits: a unit
  // that is not the last goes on.
  template <class T>
  constexpr index_expr count_arrival(global_tile<T> counter, int n, src_loc at = src_loc::current()) {
    if (T::value != dtype::i32)
      k_->fail<"ir.index-value", "count_arrival steps an i32 counter: the tensor must be i32 (value: the tensor's dtype code)">(static_cast<int>(T::value), at);
    if (n < 1) k_->fail<"ir.index-value", "count_arrival(counter, n) counts n arrivals: n must be at least 1 (value: n)">(n, at);
    op o;
    o.kind = op_kind::count_arrival;
    o.a = global_operand(counter, at);
    o.imm[0] = n;
    return var_index(var_kind::value, emit(o, at).id);
  }
  // The same with n known only at run time (a split tail's r.walk_parts()): n is an index expression of uniform
  // indices, at least 1 where it runs (not checked: the analyzer's count of arrivals needs a constant n).
  template <class T>
  constexpr index_expr count_arrival(global_tile<T> counter, index_expr n, src_loc at = src_loc::current()) {
    if (n.is_constant()) return count_arrival(counter, static_cast<int>(n.constant), at);
    if (T::value != dtype::i32)
      k_->fail<"ir.index-value", "count_arrival steps an i32 counter: the tensor must be i32 (value: the tensor's dtype code)">(static_cast<int>(T::value), at);
    if (!n.valid || n.uses(var_kind::elem_row) || n.uses(var_kind::elem_col))
      k_->fail<"ir.index-value", "count_arrival(counter, n): n must be a representable index expression of uniform indices (value: 0)">(0, at);
    op o;
    o.kind = op_kind::count_arrival;
    o.a = global_operand(counter, at);
    o.imm[0] = 0;  // (0: n is o.ix, a run-time value)
    o.ix = n;
    return var_index(var_kind::value, emit(o, at).id);
  }
  // An index expression evaluated once, here, into one variable: a name for a value several bounds
  // use (a sequence's length, the causal offset), and a way past the three-term limit of one expression.
  constexpr index_expr let_index(index_expr e, src_loc at = src_loc::current()) {
    if (!e.valid) k_->fail<"ir.index-expr", "an index expression is ((c + sum coef*var) / div) % mod: this let_index cannot be represented (value: 0)">(0, at);
    if (e.uses(var_kind::elem_row) || e.uses(var_kind::elem_col))
      k_->fail<"ir.index-value", "an index value cannot depend on a register-tile element's row or column (value: 0)">(0, at);
    op o;
    o.kind = op_kind::let_index;
    o.ix = e;
    return var_index(var_kind::value, emit(o, at).id);
  }
  // The smaller of two index expressions, once (the last row of a tile clipped to its sequence).
  constexpr index_expr let_min(index_expr a, index_expr b, src_loc at = src_loc::current()) {
    const index_expr v = let_index(a, at);
    op& o = k_->p.ops[v.terms[0].ref];
    if (!b.valid || b.uses(var_kind::elem_row) || b.uses(var_kind::elem_col))
      k_->fail<"ir.index-value", "let_min(a, b): b must be a representable index expression of uniform indices (value: 0)">(0, at);
    o.imm[0] = 1;
    o.d.stage = b;
    return v;
  }

  // ---- register tiles ----------------------------------------------------------------------------
  // Held by each unit of this role (a warpgroup's accumulator for wgmma, a warp's for mma.sync).
  template <element_type T>
  constexpr reg_tile<T> accumulator(located_name nm, shape2 s) { return add_reg<T>(nm, s, true); }
  template <element_type T>
  constexpr reg_tile<T> fragment(located_name nm, shape2 s) { return add_reg<T>(nm, s, false); }
  // A rows x 1 vector (one value per row, broadcast along the columns) and a 1 x cols vector.
  template <element_type T>
  constexpr reg_tile<T> row_vector(located_name nm, int rows) { return add_reg<T>(nm, {rows, 1}, false); }
  template <element_type T>
  constexpr reg_tile<T> col_vector(located_name nm, int cols) { return add_reg<T>(nm, {1, cols}, false); }

  // ---- control --------------------------------------------------------------------------------------
  // The walk over the parallel iteration space: every point the grid (or this CTA's share of a
  // persistent walk) covers. The body takes the point (t[0], t[1], ...) or one index per axis:
  //   r.for_each(tiles, [&](auto m, auto n) { ... });
  template <int N, class F>
  constexpr void for_each(const space<N>&, F body, src_loc at = src_loc::current()) {
    walk<N>(body, 0, at);
  }
  // Each unit of the role takes every count-th point of the CTA's walk (unit u: the u-th, u+count-th, ...);
  // its pipeline positions skip the stages the other units consume (derived).
  template <int N, class F>
  constexpr void for_each(const alternating_space<N>&, F body, src_loc at = src_loc::current()) {
    walk<N>(body, flag_alternate, at);
  }
  // A sequential loop: i = 0, 1, ... while i < extent, where the extent is an index expression of the
  // enclosing indices and dims (tiles(K, 64), min(q + 1, tiles(T, 128)), K.extent() / 8).
  template <class F>
  constexpr void loop(loop_extent extent, F body, src_loc at = src_loc::current()) {
    loop(index_expr(0), extent, 1, body, at);
  }
  // i = from, from + step, ... while i < extent (e.g. split-K slices: loop(s, tiles(K, 64), 4, ...)).
  template <class F>
  constexpr void loop(index_expr from, loop_extent extent, int step, F body, src_loc at = src_loc::current()) {
    loop_bound b;
    b.lo = from;
    b.step = step;
    if (extent.too_many) k_->fail<"ir.loop-bound", "a loop extent is min() of at most two bounds (value: 0)">(0, at);
    b.hi = k_->resolve_extent_side(extent.sides[0], b, at);
    if (extent.count > 1) {
      b.hi2 = k_->resolve_extent_side(extent.sides[1], b, at);
      b.has_hi2 = true;
    }
    if (step < 1 || step > 32767) k_->fail<"ir.loop-bound", "a loop step is 1..32767 (value: the step)">(step, at);
    for (const index_expr* e : {&b.lo, &b.hi, &b.hi2})
      if (!e->valid)
        k_->fail<"ir.index-expr", "an index expression is ((c + sum coef*var) / div) % mod: this loop bound cannot be represented (value: 0)">(0, at);
      else if (e->uses(var_kind::elem_row) || e->uses(var_kind::elem_col))
        k_->fail<"ir.loop-bound", "a loop bound cannot depend on a register-tile element's row or column (value: 0)">(0, at);
    op o;
    o.kind = op_kind::loop;
    o.imm[1] = k_->template add<"more loops">(k_->p.loops, b, at);
    const int id = open(o, at);
    body(var_index(var_kind::loop, id));
    close(id);
  }
  // A loop with a trip count known when the schedule is written (unrolled by lowering).
  template <class F>
  constexpr void for_range(int n, F body, src_loc at = src_loc::current()) {
    if (n < 1 || n > 1024) k_->fail<"ir.trip-count", "for_range takes 1..1024 iterations (value: the count)">(n, at);
    op o;
    o.kind = op_kind::loop;
    o.flags = flag_static_trip;
    o.imm[1] = n;
    const int id = open(o, at);
    body(var_index(var_kind::loop, id));
    close(id);
  }
  constexpr op_ref setmaxnreg(int n, src_loc at = src_loc::current()) { return simple(op_kind::setmaxnreg, at, n); }
  constexpr op_ref griddep_wait(src_loc at = src_loc::current()) { return simple(op_kind::griddep_wait, at); }
  constexpr op_ref griddep_launch_dependents(src_loc at = src_loc::current()) { return simple(op_kind::griddep_launch, at); }

  // ---- compute ----------------------------------------------------------------------------------------
  // One warpgroup MMA over a K tile: D[rows x N] (+)= A[rows x K] * B[N x K]^T. A from smem or
  // registers, B from smem; lowering issues one wgmma.mma_async per K step of the instruction.
  template <class Acc, class A, class B>
  constexpr op_ref wgmma(Acc acc, A a, B b, src_loc at = src_loc::current()) {
    static_assert(is_reg_tile<Acc>, "[memory.operand-space] wgmma accumulates into a register tile: pass r.accumulator<...>(...)");
    static_assert(is_smem_tile<A> || is_reg_tile<A>, "[memory.operand-space] wgmma reads A from shared memory or registers");
    static_assert(is_smem_tile<B>, "[memory.operand-space] wgmma reads B from shared memory: pass an smem tile");
    check_mma_types<Acc, A, B>();
    static_assert(info(element_of<A>::value).operand_of & unit_wgmma, "[instruction.mma-operand-dtype] wgmma takes f16, bf16, tf32, e4m3, e5m2 or i8 operands");
    return mma(op_kind::wgmma, acc.o, a.o, b.o, at);
  }
  // Warp-level MMA (sm_80 mma.sync) over a K tile; operands from smem are read with ldmatrix.
  template <class Acc, class A, class B>
  constexpr op_ref mma_sync(Acc acc, A a, B b, src_loc at = src_loc::current()) {
    static_assert(is_reg_tile<Acc>, "[memory.operand-space] mma_sync accumulates into a register tile");
    static_assert(is_smem_tile<A> || is_reg_tile<A>, "[memory.operand-space] mma_sync reads A from shared memory or registers");
    static_assert(is_smem_tile<B> || is_reg_tile<B>, "[memory.operand-space] mma_sync reads B from shared memory or registers");
    check_mma_types<Acc, A, B>();
    static_assert(info(element_of<A>::value).operand_of & unit_mma_sync, "[instruction.mma-operand-dtype] mma_sync (sm_80) takes f16, bf16, tf32 or i8 operands; fp8 needs wgmma or tcgen05");
    return mma(op_kind::mma_sync, acc.o, a.o, b.o, at);
  }
  // sm_100a tensor-core MMA into tensor memory, issued by one thread.
  template <class A, class B>
  constexpr op_ref tcgen05_mma(tmem_tile acc, A a, B b, src_loc at = src_loc::current()) {
    static_assert(is_smem_tile<A> || is_tmem_tile<A>, "[memory.operand-space] tcgen05.mma reads A from shared memory or tensor memory");
    static_assert(is_smem_tile<B>, "[memory.operand-space] tcgen05.mma reads B from shared memory");
    check_mma_types<tmem_tile, A, B>();
    static_assert(info(element_of<A>::value).operand_of & unit_tcgen05, "[instruction.mma-operand-dtype] tcgen05.mma takes f16, bf16, tf32, e4m3, e5m2 or i8 operands");
    return mma(op_kind::tcgen05_mma, acc.o, a.o, b.o, at);
  }
  template <class T>
  constexpr op_ref fill(reg_tile<T> dst, float value, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::fill;
    o.d = dst.o;
    o.imm[0] = __builtin_bit_cast(std::int32_t, value);
    return emit(o, at);
  }
  template <class T>
  constexpr op_ref zero(reg_tile<T> dst, src_loc at = src_loc::current()) { return fill(dst, 0.0f, at); }
  // dst = expression, element by element (ir/expr.hpp): r.set(p, exp2(s * scale_log2 - m)). Row (M x 1)
  // and column (1 x N) vectors broadcast by shape; row() / col() are an element's position in dst.
  template <class T, class E>
    requires rx_like<E>
  constexpr op_ref set(reg_tile<T> dst, const E& value, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::elementwise;
    o.d = dst.o;
    record_expr(o, as_rx(value), at);
    return emit(o, at);
  }
  // dst *= a scalar parameter (e.g. the product of per-tensor fp8 scales).
  template <class T, class S>
  constexpr op_ref scale(reg_tile<T> dst, scalar<S> factor, src_loc at = src_loc::current()) { return set(dst, dst * factor, at); }
  // Row reductions into a row vector (rows x 1), across the threads that hold a row in the tile's
  // fragment layout. .accumulate() combines with dst's current value (m = max(m, row_max(s))).
  template <class T, class U>
  constexpr op_ref row_max(reg_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) { return reduce(op_kind::reduce_rows, reduce_kind::max, dst.o, src.o, at); }
  template <class T, class U>
  constexpr op_ref row_sum(reg_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) { return reduce(op_kind::reduce_rows, reduce_kind::sum, dst.o, src.o, at); }
  template <class T, class U>
  constexpr op_ref row_min(reg_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) { return reduce(op_kind::reduce_rows, reduce_kind::min, dst.o, src.o, at); }
  // The same reductions of an expression, evaluated element by element inside the reduction (no tile
  // holds it): r.row_sum(ss, x * x). The expression's shape is that of its full-tile leaves (rows x C);
  // vectors and scalars broadcast as in r.set.
  template <class T>
  constexpr op_ref row_max(reg_tile<T> dst, const rx& src, src_loc at = src_loc::current()) { return reduce_expr(op_kind::reduce_rows, reduce_kind::max, dst.o, {}, src, {}, at); }
  template <class T>
  constexpr op_ref row_sum(reg_tile<T> dst, const rx& src, src_loc at = src_loc::current()) { return reduce_expr(op_kind::reduce_rows, reduce_kind::sum, dst.o, {}, src, {}, at); }
  template <class T>
  constexpr op_ref row_min(reg_tile<T> dst, const rx& src, src_loc at = src_loc::current()) { return reduce_expr(op_kind::reduce_rows, reduce_kind::min, dst.o, {}, src, {}, at); }
  // Per row, the smallest (largest) value and its column index, col0 + the column inside the tile
  // (ties: the smaller index). With .accumulate() the running (value, index) pair is kept when it wins.
  // src may be an expression, as for the reductions above.
  template <class T, class I, class U>
  constexpr op_ref row_argmin(reg_tile<T> value, reg_tile<I> index, reg_tile<U> src, index_expr col0, src_loc at = src_loc::current()) {
    return arg_reduce(reduce_kind::argmin, value.o, index.o, src.o, col0, at);
  }
  template <class T, class I, class U>
  constexpr op_ref row_argmax(reg_tile<T> value, reg_tile<I> index, reg_tile<U> src, index_expr col0, src_loc at = src_loc::current()) {
    return arg_reduce(reduce_kind::argmax, value.o, index.o, src.o, col0, at);
  }
  template <class T, class I>
  constexpr op_ref row_argmin(reg_tile<T> value, reg_tile<I> index, const rx& src, index_expr col0, src_loc at = src_loc::current()) {
    return reduce_expr(op_kind::arg_reduce_rows, reduce_kind::argmin, value.o, index.o, src, col0, at);
  }
  template <class T, class I>
  constexpr op_ref row_argmax(reg_tile<T> value, reg_tile<I> index, const rx& src, index_expr col0, src_loc at = src_loc::current()) {
    return reduce_expr(op_kind::arg_reduce_rows, reduce_kind::argmax, value.o, index.o, src, col0, at);
  }
  // Inclusive prefix sum along each row, across the threads that hold the row: dst[i, j] = sum of src[i, 0..j]
  // (f32 adds in column order; exact for integers below 2^24). The exclusive form is dst - src. Lowered for
  // tiles in the blocked layout whose rows stay inside one warp (docs/language.md).
  template <class T, class U>
  constexpr op_ref row_scan(reg_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::scan_rows;
    o.d = dst.o;
    o.a = src.o;
    return emit(o, at);
  }
  // Column reductions into a column vector (1 x cols), across the threads (and register rows) that hold a
  // column: the sum over the rows of a segment (k-means' sorted update). Lowered for tiles of a warp in
  // the blocked layout.
  template <class T, class U>
  constexpr op_ref col_sum(reg_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) { return reduce(op_kind::reduce_cols, reduce_kind::sum, dst.o, src.o, at); }
  template <class T, class U>
  constexpr op_ref col_max(reg_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) { return reduce(op_kind::reduce_cols, reduce_kind::max, dst.o, src.o, at); }
  template <class T, class U>
  constexpr op_ref col_min(reg_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) { return reduce(op_kind::reduce_cols, reduce_kind::min, dst.o, src.o, at); }
  // ---- row top-k ------------------------------------------------------------------------------------
  // A per-row top-k state of `rows` rows: per row the k (1..256) smallest values (largest with
  // topk_largest) seen so far and their indices, exact, ties to the lowest index. The returned tile is
  // the R x 1 row vector of each row's k-th best value (usable in expressions, e.g. as a bound); the
  // lists and a candidate buffer live in shared memory the plan derives (k, the source's layout). Values
  // equal to +inf (largest: -inf) or NaN never enter a list; a row with fewer than k values keeps empty
  // entries (value +inf / -inf, index -1 when stored).
  constexpr reg_tile<f32> topk(located_name nm, int rows, int k) { return add_topk(nm, rows, k, false); }
  constexpr reg_tile<f32> topk_largest(located_name nm, int rows, int k) { return add_topk(nm, rows, k, true); }
  // Empties the lists (every row starts over).
  constexpr op_ref topk_init(reg_tile<f32> state, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::topk_init;
    o.d = state.o;
    return emit(o, at);
  }
  // Folds a tile (or an expression, evaluated element by element) into the lists: element (i, c) is a
  // candidate of row i with index col0 + c. The tile is never stored; a value enters the candidate
  // buffer only when it beats the row's k-th best, and the buffer is merged into the sorted list when
  // it could overflow.
  template <class U>
  constexpr op_ref row_topk(reg_tile<f32> state, reg_tile<U> src, index_expr col0, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::topk_rows;
    o.d = state.o;
    o.a = src.o;
    o.ix = col0;
    if (!col0.valid)
      k_->fail<"ir.index-expr", "an index expression is ((c + sum coef*var) / div) % mod: this column origin cannot be represented (value: 0)">(0, at);
    return emit(o, at);
  }
  constexpr op_ref row_topk(reg_tile<f32> state, const rx& src, index_expr col0, src_loc at = src_loc::current()) {
    return reduce_expr(op_kind::topk_rows, reduce_kind::min, state.o, {}, src, col0, at);
  }
  // The same with each element's index given by an i32 tile of the source's shape (merging lists: the
  // indices of partial results).
  template <class U, class I>
  constexpr op_ref row_topk(reg_tile<f32> state, reg_tile<U> src, reg_tile<I> index, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::topk_rows;
    o.d = state.o;
    o.a = src.o;
    o.b = index.o;
    return emit(o, at);
  }
  template <class I>
  constexpr op_ref row_topk(reg_tile<f32> state, const rx& src, reg_tile<I> index, src_loc at = src_loc::current()) {
    return reduce_expr(op_kind::topk_rows, reduce_kind::min, state.o, index.o, src, index_expr(0), at);
  }
  // Stores each row's list, best first, as a rows x k tile of `values` and of `indices` (i32); rows and
  // columns outside the tensors are not written. Pending candidates are merged first.
  template <class T, class I>
  constexpr op_ref topk_store(global_tile<T> values, global_tile<I> indices, reg_tile<f32> state, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::topk_store;
    o.d = global_operand(values, at);
    o.b = global_operand(indices, at);
    o.a = state.o;
    return emit(o, at);
  }

  // A converted copy of a register tile: auto out = r.convert<bf16>(acc);
  template <element_type T, class U>
  constexpr reg_tile<T> convert(reg_tile<U> src, src_loc at = src_loc::current()) {
    const auto& s = k_->p.regs[src.o.index];
    reg_decl d = s;
    d.dt = T::value;
    d.accumulator = false;
    d.topk = 0;
    d.loc = at;
    d.nm = suffixed(s.nm, to_string(T::value));
    reg_tile<T> dst;
    dst.o.kind = operand_kind::reg;
    dst.o.index = static_cast<std::uint8_t>(k_->template add<"more register tiles">(k_->p.regs, d, at));
    op o;
    o.kind = op_kind::convert;
    o.d = dst.o;
    o.a = src.o;
    emit(o, at);
    return dst;
  }

  // The same into a tile declared before (of src's shape), so that a conversion inside a loop body or a helper
  // called several times declares no tile per call: r.convert(h, f8)
  template <element_type T, class U>
  constexpr void convert(reg_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::convert;
    o.d = dst.o;
    o.a = src.o;
    emit(o, at);
  }

  // ---- memory ------------------------------------------------------------------------------------
  template <class T, class U>
  constexpr op_ref tma_load(smem_tile<T> dst, global_tile<U> src, src_loc at = src_loc::current()) {
    no_limit(src, at);
    static_assert(std::is_same_v<T, U>, "[representation.tma-dtype] a TMA load copies bytes: the smem tile and the tensor must have the same dtype");
    return move(op_kind::tma_load, dst.o, global_operand(src, at), at);
  }
  // A TMA load that completes on an explicit mbarrier (hand-written protocols; pipeline slots derive it).
  template <class T, class U>
  constexpr op_ref tma_load(smem_tile<T> dst, global_tile<U> src, mbarrier_ref done, src_loc at = src_loc::current()) {
    no_limit(src, at);
    static_assert(std::is_same_v<T, U>, "[representation.tma-dtype] a TMA load copies bytes: the smem tile and the tensor must have the same dtype");
    auto r = move(op_kind::tma_load, dst.o, global_operand(src, at), at);
    r.get().b.kind = operand_kind::mbarrier;
    r.get().b.index = done.index;
    r.get().b.stage = done.elem;
    return r;
  }
  template <class T, class U>
  constexpr op_ref tma_store(global_tile<T> dst, smem_tile<U> src, src_loc at = src_loc::current()) {
    no_limit(dst, at);
    static_assert(std::is_same_v<T, U>, "[representation.tma-dtype] a TMA store copies bytes: the smem tile and the tensor must have the same dtype");
    return move(op_kind::tma_store, global_operand(dst, at), src.o, at);
  }
  // Prefetch into L2 the box that r.tma_load(like, src) would move (cp.async.bulk.prefetch.tensor): nothing is
  // written to shared memory and no barrier completes; a later TMA load of the same box finds its bytes in L2.
  // `like` only gives the box (an smem region or a part of one, as a load's destination; no stage is touched), so
  // the prefetch shares the load's tensor map. For streams whose loads wait on HBM with too few bytes in flight
  // (the stages are full): prefetch the block a few iterations ahead of the one being loaded.
  template <class T, class U>
  constexpr op_ref prefetch_l2(smem_tile<T> like, global_tile<U> src, src_loc at = src_loc::current()) {
    no_limit(src, at);
    static_assert(std::is_same_v<T, U>, "[representation.tma-dtype] a TMA prefetch moves a load's box: the smem tile and the tensor must have the same dtype");
    return move(op_kind::tma_prefetch_tile, like.o, global_operand(src, at), at);
  }
  // Prefetch a tensor's TMA descriptor (prefetch.tensormap).
  template <class T>
  constexpr op_ref prefetch_tensor_map(tensor<T> t, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::tma_prefetch;
    o.a.kind = operand_kind::tensor;
    o.a.index = t.index;
    return emit(o, at);
  }
  template <class T, class U>
  constexpr op_ref cp_async(smem_tile<T> dst, global_tile<U> src, src_loc at = src_loc::current()) {
    no_limit(src, at);
    static_assert(std::is_same_v<T, U>, "[representation.copy-dtype] cp.async copies bytes: the smem tile and the tensor must have the same dtype");
    return move(op_kind::cp_async, dst.o, global_operand(src, at), at);
  }
  // Register tile <-> global tile / smem tile.
  template <class T, class Src>
  constexpr op_ref load(reg_tile<T> dst, Src src, src_loc at = src_loc::current()) {
    if constexpr (is_global_tile<Src>) return move(op_kind::load_global, dst.o, global_operand(src, at), at);
    else {
      static_assert(is_smem_tile<Src>, "[memory.operand-space] load reads a global tile or an smem tile");
      return move(op_kind::load_shared, dst.o, src.o, at);
    }
  }
  // dst += the global tile, element by element (each value converted to f32 as it arrives): a sum of tiles
  // from memory with no register tile of its own for the addend (a split's partial sums added to another's:
  // r.set(acc, acc + r.loaded(t, ...)) holds t and acc at once). dst is an f32 tile.
  template <class T, class U>
  constexpr op_ref load_add(reg_tile<T> dst, global_tile<U> src, src_loc at = src_loc::current()) {
    static_assert(std::is_same_v<T, f32>, "[representation.compute-dtype] load_add adds into an f32 register tile");
    auto r = move(op_kind::load_global, dst.o, global_operand(src, at), at);
    r.get().flags |= flag_accumulate;
    return r;
  }
  // Loads and returns the tile, for use in an expression: v = v + r.loaded(bias, Bias.tile(n)).
  template <class T, class Src>
  constexpr reg_tile<T> loaded(reg_tile<T> dst, Src src, src_loc at = src_loc::current()) {
    load(dst, src, at);
    return dst;
  }
  template <class Dst, class T>
  constexpr op_ref store(Dst dst, reg_tile<T> src, src_loc at = src_loc::current()) {
    if constexpr (is_global_tile<Dst>) return move(op_kind::store_global, global_operand(dst, at), src.o, at);
    else {
      static_assert(is_smem_tile<Dst>, "[memory.operand-space] store writes a global tile or an smem tile");
      return move(op_kind::store_shared, dst.o, src.o, at);
    }
  }
  // Global tile += register tile, atomically per element (red.global.add: f32, bf16 pairs on sm_90a+).
  template <class T, class U>
  constexpr op_ref atomic_add(global_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) {
    return move(op_kind::atomic_add, global_operand(dst, at), src.o, at);
  }
  // Row i of `src` is added atomically to row index[i] of the tensor, at the columns of dst's tile (its
  // row coordinate is ignored): the scatter-add of a segmented sum (k-means centroid update).
  template <class T, class U, class I>
  constexpr op_ref scatter_add(global_tile<T> dst, reg_tile<U> src, reg_tile<I> index, src_loc at = src_loc::current()) {
    auto r = move(op_kind::scatter_add, global_operand(dst, at), src.o, at);
    r.get().b = index.o;
    return r;
  }
  // Row i of `src` is stored to row index[i] of the tensor, at the columns of dst's tile (its row
  // coordinate is ignored); rows whose index is negative or past the tensor are not stored. Where two rows
  // name the same index, which one lands is not defined (a permutation, e.g. a counting sort's placement,
  // has none).
  template <class T, class U, class I>
  constexpr op_ref scatter_store(global_tile<T> dst, reg_tile<U> src, reg_tile<I> index, src_loc at = src_loc::current()) {
    auto r = move(op_kind::scatter_store, global_operand(dst, at), src.o, at);
    r.get().b = index.o;
    return r;
  }
  // Per row i: old[i] = counter[index[i]] and counter[index[i]] += n, atomically (atom.global.add), at the
  // column of the tile's origin (its row coordinate is ignored): the slot of each row in a bucket (a
  // counting sort's placement). Rows whose index is negative or past the tensor get -1 and add nothing.
  // old and index are row vectors; the counter is an i32 or f32 tensor.
  template <class T, class U, class I>
  constexpr op_ref fetch_add(reg_tile<U> old, global_tile<T> counter, reg_tile<I> index, int n = 1, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::fetch_add;
    o.d = old.o;
    o.a = global_operand(counter, at);
    o.b = index.o;
    o.imm[0] = n;
    return emit(o, at);
  }
  // Every CTA of the cluster ends with the sum of `tile` over the cluster's CTAs (through distributed
  // shared memory; the scratch and both cluster barriers are derived).
  template <class T>
  constexpr op_ref cluster_sum(reg_tile<T> tile, src_loc at = src_loc::current()) {
    return cluster_reduce(tile, reduce_kind::sum, at);
  }
  // Every CTA of the cluster ends with the element-wise maximum of `tile` over the cluster's CTAs (the same
  // protocol as cluster_sum): e.g. the running maxima of split-KV slices before they are merged,
  // r.cluster_max(m), then each slice's weight exp2(m_own - m).
  template <class T>
  constexpr op_ref cluster_max(reg_tile<T> tile, src_loc at = src_loc::current()) {
    return cluster_reduce(tile, reduce_kind::max, at);
  }
  // Reduce-scatter over the cluster: with S CTAs, CTA rank q ends with the sum in column block q of S
  // (columns [q * cols / S, (q + 1) * cols / S)); its other columns keep this CTA's own partial values.
  // Each CTA reads 1/S of the tile from every peer (cluster_sum reads all of it): use it when each CTA
  // stores only its block (r.when(eq(r.cluster_rank(), q), [&] { r.store(..., tile.cols(q, S)); })).
  // A later read of the whole tile, or of a block not selected by r.when(eq(r.cluster_rank(), q)), is
  // dataflow.cluster-scatter-read (analysis/compute.hpp).
  template <class T>
  constexpr op_ref cluster_sum_scatter(reg_tile<T> tile, src_loc at = src_loc::current()) {
    op_ref r = cluster_sum(tile, at);
    r.get().flags |= flag_scatter;
    return r;
  }
  // A body that runs only where `cond` (a comparison of uniform index expressions) holds:
  // r.when(eq(r.cluster_rank(), 0), [&] { r.store(...); }), r.when(j < last, [&] { mask... }). Equality is
  // eq(a, b) / ne(a, b): `==` on index expressions compares the expressions themselves (a C++ bool).
  template <class B, class F>
    requires std::same_as<B, bool>
  constexpr void when(B, F, src_loc = src_loc::current()) {
    static_assert(sizeof(B) == 0, "[ir.when-condition] r.when takes a condition over indices: write eq(a, b) / ne(a, b), not a == b (that compares the expressions and is a C++ bool)");
  }
  template <class F>
  constexpr void when(const rx& cond, F body, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::when;
    record_expr(o, cond, at);
    const int id = open(o, at);
    body();
    close(id);
  }
  // Inside the walk: a body that runs where this CTA's walk has a next point, with the walk's coordinates
  // (the parameters, as for_each's) naming that point. A point's body can so start the next point's work
  // before its own ends (e.g. wait for the next tile's first operands and issue its first MMA before this
  // tile's epilogue); the next point picks up what was waited for with r.held(pipeline). Not in an
  // alternating walk (whose units do not take consecutive points).
  template <int N, class F>
  constexpr void next_point(const space<N>&, F body, src_loc at = src_loc::current()) {
    int walk_op = -1;
    for (int a = k_->parent_; a >= 0; a = k_->p.ops[a].parent)
      if (k_->p.ops[a].kind == op_kind::tile_loop) {
        walk_op = a;
        break;
      }
    if (walk_op < 0) k_->fail<"ir.next-point", "r.next_point(...) belongs inside the walk (r.for_each) of the same space (value: 0)">(0, at);
    else if (k_->p.ops[walk_op].has(flag_alternate))
      k_->fail<"ir.next-point", "r.next_point(...) in an alternating walk: its units do not take consecutive points (value: op# of the walk)">(walk_op, at);
    op o;
    o.kind = op_kind::when;
    o.flags = flag_next_point;
    record_expr(o, walk_step() + 1 < walk_steps(), at);
    const int id = open(o, at);
    call_with_axes(body, space_point<N>{}, std::make_integer_sequence<int, N>{});
    close(id);
  }
  template <class T, class U>
  constexpr op_ref ldmatrix(reg_tile<T> dst, smem_tile<U> src, src_loc at = src_loc::current()) {
    static_assert(size_bits(T::value) == size_bits(U::value), "[representation.ldmatrix-dtype] ldmatrix moves 16-bit elements unchanged: use tiles of one 16-bit dtype");
    return move(op_kind::ldmatrix, dst.o, src.o, at);
  }
  template <class T, class U>
  constexpr op_ref stmatrix(smem_tile<T> dst, reg_tile<U> src, src_loc at = src_loc::current()) {
    static_assert(std::is_same_v<T, U>, "[representation.stmatrix-dtype] stmatrix stores 16-bit elements unchanged: convert the register tile first (r.convert<...>)");
    return move(op_kind::stmatrix, dst.o, src.o, at);
  }
  template <class T>
  constexpr op_ref tmem_load(reg_tile<T> dst, tmem_tile src, src_loc at = src_loc::current()) { return move(op_kind::tmem_load, dst.o, src.o, at); }
  template <class T>
  constexpr op_ref tmem_store(tmem_tile dst, reg_tile<T> src, src_loc at = src_loc::current()) { return move(op_kind::tmem_store, dst.o, src.o, at); }
  constexpr op_ref tmem_alloc(tmem_tile t, src_loc at = src_loc::current()) { return move(op_kind::tmem_alloc, t.o, {}, at); }
  constexpr op_ref tmem_dealloc(tmem_tile t, src_loc at = src_loc::current()) { return move(op_kind::tmem_dealloc, t.o, {}, at); }

  // ---- synchronization --------------------------------------------------------------------------
  // Pipelines: the producer acquires a free stage (waits 'empty', expects the carried bytes on 'full');
  // the consumer waits for a filled stage and releases it when done.
  constexpr slot acquire(pipeline_ref pl, src_loc at = src_loc::current()) { return pipeline_op(op_kind::pipeline_acquire, pl, at); }
  constexpr slot wait(pipeline_ref pl, src_loc at = src_loc::current()) { return pipeline_op(op_kind::pipeline_wait, pl, at); }
  // The slot of the stage this role's most recent wait on `pl` received, without waiting again: for a stage
  // waited for in another block than the one that uses it (r.next_point's body waits, the next point uses
  // and releases it). The stage must not have been released since (the analyzer checks the protocol).
  constexpr slot held(pipeline_ref pl, src_loc at = src_loc::current()) { return pipeline_op(op_kind::pipeline_held, pl, at); }
  constexpr op_ref release(pipeline_ref pl, slot s, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::pipeline_release;
    o.d.kind = operand_kind::pipeline;
    o.d.index = pl.index;
    o.a.kind = operand_kind::pipeline;
    o.a.index = s.pipeline;
    o.a.sel = stage_sel::slot;
    o.a.slot_op = s.op;
    if (s.pipeline != pl.index)
      k_->fail<"ir.slot-pipeline", "release(p, slot): the slot came from another pipeline (value: op# of the slot's acquire/wait)">(s.op, at);
    return emit(o, at);
  }
  // The producer has finished writing the slot by other means than TMA (e.g. tcgen05.mma into a TMEM
  // stage): lowering commits the producer's async work (tcgen05.commit) or arrives on 'full'.
  constexpr op_ref commit(pipeline_ref pl, slot s, src_loc at = src_loc::current()) {
    auto r = release(pl, s, at);
    r.get().kind = op_kind::pipeline_commit;
    return r;
  }
  // Frees every stage of `pl` that a deferred release (release(...).later(n)) of this role still holds;
  // write it after the loop, once the MMAs that read those stages are complete (r.wgmma_wait(0)).
  constexpr op_ref release_pending(pipeline_ref pl, src_loc at = src_loc::current()) {
    op o;
    o.kind = op_kind::pipeline_flush;
    o.d.kind = operand_kind::pipeline;
    o.d.index = pl.index;
    return emit(o, at);
  }
  // Ordered sections between the units of this role (ping-pong): take_turn waits until the previous
  // unit (round robin, unit 0 first) passed the turn; pass_turn hands it to the next unit. The
  // hardware barriers and the first turn of unit 0 are derived.
  constexpr op_ref take_turn(named_barrier_ref t, src_loc at = src_loc::current()) { return named_op(op_kind::turn_take, t, at); }
  constexpr op_ref pass_turn(named_barrier_ref t, src_loc at = src_loc::current()) { return named_op(op_kind::turn_pass, t, at); }
  // Explicit mbarrier ops (for hand-written protocols; pipelines derive these).
  constexpr op_ref init(mbarrier_ref b, int count, src_loc at = src_loc::current()) { return barrier_op(op_kind::mbarrier_init, b, count, at); }
  constexpr op_ref arrive(mbarrier_ref b, src_loc at = src_loc::current()) { return barrier_op(op_kind::mbarrier_arrive, b, 1, at); }
  constexpr op_ref arrive_expect_tx(mbarrier_ref b, int bytes, src_loc at = src_loc::current()) { return barrier_op(op_kind::mbarrier_arrive_expect_tx, b, bytes, at); }
  constexpr op_ref expect_tx(mbarrier_ref b, int bytes, src_loc at = src_loc::current()) { return barrier_op(op_kind::mbarrier_expect_tx, b, bytes, at); }
  // Waits for the barrier's current phase; the parity is tracked by Cake through loops.
  constexpr op_ref wait(mbarrier_ref b, src_loc at = src_loc::current()) { return barrier_op(op_kind::mbarrier_wait, b, 0, at); }
  constexpr op_ref sync(named_barrier_ref b, src_loc at = src_loc::current()) { return named_op(op_kind::named_barrier_sync, b, at); }
  constexpr op_ref arrive(named_barrier_ref b, src_loc at = src_loc::current()) { return named_op(op_kind::named_barrier_arrive, b, at); }
  constexpr op_ref fence_proxy_async(src_loc at = src_loc::current()) { return simple(op_kind::fence_proxy_async, at); }
  constexpr op_ref fence_mbarrier_init(src_loc at = src_loc::current()) { return simple(op_kind::fence_mbarrier_init, at); }
  constexpr op_ref tcgen05_fence_before(src_loc at = src_loc::current()) { return simple(op_kind::tcgen05_fence_before, at); }
  constexpr op_ref tcgen05_fence_after(src_loc at = src_loc::current()) { return simple(op_kind::tcgen05_fence_after, at); }
  constexpr op_ref tcgen05_commit(mbarrier_ref b, src_loc at = src_loc::current()) { return barrier_op(op_kind::tcgen05_commit, b, 0, at); }
  constexpr op_ref cluster_arrive(src_loc at = src_loc::current()) { return simple(op_kind::cluster_arrive, at); }
  constexpr op_ref cluster_wait(src_loc at = src_loc::current()) { return simple(op_kind::cluster_wait, at); }
  constexpr void cluster_sync(src_loc at = src_loc::current()) {
    cluster_arrive(at);
    cluster_wait(at);
  }
  constexpr op_ref wgmma_fence(src_loc at = src_loc::current()) { return simple(op_kind::wgmma_fence, at); }
  constexpr op_ref wgmma_commit(src_loc at = src_loc::current()) { return simple(op_kind::wgmma_commit, at); }
  // Wait until at most n committed wgmma groups of this warpgroup are pending.
  constexpr op_ref wgmma_wait(int n, src_loc at = src_loc::current()) { return counted(op_kind::wgmma_wait, n, 7, at); }
  constexpr op_ref cp_async_commit(src_loc at = src_loc::current()) { return simple(op_kind::cp_async_commit, at); }
  constexpr op_ref cp_async_wait(int n, src_loc at = src_loc::current()) { return counted(op_kind::cp_async_wait, n, 7, at); }
  // TMA store groups: commit, then wait until at most n groups are pending (read: until their smem
  // sources may be overwritten; otherwise until the writes are done).
  constexpr op_ref bulk_commit(src_loc at = src_loc::current()) { return simple(op_kind::bulk_commit, at); }
  constexpr op_ref bulk_wait_read(int n, src_loc at = src_loc::current()) {
    auto r = counted(op_kind::bulk_wait, n, 7, at);
    r.get().flags |= flag_read_only;
    return r;
  }
  constexpr op_ref bulk_wait(int n, src_loc at = src_loc::current()) { return counted(op_kind::bulk_wait, n, 7, at); }

 private:
  kernel_builder* k_;
  std::uint8_t role_;

  // cluster_sum / cluster_max: one op, the reduction in imm[0]
  template <class T>
  constexpr op_ref cluster_reduce(reg_tile<T> tile, reduce_kind how, src_loc at) {
    op o;
    o.kind = op_kind::cluster_reduce;
    o.d = tile.o;
    o.imm[0] = static_cast<int>(how);
    if (k_->p.launch.cluster_size() < 2)
      k_->fail<"instruction.multicast-without-cluster", "cluster_sum / cluster_max need a cluster of 2 or more CTAs: call k.cluster(n) first (value: the cluster size)">(
          k_->p.launch.cluster_size(), at);
    return emit(o, at);
  }

  template <int N, class F>
  constexpr void walk(F& body, std::uint16_t flags, src_loc at) {
    if (!k_->p.has_space()) k_->fail<"ir.no-space", "for_each needs k.parallel(...) first (value: 0)">(0, at);
    op o;
    o.kind = op_kind::tile_loop;
    o.flags = flags;
    const int id = open(o, at);
    call_with_axes(body, space_point<N>{}, std::make_integer_sequence<int, N>{});
    close(id);
  }

  // Selections written on an operand (stage, part, barrier element) are checked as the op is recorded.
  constexpr void check_operand(const operand& o, src_loc at) {
    if (o.kind == operand_kind::none) return;
    if (!o.stage.valid)
      k_->fail<"ir.index-expr", "an index expression is ((c + sum coef*var) / div) % mod: this stage/element index cannot be represented (value: 0)">(0, at);
    if (o.part != part_axis::none) {
      if (!o.part_index.valid)
        k_->fail<"ir.index-expr", "an index expression is ((c + sum coef*var) / div) % mod: this part index cannot be represented (value: 0)">(0, at);
      const plan::extent2 full = plan::full_shape(k_->p, o);
      const int extent = o.part == part_axis::rows ? full.rows : full.cols;
      if (o.parts < 1 || (extent > 0 && extent % o.parts))
        k_->fail<"ir.part-count", "rows(i, n) / cols(i, n) cut a tile into n equal parts: n must divide the extent (value: n)">(o.parts, at);
    }
  }
  constexpr op_ref emit(op o, src_loc at) {
    check_operand(o.d, at);
    check_operand(o.a, at);
    check_operand(o.b, at);
    o.role = role_;
    o.parent = static_cast<std::int16_t>(k_->parent_);
    o.loc = at;
    const int id = k_->template add<"more ops">(k_->p.ops, o, at);
    k_->admit(o.kind, id, at);
    return {k_, id};
  }
  constexpr int open(op o, src_loc at) {
    const int id = emit(o, at).id;
    k_->parent_ = id;
    return id;
  }
  constexpr void close(int id) {
    k_->p.ops[id].end = static_cast<std::int16_t>(k_->p.ops.size());
    k_->parent_ = k_->p.ops[id].parent;
  }
  constexpr op_ref simple(op_kind kind, src_loc at, int imm0 = 0) {
    op o;
    o.kind = kind;
    o.imm[0] = imm0;
    if (kind == op_kind::setmaxnreg) check_regs(imm0, at);
    return emit(o, at);
  }
  constexpr op_ref counted(op_kind kind, int n, int max, src_loc at) {
    if (n < 0 || n > max) k_->fail<"ir.wait-count", "a wait_group count is 0..7 (value: the count)">(n, at);
    return simple(kind, at, n);
  }
  constexpr op_ref move(op_kind kind, operand d, operand a, src_loc at) {
    op o;
    o.kind = kind;
    o.d = d;
    o.a = a;
    return emit(o, at);
  }
  constexpr op_ref arg_reduce(reduce_kind rk, operand value, operand index, operand src, index_expr col0, src_loc at) {
    op o;
    o.kind = op_kind::arg_reduce_rows;
    o.d = value;
    o.a = src;
    o.b = index;
    o.ix = col0;
    o.imm[0] = static_cast<int>(rk);
    if (!col0.valid)
      k_->fail<"ir.index-expr", "an index expression is ((c + sum coef*var) / div) % mod: this column origin cannot be represented (value: 0)">(0, at);
    return emit(o, at);
  }
  // A reduction of an expression: its nodes in imm[1..2] (flag_expr_src); a is its lead leaf, the first
  // register tile of the reduction's rows with more than one column (what the layout and the
  // destination's shape are checked against).
  constexpr op_ref reduce_expr(op_kind kind, reduce_kind rk, operand d, operand index, const rx& e, index_expr col0, src_loc at) {
    op o;
    o.kind = kind;
    o.d = d;
    o.b = index;
    o.ix = col0;
    o.imm[0] = static_cast<int>(rk);
    o.flags |= flag_expr_src;
    const int rows = d.kind == operand_kind::reg && d.index < k_->p.regs.size() ? k_->p.regs[d.index].rows : -1;
    for (int i = 0; i < e.count && o.a.kind == operand_kind::none; ++i)
      if (e.nodes[i].fn == math_fn::tile && e.nodes[i].ref < k_->p.regs.size()) {
        const auto& g = k_->p.regs[e.nodes[i].ref];
        if (g.rows == rows && g.cols > 1) {
          o.a.kind = operand_kind::reg;
          o.a.index = e.nodes[i].ref;
        }
      }
    if (o.a.kind == operand_kind::none && !e.overflow && e.count > 0)
      k_->fail<"ir.reduce-expr", "a row reduction of an expression needs a register tile leaf of the destination's rows and more than one column (value: the destination's rows)">(rows, at);
    if (kind == op_kind::arg_reduce_rows && !col0.valid)
      k_->fail<"ir.index-expr", "an index expression is ((c + sum coef*var) / div) % mod: this column origin cannot be represented (value: 0)">(0, at);
    record_expr(o, e, at, 1);
    return emit(o, at);
  }
  // Appends an expression's nodes to program::exprs; the op refers to them by imm[slot] (first) and
  // imm[slot + 1] (count): slot 0 for r.set and when, 1 for a reduction of an expression.
  constexpr void record_expr(op& o, const rx& e, src_loc at, int slot = 0) {
    if (e.overflow || e.count == 0) {
      k_->fail<"ir.expr-size", "an expression holds at most 24 nodes (value: the nodes this one needs; 0: empty): split it into several r.set(...)">(e.size, at);
      return;
    }
    o.imm[slot] = static_cast<int>(k_->p.exprs.size());
    o.imm[slot + 1] = e.count;
    for (int i = 0; i < e.count; ++i) {
      expr_node n = e.nodes[i];
      for (auto& kid : n.kid)
        if (kid >= 0) kid = static_cast<std::int16_t>(kid + o.imm[slot]);
      if (n.fn == math_fn::index && !n.ix.valid)
        k_->fail<"ir.index-expr", "an index expression is ((c + sum coef*var) / div) % mod: one in this expression cannot be represented (value: 0)">(0, at);
      if (const fma_share sh = fma_share_of(n); sh.d < 1 || sh.d > 32 || sh.n < 0 || sh.n > sh.d)
        k_->fail<"ir.fma-share", "exp2(x, fma_share{n, d}) takes 1 <= d <= 32 and 0 <= n <= d (value: d)">(sh.d, at);
      k_->template add<"more expression nodes (r.set, masks)">(k_->p.exprs, n, at);
    }
  }
  constexpr op_ref reduce(op_kind kind, reduce_kind rk, operand d, operand a, src_loc at) {
    op o;
    o.kind = kind;
    o.d = d;
    o.a = a;
    o.imm[0] = static_cast<int>(rk);
    return emit(o, at);
  }
  constexpr op_ref barrier_op(op_kind kind, mbarrier_ref b, int imm0, src_loc at) {
    op o;
    o.kind = kind;
    o.d.kind = operand_kind::mbarrier;
    o.d.index = b.index;
    o.d.stage = b.elem;
    o.imm[0] = imm0;
    if ((kind == op_kind::mbarrier_arrive_expect_tx || kind == op_kind::mbarrier_expect_tx) && (imm0 < 0 || imm0 >= (1 << 20)))
      k_->fail<"sync.tx-count-range", "an mbarrier tx-count is 0..2^20-1 bytes (value: the bytes)">(imm0, at);
    return emit(o, at);
  }
  constexpr op_ref named_op(op_kind kind, named_barrier_ref b, src_loc at) {
    op o;
    o.kind = kind;
    o.d.kind = operand_kind::named_barrier;
    o.d.index = b.index;
    return emit(o, at);
  }
  constexpr slot pipeline_op(op_kind kind, pipeline_ref pl, src_loc at) {
    op o;
    o.kind = kind;
    o.d.kind = operand_kind::pipeline;
    o.d.index = pl.index;
    const int id = emit(o, at).id;
    return slot{pl.index, static_cast<std::uint16_t>(id), k_};
  }
  // TMA and cp.async move whole boxes (the hardware bounds them by the tensor's extents only).
  template <class T>
  constexpr void no_limit(const global_tile<T>& g, src_loc at) {
    if (g.ref.has_limit())
      k_->fail<"ir.modifier", "limit(pos, end) applies to register loads and stores; a TMA or cp.async box is bounded by the tensor's extents (value: pos)">(
          g.ref.limit_pos, at);
  }
  template <class T>
  constexpr operand global_operand(const global_tile<T>& g, src_loc at) {
    if (g.given != g.ref.rank)
      k_->fail<"ir.tile-rank", "tensor.tile(...) takes one coordinate per dim of the tensor (value: coordinates given)">(g.given, at);
    for (int i = 0; i < g.ref.rank; ++i)
      if (!g.ref.coords[i].valid)
        k_->fail<"ir.index-expr", "an index expression is ((c + sum coef*var) / div) % mod: this one cannot be represented (value: the coordinate's position)">(i, at);
    if (g.ref.row_pos != no_index && g.ref.row_pos + 1 >= g.ref.rank)
      k_->fail<"ir.tile-rows", "rows_at(pos): the rows dim must come before the tensor's last (contiguous) dim (value: pos)">(g.ref.row_pos, at);
    if (g.bad_modifier || (g.ref.elements >> g.ref.rank) != 0 || (g.ref.has_limit() && g.ref.limit_pos >= g.ref.rank))
      k_->fail<"ir.tile-rank", "elements_at(pos) / limit(pos, end): pos must be a dim of the tensor (value: the tensor's rank)">(g.ref.rank, at);
    if (g.ref.has_limit() && (!g.ref.limit.valid || g.ref.limit.uses(var_kind::elem_row) || g.ref.limit.uses(var_kind::elem_col)))
      k_->fail<"ir.index-expr", "limit(pos, end): the end must be a representable index expression of uniform indices (value: 0)">(0, at);
    operand o;
    o.kind = operand_kind::global;
    o.index = static_cast<std::uint8_t>(k_->add_tile_ref(g.ref, at));
    return o;
  }
  template <element_type T>
  constexpr reg_tile<T> add_reg(located_name nm, shape2 s, bool acc) {
    reg_decl d;
    k_->set_name(d.nm, nm.text, nm.loc);
    d.dt = T::value;
    d.rows = s.rows;
    d.cols = s.cols;
    d.role = role_;
    d.scope = decl().unit;
    d.accumulator = acc;
    d.loc = nm.loc;
    if (s.rows <= 0 || s.cols <= 0) k_->fail<"ir.reg-shape", "a register tile needs positive rows and columns (value: rows * cols)">(static_cast<long long>(s.rows) * s.cols, nm.loc);
    reg_tile<T> h;
    h.o.kind = operand_kind::reg;
    h.o.index = static_cast<std::uint8_t>(k_->template add<"more register tiles">(k_->p.regs, d, nm.loc));
    return h;
  }
  constexpr reg_tile<f32> add_topk(located_name nm, int rows, int k, bool largest) {
    reg_tile<f32> h = add_reg<f32>(nm, {rows, 1}, false);
    auto& d = k_->p.regs[h.o.index];
    // k is checked by the analyzer (representation.topk), so that a Program built by other means is too.
    d.topk = static_cast<std::int16_t>(k < 0 ? 0 : k > 32767 ? 32767 : k);
    if (k < 1) d.topk = -1;  // a state all the same, with a k the analyzer refuses
    d.topk_largest = largest;
    return h;
  }
  // "acc" + "bf16" -> "acc.bf16" (the base is shortened so that the suffix always fits).
  static constexpr name suffixed(const name& base, std::string_view suffix) {
    char buf[name::capacity + 1]{};
    std::size_t len = 0;
    const std::size_t keep = name::capacity - 1 - suffix.size();
    for (char c : base.view())
      if (len < keep) buf[len++] = c;
    buf[len++] = '.';
    for (char c : suffix) buf[len++] = c;
    return name{std::string_view{buf, len}};
  }
  constexpr void check_regs(int n, src_loc at) {
    const auto& lim = k_->p.arch().limits;
    if (n % 8 || n < (lim.setmaxnreg_min ? lim.setmaxnreg_min : 24) || n > (lim.setmaxnreg_max ? lim.setmaxnreg_max : 256))
      k_->fail<"resource.setmaxnreg-value", "setmaxnreg takes a multiple of 8 in 24..256 (value: the register count)">(n, at);
  }
  template <class Acc, class A, class B>
  static constexpr void check_mma_types() {
    using TA = element_of<A>;
    using TB = element_of<B>;
    using TD = element_of<Acc>;
    static_assert(std::is_same_v<TA, TB>, "[instruction.mma-dtype-mismatch] the A and B operands of an MMA must have the same dtype");
    static_assert(accumulator_legal(TA::value, TD::value), "[representation.accumulator-dtype] this accumulator dtype is not legal for the operand dtype (bf16/tf32 -> f32; f16/fp8 -> f16 or f32; i8 -> i32)");
  }
  constexpr op_ref mma(op_kind kind, operand d, operand a, operand b, src_loc at) {
    op o;
    o.kind = kind;
    o.d = d;
    o.a = a;
    o.b = b;
    const op_ref r = emit(o, at);
    const auto& t = k_->p.arch();
    const plan::extent2 acc = plan::shape_of(k_->p, d);  // rows and columns after part selection
    if (kind == op_kind::wgmma) {
      if (decl().unit != role_unit::warpgroup)
        k_->fail<"instruction.wgmma-unit", "wgmma is issued by warpgroups: declare the role with warpgroups(n) (value: op#)">(r.id, at);
      if (acc.rows % 64)
        k_->fail<"instruction.mma-shape", "wgmma: the accumulator's rows per warpgroup must be a multiple of 64 (value: rows)">(acc.rows, at);
      if (t.admitted(feature::wgmma) && !mma_shape_legal(t, unit_wgmma, 64, acc.cols))
        k_->fail<"instruction.mma-shape", "wgmma: N (the accumulator's columns) must be 8..256 in steps of 8 (value: N)">(acc.cols, at);
      // Transposed (MN-major) operands exist for 16-bit floats only (hardware-facts §3); B is always in
      // smem, A may be in registers (then it has no major-ness).
      const dtype dt = k_->p.smem[b.index].dt;
      const bool mn = k_->p.smem[b.index].mj == major::mn || (a.kind == operand_kind::smem && k_->p.smem[a.index].mj == major::mn);
      if (mn && !is_16bit_float(dt))
        k_->fail<"instruction.wgmma-major", "wgmma takes MN-major (transposed) operands only for f16/bf16: fp8, tf32 and i8 operands must be K-major (value: op#)">(r.id, at);
      // i8: N is 8, 16, 24, 32, then multiples of 16 (hardware-facts §3).
      if (dt == dtype::i8 && acc.cols > 32 && acc.cols % 16)
        k_->fail<"instruction.mma-shape", "wgmma with i8 operands: N above 32 must be a multiple of 16 (value: N)">(acc.cols, at);
    } else if (kind == op_kind::mma_sync) {
      if (decl().unit != role_unit::warp)
        k_->fail<"instruction.mma-sync-unit", "mma_sync is issued per warp: declare the role with warps(n) (value: op#)">(r.id, at);
      if (acc.rows % 16 || acc.cols % 8)
        k_->fail<"instruction.mma-shape", "mma.sync: a warp's accumulator tile must be a multiple of 16 x 8 (value: rows * 1000 + cols)">(static_cast<long long>(acc.rows) * 1000 + acc.cols, at);
    } else if (kind == op_kind::tcgen05_mma) {
      const plan::extent2 as = plan::shape_of(k_->p, a), bs = plan::shape_of(k_->p, b);
      const int m = (a.kind == operand_kind::smem && k_->p.smem[a.index].mj == major::mn) ? as.cols : as.rows;
      const int n = (k_->p.smem[b.index].mj == major::mn) ? bs.cols : bs.rows;
      if (t.admitted(feature::tcgen05) && !mma_shape_legal(t, unit_tcgen05, m, n))
        k_->fail<"instruction.mma-shape", "tcgen05.mma cta_group::1: M must be 64 or 128 and N 8..256 in steps of 8 (value: M * 1000 + N)">(static_cast<long long>(m) * 1000 + n, at);
    }
    return r;
  }
};

template <class F>
constexpr void kernel_builder::role(std::string_view nm, units_t u, regs_t r, F body, src_loc at) {
  if (role_ >= 0) {
    fail<"ir.nested-role", "roles cannot be declared inside another role's body (value: 0)">(0, at);
    return;
  }
  role_decl d;
  set_name(d.nm, nm, at);
  check_unique(p.roles, d.nm, at);
  d.unit = u.unit;
  d.count = u.count;
  d.regs = r.value;
  d.loc = at;
  if (u.count < 1) fail<"ir.role-size", "a role has at least one warp or warpgroup (value: the count)">(u.count, at);
  const auto& lim = p.arch().limits;
  if (r.value && (r.value % 8 || r.value < 24 || r.value > 256))
    fail<"resource.setmaxnreg-value", "regs(n) sets the role's registers with setmaxnreg: a multiple of 8 in 24..256 (value: n)">(r.value, at);
  else if (r.value && !p.arch().admitted(feature::setmaxnreg))
    fail<"instruction.not-admitted", "regs(n) switches registers with setmaxnreg, which needs sm_90a or sm_100a (value: n)">(r.value, at);
  const int id = add<"more roles">(p.roles, d, at);
  if (p.block_threads() > lim.max_threads_per_block)
    fail<"resource.threads-per-block", "the roles add up to more than 1024 threads per block (value: the threads)">(p.block_threads(), at);
  role_ = id;
  parent_ = -1;
  cake::role rb(this, id);
  body(rb);
  role_ = -1;
  parent_ = -1;
}

}  // namespace cake
