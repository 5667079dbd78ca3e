#pragma once
// What the builder hands back: small values naming a resource (and, for operands, which stage and which
// part of it an op uses). Element types are carried in the handle's type so that dtype mismatches are
// type errors; everything else is a value checked by the builder or the analyzer.
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "../core/dtype.hpp"
#include "expr.hpp"
#include "index_expr.hpp"
#include "ops.hpp"
#include "resources.hpp"

namespace cake {

class kernel_builder;

// ---- spelled arguments ------------------------------------------------------------------------
struct units_t { role_unit unit; int count; };
constexpr units_t warps(int n) { return {role_unit::warp, n}; }
constexpr units_t warpgroups(int n) { return {role_unit::warpgroup, n}; }
struct regs_t { int value; };
constexpr regs_t regs(int n) { return {n}; }
struct stages_t { int value; };
constexpr stages_t stages(int n) { return {n}; }
struct copies_t { int value; };
constexpr copies_t copies(int n) { return {n}; }
struct arrivals_t { int value; };
constexpr arrivals_t arrivals(int n) { return {n}; }
struct columns_t { int value; };
constexpr columns_t columns(int n) { return {n}; }
struct threads_t { int value; };
constexpr threads_t threads(int n) { return {n}; }
struct per_unit_t {};
inline constexpr per_unit_t per_unit{};
struct shape2 { int rows = 0, cols = 0; };

// ---- tensors and their tiles ----------------------------------------------------------------------
template <element_type T>
struct global_tile {
  global_tile_ref ref{};
  int given = 0;  // coordinates the user wrote (checked against the tensor's rank)
  bool bad_modifier = false;  // elements_at / limit given a position outside the tensor's dims
  // The tile's rows run along the dim at position `pos` of the tensor (default: the second-to-last), e.g.
  // Q[B, S, H, D] tiled as Q.tile(b, q, h, 0).rows_at(1): rows over S, columns over D.
  constexpr global_tile rows_at(int pos) const {
    global_tile g = *this;
    g.ref.row_pos = static_cast<std::uint8_t>(pos < 0 || pos > 254 ? 254 : pos);
    return g;
  }
  // The coordinate at `pos` counts elements, not tiles: the tile starts at that element of the dim
  // (a sequence's first row read from cu_seqlens is no multiple of the tile's rows). Any dim, TMA too.
  constexpr global_tile elements_at(int pos) const {
    global_tile g = *this;
    if (pos >= 0 && pos < dim_list::max_rank) g.ref.elements = static_cast<std::uint8_t>(g.ref.elements | (1u << pos));
    else g.bad_modifier = true;
    return g;
  }
  constexpr global_tile at_all_elements() const {
    global_tile g = *this;
    g.ref.elements = static_cast<std::uint8_t>((1u << g.ref.rank) - 1u);
    return g;
  }
  // Register loads and stores only: elements of the dim at `pos` at or past `end` (an element index)
  // count as outside the tensor: loads fill them, stores skip them (the end of a sequence in a packed batch).
  constexpr global_tile limit(int pos, index_expr end) const {
    global_tile g = *this;
    if (pos >= 0 && pos < dim_list::max_rank) g.ref.limit_pos = static_cast<std::uint8_t>(pos), g.ref.limit = end;
    else g.bad_modifier = true;
    return g;
  }
};

template <element_type T>
struct tensor {
  using element = T;
  std::uint8_t index = no_index;
  std::uint8_t rank = 0;
  // The tile at the given tile coordinates, in units of the tile that moves (one TMA box / smem region).
  template <class... I>
  constexpr global_tile<T> tile(I... coords) const {
    global_tile<T> g;
    g.ref.tensor = index;
    g.ref.rank = rank;
    g.given = static_cast<int>(sizeof...(I));
    int i = 0;
    ((i < dim_list::max_rank ? (void)(g.ref.coords[i++] = index_expr(coords)) : (void)0), ...);
    return g;
  }
  // One element at element coordinates (r.read_index(CuSeq.at(b, 0))).
  template <class... I>
  constexpr global_tile<T> at(I... coords) const {
    return tile(coords...).at_all_elements();
  }
};

template <element_type T>
struct scalar {
  using element = T;
  std::uint8_t index = no_index;
  constexpr operator rx() const { return rx::leaf(math_fn::scalar, index); }
};
template <element_type T>
constexpr rx to_rx(const scalar<T>& s) { return rx::leaf(math_fn::scalar, s.index); }

// ---- operand views: a resource plus which stage and which part -----------------------------------
template <class Derived>
struct operand_view {
  operand o{};
  // Part `i` of `n` equal parts along rows (or columns): e.g. sA.rows(r.warpgroup(), 2).
  constexpr Derived rows(index_expr i, int n) const { return with_part(part_axis::rows, i, n); }
  constexpr Derived cols(index_expr i, int n) const { return with_part(part_axis::cols, i, n); }

