#pragma once
// The resources a kernel declares. Each records storage decisions only (dtype, shape, major-ness,
// swizzle, stages); where things live (offsets, barrier addresses, TMEM columns, warp ids) is derived in
// plan/. Every resource records the source line of its declaration.
#include <cstdint>

#include "../core/dtype.hpp"
#include "../core/fixed_string.hpp"
#include "../core/source_location.hpp"
#include "index_expr.hpp"

namespace cake {

inline constexpr std::uint8_t no_index = 0xff;

// ---- kernel parameters ---------------------------------------------------------------------------
enum class dim_mode : std::uint8_t {
  dynamic,      // a runtime argument of every launch
  specialized,  // known when the kernel is JIT-compiled: baked into the generated code (and the cache key)
};
struct dim_decl {
  name nm;
  dim_mode mode = dim_mode::dynamic;
};

// A dim declared with k.dim(name) / k.dims(names...): usable in tensor declarations (dims(M, K)), axes
// (tiles(M, 128)) and index expressions (its run-time extent: M.extent()).
struct dim_ref {
  std::uint8_t index = no_index;
  name nm;
  dim_mode mode = dim_mode::dynamic;
  constexpr index_expr extent() const { return var_index(var_kind::dim, index); }
};

struct dim_spec {  // what the user writes in dims(...): a label (or a dim handle) and a mode
  name nm;
  dim_mode mode = dim_mode::dynamic;
  bool too_long = false;  // the written name did not fit (the builder reports ir.name-too-long)
  src_loc loc;
  constexpr dim_spec() = default;
  constexpr dim_spec(const char* s, src_loc at = src_loc::current()) : loc(at) { too_long = !nm.assign(s); }
  constexpr dim_spec(const char* s, dim_mode m, src_loc at = src_loc::current()) : mode(m), loc(at) { too_long = !nm.assign(s); }
  constexpr dim_spec(name n, dim_mode m) : nm(n), mode(m) {}
  constexpr dim_spec(dim_ref d, src_loc at = src_loc::current()) : nm(d.nm), mode(d.mode), loc(at) {}
};
constexpr dim_spec dyn(const char* s, src_loc at = src_loc::current()) { return {s, dim_mode::dynamic, at}; }
constexpr dim_spec spec(const char* s, src_loc at = src_loc::current()) { return {s, dim_mode::specialized, at}; }

struct dim_list {
  static constexpr int max_rank = 4;
  dim_spec items[max_rank]{};
  int rank = 0;
  bool overflow = false;
};
template <class... D>
constexpr dim_list dims(D... d) {
  dim_list l;
  ((l.rank < dim_list::max_rank ? (void)(l.items[l.rank++] = dim_spec(d)) : (void)(l.overflow = true)), ...);
  return l;
}

// A global tensor: row-major over its dims (the last dim is contiguous); strides of the outer dims are
// runtime arguments, so leading dimensions may exceed the logical extent.
struct tensor_param {
  name nm;
  dtype dt = dtype::f32;
  bool output = false;
  // k.independent_of_previous_grid(t): the kernel before this one in the stream does not write it (nor,
  // for an output, read it), so a programmatically launched kernel may touch it before griddep_wait
  // (weights loaded while the previous layer finishes). A claim about the caller; the analyzer trusts it.
  bool independent = false;
  // k.streamed(t): every byte is read once, and a TMA box's neighbours in memory are loaded by boxes issued
  // with it (a row's other 64-column part), not later: its tensor maps ask for no L2 promotion (the default,
  // 256 bytes, suits tiles whose next K slice is loaded next; decode measured +1.5..4.5% without it).
  bool streamed = false;
  std::uint8_t rank = 0;
  std::uint8_t dims[dim_list::max_rank]{};  // indices into program::dims
  src_loc loc;
};
struct scalar_param {
  name nm;
  dtype dt = dtype::f32;
  src_loc loc;
};

// ---- shared memory -----------------------------------------------------------------------------
enum class swizzle : std::uint8_t { none, b32, b64, b128 };
constexpr int swizzle_bytes(swizzle s) { return s == swizzle::b32 ? 32 : s == swizzle::b64 ? 64 : s == swizzle::b128 ? 128 : 0; }
constexpr const char* to_string(swizzle s) {
  return s == swizzle::b32 ? "32B" : s == swizzle::b64 ? "64B" : s == swizzle::b128 ? "128B" : "none";
}
// The swizzle pattern repeats every 8 rows of the span: a swizzled region must start on that boundary
// (hardware-facts §2: 1024 B for 128B, 512 B for 64B, 256 B for 32B); anything else on 128 B.
constexpr int swizzle_alignment(swizzle s) { return s == swizzle::none ? 128 : 8 * swizzle_bytes(s); }

// Which logical dimension is contiguous for an MMA operand stored in this region.
enum class major : std::uint8_t { k, mn };
constexpr const char* to_string(major m) { return m == major::k ? "k-major" : "mn-major"; }

// A region is a 2-D tile [rows x cols], cols contiguous, optionally in several copies (stages). One
// copy is what one TMA box moves.
struct smem_region {
  name nm;
  dtype dt = dtype::bf16;
  int rows = 0, cols = 0;
  swizzle swz = swizzle::none;
  major mj = major::k;               // declared with major::...; what MMAs use is derived (plan/dims.hpp)
  bool mj_declared = false;
  int stages = 1;                    // copies; set by pipeline(...).carries(...) or .copies(n)
  std::uint8_t pipeline = no_index;  // the pipeline that carries it
  src_loc loc;

