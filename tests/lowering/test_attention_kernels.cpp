// Lowering tier for kernels/attention/: every prefill configuration the entry point can pick is built,
// analyzed clean, lowered and assembled by NVRTC for sm_90a with no spills.
#include <doctest/doctest.h>

#include "kernels/attention/prefill.hpp"
#include "lower_check.hpp"

using namespace cake;
using lower_check::count;
using lower_check::has;
using lower_check::lower_and_build;

TEST_CASE("attention prefill (sm_90a): head dims 64 and 128, causal or not, GQA groups") {
  for (int parts : {1, 2})
    for (bool causal : {false, true})
      for (int group : {1, 8}) {
        kernels::attention_prefill_config c;
        c.parts = parts;
        c.causal = causal;
        c.group = group;
        INFO("D " << 64 * parts << " causal " << causal << " group " << group);
        const program p = kernels::attention_prefill_sm90(c);
        const auto b = lower_and_build(p);
        MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
        CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32.bf16.bf16"));  // S = Q K^T
        CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"));  // O += P V, per 64-column part
        CHECK(has(b.ptx(), "ex2.approx"));
        CHECK(count(b.ptx(), "cp.async.bulk.tensor.4d") >= 3);  // Q, K, V tiles of rank 4
        CHECK(has(b.ptx(), "setmaxnreg"));
      }
}
