#pragma once
// From a Program to a launch: lower it, JIT-compile it (cached), load it on a device, and launch it
// on tensors. The parameter block is packed from the same layout the emitter printed
// (lower/args_layout.hpp), TMA descriptors are encoded from the plan's descriptor list, and the grid
// comes from plan::plan_grid. Every mismatch between the arguments and the schedule (rank, a dim that
// two tensors disagree on, a specialized dim with another value) is an error naming the tensor and dim.
#include <array>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "../jit.hpp"
#include "../lower/lower.hpp"
#include "../plan/grid.hpp"

namespace cake {

// A tensor argument: a device address, the extent of each dim (in the order the schedule declared
// them, outermost first) and the element stride of each dim (innermost stride 1; default: packed).
struct tensor_arg {
  static constexpr int max_rank = dim_list::max_rank;  // a schedule's tensors have at most this many dims
  const void* ptr = nullptr;
  int rank = 0;
  long long dims[max_rank]{};
  long long strides[max_rank]{};
};

// Throws jit::argument_error for more dims than a tensor has, or strides given for a different number of
// dims (none: packed, innermost stride 1).
inline tensor_arg tensor_view(const void* ptr, std::initializer_list<long long> dims, std::initializer_list<long long> strides = {}) {
  if (dims.size() > static_cast<std::size_t>(tensor_arg::max_rank))
    throw jit::argument_error("tensor_view: " + std::to_string(dims.size()) + " dims; a tensor has at most " + std::to_string(tensor_arg::max_rank));
  if (strides.size() != 0 && strides.size() != dims.size())
    throw jit::argument_error("tensor_view: " + std::to_string(strides.size()) + " strides for " + std::to_string(dims.size()) +
                              " dims (give one stride per dim, or none for a packed tensor)");
  tensor_arg t;
  t.ptr = ptr;
  t.rank = static_cast<int>(dims.size());
  int i = 0;
  for (long long d : dims) t.dims[i++] = d;
  if (strides.size() == dims.size()) {
    i = 0;
    for (long long s : strides) t.strides[i++] = s;
  } else {
    long long s = 1;
    for (int j = t.rank - 1; j >= 0; --j) {
      t.strides[j] = s;
      s *= t.dims[j];
    }
  }
  return t;
}

namespace runtime_detail {

inline jit::tma_dtype tma_dtype_of(dtype d) {
  switch (d) {
    case dtype::f32: return jit::tma_dtype::f32;
    case dtype::f16: return jit::tma_dtype::f16;
    case dtype::bf16: return jit::tma_dtype::bf16;
    case dtype::tf32: return jit::tma_dtype::tf32;
    case dtype::e4m3: return jit::tma_dtype::e4m3;
    case dtype::e5m2: return jit::tma_dtype::e5m2;
    case dtype::i8: return jit::tma_dtype::i8;
    case dtype::i64: return jit::tma_dtype::i64;
    default: return jit::tma_dtype::i32;
  }
}
// A tensor map's L2 promotion: 256 bytes, none for a tensor declared streamed (k.streamed), unless
// CAKE_TMA_L2_PROMOTION says otherwise (jit/env.hpp).
inline jit::tma_l2_promotion tma_l2_promotion_for(const tensor_param& t, int env_bytes = jit::env_tma_l2_promotion_bytes()) {
  switch (env_bytes) {
    case -2: return t.streamed ? jit::tma_l2_promotion::none : jit::tma_l2_promotion::b256;
    case 0: return jit::tma_l2_promotion::none;
    case 64: return jit::tma_l2_promotion::b64;
    case 128: return jit::tma_l2_promotion::b128;
    case 256: return jit::tma_l2_promotion::b256;
    default: throw jit::argument_error("CAKE_TMA_L2_PROMOTION: expected none, 64, 128 or 256");
  }
}

// How the kernels the runtime builds leave a cluster: as the caller's options ask (drain by default), unless
// CAKE_CLUSTER_EXIT names a way (jit/env.hpp).
inline lower::emit_options::exit_mode cluster_exit_for(lower::emit_options::exit_mode asked, int env = jit::env_cluster_exit()) {
  if (env < 0) throw jit::argument_error("CAKE_CLUSTER_EXIT: expected drain or barrier");
  if (env == 1) return lower::emit_options::exit_mode::drain;
  if (env == 2) return lower::emit_options::exit_mode::barrier;
  return asked;
}

inline jit::tma_swizzle tma_swizzle_of(swizzle s) {
  switch (s) {
    case swizzle::b32: return jit::tma_swizzle::b32;
    case swizzle::b64: return jit::tma_swizzle::b64;
    case swizzle::b128: return jit::tma_swizzle::b128;
    default: return jit::tma_swizzle::none;
  }
}

}  // namespace runtime_detail

class runtime_kernel {
 public:
  // Lowers, compiles (through the JIT cache) and loads `p` for device `ordinal`. Throws jit::error with
  // the lowering or compile diagnostics when the schedule cannot be turned into a kernel.
  static runtime_kernel build(const program& p, lower::emit_options opt = {}, int ordinal = 0) {
    runtime_kernel k;
    k.program_ = p;
    if (opt.hang_timeout_ns == 0) opt.hang_timeout_ns = jit::env_hang_timeout_ns();
    opt.cluster_exit = runtime_detail::cluster_exit_for(opt.cluster_exit);
    k.options_ = opt;
    k.lowered_ = lower::lower(p, opt);
    if (!k.lowered_.ok) throw jit::error("cannot lower kernel '" + std::string(p.kernel_name.view()) + "':\n" + k.lowered_.error);
    k.artifacts_ = jit::build(k.lowered_.source, k.lowered_.entry, to_string(p.target));
    if (!k.artifacts_.ok)
      throw jit::error("kernel '" + k.lowered_.entry + "' does not compile for " + std::string(to_string(p.target)) + ":\n" + k.artifacts_.diagnostics());
    k.module_ = jit::module::load(k.artifacts_, ordinal);
    k.function_ = k.module_.get_kernel(k.lowered_.entry);
    k.device_ = jit::driver::get().device(ordinal);
    return k;
  }

