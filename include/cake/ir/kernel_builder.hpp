#pragma once
// kernel(...) starts a schedule; its methods declare parameters, tiling, resources and roles, and
// build() returns the Program. Misuse that can be decided while building is reported through
// cake::reject (a compile error naming the rule and a number when the schedule is constexpr) and
// recorded in program::errors otherwise.
#include <array>
#include <string_view>
#include <type_traits>

#include "../core/compile_error.hpp"
#include "../plan/smem_plan.hpp"
#include "../plan/tmem.hpp"
#include "handles.hpp"
#include "program.hpp"

namespace cake {

class role;

class kernel_builder {
 public:
  program p{};
  int role_ = -1;    // role whose body is being recorded
  int parent_ = -1;  // innermost open control op

  constexpr explicit kernel_builder(std::string_view nm, src_loc at) {
    p.loc = at;
    set_name(p.kernel_name, nm, p.loc);
    check_kernel_name(nm, at);
  }
  // The kernel's name is its entry symbol (extern "C" in the generated source, looked up by that name at
  // launch): a name NVRTC cannot compile must not pass the analyzer and fail at lowering.
  constexpr void check_kernel_name(std::string_view nm, src_loc at) {
    for (std::size_t i = 0; i < nm.size(); ++i) {
      const char ch = nm[i];
      const bool letter = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_', digit = ch >= '0' && ch <= '9';
      if (!letter && !(digit && i > 0))
        return fail<"ir.kernel-name", "a kernel's name is its entry symbol: letters, digits and '_', starting with a letter (value: the position of the first character that is not)">(
            static_cast<long long>(i), at);
    }
    if (nm.empty()) return fail<"ir.kernel-name", "a kernel's name is its entry symbol: it cannot be empty (value: 0)">(0, at);
    if (nm[0] == '_') return fail<"ir.kernel-name", "a kernel's name is its entry symbol: a leading '_' is reserved (value: 0)">(0, at);
    constexpr std::string_view keywords[] = {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char", "char8_t",
        "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit", "const_cast", "continue",
        "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit",
        "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
        "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
        "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
        "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned",
        "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
    for (std::size_t i = 0; i < sizeof keywords / sizeof keywords[0]; ++i)
      if (nm == keywords[i])
        return fail<"ir.kernel-name", "a kernel's name is its entry symbol: it cannot be a C++ keyword (value: the keyword's index in Cake's list)">(
            static_cast<long long>(i), at);
  }

  // ---- error funnel ---------------------------------------------------------------------------
  template <fixed_string Rule, fixed_string Message>
  constexpr void fail(long long value, src_loc at) {
    reject<Rule, Message>(value);
    // build() repeats the target-dependent checks; the same finding at the same place is kept once.
    for (const auto& e : p.errors)
      if (e.rule == Rule.view() && e.message == Message.view() && e.value == value && e.loc.line == at.line && e.loc.column == at.column) return;
    if (!p.errors.push_back({Rule.view(), Message.view(), value, at})) ++p.errors_dropped;
  }
  constexpr void set_name(name& dst, std::string_view s, src_loc at) {
    if (!dst.assign(s)) fail<"ir.name-too-long", "names are at most 31 characters (value: the name's length)">(static_cast<long long>(s.size()), at);
  }
  // Names identify resources in diagnostics and in generated code: unique within their kind.
  template <class Vec>
  constexpr void check_unique(const Vec& v, const name& n, src_loc at) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i].nm == n && !n.empty())
        fail<"ir.duplicate-name", "another resource of this kind already has this name (value: the index of the first one)">(static_cast<long long>(i), at);
  }
  // `What` names the kind in the error ("more tensors"), so that a full Program says which of its capacities
  // (program.hpp, capacity::) the schedule ran past.
  template <fixed_string What, class Vec>
  constexpr int add(Vec& v, const typename std::remove_cvref_t<decltype(v[0])>& item, src_loc at) {
    if (!v.push_back(item)) {
      fail<"ir.capacity", concat<What, " than a Program holds (value: the capacity)">()>(static_cast<long long>(v.capacity()), at);
      return 0;
    }
    return static_cast<int>(v.size()) - 1;
  }

  // ---- kernel-level settings -----------------------------------------------------------------
  constexpr kernel_builder& target(target_id t) {
    p.target = t;
    return *this;
  }
  // CTAs per cluster along the tiling's first parallel axis (e.g. M); y and z must be 1.
  constexpr kernel_builder& cluster(int x, int y = 1, int z = 1, src_loc at = src_loc::current()) {
    p.launch.cluster[0] = x;
    p.launch.cluster[1] = y;
    p.launch.cluster[2] = z;
    p.launch.cluster_loc = at;
    check_cluster(at);
    return *this;
  }
  constexpr void check_cluster(src_loc at) {
    const int x = p.launch.cluster[0], y = p.launch.cluster[1], z = p.launch.cluster[2];
    const int size = x * y * z;
    if (x < 1 || y < 1 || z < 1) fail<"resource.cluster-size", "cluster dimensions must be at least 1 (value: the cluster size)">(size, at);
    // The grid plan, the tile loop and multicast all group a cluster's CTAs along the first parallel
    // axis; a shape along the others would be laid out as if it were along M, so it is refused.
    else if (y != 1 || z != 1)
      fail<"resource.cluster-shape", "a cluster groups CTAs along the tiling's first parallel axis: write cluster(n) (value: y * z)">(static_cast<long long>(y) * z, at);
    else if (size > 1 && !p.arch().admitted(feature::cluster))
      fail<"instruction.not-admitted", "clusters need sm_90a or sm_100a; this kernel's target has none (value: the cluster size)">(size, at);
    else if (size > p.arch().limits.max_cluster_nonportable)
      fail<"resource.cluster-size", "a cluster holds at most 16 CTAs (8 portable) (value: the cluster size)">(size, at);
  }
  constexpr kernel_builder& persistent(raster r = raster::along_m(8), walk_order order = walk_order::strided) {
    p.launch.persistent = true;
    p.launch.rast = r;
    p.launch.order = order;
    return *this;
  }
  // A stream-K tail for a persistent walk: where the walk's last round leaves CTAs idle (points % CTAs = rest > 0
  // and at least one whole round before it), each of the rest points is split into parts = min(n, CTAs / rest,
  // extent) parts of the range [0, extent) (an expression of dims: a tile's key blocks, a GEMM's K blocks), one
  // CTA each, so the last round is as wide as the GPU. Each role reads its part with r.part_begin() / r.part_end()
  // (the whole range at every other point), r.walk_part() / r.walk_parts() (0 of 1 there) and r.tail_unit() (the
  // part's index in the tail, for its partial result), and combines the parts: the last to arrive (r.count_arrival
  // with the count r.walk_parts()), or a later kernel that declares the same walk (the prefill's tail combine).
  constexpr kernel_builder& split_tail(index_expr extent, int n, src_loc at = src_loc::current()) {
    if (n < 2 || n > 1024) fail<"ir.split-tail", "k.split_tail(extent, n) splits a point into at most n parts: n must be in 2..1024 (value: n)">(n, at);
    if (!extent.valid) fail<"ir.split-tail", "k.split_tail(extent, n): the extent cannot be represented as an index expression (value: 0)">(0, at);
    for (int i = 0; i < extent.term_count; ++i)
      if (extent.terms[i].kind != var_kind::dim)
        fail<"ir.split-tail", "k.split_tail(extent, n): the extent is the same at every point, an expression of dims only (value: the term's position)">(i, at);
    p.launch.tail_parts = n;
    p.launch.tail_extent = extent;
    p.launch.tail_loc = at;
    return *this;
  }
  // n CTAs of this kernel share an SM: registers are capped for it at lowering (ptxas: __launch_bounds__(threads,
  // n)), and `resource.ctas-per-sm` checks that n blocks' shared memory and threads fit (docs/language.md)
  constexpr kernel_builder& ctas_per_sm(int n, src_loc at = src_loc::current()) {
    p.launch.ctas_per_sm = n;
    p.launch.ctas_loc = at;
    return *this;
  }
  constexpr kernel_builder& programmatic_launch() {
    p.launch.pdl = true;
    return *this;
  }
  // The schedule writes its own mbarrier init, fence.mbarrier_init and cluster sync (the analyzer
  // checks them); by default Cake derives them.
  constexpr kernel_builder& manual_barrier_init() {
    p.launch.manual_barrier_init = true;
    return *this;
  }

  // ---- parameters ------------------------------------------------------------------------------
  template <element_type T>
  constexpr tensor<T> input(std::string_view nm, dim_list d, src_loc at = src_loc::current()) {
    return add_tensor<T>(nm, d, false, at);
  }
  template <element_type T>
  constexpr tensor<T> output(std::string_view nm, dim_list d, src_loc at = src_loc::current()) {
    return add_tensor<T>(nm, d, true, at);
  }
  // With programmatic_launch(): `t` is not written by the previous kernel in the stream (nor read, if this
  // kernel writes it), so its role may access it before griddep_wait() (sync.griddep-missing exempts it).
  template <element_type T>
  constexpr kernel_builder& independent_of_previous_grid(tensor<T> t) {
    if (t.index < p.tensors.size()) p.tensors[t.index].independent = true;
    return *this;
  }
  // `t` is streamed: read once, each TMA box's neighbours loaded with it (tensor_param::streamed). The
  // runtime encodes its tensor maps without L2 promotion. A performance hint; correctness does not depend on it.
  template <element_type T>
  constexpr kernel_builder& streamed(tensor<T> t) {
    if (t.index < p.tensors.size()) p.tensors[t.index].streamed = true;
    return *this;
  }
  template <element_type T>
  constexpr scalar<T> param(std::string_view nm, src_loc at = src_loc::current()) {
    scalar_param s;
    set_name(s.nm, nm, at);
    check_unique(p.scalars, s.nm, at);
    s.dt = T::value;
    s.loc = at;
    return {static_cast<std::uint8_t>(add<"more scalar parameters (k.param)">(p.scalars, s, at))};
  }

  // ---- dims and the parallel iteration space ----------------------------------------------------
  // A dim by label: k.dim("T"), k.dim("D", dim_mode::specialized). Tensors declared over the same label
  // share the dim. Labels carry no meaning: nothing is inferred from a dim's name.
  constexpr dim_ref dim(std::string_view nm, dim_mode mode = dim_mode::dynamic, src_loc at = src_loc::current()) {
    dim_ref d;
    set_name(d.nm, nm, at);
    d.mode = mode;
    int idx = p.find_dim(d.nm.view());
    if (idx < 0) idx = add<"more dims">(p.dims, dim_decl{d.nm, mode}, at);
    else if (p.dims[idx].mode != mode)
      fail<"ir.dim-mode-conflict", "a dim is dynamic in one declaration and specialized in another (value: the dim's index)">(idx, at);
    d.index = static_cast<std::uint8_t>(idx);
    return d;
  }
  // Several dims at once: auto [M, N, K] = k.dims("M", "N", "K"); spec("D") makes one specialized.
  template <class... S>
  constexpr std::array<dim_ref, sizeof...(S)> dims(S... specs) {
    return {dim_of(dim_spec(specs))...};
  }
  constexpr dim_ref dim_of(const dim_spec& s) {
    if (s.too_long) fail<"ir.name-too-long", "dim names are at most 31 characters (value: 0)">(0, s.loc);
    return dim(s.nm.view(), s.mode, s.loc);
  }
  // The dim a handle or label names; -1 (and an error) when the label was never declared.
  constexpr int resolve_dim(const dim_name_or_ref& d, src_loc at) {
    if (d.index != no_index && d.index < p.dims.size()) return d.index;
    const int i = p.find_dim(d.nm.view());
    if (i < 0) fail<"ir.unknown-dim", "no tensor or k.dim(...) declares a dim with this label (value: 0)">(0, at);
    return i;
  }

  // The parallel iteration space: k.parallel(tiles(M, 128), tiles(N, 256)), k.parallel(tiles(S, 128),
  // each(H), each(B)), k.parallel(tiles(M, 64), tiles(N, 128), split(4)). The grid (or a persistent
  // walk, see persistent()) covers every point once; clusters group CTAs along the first axis.
  template <class A0, class... A>
  constexpr space<static_cast<int>(1 + sizeof...(A))> parallel(A0 first, A... axes) {
    const src_loc at = first.loc;
    if (p.space.count != 0) fail<"ir.space-redeclared", "a kernel has one parallel iteration space (value: axes declared before)">(p.space.count, at);
    if (1 + sizeof...(A) > iteration_space::max_axes)
      fail<"ir.space-axes", "a parallel iteration space has 1..5 axes (value: axes given)">(static_cast<long long>(1 + sizeof...(A)), at);
    // Reset field by field: assigning a temporary iteration_space{} here makes g++ 12 crash
    // (internal compiler error in gimple_add_tmp_var) once two instantiations of parallel() meet in a TU.
    for (auto& ax : p.space.axes) ax = parallel_axis{};
    p.space.count = 0;
    p.space.loc = at;
    space<static_cast<int>(1 + sizeof...(A))> sp;
    sp.extents[0] = add_axis(first);
    int i = 1;
    ((i < iteration_space::max_axes ? (void)(sp.extents[i] = add_axis(axes), ++i) : (void)0), ...);
    return sp;
  }

 private:
  constexpr int push_axis(parallel_axis ax, src_loc at) {
    if (ax.extent < 1) fail<"ir.tile-extent", "an axis' block size or slice count must be positive (value: the extent)">(ax.extent, at);
    p.space.axes[p.space.count++] = ax;
    return ax.extent;
  }
  constexpr int add_axis(tiles_t t) {
    const int d = resolve_dim(t.dim, t.loc);
    return push_axis({axis_kind::tiles, static_cast<std::uint8_t>(d < 0 ? 0 : d), t.block, t.desc}, t.loc);
  }
  constexpr int add_axis(each_t e) {
    const int d = resolve_dim(e.dim, e.loc);
    return push_axis({axis_kind::each, static_cast<std::uint8_t>(d < 0 ? 0 : d), 1, e.desc}, e.loc);
  }
  constexpr int add_axis(split_t s) { return push_axis({axis_kind::split, no_index, s.count}, s.loc); }
  template <class Other>
  static constexpr int add_axis(Other) {
    static_assert(sizeof(Other) == 0, "[ir.space-axes] k.parallel(...) takes tiles(dim, block), each(dim) and split(n)");
    return 0;
  }

 public:
  // A loop extent as the bounds of a dynamic loop (tiles(dim, block) becomes ceil(dim / block)).
  constexpr index_expr resolve_extent_side(const loop_extent::side& s, loop_bound& b, src_loc at) {
    if (!s.is_tiles) return s.e;
    if (s.t.desc) fail<"ir.descending-loop", "descending() orders a parallel axis' walk; a loop runs its indices upward (value: the block size)">(s.t.block, at);
    const int d = resolve_dim(s.t.dim, at);
    if (s.t.block < 1 || s.t.block > 32767) {
      fail<"ir.tile-extent", "tiles(dim, block) needs a block size in 1..32767 (value: the block size)">(s.t.block, at);
      return index_expr(0);
    }
    b.dim = static_cast<std::uint8_t>(d < 0 ? 0 : d);
    b.block = s.t.block;
    return (var_index(var_kind::dim, d < 0 ? 0 : d) + (s.t.block - 1)) / s.t.block;
  }

  // ---- shared memory ---------------------------------------------------------------------------
  // k.smem<bf16>("sA", {128, 64}, swizzle::b128 [, major::mn] [, copies(n)])
  template <element_type T, class... Opt>
  constexpr smem_tile<T> smem(located_name nm_at, shape2 shape, Opt... opts) {
    const std::string_view nm = nm_at.text;
    const src_loc at = nm_at.loc;
    smem_region r;
    set_name(r.nm, nm, at);
    check_unique(p.smem, r.nm, at);
    r.dt = T::value;
    r.rows = shape.rows;
    r.cols = shape.cols;
    r.loc = at;
    (apply_smem_option(r, opts), ...);
    if (r.rows <= 0 || r.cols <= 0) fail<"ir.smem-shape", "an smem tile needs positive rows and columns (value: rows * cols)">(static_cast<long long>(r.rows) * r.cols, at);
    if (r.stages < 1 || r.stages > 32) fail<"ir.stages", "copies/stages must be in 1..32 (value: the count)">(r.stages, at);
    const int span = swizzle_bytes(r.swz);
    if (span && r.inner_bytes() > span) {
      switch (r.swz) {
        case swizzle::b32: fail<"representation.swizzle-span", "the tile's inner extent is wider than its 32B swizzle span (value: inner extent in bytes)">(r.inner_bytes(), at); break;
        case swizzle::b64: fail<"representation.swizzle-span", "the tile's inner extent is wider than its 64B swizzle span (value: inner extent in bytes)">(r.inner_bytes(), at); break;
        default: fail<"representation.swizzle-span", "the tile's inner extent is wider than its 128B swizzle span (value: inner extent in bytes)">(r.inner_bytes(), at); break;
      }
    }
    if (r.inner_bytes() % 16) fail<"representation.inner-bytes", "an smem tile row must be a multiple of 16 bytes for TMA and ldmatrix (value: row bytes)">(r.inner_bytes(), at);
    smem_tile<T> h;
    h.o.kind = operand_kind::smem;
    h.o.index = static_cast<std::uint8_t>(add<"more smem regions">(p.smem, r, at));
    return h;
  }

  // ---- tensor memory (sm_100a) -------------------------------------------------------------------
  constexpr tmem_tile tmem(std::string_view nm, columns_t cols, src_loc at = src_loc::current()) {
    if (!p.arch().admitted(feature::tcgen05))
      fail<"instruction.tmem-off-sm100a", "tensor memory exists only on sm_100a; this kernel's target has none (value: the columns asked for)">(cols.value, at);
    const int lim = p.arch().limits.tmem_columns ? p.arch().limits.tmem_columns : 512;
    if (cols.value < 1 || cols.value > lim)
      fail<"memory.tmem-columns", "a TMEM region holds 1..512 32-bit columns (value: the columns asked for)">(cols.value, at);
    tmem_region t;
    set_name(t.nm, nm, at);
    check_unique(p.tmem, t.nm, at);
    t.columns = cols.value;
    t.loc = at;
    tmem_tile h;
    h.o.kind = operand_kind::tmem;
    h.o.index = static_cast<std::uint8_t>(add<"more TMEM regions">(p.tmem, t, at));
    return h;
  }

  // ---- barriers and pipelines ---------------------------------------------------------------------
  // arrivals(0) (the default) lets Cake derive the count from the ops that arrive on it.
  constexpr mbarrier_ref mbarrier(std::string_view nm, arrivals_t arr = {0}, int count = 1,
                                  src_loc at = src_loc::current()) {
    mbarrier_decl b;
    set_name(b.nm, nm, at);
    check_unique(p.mbarriers, b.nm, at);
    b.arrivals = arr.value;
    b.count = count;
    b.loc = at;
    if (arr.value < 0 || arr.value >= (1 << 20)) fail<"sync.arrival-count-range", "an mbarrier expects 1..2^20-1 arrivals (value: the count)">(arr.value, at);
    if (count < 1 || count > 32) fail<"ir.barrier-array", "an mbarrier array holds 1..32 barriers (value: the count)">(count, at);
    return {static_cast<std::uint8_t>(add<"more mbarriers">(p.mbarriers, b, at))};
  }
  constexpr named_barrier_ref named_barrier(std::string_view nm, threads_t t = {0}, src_loc at = src_loc::current()) {
    return add_named_barrier(nm, t.value, false, at);
  }
  // One hardware barrier per unit (warp or warpgroup) of each role that uses it, e.g. an epilogue
  // barrier private to each consumer warpgroup.
  constexpr named_barrier_ref named_barrier(std::string_view nm, per_unit_t, src_loc at = src_loc::current()) {
    return add_named_barrier(nm, 0, true, at);
  }
  // Turns: ordered sections between the units of a role (r.take_turn / r.pass_turn), e.g. ping-pong
  // consumers issuing their MMAs one after the other. One hardware barrier per unit; derived.
  constexpr named_barrier_ref turns(std::string_view nm, src_loc at = src_loc::current()) {
    auto r = add_named_barrier(nm, 0, true, at);
    p.named_barriers[r.index].turns = true;
    return r;
  }

  struct pipeline_builder {
    kernel_builder* k;
    std::uint8_t index;
    src_loc at;
    // The regions whose stages this pipeline hands out; each gets the pipeline's stage count.
    template <class... R>
    constexpr pipeline_ref carries(R... regions) {
      static_assert(((is_smem_tile<R> || is_tmem_tile<R>) && ...),
                    "[memory.operand-space] a pipeline carries smem regions (k.smem) or TMEM regions (k.tmem)");
      (k->carry(index, regions.o, at), ...);
      return {index};
    }
  };
  constexpr pipeline_builder pipeline(std::string_view nm, stages_t s, src_loc at = src_loc::current()) {
    pipeline_decl d;
    set_name(d.nm, nm, at);
    check_unique(p.pipelines, d.nm, at);
    d.stages = s.value;
    d.loc = at;
    if (s.value < 1 || s.value > 16) fail<"ir.stages", "a pipeline has 1..16 stages (value: the count)">(s.value, at);
    return {this, static_cast<std::uint8_t>(add<"more pipelines">(p.pipelines, d, at)), at};
  }
  constexpr void carry(std::uint8_t pipe, const operand& region, src_loc at) {
    auto& d = p.pipelines[pipe];
    const bool tmem = region.kind == operand_kind::tmem;
    std::uint8_t& owner = tmem ? p.tmem[region.index].pipeline : p.smem[region.index].pipeline;
    if (owner != no_index) {
      fail<"ir.region-in-two-pipelines", "a region is carried by at most one pipeline (value: the region's index)">(region.index, at);
      return;
    }
    if (d.carried_count == 4) {
      fail<"ir.capacity", "a pipeline carries at most 4 regions (value: the capacity)">(4, at);
      return;
    }
    // A region's copies are the pipeline's stages: a different copies(n) written on the region is a
    // contradiction, not something to resolve silently.
    const int declared = tmem ? p.tmem[region.index].stages : p.smem[region.index].stages;
    if (declared != 1 && declared != d.stages)
      fail<"ir.carried-copies", "a region carried by a pipeline gets the pipeline's stages: drop its copies(n) (value: the copies written)">(declared, at);
    d.carried_tmem[d.carried_count] = tmem;
    d.carried[d.carried_count++] = region.index;
    owner = pipe;
    if (tmem) p.tmem[region.index].stages = d.stages;
    else p.smem[region.index].stages = d.stages;
  }

  // ---- roles -------------------------------------------------------------------------------------
  template <class F>
  constexpr void role(std::string_view nm, units_t u, regs_t r, F body, src_loc at = src_loc::current());
  template <class F>
  constexpr void role(std::string_view nm, units_t u, F body, src_loc at = src_loc::current()) {
    role(nm, u, regs_t{0}, body, at);
  }

  // ---- finish ----------------------------------------------------------------------------------------
  constexpr program build(src_loc at = src_loc::current()) {
    if (p.roles.empty()) fail<"ir.no-roles", "a kernel needs at least one role (value: 0 roles)">(0, at);
    const auto smem = plan::plan_smem(p);
    if (!smem.fits()) {
      switch (p.target) {
        case target_id::sm_80: fail<"resource.smem-overflow", "the schedule needs more shared memory than sm_80 allows per block, 166912 bytes (value: bytes needed)">(smem.total, at); break;
        case target_id::sm_90a: fail<"resource.smem-overflow", "the schedule needs more shared memory than sm_90a allows per block, 232448 bytes (value: bytes needed)">(smem.total, at); break;
        default: fail<"resource.smem-overflow", "the schedule needs more shared memory than sm_100a allows per block, 232448 bytes (value: bytes needed)">(smem.total, at); break;
      }
    }
    const auto tm = plan::plan_tmem(p);
    if (tm.used > p.arch().limits.tmem_columns && p.arch().admitted(feature::tcgen05))
      fail<"resource.tmem-overflow", "the TMEM regions (columns x stages) need more than the 512 columns of tensor memory (value: columns needed)">(tm.used, at);
    // Admission is checked as things are declared; a target set afterwards (kernel(...).cluster(2)
    // .target(sm_80)) is checked here, so the order of the kernel-level calls does not matter.
    check_cluster(p.launch.cluster_loc.known() ? p.launch.cluster_loc : at);
    if (p.launch.tail_parts > 0 && !p.launch.persistent)
      fail<"ir.split-tail", "k.split_tail(...) splits the last round of a persistent walk: call k.persistent(...) too (value: n)">(p.launch.tail_parts, p.launch.tail_loc);
    if (p.launch.tail_parts > 0 && p.launch.cluster_size() > 1)
      fail<"ir.split-tail", "k.split_tail(...) with a cluster: the tail's parts are walked one per CTA, not per cluster (value: the cluster size)">(p.launch.cluster_size(), p.launch.tail_loc);
    if (!p.arch().admitted(feature::tcgen05))
      for (const auto& t : p.tmem)
        fail<"instruction.tmem-off-sm100a", "tensor memory exists only on sm_100a; this kernel's target has none (value: the columns asked for)">(t.columns, t.loc);
    if (!p.arch().admitted(feature::setmaxnreg))
      for (const auto& r : p.roles)
        if (r.regs) fail<"instruction.not-admitted", "regs(n) switches registers with setmaxnreg, which needs sm_90a or sm_100a (value: n)">(r.regs, r.loc);
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      admit(p.ops[i].kind, static_cast<int>(i), p.ops[i].loc);
      if (p.ops[i].has(flag_multicast) && p.launch.cluster_size() < 2)
        fail<"instruction.multicast-without-cluster", "multicast needs a cluster of 2 or more CTAs: call k.cluster(...) first (value: op#)">(static_cast<long long>(i), p.ops[i].loc);
    }
    return p;
  }

  // ---- used by role ----------------------------------------------------------------------
  constexpr void admit(op_kind k, int op_id, src_loc at);
  constexpr int add_tile_ref(const global_tile_ref& r, src_loc at) { return add<"more tensor tiles named by ops (T.tile(...), T.at(...))">(p.tile_refs, r, at); }

 private:
  template <element_type T>
  constexpr tensor<T> add_tensor(std::string_view nm, dim_list d, bool output, src_loc at) {
    tensor_param t;
    set_name(t.nm, nm, at);
    check_unique(p.tensors, t.nm, at);
    t.dt = T::value;
    t.output = output;
    t.loc = at;
    if (d.overflow || d.rank == 0) fail<"ir.tensor-rank", "a tensor has 1..4 dims (value: dims given, 0 when more than 4)">(d.overflow ? 0 : d.rank, at);
    t.rank = static_cast<std::uint8_t>(d.rank);
    for (int i = 0; i < d.rank; ++i) {
      if (d.items[i].too_long)
        fail<"ir.name-too-long", "dim names are at most 31 characters (value: the dim's position in this tensor)">(i, at);
      int idx = p.find_dim(d.items[i].nm.view());
      if (idx < 0) {
        idx = add<"more dims">(p.dims, dim_decl{d.items[i].nm, d.items[i].mode}, at);
      } else if (p.dims[idx].mode != d.items[i].mode) {
        fail<"ir.dim-mode-conflict", "a dim is dynamic in one tensor and specialized in another (value: the dim's position in this tensor)">(i, at);
      }
      t.dims[i] = static_cast<std::uint8_t>(idx);
    }
    tensor<T> h;
    h.index = static_cast<std::uint8_t>(add<"more tensors">(p.tensors, t, at));
    h.rank = t.rank;
    return h;
  }
  constexpr named_barrier_ref add_named_barrier(std::string_view nm, int threads, bool per_unit, src_loc at) {
    named_barrier_decl b;
    set_name(b.nm, nm, at);
    check_unique(p.named_barriers, b.nm, at);
    b.threads = threads;
    b.per_unit = per_unit;
    b.loc = at;
    if (threads < 0 || threads % 32 || threads > 1024)
      fail<"sync.named-barrier-count", "a named barrier's thread count is a multiple of 32 up to 1024 (value: the count)">(threads, at);
    return {static_cast<std::uint8_t>(add<"more named barriers">(p.named_barriers, b, at))};
  }
  static constexpr void apply_smem_option(smem_region& r, swizzle s) { r.swz = s; }
  static constexpr void apply_smem_option(smem_region& r, major m) {
    r.mj = m;
    r.mj_declared = true;
  }
  static constexpr void apply_smem_option(smem_region& r, copies_t c) { r.stages = c.value; }
  // Anything else (e.g. stages(n), which belongs to pipelines) gets a message instead of an overload list.
  template <class Other>
  static constexpr void apply_smem_option(smem_region&, Other) {
    static_assert(sizeof(Other) == 0, "[ir.smem-option] k.smem<T>(name, {rows, cols}, ...) takes swizzle::..., major::... and copies(n); stages come from k.pipeline(...).carries(...)");
  }
};

