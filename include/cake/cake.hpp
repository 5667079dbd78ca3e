#pragma once
// Umbrella header: the schedule language, targets and derivations (no NVRTC or driver dependency).
// The JIT and runtime live in <cake/jit.hpp> (link cake::jit).
#include "core/dtype.hpp"
#include "ir.hpp"
#include "target/targets.hpp"
#include "plan/plan.hpp"
