/* The C ABI from C (this file is compiled as C11, so cake.h must be valid C): every entry point refuses a
 * bad argument with CAKE_ERROR_INVALID_ARGUMENT and a message naming it, before any driver call; without
 * a CUDA driver a well-formed call is CAKE_ERROR_NO_DEVICE with the reason; a success clears the message.
 * The GPU half (results equal to the C++ entry points') is tests/gpu/test_c_api.cpp. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cake/c/cake.h"

static int checks = 0, failures = 0;

#define CHECK(cond)                                                          \
  do {                                                                       \
    ++checks;                                                                \
    if (!(cond)) {                                                           \
      ++failures;                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                        \
  } while (0)

/* The status is `want` and the thread's message contains `needle`. */
static void expect(cake_status got, cake_status want, const char* needle, int line) {
  ++checks;
  if (got != want || strstr(cake_last_error(), needle) == NULL) {
    ++failures;
    fprintf(stderr, "%s:%d: status %d (want %d), message \"%s\" (want it to contain \"%s\")\n", __FILE__, line, (int)got, (int)want, cake_last_error(),
            needle);
  }
}
#define EXPECT(call, status, needle) expect((call), (status), (needle), __LINE__)

int main(void) {
  /* Well-aligned addresses that are never dereferenced: every call below fails before a launch. */
  char* const a = (char*)(size_t)0x100000;
  char* const b = (char*)(size_t)0x200000;
  char* const d = (char*)(size_t)0x300000;
  cake_gemm_epilogue epi;
  memset(&epi, 0, sizeof epi);

  CHECK(strcmp(cake_version(), "0.1.0") == 0);
  CHECK(strcmp(cake_last_error(), "") == 0);

  /* GEMM arguments. */
  EXPECT(cake_gemm_bf16(a, b, d, 0, 64, 64, 64, 64, 64, NULL, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "M, N, K must be at least 1");
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, 32, 64, 64, NULL, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "lda = 32 is smaller than K = 64");
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, 64, 64, 60, NULL, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "ldd = 60 is smaller than N = 64");
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 60, 60, 64, 64, NULL, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "lda * element size = 120 bytes");
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, (int64_t)1 << 40, 64, 64, NULL, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
         "lda = 1099511627776 elements: a row pitch must be below 2^40 bytes");
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, 64, 64, INT64_MAX, NULL, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "ldd = 9223372036854775807 elements");
  EXPECT(cake_gemm_bf16(NULL, b, d, 64, 64, 64, 64, 64, 64, NULL, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "A must be a non-null");
  EXPECT(cake_gemm_bf16(a, b + 2, d, 64, 64, 64, 64, 64, 64, NULL, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "B must be a non-null, 16-byte aligned");
  epi.activation = 7;
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, 64, 64, 64, &epi, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "epilogue->activation = 7");
  epi.activation = CAKE_ACTIVATION_GELU_TANH;
  epi.bias = b + 8;
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, 64, 64, 64, &epi, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "bias must be a 16-byte aligned");
  epi.bias = NULL;
  epi.residual = b;
  epi.ldr = 10;
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, 64, 64, 64, &epi, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "ldr = 10 is smaller than N = 64");
  epi.ldr = INT64_MAX;
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, 64, 64, 64, &epi, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "ldr = 9223372036854775807 elements");
  EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, 64, 64, 64, NULL, NULL, -1), CAKE_ERROR_INVALID_ARGUMENT, "device = -1");
  EXPECT(cake_gemm_fp8(a, b, d, 64, 64, 64, 8, 64, 64, 1.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "lda = 8 is smaller than K = 64");
  EXPECT(cake_gemm_fp8(a, b, d, 64, 64, 72, 72, 72, 64, 1.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "lda * element size = 72 bytes");

  /* Row kernels. */
  EXPECT(cake_softmax_bf16(a, d, 0, 128, 128, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "rows = 0 must be at least 1");
  EXPECT(cake_softmax_bf16(a, d, 4, 20000, 20000, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "cols = 20000 is wider than 16384");
  EXPECT(cake_softmax_bf16(a, d, 4, 128, 100, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "ld = 100 is smaller than cols = 128");
  EXPECT(cake_softmax_bf16(a + 1, d, 4, 128, 128, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "x must be a non-null, 2-byte aligned");
  EXPECT(cake_rmsnorm_bf16(a, NULL, d, 4, 128, 128, 1e-6f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "w must be a non-null");
  EXPECT(cake_rmsnorm_bf16(a, b, d, 4, 128, 128, -1.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "eps = -1");
  EXPECT(cake_rmsnorm_bf16(a, b, d, 4, 128, 128, 1e-6f, NULL, -3), CAKE_ERROR_INVALID_ARGUMENT, "device = -3");

  /* k-means assignment. */
  {
    const float* cn = (const float*)(size_t)0x400000;
    int32_t* idx = (int32_t*)(size_t)0x500000;
    EXPECT(cake_kmeans_assign(a, b, cn, idx, 1, 1000, 64, 100, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "D = 100 must be a multiple of 8");
    EXPECT(cake_kmeans_assign(a, b, cn, idx, 0, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "B = 0");
    EXPECT(cake_kmeans_assign(a, b, NULL, idx, 1, 1000, 64, 128, CAKE_INPUT_F16, CAKE_METRIC_COSINE, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "c_norm");
    EXPECT(cake_kmeans_assign(a + 8, b, cn, idx, 1, 1000, 64, 128, CAKE_INPUT_F16, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "x must be a non-null device address aligned to 16");
    EXPECT(cake_kmeans_assign(a, b, cn, idx, 1, 1000, 64, 128, 7, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "input_type = 7");
    EXPECT(cake_kmeans_assign(a, b, cn, idx, 1, 1000, 64, 128, CAKE_INPUT_BF16, 3, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "metric = 3");
    void* ws = (void*)(size_t)0x600000;
    float* sh = (float*)(size_t)0x700000;
    CHECK(cake_kmeans_update_workspace_bytes(2, 10, 64) == 8 * 2 * 10 * 64 + 4 * 2 * 10);
    CHECK(cake_kmeans_update_workspace_bytes(0, 10, 64) == -1);
    CHECK(cake_kmeans_update_workspace_bytes((int64_t)1 << 30, (int64_t)1 << 30, 64) == -1);
    EXPECT(cake_kmeans_update(a, idx, (void*)b, (float*)cn, sh, NULL, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "workspace must be a non-null");
    EXPECT(cake_kmeans_update(a, idx, (void*)b, (float*)cn, sh, ws, 1, 1000, (int64_t)1 << 25, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "past 2^24");
    EXPECT(cake_kmeans_update(a, idx, (void*)b, (float*)cn, sh, ws, 1, 1000, 64, 128, 2, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "cake_kmeans_update: input_type = 2");
    EXPECT(cake_kmeans_fit(a, (void*)b, idx, (float*)cn, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, 0, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "iterations = 0");
    EXPECT(cake_kmeans_fit(a, (void*)b, NULL, (float*)cn, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, 3, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "idx must be a non-null");
    EXPECT(cake_kmeans_step(a, (void*)b, NULL, (float*)cn, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "cake::kmeans::step: idx must be a non-null");
    EXPECT(cake_kmeans_step(a, (void*)b, idx, (float*)cn, sh, ws, 1, 1000, (int64_t)1 << 25, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "past 2^24");
    EXPECT(cake_kmeans_step(a, (void*)b, idx, NULL, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_F16, CAKE_METRIC_COSINE, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "c_norm");
    /* the deterministic forms: bf16 points need a bound on |x|; a bound must be finite and >= 0 */
    EXPECT(cake_kmeans_update_deterministic(a, idx, (void*)b, (float*)cn, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, 0.0f, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "the deterministic update of bf16 points needs options.max_abs");
    EXPECT(cake_kmeans_fit_deterministic(a, (void*)b, idx, (float*)cn, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_F16, CAKE_METRIC_L2, 3, -1.0f, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "options.max_abs = -1");
    EXPECT(cake_kmeans_fit_deterministic(a, (void*)b, idx, (float*)cn, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, 0, 4.0f, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "iterations = 0");
    /* the sorted update: its workspace (the scatter's, offsets, the sorted points and their cluster rows),
     * and B * N past 2^24 (positions in f32) */
    CHECK(cake_kmeans_sorted_update_workspace_bytes(1, 1000, 64, 128) == 8 * 64 * 128 + 4 * 64 + 2 * 256 + 4000 + 2 * 1000 * 128);
    CHECK(cake_kmeans_sorted_update_workspace_bytes(1, 0, 64, 128) == -1);
    EXPECT(cake_kmeans_update_sorted(a, idx, (void*)b, (float*)cn, sh, ws, 2, (int64_t)1 << 24, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "the sorted update computes positions in f32");
    EXPECT(cake_kmeans_update_sorted(a, idx, (void*)b, (float*)cn, sh, NULL, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "workspace must be a non-null");
    /* the initialization and the loop to a tolerance */
    EXPECT(cake_kmeans_init_random(a, (void*)b, 1, 10, 11, 128, CAKE_INPUT_BF16, 7, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "K must be at most N");
    EXPECT(cake_kmeans_init_random(a, (void*)b, 1, 10, 4, 128, 3, 7, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "input_type = 3");
    {
      int run = -1;
      EXPECT(cake_kmeans_fit_until(a, (void*)b, idx, (float*)cn, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, 10, 0.01f, 1, NULL, NULL, 0),
             CAKE_ERROR_INVALID_ARGUMENT, "iterations_run must be a non-null");
      EXPECT(cake_kmeans_fit_until(a, (void*)b, idx, (float*)cn, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, 10, -1.0f, 1, &run, NULL, 0),
             CAKE_ERROR_INVALID_ARGUMENT, "tolerance");
      EXPECT(cake_kmeans_fit_until(a, (void*)b, idx, (float*)cn, sh, ws, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_L2, 10, 0.01f, 0, &run, NULL, 0),
             CAKE_ERROR_INVALID_ARGUMENT, "check_every = 0");
      CHECK(run == -1);
    }
    if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) == NULL)
      EXPECT(cake_kmeans_assign(a, b, NULL, idx, 1, 1000, 64, 128, CAKE_INPUT_BF16, CAKE_METRIC_INNER_PRODUCT, NULL, 0), CAKE_ERROR_NO_DEVICE, "libcuda");
  }

  /* Attention prefill varlen: q, o bf16 [total_q, H, D], k, v bf16 [total_k, HK, D], lse f32 [H, total_q], int32 offsets. */
  {
    const char* q = a;
    const char* k = b;
    const char* v = (const char*)(size_t)0x800000;
    char* o = d;
    float* lse = (float*)(size_t)0x900000;
    const int32_t* cu = (const int32_t*)(size_t)0xa00000;
    EXPECT(cake_attention_prefill_varlen(q, k, v, o, lse, cu, cu, 0, 128, 128, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "cake::attention::prefill_varlen: B = 0 must be at least 1");
    EXPECT(cake_attention_prefill_varlen(q, k, v, o, lse, cu, cu, 2, 128, 128, 129, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "max_seqlen_q = 129 must be 1 .. total_q = 128");
    EXPECT(cake_attention_prefill_varlen(q, k, v, o, lse, cu, cu, 2, (int64_t)1 << 31, 128, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "int32 offsets");
    EXPECT(cake_attention_prefill_varlen(q, k, v, o, lse, cu, cu, 2, 128, 128, 128, INT64_MAX, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "must be at most 2^20");
    EXPECT(cake_attention_prefill_varlen(q, k, v, o, lse, cu, cu, 2, 128, 128, 128, 12, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "H = 12 must be a multiple of HK = 8");
    EXPECT(cake_attention_prefill_varlen(q, k, v, o, lse, cu, cu, 2, 128, 128, 128, 8, 8, 128, 3, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "cake_attention_prefill_varlen: causal = 3 is not 0 or 1");
    EXPECT(cake_attention_prefill_varlen(q, k, v, o, lse, NULL, cu, 2, 128, 128, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "cu_seqlens_q must be a non-null device address aligned to 4");
    EXPECT(cake_attention_prefill_varlen(q, k, v, o, lse, cu, cu + 1, 2, 128, 128, 128, 8, 8, 128, 0, 0.0f, NULL, -1), CAKE_ERROR_INVALID_ARGUMENT,
           "cake_attention_prefill_varlen: device = -1");
  }

  /* Paged decode: q, o bf16 [B, H, D], caches bf16 [num_pages, page_size, HK, D], int32 page table and lengths. */
  {
    const char* q = a;
    const char* kc = b;
    const char* vc = (const char*)(size_t)0x800000;
    char* o = d;
    float* lse = (float*)(size_t)0x900000;
    const int32_t* pt = (const int32_t*)(size_t)0xa00000;
    void* ws = (void*)(size_t)0xb00000;
    CHECK(cake_attention_decode_workspace_bytes(4, 32, 8, 128, 1024, 16, 256, 0) > 0);
    CHECK(cake_attention_decode_workspace_bytes(4, 32, 8, 128, 1024, 48, 256, 0) == -1);
    EXPECT(cake_attention_decode_paged(q, kc, vc, pt, pt, o, lse, ws, 4, 32, 8, 128, 1024, 48, 256, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "cake::attention::decode_paged: page_size = 48 is not supported");
    EXPECT(cake_attention_decode_paged(q, kc, vc, pt, pt, o, lse, ws, 4, 32, 6, 128, 1024, 16, 256, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "H = 32 must be a multiple of HK = 6");
    EXPECT(cake_attention_decode_paged(q, kc, vc, pt, pt, o, lse, ws, 4, 32, 8, 128, 1024, 16, 256, 4097, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "max_seq_len = 4097 is more than max_pages * page_size");
    EXPECT(cake_attention_decode_paged(q, kc, vc, pt, pt, o, lse, NULL, 4, 32, 8, 128, 1024, 16, 256, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "workspace must be a non-null");
    EXPECT(cake_attention_decode_paged(q, kc, vc, pt, pt, o, lse, ws, 4, 32, 8, 128, INT64_MAX, 16, 256, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "must fit int32");
    EXPECT(cake_attention_decode_paged(q, kc, vc, pt, pt, o, lse, ws, 4, 32, 8, 128, 1024, 16, 256, 0, 0.0f, NULL, -1), CAKE_ERROR_INVALID_ARGUMENT,
           "cake_attention_decode_paged: device = -1");
    /* fp8 caches: the scales are checked, then the rest as above */
    EXPECT(cake_attention_decode_paged_fp8(q, kc, vc, pt, pt, o, lse, ws, 4, 32, 8, 128, 1024, 16, 256, 0, 0.0f, 0.0f, 1.0f, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "k_scale = 0.000000 and v_scale = 1.000000 must be finite and positive (fp8 caches)");
    EXPECT(cake_attention_decode_paged_fp8(q, kc, vc, pt, pt, o, lse, ws, 4, 32, 8, 128, 1024, 48, 256, 0, 0.0f, 1.0f, 1.0f, NULL, 0),
           CAKE_ERROR_INVALID_ARGUMENT, "page_size = 48 is not supported");
    EXPECT(cake_attention_decode_paged_fp8(q, kc, vc, pt, pt, o, lse, ws, 4, 32, 8, 128, 1024, 16, 256, 0, 0.0f, 1.0f, 1.0f, NULL, -1),
           CAKE_ERROR_INVALID_ARGUMENT, "cake_attention_decode_paged_fp8: device = -1");
  }

  /* k-nearest-neighbour search. */
  {
    float* dist = (float*)(size_t)0x400000;
    int32_t* idx = (int32_t*)(size_t)0x500000;
    void* ws = (void*)(size_t)0x600000;
    CHECK(cake_knn_search_workspace_bytes(4096, 1 << 20, 128, 10, CAKE_METRIC_L2) > 4 * 4096 * 10 * 2);
    CHECK(cake_knn_search_workspace_bytes(4096, 1 << 20, 128, 0, CAKE_METRIC_L2) == -1);
    CHECK(cake_knn_search_workspace_bytes(4096, 1 << 20, 128, 10, CAKE_METRIC_COSINE) == -1);
    EXPECT(cake_knn_search(a, b, dist, idx, ws, 100, 1000, 128, 257, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "k = 257 must be in 1 .. 256");
    EXPECT(cake_knn_search(a, b, dist, idx, ws, 100, 1000, 100, 10, CAKE_INPUT_BF16, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "D = 100 must be a multiple of 8");
    EXPECT(cake_knn_search(a, b, dist, idx, ws, 100, 1000, 128, 10, CAKE_INPUT_BF16, CAKE_METRIC_COSINE, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "metric = 2 is not one the search takes");
    EXPECT(cake_knn_search(a, b, dist, NULL, ws, 100, 1000, 128, 10, CAKE_INPUT_F16, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "indices must be a non-null");
    EXPECT(cake_knn_search(a, b, dist, idx, ws, 100, 1000, 128, 10, 5, CAKE_METRIC_L2, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "cake_knn_search: input_type = 5");
  }

  /* IVF-Flat: refusals before any device work. */
  {
    cake_ivf_index* h = (cake_ivf_index*)(size_t)0x1;
    float* dist = (float*)(size_t)0x400000;
    int32_t* idx = (int32_t*)(size_t)0x500000;
    void* ws = (void*)(size_t)0x600000;
    int64_t sizes[4];
    EXPECT(cake_ivf_create(a, 1000, 100, 10, CAKE_INPUT_BF16, CAKE_METRIC_L2, 0, 5, NULL, 0, &h), CAKE_ERROR_INVALID_ARGUMENT, "D = 100 must be a multiple of 8");
    CHECK(h == NULL); /* NULL on failure */
    EXPECT(cake_ivf_create(a, 1000, 128, 2000, CAKE_INPUT_BF16, CAKE_METRIC_L2, 0, 5, NULL, 0, &h), CAKE_ERROR_INVALID_ARGUMENT, "nlist = 2000 must be in 1 .. N");
    EXPECT(cake_ivf_create(a, 1000, 128, 10, CAKE_INPUT_BF16, CAKE_METRIC_COSINE, 0, 5, NULL, 0, &h), CAKE_ERROR_INVALID_ARGUMENT,
           "metric = 2 is not one the search takes");
    EXPECT(cake_ivf_create(a, 1000, 128, 10, CAKE_INPUT_BF16, CAKE_METRIC_L2, 0, 5, NULL, 0, NULL), CAKE_ERROR_INVALID_ARGUMENT, "index (where the handle goes)");
    EXPECT(cake_ivf_search(NULL, a, dist, idx, ws, 10, 10, 1, NULL), CAKE_ERROR_INVALID_ARGUMENT, "cake_ivf_search: index must not be NULL");
    EXPECT(cake_ivf_list_sizes(NULL, sizes), CAKE_ERROR_INVALID_ARGUMENT, "index and list_sizes must not be NULL");
    CHECK(cake_ivf_search_workspace_bytes(NULL, 10, 10, 1) == -1);
    cake_ivf_destroy(NULL); /* accepted */
  }

  /* Attention prefill: q, o bf16 [B, S, H, D], k, v bf16 [B, T, HK, D], lse f32 [B, H, S]. */
  {
    const char* q = a;
    const char* k = b;
    const char* v = (const char*)(size_t)0x800000;
    char* o = d;
    float* lse = (float*)(size_t)0x900000;
    EXPECT(cake_attention_prefill(q, k, v, o, lse, 0, 128, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "B = 0 must be at least 1");
    EXPECT(cake_attention_prefill(q, k, v, o, lse, 1, 0, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "S = 0 must be at least 1");
    EXPECT(cake_attention_prefill(q, k, v, o, lse, 1, 128, -5, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "T = -5 must be at least 1");
    EXPECT(cake_attention_prefill(q, k, v, o, lse, 1, 128, 128, 12, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "H = 12 must be a multiple of HK = 8");
    EXPECT(cake_attention_prefill(q, k, v, o, lse, 1, 128, 128, 8, 8, 96, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "D = 96 is not supported: 64, 128 or 256");
    EXPECT(cake_attention_prefill(q, k, v, o, lse, 1, 128, 128, 8, 8, 128, 0, HUGE_VALF, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "softmax_scale is not finite");
    EXPECT(cake_attention_prefill(q, k, v, o, lse, 1, 128, 128, 8, 8, 128, 2, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "cake_attention_prefill: causal = 2 is not 0 or 1");
    EXPECT(cake_attention_prefill(q, k, v, o, lse, 1, 128, 128, 8, 8, 128, 1, 0.0f, NULL, -1), CAKE_ERROR_INVALID_ARGUMENT,
           "cake_attention_prefill: device = -1");
    EXPECT(cake_attention_prefill(q, k, v, o, lse, INT64_MAX, INT64_MAX, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT, "overflows");
    EXPECT(cake_attention_prefill(q, k, v, o, lse, 1, (int64_t)1 << 40, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "more than 2^40 elements per batch entry");
    EXPECT(cake_attention_prefill(NULL, k, v, o, lse, 1, 128, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "q must be a non-null device address aligned to 16");
    EXPECT(cake_attention_prefill(q, k + 8, v, o, lse, 1, 128, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "k must be a non-null device address aligned to 16");
    EXPECT(cake_attention_prefill(q, k, v, o, NULL, 1, 128, 128, 8, 8, 128, 0, 0.0f, NULL, 0), CAKE_ERROR_INVALID_ARGUMENT,
           "lse must be a non-null device address aligned to 4");
    if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) == NULL)
      EXPECT(cake_attention_prefill(q, k, v, o, lse, 2, 127, 1000, 32, 8, 64, 1, 0.125f, NULL, 0), CAKE_ERROR_NO_DEVICE, "libcuda");
  }

  /* Without a CUDA driver, well-formed calls say so (with one, they would launch on these addresses:
   * the GPU tier covers that machine). */
  if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) == NULL) {
    EXPECT(cake_softmax_bf16(a, d, 4, 128, 128, NULL, 0), CAKE_ERROR_NO_DEVICE, "no usable CUDA device");
    EXPECT(cake_gemm_bf16(a, b, d, 64, 64, 64, 64, 64, 64, NULL, NULL, 0), CAKE_ERROR_NO_DEVICE, "libcuda");
  } else {
    printf("test_c_api: a CUDA driver is present: the no-device checks are skipped here (tests/gpu/test_c_api.cpp runs on the GPU)\n");
  }

  printf("test_c_api: %d checks, %d failed\n", checks, failures);
  return failures == 0 && checks > 0 ? 0 : 1;
}
