/* Cake's C ABI: the library entry points (cake::gemm, cake::gemm_fp8, cake::softmax, cake::rmsnorm,
 * cake::kmeans, cake::knn, cake::attention::prefill) for
 * callers that are not C++ (Python through the cake package, Rust, engines with a C plugin interface).
 * Link the shared library `cake_c` (CMake target cake::c).
 *
 * Conventions
 *   - Every pointer is a device address; shapes, leading dimensions and strides count elements.
 *   - `stream` is a CUstream (or NULL for the legacy default stream); `device` is the CUDA ordinal the
 *     pointers live on. The call enqueues the kernel and returns: it never synchronizes.
 *   - Every call returns a cake_status. On anything but CAKE_OK, cake_last_error() gives a message
 *     that names the argument or the cause (the calling thread's last error; "" after a success).
 *   - No C++ exception crosses this interface.
 *   - The first call for a shape class JIT-compiles its kernel (cached in memory and on disk, shared
 *     with C++ callers in the same process; docs/jit.md); later calls allocate nothing.
 */
#ifndef CAKE_C_CAKE_H
#define CAKE_C_CAKE_H

#include <stdint.h>

#if defined(_WIN32)
#define CAKE_C_API __declspec(dllexport)
#else
#define CAKE_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cake_status {
  CAKE_OK = 0,
  CAKE_ERROR_INVALID_ARGUMENT = 1, /* an argument is refused; the message names it */
  CAKE_ERROR_NO_DEVICE = 2,        /* no CUDA driver or no such device */
  CAKE_ERROR_UNSUPPORTED = 3,      /* the device cannot run this (e.g. an sm_90a kernel on another GPU) */
  CAKE_ERROR_RUNTIME = 4,          /* the driver, NVRTC or the JIT cache failed; the message says how */
  CAKE_ERROR_INTERNAL = 5          /* anything else (a bug in Cake: please report the message) */
} cake_status;

/* The element-wise function of a fused GEMM epilogue. */
typedef enum cake_activation {
  CAKE_ACTIVATION_NONE = 0,
  CAKE_ACTIVATION_GELU_TANH = 1,
  CAKE_ACTIVATION_GELU_ERF = 2,
  CAKE_ACTIVATION_SILU = 3,
  CAKE_ACTIVATION_RELU = 4
} cake_activation;

/* D = act(acc * row_scale[m] * col_scale[n] + bias[n]) + residual[m, n]; a NULL pointer leaves its part
 * out. bias: bf16 [N]; row_scale: f32 [M]; col_scale: f32 [N]; residual: bf16 [M, N] with leading
 * dimension ldr (>= N). All 16-byte aligned. */
typedef struct cake_gemm_epilogue {
  const void* bias;
  const float* row_scale;
  const float* col_scale;
  const void* residual;
  int64_t ldr;
  int32_t activation; /* a cake_activation */
} cake_gemm_epilogue;

/* The calling thread's last error message ("" after a successful call). Valid until the thread's next
 * Cake call. */
CAKE_C_API const char* cake_last_error(void);

/* "major.minor.patch" of the library. */
CAKE_C_API const char* cake_version(void);

/* D[M,N] = A[M,K] * B[N,K]^T: bf16 in, f32 accumulate, bf16 out; A, B K-major (lda, ldb >= K, multiples
 * of 8), D row-major (ldd >= N). `epilogue` may be NULL. Hopper (cc 9.0) only. */
CAKE_C_API cake_status cake_gemm_bf16(const void* A, const void* B, void* D, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
                                      int64_t ldd, const cake_gemm_epilogue* epilogue, void* stream, int device);

/* D[M,N] = scale * A[M,K] * B[N,K]^T: fp8 e4m3 in (lda, ldb multiples of 16), bf16 out. Hopper only. */
CAKE_C_API cake_status cake_gemm_fp8(const void* A, const void* B, void* D, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
                                     int64_t ldd, float scale, void* stream, int device);

/* y[r, :] = softmax(x[r, :]) over `cols` bf16 elements of each of `rows` rows (row stride ld >= cols;
 * cols <= 16384). x and y may be the same. cc 8.0 or newer. */
