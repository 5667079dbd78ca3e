// The C ABI (include/cake/c/cake.h) on the GPU: each entry point called through C gives bit for bit what
// the C++ entry point gives on the same fresh random inputs (same kernels, same schedules), on ragged
// shapes, with the output poisoned first; a device ordinal that does not exist is CAKE_ERROR_NO_DEVICE;
// a success clears the thread's error message. The C++ entry points' own accuracy is checked against f64
// in test_gemm.cpp / test_compute.cpp / test_norm.cpp / test_attention.cpp; cake_attention_prefill is
// checked here only for running and writing every output element (finite after a NaN poison), and
// cake_attention_prefill_varlen for running, writing every row its entries cover and no other;
// cake_ivf_create / search against cake::knn::ivf_build / ivf_search (same seed: the same index and results).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <cake/c/cake.h>
#include <cake/gemm.hpp>
#include <cake/harness/random.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/knn/ivf.hpp"
#include "kernels/norm/norm.hpp"
#include "device_gate.hpp"

using namespace cake;

namespace {

std::vector<std::uint16_t> bits(const jit::device_buffer& b) { return b.download<std::uint16_t>(); }

}  // namespace

TEST_CASE("C ABI: cake_gemm_bf16 (plain and with a bias + GELU epilogue) equals cake::gemm bit for bit") {
  if (!cake_gpu_test::require_device(9, 0, true, "the GEMM entry points")) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  for (auto [M, N, K] : {std::tuple{128LL, 256LL, 64LL}, {300LL, 1000LL, 520LL}, {7LL, 136LL, 2000LL}}) {
    auto a = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(M * K), rng);
    auto b = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(N * K), rng);
    auto bias = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(N), rng);
    auto da = jit::to_device(a), db = jit::to_device(b), dbias = jit::to_device(bias);
    for (bool with_epilogue : {false, true}) {
      INFO("M " << M << " N " << N << " K " << K << (with_epilogue ? " bias+GELU" : ""));
      jit::device_buffer c_out(static_cast<std::size_t>(2 * M * N)), cpp_out(static_cast<std::size_t>(2 * M * N));
      c_out.fill_u32(0xffffffffu);
      cpp_out.fill_u32(0x0u);
      cake_gemm_epilogue e{};
      e.bias = dbias.address();
      e.activation = CAKE_ACTIVATION_GELU_TANH;
      REQUIRE(cake_gemm_bf16(da.address(), db.address(), c_out.address(), M, N, K, K, K, N, with_epilogue ? &e : nullptr, nullptr, 0) == CAKE_OK);
      CHECK(std::string(cake_last_error()).empty());
      gemm_epilogue_args args;
      args.bias = dbias.address();
      args.activation = kernels::gemm_activation::gelu_tanh;
      if (with_epilogue) gemm(da.address(), db.address(), cpp_out.address(), M, N, K, K, K, N, args);
      else gemm(da.address(), db.address(), cpp_out.address(), M, N, K, K, K, N);
      CHECK(bits(c_out) == bits(cpp_out));
    }
  }
}

TEST_CASE("C ABI: cake_softmax_bf16 and cake_rmsnorm_bf16 equal cake::softmax / cake::rmsnorm bit for bit") {
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  for (auto [rows, cols] : {std::pair{1LL, 128LL}, {37LL, 1000LL}, {1000LL, 4096LL}, {7LL, 16384LL}}) {
    INFO("rows " << rows << " cols " << cols);
    auto x = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(rows * cols), rng, {harness::distribution::normal, 3.0f});
    auto w = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(cols), rng);
    auto dx = jit::to_device(x), dw = jit::to_device(w);
    const std::size_t bytes = static_cast<std::size_t>(2 * rows * cols);
    jit::device_buffer c_out(bytes), cpp_out(bytes);
    c_out.fill_u32(0xffffffffu);
    cpp_out.fill_u32(0x0u);
    REQUIRE(cake_softmax_bf16(dx.address(), c_out.address(), rows, cols, cols, nullptr, 0) == CAKE_OK);
    softmax(dx.address(), cpp_out.address(), rows, cols, cols);
    CHECK(bits(c_out) == bits(cpp_out));
    c_out.fill_u32(0xffffffffu);
    REQUIRE(cake_rmsnorm_bf16(dx.address(), dw.address(), c_out.address(), rows, cols, cols, 1e-6f, nullptr, 0) == CAKE_OK);
    CHECK(std::string(cake_last_error()).empty());
    rmsnorm(dx.address(), dw.address(), cpp_out.address(), rows, cols, cols, 1e-6f);
    CHECK(bits(c_out) == bits(cpp_out));
  }
}

