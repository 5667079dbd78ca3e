// The kernels that use register compute, deferred releases, alternating walks, turns and cluster sums
// lower and assemble with no spills: the sm_90a GEMM's ping-pong, in-flight and fused-epilogue variants
// (kernels/gemm/sm90_bf16.hpp), the split-K GEMM over a cluster (kernels/gemm/sm90_splitk.hpp), and the
// schedules the GPU tier runs on an H200 (tests/gpu/test_compute.cpp: attention with P from registers,
// k-means assignment, scatter-add). The GPU file is included as it is, its test cases turned into
// uninstantiated templates, so that its schedules are checked here without a copy.
#include <vector>

#include "lower_check.hpp"

#undef TEST_CASE
#define TEST_CASE(name) template <class> [[maybe_unused]] void DOCTEST_ANONYMOUS(CAKE_GPU_CASE_)()
#include "tests/gpu/test_compute.cpp"
#undef TEST_CASE
#define TEST_CASE(name) DOCTEST_TEST_CASE(name)

#include "kernels/gemm/sm90_bf16.hpp"
#include "kernels/gemm/sm90_splitk.hpp"

using lower_check::count;
using lower_check::has;
using lower_check::has_re;
using lower_check::lower_and_build;

namespace {

// wgmma with A from registers: the A operand is a list of 4 registers, not an smem descriptor.
const char* wgmma_register_a = R"(wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.bf16\.bf16\s+\{[^}]*\},\s*\{%r\d+,\s*%r\d+,\s*%r\d+,\s*%r\d+\})";
const char* wgmma_smem_a = R"(wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.bf16\.bf16\s+\{[^}]*\},\s*%rd\d+)";

kernels::gemm_sm90_config mainloop(int bm, int bn, bool pingpong, int in_flight) {
  kernels::gemm_sm90_config c;
  c.bm = bm, c.bn = bn, c.pingpong = pingpong, c.in_flight = in_flight;
  c.stages = max_gemm_stages(c, 2);
  return c;
}

}  // namespace

TEST_CASE("sm_90a GEMM mainloops: ping-pong (turns, alternating walk) and wgmma groups in flight across the release") {
  struct variant {
    int bm, bn;
    bool pingpong;
    int in_flight;
  };
  for (const variant v : {variant{128, 256, false, 1}, variant{128, 128, true, 0}, variant{128, 128, true, 1}, variant{64, 256, true, 1}}) {
    INFO("bm " << v.bm << " bn " << v.bn << " pingpong " << v.pingpong << " in_flight " << v.in_flight);
    const auto c = mainloop(v.bm, v.bn, v.pingpong, v.in_flight);
    const program p = kernels::gemm_bf16_sm90(c);
    const auto b = lower_and_build(p);
    const std::string& ptx = b.ptx();
    CHECK(has(ptx, "wgmma.mma_async.sync.aligned.m64n" + std::to_string(v.bn) + "k16.f32.bf16.bf16"));
    CHECK(has(ptx, "wgmma.wait_group.sync.aligned " + std::to_string(v.in_flight)));
    CHECK(has(ptx, "stmatrix.sync.aligned"));
    if (v.in_flight) {
      CHECK(has(b.source(), "pend_last"));  // the stage held across the release
      CHECK(has(ptx, "wgmma.wait_group.sync.aligned 0"));
    }
    if (v.pingpong) {
      CHECK(has(ptx, "bar.arrive"));  // passing the turn
      const auto N = plan::plan_named_barriers(p);
      int mma = -1;
      for (std::size_t i = 0; i < p.named_barriers.size(); ++i)
        if (p.named_barriers[i].turns) mma = static_cast<int>(i);
      REQUIRE(mma >= 0);
      const int consumer = 1;
      REQUIRE(p.roles[consumer].nm == "consumer");
      CHECK(has(b.source(), "cake_dev::named_barrier_sync(" + std::to_string(N.barriers[mma].first_id[consumer]) + "u + unit, 256u);"));
      CHECK(has(b.source(), "cake_dev::named_barrier_arrive(" + std::to_string(N.barriers[mma].first_id[consumer]) + "u + (unit + 1u) % 2u, 256u);"));
    }
    CHECK(b.lowered.block_threads == 384);
    CHECK(b.lowered.smem_bytes == plan::plan_smem(p).total);
  }
}