CAKE_C_API cake_status cake_softmax_bf16(const void* x, void* y, int64_t rows, int64_t cols, int64_t ld, void* stream, int device);

/* y[r, :] = bf16(bf16(x[r, :] * rsqrt(mean(x[r, :]^2) + eps)) * w[:]), bf16 x, w [cols], y; eps >= 0.
 * cc 8.0 or newer. */
CAKE_C_API cake_status cake_rmsnorm_bf16(const void* x, const void* w, void* y, int64_t rows, int64_t cols, int64_t ld, float eps, void* stream,
                                         int device);

/* Element types of the k-means and search entry points' inputs. */
typedef enum cake_input_type { CAKE_INPUT_F16 = 0, CAKE_INPUT_BF16 = 1 } cake_input_type;

/* What "nearest" means for k-means and search: smallest Euclidean distance, largest inner product, or
 * largest cosine similarity. */
typedef enum cake_metric { CAKE_METRIC_L2 = 0, CAKE_METRIC_INNER_PRODUCT = 1, CAKE_METRIC_COSINE = 2 } cake_metric;

/* idx[b, i] = the centroid of c[b] nearest to x[b, i] (ties: the lowest index). x [B, N, D], c [B, K, D]
 * contiguous, of `input_type` (a cake_input_type), 16-byte aligned; D a multiple of 8 in 8 .. 512;
 * c_norm f32 [B, K]: |c|^2 for CAKE_METRIC_L2, -1/|c| for CAKE_METRIC_COSINE, NULL for
 * CAKE_METRIC_INNER_PRODUCT; idx i32 [B, N]. Hopper (cc 9.0) only. */
CAKE_C_API cake_status cake_kmeans_assign(const void* x, const void* c, const float* c_norm, int32_t* idx, int64_t B, int64_t N, int64_t K, int64_t D,
                                          int input_type, int metric, void* stream, int device);

/* Bytes of device workspace cake_kmeans_update and cake_kmeans_fit need (sums [B, K, D] of 8 bytes: i64
 * for the deterministic forms, f32 otherwise; f32 counts [B, K]); -1 for shapes out of range. */
CAKE_C_API int64_t cake_kmeans_update_workspace_bytes(int64_t B, int64_t K, int64_t D);

/* After an assignment: c[b, k] = the mean of the points x[b, i] with idx[b, i] == k, rounded to
 * `input_type` (an empty cluster keeps its centroid); c_norm [B, K] refreshed in the metric's form (unused
 * for CAKE_METRIC_INNER_PRODUCT: may be NULL); shift [B, K] f32 = |c_new - c_old|^2. workspace: at least
 * cake_kmeans_update_workspace_bytes(B, K, D) bytes, 16-byte aligned (zeroed by the call). B * K <= 2^24.
 * Hopper only. */
CAKE_C_API cake_status cake_kmeans_update(const void* x, const int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N,
                                          int64_t K, int64_t D, int input_type, int metric, void* stream, int device);

/* One Lloyd iteration: idx = the assignment to the centroids in c (c_norm must hold their norms, as for
 * cake_kmeans_assign), then c, c_norm and shift updated as by cake_kmeans_update: the same results as the
 * two calls, with the update's scatter fused into the assignment (docs/kmeans.md, "One iteration").
 * Buffers as in cake_kmeans_assign / cake_kmeans_update. Hopper only. */
CAKE_C_API cake_status cake_kmeans_step(const void* x, void* c, int32_t* idx, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N, int64_t K,
                                        int64_t D, int input_type, int metric, void* stream, int device);

/* `iterations` Lloyd iterations (c_norm from c, then cake_kmeans_step each) from the centroids in c, all
 * enqueued on `stream` without a host synchronization; idx holds the last assignment, shift the last
 * update's movement. Buffers as in cake_kmeans_assign / cake_kmeans_update. Hopper only. */
