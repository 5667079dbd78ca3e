// Lowering tier for kernels/attention/: every prefill configuration the entry point can pick is built,
// analyzed clean, lowered and assembled by NVRTC for sm_90a with no spills; the sm_80 fallback for sm_80.
#include <doctest/doctest.h>

#include "kernels/attention/attention.hpp"
#include "kernels/attention/prefill_sm80.hpp"
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
        // ptxas serializes wgmma (waits after each) when it cannot prove the register operands safe:
        // the overlap this schedule is written for would be lost
        CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
        // nor injects a wgmma fence of its own (C7519: it did before P V, after the V wait's spin loop)
        CHECK_MESSAGE(!has(b.art.log, "C7519"), b.art.log);
        CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32.bf16.bf16"));  // S = Q K^T
        CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"));  // O += P V, per 64-column part
        CHECK(has(b.ptx(), "ex2.approx"));
        CHECK(count(b.ptx(), "cp.async.bulk.tensor.4d") >= 3);  // Q, K, V tiles of rank 4
        CHECK(has(b.ptx(), "setmaxnreg"));
      }
}

TEST_CASE("attention prefill (sm_90a): the other schedules the bench sweeps (3 consumers, key blocks, no turns)") {
  struct v {
    int parts, wgs, bn, stages;
    bool turns;
  };
  for (v x : {v{1, 3, 112, 2, true}, v{1, 3, 112, 3, true}, v{2, 2, 176, 2, true}, v{1, 2, 64, 4, true}, v{2, 2, 128, 2, false}}) {
    kernels::attention_prefill_config c;
    c.parts = x.parts, c.wgs = x.wgs, c.bn = x.bn, c.stages = x.stages, c.turns = x.turns;
    REQUIRE(c.valid());
    const program p = kernels::attention_prefill_sm90(c);
    INFO(p.kernel_name.view());
    const auto b = lower_and_build(p);
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
    CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32.bf16.bf16"));
    CHECK(has(b.ptx(), "bar.arrive") == x.turns);  // the turn is passed with bar.arrive
  }
  kernels::attention_prefill_config bad;
  bad.causal = true, bad.persistent = true, bad.turns = false, bad.lookahead = true;
  CHECK(bad.valid());
  bad.bn = 176;
  CHECK_FALSE(bad.valid());  // the causal lookahead needs query tiles of bn rows (the diagonal block is q)
  bad.lookahead = false;
  CHECK(bad.valid());  // without it the blocks crossing the diagonal are masked in ranges
  kernels::attention_prefill_config vl_tma;
  vl_tma.varlen = true, vl_tma.o_tma = true;
  CHECK_FALSE(vl_tma.valid());  // a TMA store cannot stop at an entry's end
  vl_tma.o_tma = false;
  CHECK(vl_tma.valid());
  kernels::attention_prefill_config q3;
  q3.q_stages = 3;
  CHECK_FALSE(q3.valid());
  // the schedule prefill picks fits smem for every head dim and masking (two Q stages and O's staging at D = 128)
  for (long long D : {64LL, 128LL})
    for (bool causal : {false, true})
      for (long long T : {1000LL, 1024LL, 1025LL, 4096LL, 8191LL, 8192LL, 16384LL}) {
        attention::prefill_shape s;
        s.D = D, s.causal = causal, s.S = s.T = T;
        const auto c = attention::prefill_config_for(s);
        INFO("D " << D << " causal " << causal << " T " << T);
        CHECK(c.valid());
        CHECK(kernels::attention_prefill_smem(c) <= 227 * 1024);
        CHECK(c.q_stages == 2);
        CHECK(c.o_tma);
        CHECK(c.persistent);
        CHECK(c.serpentine == causal);  // causal tiles' work grows along the walk
        // the lookahead but at D = 64 non-causal past 1k keys, where three consumers taking turns win, and at
        // D = 64 causal from 8k keys, where three consumers issuing freely over 112-key blocks win (192-row
        // tiles: the blocks crossing the diagonal masked in ranges)
        const bool three = D == 64 && !causal && T > 1024, three_causal = D == 64 && causal && T >= 8192;
        CHECK(c.lookahead == !(three || three_causal));
        CHECK(c.turns == three);
        CHECK(c.wgs == (three || three_causal ? 3 : 2));
        if (three_causal) {
          CHECK(c.bn == 112);
          CHECK_FALSE(c.diagonal_aligned());
          CHECK(c.stages == 2);
          CHECK(c.skip_past_rows);  // (8192 = 42 x 192 + 128: the last tile's third warpgroup has no row below S)
        } else {
          CHECK(c == (three ? attention::prefill_base_config(s) : kernels::with_lookahead(attention::prefill_base_config(s))));
        }
      }
}

