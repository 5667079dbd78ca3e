#pragma once
// cake::attention: the attention entry points an engine calls, on device pointers.
//
//   cake::attention::prefill(q, k, v, o, lse, shape, stream, device)
//       o = softmax(scale * q k^T [+ causal mask]) v per (batch, query head), lse = the row's log-sum-exp
//       (natural log, f32). kernels/attention/prefill.hpp says the math and the schedule.
//
// Layouts (FlashAttention's): q and o are bf16 [B, S, H, D], k and v bf16 [B, T, HK, D], row-major and
// contiguous; lse is f32 [B, H, S]. D is 64, 128 or 256 (256 on Hopper only); H is a multiple of HK (G = H / HK query heads per KV
// head: MHA, GQA, MQA). Causal masks are top-left aligned (query i sees keys 0..i, PyTorch's is_causal) and need S <= T.
// softmax_scale <= 0 means 1 / sqrt(D). The call picks the schedule (prefill_config_for), JIT-compiles it
// once per schedule and device (and on disk, docs/jit.md) and launches it on `stream`. On a Hopper device
// (cc 9.0) it runs the sm_90a schedule (prefill.hpp); on any other device from cc 8.0 (Ampere, Ada, and
// later GPUs through PTX JIT) the portable fallback (prefill_sm80.hpp: mma.sync and cp.async, FA2 style;
// also callable as prefill_sm80). Below cc 8.0: unsupported_error. The varlen form and prefill_with need
// cc 9.0.
//
//   cake::attention::prefill_varlen(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, shape, stream, device)
//       the same over a packed batch of entries of different lengths (FlashAttention's varlen layout):
//       q and o bf16 [total_q, H, D], k and v bf16 [total_k, HK, D], lse f32 [H, total_q]; entry b's queries
//       are rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1, its keys rows cu_seqlens_k[b] .. cu_seqlens_k[b + 1]
//       - 1 (int32 device arrays of B + 1 offsets, starting at 0). Causal masks are bottom-right aligned
//       (FlashAttention >= 2.1): query i of an entry sees keys j <= i + len_k - len_q; the same as top-left
//       when len_q == len_k. Contract (not checked: the offsets live on the device, and checking them would
//       cost a copy and a sync): the offsets do not decrease, cu_seqlens_q[B] <= total_q and cu_seqlens_k[B]
//       <= total_k, max_seqlen_q >= every len_q, every entry with len_q > 0 has len_k > 0, and (causal)
//       len_k >= len_q. Rows of o and lse outside every entry are not written.
//
//   cake::attention::decode_paged(q, k_cache, v_cache, page_table, seq_lens, o, lse, workspace, shape, stream, device)
//       one new query token per request against a paged KV cache (vLLM / FlashInfer layout): q and o bf16
//       [B, H, D]; k_cache and v_cache bf16 [num_pages, page_size, HK, D]; key j of request b is row
//       j % page_size of page page_table[b, j / page_size] (page_table int32 [B, max_pages], seq_lens int32
//       [B], both on the device); lse f32 [B, H] (natural log). workspace: decode_workspace_bytes(shape) bytes
//       of device memory, 256-byte aligned (the split slices' partial results; the caller owns it, so the
//       call allocates nothing and can be captured in a CUDA graph). Contract (device data, not checked):
//       seq_lens[b] <= max_pages * page_size, page_table[b, i] in [0, num_pages) for i < ceil(seq_lens[b] /
//       page_size); a request with seq_lens[b] == 0 gets o = 0 and lse = -inf. Two kernels (the split decode
//       and the combine, kernels/attention/decode.hpp), or one where the context is not split (fused_combine:
//       the one slice writes o and lse), enqueued on `stream` without a host synchronization.
//
// This header lives in the kernel corpus (kernels/attention/): include it as
// "kernels/attention/attention.hpp". Link cake::jit.
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <cake/runtime/arrival_counters.hpp>
#include <cake/runtime/kernel.hpp>
#include <cake/runtime/kernel_table.hpp>

#include "decode.hpp"
#include "prefill.hpp"
#include "prefill_sm80.hpp"

