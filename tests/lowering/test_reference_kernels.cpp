// Each reference schedule lowers to CUDA C++ that NVRTC assembles to a CUBIN for its target, with the
// instructions the schedule asks for present in the PTX, no register spills, and the shared memory
// and block size the plan derived.
#include <doctest/doctest.h>

#include <string>

#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>

#include "kernels/gemm/sm100_bf16.hpp"
#include "kernels/gemm/sm80_bf16.hpp"
#include "kernels/gemm/sm90_bf16.hpp"
#include <cake/gemm.hpp>

namespace {

struct built {
  cake::lower::lowered_kernel lowered;
  cake::jit::artifacts art;
};

built lower_and_build(const cake::program& p) {
  built b;
  b.lowered = cake::lower::lower(p);
  REQUIRE_MESSAGE(b.lowered.ok, b.lowered.error);
  b.art = cake::jit::build(b.lowered.source, b.lowered.entry, to_string(p.target));
  REQUIRE_MESSAGE(b.art.ok, b.art.diagnostics());
  return b;
}

bool has(const std::string& ptx, const std::string& needle) { return ptx.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("sm_90a GEMM assembles with TMA multicast, wgmma m64n256k16, setmaxnreg, stmatrix and TMA store") {
  constexpr auto p = cake::kernels::gemm_bf16_sm90();
  const auto b = lower_and_build(p);
  const std::string& ptx = b.art.ptx;
  CHECK(has(ptx, ".target sm_90a"));
  CHECK(has(ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
  CHECK(has(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"));
  CHECK(has(ptx, "cp.async.bulk.tensor.2d.global.shared::cta"));
  CHECK(has(ptx, "setmaxnreg.inc.sync.aligned.u32 232"));
  CHECK(has(ptx, "setmaxnreg.dec.sync.aligned.u32 40"));
  CHECK(has(ptx, "stmatrix.sync.aligned"));
  CHECK(has(ptx, "mbarrier.try_wait.parity"));
  CHECK(has(ptx, "fence.proxy.async.shared::cta"));
  CHECK(has(ptx, "barrier.cluster.arrive"));
  CHECK_FALSE(b.art.cubin.empty());
  CHECK(b.art.resources.spill_stores == 0);
  CHECK(b.art.resources.spill_loads == 0);
  CHECK(b.lowered.block_threads == 384);
  CHECK(b.lowered.smem_bytes == cake::plan::plan_smem(p).total);
  CHECK(b.lowered.cluster[0] == 2);
  // setmaxnreg only takes effect with a register cap at entry (hardware-facts §3): no C7508 warning.
  for (const auto& w : b.art.resources.warnings) CHECK_MESSAGE(w.find("C7508") == std::string::npos, w);
}

TEST_CASE("sm_80 GEMM assembles with cp.async, ldmatrix and mma.sync") {
  constexpr auto p = cake::kernels::gemm_bf16_sm80();
  const auto b = lower_and_build(p);
  CHECK(has(b.art.ptx, ".target sm_80"));
  CHECK(has(b.art.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
  CHECK(has(b.art.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
  CHECK(has(b.art.ptx, "cp.async.cg.shared.global"));
  CHECK_FALSE(has(b.art.ptx, "wgmma"));
  CHECK(b.art.resources.spill_stores == 0);
  CHECK(b.lowered.block_threads == 128);
}

TEST_CASE("sm_100a GEMM assembles with tcgen05.alloc/mma/commit/ld and TMEM") {
  constexpr auto p = cake::kernels::gemm_bf16_sm100();
  const auto b = lower_and_build(p);
  CHECK(has(b.art.ptx, ".target sm_100a"));
  CHECK(has(b.art.ptx, "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"));
  CHECK(has(b.art.ptx, "tcgen05.mma.cta_group::1.kind::f16"));
  CHECK(has(b.art.ptx, "tcgen05.commit.cta_group::1.mbarrier::arrive::one"));
  CHECK(has(b.art.ptx, "tcgen05.ld.sync.aligned.32x32b.x32"));
  CHECK(has(b.art.ptx, "tcgen05.dealloc.cta_group::1"));
  CHECK(b.art.resources.spill_stores == 0);
}

TEST_CASE("generated source carries an op annotation with the schedule line for every op") {
  constexpr auto p = cake::kernels::gemm_bf16_sm90();
  const auto l = cake::lower::lower(p);
  REQUIRE(l.ok);
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const std::string tag = "// @op " + std::to_string(i) + " " + std::string(p.ops[i].loc.file) + ":" + std::to_string(p.ops[i].loc.line);
    CHECK_MESSAGE(l.source.find(tag) != std::string::npos, tag);
  }
}

TEST_CASE("barrier init counts and tx bytes in the generated code are the plan's") {
  constexpr auto p = cake::kernels::gemm_bf16_sm90();
  constexpr auto plan = cake::plan::make_plan(p);
  const auto l = cake::lower::lower(p);
  REQUIRE(l.ok);
  const auto& pb = plan.barriers.pipelines[0];
  CHECK(l.source.find("mbar_arrive_expect_tx((smem + " + std::to_string(plan.barriers.objects[pb.full_base].offset) + "u + 8u * slot2), " +
                      std::to_string(pb.tx_bytes) + "u)") != std::string::npos);
  CHECK(l.source.find("mbar_init(smem + " + std::to_string(plan.barriers.objects[pb.empty_base].offset) + "u, " + std::to_string(pb.empty_arrivals) + "u)") !=
        std::string::npos);
  CHECK(pb.empty_arrivals == 4);  // 2 consumer warpgroups x 2 CTAs multicasting into each other
  CHECK(pb.tx_bytes == (128 * 64 + 256 * 64) * 2);
}

TEST_CASE("sm_90a GEMM family: fp8, the tile widths cake::gemm picks and the direct-store epilogue all assemble") {
  using cake::kernels::gemm_sm90;
  constexpr auto fp8 = gemm_sm90<cake::e4m3>();
  const auto b = lower_and_build(fp8);
  CHECK(has(b.art.ptx, "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"));
  CHECK(b.art.resources.spill_stores == 0);
  for (int bn : {192, 176, 128}) {
    cake::kernels::gemm_sm90_config c;
    c.bn = bn;
    c.stages = cake::max_gemm_stages(c, 2);
    const auto x = lower_and_build(gemm_sm90<cake::bf16>(c));
    CHECK(has(x.art.ptx, "m64n" + std::to_string(bn) + "k16"));
    CHECK(x.art.resources.spill_stores == 0);
  }
  cake::kernels::gemm_sm90_config d;
  d.direct_store = true;
  const auto y = lower_and_build(gemm_sm90<cake::bf16>(d));
  CHECK_FALSE(has(y.art.ptx, "cp.async.bulk.tensor.2d.global.shared::cta"));  // no TMA store
}