TEST_CASE("attention prefill causal (sm_90a) with query tiles of other than bn rows: the key blocks crossing the diagonal in three ranges") {
  // sequential loops each role runs per point (role 0 the consumers, 1 the producer)
  auto loops_of = [](const program& p, int role) {
    int n = 0;
    for (const auto& o : p.ops) n += o.kind == op_kind::loop && o.role == role;
    return n;
  };
  struct v {
    int parts, wgs, bn, stages;
    bool turns, skip;
  };
  for (v x : {v{1, 3, 112, 2, true, false}, v{1, 3, 96, 3, false, false}, v{2, 2, 96, 2, false, false}, v{1, 3, 112, 2, false, true},
              v{1, 3, 96, 3, false, true}, v{4, 2, 80, 2, false, true}}) {
    kernels::attention_prefill_config c;
    c.parts = x.parts, c.wgs = x.wgs, c.bn = x.bn, c.stages = x.stages, c.turns = x.turns, c.causal = true, c.skip_masked = x.skip;
    c.persistent = true, c.q_stages = x.parts == 4 ? 1 : 2, c.o_tma = x.parts != 4, c.serpentine = true;
    c.skip_past_rows = x.wgs == 3;
    REQUIRE(c.valid());
    REQUIRE_FALSE(c.diagonal_aligned());
    const program p = kernels::attention_prefill_sm90(c);
    INFO(p.kernel_name.view());
    REQUIRE(std::string_view(p.roles[0].nm.view()) == "softmax");
    const auto b = lower_and_build(p);
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
    CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
    // without skipping, both roles walk the last block, the masked ones from the first that crosses the
    // diagonal, then the unmasked ones (three loops each; the aligned form has two); skipping, the consumers
    // walk the blocks past their rows (wait and release only), their first block, the masked ones, the
    // unmasked ones (four) and the producer the crossing blocks last to first, then the rest (two); with
    // skip_past_rows (here the three-consumer forms) the consumers also walk the producer's loops, in a
    // warpgroup whose rows all lie past S (wait and release only)
    CHECK(loops_of(p, 0) == (x.skip ? 4 : 3) + (c.skip_past_rows ? (x.skip ? 2 : 3) : 0));
    CHECK(loops_of(p, 1) == (x.skip ? 2 : 3));
  }
  kernels::attention_prefill_config turns;
  turns.parts = 1, turns.wgs = 3, turns.bn = 112, turns.causal = true, turns.skip_masked = true, turns.turns = true;
  CHECK_FALSE(turns.valid());  // (warpgroups with different trip counts cannot take turns)
  turns.turns = false;
  CHECK(turns.valid());
  turns.bn = 192;
  CHECK_FALSE(turns.valid());  // (aligned: no block crosses only some warpgroups' rows)
  kernels::attention_prefill_config aligned;
  aligned.causal = true, aligned.persistent = true, aligned.q_stages = 2, aligned.o_tma = true;
  REQUIRE(aligned.diagonal_aligned());
  const program ap = kernels::attention_prefill_sm90(aligned);
  CHECK(count(lower_and_build(ap).source(), "for (long long k") == 4);
  CHECK(loops_of(ap, 0) == 2);
}

