#pragma once
// One GEMM correctness check: fresh random inputs, the output (padding included) poisoned with NaN, the
// kernel under test run, then compared with the f32 reference: relative Frobenius error, no NaN left in
// the M x N result, and the padding columns of D (ldd > N) still poisoned (nothing written outside).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../jit/device_memory.hpp"
#include "gemm_reference.hpp"

namespace cake::harness {

struct gemm_problem {
  long long m = 0, n = 0, k = 0;
  long long lda = 0, ldb = 0, ldd = 0;  // 0: packed, rounded up to 16-byte rows
  fill_spec fill{};
  bool fp8 = false;    // e4m3 inputs (else bf16); the output is bf16 either way
  float scale = 1.0f;  // fp8: D = scale * A * B^T

  int in_bytes() const { return fp8 ? 1 : 2; }
  gemm_problem resolved() const {
    gemm_problem p = *this;
    const auto up = [](long long v, long long to) { return (v + to - 1) / to * to; };
    if (!p.lda) p.lda = up(k, 16 / in_bytes());
    if (!p.ldb) p.ldb = up(k, 16 / in_bytes());
    if (!p.ldd) p.ldd = up(n, 8);
    return p;
  }
  std::string describe() const {
    const auto r = resolved();
    std::string s = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    if (r.lda != k || r.ldb != k || r.ldd != n)
      s += " (ld " + std::to_string(r.lda) + "/" + std::to_string(r.ldb) + "/" + std::to_string(r.ldd) + ")";
    return s;
  }
};

struct gemm_check_result {
  comparison cmp;
  long long padding_written = 0;  // elements of D outside the M x N result that lost their poison
  bool ok(double tolerance) const { return cmp.ok(tolerance) && padding_written == 0; }
};

// Device buffers of one problem (16-bit inputs and output).
struct gemm_operands {
  gemm_problem p;
  jit::device_buffer a, b, d, ref;
  explicit gemm_operands(const gemm_problem& q)
      : p(q.resolved()),
        a(static_cast<std::size_t>(p.in_bytes() * p.m * p.lda + 16)),
        b(static_cast<std::size_t>(p.in_bytes() * p.n * p.ldb + 16)),
        d(static_cast<std::size_t>((2 * p.m * p.ldd + 3) / 4 * 4)),
        ref(static_cast<std::size_t>(4 * p.m * p.n)) {}
};

// Runs `launch(operands)` on fresh inputs drawn from `rng` and checks the result.
inline gemm_check_result check_gemm(gemm_operands& o, random_source& rng, const gemm_reference& reference,
                                    const std::function<void(gemm_operands&)>& launch) {
  const auto& p = o.p;
  if (p.fp8) {
    o.a.upload(random_vector<host_e4m3>(static_cast<std::size_t>(p.m * p.lda), rng, p.fill));
    o.b.upload(random_vector<host_e4m3>(static_cast<std::size_t>(p.n * p.ldb), rng, p.fill));
  } else {
    o.a.upload(random_vector<host_bf16>(static_cast<std::size_t>(p.m * p.lda), rng, p.fill));
    o.b.upload(random_vector<host_bf16>(static_cast<std::size_t>(p.n * p.ldb), rng, p.fill));
  }
  o.d.fill_u32(0xffffffffu);  // NaN in every bf16 lane
  launch(o);
  reference.run(o.a.get(), o.b.get(), o.ref.get(), p.m, p.n, p.k, p.lda, p.ldb, p.fp8 ? 2 : 0);
  std::vector<std::uint16_t> out(o.d.size() / 2);
  std::vector<float> ref(static_cast<std::size_t>(p.m * p.n));
  o.d.download(std::span<std::uint16_t>(out));
  o.ref.download(std::span<float>(ref));
  if (p.scale != 1.0f)
    for (auto& x : ref) x *= p.scale;
  std::vector<std::uint16_t> packed(static_cast<std::size_t>(p.m * p.n));
  gemm_check_result r;
  for (long long i = 0; i < p.m; ++i) {
    for (long long j = 0; j < p.n; ++j) packed[static_cast<std::size_t>(i * p.n + j)] = out[static_cast<std::size_t>(i * p.ldd + j)];
    for (long long j = p.n; j < p.ldd; ++j) r.padding_written += out[static_cast<std::size_t>(i * p.ldd + j)] != 0xffffu;
  }
  r.cmp = compare_16bit(packed, ref);
  return r;
}

}  // namespace cake::harness