  const lower::lowered_kernel& lowered() const { return lowered_; }
  const jit::artifacts& artifacts() const { return artifacts_; }
  const program& schedule() const { return program_; }
  const jit::device_info& device() const { return device_; }

  // The runtime value of every program dim, read from the tensors (and checked against each other).
  std::vector<long long> dim_values(std::span<const tensor_arg> tensors) const {
    const program& p = program_;
    if (tensors.size() != p.tensors.size())
      throw jit::error("kernel '" + lowered_.entry + "' takes " + std::to_string(p.tensors.size()) + " tensors, " + std::to_string(tensors.size()) + " given");
    std::vector<long long> v(p.dims.size(), -1);
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      const auto& decl = p.tensors[t];
      const std::string tn(decl.nm.view());
      if (tensors[t].rank != decl.rank)
        throw jit::error("tensor " + tn + " has rank " + std::to_string(decl.rank) + " in the schedule, " + std::to_string(tensors[t].rank) + " given");
      if (!tensors[t].ptr) throw jit::error("tensor " + tn + ": null device pointer");
      for (int i = 0; i < decl.rank; ++i) {
        const int d = decl.dims[i];
        const long long val = tensors[t].dims[i];
        const std::string dn(p.dims[d].nm.view());
        if (val < 1) throw jit::error("tensor " + tn + ": dim " + dn + " = " + std::to_string(val) + " (must be at least 1)");
        if (v[d] >= 0 && v[d] != val)
          throw jit::error("dim " + dn + " is " + std::to_string(v[d]) + " in one tensor and " + std::to_string(val) + " in tensor " + tn);
        v[d] = val;
      }
    }
    // A dim no tensor has cannot be sized here: when the parallel space or a loop walks it (the analyzer's
    // ir.dim-unsized), the launch would get a zero grid or trip count. Name it.
    for (std::size_t d = 0; d < v.size(); ++d)
      if (v[d] < 0 && p.walks_dim(static_cast<int>(d)))
        throw jit::error("kernel '" + lowered_.entry + "': dim " + std::string(p.dims[d].nm.view()) +
                         " is declared but no tensor has it, so its extent is unknown at launch: give a tensor that dim");
    for (const auto& [d, val] : options_.specialized)
      if (v[d] != val)
        throw jit::error("dim " + std::string(p.dims[d].nm.view()) + " was specialized to " + std::to_string(val) + " when the kernel was compiled, but is " +
                         std::to_string(v[d]) + " here: build a kernel for this value");
    return v;
  }