TEST_CASE("sm_90a GEMM lookahead: the next tile's first K block issued before this tile's stores, no spill, no serialization") {
  // the tiles cake::gemm picks (BN 256 / 192 / 128, 4-6 stages, clusters of 2), TMA-store and direct-store epilogues,
  // bf16 and e4m3, a fused epilogue: each lowers clean, and its consumer runs the first K block in two places (the
  // CTA's first point's prologue, and r.next_point before the stores) and the K loop from the second block
  struct variant {
    int bn;
    bool direct, fp8, bias_gelu;
  };
  for (const variant v : {variant{256, false, false, false}, variant{192, false, false, false}, variant{128, false, false, false},
                          variant{256, true, false, false}, variant{256, false, true, false}, variant{256, false, false, true}}) {
    kernels::gemm_sm90_config c;
    c.bn = v.bn, c.direct_store = v.direct, c.lookahead = true;
    if (v.bias_gelu) c.epi.bias = true, c.epi.act = kernels::gemm_activation::gelu_tanh;
    c.stages = max_gemm_stages(c, v.fp8 ? 1 : 2);
    REQUIRE(c.lookahead_fits());
    INFO("bn " << v.bn << " direct " << v.direct << " fp8 " << v.fp8 << " bias+gelu " << v.bias_gelu);
    const program p = v.fp8 ? kernels::gemm_sm90<e4m3>(c) : kernels::gemm_sm90<bf16>(c);
    auto plain_c = c;
    plain_c.lookahead = false;
    const program plain = v.fp8 ? kernels::gemm_sm90<e4m3>(plain_c) : kernels::gemm_sm90<bf16>(plain_c);
    const auto b = lower_and_build(p);  // (no spill, no stack frame, the analyzer's protocol run clean)
    MESSAGE("lookahead bn " << v.bn << std::string(v.direct ? " direct" : "") << std::string(v.fp8 ? " e4m3" : "") << ": " << b.art.resources.registers
                            << " registers");
    CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
    auto wgmma_ops = [](const program& q) {
      int n = 0;
      for (const auto& o : q.ops) n += o.kind == op_kind::wgmma;
      return n;
    };
    CHECK(wgmma_ops(plain) == 1);
    CHECK(wgmma_ops(p) == 3);  // prologue, K loop, next point
    // in the next point's block, its first MMA is issued before this tile's output is stored
    const std::string& src = b.source();
    const auto next = src.find("t_iter_next");
    REQUIRE(next != std::string::npos);
    const auto mma = src.find("wgmma.mma_async", next);
    const auto store = src.find(v.direct ? "unsigned short* dst" : "stmatrix", next);
    CHECK(mma != std::string::npos);
    CHECK(store != std::string::npos);
    CHECK(mma < store);
  }
  kernels::gemm_sm90_config pp = mainloop(128, 128, true, 0);
  pp.lookahead = true;
  CHECK_FALSE(pp.lookahead_fits());
  kernels::gemm_sm90_config fl = mainloop(128, 256, false, 1);
  fl.lookahead = true;
  CHECK_FALSE(fl.lookahead_fits());
}

TEST_CASE("sm_90a GEMM whole-tile staging: one staging buffer per output chunk, written together and stored after one barrier") {
  // BN 256 / 192 / 176 / 128 (chunks of 64, 64, 16, 64 columns), with the lookahead, e4m3 and bias + GELU: each lowers
  // clean with one sD copy per chunk and shared memory within the opt-in limit, and its epilogue waits for no store's
  // reads between chunks (one bulk wait per tile, where the two-buffer epilogue waits once per chunk)
  struct variant {
    int bn;
    bool lookahead, fp8, bias_gelu;
  };
  for (const variant v : {variant{256, false, false, false}, variant{192, false, false, false}, variant{176, false, false, false}, variant{128, false, false, false},
                          variant{256, true, false, false}, variant{256, false, true, false}, variant{256, false, false, true}}) {
    kernels::gemm_sm90_config c;
    c.bn = v.bn, c.lookahead = v.lookahead, c.whole_tile_staging = true;
    if (v.bias_gelu) c.epi.bias = true, c.epi.act = kernels::gemm_activation::gelu_tanh;
    c.stages = max_gemm_stages(c, v.fp8 ? 1 : 2);
    REQUIRE(c.whole_tile_staging_fits());
    INFO("bn " << v.bn << " lookahead " << v.lookahead << " fp8 " << v.fp8 << " bias+gelu " << v.bias_gelu << " stages " << c.stages);
    const int chunks = v.bn / c.store_chunk();
    CHECK(c.staging_buffers() == chunks);
    if (v.bn == 256) CHECK(c.stages == 3);  // 4 x 16 KB of staging leaves room for 3 stages of 48 KB
    const program p = v.fp8 ? kernels::gemm_sm90<e4m3>(c) : kernels::gemm_sm90<bf16>(c);
    auto two = c;
    two.whole_tile_staging = false;
    CHECK(two.staging_buffers() == 2);
    const auto b = lower_and_build(p);  // (no spill, no stack frame, the analyzer's protocol run clean)
    MESSAGE("whole-tile staging bn " << v.bn << std::string(v.lookahead ? " lookahead" : "") << std::string(v.fp8 ? " e4m3" : "") << ": " << b.art.resources.registers << " registers, "
                                      << b.lowered.smem_bytes << " bytes of smem");
    CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
    CHECK(b.lowered.smem_bytes == plan::plan_smem(p).total);
    CHECK(b.lowered.smem_bytes <= targets::sm90a.limits.smem_per_block_optin);
    auto count = [](const program& q, op_kind kind) {
      int n = 0;
      for (const auto& o : q.ops) n += o.kind == kind;
      return n;
    };
    // (the lookahead stores in two places: the next point's block and the walk's last point)
    const int epilogues = v.lookahead ? 2 : 1;
    CHECK(count(p, op_kind::bulk_wait) == epilogues);
    CHECK(count(kernels::gemm_sm90<bf16>(two), op_kind::bulk_wait) == 2 * epilogues);
    const auto sd = std::find_if(p.smem.begin(), p.smem.end(), [](const auto& r) { return r.nm == "sD"; });
    REQUIRE(sd != p.smem.end());
    CHECK(sd->stages == chunks);
  }
  kernels::gemm_sm90_config pp = mainloop(128, 128, true, 0);
  pp.whole_tile_staging = true;
  CHECK_FALSE(pp.whole_tile_staging_fits());
  CHECK(pp.staging_buffers() == 4);
  kernels::gemm_sm90_config direct;
  direct.whole_tile_staging = true, direct.direct_store = true;
  CHECK_FALSE(direct.whole_tile_staging_fits());
  CHECK(direct.staging_buffers() == 1);
}