TEST_CASE("C ABI: a device ordinal that does not exist is CAKE_ERROR_NO_DEVICE, an error, then a success, clears the message") {
  jit::device_buffer x(2 * 128), y(2 * 128);
  CHECK(cake_softmax_bf16(x.address(), y.address(), 1, 128, 128, nullptr, 99) == CAKE_ERROR_NO_DEVICE);
  CHECK(std::string(cake_last_error()).find("device = 99 is not a CUDA device ordinal") != std::string::npos);
  CHECK(cake_softmax_bf16(x.address(), y.address(), 1, 0, 128, nullptr, 0) == CAKE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(cake_last_error()).find("cols = 0") != std::string::npos);
  x.fill_u32(0);
  CHECK(cake_softmax_bf16(x.address(), y.address(), 1, 128, 128, nullptr, 0) == CAKE_OK);
  CHECK(std::string(cake_last_error()).empty());
}

TEST_CASE("C ABI: cake_attention_prefill runs (causal and not, GQA, ragged S != T) and writes every element of o and lse") {
  if (!cake_gpu_test::require_device(9, 0, true, "cake_attention_prefill (sm_90a)")) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  struct shape {
    long long B, S, T, H, HK, D;
    int causal;
  };
  for (shape s : {shape{1, 128, 128, 4, 4, 128, 0}, shape{2, 127, 1000, 8, 2, 64, 1}, shape{1, 300, 300, 4, 1, 128, 1}}) {
    INFO("B " << s.B << " S " << s.S << " T " << s.T << " H " << s.H << " HK " << s.HK << " D " << s.D << " causal " << s.causal);
    const auto nq = static_cast<std::size_t>(s.B * s.S * s.H * s.D), nk = static_cast<std::size_t>(s.B * s.T * s.HK * s.D);
    const auto nl = static_cast<std::size_t>(s.B * s.H * s.S);
    auto q = harness::random_vector<harness::host_bf16>(nq, rng), k = harness::random_vector<harness::host_bf16>(nk, rng);
    auto v = harness::random_vector<harness::host_bf16>(nk, rng);
    auto dq = jit::to_device(q), dk = jit::to_device(k), dv = jit::to_device(v);
    jit::device_buffer o(2 * nq), lse(4 * nl);
    o.fill_u32(0xffffffffu);  // NaN in bf16 and in f32
    lse.fill_u32(0xffffffffu);
    const cake_status st = cake_attention_prefill(dq.address(), dk.address(), dv.address(), o.address(), static_cast<float*>(lse.address()), s.B, s.S, s.T,
                                                  s.H, s.HK, s.D, s.causal, 0.0f, nullptr, 0);
    INFO("cake_last_error: " << cake_last_error());
    REQUIRE(st == CAKE_OK);
    CHECK(std::string(cake_last_error()).empty());
    const auto ob = o.download<std::uint16_t>(nq);
    const auto lb = lse.download<float>(nl);
    std::size_t bad_o = 0, bad_lse = 0;
    for (std::uint16_t b : ob) bad_o += !std::isfinite(harness::bf16_bits_to_float(b));
    for (float f : lb) bad_lse += !std::isfinite(f);
    CHECK(bad_o == 0);
    CHECK(bad_lse == 0);
  }
}