TEST_CASE("attention prefill skip_past_rows (sm_90a): a warpgroup past S waits and releases only, lowers clean, dense and varlen") {
  auto loops_of = [](const program& p, int role) {
    int n = 0;
    for (const auto& o : p.ops) n += o.kind == op_kind::loop && o.role == role;
    return n;
  };
  for (bool vl : {false, true})
    for (int D : {64, 128}) {
      // the schedule without the lookahead (prefill_varlen's, or prefill's at D = 64 from S = 2k), non-causal:
      // D = 64 three consumers taking turns, D = 128 two issuing freely
      attention::prefill_shape s;
      s.S = s.T = 4096, s.H = 8, s.HK = 8, s.D = D;
      kernels::attention_prefill_config c = attention::prefill_base_config(s);
      if (vl) {
        attention::varlen_shape v;
        v.H = 8, v.HK = 8, v.D = D;
        c = attention::varlen_config_for(v);
      }
      REQUIRE_FALSE(c.lookahead);
      const program plain = kernels::attention_prefill_sm90(c);
      c.skip_past_rows = true;
      REQUIRE(c.valid());
      const program p = kernels::attention_prefill_sm90(c);
      INFO(p.kernel_name.view());
      CHECK(p.kernel_name.view() != plain.kernel_name.view());
      const auto b = lower_and_build(p);  // (no spill, no stack frame, the analyzer's protocol run clean)
      MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
      CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
      CHECK_MESSAGE(!has(b.art.log, "C7519"), b.art.log);
      // the skipping branch walks the producer's key-block loops (two, non-causal): wait and release only
      CHECK(loops_of(p, 0) == loops_of(plain, 0) + 2);
      CHECK(has(b.ptx(), "bar.arrive") == c.turns);  // (a skipping warpgroup still takes its turns)
    }
  kernels::attention_prefill_config la = kernels::with_lookahead(kernels::attention_prefill_config{});
  la.persistent = true, la.skip_past_rows = true;
  CHECK_FALSE(la.valid());  // (the lookahead's point body is not split by warpgroup)
}

TEST_CASE("attention prefill at head dim 256 (sm_90a): the schedule prefill and prefill_varlen pick, causal or not, GQA groups") {
  for (bool causal : {false, true})
    for (long long HK : {8LL, 1LL})
      for (bool vl : {false, true}) {
        attention::prefill_shape s;
        s.D = 256, s.causal = causal, s.H = 8, s.HK = HK, s.S = s.T = 4096;
        attention::varlen_shape v;
        v.D = 256, v.causal = causal, v.H = 8, v.HK = HK;
        const auto c = vl ? attention::varlen_config_for(v) : attention::prefill_config_for(s);
        INFO("causal " << causal << " group " << c.group << " varlen " << vl);
        REQUIRE(c.valid());
        CHECK(c.parts == 4);
        CHECK(kernels::attention_prefill_smem(c) <= 227 * 1024);
        CHECK(c.q_stages == 1);
        CHECK_FALSE(c.o_tma);
        CHECK_FALSE(c.lookahead);  // (its 128-key blocks do not fit next to a 64 KiB Q)
        CHECK(c.persistent == !vl);
        CHECK(c.skip_masked == (causal && !vl));  // (a warpgroup skips the blocks after its last row)
        const program p = kernels::attention_prefill_sm90(c);
        const auto b = lower_and_build(p);
        MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
        CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
        CHECK_MESSAGE(!has(b.art.log, "C7519"), b.art.log);
        CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32.bf16.bf16"));  // S = Q K^T
        CHECK(count(b.ptx(), "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16") >= 4);  // O += P V, one per 64-column part
        CHECK(count(b.ptx(), "cp.async.bulk.tensor") >= 12);  // Q, K and V: four parts each
      }
}

