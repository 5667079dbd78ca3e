// Lowering tier for the paged decode (kernels/attention/decode.hpp): every decode configuration the entry
// point can pick (head dims 64 and 128, GQA groups, page sizes 16 and 64, split counts) and the combine
// kernel are built, analyzed clean, lowered and assembled by NVRTC for sm_90a with no spills. Also the
// entry point's host side, which needs no device: the split rule, the workspace size, and the refusals
// (they come before any driver call; the addresses below are never dereferenced).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "kernels/attention/attention.hpp"
#include "lower_check.hpp"

using namespace cake;
using lower_check::count;
using lower_check::has;
using lower_check::lower_and_build;

namespace {
// A schedule of the in-kernel merge cases: the shape's fields, the rest default (3 stages: the entry point's depth)
struct form {
  int parts, group, page_size, splits, bn = 64, stages = 3;
  constexpr kernels::attention_decode_config config() const {
    kernels::attention_decode_config c;
    c.parts = parts, c.group = group, c.page_size = page_size, c.splits = splits, c.bn = bn, c.stages = stages;
    return c;
  }
};
}  // namespace

TEST_CASE("attention decode (sm_90a): head dims 64 and 128, GQA groups 1 4 8, pages of 16 and 64, split counts") {
  struct v {
    int parts, group, page_size, splits, bn = 64, stages = 2;
    bool persistent = false;
  };
  // the last five: what decode_paged_with also takes (128-key blocks of 8 or 2 pages, 3 stages, persistent walks);
  // then the entry point's schedule at B 256 (one slice, 3 stages)
  for (v x : {v{2, 4, 16, 1}, v{2, 4, 16, 8}, v{2, 4, 64, 32}, v{2, 1, 16, 4}, v{2, 8, 64, 1}, v{1, 4, 16, 2}, v{1, 8, 64, 16}, v{2, 4, 16, 4, 128, 2},
              v{2, 4, 64, 2, 128, 2}, v{2, 4, 16, 4, 64, 3}, v{2, 4, 16, 16, 128, 3, true}, v{2, 4, 64, 2, 64, 4, true}, v{2, 4, 16, 1, 64, 3}}) {
    kernels::attention_decode_config c;
    c.parts = x.parts, c.group = x.group, c.page_size = x.page_size, c.splits = x.splits, c.bn = x.bn, c.stages = x.stages, c.persistent = x.persistent;
    REQUIRE(c.valid());
    const program p = kernels::attention_decode_sm90(c);
    INFO(p.kernel_name.view());
    const auto b = lower_and_build(p);
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
    CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
    CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32.bf16.bf16"));  // S = Q K^T
    CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"));  // O += P V per 64-column part
    CHECK(has(b.ptx(), "ex2.approx"));
    CHECK(has(b.ptx(), "griddepcontrol.launch_dependents"));  // the combine (PDL) may launch early
    // K and V are read once: declared streamed (their tensor maps get no L2 promotion), Q is not
    for (const auto& t : p.tensors) CHECK_MESSAGE(t.streamed == (t.nm.view() == "K" || t.nm.view() == "V"), t.nm.view());
    // TMA boxes: Q (D / 64 parts, rank 3) and per page and part one of K and one of V (rank 4)
    const int ppb = c.pages_per_block();
    CHECK(count(b.ptx(), "cp.async.bulk.tensor.3d") >= c.parts);
    CHECK(count(b.ptx(), "cp.async.bulk.tensor.4d") >= 2 * c.parts * ppb);
    // the page table read once per page of a block, and the length once per role
    CHECK(count(b.source(), "__ldg(static_cast<const int*>") == ppb + 2);
    // 64-key blocks (the entry point's, in 2 or 3 stages): two CTAs per SM, declared (k.ctas_per_sm(2): the
    // launch bounds' second number), 160 threads of at most 168 registers (the register file is allocated per
    // warp, four warps' worth per scheduler: 176 would leave room for one CTA of 5 warps) and the smem of two
    // within 228 KB (128-key blocks: one CTA per SM, ~218 registers)
    // persistent: one CTA per SM (two Q stages), within the 227 KB a CTA may take
    if (c.persistent) CHECK(kernels::attention_decode_smem(c) <= 227 * 1024);
    if (c.bn == 64 && !c.persistent) {
      CHECK(p.launch.ctas_per_sm == 2);
      CHECK(has(b.ptx(), ".minnctapersm 2"));
      CHECK(b.art.resources.registers <= 168);
      CHECK(2 * (kernels::attention_decode_smem(c) + 1024) <= 228 * 1024);
    }
  }
}

