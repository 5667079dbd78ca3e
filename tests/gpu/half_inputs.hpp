#pragma once
// Random 16-bit float inputs for the GPU tests: the raw bits (uploaded as they are) and the floats they stand
// for (the host reference's inputs), from one draw, so the two can never disagree.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cake/harness/random.hpp>

namespace cake_gpu_test {

struct half_data {
  std::vector<std::uint16_t> bits;
  std::vector<float> val;
};

// n bf16 (bf16 = true) or f16 values drawn as `spec` says (the harness's default distribution when omitted).
inline half_data random_half(std::size_t n, bool bf16, cake::harness::random_source& rng, cake::harness::fill_spec spec = {}) {
  half_data d;
  d.bits.resize(n);
  d.val.resize(n);
  auto fill = [&](const auto& v) {
    for (std::size_t i = 0; i < n; ++i) d.bits[i] = v[i].bits, d.val[i] = v[i].to_float();
  };
  if (bf16)
    fill(cake::harness::random_vector<cake::harness::host_bf16>(n, rng, spec));
  else
    fill(cake::harness::random_vector<cake::harness::host_f16>(n, rng, spec));
  return d;
}

}  // namespace cake_gpu_test
