#pragma once
// D[M,N] = A[M,K] * B[N,K]^T on Hopper (sm_90a): bf16 (or fp8 e4m3 with a per-tensor scale) in, f32
// accumulate, bf16 out, with an optional fused epilogue. One producer warpgroup issues TMA; two
// consumer warpgroups issue wgmma, either cooperatively (each on half the rows of one tile) or in
// ping-pong (each on whole tiles, alternately: one's epilogue overlaps the other's MMAs, their mainloops
// ordered by turns). Persistent over tiles with a rasterized schedule (or one CTA per tile); B is multicast to the CTAs of a
// cluster along M (they share the N tile). wgmma groups may stay in flight across the stage release
// (wgmma_wait(1) with a release one iteration later). The epilogue goes through stmatrix into a
// double-buffered smem chunk and a TMA store while the producer already loads the next tile, or, for
// outputs whose rows are not 16-byte multiples, stores the fragments directly.
#include <compare>

#include <cake/cake.hpp>

#include "short_a.hpp"

namespace cake::kernels {

// What the epilogue computes on the f32 accumulator before it is stored:
//   D = act(acc * row_scale[m] * col_scale[n] + bias[n]) + residual[m, n]
// (fp8: acc is first scaled by the per-tensor scale). Every part is optional; the kernel has a tensor
// parameter for each part that is on, in this order after A, B, D: bias, row_scale, col_scale, residual.
enum class gemm_activation { none, gelu_tanh, gelu_erf, silu, relu };
struct gemm_epilogue {
  bool bias = false;        // bf16 [N]
  bool row_scale = false;   // f32 [M]
  bool col_scale = false;   // f32 [N]
  bool residual = false;    // bf16 [M, N] (its own leading dimension)
  gemm_activation act = gemm_activation::none;
  constexpr bool any() const { return bias || row_scale || col_scale || residual || act != gemm_activation::none; }
  friend constexpr auto operator<=>(const gemm_epilogue&, const gemm_epilogue&) = default;
};

struct gemm_sm90_config {
  int bm = 128, bn = 256;  // output tile (bm rows are split between the two consumer warpgroups)
  int stages = 4;          // depth of the TMA -> wgmma pipeline
  int cluster_m = 2;       // CTAs per cluster along M sharing (multicasting) the B tile
  int raster_group = 8;    // tiles per rasterization group along M
  int producer_regs = 40, consumer_regs = 232;
  bool direct_store = false;  // epilogue: st.global from registers instead of stmatrix + TMA store
  bool pingpong = false;      // consumer warpgroups on alternate whole tiles instead of halves of one
  int in_flight = 0;          // wgmma groups kept in flight across a stage release (0 or 1)
  bool persistent = true;     // one CTA per SM walking tiles (rasterized); false: one CTA per output tile
  // (persistent, cooperative, nothing in flight) the next tile's first K block is waited for and its wgmma issued
  // before this tile's output is stored (r.next_point), so the tensor cores work during the epilogue
  bool lookahead = false;
  // (cooperative, TMA store) one staging buffer per chunk of the output tile instead of two in turn: a tile's
  // chunks are written to shared memory together and stored after one barrier, none waiting for the store
  // before it to finish reading its buffer (more staging memory: BN 256 keeps 3 stages, not 4)
  bool whole_tile_staging = false;
  // Rows of A each stage loads: 0 for the whole tile, 8, 16 or 32 at M <= that (short_a.hpp; derived from M
  // by cake::gemm, not a tuning choice).
  int a_rows = 0;
  gemm_epilogue epi{};
  // Ordered field by field: every field tells schedules apart (cake::gemm's kernel cache keys on it).
  friend constexpr auto operator<=>(const gemm_sm90_config&, const gemm_sm90_config&) = default;
  // The forms the lookahead is written for: the schedule builds the others without it, and cake::gemm_with
  // refuses a configuration that asks for it where it does not fit.
  constexpr bool lookahead_fits() const { return !lookahead || (persistent && !pingpong && in_flight == 0); }
  constexpr bool whole_tile_staging_fits() const { return !whole_tile_staging || (!pingpong && !direct_store); }
  // The output tile's chunks: the widest column count (64, 32, 16) that divides BN, each one swizzle span.
  constexpr int store_chunk() const { return bn % 64 == 0 ? 64 : bn % 32 == 0 ? 32 : 16; }
  // Staging buffers of bm x store_chunk() bf16: one for the direct store (unused), two per consumer warpgroup in
  // ping-pong (their epilogues overlap), one per chunk with whole_tile_staging, else two shared ones (each
  // warpgroup its rows).
  constexpr int staging_buffers() const {
    return direct_store ? 1 : pingpong ? 4 : whole_tile_staging ? bn / store_chunk() : 2;
  }
};

template <class In = bf16>
constexpr program gemm_sm90(gemm_sm90_config c = {}) {
  constexpr bool fp8 = is_float8(In::value);
  auto k = kernel(fp8 ? "gemm_e4m3_sm90" : "gemm_bf16_sm90").target(sm_90a).cluster(c.cluster_m, 1);
  if (c.persistent) k.persistent(raster::along_m(c.raster_group));
  auto [M, N, K] = k.dims("M", "N", "K");
  auto A = k.input<In>("A", dims(M, K));
  auto B = k.input<In>("B", dims(N, K));
  auto D = k.output<bf16>("D", dims(M, N));
  const gemm_epilogue e = c.epi;
  tensor<bf16> Bias, Res;
  tensor<f32> RowScale, ColScale;
  if (e.bias) Bias = k.input<bf16>("bias", dims(N));
  if (e.row_scale) RowScale = k.input<f32>("row_scale", dims(M));
  if (e.col_scale) ColScale = k.input<f32>("col_scale", dims(N));
  if (e.residual) Res = k.input<bf16>("residual", dims(M, N));
  auto tiles_mn = k.parallel(tiles(M, c.bm), tiles(N, c.bn));
  const int bk = 128 / size_bytes(In::value);  // K step: one 128-byte swizzle span
  const int chunk = c.store_chunk();
  const int chunks = c.bn / chunk;

  auto sA = k.smem<In>("sA", {c.bm, bk}, swizzle::b128);
  auto sB = k.smem<In>("sB", {c.bn, bk}, swizzle::b128);
  const bool whole = c.whole_tile_staging && c.whole_tile_staging_fits();
  auto sD = k.smem<bf16>("sD", {c.bm, chunk}, chunk == 64 ? swizzle::b128 : chunk == 32 ? swizzle::b64 : swizzle::b32, copies(c.staging_buffers()));
  auto ab = k.pipeline("ab", stages(c.stages)).carries(sA, sB);
  auto epi = k.named_barrier("epi", per_unit);
  auto mma_turn = k.turns("mma");  // ping-pong: one warpgroup's mainloop at a time, in tile order

  k.role("producer", warpgroups(1), regs(c.producer_regs), [&](role& r) {
    r.for_each(tiles_mn, [&](auto m, auto n) {
      r.loop(tiles(K, bk), [&](auto kt) {
        auto s = r.acquire(ab);
        load_a(r, s[sA], A, m, kt, c.bm, c.a_rows, c.pingpong ? 1 : 2);  // (ping-pong: one consumer reads all bm rows)
        auto b = r.tma_load(s[sB], B.tile(n, kt));
        if (c.cluster_m > 1) b.multicast();
      });
    });
  });

  k.role("consumer", warpgroups(2), regs(c.consumer_regs), [&](role& r) {
    // Rows of the tile this warpgroup owns, and that block's row coordinate in units of those rows.
    const int rows = c.pingpong ? c.bm : c.bm / 2;
    auto acc = r.accumulator<f32>("acc", {rows, c.bn});
    const bool ahead = c.lookahead && c.lookahead_fits();
    // Lookahead: a tile's first K block (its wgmma overwriting acc) is issued by the previous point, before that
    // point's stores, or by the CTA's first point's prologue; the K loop then starts at its second block.
    auto first_block = [&] {
      auto s = r.wait(ab);
      r.wgmma_fence();
      r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite();
      r.wgmma_commit();
      return s;
    };
    auto body = [&](auto m, auto n) {
      const index_expr row_block = c.pingpong ? m : m * 2 + r.warpgroup();
      if (c.pingpong) r.take_turn(mma_turn);
      if (ahead) {
        r.when(eq(r.walk_step(), 0), [&] {
          auto s = first_block();
          r.wgmma_wait(0);
          r.release(ab, s);
        });
      }
      r.loop(ahead ? index_expr(1) : index_expr(0), loop_extent(tiles(K, bk)), 1, [&](auto kt) {
        auto s = r.wait(ab);
        r.wgmma_fence();
        if (ahead) r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]);
        else if (c.pingpong) r.wgmma(acc, s[sA], s[sB]).overwrite_on_first(kt);
        else r.wgmma(acc, s[sA].rows(r.warpgroup(), 2), s[sB]).overwrite_on_first(kt);
        r.wgmma_commit();
        r.wgmma_wait(c.in_flight);
        if (c.in_flight > 0) r.release(ab, s).later(c.in_flight);
        else r.release(ab, s);
      });
      if (c.pingpong) r.pass_turn(mma_turn);
      // The epilogue's vectors. With a wgmma group still in flight they are loaded before waiting for it,
      // so that their latency (an L2 round trip per tile) hides behind the last MMAs; without one, the
      // loop has already waited and they load here all the same.
      reg_tile<f32> rs, cs;
      reg_tile<bf16> bias;
      if (e.row_scale) r.load(rs = r.row_vector<f32>("rs", rows), RowScale.tile(row_block));
      if (e.col_scale) r.load(cs = r.col_vector<f32>("cs", c.bn), ColScale.tile(n));
      if (e.bias) r.load(bias = r.col_vector<bf16>("bias", c.bn), Bias.tile(n));
      if (c.in_flight > 0) {
        r.wgmma_wait(0);
        r.release_pending(ab);
      }
      if constexpr (fp8) r.scale(acc, k.template param<f32>("scale"));
      if (e.any()) {
        // One fused element loop over the accumulator; the vectors broadcast along rows / columns.
        rx v = acc;
        if (e.row_scale) v = v * rs;
        if (e.col_scale) v = v * cs;
        if (e.bias) v = v + bias;
        if (e.act == gemm_activation::gelu_tanh) v = gelu_tanh(v);
        if (e.act == gemm_activation::gelu_erf) v = gelu_erf(v);
        if (e.act == gemm_activation::silu) v = silu(v);
        if (e.act == gemm_activation::relu) v = relu(v);
        if (e.residual) v = v + r.loaded(r.fragment<bf16>("res", {rows, c.bn}), Res.tile(row_block, n));
        r.set(acc, v);
      }
      auto out = r.convert<bf16>(acc);
      // (inside r.next_point the walk's indices name the next point: the lookahead stores at this point's
      // coordinates, taken as values before it)
      const index_expr out_row = ahead ? r.let_index(row_block) : row_block, out_col = ahead ? r.let_index(n) : index_expr(n);
      auto store_out = [&] {
        if (c.direct_store) {
          r.store(D.tile(out_row, out_col), out);
          return;
        }
        r.bulk_wait_read(0);  // the previous tile's stores have read sD (issued a whole mainloop ago)
        if (whole) {
          // every chunk its own buffer: all written, one barrier, all stored
          r.sync(epi);
          r.for_range(chunks, [&](auto ch) { r.stmatrix(sD.stage(ch).rows(r.warpgroup(), 2), out.cols(ch, chunks)); });
          r.fence_proxy_async();
          r.sync(epi);
          r.for_range(chunks, [&](auto ch) { r.tma_store(D.tile(out_row, out_col * chunks + ch), sD.stage(ch).rows(r.warpgroup(), 2)); });
          r.bulk_commit();
          return;
        }
        r.for_range(chunks, [&](auto ch) {
          auto buf = c.pingpong ? sD.stage(r.warpgroup() * 2 + ch % 2) : sD.stage(ch % 2).rows(r.warpgroup(), 2);
          r.bulk_wait_read(1);  // the store that last read this buffer is done reading it
          r.sync(epi);
          r.stmatrix(buf, out.cols(ch, chunks));
          r.fence_proxy_async();
          r.sync(epi);
          r.tma_store(D.tile(out_row, out_col * chunks + ch), buf);
          r.bulk_commit();
        });
      };
      if (!ahead) return store_out();
      // (acc is free once converted: the next tile's first wgmma overwrites it while this tile's output, in
      // registers, is stored; the group is issued and retired inside the branch, C7514)
      r.next_point(tiles_mn, [&](auto, auto) {
        auto s = first_block();
        store_out();
        r.wgmma_wait(0);
        r.release(ab, s);
      });
      r.when(r.walk_step() + 1 >= r.walk_steps(), store_out);
    };
    if (c.pingpong) r.for_each(alternating(tiles_mn), body);
    else r.for_each(tiles_mn, body);
  });
  return k.build();
}

constexpr program gemm_bf16_sm90(gemm_sm90_config c = {}) { return gemm_sm90<bf16>(c); }
constexpr program gemm_e4m3_sm90(gemm_sm90_config c = {}) { return gemm_sm90<e4m3>(c); }

}  // namespace cake::kernels