TEST_CASE("attention decode (sm_90a): the loads-only probe streams the same boxes and computes nothing") {
  // cake_bench_decode --loads-only times it against the whole kernel: the load side's ceiling
  for (int bn : {64, 128}) {
    kernels::attention_decode_config c;
    c.bn = bn, c.stages = 3, c.splits = 4, c.loads_only = true;
    REQUIRE(c.valid());
    const program p = kernels::attention_decode_sm90(c);
    INFO(p.kernel_name.view());
    CHECK(p.kernel_name.view().back() == 'L');
    const auto b = lower_and_build(p);
    CHECK_FALSE(has(b.ptx(), "wgmma.mma_async"));
    // (its softmax runs once per point on zeros, outside the block loop, so that its register tiles have layouts)
    CHECK(count(b.ptx(), "cp.async.bulk.tensor.4d") >= 2 * c.parts * c.pages_per_block());
  }
}

TEST_CASE("attention decode (sm_90a): fused_combine, the last slice to arrive combines the others (no combine kernel)") {
  // the entry point's regimes (64-key blocks in 3 stages, 128-key blocks), one slice (O and LSE directly), up to 32
  for (form x : {form{2, 4, 16, 2}, form{2, 4, 16, 8}, form{2, 4, 16, 32, 128}, form{2, 4, 16, 1}, form{1, 8, 64, 4}, form{2, 1, 16, 16, 128}}) {
    kernels::attention_decode_config c = x.config();
    c.fused_combine = true;
    REQUIRE(c.valid());
    const program p = kernels::attention_decode_sm90(c);
    INFO(p.kernel_name.view());
    CHECK(p.kernel_name.view().back() == 'C');
    // (the analyzer's checks of the counter: sync.counter-arrivals, sync.counter-order). At 64-key blocks with slices
    // to merge ptxas keeps 168 registers for two CTAs per SM by spilling one (4 bytes; 175 undeclared)
    const bool merges = c.splits > 1 && c.bn == 64;
    const auto b = lower_and_build(p, {}, merges, merges ? 8 : 0);
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
    CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
    // one arrival per slice on the (request, KV head) counter, and the merge only where there are other slices
    CHECK(count(b.ptx(), "atom.acq_rel.gpu.global.inc.u32") == (c.splits > 1 ? 1 : 0));
    CHECK(has(b.ptx(), "lg2.approx"));  // LSE written here
    // 64-key blocks: two CTAs per SM still (registers as the plain schedule's)
    if (c.bn == 64) CHECK(b.art.resources.registers <= 168);
    // the arrival's barrier (the consumer is one warpgroup) is a constant id: with "bar + unit" ptxas reserved all
    // 16 of the CTA's barriers
    CHECK(b.art.resources.barriers < 16);
  }
}

TEST_CASE("attention decode (sm_90a): cluster_combine, a request's slices one cluster merging in distributed shared memory") {
  // the few-request schedule (128-key blocks, one CTA per SM), the many-request one in 2 and 3 stages, D 64, G 1 and 64
  for (form x : {form{2, 4, 16, 8, 128}, form{2, 4, 16, 2, 64, 2}, form{2, 4, 16, 4}, form{1, 8, 64, 4}, form{2, 1, 16, 2, 128}, form{2, 64, 16, 8, 64, 2}}) {
    kernels::attention_decode_config c = x.config();
    c.cluster_combine = true;
    REQUIRE(c.valid());
    const program p = kernels::attention_decode_sm90(c);
    INFO(p.kernel_name.view());
    CHECK(p.kernel_name.view().back() == 'X');
    CHECK(p.launch.cluster_size() == c.splits);
    const auto b = lower_and_build(p);
    CHECK(b.lowered.cluster[0] == c.splits);
    // Q, K, V, the page table, the lengths, the (unused) slice state, O and LSE: no arrival counters (the entry point
    // passes these ten)
    CHECK(p.tensors.size() == 10);
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers, " << b.lowered.smem_bytes << " B smem");
    // the maxima, the sums and each O part reduced over the cluster: remote reads of the peers' scratch, no
    // counter, no combine state; the scratch counted in the smem the schedule declares
    CHECK(has(b.ptx(), "ld.shared::cluster"));
    CHECK_FALSE(has(b.ptx(), "atom.acq_rel.gpu.global.inc.u32"));
    CHECK(has(b.ptx(), "lg2.approx"));  // LSE written here
    CHECK(b.lowered.smem_bytes <= kernels::attention_decode_smem(c) + 1024);
    CHECK(b.lowered.smem_bytes > kernels::attention_decode_smem(c) - 64 * 64 * 4);
    if (kernels::attention_decode_two_ctas_per_sm(c)) CHECK(b.art.resources.registers <= 168);  // two CTAs per SM
  }
}

