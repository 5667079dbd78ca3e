#pragma once
// Cake's JIT layer: NVRTC compilation with diagnostics mapped to schedule ops, the on-disk cache, the
// dlopen'ed driver, module loading, launching, tensor maps and device buffers. See docs/jit.md.
#include <cake/version.hpp>
#include <cake/jit/arch.hpp>
#include <cake/jit/cache.hpp>
#include <cake/jit/cache_entry.hpp>
#include <cake/jit/compat.hpp>
#include <cake/jit/compile_log.hpp>
#include <cake/jit/device_memory.hpp>
#include <cake/jit/driver.hpp>
#include <cake/jit/env.hpp>
#include <cake/jit/error.hpp>
#include <cake/jit/hash.hpp>
#include <cake/jit/launch.hpp>
#include <cake/jit/module.hpp>
#include <cake/jit/nvrtc.hpp>
#include <cake/jit/source_map.hpp>
#include <cake/jit/tensor_map.hpp>
