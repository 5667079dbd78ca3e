#pragma once
// Launching a kernel with cuLaunchKernelEx: grid, block, dynamic shared memory, stream, and optionally a
// cluster shape and programmatic stream serialization (PDL). Before the launch, the things the driver
// would only answer with CUDA_ERROR_INVALID_VALUE are checked and explained: zero dimensions, a grid
// that is not a multiple of the cluster, more threads than the kernel allows, more shared memory than the
// device offers. The opt-in attributes are set on demand (hardware-facts §6, §7):
//   MAX_DYNAMIC_SHARED_SIZE_BYTES        when dynamic + static smem exceed the 48 KiB default
//   NON_PORTABLE_CLUSTER_SIZE_ALLOWED    when the cluster has more than 8 CTAs
#include <cuda.h>

#include <string>

#include <cake/jit/driver.hpp>
#include <cake/jit/module.hpp>

namespace cake::jit {

struct dims3 {
  unsigned x = 1, y = 1, z = 1;
  unsigned long long volume() const { return 1ull * x * y * z; }
  std::string to_string() const {
    return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
  }
};

struct launch_config {
  dims3 grid;
  dims3 block;
  unsigned dynamic_smem = 0;  // bytes
  CUstream stream = nullptr;  // nullptr: the legacy default stream
  dims3 cluster;              // {1,1,1}: launched without a cluster attribute unless explicit_cluster
  bool explicit_cluster = false;  // the cluster attribute even for {1,1,1} (lowered_kernel::cluster_launch says why)
  bool programmatic_stream_serialization = false;  // PDL: may overlap with the previous kernel's tail

  bool has_cluster() const { return cluster.volume() > 1 || explicit_cluster; }
};

inline constexpr unsigned default_dynamic_smem_limit = 48 * 1024;  // without the opt-in attribute
inline constexpr unsigned portable_cluster_limit = 8;

struct launch_access {  // the launch path's access to a kernel's mutable attribute state
  static detail::kernel_state& state(const kernel& k) { return *k.state_; }
};

// Launches k with args: one pointer per kernel parameter, pointing at a value of exactly the
// parameter's type (a CUdeviceptr for a T*, a CUtensorMap for a __grid_constant__ tensor map, ...).
inline void launch(const kernel& k, const launch_config& c, void** args) {
  if (!k) throw error("launch of an empty kernel handle");
  const std::string what = "launching '" + k.name() + "' with grid " + c.grid.to_string() + ", block " +
                           c.block.to_string() + (c.has_cluster() ? ", cluster " + c.cluster.to_string() : "") +
                           ", " + std::to_string(c.dynamic_smem) + " B dynamic smem";
  auto reject = [&](const std::string& why) { throw error("cannot launch '" + k.name() + "': " + why); };
  for (auto [name, d] : {std::pair{"grid", c.grid}, std::pair{"block", c.block}, std::pair{"cluster", c.cluster}})
    if (d.x == 0 || d.y == 0 || d.z == 0) reject(std::string(name) + " " + d.to_string() + " has a zero dimension");
  if (c.block.volume() > static_cast<unsigned long long>(k.max_threads_per_block()))
    reject("a block of " + std::to_string(c.block.volume()) + " threads exceeds the kernel's limit of " +
           std::to_string(k.max_threads_per_block()) + " (its launch bounds or register use)");
  if (c.has_cluster() && (c.grid.x % c.cluster.x || c.grid.y % c.cluster.y || c.grid.z % c.cluster.z))
    reject("grid " + c.grid.to_string() + " is not a multiple of cluster " + c.cluster.to_string());

  const auto& d = driver::get();
  d.bind(k.ordinal());
  auto& st = launch_access::state(k);
  {
    std::lock_guard lock(st.mutex);
    const unsigned static_smem = static_cast<unsigned>(k.static_smem_bytes());
    if (c.dynamic_smem + static_smem > default_dynamic_smem_limit &&
        static_cast<int>(c.dynamic_smem) > st.dynamic_smem_limit) {
      const auto& dev = d.device(k.ordinal());
      const unsigned optin = static_cast<unsigned>(dev.smem_optin_per_block);
      if (c.dynamic_smem + static_smem > optin)
        reject("it asks for " + std::to_string(c.dynamic_smem) + " B of dynamic shared memory; with its " +
               std::to_string(static_smem) + " B of static shared memory, " + dev.describe() + " allows at most " +
               std::to_string(optin > static_smem ? optin - static_smem : 0) + " B dynamic (" + std::to_string(optin) +
               " B per block after opt-in)");
      d.check(d.cuFuncSetAttribute(k.handle(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(c.dynamic_smem)),
              "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", what);
      st.dynamic_smem_limit = static_cast<int>(c.dynamic_smem);
    }
    if (c.cluster.volume() > portable_cluster_limit && !st.non_portable_cluster) {
      d.check(d.cuFuncSetAttribute(k.handle(), CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
              "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)", what);
      st.non_portable_cluster = true;
    }
  }

  CUlaunchAttribute attrs[2] = {};
  unsigned n = 0;
  if (c.has_cluster()) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = c.cluster.x;
    attrs[n].value.clusterDim.y = c.cluster.y;
    attrs[n].value.clusterDim.z = c.cluster.z;
    ++n;
  }
  if (c.programmatic_stream_serialization) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n].value.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  CUlaunchConfig cfg = {};
  cfg.gridDimX = c.grid.x;
  cfg.gridDimY = c.grid.y;
  cfg.gridDimZ = c.grid.z;
  cfg.blockDimX = c.block.x;
  cfg.blockDimY = c.block.y;
  cfg.blockDimZ = c.block.z;
  cfg.sharedMemBytes = c.dynamic_smem;
  cfg.hStream = c.stream;
  cfg.attrs = n ? attrs : nullptr;
  cfg.numAttrs = n;
  d.check(d.cuLaunchKernelEx(&cfg, k.handle(), args, nullptr), "cuLaunchKernelEx", what);
}

// Same, with the arguments given as values: launch_with(k, cfg, d_out, d_in, n). Each argument's type
// must be exactly the kernel parameter's type (pass a CUdeviceptr for a pointer parameter).
template <class... Args>
void launch_with(const kernel& k, const launch_config& c, const Args&... args) {
  void* pointers[sizeof...(Args) + 1] = {const_cast<void*>(static_cast<const void*>(&args))...};
  launch(k, c, pointers);
}

}  // namespace cake::jit