TEST_CASE("attention decode (sm_90a): kv_fp8, e4m3 caches converted to f16 blocks in the consumer (f16 MMAs)") {
  // the entry point's forms (64-key blocks in 3 stages, split or one slice fused; 128-key blocks), D 64, G 1 / 8,
  // pages of 64, persistent, and with the cluster combine
  struct v {
    int parts, group, page_size, splits, bn = 64, stages = 3;
    bool persistent = false, fused = false, cluster = false;
  };
  for (v x : {v{2, 4, 16, 2}, v{2, 4, 16, 1, 64, 3, false, true}, v{2, 4, 16, 16, 128}, v{1, 8, 64, 4}, v{2, 1, 16, 8}, v{2, 4, 16, 4, 128, 3, true},
              v{2, 4, 16, 4, 64, 2, false, false, true}}) {
    kernels::attention_decode_config c;
    c.parts = x.parts, c.group = x.group, c.page_size = x.page_size, c.splits = x.splits, c.bn = x.bn, c.stages = x.stages;
    c.persistent = x.persistent, c.fused_combine = x.fused, c.cluster_combine = x.cluster, c.kv_fp8 = true;
    REQUIRE(c.valid());
    const program p = kernels::attention_decode_sm90(c);
    INFO(p.kernel_name.view());
    const auto b = lower_and_build(p);
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers, smem " << kernels::attention_decode_smem(c));
    CHECK(p.kernel_name.view().back() == 'F');
    // the caches are e4m3 tensors, streamed; the MMAs are f16 (Q converted once per point, P f16)
    for (const auto& t : p.tensors)
      if (t.nm.view() == "K" || t.nm.view() == "V") CHECK(t.dt == dtype::e4m3);
    CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32.f16.f16"));
    CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"));
    CHECK_FALSE(has(b.ptx(), ".bf16.bf16"));
    // one cvt per pair of a thread's elements of a block (bn x 64 x parts / 128), three times in the code: the first
    // block's K before the loop, then in the loop V (during S) and the next block's K (during P V)
    CHECK(count(b.ptx(), "cvt.rn.f16x2.e4m3x2") == 3 * c.bn * 64 * c.parts / 128 / 2);
    CHECK(has(b.ptx(), "fence.proxy.async.shared::cta"));
    // the fp8 stages are 64-byte swizzled boxes of one page's rows (rank 4), the f16 blocks stored in 16-byte vectors
    CHECK(count(b.ptx(), "cp.async.bulk.tensor.4d") >= 2 * c.parts * c.pages_per_block());
    CHECK(count(b.ptx(), "st.shared.v4.b32") >= 1);
    // 64-key blocks in 3 stages: the smem of two CTAs (fp8 stages, f16 blocks, Q in both types) and at most 168 registers
    if (c.bn == 64 && c.stages == 3 && !c.persistent && !c.cluster_combine) {
      CHECK(p.launch.ctas_per_sm == 2);
      CHECK(b.art.resources.registers <= 168);
    }
  }
}