TEST_CASE("attention prefill varlen (sm_90a): the schedules prefill_varlen picks, head dims 64 and 128, causal or not, GQA groups") {
  for (int D : {64, 128})
    for (bool causal : {false, true})
      for (int HK : {8, 2}) {
        attention::varlen_shape shape;
        shape.D = D, shape.causal = causal, shape.H = 8, shape.HK = HK;
        const kernels::attention_prefill_config c = attention::varlen_config_for(shape);
        REQUIRE(c.varlen);
        REQUIRE(c.valid());
        INFO("D " << D << " causal " << causal << " group " << c.group);
        const program p = kernels::attention_prefill_sm90(c);
        const auto b = lower_and_build(p);
        MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
        CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
        CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32.bf16.bf16"));
        CHECK(has(b.ptx(), "bar.arrive") == c.turns);  // (the dense choice's turns: D = 64 non-causal)
        CHECK(count(b.ptx(), "cp.async.bulk.tensor.3d") >= 3);  // Q, K, V tiles of the packed rank-3 tensors
        // the entries' offsets: four ld.global of cu_q / cu_k per role (the two roles of the CTA)
        CHECK(count(b.source(), "__ldg(static_cast<const int*>") == 8);
        // stores stop at the entry's end: the O and LSE row limits are the entry's cu_q[b + 1]
        CHECK(count(b.source(), "cake_dev::min_ll(d_S, ") == 2);
        // a masked loop between the last block and the unmasked ones only when causal (bottom-right diagonal)
        CHECK(count(b.source(), "for (long long k") == (causal ? 6 : 4));
      }
}

TEST_CASE("attention prefill persistent (sm_90a): no spills, no stack frame, no wgmma serialization or injected fence") {
  // The persistent walk keeps its counters and the point's coordinates live across the whole body (in
  // 32-bit ints: in 64 bits the D = 128 and D = 64 non-causal consumers spilled 12 bytes at 168 registers).
  // Both the schedule prefill picks for the shape (3 consumers at D = 64 non-causal: the producer keeps
  // 32 registers, it spilled at 24) and the default one (2 consumers taking turns).
  for (bool picked : {true, false})
    for (int parts : {1, 2})
      for (bool causal : {false, true})
        for (int walk : {0, 1, 2, 3, 4})  // ascending, longest first, ascending with two Q stages (and O stored by TMA, and serpentine)
          for (int group : {1, 8}) {
            const bool longest_first = walk == 1;
            attention::prefill_shape shape;
            shape.D = 64 * parts, shape.causal = causal, shape.H = 8, shape.HK = 8 / group;
            kernels::attention_prefill_config c = picked ? attention::prefill_base_config(shape) : kernels::attention_prefill_config{};
            c.parts = parts, c.causal = causal, c.group = group, c.persistent = true, c.longest_first = longest_first, c.q_stages = walk >= 2 ? 2 : 1, c.o_tma = walk >= 3;
            c.serpentine = walk == 4;
            while (c.stages > 1 && kernels::attention_prefill_smem(c) > 227 * 1024) --c.stages;
            REQUIRE(c.valid());
            INFO("D " << 64 * parts << " causal " << causal << " longest first " << longest_first << " q stages " << c.q_stages << " O by TMA " << c.o_tma << " group " << group << " wgs " << c.wgs << " turns " << c.turns);
            const program p = kernels::attention_prefill_sm90(c);
            CHECK(p.launch.persistent);
            const auto b = lower_and_build(p);  // no spills, no stack frame
            MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
            CHECK_MESSAGE(!has(b.art.log, "serialized"), b.art.log);  // C7510 and kin
            CHECK_MESSAGE(!has(b.art.log, "C7519"), b.art.log);
            CHECK(b.art.resources.warnings.empty());
            CHECK(b.lowered.smem_bytes >= kernels::attention_prefill_smem(c));  // the tiles of every Q, K and V stage (and the barriers)
            CHECK(b.lowered.smem_bytes <= 227 * 1024);
            // O by TMA: one store per 64-column part from smem (stmatrix), else st.global from registers
            CHECK(has(b.ptx(), "cp.async.bulk.tensor.4d.global.shared::cta") == c.o_tma);
            CHECK(has(b.ptx(), "stmatrix.sync.aligned") == c.o_tma);
            CHECK(count(b.source(), "t_stride = (int)gridDim.x / 1;") == 2);  // both roles walk, persistent
            // longest first: the query tiles are the outer axis, mirrored; else axis 0, ascending
            CHECK(has(b.source(), "const long long ax2 = n_ax2 - 1 - ((t_outer) % n_ax2);") == longest_first);
            CHECK(has(b.source(), "n_ax0_64 = (d_S + " + std::to_string(c.rows() - 1) + ") / " + std::to_string(c.rows()) + ";") == !longest_first);
            // serpentine: the odd rounds dealt in reverse (plan::walk_index), the steps counted per CTA (plan::walk_steps)
            CHECK(count(b.source(), "const int t_point = (t_step & 1) ? t_iter + t_stride - 1 - 2 * t_first : t_iter;") == (c.serpentine ? 2 : 0));
            CHECK(count(b.source(), "t_step < t_steps;") == (c.serpentine ? 2 : 0));
            CHECK(p.launch.order == (c.serpentine ? walk_order::serpentine : walk_order::strided));
          }
}

