#pragma once
// What the builder hands back: small values naming a resource (and, for operands, which stage and which
// part of it an op uses). Element types are carried in the handle's type so that dtype mismatches are
// type errors; everything else is a value checked by the builder or the analyzer.
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "../core/dtype.hpp"
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
};

template <element_type T>
struct scalar {
  using element = T;
  std::uint8_t index = no_index;
};

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
};

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

// The tiling declared with k.tile(...): extents by name.
struct tiling_ref {
  int m = 0, n = 0, k = 0;
  int extents[4]{};
  constexpr int extent(int axis) const { return extents[axis]; }
};
// Coordinates of the current tile inside for_each_tile.
struct tile_coords {
  index_expr m, n;
  constexpr index_expr operator[](int axis) const { return var_index(var_kind::tile_coord, axis); }
};

// ---- traits used by the builder's checks ---------------------------------------------------------
template <class X> inline constexpr bool is_smem_tile = false;
template <class T> inline constexpr bool is_smem_tile<smem_tile<T>> = true;
template <class X> inline constexpr bool is_reg_tile = false;
template <class T> inline constexpr bool is_reg_tile<reg_tile<T>> = true;
template <class X> inline constexpr bool is_tmem_tile = std::is_same_v<X, tmem_tile>;
template <class X> inline constexpr bool is_global_tile = false;
template <class T> inline constexpr bool is_global_tile<global_tile<T>> = true;

}  // namespace cake