TEST_CASE("attention decode (sm_90a): the configuration checks") {
  kernels::attention_decode_config c;
  CHECK(c.valid());
  c.page_size = 48;
  CHECK_FALSE(c.valid());  // not 16, 32 or 64
  c.page_size = 64, c.bn = 96;
  CHECK_FALSE(c.valid());  // a block is whole pages
  c.bn = 64, c.group = 65;
  CHECK_FALSE(c.valid());  // the G query heads are rows of one m64 tile
  c.group = 4, c.fused_combine = true;
  CHECK(c.valid());
  c.loads_only = true;
  CHECK_FALSE(c.valid());  // the probe's o is not attention: nothing to combine
  c.loads_only = false, c.fused_combine = false, c.cluster_combine = true, c.splits = 4;
  CHECK(c.valid());
  c.splits = 3;
  CHECK_FALSE(c.valid());  // a 64-column part's reduce-scatter: whole 8-column groups per slice (2, 4 or 8)
  c.splits = 16;
  CHECK_FALSE(c.valid());
  c.splits = 1;
  CHECK_FALSE(c.valid());  // nothing to merge
  c.splits = 8, c.persistent = true;
  CHECK_FALSE(c.valid());  // a cluster per (request, KV head), not a walk
  c.persistent = false, c.fused_combine = true;
  CHECK_FALSE(c.valid());
  // the reductions' scratch (one 64 x 64 f32 part) is counted
  kernels::attention_decode_config plain = c;
  plain.fused_combine = false, plain.cluster_combine = false;
  c.fused_combine = false;
  CHECK(kernels::attention_decode_smem(c) == kernels::attention_decode_smem(plain) + 64 * 64 * 4);
  // fp8 caches: stages of one byte per element, plus the f16 blocks of K and V and Q in f16 (at 64-key blocks in 3 stages the
  // same 112 KiB as bf16, so two CTAs still share an SM); the fused merge of several slices is refused (its ops do not fit a
  // Program), one slice is the entry point's fused form
  kernels::attention_decode_config f8 = plain;
  f8.splits = 2, f8.stages = 3, f8.kv_fp8 = true;
  CHECK(kernels::attention_decode_smem(f8) == 64 * 128 * 2 + 2 * 3 * 64 * 128 + 2 * 64 * 128 * 2 + 64 * 128 * 2);
  kernels::attention_decode_config b3 = f8;
  b3.kv_fp8 = false;
  CHECK(kernels::attention_decode_smem(f8) == kernels::attention_decode_smem(b3));
  f8.fused_combine = true;
  CHECK_FALSE(f8.valid());
  f8.splits = 1;
  CHECK(f8.valid());
}

TEST_CASE("attention decode combine (sm_90a): head dims 64 and 128") {
  for (int parts : {1, 2}) {
    kernels::attention_decode_combine_config c;
    c.parts = parts;
    const program p = kernels::attention_decode_combine_sm90(c);
    const auto b = lower_and_build(p);
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
    CHECK(has(b.ptx(), "ex2.approx"));
    CHECK(has(b.ptx(), "lg2.approx"));
    CHECK(p.launch.pdl);
    CHECK(b.ptx().find("griddepcontrol.wait") < b.ptx().find("ld.global"));  // nothing of the decode's results read before the wait
    // the slices of a trip are loaded before any is used: 4 vector loads of partial O precede the first exp2
    std::size_t at = 0;
    for (int n = 0; n < kernels::attention_decode_combine_config::unroll && at != std::string::npos; ++n) at = b.ptx().find("ld.global.v4", at + 1);
    REQUIRE(at != std::string::npos);
    CHECK(at < b.ptx().find("ex2.approx"));
  }
}

TEST_CASE("attention decode entry point: the split count follows B, HK and the context") {
  auto shape = [](long long B, long long ctx) {
    attention::decode_shape s;
    s.B = B, s.H = 32, s.HK = 8, s.D = 128, s.page_size = 16, s.max_pages = ctx / 16, s.num_pages = B * ctx / 16;
    return s;
  };
  // (the rule fitted to the H200 sweep) few CTAs per split (B * HK < 128): 128-key blocks, split up to 128
  // CTAs with at least a block each; many: 64-key blocks, split up to 1056 CTAs with at least 8 blocks each
  CHECK(attention::decode_config_for(shape(1, 32768)).splits == 16);   // 8 * 16 = 128 CTAs
  CHECK(attention::decode_config_for(shape(1, 32768)).bn == 128);
  CHECK(attention::decode_config_for(shape(1, 1024)).splits == 8);     // 8 blocks of 128: 8 slices of 1
  CHECK(attention::decode_config_for(shape(8, 4096)).splits == 2);     // 64 * 2 = 128 CTAs
  CHECK(attention::decode_config_for(shape(12, 12288)).splits == 4);   // 96 * 4 = 384 CTAs fill 132 SMs better than 192
  CHECK(attention::decode_config_for(shape(16, 32768)).splits == 16);  // many: 128 * 16 = 2048 CTAs, 32 blocks of 64 each
  CHECK(attention::decode_config_for(shape(16, 32768)).bn == 64);
  CHECK(attention::decode_config_for(shape(64, 1024)).splits == 2);    // 16 blocks of 64: 2 slices of 8
  CHECK(attention::decode_config_for(shape(256, 4096)).splits == 1);   // 2048 CTAs already
  CHECK(attention::decode_config_for(shape(256, 4096)).stages == 3);
  CHECK(attention::decode_config_for(shape(256, 4096)).fused_combine);  // one slice writes O itself: no combine kernel
  CHECK_FALSE(attention::decode_config_for(shape(64, 1024)).fused_combine);  // two slices: the combine kernel merges them
  CHECK(attention::decode_config_for(shape(1, 64)).splits == 1);       // one block
  attention::decode_shape s = shape(1, 32768);
  s.max_seq_len = 100;  // the caller's longest request sizes the split when given
  CHECK(attention::decode_config_for(s).splits == 1);
  const auto c = attention::decode_config_for(shape(4, 4096));
  CHECK((c.group == 4 && c.parts == 2 && c.page_size == 16 && c.valid()));
  // workspace: o f32 [splits, B, H, D], then m and l f32 [splits, B, H], each 256-byte aligned
  const long long rows = static_cast<long long>(c.splits) * 4 * 32;
  CHECK(attention::decode_workspace_bytes(shape(4, 4096)) == rows * 128 * 4 + 2 * ((rows * 4 + 255) / 256 * 256));
}