// prefill_with runs the schedule it is given, whole, but for what the shape fixes; one it cannot run is refused
// with the reason. (It had copied fields one by one and dropped those added later: the lookahead never ran.)
TEST_CASE("attention prefill_with: the forced schedule is the one launched, but for the shape's fields") {
  attention::prefill_shape s;
  s.B = 2, s.S = 1024, s.T = 1024, s.H = 8, s.HK = 2, s.D = 128, s.causal = true;
  kernels::attention_prefill_config f = kernels::with_lookahead(attention::prefill_base_config(s));
  f.serpentine = true, f.longest_first = true;
  f.parts = 1, f.causal = false, f.group = 1, f.varlen = true;  // what the shape overrides
  const auto c = attention::detail::prefill_forced_config(f, s);
  CHECK(c.parts == 2);
  CHECK(c.causal);
  CHECK(c.group == 4);
  CHECK_FALSE(c.varlen);
  auto expect = f;
  expect.parts = 2, expect.causal = true, expect.group = 4, expect.varlen = false;
  CHECK(c == expect);  // every other field as forced (lookahead, serpentine, longest first, stages, ...)
  CHECK(c.lookahead);
  CHECK(c.serpentine);
  auto bad = attention::prefill_config_for(s);
  bad.wgs = 3;  // the causal lookahead needs two consumers (query tiles of bn rows); three are D = 64's
  CHECK_THROWS_WITH_AS(attention::detail::prefill_forced_config(bad, s), doctest::Contains("causal with the lookahead: needs wgs 2 and bn 128"),
                       jit::argument_error);
  // without the lookahead, causal D = 64 takes three consumers over 112-key blocks (the diagonal in ranges)
  s.D = 64;
  auto three = attention::prefill_base_config(s);
  three.wgs = 3, three.bn = 112;
  const auto t = attention::detail::prefill_forced_config(three, s);
  CHECK(t.wgs == 3);
  CHECK_FALSE(t.diagonal_aligned());
  three.skip_masked = true;  // skipping needs consumers issuing freely (the base at D = 64 causal issues freely)
  CHECK(attention::detail::prefill_forced_config(three, s).skip_masked);
  three.turns = true;
  CHECK_THROWS_WITH_AS(attention::detail::prefill_forced_config(three, s), doctest::Contains("skip_masked: needs causal"), jit::argument_error);
  // D = 256 with two Q stages: 288 KiB of smem, said with the number
  s.D = 256;
  auto wide = attention::prefill_config_for(s);
  wide.q_stages = 2;
  CHECK_THROWS_WITH_AS(attention::detail::prefill_forced_config(wide, s), doctest::Contains("smem 288 KiB"), jit::argument_error);
}