namespace {

using activation = kernels::gemm_activation;

// The configuration cake::gemm runs for a shape and an epilogue (choose_gemm on 132 SMs; the direct-store
// epilogue for outputs whose rows are not 16-byte multiples).
kernels::gemm_sm90_config gemm_config(long long M, long long N, long long K, const kernels::gemm_epilogue& e) {
  const bool direct = N % 8 != 0;
  auto c = choose_gemm(M, N, K, 132, gemm_input::bf16, e, direct).config;
  c.direct_store = direct;
  return c;
}

}  // namespace

TEST_CASE("sm_90a GEMM fused epilogues, in the configurations cake::gemm picks: one element loop after the mainloop") {
  struct variant {
    bool bias, row, col, res;
    activation a;
    const char* insn;  // what the activation shows in the PTX
  };
  const variant variants[] = {
      {true, false, false, false, activation::gelu_tanh, "tanh.approx.f32"},
      {true, true, false, false, activation::gelu_erf, nullptr},
      {false, false, true, true, activation::silu, "ex2.approx"},
      {true, true, true, true, activation::relu, nullptr},
      {false, false, false, true, activation::none, nullptr},
  };
  // Shapes whose best tile widths differ (N = 2112 quantizes best with 176 columns), and ragged outputs
  // (N not a multiple of 8: the direct-store epilogue).
  const long long shapes[][3] = {{4096, 4096, 4096}, {300, 264, 200}, {1024, 2112, 512}, {64, 4096, 256}, {129, 257, 72}, {4096, 4095, 512}};
  int built = 0;
  for (const auto& v : variants) {
    kernels::gemm_epilogue e;
    e.bias = v.bias, e.row_scale = v.row, e.col_scale = v.col, e.residual = v.res, e.act = v.a;
    std::vector<kernels::gemm_sm90_config> configs;
    for (const auto& s : shapes) {
      const auto c = gemm_config(s[0], s[1], s[2], e);
      bool seen = false;
      for (const auto& x : configs) seen = seen || (x.bn == c.bn && x.stages == c.stages && x.direct_store == c.direct_store);
      if (!seen) configs.push_back(c);
    }
    for (const auto& c : configs) {
      INFO("bias " << v.bias << " row " << v.row << " col " << v.col << " res " << v.res << " act " << static_cast<int>(v.a) << " bn " << c.bn
                   << " stages " << c.stages << " direct " << c.direct_store);
      const program p = kernels::gemm_bf16_sm90(c);
      int sets = 0;
      for (const auto& o : p.ops) sets += o.kind == op_kind::elementwise;
      CHECK(sets == 1);  // the whole epilogue is one r.set
      const auto b = lower_and_build(p);  // no spills, no stack frame
      ++built;
      const std::string& ptx = b.ptx();
      if (v.insn) CHECK(has(ptx, v.insn));
      CHECK(has(ptx, "ld.global"));  // the epilogue's vectors and tiles
      CHECK(has(ptx, "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16"));
      CHECK(has(ptx, c.direct_store ? "st.global" : "stmatrix.sync.aligned"));
    }
  }
  CHECK(built >= 12);
}

// A fused epilogue with the direct-store addressing spills at BN = 256 (NVRTC's report); choose_gemm
// caps such configurations at BN = 128, which builds without a stack frame.
TEST_CASE("sm_90a GEMM: a bias and a row scale with the direct-store epilogue (what cake::gemm runs for N = 4095) take BN <= 128 and do not spill") {
  for (activation a : {activation::gelu_erf, activation::relu, activation::gelu_tanh}) {
    INFO("act " << static_cast<int>(a));
    kernels::gemm_epilogue e;
    e.bias = e.row_scale = true;
    e.act = a;
    const auto c = gemm_config(4096, 4095, 512, e);
    CHECK(c.bn <= 128);
    CHECK(c.direct_store);
    lower_and_build(kernels::gemm_bf16_sm90(c));  // no spills, no stack frame
  }
  // Without the epilogue the same ragged shape keeps the wide tile.
  CHECK(gemm_config(4096, 4095, 512, {}).bn == 256);
}