TEST_CASE("attention decode entry point: refusals name the argument, before any device work") {
  auto* p = reinterpret_cast<void*>(std::uintptr_t{0x100000});
  const int* ip = reinterpret_cast<const int*>(std::uintptr_t{0x200000});
  float* lp = reinterpret_cast<float*>(std::uintptr_t{0x300000});
  auto shape = [](long long H, long long HK, long long D, long long ps) {
    attention::decode_shape s;
    s.B = 2, s.H = H, s.HK = HK, s.D = D, s.page_size = ps, s.num_pages = 8, s.max_pages = 4;
    return s;
  };
  auto call = [&](const attention::decode_shape& s, void* ws = nullptr, const void* q = nullptr) {
    attention::decode_paged(q ? q : p, p, p, ip, ip, p, lp, ws ? ws : p, s);
  };
  CHECK_THROWS_WITH_AS(call(shape(8, 2, 128, 48)), doctest::Contains("decode_paged: page_size = 48 is not supported"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(8, 3, 128, 16)), doctest::Contains("H = 8 must be a multiple of HK = 3"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(128, 1, 128, 16)), doctest::Contains("H / HK = 128 query heads per KV head: at most 64"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(8, 2, 96, 16)), doctest::Contains("D = 96 is not supported"), jit::argument_error);
  attention::decode_shape s = shape(8, 2, 128, 16);
  s.max_seq_len = 65;
  CHECK_THROWS_WITH_AS(call(s), doctest::Contains("max_seq_len = 65 is more than max_pages * page_size = 4 * 16 = 64"), jit::argument_error);
  s = shape(8, 2, 128, 16);
  s.max_pages = 0;
  CHECK_THROWS_WITH_AS(call(s), doctest::Contains("max_pages = 0"), jit::argument_error);
  s = shape(8, 2, 128, 16);
  s.B = 0;
  CHECK_THROWS_WITH_AS(call(s), doctest::Contains("B = 0 must be at least 1"), jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(8, 2, 128, 16), static_cast<char*>(p) + 16), doctest::Contains("workspace must be a non-null device address aligned to 256"),
                       jit::argument_error);
  CHECK_THROWS_WITH_AS(call(shape(8, 2, 128, 16), nullptr, static_cast<char*>(p) + 8), doctest::Contains("q must be a non-null device address aligned to 16"),
                       jit::argument_error);
  CHECK_THROWS_WITH_AS(attention::decode_workspace_bytes(shape(8, 2, 128, 32 + 1)), doctest::Contains("decode_workspace_bytes: page_size = 33"),
                       jit::argument_error);
  kernels::attention_decode_config bad;
  bad.splits = 300;
  CHECK_THROWS_WITH_AS(attention::decode_paged_with(bad, p, p, p, ip, ip, p, lp, p, shape(8, 2, 128, 16)), doctest::Contains("decode_paged_with: no such schedule"),
                       jit::argument_error);
  bad.splits = 3, bad.cluster_combine = true;
  CHECK_THROWS_WITH_AS(attention::decode_paged_with(bad, p, p, p, ip, ip, p, lp, p, shape(8, 2, 128, 16)),
                       doctest::Contains("splits 3, page_size 16, cluster_combine; bn 64..128"), jit::argument_error);
  // the loads-only probe's o is not attention: the tuning entry point refuses it (the probe has its own)
  kernels::attention_decode_config probe;
  probe.loads_only = true;
  CHECK_THROWS_WITH_AS(attention::decode_paged_with(probe, p, p, p, ip, ip, p, lp, p, shape(8, 2, 128, 16)), doctest::Contains("loads_only is a timing probe"),
                       jit::argument_error);
}
