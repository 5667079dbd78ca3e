// The C ABI (include/cake/c/cake.h) over the C++ entry points. Each function runs the C++ call inside one
// try block and turns what it throws into a status and the thread's error message: no exception crosses
// the interface. Argument checks are the C++ entry points' own (jit::argument_error, thrown before any
// driver call); only what C can get wrong and C++ cannot (an activation code out of range, a negative
// device ordinal) is checked here.
#include "cake/c/cake.h"

#include <exception>
#include <memory>
#include <new>
#include <string>

#include "cake/gemm.hpp"
#include "cake/version.hpp"
#include "kernels/attention/attention.hpp"
#include "kernels/kmeans/init.hpp"
#include "kernels/kmeans/kmeans.hpp"
#include "kernels/knn/ivf.hpp"
#include "kernels/knn/knn.hpp"
#include "kernels/norm/norm.hpp"

namespace {

thread_local std::string last_error;

cake_status fail(cake_status s, std::string message) {
  try {
    last_error = std::move(message);
  } catch (...) {  // out of memory for the message itself: keep the status
  }
  return s;
}

// No driver, or a device ordinal that does not exist: CAKE_ERROR_NO_DEVICE with the reason.
bool device_missing(int device, std::string& why) {
  if (!cake::jit::driver::available()) {
    why = cake::jit::driver::unavailable_reason();
    return true;
  }
  const int n = cake::jit::driver::get().device_count();
  if (device < 0 || device >= n) {
    why = "device = " + std::to_string(device) + " is not a CUDA device ordinal of this machine (" + std::to_string(n) + " device(s))";
    return true;
  }
  return false;
}

template <class F>
cake_status guarded(const char* who, int device, F&& call) {
  try {
    call();  // argument errors are thrown first, with or without a GPU
    last_error.clear();
    return CAKE_OK;
  } catch (const cake::jit::argument_error& e) {
    return fail(CAKE_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const cake::jit::unsupported_error& e) {
    return fail(CAKE_ERROR_UNSUPPORTED, e.what());
  } catch (const cake::jit::error& e) {
    std::string why;
    if (device_missing(device, why)) return fail(CAKE_ERROR_NO_DEVICE, std::string(who) + ": no usable CUDA device: " + why);
    return fail(CAKE_ERROR_RUNTIME, e.what());
  } catch (const std::bad_alloc&) {
    return fail(CAKE_ERROR_RUNTIME, std::string(who) + ": out of host memory");
  } catch (const std::exception& e) {
    return fail(CAKE_ERROR_INTERNAL, std::string(who) + ": " + e.what());
  } catch (...) {
    return fail(CAKE_ERROR_INTERNAL, std::string(who) + ": an unknown exception");
  }
}

CUstream as_stream(void* s) { return static_cast<CUstream>(s); }

}  // namespace

extern "C" {

const char* cake_last_error(void) { return last_error.c_str(); }

const char* cake_version(void) { return CAKE_VERSION_STRING; }

cake_status cake_gemm_bf16(const void* A, const void* B, void* D, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldd,
                           const cake_gemm_epilogue* epilogue, void* stream, int device) {
  return guarded("cake_gemm_bf16", device, [&] {
    cake::gemm_epilogue_args e;
    if (epilogue) {
      if (epilogue->activation < CAKE_ACTIVATION_NONE || epilogue->activation > CAKE_ACTIVATION_RELU)
        throw cake::jit::argument_error("cake_gemm_bf16: epilogue->activation = " + std::to_string(epilogue->activation) +
                                        " is not a cake_activation (0 none, 1 GELU tanh, 2 GELU erf, 3 SiLU, 4 ReLU)");
      e.bias = epilogue->bias;
      e.row_scale = epilogue->row_scale;
      e.col_scale = epilogue->col_scale;
      e.residual = epilogue->residual;
      e.ldr = epilogue->ldr;
      e.activation = static_cast<cake::kernels::gemm_activation>(epilogue->activation);
    }
    if (device < 0) throw cake::jit::argument_error("cake_gemm_bf16: device = " + std::to_string(device) + " is not a device ordinal");
    cake::gemm(A, B, D, M, N, K, lda, ldb, ldd, e, as_stream(stream), device);
  });
}

cake_status cake_gemm_fp8(const void* A, const void* B, void* D, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldd, float scale,
                          void* stream, int device) {
  return guarded("cake_gemm_fp8", device, [&] {
    if (device < 0) throw cake::jit::argument_error("cake_gemm_fp8: device = " + std::to_string(device) + " is not a device ordinal");
    cake::gemm_fp8(A, B, D, M, N, K, lda, ldb, ldd, scale, as_stream(stream), device);
  });
}

cake_status cake_softmax_bf16(const void* x, void* y, int64_t rows, int64_t cols, int64_t ld, void* stream, int device) {
  return guarded("cake_softmax_bf16", device, [&] {
    if (device < 0) throw cake::jit::argument_error("cake_softmax_bf16: device = " + std::to_string(device) + " is not a device ordinal");
    cake::softmax(x, y, rows, cols, ld, as_stream(stream), device);
  });
}

cake_status cake_rmsnorm_bf16(const void* x, const void* w, void* y, int64_t rows, int64_t cols, int64_t ld, float eps, void* stream, int device) {
  return guarded("cake_rmsnorm_bf16", device, [&] {
    if (device < 0) throw cake::jit::argument_error("cake_rmsnorm_bf16: device = " + std::to_string(device) + " is not a device ordinal");
    cake::rmsnorm(x, w, y, rows, cols, ld, eps, as_stream(stream), device);
  });
}

}  // extern "C"

namespace {
// The k-means calls' codes, checked here (C can pass any int).
void kmeans_codes(const char* who, int device, int input_type, int metric) {
  if (device < 0) throw cake::jit::argument_error(std::string(who) + ": device = " + std::to_string(device) + " is not a device ordinal");
  if (input_type != CAKE_INPUT_F16 && input_type != CAKE_INPUT_BF16)
    throw cake::jit::argument_error(std::string(who) + ": input_type = " + std::to_string(input_type) + " is not a cake_input_type (0 f16, 1 bf16)");
  if (metric < CAKE_METRIC_L2 || metric > CAKE_METRIC_COSINE)
    throw cake::jit::argument_error(std::string(who) + ": metric = " + std::to_string(metric) + " is not a cake_metric (0 l2, 1 inner product, 2 cosine)");
}
cake::kmeans::input_type kmeans_type(int t) { return t == CAKE_INPUT_F16 ? cake::kmeans::input_type::f16 : cake::kmeans::input_type::bf16; }
}  // namespace

extern "C" {
cake_status cake_kmeans_assign(const void* x, const void* c, const float* c_norm, int32_t* idx, int64_t B, int64_t N, int64_t K, int64_t D,
                               int input_type, int metric, void* stream, int device) {
  return guarded("cake_kmeans_assign", device, [&] {
    kmeans_codes("cake_kmeans_assign", device, input_type, metric);
    cake::kmeans::assign(x, c, c_norm, idx, B, N, K, D, kmeans_type(input_type), static_cast<cake::kmeans::metric>(metric), as_stream(stream), device);
  });
}

int64_t cake_kmeans_update_workspace_bytes(int64_t B, int64_t K, int64_t D) {
  if (B < 1 || K < 1 || D < 1 || B > (int64_t{1} << 40) || K > (int64_t{1} << 40) / B || D > (int64_t{1} << 40) / (B * K)) return -1;
  return cake::kmeans::update_workspace_bytes(B, K, D);
}

cake_status cake_kmeans_update(const void* x, const int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N, int64_t K,
                               int64_t D, int input_type, int metric, void* stream, int device) {
  return guarded("cake_kmeans_update", device, [&] {
    kmeans_codes("cake_kmeans_update", device, input_type, metric);
    cake::kmeans::update(x, idx, c, c_norm, shift, workspace, B, N, K, D, kmeans_type(input_type), static_cast<cake::kmeans::metric>(metric),
                         as_stream(stream), device);
  });
}

int64_t cake_kmeans_sorted_update_workspace_bytes(int64_t B, int64_t N, int64_t K, int64_t D) {
  if (B < 1 || N < 1 || K < 1 || D < 1 || B > (int64_t{1} << 40) || K > (int64_t{1} << 40) / B || D > (int64_t{1} << 40) / (B * K) || N > (int64_t{1} << 40) / B ||
      D > (int64_t{1} << 40) / (B * N))
    return -1;
  return cake::kmeans::sorted_update_workspace_bytes(B, N, K, D);
}

cake_status cake_kmeans_update_sorted(const void* x, const int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N, int64_t K,
                                      int64_t D, int input_type, int metric, void* stream, int device) {
  return guarded("cake_kmeans_update_sorted", device, [&] {
    kmeans_codes("cake_kmeans_update_sorted", device, input_type, metric);
    cake::kmeans::update_options o;
    o.method = cake::kmeans::update_method::sorted;
    cake::kmeans::update(x, idx, c, c_norm, shift, workspace, B, N, K, D, kmeans_type(input_type), static_cast<cake::kmeans::metric>(metric), o,
                         as_stream(stream), device);
  });
}

cake_status cake_kmeans_step(const void* x, void* c, int32_t* idx, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N, int64_t K, int64_t D,
                             int input_type, int metric, void* stream, int device) {
  return guarded("cake_kmeans_step", device, [&] {
    kmeans_codes("cake_kmeans_step", device, input_type, metric);
    cake::kmeans::step(x, c, idx, c_norm, shift, workspace, B, N, K, D, kmeans_type(input_type), static_cast<cake::kmeans::metric>(metric), as_stream(stream),
                       device);
  });
}

cake_status cake_kmeans_fit(const void* x, void* c, int32_t* idx, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N, int64_t K, int64_t D,
                            int input_type, int metric, int iterations, void* stream, int device) {
  return guarded("cake_kmeans_fit", device, [&] {
    kmeans_codes("cake_kmeans_fit", device, input_type, metric);
    cake::kmeans::fit(x, c, idx, c_norm, shift, workspace, B, N, K, D, kmeans_type(input_type), static_cast<cake::kmeans::metric>(metric), iterations,
                      as_stream(stream), device);
  });
}

cake_status cake_kmeans_update_deterministic(const void* x, const int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N,
                                             int64_t K, int64_t D, int input_type, int metric, float max_abs, void* stream, int device) {
  return guarded("cake_kmeans_update_deterministic", device, [&] {
    kmeans_codes("cake_kmeans_update_deterministic", device, input_type, metric);
    cake::kmeans::update(x, idx, c, c_norm, shift, workspace, B, N, K, D, kmeans_type(input_type), static_cast<cake::kmeans::metric>(metric),
                         cake::kmeans::update_options{true, max_abs}, as_stream(stream), device);
  });
}

cake_status cake_kmeans_fit_deterministic(const void* x, void* c, int32_t* idx, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N, int64_t K,
                                          int64_t D, int input_type, int metric, int iterations, float max_abs, void* stream, int device) {
  return guarded("cake_kmeans_fit_deterministic", device, [&] {
    kmeans_codes("cake_kmeans_fit_deterministic", device, input_type, metric);
    cake::kmeans::fit(x, c, idx, c_norm, shift, workspace, B, N, K, D, kmeans_type(input_type), static_cast<cake::kmeans::metric>(metric), iterations,
                      cake::kmeans::update_options{true, max_abs}, as_stream(stream), device);
  });
}

cake_status cake_kmeans_init_random(const void* x, void* c, int64_t B, int64_t N, int64_t K, int64_t D, int input_type, uint64_t seed, void* stream,
                                    int device) {
  return guarded("cake_kmeans_init_random", device, [&] {
    kmeans_codes("cake_kmeans_init_random", device, input_type, CAKE_METRIC_L2);
    cake::kmeans::init_random(x, c, B, N, K, D, kmeans_type(input_type), seed, as_stream(stream), device);
  });
}

cake_status cake_kmeans_fit_until(const void* x, void* c, int32_t* idx, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N, int64_t K,
                                  int64_t D, int input_type, int metric, int max_iterations, float tolerance, int check_every, int* iterations_run,
                                  void* stream, int device) {
  return guarded("cake_kmeans_fit_until", device, [&] {
    kmeans_codes("cake_kmeans_fit_until", device, input_type, metric);
    if (!iterations_run) throw cake::jit::argument_error("cake_kmeans_fit_until: iterations_run must be a non-null host address");
    *iterations_run = cake::kmeans::fit_until(x, c, idx, c_norm, shift, workspace, B, N, K, D, kmeans_type(input_type),
                                              static_cast<cake::kmeans::metric>(metric), max_iterations, tolerance, check_every, {}, as_stream(stream), device);
  });
}

namespace {
// The search's metric: l2 or inner product (cosine is the inner product of normalized rows).
void knn_metric_code(const char* who, int metric) {
  if (metric != CAKE_METRIC_L2 && metric != CAKE_METRIC_INNER_PRODUCT)
    throw cake::jit::argument_error(std::string(who) + ": metric = " + std::to_string(metric) +
                                    " is not one the search takes (0 l2, 1 inner product; for cosine normalize the rows and use 1)");
}
cake::knn::metric knn_metric(int m) { return m == CAKE_METRIC_L2 ? cake::knn::metric::l2 : cake::knn::metric::inner_product; }
}  // namespace

int64_t cake_knn_search_workspace_bytes(int64_t Q, int64_t N, int64_t D, int k, int metric) {
  if (metric != CAKE_METRIC_L2 && metric != CAKE_METRIC_INNER_PRODUCT) return -1;
  try {
    return cake::knn::search_workspace_bytes(Q, N, D, k, knn_metric(metric));
  } catch (const cake::jit::argument_error&) {
    return -1;
  }
}

cake_status cake_knn_search(const void* queries, const void* database, float* distances, int32_t* indices, void* workspace, int64_t Q, int64_t N,
                            int64_t D, int k, int input_type, int metric, void* stream, int device) {
  return guarded("cake_knn_search", device, [&] {
    kmeans_codes("cake_knn_search", device, input_type, metric);
    knn_metric_code("cake_knn_search", metric);
    cake::knn::search(queries, database, distances, indices, workspace, Q, N, D, k, kmeans_type(input_type), knn_metric(metric), as_stream(stream),
                      device);
  });
}

struct cake_ivf_index {
  cake::knn::ivf_index index;
};

cake_status cake_ivf_create(const void* database, int64_t N, int64_t D, int64_t nlist, int input_type, int metric, uint64_t seed, int iterations,
                            void* stream, int device, cake_ivf_index** index) {
  if (index) *index = nullptr;
  return guarded("cake_ivf_create", device, [&] {
    if (!index) throw cake::jit::argument_error("cake_ivf_create: index (where the handle goes) must not be NULL");
    kmeans_codes("cake_ivf_create", device, input_type, metric);
    knn_metric_code("cake_ivf_create", metric);
    auto h = std::make_unique<cake_ivf_index>();
    h->index = cake::knn::ivf_build(database, N, D, nlist, kmeans_type(input_type), knn_metric(metric), seed, iterations, as_stream(stream), device);
    *index = h.release();
  });
}

void cake_ivf_destroy(cake_ivf_index* index) {
  try {
    delete index;
  } catch (...) {  // a driver error while freeing: nothing to report to
  }
}

cake_status cake_ivf_list_sizes(const cake_ivf_index* index, int64_t* list_sizes) {
  return guarded("cake_ivf_list_sizes", 0, [&] {
    if (!index || !list_sizes) throw cake::jit::argument_error("cake_ivf_list_sizes: index and list_sizes must not be NULL");
    for (long long l = 0; l < index->index.nlist; ++l) list_sizes[l] = index->index.list_size(l);
  });
}

int64_t cake_ivf_search_workspace_bytes(const cake_ivf_index* index, int64_t Q, int k, int nprobe) {
  if (!index) return -1;
  try {
    return cake::knn::ivf_search_workspace_bytes(index->index, Q, k, nprobe);
  } catch (const cake::jit::argument_error&) {
    return -1;
  }
}

cake_status cake_ivf_search(const cake_ivf_index* index, const void* queries, float* distances, int32_t* indices, void* workspace, int64_t Q, int k,
                            int nprobe, void* stream) {
  return guarded("cake_ivf_search", index ? index->index.device : 0, [&] {
    if (!index) throw cake::jit::argument_error("cake_ivf_search: index must not be NULL");
    cake::knn::ivf_search(index->index, queries, distances, indices, workspace, Q, k, nprobe, as_stream(stream));
  });
}

}  // extern "C"

extern "C" {

cake_status cake_attention_prefill(const void* q, const void* k, const void* v, void* o, float* lse, int64_t B, int64_t S, int64_t T, int64_t H,
                                   int64_t HK, int64_t D, int causal, float softmax_scale, void* stream, int device) {
  return guarded("cake_attention_prefill", device, [&] {
    const std::string who = "cake_attention_prefill";
    if (device < 0) throw cake::jit::argument_error(who + ": device = " + std::to_string(device) + " is not a device ordinal");
    if (causal != 0 && causal != 1) throw cake::jit::argument_error(who + ": causal = " + std::to_string(causal) + " is not 0 or 1");
    // Sizes whose products would overflow 64 bits (the C++ checks multiply them): C can pass any int64.
    if (B > 0 && S > 0 && T > 0 && H > 0 && HK > 0 && D > 0 && D <= 128) {  // else the C++ check names the argument
      const __int128 lim = __int128{1} << 62;
      const __int128 nq = static_cast<__int128>(B) * S, nk = static_cast<__int128>(B) * T;
      if (nq > lim || nk > lim || nq * H > lim || nk * HK > lim || nq * H * D > lim || nk * HK * D > lim)
        throw cake::jit::argument_error(who + ": B * S * H * D or B * T * HK * D overflows (B = " + std::to_string(B) + ", S = " + std::to_string(S) +
                                        ", T = " + std::to_string(T) + ", H = " + std::to_string(H) + ", HK = " + std::to_string(HK) +
                                        ", D = " + std::to_string(D) + ")");
    }
    cake::attention::prefill_shape s;
    s.B = B;
    s.S = S;
    s.T = T;
    s.H = H;
    s.HK = HK;
    s.D = D;
    s.causal = causal == 1;
    s.softmax_scale = softmax_scale;
    cake::attention::prefill(q, k, v, o, lse, s, as_stream(stream), device);
  });
}

cake_status cake_attention_prefill_varlen(const void* q, const void* k, const void* v, void* o, float* lse, const int32_t* cu_seqlens_q,
                                          const int32_t* cu_seqlens_k, int64_t B, int64_t total_q, int64_t total_k, int64_t max_seqlen_q, int64_t H,
                                          int64_t HK, int64_t D, int causal, float softmax_scale, void* stream, int device) {
  return guarded("cake_attention_prefill_varlen", device, [&] {
    const std::string who = "cake_attention_prefill_varlen";
    if (device < 0) throw cake::jit::argument_error(who + ": device = " + std::to_string(device) + " is not a device ordinal");
    if (causal != 0 && causal != 1) throw cake::jit::argument_error(who + ": causal = " + std::to_string(causal) + " is not 0 or 1");
    cake::attention::varlen_shape s;
    s.B = B;
    s.total_q = total_q;
    s.total_k = total_k;
    s.max_seqlen_q = max_seqlen_q;
    s.H = H;
    s.HK = HK;
    s.D = D;
    s.causal = causal == 1;
    s.softmax_scale = softmax_scale;
    cake::attention::prefill_varlen(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, s, as_stream(stream), device);
  });
}

namespace {
cake::attention::decode_shape decode_shape_of(int64_t B, int64_t H, int64_t HK, int64_t D, int64_t num_pages, int64_t page_size, int64_t max_pages,
                                              int64_t max_seq_len, float softmax_scale) {
  cake::attention::decode_shape s;
  s.B = B;
  s.H = H;
  s.HK = HK;
  s.D = D;
  s.num_pages = num_pages;
  s.page_size = page_size;
  s.max_pages = max_pages;
  s.max_seq_len = max_seq_len;
  s.softmax_scale = softmax_scale;
  return s;
}
}  // namespace

int64_t cake_attention_decode_workspace_bytes(int64_t B, int64_t H, int64_t HK, int64_t D, int64_t num_pages, int64_t page_size, int64_t max_pages,
                                              int64_t max_seq_len) {
  try {
    return cake::attention::decode_workspace_bytes(decode_shape_of(B, H, HK, D, num_pages, page_size, max_pages, max_seq_len, 0.0f));
  } catch (const cake::jit::argument_error&) {
    return -1;
  }
}

cake_status cake_attention_decode_paged(const void* q, const void* k_cache, const void* v_cache, const int32_t* page_table, const int32_t* seq_lens, void* o,
                                        float* lse, void* workspace, int64_t B, int64_t H, int64_t HK, int64_t D, int64_t num_pages, int64_t page_size,
                                        int64_t max_pages, int64_t max_seq_len, float softmax_scale, void* stream, int device) {
  return guarded("cake_attention_decode_paged", device, [&] {
    const std::string who = "cake_attention_decode_paged";
    if (device < 0) throw cake::jit::argument_error(who + ": device = " + std::to_string(device) + " is not a device ordinal");
    cake::attention::decode_paged(q, k_cache, v_cache, page_table, seq_lens, o, lse, workspace,
                                  decode_shape_of(B, H, HK, D, num_pages, page_size, max_pages, max_seq_len, softmax_scale), as_stream(stream), device);
  });
}

cake_status cake_attention_decode_paged_fp8(const void* q, const void* k_cache, const void* v_cache, const int32_t* page_table, const int32_t* seq_lens,
                                            void* o, float* lse, void* workspace, int64_t B, int64_t H, int64_t HK, int64_t D, int64_t num_pages,
                                            int64_t page_size, int64_t max_pages, int64_t max_seq_len, float softmax_scale, float k_scale, float v_scale,
                                            void* stream, int device) {
  return guarded("cake_attention_decode_paged_fp8", device, [&] {
    const std::string who = "cake_attention_decode_paged_fp8";
    if (device < 0) throw cake::jit::argument_error(who + ": device = " + std::to_string(device) + " is not a device ordinal");
    cake::attention::decode_shape s = decode_shape_of(B, H, HK, D, num_pages, page_size, max_pages, max_seq_len, softmax_scale);
    s.kv_fp8 = true, s.k_scale = k_scale, s.v_scale = v_scale;
    cake::attention::decode_paged(q, k_cache, v_cache, page_table, seq_lens, o, lse, workspace, s, as_stream(stream), device);
  });
}

}  // extern "C"
