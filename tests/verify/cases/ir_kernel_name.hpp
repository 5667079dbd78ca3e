// ir.kernel-name: a character an entry symbol cannot hold (the keyword case is in ir_builder.hpp; a
// file's EXPECT lines hold for every case of its rule in that file).
#pragma once
#include "corpus.hpp"

namespace verify_corpus::ir_kernel_name_chars {
constexpr program build(bool fixed) {
  auto k = kernel(fixed ? "attn_fwd_d128" : "attn-fwd-d128").target(sm_90a);  // EXPECT: ir.kernel-name
  k.role("a", warps(1), [&](role& r) { r.fence_proxy_async(); });
  return k.build();
}
constexpr program bad() { return build(false); }
constexpr program good() { return build(true); }
}  // namespace verify_corpus::ir_kernel_name_chars
CAKE_VERIFY_CASE(ir_kernel_name_chars, "ir.kernel-name")