 private:
  constexpr Derived with_part(part_axis ax, index_expr i, int n) const {
    Derived d = static_cast<const Derived&>(*this);
    d.o.part = ax;
    d.o.parts = static_cast<std::uint8_t>(n < 0 || n > 255 ? 0 : n);  // 0: out of range, reported by the builder
    d.o.part_index = i;
    return d;
  }
};

template <element_type T>
struct smem_tile : operand_view<smem_tile<T>> {
  using element = T;
  // Stage `i` (taken modulo the region's stages) of a region with several copies.
  constexpr smem_tile stage(index_expr i) const {
    smem_tile s = *this;
    s.o.sel = stage_sel::expr;
    s.o.stage = i;
    return s;
  }
};

template <element_type T>
struct reg_tile : operand_view<reg_tile<T>> {
  using element = T;
  constexpr operator rx() const { return rx::leaf(math_fn::tile, this->o.index); }  // rx v = acc;
};
// Register tiles and scalar parameters are leaves of register expressions (ir/expr.hpp).
template <element_type T>
constexpr rx to_rx(const reg_tile<T>& t) { return rx::leaf(math_fn::tile, t.o.index); }

struct tmem_tile : operand_view<tmem_tile> {
  using element = f32;
};

struct mbarrier_ref {
  std::uint8_t index = no_index;
  // Element i of a barrier array.
  constexpr mbarrier_ref operator[](index_expr i) const {
    mbarrier_ref r = *this;
    r.elem = i;
    return r;
  }
  index_expr elem{};
};
struct named_barrier_ref { std::uint8_t index = no_index; };
struct pipeline_ref { std::uint8_t index = no_index; };

// The stage a pipeline acquire/wait handed out. slot[sA] is region sA in that stage.
struct slot {
  std::uint8_t pipeline = no_index;
  std::uint16_t op = 0;
  kernel_builder* builder = nullptr;
  template <element_type T>
  constexpr smem_tile<T> operator[](smem_tile<T> region) const;  // defined in kernel_builder.hpp
  constexpr tmem_tile operator[](tmem_tile region) const;
};

// ---- dims, the parallel iteration space and loop extents ---------------------------------------------
// Names a dim by handle or by label (resolved by the builder).
struct dim_name_or_ref {
  std::uint8_t index = no_index;
  name nm;
  constexpr dim_name_or_ref(dim_ref d) : index(d.index), nm(d.nm) {}
  constexpr dim_name_or_ref(const char* s) : nm(s) {}
};

// tiles(dim, block): blocks of `block` elements of a dim. A parallel axis (k.parallel(tiles(M, 128), ...))
// or a loop extent (r.loop(tiles(K, 64), ...), which runs ceil(K / 64) times).
struct tiles_t {
  dim_name_or_ref dim;
  int block;
  src_loc loc;
  bool desc = false;
  // As a parallel axis: walked from its last point to its first (e.g. the longest causal attention
  // tiles first). Not a loop extent's property: a loop given one is a build error.
  constexpr tiles_t descending() const {
    tiles_t t = *this;
    t.desc = true;
    return t;
  }
};
constexpr tiles_t tiles(dim_name_or_ref d, int block, src_loc at = src_loc::current()) { return {d, block, at}; }
// each(dim): one index per element of a dim (heads, batch entries).
struct each_t {
  dim_name_or_ref dim;
  src_loc loc;
  bool desc = false;
  constexpr each_t descending() const {  // walked from the dim's last element to its first
    each_t e = *this;
    e.desc = true;
    return e;
  }
};
constexpr each_t each(dim_name_or_ref d, src_loc at = src_loc::current()) { return {d, at}; }
// split(n): n slices of work that no dim names (split-K); the slice index is the axis coordinate.
struct split_t {
  int count;
  src_loc loc;
};
constexpr split_t split(int n, src_loc at = src_loc::current()) { return {n, at}; }

// The parallel iteration space from k.parallel(axes...): N axes, walked by r.for_each.
template <int N>
struct space {
  int extents[N > 0 ? N : 1]{};  // block size of each axis (1 for each(), the slice count for split())
  constexpr int extent(int axis) const { return extents[axis]; }
};
// alternating(space): the units of a role take the CTA's points in turn (unit 0 the first, unit 1 the
// second, ...), e.g. two consumer warpgroups on alternate tiles (ping-pong).
template <int N>
struct alternating_space {
  space<N> s;
};
template <int N>
constexpr alternating_space<N> alternating(space<N> s) { return {s}; }

// The coordinates of the current point of the space inside r.for_each: t[i] is axis i's index.
template <int N>
struct space_point {
  constexpr index_expr operator[](int axis) const { return var_index(var_kind::tile_coord, axis); }
};

// How far a loop runs: up to an index expression, tiles(dim, block) (= ceil(dim / block)), or the
// smaller of two of those (min(q + 1, tiles(T, 128))). The builder resolves dims given by label.
struct loop_extent {
  struct side {
    index_expr e{};
    tiles_t t{"", 0, {}};
    bool is_tiles = false;
  };
  side sides[2]{};
  int count = 1;
  bool too_many = false;  // min() of more than two
  constexpr loop_extent(index_expr e) { sides[0].e = e; }
  constexpr loop_extent(int n) { sides[0].e = index_expr(n); }
  constexpr loop_extent(tiles_t t) {
    sides[0].t = t;
    sides[0].is_tiles = true;
  }
};
constexpr loop_extent min(loop_extent a, loop_extent b) {
  if (a.count + b.count > 2) {
    a.too_many = true;
    return a;
  }
  a.sides[1] = b.sides[0];
  a.count = 2;
  return a;
}

// ---- traits used by the builder's checks ---------------------------------------------------------
template <class X> inline constexpr bool is_smem_tile = false;
template <class T> inline constexpr bool is_smem_tile<smem_tile<T>> = true;
template <class X> inline constexpr bool is_reg_tile = false;
template <class T> inline constexpr bool is_reg_tile<reg_tile<T>> = true;
template <class X> inline constexpr bool is_tmem_tile = std::is_same_v<X, tmem_tile>;
template <class X> inline constexpr bool is_global_tile = false;
template <class T> inline constexpr bool is_global_tile<global_tile<T>> = true;

}  // namespace cake
