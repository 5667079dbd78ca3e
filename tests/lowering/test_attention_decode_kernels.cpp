// Lowering tier for the paged decode (kernels/attention/decode.hpp): every decode configuration the entry
// point can pick (head dims 64 and 128, GQA groups, page sizes 16 and 64, split counts) and the combine
// kernel are built, analyzed clean, lowered and assembled by NVRTC for sm_90a with no spills.
#include <doctest/doctest.h>

#include <string>

#include "kernels/attention/decode.hpp"
#include "lower_check.hpp"

using namespace cake;
using lower_check::count;
using lower_check::has;
using lower_check::lower_and_build;

TEST_CASE("attention decode (sm_90a): head dims 64 and 128, GQA groups 1 4 8, pages of 16 and 64, split counts") {
  struct v {
    int parts, group, page_size, splits;
  };
  for (v x : {v{2, 4, 16, 1}, v{2, 4, 16, 8}, v{2, 4, 64, 32}, v{2, 1, 16, 4}, v{2, 8, 64, 1}, v{1, 4, 16, 2}, v{1, 8, 64, 16}}) {
    kernels::attention_decode_config c;
    c.parts = x.parts, c.group = x.group, c.page_size = x.page_size, c.splits = x.splits;
    REQUIRE(c.valid());
    const program p = kernels::attention_decode_sm90(c);
    INFO(p.kernel_name.view());
    const auto b = lower_and_build(p);
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
    CHECK_MESSAGE(b.art.log.find("serialized") == std::string::npos, b.art.log);
    CHECK(has(b.ptx(), "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"));  // S = Q K^T (bn 64) and O += P V per part
    CHECK(has(b.ptx(), "ex2.approx"));
    // TMA boxes: Q (D / 64 parts, rank 3) and per page and part one of K and one of V (rank 4)
    const int ppb = c.pages_per_block();
    CHECK(count(b.ptx(), "cp.async.bulk.tensor.3d") >= c.parts);
    CHECK(count(b.ptx(), "cp.async.bulk.tensor.4d") >= 2 * c.parts * ppb);
    // the page table read once per page of a block, and the length once per role
    CHECK(count(b.source(), "__ldg(static_cast<const int*>") == ppb + 2);
    // two CTAs per SM: 160 threads of at most 204 registers, and the smem of two fits 228 KB
    CHECK(b.art.resources.registers <= 204);
    CHECK(2 * (kernels::attention_decode_smem(c) + 1024) <= 228 * 1024);
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
    // the slices of a trip are loaded before any is used: 4 vector loads of partial O precede the first exp2
    std::size_t at = 0;
    for (int n = 0; n < kernels::attention_decode_combine_config::unroll && at != std::string::npos; ++n) at = b.ptx().find("ld.global.v4", at + 1);
    REQUIRE(at != std::string::npos);
    CHECK(at < b.ptx().find("ex2.approx"));
  }
}