TEST_CASE("sm_90a GEMM: an epilogue on the ping-pong mainloop, and on fp8 with its per-tensor scale") {
  kernels::gemm_sm90_config c = mainloop(128, 128, true, 1);
  c.epi.bias = true;
  c.epi.act = kernels::gemm_activation::gelu_tanh;
  const auto b = lower_and_build(kernels::gemm_bf16_sm90(c));
  CHECK(has(b.ptx(), "tanh.approx.f32"));
  CHECK(has(b.ptx(), "bar.arrive"));
  kernels::gemm_sm90_config f;
  f.epi.bias = true;
  f.epi.act = kernels::gemm_activation::relu;
  f.stages = max_gemm_stages(f, 1);
  const auto q = lower_and_build(kernels::gemm_sm90<e4m3>(f));
  CHECK(has(q.ptx(), "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"));
}

TEST_CASE("split-K GEMM over a cluster: partial sums met by cluster_sum_scatter (a reduce-scatter) in distributed shared memory") {
  for (auto [splits, bm] : {std::pair{2, 64}, std::pair{4, 64}, std::pair{2, 128}, std::pair{4, 128}}) {
    kernels::gemm_splitk_config c;
    c.splits = splits;
    c.bm = bm;
    c.stages = max_splitk_stages(c.bn, bm);
    const program p = kernels::gemm_splitk_sm90(c);
    // No spills and no stack frame: each rank's column block is a static part of the accumulator.
    const auto b = lower_and_build(p);
    INFO("splits " << splits << " bm " << bm);
    // 128-row tiles: two consumer warpgroups, each summing its own rows (every CTA's 'ready' barrier
    // counts both warpgroups of every CTA of the cluster)
    {
      const std::string& s = b.source();
      const auto at = s.find(" ready\n", s.find("// cluster sum op#"));
      REQUIRE(at != std::string::npos);
      const auto line = s.substr(s.rfind('\n', at) + 1, at - s.rfind('\n', at));
      CHECK_MESSAGE(has(line, ", " + std::to_string(splits * bm / 64) + "u);"), line);
    }
    CHECK(b.lowered.smem_bytes <= 227 * 1024);
    CHECK(has(b.ptx(), "ld.shared::cluster.v4.f32"));  // 16-byte chunks of the scratch
    CHECK(has(b.ptx(), "st.shared.v4.f32"));
    // Each signal to the peers is one release and relaxed arrivals (not a GPU-wide fence per peer): 'ready'
    // hands over this CTA's shared memory only (the restricted release), 'done' orders the reads of the peers'
    // scratch before their next writes (a cluster-scope release).
    CHECK(count(b.ptx(), "fence.release.sync_restrict::shared::cta.cluster;") == 1);
    CHECK(count(b.ptx(), "fence.release.cluster;") == 1);
    CHECK(count(b.ptx(), "mbarrier.arrive.relaxed.cluster.shared::cluster.b64") == 2 * splits);
    CHECK_FALSE(has(b.ptx(), "mbarrier.arrive.release.cluster.shared::cluster.b64"));
    CHECK(has(b.ptx(), "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64"));
    // The 'done' wait before the scratch is rewritten pairs with the peers' cluster-scope releases: it
    // acquires at cluster scope too (racecheck on the H200 flagged the CTA-scope form).
    const std::string& src = b.source();
    const auto done = src.find("every peer has read the previous sum");
    REQUIRE(done != std::string::npos);
    const auto line = src.rfind('\n', done);
    CHECK(has(src.substr(line, done - line), "cake_dev::mbar_wait_cluster("));
    CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"));
    CHECK(b.lowered.cluster[0] == splits);
    CHECK(b.lowered.smem_bytes == plan::plan_smem(p).total);
    // each CTA stores its 1/splits of the columns from the bf16 copy (a column part of a wgmma tile)
    CHECK(has(b.ptx(), "st.global"));
  }
}

