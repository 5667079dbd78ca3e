// The shape-based choice of cake::gemm (no GPU needed).
#include <doctest/doctest.h>

#include <set>

#include <cake/gemm.hpp>

TEST_CASE("choose_gemm picks the tile width that quantizes best") {
  // N = 2112: 176-wide tiles give 12 even column tiles (384 tiles, 3 waves on 132 SMs).
  CHECK(cake::choose_gemm(4096, 2112, 7168, 132).config.bn == 176);
  // Square sizes: the widest tile.
  CHECK(cake::choose_gemm(4096, 4096, 4096, 132).config.bn == 256);
  CHECK(cake::choose_gemm(8192, 8192, 8192, 132).config.bn == 256);
}

TEST_CASE("the chosen pipeline depth fits the shared-memory limit") {
  for (int bn : {256, 192, 176, 128}) {
    cake::kernels::gemm_sm90_config c;
    c.bn = bn;
    c.stages = cake::max_gemm_stages(c, 2);
    CHECK(c.stages >= 3);
    const auto p = cake::kernels::gemm_sm90<cake::bf16>(c);
    CHECK(p.errors.empty());
    CHECK(cake::plan::plan_smem(p).fits());
    c.stages += 1;  // one more stage would not fit (or the cap of 6 was reached)
    if (c.stages <= 6) CHECK_FALSE(cake::plan::plan_smem(cake::kernels::gemm_sm90<cake::bf16>(c)).fits());
  }
}

TEST_CASE("epilogues that would spill at BN = 256 take BN <= 128") {
  cake::kernels::gemm_epilogue bias;
  bias.bias = true;
  cake::kernels::gemm_epilogue res;
  res.residual = true;
  // A bias with TMA stores keeps the wide tile; with the direct-store epilogue (ragged N) it is capped.
  CHECK(cake::choose_gemm(4096, 4096, 4096, 132, cake::gemm_input::bf16, bias).config.bn == 256);
  CHECK(cake::choose_gemm(4096, 4095, 4096, 132, cake::gemm_input::bf16, bias, true).config.bn <= 128);
  // A residual tile is capped either way; no epilogue with direct stores keeps the wide tile.
  CHECK(cake::choose_gemm(4096, 4096, 4096, 132, cake::gemm_input::bf16, res).config.bn <= 128);
  CHECK(cake::choose_gemm(4096, 4095, 4096, 132, cake::gemm_input::bf16, {}, true).config.bn == 256);
}

TEST_CASE("cake::gemm's kernel table tells apart configurations that differ in any field (bm, register split, ...)") {
  using cake::gemm_detail::kernel_key;
  const cake::kernels::gemm_sm90_config base;
  std::set<kernel_key> keys{{base, cake::gemm_input::bf16, 0}};
  auto with = [&](auto change) {
    auto c = base;
    change(c);
    return keys.insert({c, cake::gemm_input::bf16, 0}).second;  // a new entry: not served base's kernel
  };
  CHECK(with([](auto& c) { c.bm = 64; }));
  CHECK(with([](auto& c) { c.producer_regs = 56; }));
  CHECK(with([](auto& c) { c.consumer_regs = 224; }));
  CHECK(with([](auto& c) { c.raster_group = 4; }));
  CHECK(with([](auto& c) { c.epi.bias = true; }));
  CHECK(with([](auto& c) { c.epi.act = cake::kernels::gemm_activation::silu; }));
  CHECK_FALSE(keys.insert({base, cake::gemm_input::bf16, 0}).second);  // the same configuration: one kernel
  CHECK(keys.insert({base, cake::gemm_input::e4m3, 0}).second);
  CHECK(keys.insert({base, cake::gemm_input::bf16, 1}).second);
}