  constexpr int bytes_per_stage() const { return rows * cols * size_bits(dt) / 8; }
  constexpr int bytes() const { return bytes_per_stage() * stages; }
  constexpr int inner_bytes() const { return cols * size_bits(dt) / 8; }
};

// ---- tensor memory (sm_100a) --------------------------------------------------------------------
struct tmem_region {
  name nm;
  dtype dt = dtype::f32;
  int columns = 0;  // 32-bit columns per stage
  int lanes = 128;
  int stages = 1;
  std::uint8_t pipeline = no_index;
  src_loc loc;
};

// ---- synchronization --------------------------------------------------------------------------
struct mbarrier_decl {
  name nm;
  int arrivals = 0;  // expected arrivals per phase; 0 = derived from the ops that arrive on it
  int count = 1;     // array of barriers (e.g. one per stage)
  src_loc loc;
};
struct named_barrier_decl {
  name nm;
  int threads = 0;        // 0 = derived from the roles that use it
  bool per_unit = false;  // one hardware barrier per unit (warp/warpgroup) of each role that uses it
  bool turns = false;     // k.turns(...): per unit, taken by its unit and passed by the previous one
  src_loc loc;
};
// A ring of stages handed from producers to consumers. It carries smem regions (filled by TMA, whose
// completion is counted in bytes) and/or TMEM regions (filled by tcgen05.mma, completed by a commit).
struct pipeline_decl {
  name nm;
  int stages = 0;
  std::uint8_t carried[4]{no_index, no_index, no_index, no_index};
  bool carried_tmem[4]{};  // carried[i] indexes program::tmem instead of program::smem
  int carried_count = 0;
  src_loc loc;
};

// ---- warp roles ----------------------------------------------------------------------------
enum class role_unit : std::uint8_t { warp, warpgroup };
struct role_decl {
  name nm;
  role_unit unit = role_unit::warp;
  int count = 1;  // warps or warpgroups
  int regs = 0;   // per-thread register budget set with setmaxnreg; 0 = none
  src_loc loc;
  constexpr int warps() const { return unit == role_unit::warpgroup ? 4 * count : count; }
  constexpr int threads() const { return 32 * warps(); }
};

// ---- register tiles ---------------------------------------------------------------------------
// A tile held in registers by each unit (warp or warpgroup) of one role; accumulators are register
// tiles that MMAs write.
struct reg_decl {
  name nm;
  dtype dt = dtype::f32;
  int rows = 0, cols = 0;
  std::uint8_t role = no_index;
  role_unit scope = role_unit::warpgroup;
  bool accumulator = false;
  // r.topk(...): a per-row top-k state. The tile itself is the R x 1 row vector of each row's current
  // k-th best value (the threshold a new value must beat); the lists (k values and indices per row, and
  // a candidate buffer) live in shared memory the plan derives (plan/fragments.hpp, topk_*).
  std::int16_t topk = 0;      // k (0: an ordinary tile)
  bool topk_largest = false;  // the lists keep the largest values (else the smallest)
  src_loc loc;
};

// ---- iteration space and loops ----------------------------------------------------------------
// The parallel iteration space: the axes the grid (or a persistent walk) covers, outermost last. Dims
// are labels: an axis names the dim it walks, nothing is inferred from a dim's name.
enum class axis_kind : std::uint8_t {
  tiles,  // ceil(dim / extent) blocks of `extent` elements of a dim
  each,   // one index per element of a dim (e.g. a head or batch index)
  split,  // `extent` slices of work with no dim (e.g. split-K)
};
struct parallel_axis {
  axis_kind kind = axis_kind::tiles;
  std::uint8_t dim = 0xff;  // index into program::dims (none for split)
  int extent = 1;           // tiles: block size; split: slice count; each: 1
  bool descending = false;  // the walk visits the axis' points last to first (.descending())
};
struct iteration_space {
  static constexpr int max_axes = 5;
  parallel_axis axes[max_axes]{};
  int count = 0;
  src_loc loc;
};

// The bounds of a sequential loop: i = lo, lo + step, ... while i < min(hi, hi2). Bounds are index
// expressions of the enclosing indices and of dims' run-time extents (e.g. key blocks up to the
// diagonal: min(q + 1, ceil(T / 128))). `dim`/`block` remember a loop written as tiles(dim, block)
// (printing, cost model); they carry no semantics beyond `hi`.
struct loop_bound {
  index_expr lo{};
  index_expr hi{};
  index_expr hi2{};
  bool has_hi2 = false;
  int step = 1;
  std::uint8_t dim = 0xff;  // tiles(dim, block): hi == ceil(dim / block)
  int block = 0;
  // Whether the trip count depends on dim d's extent (tiles(d, b), or a bound that reads it).
  constexpr bool walks_dim(int d) const {
    return dim == d || lo.uses(var_kind::dim, d) || hi.uses(var_kind::dim, d) || (has_hi2 && hi2.uses(var_kind::dim, d));
  }
  // The trip count, ceil((min(hi, hi2) - lo) / step) and at least 0, with value_of(term) giving each variable.
  template <class F>
  constexpr long long trips(F&& value_of) const {
    long long h = hi.eval(value_of);
    if (has_hi2) {
      const long long h2 = hi2.eval(value_of);
      if (h2 < h) h = h2;
    }
    const long long n = h - lo.eval(value_of);
    return n <= 0 ? 0 : (n + step - 1) / step;
  }
};

// ---- launch ------------------------------------------------------------------------------------
enum class raster_order : std::uint8_t { along_m, along_n };
struct raster {
  raster_order order = raster_order::along_m;
  int group = 1;  // tiles of the swizzle group along the order axis; 1 = plain row-major order
  static constexpr raster along_m(int group) { return {raster_order::along_m, group}; }
  static constexpr raster along_n(int group) { return {raster_order::along_n, group}; }
};

// How a persistent walk deals its points to the CTAs, round by round (a round: one point per CTA, in the
// walk's order). strided: CTA i takes point i of every round. serpentine: the odd rounds are dealt in
// reverse (CTA i takes point G - 1 - i of them, G CTAs), so a CTA that took one of a round's first points
// takes one of the next round's last: where work grows or shrinks along the walk (causal attention's
// query tiles), each CTA's sum evens out, and every round still covers the same points (same L2 reuse).
enum class walk_order : std::uint8_t { strided, serpentine };

struct launch_decl {
  int cluster[3] = {1, 1, 1};  // CTAs of a cluster along the parallel axes (x = first axis)
  bool persistent = false;
  raster rast{};
  walk_order order = walk_order::strided;  // (persistent) how the rounds are dealt
  bool manual_barrier_init = false;  // the schedule initializes its own mbarriers (analyzer checks it)
  bool pdl = false;                  // launched with programmatic stream serialization
  // CTAs the schedule means to share an SM (k.ctas_per_sm(n)): ptxas then caps each thread's registers so that n
  // fit (__launch_bounds__(threads, n)), the analyzer checks shared memory and threads for n, and a persistent
  // walk launches n CTAs per SM
  int ctas_per_sm = 1;
  src_loc ctas_loc;
  src_loc cluster_loc;               // where cluster(...) was written (its checks are repeated by build())
  // A split tail (k.split_tail(extent, n)): where the walk's last round is partial, each of its points is split into
  // up to n parts of [0, tail_extent) (as many as the round's idle CTAs allow), one CTA each; 0: not split
  int tail_parts = 0;
  index_expr tail_extent{};
  src_loc tail_loc;
  constexpr bool split_tail() const { return persistent && tail_parts > 1; }
  constexpr int cluster_size() const { return cluster[0] * cluster[1] * cluster[2]; }
};

}  // namespace cake