TEST_CASE("cluster exit by drain: GEMMs with multicast and split-K with a cluster sum leave without a cluster barrier, the barrier asked for stays") {
  // Lowered and assembled with the default options (emit_options::cluster_exit = drain) or with the barrier
  // asked for (CAKE_CLUSTER_EXIT=barrier at run time).
  auto build = [](const program& p, bool drain) {
    lower::emit_options o;
    if (!drain) o.cluster_exit = lower::emit_options::exit_mode::barrier;
    auto l = lower::lower(p, o);
    REQUIRE_MESSAGE(l.ok, l.error);
    auto a = jit::build(l.source, l.entry, std::string(to_string(p.target)));
    REQUIRE_MESSAGE(a.ok, a.diagnostics());
    CHECK(a.resources.spill_stores == 0);
    return std::pair{l.source, a.ptx};
  };
  // the persistent GEMM with B multicast over clusters of 2: the prologue's cluster barrier only, and the
  // producer waits once more on each of the pipeline's stages after its walk
  for (auto [bm, bn, pingpong, in_flight] : {std::tuple{128, 256, false, 0}, std::tuple{64, 64, true, 1}}) {
    auto c = mainloop(bm, bn, pingpong, in_flight);
    c.cluster_m = 2;
    INFO("bm " << bm << " bn " << bn);
    const auto [src, ptx] = build(kernels::gemm_bf16_sm90(c), true);
    CHECK(count(ptx, "barrier.cluster.arrive") == 1);
    CHECK(count(ptx, "barrier.cluster.wait") == 1);
    CHECK(has(src, "the cluster's exit: every stage of 'ab' released by every CTA's consumers"));
    CHECK(has(src, "for (u32 d = 0; d < " + std::to_string(c.stages) + "u; ++d)"));
    CHECK(has(src, "without it ptxas 13.0 spilled in the widest epilogues.\n  __syncthreads();"));  // a CTA barrier ends it
    // the barrier asked for: the barrier at the end as well
    const auto [src_b, ptx_b] = build(kernels::gemm_bf16_sm90(c), false);
    CHECK(count(ptx_b, "barrier.cluster.arrive") == 2);
    CHECK_FALSE(has(src_b, "the cluster's exit"));
  }
  // no cluster (cluster 1): nothing to drain, the CTA barrier stays
  {
    auto c = mainloop(128, 128, false, 0);
    c.cluster_m = 1;
    const auto [src, ptx] = build(kernels::gemm_bf16_sm90(c), true);
    CHECK_FALSE(has(src, "the cluster's exit"));
    CHECK_FALSE(has(ptx, "barrier.cluster"));
  }
  // a cluster sum (split-K over clusters of 2 and 4, 64- and 128-row tiles): the role that sums waits once more
  // on its 'done' barrier (every peer read its last sum) instead of the barrier at the end
  for (auto [splits, bm] : {std::pair{2, 64}, std::pair{4, 128}}) {
    kernels::gemm_splitk_config s;
    s.splits = splits;
    s.bm = bm;
    s.stages = max_splitk_stages(s.bn, s.bm);
    INFO("splits " << splits << " bm " << bm);
    const auto [src_s, ptx_s] = build(kernels::gemm_splitk_sm90(s), true);
    CHECK(count(src_s, "every peer has read this CTA's scratch of its last sum") == 1);
    CHECK(count(ptx_s, "barrier.cluster.arrive") == 1);
    const auto [src_b, ptx_b] = build(kernels::gemm_splitk_sm90(s), false);
    CHECK_FALSE(has(src_b, "the cluster's exit"));
    CHECK(count(ptx_b, "barrier.cluster.arrive") == 2);
  }
}

