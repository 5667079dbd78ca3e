#pragma once
// The committed calibrations, one per (target, GPU) measured; the cost model looks them up by target.
// A target with none gets no estimate. To add one: run bench/cost/calibrate on the GPU, derive the
// header with bench/cost/derive_calibration.py, include it here (docs/cost-model.md).
#include "calibration.hpp"
#include "calibration/sm90a_h200.hpp"

namespace cake::cost {

inline constexpr const calibration* committed_calibrations[] = {&calibrations::sm90a_h200};

// The calibration for a target, nullptr when none was measured.
constexpr const calibration* find_calibration(target_id t) {
  for (const calibration* c : committed_calibrations)
    if (c->target == t) return c;
  return nullptr;
}

}  // namespace cake::cost
