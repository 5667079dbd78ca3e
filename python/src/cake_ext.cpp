// cake._cake: the extension module under the Python package (python/cake). It takes device addresses,
// sizes and a stream as integers, so that the Python layer can hand over a torch tensor's data_ptr()
// without a DLPack exchange (which would order the array's stream against the legacy default stream and
// break CUDA graph capture), and `describe` reads any other array through DLPack (nb::ndarray) or the
// CUDA array interface (done in Python).
//
// Errors: jit::argument_error -> ValueError (the message names the argument), jit::unsupported_error ->
// cake.UnsupportedDeviceError, a missing driver / device -> cake.NoDeviceError, any other jit::error ->
// cake.CakeError. Calls release the GIL (the first call of a shape class JIT-compiles for seconds).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "cake/gemm.hpp"
#include "cake/version.hpp"
#include "kernels/attention/attention.hpp"
#include "kernels/kmeans/init.hpp"
#include "kernels/kmeans/kmeans.hpp"
#include "kernels/knn/ivf.hpp"
#include "kernels/knn/knn.hpp"
#include "kernels/norm/norm.hpp"

namespace nb = nanobind;

namespace {

struct no_device : cake::jit::error {
  using cake::jit::error::error;
};

const void* ptr(std::uintptr_t p) { return reinterpret_cast<const void*>(p); }
void* mut(std::uintptr_t p) { return reinterpret_cast<void*>(p); }
CUstream as_stream(std::uintptr_t s) { return reinterpret_cast<CUstream>(s); }

// Runs an entry point with the GIL released; a jit::error while no driver/device is usable becomes no_device.
template <class F>
void call(int device, F&& f) {
  nb::gil_scoped_release unlocked;
  try {
    f();
  } catch (const cake::jit::argument_error&) {
    throw;
  } catch (const cake::jit::unsupported_error&) {
    throw;
  } catch (const cake::jit::error& e) {
    if (!cake::jit::driver::available()) throw no_device(std::string(e.what()));
    const int n = cake::jit::driver::get().device_count();
    if (device < 0 || device >= n)
      throw no_device("device " + std::to_string(device) + " is not a CUDA device ordinal of this machine (" + std::to_string(n) + " device(s))");
    throw;
  }
}

// (address, shape, strides in elements, dtype name, device type name, device id) of a DLPack array.
std::tuple<std::uintptr_t, std::vector<std::int64_t>, std::vector<std::int64_t>, std::string, std::string, int> describe(nb::ndarray<nb::ro> a) {
  std::vector<std::int64_t> shape, strides;
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape.push_back(static_cast<std::int64_t>(a.shape(i)));
    strides.push_back(static_cast<std::int64_t>(a.stride(i)));
  }
  const nb::dlpack::dtype t = a.dtype();
  std::string dt;
  const int bits = t.bits;
  switch (static_cast<nb::dlpack::dtype_code>(t.code)) {
    case nb::dlpack::dtype_code::Bfloat: dt = "bfloat" + std::to_string(bits); break;
    case nb::dlpack::dtype_code::Float: dt = "float" + std::to_string(bits); break;
    case nb::dlpack::dtype_code::Int: dt = "int" + std::to_string(bits); break;
    case nb::dlpack::dtype_code::UInt: dt = "uint" + std::to_string(bits); break;
    default: dt = "code" + std::to_string(t.code) + "_" + std::to_string(bits);
  }
  if (t.lanes != 1) dt += "x" + std::to_string(t.lanes);
  std::string dev;
  switch (a.device_type()) {
    case nb::device::cuda::value: dev = "cuda"; break;
    case nb::device::cpu::value: dev = "cpu"; break;
    case nb::device::cuda_managed::value: dev = "cuda_managed"; break;
    case nb::device::cuda_host::value: dev = "cuda_host"; break;
    default: dev = "device_type_" + std::to_string(a.device_type());
  }
  return {reinterpret_cast<std::uintptr_t>(a.data()), shape, strides, dt, dev, a.device_id()};
}

}  // namespace