CAKE_C_API cake_status cake_kmeans_fit(const void* x, void* c, int32_t* idx, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N, int64_t K,
                                       int64_t D, int input_type, int metric, int iterations, void* stream, int device);

/* cake_kmeans_update and cake_kmeans_fit with deterministic sums (docs/kmeans.md, "Deterministic sums"):
 * i64 fixed point, the same bits on every run, at the cost of one 64-bit atomic per element. max_abs: a
 * bound on |x| over the points (0: the input type's largest value, right for CAKE_INPUT_F16; bf16 points
 * need the data's bound, else CAKE_ERROR_INVALID_ARGUMENT). Values past the bound saturate. */
CAKE_C_API cake_status cake_kmeans_update_deterministic(const void* x, const int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, int64_t B,
                                                        int64_t N, int64_t K, int64_t D, int input_type, int metric, float max_abs, void* stream,
                                                        int device);
CAKE_C_API cake_status cake_kmeans_fit_deterministic(const void* x, void* c, int32_t* idx, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N,
                                                     int64_t K, int64_t D, int input_type, int metric, int iterations, float max_abs, void* stream,
                                                     int device);

/* cake_kmeans_update by the sorted method (docs/kmeans.md, "The sorted update"): the points sorted by cluster
 * (a counting sort), then each cluster's contiguous rows summed, one atomic add per cluster and chunk of 256
 * rows instead of one per point: faster when clusters are uneven. workspace: at least
 * cake_kmeans_sorted_update_workspace_bytes(B, N, K, D) bytes, 16-byte aligned. B * N <= 2^24. Hopper only. */
CAKE_C_API int64_t cake_kmeans_sorted_update_workspace_bytes(int64_t B, int64_t N, int64_t K, int64_t D);
CAKE_C_API cake_status cake_kmeans_update_sorted(const void* x, const int32_t* idx, void* c, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N,
                                                 int64_t K, int64_t D, int input_type, int metric, void* stream, int device);

/* c [B, K, D] = K distinct points of each batch entry of x [B, N, D], picked by seed + b (the same rows on
 * every platform); K <= N. Hopper only. */
CAKE_C_API cake_status cake_kmeans_init_random(const void* x, void* c, int64_t B, int64_t N, int64_t K, int64_t D, int input_type, uint64_t seed, void* stream,
                                               int device);

/* Lloyd iterations (as cake_kmeans_fit) until every centroid moved by at most `tolerance` (Euclidean) in the
 * last iteration, or max_iterations; the shifts are read back every check_every iterations (the one host
 * synchronization of the loop). *iterations_run receives the iterations run. Hopper only. */
CAKE_C_API cake_status cake_kmeans_fit_until(const void* x, void* c, int32_t* idx, float* c_norm, float* shift, void* workspace, int64_t B, int64_t N,
                                             int64_t K, int64_t D, int input_type, int metric, int max_iterations, float tolerance, int check_every,
                                             int* iterations_run, void* stream, int device);

/* Bytes of device workspace cake_knn_search needs for this shape (the partial lists of the database
 * splits, and the norms for CAKE_METRIC_L2); -1 for arguments out of range. */
CAKE_C_API int64_t cake_knn_search_workspace_bytes(int64_t Q, int64_t N, int64_t D, int k, int metric);

/* Exact k-nearest-neighbour search: for every query i, its k best database rows, best first (ties: the
 * lowest index). CAKE_METRIC_L2: the k smallest squared distances |x|^2 + |y|^2 - 2 x.y;
 * CAKE_METRIC_INNER_PRODUCT: the k largest x.y (CAKE_METRIC_COSINE is refused: normalize the rows and use
 * the inner product). queries [Q, D] and database [N, D] contiguous, of `input_type`, 16-byte aligned; D a
 * multiple of 8 in 8 .. 512; 1 <= k <= 256; N < 2^31 - 1. distances f32 [Q, k], indices i32 [Q, k]
 * (with k > N the entries past N are -1 with distance +inf / -inf). workspace: at least
 * cake_knn_search_workspace_bytes(Q, N, D, k, metric) bytes, 256-byte aligned. Hopper (cc 9.0) only. */