// Lookahead (r.next_point): the consumer issues the next tile's first S = Q K^T before this tile's last P V
// and runs its masked softmax meanwhile. The wgmma groups are issued and retired inside conditional blocks
// (the next point's, the first point's prologue): ptxas must still neither serialize them nor inject fences.
TEST_CASE("attention prefill lookahead (sm_90a): lowers clean, the next point's first S issued before the last P V") {
  for (int parts : {1, 2})
    for (bool causal : {false, true})
      for (int group : {1, 8}) {
        attention::prefill_shape shape;
        shape.D = 64 * parts, shape.causal = causal, shape.H = 8, shape.HK = 8 / group;
        const kernels::attention_prefill_config c = kernels::with_lookahead(attention::prefill_base_config(shape));
        REQUIRE(c.valid());
        INFO("D " << 64 * parts << " causal " << causal << " group " << group);
        const program p = kernels::attention_prefill_sm90(c);
        const auto b = lower_and_build(p);  // analyzed clean, no spills, no stack frame
        MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
        CHECK_MESSAGE(!has(b.art.log, "serialized"), b.art.log);
        CHECK_MESSAGE(!has(b.art.log, "C7519"), b.art.log);
        CHECK(b.art.resources.warnings.empty());
        // one next-point body (the next S, this tile's last P V, the next S's softmax) with the next point's coordinates
        CHECK(count(b.source(), "const int t_iter = t_iter_next, t_step = t_step_next;") == 1);
        // Q in the body, K in the first-point prologue and in the next point's softmax, V after either branch's last P V
        CHECK(count(b.source(), "// held") == 4);
        CHECK(has(b.ptx(), "wgmma.wait_group.sync.aligned 1"));
      }
}

// Varlen with the persistent walk (not what prefill_varlen picks: it measured 4..8% slower on the "spread"
// batches, docs/attention.md): the same walk over (query tile, head, entry), each point reading its entry's
// offsets, lowers without spills, a stack frame or a wgmma serialization (no entry point runs it yet).
TEST_CASE("attention prefill varlen with the persistent walk (sm_90a): lowers clean, both roles walk, offsets read per point") {
  for (int D : {64, 128})
    for (bool causal : {false, true}) {
      attention::varlen_shape shape;
      shape.D = D, shape.causal = causal, shape.H = 8, shape.HK = 2;
      kernels::attention_prefill_config c = attention::varlen_config_for(shape);
      c.persistent = true;
      REQUIRE(c.valid());
      INFO("D " << D << " causal " << causal);
      const program p = kernels::attention_prefill_sm90(c);
      CHECK(p.launch.persistent);
      const auto b = lower_and_build(p);  // no spills, no stack frame
      MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
      CHECK_MESSAGE(!has(b.art.log, "serialized"), b.art.log);
      CHECK(b.art.resources.warnings.empty());
      CHECK(count(b.source(), "t_stride = (int)gridDim.x / 1;") == 2);  // both roles walk, persistent
      CHECK(count(b.source(), "__ldg(static_cast<const int*>") == 8);                 // each role reads the entry's offsets
      CHECK(count(b.source(), "cake_dev::min_ll(d_S, ") == 2);                        // O and LSE stop at the entry's end
    }
}