TEST_CASE("split-K GEMM outside a cluster: each split stores its partial sums, the last to arrive on the tile's counter adds them") {
  struct row {
    int splits, bm, bn;
    bool fp8;
  };
  // (the widest the fill takes, a width that is no power of two, e4m3; 128-row tiles with a producer warpgroup
  // that gives the consumers its registers)
  for (const row x : {row{2, 64, 128, false}, row{3, 64, 136, false}, row{5, 64, 64, false}, row{4, 64, 192, false}, row{2, 128, 128, false},
                      row{7, 128, 192, false}, row{4, 64, 128, true}, row{3, 128, 144, true}}) {
    kernels::gemm_splitk_config c;
    c.global_sum = true;
    c.splits = x.splits;
    c.bm = x.bm;
    c.bn = x.bn;
    c.stages = max_splitk_stages(c.bn, c.bm, true);
    INFO("splits " << x.splits << " bm " << x.bm << " bn " << x.bn << (x.fp8 ? " e4m3" : " bf16"));
    REQUIRE(c.valid());
    const program p = x.fp8 ? kernels::gemm_splitk_sm90<e4m3>(c) : kernels::gemm_splitk_sm90<bf16>(c);
    const auto b = lower_and_build(p);
    CHECK(b.lowered.cluster[0] == 1);  // no cluster: the splits are any CTAs
    CHECK_FALSE(has(b.ptx(), "ld.shared::cluster"));
    CHECK_FALSE(has(b.ptx(), "barrier.cluster"));
    // one arrival per warpgroup and tile: the counter steps with acquire-release at GPU scope and wraps to 0
    CHECK(count(b.ptx(), "atom.acq_rel.gpu.global.inc.u32") == 1);
    CHECK(has(b.source(), "atom_inc_acq_rel_gpu(") );
    CHECK(has(b.source(), ", " + std::to_string(x.splits - 1) + "u)"));
    // the unit meets before the step (its partial sums are written) and after (the count reaches its warps)
    const std::string& s = b.source();
    const auto at = s.find("count_arrival (");
    REQUIRE(at != std::string::npos);
    CHECK(count(s.substr(at, s.find("const long long", at) - at), "named_barrier_sync(") == 2);
    // the last arrival is found by an integer comparison (eq(before, splits - 1): two index leaves)
    CHECK(has(s, " == (long long)((" + std::to_string(x.splits - 1) + "))))"));
    // the partial sums leave as f32, the other splits' come back (plain loads, not the non-coherent path:
    // they were written in this launch), added into the accumulator as they arrive (r.load_add: no second
    // register tile)
    CHECK(has(b.ptx(), "st.global.f32"));
    CHECK_FALSE(has(b.ptx(), "ld.global.nc"));
    // a whole part is one test and then branch-free vector loads, 16 pairs a batch: the first batch's
    // loads all come before the next branch (ptxas may then issue them together: one L2 round trip a batch, not a pair)
    CHECK(has(b.source(), "if (tile_whole)"));
    const std::string ptx_after = b.ptx().substr(b.ptx().find("atom.acq_rel.gpu.global.inc.u32"));
    const auto first_ld = ptx_after.find("ld.global.v2.f32");
    REQUIRE(first_ld != std::string::npos);
    const std::string run = ptx_after.substr(first_ld, ptx_after.find(" bra", first_ld) - first_ld);
    CHECK(count(run, "ld.global.v2.f32") >= 16);
    // the batch is the rule's: 32 registers a thread (16 pairs of f32) under these caps (240 with setmaxnreg, 255 at launch)
    CHECK(has(b.source(), "u32 rawb[16][2];"));
    CHECK(p.regs.size() == 2);  // acc and its bf16 copy: no tile for the addend
    CHECK(has(b.source(), "r_acc[e0 + j] = r_acc[e0 + j] + "));
    // the stage count the fill takes: no cluster scratch next to the pipeline
    CHECK(c.stages == (x.bm + x.bn > 288 ? 5 : 6));
    CHECK(has(b.ptx(), "setmaxnreg") == (x.bm == 128));
    CHECK(b.lowered.smem_bytes == plan::plan_smem(p).total);
  }
  // the batch rule itself: 32 registers, 16 under a cap below 200 (a 384-thread block's 168 at launch)
  CHECK(lower::whole_tile_batch_regs(255) == 32);
  CHECK(lower::whole_tile_batch_regs(200) == 32);
  CHECK(lower::whole_tile_batch_regs(199) == 16);
  CHECK(lower::whole_tile_batch_regs(168) == 16);
  // outside a cluster the width need not split into the CTAs' column blocks; in one it must
  kernels::gemm_splitk_config c;
  c.bn = 136;
  c.splits = 3;
  CHECK_FALSE(c.valid());
  c.global_sum = true;
  CHECK(c.valid());
  c.splits = kernels::gemm_splitk_config::max_global_splits + 1;
  CHECK_FALSE(c.valid());
}

TEST_CASE("split-K GEMM outside a cluster in runs of K blocks: split s reads blocks sG .. sG + G - 1, then (s + S)G ..") {
  kernels::gemm_splitk_config c;
  c.global_sum = true;
  c.splits = 3;
  c.bn = 192;
  c.stages = max_splitk_stages(c.bn, c.bm, true);
  c.k_group = 8;
  REQUIRE(c.valid());
  const program p = kernels::gemm_splitk_sm90(c);
  const auto b = lower_and_build(p);
  // two loops in each role where k_group 1 has one: the runs (from s, every splits-th) and the blocks of a run
  // (from g * 8, up to g * 8 + 8 or the last K block)
  kernels::gemm_splitk_config one = c;
  one.k_group = 1;
  const program p1 = kernels::gemm_splitk_sm90(one);
  CHECK(p.loops.size() == p1.loops.size() + 2);
  // in each role: the runs walk K in blocks of 64 x 8 (every 3rd from the split), a run from g * 8 to the smaller
  // of g * 8 + 8 and the K blocks
  const std::string runs = "+ (511)) / 512); ", run = "cake_dev::min_ll((8 * (long long)";
  CHECK(count(b.source(), runs) == 2);
  CHECK(count(b.source(), run) == 2);
  const auto l1 = cake::lower::lower(p1, {});
  REQUIRE(l1.ok);
  CHECK(count(l1.source, runs) == 0);
  CHECK(count(l1.source, run) == 0);
  CHECK(b.lowered.smem_bytes == plan::plan_smem(p).total);
  // the group is a schedule choice of any split count, up to one run per split of long K; 0 and 256 are not
  c.k_group = 150;  // 448 K blocks over 3 splits: 150, 150, 148
  CHECK(c.valid());
  CHECK(lower_and_build(kernels::gemm_splitk_sm90(c)).lowered.ok);
  c.k_group = kernels::gemm_splitk_config::max_k_group;  // e4m3's 128-element blocks: a run of 32640 elements
  CHECK(c.valid());
  CHECK(lower_and_build(kernels::gemm_splitk_sm90<e4m3>(c)).lowered.ok);
  c.k_group = 0;
  CHECK_FALSE(c.valid());
  c.k_group = kernels::gemm_splitk_config::max_k_group + 1;
  CHECK_FALSE(c.valid());
}