CAKE_C_API cake_status cake_knn_search(const void* queries, const void* database, float* distances, int32_t* indices, void* workspace, int64_t Q,
                                       int64_t N, int64_t D, int k, int input_type, int metric, void* stream, int device);

/* IVF-Flat (docs/knn.md): an index over a database [N, D] of `input_type` (16-byte aligned; D a multiple of 8
 * in 8 .. 512; N <= 2^24): k-means (l2, `iterations` Lloyd iterations from nlist distinct rows picked by
 * `seed`) into 1 <= nlist <= N inverted lists, the database copied in list order. The index owns its device
 * memory; the database may be freed after the call. metric: CAKE_METRIC_L2 or CAKE_METRIC_INNER_PRODUCT (the
 * scan's metric; the lists are always l2). Synchronizes `stream` (the lists' offsets are a counting sort on
 * the host). *index is NULL on failure. Hopper (cc 9.0) only. */
typedef struct cake_ivf_index cake_ivf_index;
CAKE_C_API cake_status cake_ivf_create(const void* database, int64_t N, int64_t D, int64_t nlist, int input_type, int metric, uint64_t seed,
                                       int iterations, void* stream, int device, cake_ivf_index** index);
/* Frees the index (NULL is accepted). */
CAKE_C_API void cake_ivf_destroy(cake_ivf_index* index);
/* Entries of list_sizes [nlist] (int64) filled with the lists' sizes; CAKE_ERROR_INVALID_ARGUMENT for a NULL
 * index or array. */
CAKE_C_API cake_status cake_ivf_list_sizes(const cake_ivf_index* index, int64_t* list_sizes);
/* Bytes of device workspace cake_ivf_search needs; -1 for arguments out of range. */
CAKE_C_API int64_t cake_ivf_search_workspace_bytes(const cake_ivf_index* index, int64_t Q, int k, int nprobe);
/* Per query of queries [Q, D] (the index's type, 16-byte aligned): the k best vectors of its nprobe nearest
 * lists (1 <= nprobe <= min(nlist, 256); 1 <= k <= 256), best first: distances f32 [Q, k], indices i32 [Q, k]
 * (original database rows; -1 with +inf / -inf past the candidates). nprobe = nlist is the exact search.
 * workspace: cake_ivf_search_workspace_bytes bytes, 256-byte aligned. No host synchronization. The list scan
 * walks the lists by query tile where Q * nlist <= 2^24, else per query (docs/knn.md). */
CAKE_C_API cake_status cake_ivf_search(const cake_ivf_index* index, const void* queries, float* distances, int32_t* indices, void* workspace, int64_t Q,
                                       int k, int nprobe, void* stream);

/* Attention prefill (FlashAttention's layouts): o = softmax(scale * q k^T [+ causal mask]) v for each batch
 * entry and query head, lse = each row's log-sum-exp (natural log). q and o bf16 [B, S, H, D], k and v
 * bf16 [B, T, HK, D], all contiguous and 16-byte aligned; lse f32 [B, H, S] (4-byte aligned, not NULL).
 * D is 64, 128 or 256 (256: Hopper only); H a multiple of HK (H / HK <= 256: MHA, GQA, MQA). causal: 0 or 1; the mask is
 * top-left aligned (query i sees keys 0..i, PyTorch's is_causal). softmax_scale <= 0 means 1 / sqrt(D).
 * Any device from cc 8.0: the sm_90a schedule on Hopper (cc 9.0), the portable mma.sync fallback on the
 * others (docs/attention.md). */
CAKE_C_API cake_status cake_attention_prefill(const void* q, const void* k, const void* v, void* o, float* lse, int64_t B, int64_t S, int64_t T,
                                              int64_t H, int64_t HK, int64_t D, int causal, float softmax_scale, void* stream, int device);