NB_MODULE(_cake, m) {
  m.doc() = "Cake's kernels on device addresses (use the cake package, not this module)";
  m.attr("version") = CAKE_VERSION_STRING;
  auto cake_error = nb::exception<cake::jit::error>(m, "CakeError", PyExc_RuntimeError);
  nb::exception<cake::jit::unsupported_error>(m, "UnsupportedDeviceError", cake_error.ptr());
  nb::exception<no_device>(m, "NoDeviceError", cake_error.ptr());
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const cake::jit::argument_error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def(
      "gemm_bf16",
      [](std::uintptr_t a, std::uintptr_t b, std::uintptr_t d, long long M, long long N, long long K, long long lda, long long ldb, long long ldd,
         std::uintptr_t bias, std::uintptr_t row_scale, std::uintptr_t col_scale, std::uintptr_t residual, long long ldr, int activation,
         std::uintptr_t stream, int device) {
        if (activation < 0 || activation > 4) throw cake::jit::argument_error("activation code " + std::to_string(activation) + " is not 0..4");
        cake::gemm_epilogue_args e;
        e.bias = ptr(bias);
        e.row_scale = static_cast<const float*>(ptr(row_scale));
        e.col_scale = static_cast<const float*>(ptr(col_scale));
        e.residual = ptr(residual);
        e.ldr = ldr;
        e.activation = static_cast<cake::kernels::gemm_activation>(activation);
        call(device, [&] { cake::gemm(ptr(a), ptr(b), mut(d), M, N, K, lda, ldb, ldd, e, as_stream(stream), device); });
      },
      nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("M"), nb::arg("N"), nb::arg("K"), nb::arg("lda"), nb::arg("ldb"), nb::arg("ldd"),
      nb::arg("bias"), nb::arg("row_scale"), nb::arg("col_scale"), nb::arg("residual"), nb::arg("ldr"), nb::arg("activation"), nb::arg("stream"),
      nb::arg("device"));
  m.def(
      "gemm_fp8",
      [](std::uintptr_t a, std::uintptr_t b, std::uintptr_t d, long long M, long long N, long long K, long long lda, long long ldb, long long ldd,
         float scale, std::uintptr_t stream, int device) {
        call(device, [&] { cake::gemm_fp8(ptr(a), ptr(b), mut(d), M, N, K, lda, ldb, ldd, scale, as_stream(stream), device); });
      },
      nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("M"), nb::arg("N"), nb::arg("K"), nb::arg("lda"), nb::arg("ldb"), nb::arg("ldd"),
      nb::arg("scale"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "softmax_bf16",
      [](std::uintptr_t x, std::uintptr_t y, long long rows, long long cols, long long ld, std::uintptr_t stream, int device) {
        call(device, [&] { cake::softmax(ptr(x), mut(y), rows, cols, ld, as_stream(stream), device); });
      },
      nb::arg("x"), nb::arg("y"), nb::arg("rows"), nb::arg("cols"), nb::arg("ld"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "rmsnorm_bf16",
      [](std::uintptr_t x, std::uintptr_t w, std::uintptr_t y, long long rows, long long cols, long long ld, float eps, std::uintptr_t stream, int device) {
        call(device, [&] { cake::rmsnorm(ptr(x), ptr(w), mut(y), rows, cols, ld, eps, as_stream(stream), device); });
      },
      nb::arg("x"), nb::arg("w"), nb::arg("y"), nb::arg("rows"), nb::arg("cols"), nb::arg("ld"), nb::arg("eps"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "kmeans_assign",
      [](std::uintptr_t x, std::uintptr_t c, std::uintptr_t c_norm, std::uintptr_t idx, long long B, long long N, long long K, long long D, bool f16,
         int metric, std::uintptr_t stream, int device) {
        if (metric < 0 || metric > 2) throw cake::jit::argument_error("metric code " + std::to_string(metric) + " is not 0..2");
        call(device, [&] {
          cake::kmeans::assign(ptr(x), ptr(c), static_cast<const float*>(ptr(c_norm)), static_cast<std::int32_t*>(mut(idx)), B, N, K, D,
                               f16 ? cake::kmeans::input_type::f16 : cake::kmeans::input_type::bf16, static_cast<cake::kmeans::metric>(metric),
                               as_stream(stream), device);
        });
      },
      nb::arg("x"), nb::arg("c"), nb::arg("c_norm"), nb::arg("idx"), nb::arg("B"), nb::arg("N"), nb::arg("K"), nb::arg("D"), nb::arg("f16"),
      nb::arg("metric"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "kmeans_update",
      [](std::uintptr_t x, std::uintptr_t idx, std::uintptr_t c, std::uintptr_t c_norm, std::uintptr_t shift, std::uintptr_t workspace, long long B, long long N,
         long long K, long long D, bool f16, int metric, std::uintptr_t stream, int device, bool deterministic, float max_abs, bool sorted) {
        if (metric < 0 || metric > 2) throw cake::jit::argument_error("metric code " + std::to_string(metric) + " is not 0..2");
        call(device, [&] {
          cake::kmeans::update_options o{deterministic, max_abs};
          if (sorted) o.method = cake::kmeans::update_method::sorted;
          cake::kmeans::update(ptr(x), static_cast<const std::int32_t*>(ptr(idx)), mut(c), static_cast<float*>(mut(c_norm)), static_cast<float*>(mut(shift)),
                               mut(workspace), B, N, K, D, f16 ? cake::kmeans::input_type::f16 : cake::kmeans::input_type::bf16,
                               static_cast<cake::kmeans::metric>(metric), o, as_stream(stream), device);
        });
      },
      nb::arg("x"), nb::arg("idx"), nb::arg("c"), nb::arg("c_norm"), nb::arg("shift"), nb::arg("workspace"), nb::arg("B"), nb::arg("N"), nb::arg("K"),
      nb::arg("D"), nb::arg("f16"), nb::arg("metric"), nb::arg("stream"), nb::arg("device"), nb::arg("deterministic") = false, nb::arg("max_abs") = 0.0f,
      nb::arg("sorted") = false);
  m.def(
      "kmeans_step",
      [](std::uintptr_t x, std::uintptr_t c, std::uintptr_t idx, std::uintptr_t c_norm, std::uintptr_t shift, std::uintptr_t workspace, long long B, long long N,
         long long K, long long D, bool f16, int metric, std::uintptr_t stream, int device) {
        if (metric < 0 || metric > 2) throw cake::jit::argument_error("metric code " + std::to_string(metric) + " is not 0..2");
        call(device, [&] {
          cake::kmeans::step(ptr(x), mut(c), static_cast<std::int32_t*>(mut(idx)), static_cast<float*>(mut(c_norm)), static_cast<float*>(mut(shift)), mut(workspace),
                             B, N, K, D, f16 ? cake::kmeans::input_type::f16 : cake::kmeans::input_type::bf16, static_cast<cake::kmeans::metric>(metric),
                             as_stream(stream), device);
        });
      },
      nb::arg("x"), nb::arg("c"), nb::arg("idx"), nb::arg("c_norm"), nb::arg("shift"), nb::arg("workspace"), nb::arg("B"), nb::arg("N"), nb::arg("K"),
      nb::arg("D"), nb::arg("f16"), nb::arg("metric"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "kmeans_fit",
      [](std::uintptr_t x, std::uintptr_t c, std::uintptr_t idx, std::uintptr_t c_norm, std::uintptr_t shift, std::uintptr_t workspace, long long B, long long N,
         long long K, long long D, bool f16, int metric, int iterations, std::uintptr_t stream, int device, bool deterministic, float max_abs) {
        if (metric < 0 || metric > 2) throw cake::jit::argument_error("metric code " + std::to_string(metric) + " is not 0..2");
        call(device, [&] {
          cake::kmeans::fit(ptr(x), mut(c), static_cast<std::int32_t*>(mut(idx)), static_cast<float*>(mut(c_norm)), static_cast<float*>(mut(shift)), mut(workspace),
                            B, N, K, D, f16 ? cake::kmeans::input_type::f16 : cake::kmeans::input_type::bf16, static_cast<cake::kmeans::metric>(metric),
                            iterations, cake::kmeans::update_options{deterministic, max_abs}, as_stream(stream), device);
        });
      },
      nb::arg("x"), nb::arg("c"), nb::arg("idx"), nb::arg("c_norm"), nb::arg("shift"), nb::arg("workspace"), nb::arg("B"), nb::arg("N"), nb::arg("K"),
      nb::arg("D"), nb::arg("f16"), nb::arg("metric"), nb::arg("iterations"), nb::arg("stream"), nb::arg("device"), nb::arg("deterministic") = false,
      nb::arg("max_abs") = 0.0f);
  m.def(
      "kmeans_init_random",
      [](std::uintptr_t x, std::uintptr_t c, long long B, long long N, long long K, long long D, bool f16, std::uint64_t seed, std::uintptr_t stream,
         int device) {
        call(device, [&] {
          cake::kmeans::init_random(ptr(x), mut(c), B, N, K, D, f16 ? cake::kmeans::input_type::f16 : cake::kmeans::input_type::bf16, seed, as_stream(stream),
                                    device);
        });
      },
      nb::arg("x"), nb::arg("c"), nb::arg("B"), nb::arg("N"), nb::arg("K"), nb::arg("D"), nb::arg("f16"), nb::arg("seed"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "kmeans_fit_until",
      [](std::uintptr_t x, std::uintptr_t c, std::uintptr_t idx, std::uintptr_t c_norm, std::uintptr_t shift, std::uintptr_t workspace, long long B, long long N,
         long long K, long long D, bool f16, int metric, int max_iterations, float tolerance, int check_every, std::uintptr_t stream, int device,
         bool deterministic, float max_abs) {
        if (metric < 0 || metric > 2) throw cake::jit::argument_error("metric code " + std::to_string(metric) + " is not 0..2");
        int run = 0;
        call(device, [&] {
          run = cake::kmeans::fit_until(ptr(x), mut(c), static_cast<std::int32_t*>(mut(idx)), static_cast<float*>(mut(c_norm)), static_cast<float*>(mut(shift)),
                                        mut(workspace), B, N, K, D, f16 ? cake::kmeans::input_type::f16 : cake::kmeans::input_type::bf16,
                                        static_cast<cake::kmeans::metric>(metric), max_iterations, tolerance, check_every,
                                        cake::kmeans::update_options{deterministic, max_abs}, as_stream(stream), device);
        });
        return run;
      },
      nb::arg("x"), nb::arg("c"), nb::arg("idx"), nb::arg("c_norm"), nb::arg("shift"), nb::arg("workspace"), nb::arg("B"), nb::arg("N"), nb::arg("K"),
      nb::arg("D"), nb::arg("f16"), nb::arg("metric"), nb::arg("max_iterations"), nb::arg("tolerance"), nb::arg("check_every"), nb::arg("stream"),
      nb::arg("device"), nb::arg("deterministic") = false, nb::arg("max_abs") = 0.0f);
  m.def("kmeans_update_workspace_bytes", [](long long B, long long K, long long D) { return cake::kmeans::update_workspace_bytes(B, K, D); });
  m.def("kmeans_sorted_update_workspace_bytes",
        [](long long B, long long N, long long K, long long D) { return cake::kmeans::sorted_update_workspace_bytes(B, N, K, D); });
  m.def(
      "knn_search",
      [](std::uintptr_t queries, std::uintptr_t database, std::uintptr_t distances, std::uintptr_t indices, std::uintptr_t workspace, long long Q, long long N,
         long long D, int k, bool f16, int metric, std::uintptr_t stream, int device) {
        if (metric < 0 || metric > 1) throw cake::jit::argument_error("metric code " + std::to_string(metric) + " is not 0..1");
        call(device, [&] {
          cake::knn::search(ptr(queries), ptr(database), static_cast<float*>(mut(distances)), static_cast<std::int32_t*>(mut(indices)), mut(workspace), Q, N, D,
                            k, f16 ? cake::knn::input_type::f16 : cake::knn::input_type::bf16, static_cast<cake::knn::metric>(metric), as_stream(stream),
                            device);
        });
      },
      nb::arg("queries"), nb::arg("database"), nb::arg("distances"), nb::arg("indices"), nb::arg("workspace"), nb::arg("Q"), nb::arg("N"), nb::arg("D"),
      nb::arg("k"), nb::arg("f16"), nb::arg("metric"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "knn_search_workspace_bytes",
      [](long long Q, long long N, long long D, int k, int metric) {
        if (metric < 0 || metric > 1) throw cake::jit::argument_error("metric code " + std::to_string(metric) + " is not 0..1");
        return cake::knn::search_workspace_bytes(Q, N, D, k, static_cast<cake::knn::metric>(metric));
      },
      nb::arg("Q"), nb::arg("N"), nb::arg("D"), nb::arg("k"), nb::arg("metric"));
  // IVF-Flat: the index is an owning C++ object (device buffers freed with it).
  nb::class_<cake::knn::ivf_index>(m, "IvfIndex")
      .def_ro("N", &cake::knn::ivf_index::N)
      .def_ro("D", &cake::knn::ivf_index::D)
      .def_ro("nlist", &cake::knn::ivf_index::nlist)
      .def_ro("device", &cake::knn::ivf_index::device)
      .def_prop_ro("f16", [](const cake::knn::ivf_index& x) { return x.type == cake::knn::input_type::f16; })
      .def_prop_ro("metric", [](const cake::knn::ivf_index& x) { return static_cast<int>(x.m); })
      .def_prop_ro("list_sizes",
                   [](const cake::knn::ivf_index& x) {
                     std::vector<long long> v(static_cast<std::size_t>(x.nlist));
                     for (long long l = 0; l < x.nlist; ++l) v[static_cast<std::size_t>(l)] = x.list_size(l);
                     return v;
                   })
      .def(
          "workspace_bytes",
          [](const cake::knn::ivf_index& x, long long Q, int k, int nprobe, int walk) {
            if (walk < 0 || walk > 2) throw cake::jit::argument_error("walk code " + std::to_string(walk) + " is not 0..2");
            return cake::knn::ivf_search_workspace_bytes(x, Q, k, nprobe, static_cast<cake::knn::ivf_scan_mode>(walk));
          },
          nb::arg("Q"), nb::arg("k"), nb::arg("nprobe"), nb::arg("walk") = 0)
      .def(
          "search",
          [](const cake::knn::ivf_index& x, std::uintptr_t queries, std::uintptr_t distances, std::uintptr_t indices, std::uintptr_t workspace, long long Q, int k,
             int nprobe, std::uintptr_t stream, int walk) {
            if (walk < 0 || walk > 2) throw cake::jit::argument_error("walk code " + std::to_string(walk) + " is not 0..2");
            call(x.device, [&] {
              cake::knn::ivf_search(x, ptr(queries), static_cast<float*>(mut(distances)), static_cast<std::int32_t*>(mut(indices)), mut(workspace), Q, k, nprobe,
                                    as_stream(stream), static_cast<cake::knn::ivf_scan_mode>(walk));
            });
          },
          nb::arg("queries"), nb::arg("distances"), nb::arg("indices"), nb::arg("workspace"), nb::arg("Q"), nb::arg("k"), nb::arg("nprobe"), nb::arg("stream"),
          nb::arg("walk") = 0);
  m.def(
      "ivf_build",
      [](std::uintptr_t database, long long N, long long D, long long nlist, bool f16, int metric, std::uint64_t seed, int iterations, std::uintptr_t stream,
         int device) {
        if (metric < 0 || metric > 1) throw cake::jit::argument_error("metric code " + std::to_string(metric) + " is not 0..1");
        auto* x = new cake::knn::ivf_index();
        try {
          call(device, [&] {
            *x = cake::knn::ivf_build(ptr(database), N, D, nlist, f16 ? cake::knn::input_type::f16 : cake::knn::input_type::bf16,
                                      static_cast<cake::knn::metric>(metric), seed, iterations, as_stream(stream), device);
          });
        } catch (...) {
          delete x;
          throw;
        }
        return x;
      },
      nb::rv_policy::take_ownership, nb::arg("database"), nb::arg("N"), nb::arg("D"), nb::arg("nlist"), nb::arg("f16"), nb::arg("metric"), nb::arg("seed"),
      nb::arg("iterations"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "attention_prefill",
      [](std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::uintptr_t o, std::uintptr_t lse, long long B, long long S, long long T, long long H,
         long long HK, long long D, bool causal, float softmax_scale, std::uintptr_t stream, int device) {
        cake::attention::prefill_shape s;
        s.B = B;
        s.S = S;
        s.T = T;
        s.H = H;
        s.HK = HK;
        s.D = D;
        s.causal = causal;
        s.softmax_scale = softmax_scale;
        call(device, [&] { cake::attention::prefill(ptr(q), ptr(k), ptr(v), mut(o), static_cast<float*>(mut(lse)), s, as_stream(stream), device); });
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("o"), nb::arg("lse"), nb::arg("B"), nb::arg("S"), nb::arg("T"), nb::arg("H"), nb::arg("HK"),
      nb::arg("D"), nb::arg("causal"), nb::arg("softmax_scale"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "attention_prefill_varlen",
      [](std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::uintptr_t o, std::uintptr_t lse, std::uintptr_t cu_q, std::uintptr_t cu_k, long long B,
         long long total_q, long long total_k, long long max_seqlen_q, long long H, long long HK, long long D, bool causal, float softmax_scale,
         std::uintptr_t stream, int device) {
        cake::attention::varlen_shape s;
        s.B = B;
        s.total_q = total_q;
        s.total_k = total_k;
        s.max_seqlen_q = max_seqlen_q;
        s.H = H;
        s.HK = HK;
        s.D = D;
        s.causal = causal;
        s.softmax_scale = softmax_scale;
        call(device, [&] {
          cake::attention::prefill_varlen(ptr(q), ptr(k), ptr(v), mut(o), static_cast<float*>(mut(lse)), static_cast<const int*>(ptr(cu_q)),
                                          static_cast<const int*>(ptr(cu_k)), s, as_stream(stream), device);
        });
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("o"), nb::arg("lse"), nb::arg("cu_q"), nb::arg("cu_k"), nb::arg("B"), nb::arg("total_q"),
      nb::arg("total_k"), nb::arg("max_seqlen_q"), nb::arg("H"), nb::arg("HK"), nb::arg("D"), nb::arg("causal"), nb::arg("softmax_scale"), nb::arg("stream"),
      nb::arg("device"));
  auto decode_shape = [](long long B, long long H, long long HK, long long D, long long num_pages, long long page_size, long long max_pages,
                         long long max_seq_len, float softmax_scale) {
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
  };
  m.def(
      "attention_decode_workspace_bytes",
      [decode_shape](long long B, long long H, long long HK, long long D, long long num_pages, long long page_size, long long max_pages,
                     long long max_seq_len) {
        return cake::attention::decode_workspace_bytes(decode_shape(B, H, HK, D, num_pages, page_size, max_pages, max_seq_len, 0.0f));
      },
      nb::arg("B"), nb::arg("H"), nb::arg("HK"), nb::arg("D"), nb::arg("num_pages"), nb::arg("page_size"), nb::arg("max_pages"), nb::arg("max_seq_len"));
  m.def(
      "attention_decode_paged",
      [decode_shape](std::uintptr_t q, std::uintptr_t k_cache, std::uintptr_t v_cache, std::uintptr_t page_table, std::uintptr_t seq_lens, std::uintptr_t o,
                     std::uintptr_t lse, std::uintptr_t workspace, long long B, long long H, long long HK, long long D, long long num_pages,
                     long long page_size, long long max_pages, long long max_seq_len, float softmax_scale, std::uintptr_t stream, int device) {
        const cake::attention::decode_shape s = decode_shape(B, H, HK, D, num_pages, page_size, max_pages, max_seq_len, softmax_scale);
        call(device, [&] {
          cake::attention::decode_paged(ptr(q), ptr(k_cache), ptr(v_cache), static_cast<const int*>(ptr(page_table)), static_cast<const int*>(ptr(seq_lens)),
                                        mut(o), static_cast<float*>(mut(lse)), mut(workspace), s, as_stream(stream), device);
        });
      },
      nb::arg("q"), nb::arg("k_cache"), nb::arg("v_cache"), nb::arg("page_table"), nb::arg("seq_lens"), nb::arg("o"), nb::arg("lse"), nb::arg("workspace"),
      nb::arg("B"), nb::arg("H"), nb::arg("HK"), nb::arg("D"), nb::arg("num_pages"), nb::arg("page_size"), nb::arg("max_pages"), nb::arg("max_seq_len"),
      nb::arg("softmax_scale"), nb::arg("stream"), nb::arg("device"));
  m.def(
      "attention_decode_paged_fp8",
      [decode_shape](std::uintptr_t q, std::uintptr_t k_cache, std::uintptr_t v_cache, std::uintptr_t page_table, std::uintptr_t seq_lens, std::uintptr_t o,
                     std::uintptr_t lse, std::uintptr_t workspace, long long B, long long H, long long HK, long long D, long long num_pages,
                     long long page_size, long long max_pages, long long max_seq_len, float softmax_scale, float k_scale, float v_scale,
                     std::uintptr_t stream, int device) {
        cake::attention::decode_shape s = decode_shape(B, H, HK, D, num_pages, page_size, max_pages, max_seq_len, softmax_scale);
        s.kv_fp8 = true, s.k_scale = k_scale, s.v_scale = v_scale;
        call(device, [&] {
          cake::attention::decode_paged(ptr(q), ptr(k_cache), ptr(v_cache), static_cast<const int*>(ptr(page_table)), static_cast<const int*>(ptr(seq_lens)),
                                        mut(o), static_cast<float*>(mut(lse)), mut(workspace), s, as_stream(stream), device);
        });
      },
      nb::arg("q"), nb::arg("k_cache"), nb::arg("v_cache"), nb::arg("page_table"), nb::arg("seq_lens"), nb::arg("o"), nb::arg("lse"), nb::arg("workspace"),
      nb::arg("B"), nb::arg("H"), nb::arg("HK"), nb::arg("D"), nb::arg("num_pages"), nb::arg("page_size"), nb::arg("max_pages"), nb::arg("max_seq_len"),
      nb::arg("softmax_scale"), nb::arg("k_scale"), nb::arg("v_scale"), nb::arg("stream"), nb::arg("device"));
  m.def("describe", &describe, nb::arg("array"),
        "(address, shape, strides in elements, dtype, device type, device id) of an array passed through DLPack");
  // For the package's tests on machines without a GPU: a DLPack array that claims to live on a CUDA device
  // (or on the host, cpu=True) at `address` (nothing is allocated or read), so that argument checks can
  // be exercised.
  m.def(
      "_testing_array",
      [](std::uintptr_t address, std::vector<size_t> shape, std::vector<int64_t> strides, const std::string& dtype, int device_id, bool cpu) {
        nb::dlpack::dtype t{};
        t.lanes = 1;
        if (dtype == "bfloat16") t = {static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
        else if (dtype == "float32") t = {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 32, 1};
        else if (dtype == "float16") t = {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
        else if (dtype == "int32") t = {static_cast<uint8_t>(nb::dlpack::dtype_code::Int), 32, 1};
        else throw cake::jit::argument_error("_testing_array: dtype " + dtype + " is not bfloat16, float32, float16 or int32");
        if (strides.size() != shape.size()) throw cake::jit::argument_error("_testing_array: one stride per dimension");
        if (address == 0) throw cake::jit::argument_error("_testing_array: address must not be 0");
        nb::capsule owner(reinterpret_cast<void*>(address), [](void*) noexcept {});  // owns nothing: the memory is not real
        return nb::ndarray<nb::array_api>(reinterpret_cast<void*>(address), shape.size(), shape.data(), owner, strides.data(), t,
                                          cpu ? nb::device::cpu::value : nb::device::cuda::value, cpu ? 0 : device_id);
      },
      nb::arg("address"), nb::arg("shape"), nb::arg("strides"), nb::arg("dtype"), nb::arg("device_id") = 0, nb::arg("cpu") = false);
  m.def("driver_available", [] { return cake::jit::driver::available(); });
  m.def("driver_unavailable_reason", [] { return cake::jit::driver::unavailable_reason(); });
}