constexpr void kernel_builder::admit(op_kind k, int op_id, src_loc at) {
  const feature f = info(k).needs;
  if (f == feature::count_ || p.arch().admitted(f)) return;
  switch (f) {
    case feature::wgmma: fail<"instruction.not-admitted", "wgmma exists only on sm_90a (value: op#)">(op_id, at); break;
    case feature::tcgen05: fail<"instruction.not-admitted", "tcgen05 and tensor memory exist only on sm_100a (value: op#)">(op_id, at); break;
    case feature::tma: fail<"instruction.not-admitted", "TMA (cp.async.bulk.tensor) needs sm_90a or sm_100a (value: op#)">(op_id, at); break;
    case feature::tma_multicast: fail<"instruction.not-admitted", "TMA multicast needs sm_90a or sm_100a (value: op#)">(op_id, at); break;
    case feature::stmatrix: fail<"instruction.not-admitted", "stmatrix needs sm_90a or sm_100a (value: op#)">(op_id, at); break;
    case feature::cluster: fail<"instruction.not-admitted", "cluster operations need sm_90a or sm_100a (value: op#)">(op_id, at); break;
    case feature::setmaxnreg: fail<"instruction.not-admitted", "setmaxnreg needs sm_90a or sm_100a (value: op#)">(op_id, at); break;
    case feature::mbarrier_tx: fail<"instruction.not-admitted", "mbarrier expect_tx needs sm_90a or sm_100a (value: op#)">(op_id, at); break;
    case feature::mbarrier_try_wait: fail<"instruction.not-admitted", "mbarrier.try_wait needs sm_90a or sm_100a (value: op#)">(op_id, at); break;
    case feature::griddepcontrol: fail<"instruction.not-admitted", "griddepcontrol needs sm_90a or sm_100a (value: op#)">(op_id, at); break;
    case feature::fence_proxy_async: fail<"instruction.not-admitted", "fence.proxy.async needs sm_90a or sm_100a (value: op#)">(op_id, at); break;
    default: fail<"instruction.not-admitted", "this op's instruction family is not admitted by the kernel's target (value: op#)">(op_id, at); break;
  }
}

// Start a schedule: auto k = cake::kernel("gemm_bf16").target(cake::sm_90a);
constexpr kernel_builder kernel(std::string_view nm, src_loc at = src_loc::current()) {
  return kernel_builder(nm, at);
}

template <element_type T>
constexpr smem_tile<T> slot::operator[](smem_tile<T> region) const {
  smem_tile<T> s = region;
  const auto& r = builder->p.smem[region.o.index];
  if (r.pipeline != pipeline)
    builder->fail<"ir.slot-region", "slot[region]: the region is not carried by this slot's pipeline (value: op# of the acquire/wait)">(op, builder->p.ops[op].loc);
  s.o.sel = stage_sel::slot;
  s.o.slot_op = op;
  return s;
}
constexpr tmem_tile slot::operator[](tmem_tile region) const {
  tmem_tile s = region;
  if (builder->p.tmem[region.o.index].pipeline != pipeline)
    builder->fail<"ir.slot-region", "slot[region]: the region is not carried by this slot's pipeline (value: op# of the acquire/wait)">(op, builder->p.ops[op].loc);
  s.o.sel = stage_sel::slot;
  s.o.slot_op = op;
  return s;
}

}  // namespace cake
