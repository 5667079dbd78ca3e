// Causal attention prefill on a persistent walk dealt strided, exported for `cake estimate`: not of the GEMM
// form (no time), but the estimate assesses the walk (query tile q walks q + 1 key blocks) and hints
// walk_order::serpentine with the busiest CTA's share of the work (docs/cost-model.md, "Walk balance").
#include <cake/cake.hpp>

#include "kernels/attention/prefill.hpp"

constexpr cake::kernels::attention_prefill_config causal_strided() {
  cake::kernels::attention_prefill_config c;
  c.parts = 1, c.causal = true, c.turns = false, c.persistent = true;
  return c;
}

CAKE_EXPORT(attention_causal, cake::kernels::attention_prefill_sm90(causal_strided()))
