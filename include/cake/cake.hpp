#pragma once
// Umbrella header: the schedule language, targets, derivations and the analyzer (cake::analyze,
// static_assert(cake::verify(p))); no NVRTC or driver dependency.
// The JIT and runtime live in <cake/jit.hpp> (link cake::jit).
#include "core/dtype.hpp"
#include "ir.hpp"
#include "target/targets.hpp"
#include "plan/plan.hpp"
#include "analysis.hpp"
