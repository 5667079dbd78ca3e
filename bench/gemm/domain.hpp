#pragma once
// The shape domain of cake::gemm's dispatcher (issue 14, item 4): the linear layers of four models x a
// grid of M (tokens), split deterministically into search shapes (timed by cake_bench_gemm_sweep, the
// generator builds the dispatcher from them) and held-out shapes (timed only by cake_bench_gemm_score).
// The one source of truth: the sweep writes every row's split into its JSON; the scoring bench and the
// tests read this header.
//
// D[M,N] = A[M,K] B[N,K]^T with B the weight (N output features, K input features). Model dimensions from
// each model's config.json on Hugging Face (hidden_size, intermediate_size, num_attention_heads,
// num_key_value_heads, head_dim 128 unless noted):
//   meta-llama/Meta-Llama-3-8B: hidden 4096, intermediate 14336, 32 heads, 8 KV heads
//     qkv N = (32 + 2*8) * 128 = 6144, K = 4096; o 4096 x 4096; gate+up N = 2 * 14336, K = 4096; down N = 4096, K = 14336
//   meta-llama/Meta-Llama-3-70B: hidden 8192, intermediate 28672, 64 heads, 8 KV heads
//     qkv N = (64 + 16) * 128 = 10240, K = 8192; o 8192 x 8192; gate+up N = 57344, K = 8192; down N = 8192, K = 28672
//   Qwen/Qwen2.5-72B: hidden 8192, intermediate 29568, 64 heads, 8 KV heads (qkv and o as Llama-3 70B's, kept once)
//     gate+up N = 59136, K = 8192; down N = 8192, K = 29568
//   deepseek-ai/DeepSeek-V3: hidden 7168, q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
//   qk_rope_head_dim 64, v_head_dim 128, 128 heads, intermediate_size 18432 (dense layers),
//   moe_intermediate_size 2048 (each expert)
//     q_a + kv_a (fused, MLA down-projections) N = 1536 + 512 + 64 = 2112, K = 7168
//     q_b N = 128 * (128 + 64) = 24576, K = 1536; kv_b N = 128 * (128 + 128) = 32768, K = 512
//     o N = 7168, K = 128 * 128 = 16384; dense gate+up N = 36864, K = 7168; dense down N = 7168, K = 18432
//     expert gate+up N = 4096, K = 7168; expert down N = 7168, K = 2048
#include <array>
#include <cstddef>

namespace cake::gemm_domain {

struct layer {
  const char* name;  // model.projection
  long long n, k;
};

inline constexpr std::array<layer, 18> layers{{
    {"llama3-8b.qkv", 6144, 4096},        {"llama3-8b.o", 4096, 4096},
    {"llama3-8b.gate_up", 28672, 4096},   {"llama3-8b.down", 4096, 14336},
    {"llama3-70b.qkv", 10240, 8192},      {"llama3-70b.o", 8192, 8192},
    {"llama3-70b.gate_up", 57344, 8192},  {"llama3-70b.down", 8192, 28672},
    {"qwen2.5-72b.gate_up", 59136, 8192}, {"qwen2.5-72b.down", 8192, 29568},
    {"deepseek-v3.qkv_a", 2112, 7168},    {"deepseek-v3.q_b", 24576, 1536},
    {"deepseek-v3.kv_b", 32768, 512},     {"deepseek-v3.o", 7168, 16384},
    {"deepseek-v3.gate_up", 36864, 7168}, {"deepseek-v3.down", 7168, 18432},
    {"deepseek-v3.expert_gate_up", 4096, 7168}, {"deepseek-v3.expert_down", 7168, 2048},
}};

inline constexpr std::array<long long, 13> ms{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};

struct shape {
  long long m, n, k;
  int layer;      // index into layers
  bool held_out;  // scored only, never searched
};

inline constexpr std::size_t size = layers.size() * ms.size();

// Shape i: layer i / 13, M ms[i % 13]. Held out when (layer + M index) is odd: within a layer search and
// held-out M alternate (every held-out M has searched neighbours on both sides but at the ends), the
// parity flips from layer to layer (each M is searched for half the layers), and exactly half of the
// 234 shapes are held out.
constexpr shape at(std::size_t i) {
  const std::size_t l = i / ms.size(), j = i % ms.size();
  return {ms[j], layers[l].n, layers[l].k, static_cast<int>(l), (l + j) % 2 == 1};
}

constexpr std::size_t count(bool held_out) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < size; ++i) c += at(i).held_out == held_out;
  return c;
}

static_assert(size >= 100, "issue 14: at least 100 shapes");
static_assert(count(true) == count(false), "half of the shapes held out");

}  // namespace cake::gemm_domain