/* Attention prefill over a packed batch of entries of different lengths (FlashAttention's varlen layout):
 * q and o bf16 [total_q, H, D], k and v bf16 [total_k, HK, D] (contiguous, 16-byte aligned), lse f32
 * [H, total_q]; cu_seqlens_q and cu_seqlens_k are int32 device arrays of B + 1 offsets (entry b's queries are
 * rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1, its keys likewise), max_seqlen_q the longest entry's
 * query count. causal: 0 or 1, bottom-right aligned (FlashAttention >= 2.1: query i sees keys
 * j <= i + len_k - len_q). Caller's contract (not checked: the offsets are on the device): non-decreasing
 * offsets within total_q / total_k, max_seqlen_q >= every len_q, len_k > 0 where len_q > 0, and (causal)
 * len_k >= len_q. Rows of o and lse that no entry covers are not written. Hopper (cc 9.0) only. */
CAKE_C_API cake_status cake_attention_prefill_varlen(const void* q, const void* k, const void* v, void* o, float* lse, const int32_t* cu_seqlens_q,
                                                     const int32_t* cu_seqlens_k, int64_t B, int64_t total_q, int64_t total_k, int64_t max_seqlen_q,
                                                     int64_t H, int64_t HK, int64_t D, int causal, float softmax_scale, void* stream, int device);

/* Bytes of device workspace cake_attention_decode_paged needs for this shape (the split slices' partial
 * results); -1 for arguments out of range. */
CAKE_C_API int64_t cake_attention_decode_workspace_bytes(int64_t B, int64_t H, int64_t HK, int64_t D, int64_t num_pages, int64_t page_size,
                                                         int64_t max_pages, int64_t max_seq_len);

/* Paged decode attention (vLLM / FlashInfer layout): one new query token per request. q and o bf16
 * [B, H, D]; k_cache and v_cache bf16 [num_pages, page_size, HK, D] (contiguous, 16-byte aligned); key j
 * of request b is row j % page_size of page page_table[b, j / page_size] (page_table int32 [B, max_pages],
 * seq_lens int32 [B], device arrays); lse f32 [B, H] (natural log). D 64 or 128; H a multiple of HK with
 * H / HK <= 64; page_size 16, 32 or 64. max_seq_len > 0: the longest seq_lens[b] (checked against
 * max_pages * page_size; it sizes the split), 0: max_pages * page_size. softmax_scale <= 0 means
 * 1 / sqrt(D). workspace: cake_attention_decode_workspace_bytes(...) bytes, 256-byte aligned. Caller's
 * contract (device data, not checked): seq_lens[b] <= max_pages * page_size and the first
 * ceil(seq_lens[b] / page_size) entries of row b of page_table are pages in [0, num_pages); a request with
 * seq_lens[b] == 0 gets o = 0 and lse = -inf. Two kernels on `stream`, no host synchronization. Hopper
 * (cc 9.0) only. */
CAKE_C_API cake_status cake_attention_decode_paged(const void* q, const void* k_cache, const void* v_cache, const int32_t* page_table,
                                                   const int32_t* seq_lens, void* o, float* lse, void* workspace, int64_t B, int64_t H, int64_t HK,
                                                   int64_t D, int64_t num_pages, int64_t page_size, int64_t max_pages, int64_t max_seq_len,
                                                   float softmax_scale, void* stream, int device);

/* The same over fp8 caches: k_cache and v_cache e4m3 [num_pages, page_size, HK, D] (one byte per element, contiguous,
 * 16-byte aligned) with per-tensor scales (key = k_scale * stored, value = v_scale * stored; both finite and positive);
 * q, o and lse as above. The workspace is cake_attention_decode_workspace_bytes(...) bytes, as for bf16 caches. */
CAKE_C_API cake_status cake_attention_decode_paged_fp8(const void* q, const void* k_cache, const void* v_cache, const int32_t* page_table,
                                                       const int32_t* seq_lens, void* o, float* lse, void* workspace, int64_t B, int64_t H,
                                                       int64_t HK, int64_t D, int64_t num_pages, int64_t page_size, int64_t max_pages,
                                                       int64_t max_seq_len, float softmax_scale, float k_scale, float v_scale, void* stream,
                                                       int device);

#ifdef __cplusplus
}
#endif

#endif /* CAKE_C_CAKE_H */