TEST_CASE("attention prefill (sm_80 fallback): head dims 64 and 128, causal or not, GQA groups, 2 and 3 copies") {
  for (int parts : {1, 2})
    for (bool causal : {false, true})
      for (int group : {1, 4})
        for (int stages : {2, 3}) {
          kernels::attention_prefill_sm80_config c;
          c.parts = parts, c.causal = causal, c.group = group, c.stages = stages;
          REQUIRE(c.valid());
          const program p = kernels::attention_prefill_sm80(c);
          INFO(p.kernel_name.view());
          const auto b = lower_and_build(p);
          MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers, " << kernels::attention_prefill_sm80_smem(c) << " bytes of smem");
          CHECK(has(b.ptx(), "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
          CHECK(has(b.ptx(), "ldmatrix.sync.aligned.m8n8.x4.trans"));  // V is MN-major for P V
          CHECK(has(b.ptx(), "cp.async.cg.shared.global"));
          CHECK(has(b.ptx(), "ex2.approx"));
          CHECK_FALSE(has(b.ptx(), "wgmma"));
          CHECK_FALSE(has(b.ptx(), "mbarrier"));
        }
  kernels::attention_prefill_sm80_config bad;
  bad.parts = 3;
  CHECK_FALSE(bad.valid());
}

// The stream-K tail (config.tail_parts, k.split_tail): the schedules the entry point picks for non-causal shapes
// (D 64 and 128, with and without the lookahead, 2 and 3 consumers) with their last round split over key blocks:
// analyzed clean, lowered with no spill; a part stores its O in f32 for the combine kernel (below).
TEST_CASE("attention prefill with a split tail (sm_90a): the picked non-causal schedules, lowered clean, parts stored in f32") {
  for (long long D : {64LL, 128LL})
    for (long long S : {1024LL, 4096LL}) {
      attention::prefill_shape s;
      s.D = D, s.S = s.T = S, s.H = 32, s.HK = 8, s.B = 16384 / S;
      kernels::attention_prefill_config c = attention::prefill_config_for(s);
      const program plain = kernels::attention_prefill_sm90(c);
      c.tail_parts = 16;
      INFO("D " << D << " S " << S << " lookahead " << c.lookahead << " wgs " << c.wgs);
      REQUIRE(c.valid());
      const program p = kernels::attention_prefill_sm90(c);
      CHECK(p.kernel_name.view() != plain.kernel_name.view());
      CHECK(p.launch.split_tail());
      const auto b = lower_and_build(p);
      MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
      CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
      CHECK_MESSAGE(!has(b.art.log, "C7519"), b.art.log);
      CHECK(has(b.source(), "t_units = t_whole + (walk - t_whole) * t_parts"));
      CHECK(has(b.source(), "store_global part_o.tile(tail_unit, wg, 0) <- o"));
      CHECK(has(b.source(), "store_global part_lse.tile(tail_unit, wg, 0)"));
    }
  kernels::attention_prefill_config bad = kernels::attention_prefill_config{};
  bad.tail_parts = 8;
  CHECK_FALSE(bad.valid());  // (not persistent)
  bad.persistent = true;
  CHECK(bad.valid());
  bad.causal = true;
  CHECK_FALSE(bad.valid());  // (causal tiles differ in work: the serpentine walk evens them)
  bad.causal = false, bad.parts = 4;
  CHECK_FALSE(bad.valid());  // (the combine's warpgroups: one per 64 rows and 64 columns, at most 4 x 2)
}

TEST_CASE("attention prefill tail combine (sm_90a): walks as the prefill, spreads the tile's blocks over its parts, lowered clean") {
  for (long long D : {64LL, 128LL}) {
    attention::prefill_shape s;
    s.D = D, s.S = s.T = 4096, s.H = 32, s.HK = 8, s.B = 4;
    kernels::attention_prefill_config c = attention::prefill_config_for(s);
    c.tail_parts = 16;
    INFO("D " << D << " wgs " << c.wgs);
    REQUIRE(c.valid());
    const program pre = kernels::attention_prefill_sm90(c);
    const program p = kernels::attention_prefill_tail_combine_sm90(c);
    // the same walk: space, raster, order, split tail
    CHECK(p.launch.persistent);
    CHECK(p.launch.split_tail());
    CHECK(p.launch.tail_parts == pre.launch.tail_parts);
    CHECK(p.launch.tail_extent == pre.launch.tail_extent);
    CHECK(p.launch.order == pre.launch.order);
    CHECK(p.launch.rast.group == pre.launch.rast.group);
    CHECK(p.launch.ctas_per_sm == pre.launch.ctas_per_sm);
    CHECK(p.launch.pdl);
    REQUIRE(p.space.count == pre.space.count);
    for (int a = 0; a < p.space.count; ++a) {
      CHECK(p.space.axes[a].kind == pre.space.axes[a].kind);
      CHECK(p.space.axes[a].extent == pre.space.axes[a].extent);
      CHECK(p.dims[p.space.axes[a].dim].nm.view() == pre.dims[pre.space.axes[a].dim].nm.view());
    }
    const auto b = lower_and_build(p);
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
    CHECK(has(b.ptx(), "griddepcontrol.wait"));
    CHECK(has(b.source(), "t_units = t_whole + (walk - t_whole) * t_parts"));
  }
}