  // The parameter block for these tensors (and scalars, in declaration order), 64-byte aligned inside
  // its buffer.
  struct param_block {
    std::vector<unsigned char> bytes;
    std::size_t offset = 0;
    void* data() { return bytes.data() + offset; }
  };
  param_block pack(std::span<const tensor_arg> tensors, std::span<const double> scalars = {}) const {
    const program& p = program_;
    const auto& L = lowered_.args;
    const auto dims = dim_values(tensors);
    if (scalars.size() != p.scalars.size())
      throw jit::error("kernel '" + lowered_.entry + "' takes " + std::to_string(p.scalars.size()) + " scalars, " + std::to_string(scalars.size()) + " given");
    param_block block;
    block.bytes.assign(L.size + 64, 0);
    unsigned char* base = block.bytes.data();
    while (reinterpret_cast<std::uintptr_t>(base) % 64) ++base;  // CUtensorMap needs 64-byte alignment
    block.offset = static_cast<std::size_t>(base - block.bytes.data());
    const auto& tma = lowered_.plan.tma;
    for (int i = 0; i < tma.count; ++i) {
      const auto& d = tma.descriptors[i];
      const auto& decl = p.tensors[d.tensor];
      const tensor_arg& t = tensors[d.tensor];
      jit::tensor_map_spec s;
      s.dtype = runtime_detail::tma_dtype_of(decl.dt);
      s.rank = static_cast<unsigned>(decl.rank);
      s.global_address = t.ptr;
      const int eb = size_bits(decl.dt) / 8;
      for (int j = 0; j < decl.rank; ++j) s.global_dims[j] = static_cast<std::uint64_t>(t.dims[decl.rank - 1 - j]);
      for (int j = 1; j < decl.rank; ++j) s.global_strides_bytes[j - 1] = static_cast<std::uint64_t>(t.strides[decl.rank - 1 - j] * eb);
      s.box_dims = {1, 1, 1, 1, 1};
      s.box_dims[0] = static_cast<std::uint32_t>(d.box_cols);
      if (decl.rank >= 2) s.box_dims[decl.rank - 1 - d.row_pos] = static_cast<std::uint32_t>(d.box_rows);
      s.swizzle = runtime_detail::tma_swizzle_of(d.swz);
      s.l2_promotion = runtime_detail::tma_l2_promotion_for(decl);
      s.oob_fill = d.nan_fill ? jit::tma_oob_fill::nan_request_zero_fma : jit::tma_oob_fill::zeros;
      const CUtensorMap m = jit::encode_tensor_map(s);
      std::memcpy(base + L.tmap_offset + static_cast<std::size_t>(i) * lower::tensor_map_bytes, &m, sizeof m);
    }
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      std::memcpy(base + L.ptr_offset + 8 * t, &tensors[t].ptr, sizeof(void*));
      long long strides[4]{};
      for (int j = 0; j < tensors[t].rank; ++j) strides[j] = tensors[t].strides[j];
      std::memcpy(base + L.stride_offset + 32 * t, strides, sizeof strides);
    }
    for (std::size_t d = 0; d < dims.size(); ++d) std::memcpy(base + L.dim_offset + 8 * d, &dims[d], 8);
    for (std::size_t s = 0; s < scalars.size(); ++s) {
      unsigned long long bits = 0;
      if (p.scalars[s].dt == dtype::f32) {
        const float f = static_cast<float>(scalars[s]);
        std::memcpy(&bits, &f, 4);
      } else {
        const long long i = static_cast<long long>(scalars[s]);
        std::memcpy(&bits, &i, 8);
      }
      std::memcpy(base + L.scalar_offset + 8 * s, &bits, 8);
    }
    return block;
  }

  jit::launch_config config(std::span<const tensor_arg> tensors, CUstream stream = nullptr) const {
    const auto dims = dim_values(tensors);
    const auto g = plan::plan_grid(program_, [&](int d) { return dims[d]; }, device_.sm_count);
    // The lowered walk counts points in 32-bit ints (lower/emit_kernel.hpp emit_tile_loop; it traps past them)
    if (g.tile_count > 2147483647LL - g.ctas)
      throw jit::argument_error("kernel '" + lowered_.entry + "': the parallel space has " + std::to_string(g.tile_count) +
                                " points; the tile walk counts them in 32 bits (at most 2^31 - 1 - the CTAs launched)");
    jit::launch_config c;
    c.grid = {static_cast<unsigned>(g.ctas), 1, 1};
    c.block = {static_cast<unsigned>(lowered_.block_threads), 1, 1};
    c.dynamic_smem = static_cast<unsigned>(lowered_.smem_bytes);
    c.stream = stream;
    c.cluster = {static_cast<unsigned>(lowered_.cluster[0] * lowered_.cluster[1] * lowered_.cluster[2]), 1, 1};
    c.explicit_cluster = lowered_.cluster_launch;
    c.programmatic_stream_serialization = program_.launch.pdl;
    return c;
  }

  // How many clusters of this kernel the device runs at once (cuOccupancyMaxActiveClusters with its block,
  // dynamic shared memory and cluster size): what a grid of more CTAs than SMs / cluster waits on. A
  // cluster must fit in one GPC, so it can be fewer than sm_count / cluster. -1 when the driver lacks the
  // query or answers with an error.
  int max_active_clusters() const {
    const auto& d = jit::driver::get();
    if (!d.cuOccupancyMaxActiveClusters) return -1;
    d.bind(function_.ordinal());
    if (d.cuFuncSetAttribute(function_.handle(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, lowered_.smem_bytes) != CUDA_SUCCESS) return -1;
    const unsigned cluster = static_cast<unsigned>(lowered_.cluster[0] * lowered_.cluster[1] * lowered_.cluster[2]);
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster;
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    CUlaunchConfig lc{};
    lc.gridDimX = static_cast<unsigned>(device_.sm_count) / cluster * cluster;
    lc.gridDimY = lc.gridDimZ = 1;
    lc.blockDimX = static_cast<unsigned>(lowered_.block_threads);
    lc.blockDimY = lc.blockDimZ = 1;
    lc.sharedMemBytes = static_cast<unsigned>(lowered_.smem_bytes);
    lc.attrs = &attr;
    lc.numAttrs = 1;
    int clusters = -1;
    if (d.cuOccupancyMaxActiveClusters(&clusters, function_.handle(), &lc) != CUDA_SUCCESS) return -1;
    return clusters;
  }

  void launch(std::span<const tensor_arg> tensors, std::span<const double> scalars = {}, CUstream stream = nullptr) const {
    auto block = pack(tensors, scalars);
    void* params[] = {block.data()};
    jit::launch(function_, config(tensors, stream), params);
  }
  void launch(std::initializer_list<tensor_arg> tensors, CUstream stream = nullptr) const {
    launch(std::span<const tensor_arg>(tensors.begin(), tensors.size()), {}, stream);
  }

 private:
  program program_{};
  lower::emit_options options_;
  lower::lowered_kernel lowered_;
  jit::artifacts artifacts_;
  jit::module module_;
  jit::kernel function_;
  jit::device_info device_;
};

}  // namespace cake
