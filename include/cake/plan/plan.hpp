#pragma once
// All derivations of a Program, computed once. Analyzer, cost model and emitter read a kernel_plan;
// none of them recomputes what is here.
#include "barriers.hpp"
#include "dims.hpp"
#include "fragments.hpp"
#include "grid.hpp"
#include "named_barriers.hpp"
#include "operands.hpp"
#include "smem_plan.hpp"
#include "tma.hpp"
#include "tmem.hpp"
#include "warps.hpp"

namespace cake::plan {

struct kernel_plan {
  smem_layout smem;
  warp_plan warps;
  barrier_plan barriers;
  tma_plan tma;
  tmem_plan tmem;
  named_barrier_plan named;
  dims_plan dims;
  fragment_plan frags;
};

constexpr kernel_plan make_plan(const program& p) {
  return {plan_smem(p), plan_warps(p), plan_barriers(p), plan_tma(p), plan_tmem(p), plan_named_barriers(p), plan_dims(p), plan_fragments(p)};
}

}  // namespace cake::plan