TEST_CASE("hang trap on: the cluster sum's waits still acquire at cluster scope, through the timed wait") {
  kernels::gemm_splitk_config c;
  c.splits = 2;
  const program p = kernels::gemm_splitk_sm90(c);
  cake::lower::emit_options o;
  o.hang_timeout_ns = 2000000000ull;
  const auto l = cake::lower::lower(p, o);
  REQUIRE_MESSAGE(l.ok, l.error);
  // the waits of the sum (ready; done before the scratch is rewritten, and at the exit's drain) pair with the
  // peers' release.cluster
  CHECK(count(l.source, "cake_dev::mbar_wait_cluster_until(") == 3);
  CHECK_FALSE(has(l.source, "fence.acq_rel.cluster"));
  const auto art = cake::jit::build(l.source, l.entry, "sm_90a");
  REQUIRE_MESSAGE(art.ok, art.diagnostics());
  CHECK(has(art.ptx, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64"));
  CHECK_FALSE(l.cluster_launch);  // no barrier.cluster in the roles: its cluster of 2 launches it as a cluster anyway
}

TEST_CASE("cluster_max and cluster_sum in one role: the second waits for the peers' reads of the first's scratch") {
  // (the GPU tier's schedules: tests/gpu/test_compute.cpp)
  const auto two = lower_and_build(cluster_max_then_sum(), {{"D", 64}});
  const std::string& src = two.lowered.source;
  // 16-byte chunks (4 values a thread): the max folds the peers' values, the sum adds them
  CHECK(has(src, "s.x = fmaxf(s.x, v.x);"));
  CHECK(has(src, "s.x += v.x;"));
  // the role's two reductions share one scratch: each waits on the 'done' of the role's previous reduction
  // (whichever it was) and records its own
  CHECK(count(src, "if (cr_any) {") == 2);
  CHECK(count(src, "cr_any = true;") == 2);
  CHECK(count(src, "the unit's previous use of the scratch is over") == 2);
  CHECK_FALSE(has(src, "every peer has read the previous sum"));
  // one reduction in a role keeps its own wait (the split-K kernels' lowering is unchanged)
  const auto one = lower_and_build(cluster_allreduce_lite(), {{"D", 64}});
  CHECK_FALSE(has(one.lowered.source, "cr_any"));
  CHECK(has(one.lowered.source, "every peer has read the previous sum"));
  CHECK(has(cake::to_text(cluster_max_then_sum()), "= max over the cluster"));
  // the other target the analyzer admits cluster reductions on
  const auto bw = lower_and_build(cluster_max_then_sum(true), {{"D", 64}});
  CHECK(count(bw.lowered.source, "if (cr_any) {") == 2);
}

// A cluster sum, then a row reduction across the warps of the unit, then a cluster max of its result: all three
// write the role's scratch.
constexpr program cluster_sum_then_wide_row_max() {
  auto k = kernel("cluster_sum_then_row_max").target(sm_90a).cluster(2);
  auto [N, D, One] = k.dims("N", spec("D"), "one");
  auto X = k.input<f32>("X", dims(N, D));
  auto Y = k.output<f32>("Y", dims(N, One));
  auto rows = k.parallel(tiles(N, 2));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {2, 1024});
    auto m = r.row_vector<f32>("m", 2);
    r.for_each(rows, [&](auto t) {
      r.load(x, X.tile(t, 0)).fill_outside(0.0f);
      r.cluster_sum(x);
      r.row_max(m, x);
      r.cluster_max(m);  // a row vector: one value a thread, the scalar path
      r.store(Y.tile(t, 0), m);
    });
  });
  return k.build();
}

TEST_CASE("a row reduction across warps after a cluster sum waits for the peers' reads of the sum's scratch, and so does the cluster max after it") {
  const auto b = lower_and_build(cluster_sum_then_wide_row_max(), {{"D", 1024}});
  const std::string& src = b.lowered.source;
  REQUIRE(has(src, "warps that share each row"));  // the row max goes across warps: it writes the scratch
  CHECK(count(src, "if (cr_any) {") == 3);           // the cluster sum's wait, the row max's and the cluster max's
  CHECK(count(src, "cr_any = true;") == 2);
  CHECK(has(src, "s = fmaxf(s, cake_dev::ld_shared_cluster_f32("));  // the max of one value a thread
}

// A schedule whose roles run cluster_sync (barrier.cluster) from their own branches.
constexpr program roles_with_cluster_sync(bool cluster_of_two) {
  auto k = kernel("roles_cluster_sync").target(sm_90a).manual_barrier_init();
  if (cluster_of_two) k.cluster(2);
  auto ready = k.mbarrier("ready");
  k.role("producer", warps(1), [&](role& r) {
    r.init(ready, 1);
    r.fence_mbarrier_init();
    r.cluster_sync();
    r.arrive(ready);
  });
  k.role("consumer", warps(1), [&](role& r) {
    r.cluster_sync();
    r.wait(ready);
  });
  return k.build();
}

