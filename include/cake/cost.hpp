#pragma once
// The cost model: cake::cost::estimate(program, dims) -> time, bottleneck and hints on a calibrated
// target, with its text and JSON output. docs/cost-model.md documents the model and its calibration.
#include "cost/calibrations.hpp"
#include "cost/model.hpp"
#include "cost/output.hpp"