TEST_CASE("C ABI: cake_attention_prefill_varlen runs (causal and not, GQA) and writes exactly the rows its entries cover") {
  if (!cake_gpu_test::require_device(9, 0, true, "cake_attention_prefill_varlen (sm_90a)")) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const std::vector<std::int32_t> cu = {0, 1, 130, 130, 1130};  // entries of 1, 129, 0 and 1000 rows
  const long long covered = cu.back(), total = covered + 3, B = 4, H = 8, HK = 2, D = 128;  // 3 rows past the last entry
  for (int causal : {0, 1}) {
    INFO("causal " << causal);
    const auto nq = static_cast<std::size_t>(total * H * D), nl = static_cast<std::size_t>(H * total);
    auto q = harness::random_vector<harness::host_bf16>(nq, rng), k = harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(total * HK * D), rng);
    auto dq = jit::to_device(q), dk = jit::to_device(k), dcu = jit::to_device(cu);
    jit::device_buffer o(2 * nq), lse(4 * nl);
    o.fill_u32(0xffffffffu);
    lse.fill_u32(0xffffffffu);
    const cake_status st =
        cake_attention_prefill_varlen(dq.address(), dk.address(), dk.address(), o.address(), static_cast<float*>(lse.address()),
                                      static_cast<const std::int32_t*>(dcu.address()), static_cast<const std::int32_t*>(dcu.address()), B, total, total, 1000, H,
                                      HK, D, causal, 0.0f, nullptr, 0);
    INFO("cake_last_error: " << cake_last_error());
    REQUIRE(st == CAKE_OK);
    const auto ob = o.download<std::uint16_t>(nq);
    const auto lb = lse.download<std::uint32_t>(nl);
    std::size_t bad = 0, written_past = 0;
    for (std::size_t i = 0; i < nq; ++i) {
      const bool inside = static_cast<long long>(i) < covered * H * D;
      if (inside) bad += !std::isfinite(harness::bf16_bits_to_float(ob[i]));
      else written_past += ob[i] != 0xffff;
    }
    for (long long h = 0; h < H; ++h)
      for (long long r = 0; r < total; ++r) {
        const std::uint32_t w = lb[static_cast<std::size_t>(h * total + r)];
        float f;
        std::memcpy(&f, &w, 4);
        if (r < covered) bad += !std::isfinite(f);
        else written_past += w != 0xffffffffu;
      }
    CHECK(bad == 0);
    CHECK(written_past == 0);
  }
}

TEST_CASE("C ABI: cake_ivf_create, cake_ivf_list_sizes, cake_ivf_search equal cake::knn::ivf_build / ivf_search bit for bit") {
  if (!cake_gpu_test::require_device(9, 0, true, "the IVF entry points")) return;
  auto rng = harness::random_source::fresh();
  MESSAGE("seed " << rng.seed());
  const long long N = 3001, D = 64, nlist = 17, Q = 70;
  const int k = 10, nprobe = 3;
  auto y = harness::random_vector<harness::host_f16>(static_cast<std::size_t>(N * D), rng);
  auto x = harness::random_vector<harness::host_f16>(static_cast<std::size_t>(Q * D), rng);
  auto dy = jit::to_device(y), dx = jit::to_device(x);
  cake_ivf_index* h = nullptr;
  REQUIRE(cake_ivf_create(dy.address(), N, D, nlist, CAKE_INPUT_F16, CAKE_METRIC_L2, 5, 4, nullptr, 0, &h) == CAKE_OK);
  REQUIRE(h != nullptr);
  const knn::ivf_index ix = knn::ivf_build(dy.address(), N, D, nlist, knn::input_type::f16, knn::metric::l2, 5, 4);
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(nlist));
  REQUIRE(cake_ivf_list_sizes(h, sizes.data()) == CAKE_OK);
  long long total = 0;
  for (long long l = 0; l < nlist; ++l) {
    CHECK(sizes[static_cast<std::size_t>(l)] == ix.list_size(l));
    total += sizes[static_cast<std::size_t>(l)];
  }
  CHECK(total == N);
  const std::int64_t ws = cake_ivf_search_workspace_bytes(h, Q, k, nprobe);
  REQUIRE(ws > 0);
  CHECK(cake_ivf_search_workspace_bytes(h, Q, k, nlist + 1) == -1);
  jit::device_buffer w(static_cast<std::size_t>(ws)), cd(static_cast<std::size_t>(4 * Q * k)), ci(static_cast<std::size_t>(4 * Q * k)),
      pd(static_cast<std::size_t>(4 * Q * k)), pi(static_cast<std::size_t>(4 * Q * k));
  cd.fill_u32(0xffffffffu), ci.fill_u32(0xffffffffu);
  REQUIRE(cake_ivf_search(h, dx.address(), static_cast<float*>(cd.address()), static_cast<std::int32_t*>(ci.address()), w.address(), Q, k, nprobe, nullptr) ==
          CAKE_OK);
  knn::ivf_search(ix, dx.address(), static_cast<float*>(pd.address()), static_cast<std::int32_t*>(pi.address()), w.address(), Q, k, nprobe);
  CHECK(cd.download<std::uint32_t>() == pd.download<std::uint32_t>());
  CHECK(ci.download<std::int32_t>() == pi.download<std::int32_t>());
  CHECK(cake_ivf_search(h, dx.address(), static_cast<float*>(cd.address()), static_cast<std::int32_t*>(ci.address()), w.address(), Q, k, 0, nullptr) ==
        CAKE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(cake_last_error()).find("nprobe = 0") != std::string::npos);
  cake_ivf_destroy(h);
}