namespace cake::attention {

struct prefill_shape {
  long long B = 1;   // batch entries
  long long S = 0;   // query rows per entry
  long long T = 0;   // keys per entry
  long long H = 1;   // query heads
  long long HK = 1;  // key / value heads (H % HK == 0)
  long long D = 128; // head dim: 64, 128 or 256 (256 on Hopper only)
  bool causal = false;
  float softmax_scale = 0;  // <= 0: 1 / sqrt(D)
};

// The schedule for a shape: one 64-column part per 64 of D, the GQA group, causal or not; then what
// the sweep at S = 4096 (cake_bench_attention --sweep, the tuning shape; other S are held out) measured
// faster than the first schedule (2 consumers taking turns, 2 stages, 128-key blocks): consumers issuing
// without turns (+7..15%), 3 pipeline stages at D = 128 (+7..13%), and at D = 64 non-causal three
// consumer warpgroups of 64 rows with 112-key blocks (+14..21%).
constexpr kernels::attention_prefill_config prefill_base_config(const prefill_shape& s) {
  kernels::attention_prefill_config c;
  c.parts = static_cast<int>(s.D / 64);
  c.causal = s.causal;
  c.group = static_cast<int>(s.HK > 0 ? s.H / s.HK : 1);
  c.turns = false;
  // D = 64 non-causal: three consumers of 64 rows over 112-key blocks, taking turns at issuing their MMAs (with
  // this walk, H200 2026-12-03, cake_bench_attention --variant persistent-q2-ot --sweep: +7% at S = 1k and 4k,
  // +11% at 8k, +4% at 16k over issuing freely; with two consumers, causal or D = 128, turns were 0-3% slower)
  if (c.parts == 1 && !c.causal) c.wgs = 3, c.bn = 112, c.turns = true;
  // The persistent walk with two Q stages and O stored by TMA: the producer loads the next tile's Q and first
  // K / V blocks during this tile, and the consumers hand O to one TMA store per part instead of 32 (D = 128)
  // two-bf16 st.global per thread, so a tile's fixed costs overlap the next one. On the H200
  // (cake_bench_attention --variant all --hk 32, 2026-12-03) it was the fastest walk on 16 of 20 shapes, within
  // 1.3% on 3 (longest first is 8% faster on D = 64 causal at 1k, and up to 20% slower elsewhere); against the
  // walks chosen before (D = 128 persistent with one Q stage and 3 K / V stages, D = 64 the grid) +6..10% at
  // S = 1k, +1..4% at 2k, -1..+5% from 4k. At D = 128 smem then holds 2 K / V stages (2 x 32 KiB of Q, 32 KiB
  // of O staging).
  c.persistent = true;
  c.q_stages = 2;
  c.o_tma = true;
  c.stages = 2;
  // Causal: the serpentine walk. Tile q costs q + 1 key blocks; a strided walk of 132 CTAs over 8 tiles per
  // head (S = 1k) gives CTA i only tiles i % 4 and i % 4 + 4, the busiest CTA 1.37x the mean work (1.21x at 2k,
  // 1.13x at 4k); dealing every other round in reverse evens that to 1.03x with the same tiles in flight.
  c.serpentine = c.causal;
  // D = 256 (4 parts): Q of 128 rows is 64 KiB and a key block 512 bytes per key in each of K and V, so one Q
  // stage, O from registers and 80-key blocks in 2 stages (224 KiB of smem; FlashAttention 3's choice for
  // this head dim); O's 64 x 256 f32 accumulator holds 128 of a consumer's registers. Causal then masks the
  // blocks crossing the diagonal in ranges (128-row tiles over 80-key blocks), and a warpgroup skips those past
  // its last row (skip_masked: the consumers issue freely here; not measured against computing them).
  if (c.parts == 4) c.q_stages = 1, c.o_tma = false, c.bn = 80, c.stages = 2, c.skip_masked = c.causal && !c.turns;
  return c;
}

// The schedule prefill runs for a shape: the one above, with the lookahead where it measured faster.
constexpr kernels::attention_prefill_config prefill_config_for(const prefill_shape& s) {
  kernels::attention_prefill_config c = prefill_base_config(s);
  // The lookahead (the next tile's first S = Q K^T and its masked softmax while this tile's last P V runs, so
  // a tile's fixed costs overlap the next one's; two consumers issuing freely over 128-key blocks): measured
  // against the schedule above (cake_bench_attention --variant lookahead, H200 2026-12-04, both HK): D = 128
  // +1..4% from 2k, -0.5..+15% at 1k; causal D = 64 +1..4% up to 4k, +-0.5% above; D = 64 non-causal +10%
  // at 1k, where a query tile has 8 key blocks, but 5..10% slower from 2k, where three consumers' steady
  // state wins.
  // (not at D = 256: the lookahead's 128-key blocks do not fit smem next to a 64 KiB Q)
  // Causal D = 64 from 8k query rows and keys: three consumers of 64 rows over 112-key blocks, issuing freely,
  // the blocks crossing the diagonal masked in ranges (192-row tiles, "Causal with query tiles of other than bn
  // rows" in docs/attention.md). The masked work past the diagonal, about rows x (rows + bn) / 2 per tile, is a
  // small share of a tile's keys there; at 1k-4k it outweighs the third consumer. Measured against the
  // lookahead schedule (cake_bench_attention --variant causal-w3, H100 2026-12-06, both HK,
  // bench/results/h100/attention_prefill_causal_long.json): the three-consumer forms +2..12% at 8k and 16k (this
  // one +11.6% at 8k, +3.5% at 16k with skip_past_rows, 8 KV heads), 2..4% slower at 4k, 5..17% at 1k and 2k.
  // skip_past_rows: a warpgroup whose rows all lie past S computes nothing (8192 = 42 x 192 + 128 leaves the last
  // tile's third warpgroup empty, and it has the most keys); skip_masked and skip_past_rows measured within the
  // H100's drift (up to 9% between two timings of one kernel) either way.
  if (c.parts == 1 && c.causal && (s.S < s.T ? s.S : s.T) >= 8192) {  // (top-left causal: row i sees keys <= i)
    c.wgs = 3, c.bn = 112, c.stages = 2, c.turns = false, c.skip_past_rows = true;
    return c;
  }
  if (c.parts != 4 && (c.parts == 2 || c.causal || s.T <= 1024)) c = kernels::with_lookahead(c);
  return c;
}

// A packed batch (prefill_varlen): B entries, total_q / total_k rows of q / k in all, the longest entry's
// query count (it sizes the grid: ceil(max_seqlen_q / 128) query tiles per entry and head).
struct varlen_shape {
  long long B = 1;
  long long total_q = 0, total_k = 0;
  long long max_seqlen_q = 0;
  long long H = 1, HK = 1, D = 128;
  bool causal = false;
  float softmax_scale = 0;  // <= 0: 1 / sqrt(D)
};

// The varlen schedule: the dense one for the same head dim, group and masking, with varlen set.
constexpr kernels::attention_prefill_config varlen_config_for(const varlen_shape& s) {
  prefill_shape d;
  d.D = s.D, d.H = s.H, d.HK = s.HK, d.causal = s.causal;
  kernels::attention_prefill_config c = prefill_base_config(d);  // (the lookahead needs the dense persistent walk)
  c.varlen = true;
  c.skip_masked = false;  // (dense only: varlen's diagonal is the entry's)
  // the grid walk: persistent measured 4..8% slower on the "spread" batches at D = 128 (and +3% on "mixed");
  // one Q stage and O stored from registers (a TMA store cannot stop at an entry's end), and at D = 128 the
  // three K / V stages that smem then has room for (as measured for varlen)
  c.persistent = false;
  c.serpentine = false;
  c.q_stages = 1;
  c.o_tma = false;
  if (c.parts == 2) c.stages = 3;
  return c;
}

namespace detail {

// The prefill kernel of a schedule, or (tail_combine) the combine of its split tail's parts
// (attention_prefill_tail_combine_sm90), once per schedule and device.
inline const runtime_kernel& prefill_kernel(const kernels::attention_prefill_config& c, int device, bool tail_combine = false) {
  using key = std::tuple<kernels::attention_prefill_config, bool, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, tail_combine, device}, [&] {
    const program p = tail_combine ? kernels::attention_prefill_tail_combine_sm90(c) : kernels::attention_prefill_sm90(c);
    if (!p.errors.empty())
      throw jit::error(std::string("cake::attention::prefill: ") + (tail_combine ? "the tail combine" : "the schedule") + " is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

inline void check_prefill(const prefill_shape& s, const char* who = "cake::attention::prefill") {
  auto bad = [&](const std::string& why) { throw jit::argument_error(std::string(who) + ": " + why); };
  auto n = [](long long v) { return std::to_string(v); };
  if (s.B < 1) bad("B = " + n(s.B) + " must be at least 1");
  if (s.S < 1) bad("S = " + n(s.S) + " must be at least 1");
  if (s.T < 1) bad("T = " + n(s.T) + " must be at least 1");
  if (s.H < 1 || s.HK < 1) bad("H = " + n(s.H) + " and HK = " + n(s.HK) + " must be at least 1");
  if (s.H % s.HK != 0) bad("H = " + n(s.H) + " must be a multiple of HK = " + n(s.HK) + " (query heads per KV head)");
  if (s.H / s.HK > 256) bad("H / HK = " + n(s.H / s.HK) + " query heads per KV head: at most 256");
  if (s.D != 64 && s.D != 128 && s.D != 256) bad("D = " + n(s.D) + " is not supported: 64, 128 or 256");
  if (s.S * s.H * s.D > (1LL << 40) || s.T * s.HK * s.D > (1LL << 40)) bad("a tensor of more than 2^40 elements per batch entry");
  if (s.causal && s.S > s.T) bad("causal with S = " + n(s.S) + " > T = " + n(s.T) + ": the top-left aligned mask needs S <= T");
  if (!(s.softmax_scale <= 0 || std::isfinite(s.softmax_scale))) bad("softmax_scale is not finite");
}

inline void check_pointer(const char* name, const void* p, unsigned align, const char* who = "cake::attention::prefill") {
  if (!p || reinterpret_cast<std::uintptr_t>(p) % align)
    throw jit::argument_error(std::string(who) + ": " + name + " must be a non-null device address aligned to " + std::to_string(align) +
                              " bytes");
}

inline void check_hopper(int device, const char* who = "cake::attention::prefill") {
  const auto& dev = jit::driver::get().device(device);
  if (!(dev.cc_major == 9 && dev.cc_minor == 0))
    throw jit::unsupported_error(std::string(who) + ": needs a Hopper device (compute capability 9.0, sm_90a); device " + std::to_string(device) + " is " +
                                 dev.describe());
}

// The portable fallback's kernel for a shape (one per head dim, mask and group), once per device.
inline const runtime_kernel& prefill_sm80_kernel(const kernels::attention_prefill_sm80_config& c, int device) {
  using key = std::tuple<kernels::attention_prefill_sm80_config, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, device}, [&] {
    const program p = kernels::attention_prefill_sm80(c);
    if (!p.errors.empty())
      throw jit::error("cake::attention::prefill_sm80: the schedule is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

inline void launch_prefill_sm80(const void* q, const void* k, const void* v, void* o, float* lse, const prefill_shape& s, CUstream stream, int device) {
  const auto& dev = jit::driver::get().device(device);
  if (dev.cc_major < 8)
    throw jit::unsupported_error("cake::attention::prefill: needs a device of compute capability 8.0 or newer (mma.sync bf16, cp.async); device " +
                                 std::to_string(device) + " is " + dev.describe());
  if (s.D == 256)
    throw jit::unsupported_error("cake::attention::prefill: head dim 256 runs on the sm_90a schedule only (a Hopper device, compute capability 9.0); device " +
                                 std::to_string(device) + " is " + dev.describe() + " (the portable fallback has head dims 64 and 128)");
  kernels::attention_prefill_sm80_config c;
  c.parts = static_cast<int>(s.D / 64), c.causal = s.causal, c.group = static_cast<int>(s.H / s.HK);
  const runtime_kernel& kern = prefill_sm80_kernel(c, device);
  const double scale = s.softmax_scale > 0 ? s.softmax_scale : 1.0 / std::sqrt(static_cast<double>(s.D));
  const tensor_arg args[] = {tensor_view(q, {s.B, s.S, s.H, s.D}), tensor_view(k, {s.B, s.T, s.HK, s.D}), tensor_view(v, {s.B, s.T, s.HK, s.D}),
                             tensor_view(o, {s.B, s.S, s.H, s.D}), tensor_view(lse, {s.B, s.H, s.S, 1})};
  const double scalars[] = {scale * 1.4426950408889634};
  kern.launch(args, scalars, stream);
}

}  // namespace detail

namespace detail {
// The schedule prefill_with runs: `forced` whole, but for what the shape fixes (parts, causal, group, varlen).
// (A copy field by field had dropped the fields added after it: the lookahead was never launched.)
inline kernels::attention_prefill_config prefill_forced_config(const kernels::attention_prefill_config& forced, const prefill_shape& s) {
  const kernels::attention_prefill_config derived = prefill_config_for(s);
  kernels::attention_prefill_config c = forced;
  c.parts = derived.parts, c.causal = derived.causal, c.group = derived.group, c.varlen = derived.varlen;
  if (!c.valid() || kernels::attention_prefill_smem(c) > 227 * 1024)
    throw jit::argument_error("cake::attention::prefill_with: no such schedule (wgs " + std::to_string(c.wgs) + ", bn " + std::to_string(c.bn) + ", stages " +
                              std::to_string(c.stages) + ", q stages " + std::to_string(c.q_stages) + ", D " + std::to_string(s.D) +
                              ", smem " + std::to_string(kernels::attention_prefill_smem(c) / 1024) + " KiB" +
                              (s.causal && c.lookahead ? ", causal with the lookahead: needs wgs 2 and bn 128" : "") +
                              (c.skip_masked ? ", skip_masked: needs causal, 64 * wgs != bn, dense, consumers issuing freely, no lookahead" : "") +
                              (c.skip_past_rows && c.lookahead ? ", skip_past_rows: not with the lookahead" : "") +
                              (c.tail_parts != 0 ? ", tail_parts: 2..64, persistent, dense, not causal, not longest first, D <= 128" : "") +
                              "; wgs 3 is for D = 64; smem at most 227 KiB)");
  return c;
}

inline void run_prefill(const kernels::attention_prefill_config* forced, const void* q, const void* k, const void* v, void* o, float* lse,
                        const prefill_shape& s, CUstream stream, int device) {
  check_prefill(s);
  check_pointer("q", q, 16);
  check_pointer("k", k, 16);
  check_pointer("v", v, 16);
  check_pointer("o", o, 16);
  check_pointer("lse", lse, 4);
  const kernels::attention_prefill_config c = forced ? prefill_forced_config(*forced, s) : prefill_config_for(s);
  if (!forced) {
    const auto& dev = jit::driver::get().device(device);
    if (!(dev.cc_major == 9 && dev.cc_minor == 0)) return launch_prefill_sm80(q, k, v, o, lse, s, stream, device);  // the portable fallback
  }
  check_hopper(device, "cake::attention::prefill_with");
  const runtime_kernel& kern = prefill_kernel(c, device);
  const double scale = s.softmax_scale > 0 ? s.softmax_scale : 1.0 / std::sqrt(static_cast<double>(s.D));
  const double scalars[] = {scale * 1.4426950408889634};
  const tensor_arg qkvo[] = {tensor_view(q, {s.B, s.S, s.H, s.D}), tensor_view(k, {s.B, s.T, s.HK, s.D}), tensor_view(v, {s.B, s.T, s.HK, s.D}),
                             tensor_view(o, {s.B, s.S, s.H, s.D}), tensor_view(lse, {s.B, s.H, s.S, 1})};
  if (c.tail_parts == 0) return kern.launch(qkvo, scalars, stream);
  // A split tail: the parts of the last round's tiles leave O (f32, normalized) and LSE in the stream's partials
  // workspace, one [rows, D] block per unit of that round (at most one per CTA), and the combine kernel merges them.
  const long long rows = c.rows(), points = (s.S + rows - 1) / rows * s.H * s.B, ctas = kern.device().sm_count;  // (one CTA per SM)
  const long long units = ctas, o_bytes = units * rows * s.D * 4, lse_bytes = units * rows * 4;
  auto* ws = reinterpret_cast<unsigned char*>(partials_workspace_for(device, stream, static_cast<std::size_t>(o_bytes + lse_bytes)));
  const tensor_arg args[] = {qkvo[0], qkvo[1], qkvo[2], qkvo[3], qkvo[4], tensor_view(ws, {units, rows, s.D}), tensor_view(ws + o_bytes, {units, rows, 1})};
  kern.launch(args, scalars, stream);
  if (plan::split_tail_parts(points, ctas, (s.T + c.bn - 1) / c.bn, c.tail_parts) < 2) return;  // (no part left anything)
  const tensor_arg comb[] = {qkvo[3], qkvo[4], tensor_view(ws, {units, rows, s.D}), tensor_view(ws + o_bytes, {units, rows, s.T}, {rows, 1, 0})};
  prefill_kernel(c, device, true).launch(comb, {}, stream);
}
}  // namespace detail

// The portable fallback on any device from cc 8.0 (what prefill runs on devices other than cc 9.0; on
// Hopper it runs too, through PTX JIT: slower than the sm_90a schedule, for tests and comparisons).
inline void prefill_sm80(const void* q, const void* k, const void* v, void* o, float* lse, const prefill_shape& s, CUstream stream = nullptr,
                         int device = 0) {
  const char* who = "cake::attention::prefill_sm80";
  detail::check_prefill(s, who);
  detail::check_pointer("q", q, 16, who);
  detail::check_pointer("k", k, 16, who);
  detail::check_pointer("v", v, 16, who);
  detail::check_pointer("o", o, 16, who);
  detail::check_pointer("lse", lse, 4, who);
  detail::launch_prefill_sm80(q, k, v, o, lse, s, stream, device);
}

// o, lse from q, k, v (layouts at the top of this header). Every argument is checked before the launch.
inline void prefill(const void* q, const void* k, const void* v, void* o, float* lse, const prefill_shape& s, CUstream stream = nullptr, int device = 0) {
  detail::run_prefill(nullptr, q, k, v, o, lse, s, stream, device);
}
// The varlen form (layouts and contract at the top of this header). Every argument the host can see is
// checked before the launch; the offsets are the caller's contract.
inline void prefill_varlen(const void* q, const void* k, const void* v, void* o, float* lse, const int* cu_seqlens_q, const int* cu_seqlens_k,
                           const varlen_shape& s, CUstream stream = nullptr, int device = 0) {
  const char* who = "cake::attention::prefill_varlen";
  auto bad = [&](const std::string& why) { throw jit::argument_error(std::string(who) + ": " + why); };
  auto n = [](long long x) { return std::to_string(x); };
  if (s.B < 1) bad("B = " + n(s.B) + " must be at least 1");
  if (s.total_q < 1 || s.total_k < 1) bad("total_q = " + n(s.total_q) + " and total_k = " + n(s.total_k) + " must be at least 1");
  if (s.max_seqlen_q < 1 || s.max_seqlen_q > s.total_q)
    bad("max_seqlen_q = " + n(s.max_seqlen_q) + " must be 1 .. total_q = " + n(s.total_q));
  if (s.total_q >= (1LL << 31) || s.total_k >= (1LL << 31)) bad("total_q and total_k must fit int32 offsets (below 2^31)");
  if (s.H > (1LL << 20) || s.HK > (1LL << 20)) bad("H = " + n(s.H) + " and HK = " + n(s.HK) + " must be at most 2^20");
  prefill_shape d;
  d.B = 1, d.S = s.total_q, d.T = s.total_k, d.H = s.H, d.HK = s.HK, d.D = s.D, d.softmax_scale = s.softmax_scale;
  detail::check_prefill(d, who);  // heads, head dim, sizes, scale (causal's len_q <= len_k is per entry: the contract)
  detail::check_pointer("q", q, 16, who);
  detail::check_pointer("k", k, 16, who);
  detail::check_pointer("v", v, 16, who);
  detail::check_pointer("o", o, 16, who);
  detail::check_pointer("lse", lse, 4, who);
  detail::check_pointer("cu_seqlens_q", cu_seqlens_q, 4, who);
  detail::check_pointer("cu_seqlens_k", cu_seqlens_k, 4, who);
  detail::check_hopper(device, who);
  const runtime_kernel& kern = detail::prefill_kernel(varlen_config_for(s), device);
  const double scale = s.softmax_scale > 0 ? s.softmax_scale : 1.0 / std::sqrt(static_cast<double>(s.D));
  // cu_q seen as [B, 2, max_seqlen_q] with strides [1, 1, 0] and cu_k as [B, 2] with strides [1, 1]: (b, 0) is
  // entry b's first row, (b, 1) the next entry's; the stride-0 dim carries max_seqlen_q to the grid.
  const tensor_arg args[] = {tensor_view(q, {s.total_q, s.H, s.D}),
                             tensor_view(k, {s.total_k, s.HK, s.D}),
                             tensor_view(v, {s.total_k, s.HK, s.D}),
                             tensor_view(o, {s.total_q, s.H, s.D}),
                             tensor_view(lse, {s.H, s.total_q, 1}),
                             tensor_view(cu_seqlens_q, {s.B, 2, s.max_seqlen_q}, {1, 1, 0}),
                             tensor_view(cu_seqlens_k, {s.B, 2}, {1, 1})};
  const double scalars[] = {scale * 1.4426950408889634};
  kern.launch(args, scalars, stream);
}

// The same with an explicit schedule (tuning, experiments): config is used whole but for what the shape
// fixes (parts, causal, group, varlen).
inline void prefill_with(const kernels::attention_prefill_config& config, const void* q, const void* k, const void* v, void* o, float* lse,
                         const prefill_shape& s, CUstream stream = nullptr, int device = 0) {
  detail::run_prefill(&config, q, k, v, o, lse, s, stream, device);
}

// ---- paged decode -------------------------------------------------------------------------------------

struct decode_shape {
  long long B = 1;           // requests (one query token each)
  long long H = 32;          // query heads
  long long HK = 8;          // KV heads (H % HK == 0; G = H / HK <= 64)
  long long D = 128;         // head dim: 64 or 128
  long long num_pages = 0;   // pages in each of k_cache and v_cache
  long long page_size = 16;  // keys per page: 16, 32 or 64
  long long max_pages = 0;   // columns of page_table (pages a request may have)
  long long max_seq_len = 0; // > 0: the longest seq_lens[b] the caller promises (checked against max_pages * page_size,
                             // and it sizes the split); 0: max_pages * page_size
  float softmax_scale = 0;   // <= 0: 1 / sqrt(D)
  // The caches' element type: bf16, or fp8 e4m3 with a per-tensor scale each (key = k_scale * stored, value =
  // v_scale * stored: vLLM's fp8 KV cache; the query, output and math stay bf16 / f32)
  bool kv_fp8 = false;
  float k_scale = 1, v_scale = 1;
};

// The schedule for a shape, a rule fitted to the H200 sweep of every key block, depth and split on issue 12's
// decode grid (bench/results/h200/decode_sweep.json, `cake_bench_decode --sweep`; docs/attention.md). Two
// regimes, by the CTAs one split gives (units = B * HK):
//  - few (units < decode_few_units): 128-key blocks in 3 stages (one CTA per SM). The split starts at the
//    smallest power of two that reaches decode_few_target CTAs (each slice keeping at least one block) and
//    may double twice more where that fills the waves of decode_sms SMs better: the estimate is
//    waves * blocks per slice + decode_combine_cost per slice (in blocks), e.g. B = 12 at 12k keys takes 4
//    slices (384 CTAs, 2.9 waves of 132) rather than 2 (192 CTAs, 1.45 waves);
//  - many: 64-key blocks in 3 stages (two CTAs per SM), split until the CTAs reach decode_many_target (four
//    waves of two per SM), each slice keeping at least decode_many_min_blocks blocks.
// Splits are powers of two, at most decode_max_splits. On the 12 shapes it was fitted to, the rule's choice
// is within 1.4% of each shape's best on geometric mean (3% at worst).
constexpr long long decode_few_units = 128;
constexpr long long decode_few_target = 128;
constexpr long long decode_sms = 132;          // the H200's SMs (the waves of both regimes)
constexpr double decode_combine_cost = 0.1;    // the combine's share per slice, in key blocks of 128
constexpr long long decode_many_target = 4 * 2 * decode_sms;
constexpr long long decode_many_min_blocks = 8;
constexpr long long decode_max_splits = 32;

constexpr kernels::attention_decode_config decode_config_for(const decode_shape& s) {
  kernels::attention_decode_config c;
  c.parts = static_cast<int>(s.D / 64);
  c.group = static_cast<int>(s.HK > 0 ? s.H / s.HK : 1);
  c.page_size = static_cast<int>(s.page_size);
  c.kv_fp8 = s.kv_fp8;  // (the split rule was fitted on bf16 caches; not re-fitted for fp8's half the bytes per block)
  const long long units = s.B * s.HK;
  const bool few = units < decode_few_units;
  c.bn = few ? 128 : 64;
  c.stages = 3;
  const long long target = few ? decode_few_target : decode_many_target, min_blocks = few ? 1 : decode_many_min_blocks;
  const long long ctx = s.max_seq_len > 0 ? s.max_seq_len : s.max_pages * s.page_size;
  const long long blocks = (ctx + c.bn - 1) / c.bn;
  long long n = 1;
  while (n < decode_max_splits && units * n < target && 2 * n * min_blocks <= blocks) n *= 2;
  if (few) {
    auto estimate = [&](long long m) {
      const long long waves = (units * m + decode_sms - 1) / decode_sms;
      return static_cast<double>(waves * ((blocks + m - 1) / m)) + decode_combine_cost * static_cast<double>(m);
    };
    long long best = n;
    for (long long m = 2 * n; m <= 4 * n && m <= decode_max_splits && m <= blocks; m *= 2)
      if (estimate(m) < estimate(best)) best = m;
    n = best;
  }
  c.splits = static_cast<int>(n);
  // One slice: it writes O and LSE itself (fused_combine; no combine kernel, no slice state). Measured on the
  // H200 (2026-12-06, cake_bench_decode --fused-combine, bench/results/h200/decode_fused_ctas_per_sm.json): +2.8%
  // at B 256, 1k keys and +2.0% at 4k, the two grid rows of one slice. With several slices the last one's serial
  // merge loses (2-13% at 2-16 slices with many requests, 2.6x at B 1), so those keep the combine kernel.
  c.fused_combine = n == 1;
  return c;
}
constexpr kernels::attention_decode_combine_config decode_combine_config_for(const decode_shape& s) {
  kernels::attention_decode_combine_config c;
  c.parts = static_cast<int>(s.D / 64);
  return c;
}

namespace detail {
constexpr long long decode_align256(long long b) { return (b + 255) / 256 * 256; }
// Workspace: the slices' O f32 [splits, B, H, D], then max and sum f32 [splits, B, H] each.
struct decode_workspace_layout {
  long long o = 0, m = 0, l = 0, bytes = 0;
};
constexpr decode_workspace_layout decode_layout(const decode_shape& s, int splits) {
  decode_workspace_layout w;
  const long long rows = splits * s.B * s.H;
  w.o = 0;
  w.m = decode_align256(4 * rows * s.D);
  w.l = w.m + decode_align256(4 * rows);
  w.bytes = w.l + decode_align256(4 * rows);
  return w;
}

inline void check_decode(const decode_shape& s, const char* who) {
  auto bad = [&](const std::string& why) { throw jit::argument_error(std::string(who) + ": " + why); };
  auto n = [](long long v) { return std::to_string(v); };
  if (s.B < 1) bad("B = " + n(s.B) + " must be at least 1");
  if (s.H < 1 || s.HK < 1) bad("H = " + n(s.H) + " and HK = " + n(s.HK) + " must be at least 1");
  if (s.H % s.HK != 0) bad("H = " + n(s.H) + " must be a multiple of HK = " + n(s.HK) + " (query heads per KV head)");
  if (s.H / s.HK > 64) bad("H / HK = " + n(s.H / s.HK) + " query heads per KV head: at most 64 (the rows of one MMA tile)");
  if (s.D != 64 && s.D != 128) bad("D = " + n(s.D) + " is not supported: 64 or 128");
  if (s.page_size != 16 && s.page_size != 32 && s.page_size != 64) bad("page_size = " + n(s.page_size) + " is not supported: 16, 32 or 64");
  if (s.num_pages < 1) bad("num_pages = " + n(s.num_pages) + " must be at least 1");
  if (s.max_pages < 1) bad("max_pages = " + n(s.max_pages) + " must be at least 1 (the page table's columns)");
  if (s.num_pages >= (1LL << 31) || s.max_pages >= (1LL << 31) || s.B >= (1LL << 31)) bad("num_pages, max_pages and B must fit int32");
  if (s.H > (1LL << 20)) bad("H = " + n(s.H) + " must be at most 2^20");
  if (s.B * s.H * s.D > (1LL << 40)) bad("q is past 2^40 elements (B = " + n(s.B) + ", H = " + n(s.H) + ")");
  if (s.num_pages * s.page_size > (1LL << 40) / (s.HK * s.D)) bad("k_cache is past 2^40 elements (num_pages = " + n(s.num_pages) + ")");
  if (s.max_seq_len < 0) bad("max_seq_len = " + n(s.max_seq_len) + " must be 0 (not given) or positive");
  if (s.max_seq_len > s.max_pages * s.page_size)
    bad("max_seq_len = " + n(s.max_seq_len) + " is more than max_pages * page_size = " + n(s.max_pages) + " * " + n(s.page_size) + " = " +
        n(s.max_pages * s.page_size) + " keys (the page table cannot hold it)");
  if (!(s.softmax_scale <= 0 || std::isfinite(s.softmax_scale))) bad("softmax_scale is not finite");
  if (s.kv_fp8 && !(std::isfinite(s.k_scale) && std::isfinite(s.v_scale) && s.k_scale > 0 && s.v_scale > 0))
    bad("k_scale = " + std::to_string(s.k_scale) + " and v_scale = " + std::to_string(s.v_scale) + " must be finite and positive (fp8 caches)");
}

inline const runtime_kernel& decode_kernel(const kernels::attention_decode_config& c, int device) {
  using key = std::tuple<kernels::attention_decode_config, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, device}, [&] {
    const program p = kernels::attention_decode_sm90(c);
    if (!p.errors.empty())
      throw jit::error("cake::attention::decode_paged: the schedule is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}
inline const runtime_kernel& decode_combine_kernel(const kernels::attention_decode_combine_config& c, int device) {
  using key = std::tuple<kernels::attention_decode_combine_config, int>;
  static kernel_table<key, runtime_kernel> cache;
  return cache.get(key{c, device}, [&] {
    const program p = kernels::attention_decode_combine_sm90(c);
    if (!p.errors.empty())
      throw jit::error("cake::attention::decode_paged: the combine schedule is invalid: " + to_text(p.errors[0]));
    return runtime_kernel::build(p, {}, device);
  });
}

inline void run_decode(const kernels::attention_decode_config* forced, const void* q, const void* k_cache, const void* v_cache, const int* page_table,
                       const int* seq_lens, void* o, float* lse, void* workspace, const decode_shape& s, CUstream stream, int device,
                       bool probe = false) {
  const char* who = "cake::attention::decode_paged";
  check_decode(s, who);
  check_pointer("q", q, 16, who);
  check_pointer("k_cache", k_cache, 16, who);
  check_pointer("v_cache", v_cache, 16, who);
  check_pointer("page_table", page_table, 4, who);
  check_pointer("seq_lens", seq_lens, 4, who);
  check_pointer("o", o, 16, who);
  check_pointer("lse", lse, 4, who);
  check_pointer("workspace", workspace, 256, who);
  kernels::attention_decode_config c = decode_config_for(s);
  if (forced && forced->loads_only && !probe)
    throw jit::argument_error("cake::attention::decode_paged_with: loads_only is a timing probe whose o is not attention; it runs only through "
                              "cake::attention::probe::decode_paged_loads_only");
  if (forced) {
    // the forced schedule whole, but for what the shape fixes (a field copied one by one is a field forgotten
    // when the next one is added)
    kernels::attention_decode_config f = *forced;
    f.parts = c.parts, f.group = c.group, f.page_size = c.page_size, f.kv_fp8 = c.kv_fp8;
    c = f;
    if (!c.valid() || kernels::attention_decode_smem(c) > 227 * 1024)
      throw jit::argument_error("cake::attention::decode_paged_with: no such schedule (bn " + std::to_string(c.bn) + ", stages " + std::to_string(c.stages) +
                                ", splits " + std::to_string(c.splits) + ", page_size " + std::to_string(c.page_size) +
                                (c.cluster_combine ? ", cluster_combine" : "") +
                                "; bn 64..128 in whole pages, stages 1..8, splits 1..256 (2, 4 or 8 with cluster_combine, not persistent nor "
                                "fused_combine), smem at most 227 KiB)");
  }
  check_hopper(device, who);
  // Both kernels are built before the first launch (a refusal enqueues nothing).
  const runtime_kernel& dec = decode_kernel(c, device);
  const runtime_kernel* comb = c.fused_combine || c.cluster_combine ? nullptr : &decode_combine_kernel(decode_combine_config_for(s), device);
  const decode_workspace_layout w = decode_layout(s, c.splits);
  auto* base = static_cast<unsigned char*>(workspace);
  float* part_o = reinterpret_cast<float*>(base + w.o);
  float* part_m = reinterpret_cast<float*>(base + w.m);
  float* part_l = reinterpret_cast<float*>(base + w.l);
  const long long NS = c.splits;
  const double scale = s.softmax_scale > 0 ? s.softmax_scale : 1.0 / std::sqrt(static_cast<double>(s.D));
  {
    std::vector<tensor_arg> args = {tensor_view(q, {s.B, s.H, s.D}),
                                    tensor_view(k_cache, {s.num_pages, s.page_size, s.HK, s.D}),
                                    tensor_view(v_cache, {s.num_pages, s.page_size, s.HK, s.D}),
                                    tensor_view(page_table, {s.B, s.max_pages}),
                                    tensor_view(seq_lens, {s.B}),
                                    tensor_view(part_o, {NS, s.B, s.H, s.D}),
                                    tensor_view(part_m, {NS, s.B, s.H, 1}),
                                    tensor_view(part_l, {NS, s.B, s.H, 1})};
    // The slices combine themselves (fused_combine: through the (request, KV head) arrival counters where there are
    // several; cluster_combine: a cluster's, in distributed shared memory): the kernel writes O and LSE.
    if (c.fused_combine || c.cluster_combine) {
      args.push_back(tensor_view(o, {s.B, s.H, s.D}));
      args.push_back(tensor_view(lse, {s.B, s.H, 1}));
      if (c.fused_combine && c.splits > 1) {  // (one slice writes O itself: no counters, so decode_paged allocates nothing and stays capturable)
        const CUdeviceptr count = arrival_counters_for(device, stream, static_cast<std::size_t>(s.B * s.HK));
        args.push_back(tensor_view(reinterpret_cast<void*>(static_cast<std::uintptr_t>(count)), {s.B, s.HK}));
      }
    }
    // (fp8 caches: the keys' scale folds into the softmax's, the values' into O)
    const double scalars[] = {scale * 1.4426950408889634 * (s.kv_fp8 ? s.k_scale : 1.0), s.v_scale};
    dec.launch(args, std::span<const double>(scalars, s.kv_fp8 ? 2 : 1), stream);
  }
  if (comb) {
    const tensor_arg args[] = {tensor_view(part_o, {NS, s.B, s.H, s.D}), tensor_view(part_m, {NS, s.B, s.H, 1}),
                               tensor_view(part_l, {NS, s.B, s.H, 1}), tensor_view(o, {s.B, s.H, s.D}), tensor_view(lse, {s.B, s.H, 1})};
    comb->launch(args, {}, stream);
  }
}
}  // namespace detail

// Bytes of device workspace decode_paged needs for this shape (with the split decode_config_for picks).
inline long long decode_workspace_bytes(const decode_shape& s) {
  detail::check_decode(s, "cake::attention::decode_workspace_bytes");
  return detail::decode_layout(s, decode_config_for(s).splits).bytes;
}
// The same for an explicit split count (decode_paged_with).
inline long long decode_workspace_bytes_with(const kernels::attention_decode_config& config, const decode_shape& s) {
  detail::check_decode(s, "cake::attention::decode_workspace_bytes");
  return detail::decode_layout(s, config.splits).bytes;
}

// o, lse from q and the paged caches (layouts and contract at the top of this header).
inline void decode_paged(const void* q, const void* k_cache, const void* v_cache, const int* page_table, const int* seq_lens, void* o, float* lse,
                         void* workspace, const decode_shape& s, CUstream stream = nullptr, int device = 0) {
  detail::run_decode(nullptr, q, k_cache, v_cache, page_table, seq_lens, o, lse, workspace, s, stream, device);
}
// The same with an explicit schedule (tuning): config's bn, stages, splits, walk, fused_combine and cluster_combine
// are used, the rest follows the shape; the workspace is decode_workspace_bytes_with(config, shape). fused_combine with more
// than one slice uses the library's arrival counters for the stream (arrival_counters_for): the first such call
// on a stream allocates them (cuMemAlloc), so under CUDA graph capture make one call before capturing. (decode_paged
// takes fused_combine only where the split is one slice: no counters.)
inline void decode_paged_with(const kernels::attention_decode_config& config, const void* q, const void* k_cache, const void* v_cache, const int* page_table,
                              const int* seq_lens, void* o, float* lse, void* workspace, const decode_shape& s, CUstream stream = nullptr, int device = 0) {
  detail::run_decode(&config, q, k_cache, v_cache, page_table, seq_lens, o, lse, workspace, s, stream, device);
}

namespace probe {
// config with loads_only: the consumer waits for and releases every K and V stage without computing, so
// that the load side's ceiling can be timed against the whole kernel (cake_bench_decode --loads-only). o
// and lse are written but are not attention.
inline void decode_paged_loads_only(kernels::attention_decode_config config, const void* q, const void* k_cache, const void* v_cache,
                                    const int* page_table, const int* seq_lens, void* o, float* lse, void* workspace, const decode_shape& s,
                                    CUstream stream = nullptr, int device = 0) {
  config.loads_only = true;
  detail::run_decode(&config, q, k_cache, v_cache, page_table, seq_lens, o, lse, workspace, s, stream, device, true);
}
}  // namespace probe

}  // namespace cake::attention
