#pragma once
// Cake's version. It is part of every JIT cache key (jit/cache.hpp), so that a new release never loads
// artifacts that an older lowering produced.
#include <string_view>

#define CAKE_VERSION_MAJOR 0
#define CAKE_VERSION_MINOR 1
#define CAKE_VERSION_PATCH 0
#define CAKE_VERSION_STRING "0.1.0"

namespace cake {
inline constexpr std::string_view version_string = CAKE_VERSION_STRING;
}  // namespace cake