TEST_CASE("barrier.cluster in the roles: the kernel launches with a cluster attribute, also for one CTA") {
  // Without one, the implicit one-CTA cluster makes synccheck report the roles' barriers as divergent
  // (bench/h200/sanitizer_probe.cu: split_aligned_nocluster vs split_aligned_cluster1).
  for (bool two : {false, true}) {
    INFO("cluster of two: " << two);
    const auto l = cake::lower::lower(roles_with_cluster_sync(two));
    REQUIRE_MESSAGE(l.ok, l.error);
    CHECK(l.cluster_launch);
    CHECK(l.cluster[0] == (two ? 2 : 1));
    // a schedule's own cluster barriers (and barriers it initializes itself): no drain, the barrier at the end
    if (two) CHECK(has(l.source, "no CTA leaves while a cluster peer may still multicast into it"));
  }
  kernels::gemm_sm90_config g;
  const auto plain = cake::lower::lower(kernels::gemm_bf16_sm90(g));
  REQUIRE_MESSAGE(plain.ok, plain.error);
  CHECK_FALSE(plain.cluster_launch);
  jit::launch_config c;
  CHECK_FALSE(c.has_cluster());
  c.explicit_cluster = true;
  CHECK(c.has_cluster());
}

TEST_CASE("GPU schedule: one-head attention (online softmax, masks, causal bounds, O += P V with P from registers)") {
  for (bool causal : {false, true}) {
    INFO((causal ? "causal" : "full"));
    const program p = attention_lite(causal);
    const auto b = lower_and_build(p);
    const std::string& ptx = b.ptx();
    CHECK(has_re(ptx, wgmma_register_a));  // O += P V: A from registers
    CHECK(has_re(ptx, wgmma_smem_a));      // S = Q K^T: A from smem
    CHECK(has(ptx, "ex2.approx.ftz.f32"));
    CHECK(has(ptx, "shfl.sync.bfly.b32"));
    CHECK(has(ptx, "rcp.rn.f32"));
    if (causal) CHECK(has(b.source(), "cake_dev::min_ll("));
  }
}

TEST_CASE("GPU schedule: k-means assignment (distance GEMM, argmin carried across centroid tiles)") {
  for (bool argmin_of_expr : {false, true}) {
    INFO((argmin_of_expr ? "argmin of the expression" : "argmin of the tile"));
    const auto b = lower_and_build(kmeans_assign_lite(argmin_of_expr));
    CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"));
    CHECK(has(b.ptx(), "shfl.sync.bfly.b32"));
    CHECK(has(b.source(), "cake_dev::warp_argmin<1, 2>"));  // the 4 lanes of a row in the accumulator layout
    // The distances are computed inside the argmin (no elementwise op), or into the accumulator first.
    CHECK(has(b.source(), "elementwise dot = ") == !argmin_of_expr);
    if (argmin_of_expr) CHECK(has(b.source(), "arg_reduce_rows (best, arg) = row_argmin((cn - (2.0 * dot))"));
  }
}

TEST_CASE("GPU schedule: scatter-add of rows at register-held indices") {
  const auto b = lower_and_build(scatter_sum_lite(), {{"D", 64}});
  CHECK(has_re(b.ptx(), R"(red\.global\.add\.f32|atom\.global\.add\.f32)"));
  CHECK(has(b.source(), "constexpr long long d_D = 64LL;"));
}

// With a wgmma group in flight after the mainloop, the epilogue's vectors are loaded before the final
// wgmma.wait_group 0, so that their L2 latency overlaps the last MMAs (docs/gemm.md, "Fused epilogues").
// Without one (in_flight = 0), the loop has already waited: the loads come after the last wait.
TEST_CASE("sm_90a GEMM epilogue: with a wgmma group in flight, the bias and scale vectors load before the last wait") {
  for (const int in_flight : {0, 1}) {
    INFO("in_flight " << in_flight);
    auto c = mainloop(128, 256, false, in_flight);
    c.epi.bias = true;
    c.epi.row_scale = true;
    c.epi.act = activation::gelu_tanh;
    const auto b = lower_and_build(kernels::gemm_bf16_sm90(c));
    const std::string& ptx = b.ptx();
    const auto wait0 = ptx.rfind("wgmma.wait_group.sync.aligned 0");
    const auto last_mma = ptx.rfind("wgmma.mma_async");
    REQUIRE(wait0 != std::string::npos);
    REQUIRE(last_mma != std::string::npos);
    const auto first_load = ptx.find("ld.global", last_mma);  // the epilogue's first vector load
    REQUIRE(first_load != std::string::npos);
    if (in_flight) CHECK(first_load < wait0);
    else CHECK(first_load > wait0);
  }
}
