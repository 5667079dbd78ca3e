"""The cake package without a GPU: it imports, and every entry point refuses a bad argument with an
exception naming it before anything reaches the driver (arrays are DLPack arrays that only claim to live
at an address: cake._cake._testing_array). Without a driver, a well-formed call is NoDeviceError. With
PyTorch, the fake (meta) implementations of torch.ops.cake.* give the right shapes.

Run: python -m unittest discover -s python/tests -v   (tests/python/run.sh builds the package first)
"""
import unittest

import cake

T = cake._cake._testing_array


def bf16(shape, address=0x100000, strides=None, **kw):
    if strides is None:
        strides, acc = [], 1
        for s in reversed(shape):
            strides.insert(0, acc)
            acc *= s
    return T(address, list(shape), list(strides), "bfloat16", **kw)


def f32(shape, address=0x500000):
    return T(address, list(shape), [1] * len(shape) if len(shape) == 1 else [shape[1], 1], "float32")


class Imports(unittest.TestCase):
    def test_version_and_exceptions(self):
        self.assertEqual(cake.__version__, "0.1.0")
        self.assertTrue(issubclass(cake.NoDeviceError, cake.CakeError))
        self.assertTrue(issubclass(cake.UnsupportedDeviceError, cake.CakeError))
        self.assertTrue(issubclass(cake.CakeError, RuntimeError))

    def test_testing_array_reads_back_through_dlpack(self):
        v = cake._view(bf16((3, 5), strides=(8, 1)), "x")
        self.assertEqual((v.ptr, v.shape, v.strides, v.dtype, v.device), (0x100000, (3, 5), (8, 1), "bfloat16", "cuda"))


class GemmArguments(unittest.TestCase):
    def check(self, exc, needle, *args, **kw):
        with self.assertRaises(exc) as cm:
            cake.gemm(*args, **kw)
        self.assertIn(needle, str(cm.exception))

    def test_not_an_array(self):
        self.check(TypeError, "a must be a CUDA array", [[1.0]], bf16((4, 8)))
        self.check(TypeError, "b must be a CUDA array", bf16((4, 8)), "weights")

    def test_host_array(self):
        self.check(ValueError, "a must be on a CUDA device; it is on cpu", bf16((64, 64), cpu=True), bf16((64, 64)), bf16((64, 64)))

    def test_dtypes(self):
        self.check(ValueError, "a must be bfloat16; it is float32", f32((64, 64)), bf16((64, 64)), bf16((64, 64)))
        self.check(ValueError, "out must be bfloat16; it is float32", bf16((64, 64)), bf16((64, 64)), f32((64, 64)))
        self.check(ValueError, "bias must be bfloat16; it is float32", bf16((64, 64)), bf16((64, 64)), bf16((64, 64)), bias=f32((64,)))
        self.check(ValueError, "row_scale must be float32; it is bfloat16", bf16((64, 64)), bf16((64, 64)), bf16((64, 64)), row_scale=bf16((64,)))

    def test_shapes(self):
        self.check(ValueError, "a must be 2-D [M, K]", bf16((64,)), bf16((64, 64)), bf16((64, 64)))
        self.check(ValueError, "their K differ", bf16((64, 64)), bf16((32, 48)), bf16((64, 32)))
        self.check(ValueError, "out must have shape [64, 32]; it has [64, 64]", bf16((64, 64)), bf16((32, 64)), bf16((64, 64)))
        self.check(ValueError, "bias must have shape [32]", bf16((64, 64)), bf16((32, 64)), bf16((64, 32)), bias=bf16((64,)))
        self.check(ValueError, "residual must have shape [64, 32]", bf16((64, 64)), bf16((32, 64)), bf16((64, 32)), residual=bf16((32, 64)))

    def test_strides_and_alignment(self):
        self.check(ValueError, "a's last dimension must be contiguous", bf16((64, 64), strides=(1, 64)), bf16((64, 64)), bf16((64, 64)))
        # checked by cake::gemm itself, before any driver call: TMA needs 16-byte row pitches and addresses
        self.check(ValueError, "lda * element size = 120 bytes is not a multiple of 16", bf16((64, 60)), bf16((64, 60)), bf16((64, 64)))
        self.check(ValueError, "B must be a non-null, 16-byte aligned", bf16((64, 64)), bf16((64, 64), address=0x200002), bf16((64, 64)))
        self.check(ValueError, "bias must be a 16-byte aligned", bf16((64, 64)), bf16((64, 64)), bf16((64, 64)), bias=bf16((64,), address=0x600004))

    def test_options(self):
        self.check(ValueError, "activation must be one of", bf16((64, 64)), bf16((64, 64)), bf16((64, 64)), activation="gelu_fast")
        self.check(ValueError, "scale = 2.0 applies to fp8 inputs only", bf16((64, 64)), bf16((64, 64)), bf16((64, 64)), scale=2.0)
        self.check(ValueError, "out must be given for arrays that are not torch tensors", bf16((64, 64)), bf16((64, 64)))

    def test_devices_must_agree(self):
        self.check(ValueError, "out is on cuda:1, the other arrays on cuda:0", bf16((64, 64)), bf16((64, 64)), bf16((64, 64), device_id=1))


class RowKernelArguments(unittest.TestCase):
    def check(self, fn, exc, needle, *args, **kw):
        with self.assertRaises(exc) as cm:
            fn(*args, **kw)
        self.assertIn(needle, str(cm.exception))

    def test_softmax(self):
        self.check(cake.softmax, ValueError, "x must be bfloat16; it is float32", f32((4, 128)), bf16((4, 128)))
        self.check(cake.softmax, ValueError, "x's last dimension must be contiguous", bf16((4, 128), strides=(1, 4)), bf16((4, 128)))
        self.check(cake.softmax, ValueError, "out must have shape [4, 128]", bf16((4, 128)), bf16((4, 64)))
        self.check(cake.softmax, ValueError, "out must have x's strides [136, 1]", bf16((4, 128), strides=(136, 1)), bf16((4, 128)))
        self.check(cake.softmax, ValueError, "leading dimensions do not fold", bf16((2, 4, 128), strides=(1024, 128, 1)), bf16((2, 4, 128)))
        self.check(cake.softmax, ValueError, "cols = 20000 is wider than 16384", bf16((4, 20000)), bf16((4, 20000)))

    def test_rmsnorm(self):
        self.check(cake.rmsnorm, ValueError, "weight must have shape [128]", bf16((4, 128)), bf16((64,)), out=bf16((4, 128)))
        self.check(cake.rmsnorm, ValueError, "eps = -1.0 must be finite", bf16((4, 128)), bf16((128,)), -1.0, bf16((4, 128)))
        self.check(cake.rmsnorm, TypeError, "weight must be a CUDA array", bf16((4, 128)), None, out=bf16((4, 128)))
        self.check(cake.rmsnorm, ValueError, "x must be a non-null, 2-byte aligned", bf16((4, 128), address=0x100001), bf16((128,)),
                   out=bf16((4, 128), address=0x200001))


@unittest.skipIf(cake._cake.driver_available(), "a CUDA driver is present: well-formed calls would run (python/tests/test_gpu.py)")
class WithoutDriver(unittest.TestCase):
    def test_well_formed_calls_say_no_device(self):
        with self.assertRaises(cake.NoDeviceError) as cm:
            cake.softmax(bf16((4, 128)), bf16((4, 128), address=0x200000))
        self.assertIn("libcuda", str(cm.exception))
        with self.assertRaises(cake.NoDeviceError):
            cake.gemm(bf16((64, 64)), bf16((64, 64), address=0x200000), bf16((64, 64), address=0x300000), activation="gelu_tanh")


def arr(shape, dtype, address=0x600000):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.insert(0, acc)
        acc *= n
    return T(address, list(shape), strides, dtype)


class KmeansArguments(unittest.TestCase):
    def check(self, exc, needle, *args, **kw):
        with self.assertRaises(exc) as cm:
            cake.kmeans_assign(*args, **kw)
        self.assertIn(needle, str(cm.exception))

    def test_refusals_name_the_argument(self):
        x, c, n, o = arr((2, 100, 64), "bfloat16"), arr((2, 16, 64), "bfloat16", 0x700000), arr((2, 16), "float32", 0x800000), arr((2, 100), "int32", 0x900000)
        self.check(ValueError, "metric must be one of", x, c, n, o, metric="manhattan")
        self.check(ValueError, "x must be float16 or bfloat16; it is float32", arr((2, 100, 64), "float32"), c, n, o)
        self.check(ValueError, "centroids must be float16; it is bfloat16", arr((2, 100, 64), "float16"), c, n, o)
        self.check(ValueError, "centroids must be [B, K, D] with x's B and D", x, arr((3, 16, 64), "bfloat16", 0x700000), n, o)
        self.check(ValueError, "c_norm must have shape [2, 16]", x, c, arr((2, 15), "float32", 0x800000), o)
        self.check(ValueError, "out must be int32", x, c, n, arr((2, 100), "float32", 0x900000))
        self.check(ValueError, "x must be contiguous", T(0x600000, [2, 100, 64], [64, 128, 1], "bfloat16"), c, n, o)
        self.check(ValueError, "c_norm must be given for arrays that are not torch tensors", x, c, None, o)
        self.check(ValueError, "D = 100 must be a multiple of 8", arr((2, 100, 100), "bfloat16"), arr((2, 16, 100), "bfloat16", 0x700000), n, o)

    def test_update_and_fit_refusals(self):
        x, c, n, i = arr((2, 100, 64), "bfloat16"), arr((2, 16, 64), "bfloat16", 0x700000), arr((2, 16), "float32", 0x800000), arr((2, 100), "int32", 0x900000)
        sh, ws = arr((2, 16), "float32", 0xa00000), arr((cake.kmeans_update_workspace_bytes(2, 16, 64) // 4,), "float32", 0xb00000)
        self.assertEqual(cake.kmeans_update_workspace_bytes(2, 16, 64), 8 * 2 * 16 * 64 + 4 * 2 * 16)
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_update(x, arr((2, 100), "float32", 0x900000), c, n, sh, workspace=ws)
        self.assertIn("idx must be int32", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_update(x, i, c, n, sh, workspace=arr((10,), "float32", 0xb00000))
        self.assertIn("workspace holds 40 bytes; this update needs 16512", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_update(x, i, c, n, arr((2, 15), "float32", 0xa00000), workspace=ws)
        self.assertIn("shift must have shape [2, 16]", str(cm.exception))
        # the sorted update: its method name, and its larger workspace (the points' sorted copy)
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_update(x, i, c, n, sh, workspace=ws, method="sort")
        self.assertIn("method must be 'scatter' or 'sorted'", str(cm.exception))
        need = cake.kmeans_sorted_update_workspace_bytes(2, 100, 16, 64)
        self.assertEqual(need, 16512 + 2 * 128 + 800 + 2 * 2 * 100 * 64)
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_update(x, i, c, n, sh, workspace=ws, method="sorted")
        self.assertIn(f"workspace holds 16512 bytes; this update needs {need} (cake.kmeans_sorted_update_workspace_bytes)", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_fit(x, c, 0, idx=i, c_norm=n, shift=sh, workspace=ws)
        self.assertIn("iterations must be an int >= 1", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_fit(x, c, 3, idx=i, c_norm=n, shift=sh)
        self.assertIn("workspace must be given for arrays that are not torch tensors", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_step(x, c, None, idx=i, shift=sh, workspace=ws)
        self.assertIn("c_norm must be given for arrays that are not torch tensors", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_step(x, c, n, idx=arr((2, 99), "int32", 0x900000), shift=sh, workspace=ws)
        self.assertIn("idx must have shape [2, 100]", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_step(x, c, n, idx=i, shift=sh, workspace=ws, metric="l1")
        self.assertIn("metric must be one of", str(cm.exception))
        # the deterministic update: a bound on |x| that is not one, and bf16 points with no bound and no way
        # to take max |x| (not a torch tensor)
        for bad in (-1.0, float("inf"), float("nan")):
            with self.assertRaises(ValueError) as cm:
                cake.kmeans_update(x, i, c, n, sh, workspace=ws, deterministic=True, max_abs=bad)
            self.assertIn("max_abs must be a finite bound on |x|, at least 0", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_fit(x, c, 3, idx=i, c_norm=n, shift=sh, workspace=ws, deterministic=True)
        self.assertIn("the deterministic update of bfloat16 points needs max_abs", str(cm.exception))
        # the initialization and the loop to a tolerance
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_init_random(x, 101, centroids=c)
        self.assertIn("K = 101 distinct points of N = 100: K must be at most N", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_init_random(x, 16, seed=-1, centroids=c)
        self.assertIn("seed must be an int in [0, 2^64)", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_fit_until(x, c, 10, -0.5, idx=i, c_norm=n, shift=sh, workspace=ws)
        self.assertIn("tolerance must be a finite distance >= 0", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            cake.kmeans_fit_until(x, c, 10, 0.1, check_every=0, idx=i, c_norm=n, shift=sh, workspace=ws)
        self.assertIn("check_every must be an int >= 1", str(cm.exception))

    def test_no_driver(self):
        if cake._cake.driver_available():
            self.skipTest("a CUDA driver is present")
        with self.assertRaises(cake.NoDeviceError):
            cake.kmeans_assign(arr((2, 100, 64), "bfloat16"), arr((2, 16, 64), "bfloat16", 0x700000), arr((2, 16), "float32", 0x800000),
                               arr((2, 100), "int32", 0x900000))


class KnnArguments(unittest.TestCase):
    def check(self, exc, needle, *args, **kw):
        with self.assertRaises(exc) as cm:
            cake.knn_search(*args, **kw)
        self.assertIn(needle, str(cm.exception))

    def test_refusals_name_the_argument(self):
        q, y = arr((100, 64), "bfloat16"), arr((1000, 64), "bfloat16", 0x700000)
        d, i = arr((100, 10), "float32", 0x800000), arr((100, 10), "int32", 0x900000)
        need = cake.knn_search_workspace_bytes(100, 1000, 64, 10)
        ws = arr(((need + 3) // 4,), "float32", 0xa00000)
        self.check(ValueError, "metric must be one of", q, y, 10, distances=d, indices=i, workspace=ws, metric="cosine")
        self.check(ValueError, "queries must be float16 or bfloat16; it is float32", arr((100, 64), "float32"), y, 10, distances=d, indices=i, workspace=ws)
        self.check(ValueError, "database must be float16; it is bfloat16", arr((100, 64), "float16"), y, 10, distances=d, indices=i, workspace=ws)
        self.check(ValueError, "database must be [N, D] with the queries' D", q, arr((1000, 128), "bfloat16", 0x700000), 10, distances=d, indices=i,
                   workspace=ws)
        self.check(ValueError, "k = 0 must be in 1 .. 256", q, y, 0, distances=d, indices=i, workspace=ws)
        self.check(TypeError, "k must be an int", q, y, 2.5, distances=d, indices=i, workspace=ws)
        self.check(ValueError, "distances must have shape [100, 10]", q, y, 10, distances=arr((100, 9), "float32", 0x800000), indices=i, workspace=ws)
        self.check(ValueError, "indices must be int32", q, y, 10, distances=d, indices=arr((100, 10), "float32", 0x900000), workspace=ws)
        self.check(ValueError, f"workspace holds 40 bytes; this search needs {need}", q, y, 10, distances=d, indices=i,
                   workspace=arr((10,), "float32", 0xa00000))
        self.check(ValueError, "workspace must be given for arrays that are not torch tensors", q, y, 10, distances=d, indices=i)
        self.check(ValueError, "D = 100 must be a multiple of 8", arr((100, 100), "bfloat16"), arr((1000, 100), "bfloat16", 0x700000), 10, distances=d,
                   indices=i, workspace=arr((1 << 20,), "float32", 0xa00000))

    def test_no_driver(self):
        if cake._cake.driver_available():
            self.skipTest("a CUDA driver is present")
        need = cake.knn_search_workspace_bytes(100, 1000, 64, 10, "inner_product")
        with self.assertRaises(cake.NoDeviceError):
            cake.knn_search(arr((100, 64), "bfloat16"), arr((1000, 64), "bfloat16", 0x700000), 10, metric="inner_product",
                            distances=arr((100, 10), "float32", 0x800000), indices=arr((100, 10), "int32", 0x900000), workspace=arr(((need + 3) // 4,), "float32", 0xa00000))


class IvfArguments(unittest.TestCase):
    def check(self, exc, needle, *args, **kw):
        with self.assertRaises(exc) as cm:
            cake.IvfFlat(*args, **kw)
        self.assertIn(needle, str(cm.exception))

    def test_build_refusals_name_the_argument(self):
        y = arr((1000, 64), "bfloat16", 0x700000)
        self.check(ValueError, "metric must be one of", y, 10, metric="cosine")
        self.check(TypeError, "nlist must be an int", y, 2.5)
        self.check(ValueError, "seed = -1 must be non-negative", y, 10, seed=-1)
        self.check(ValueError, "database must be float16 or bfloat16; it is float32", arr((1000, 64), "float32"), 10)
        self.check(ValueError, "database must be [N, D]", arr((2, 1000, 64), "bfloat16"), 10)
        self.check(ValueError, "nlist = 2000 must be in 1 .. N = 1000", y, 2000)
        self.check(ValueError, "D = 100 must be a multiple of 8", arr((1000, 100), "bfloat16", 0x700000), 10)
        self.check(ValueError, "iterations = 0 must be at least 1", y, 10, iterations=0)

    def test_no_driver(self):
        if cake._cake.driver_available():
            self.skipTest("a CUDA driver is present")
        with self.assertRaises(cake.NoDeviceError):
            cake.IvfFlat(arr((1000, 64), "bfloat16", 0x700000), 10)


class AttentionArguments(unittest.TestCase):
    # q, o [B, S, H, D] = [2, 100, 8, 64]; k, v [B, T, HK, D] = [2, 300, 2, 64]; lse [B, H, S]
    def args(self, **over):
        a = {"q": arr((2, 100, 8, 64), "bfloat16", 0x100000), "k": arr((2, 300, 2, 64), "bfloat16", 0x200000),
             "v": arr((2, 300, 2, 64), "bfloat16", 0x300000), "out": arr((2, 100, 8, 64), "bfloat16", 0x400000),
             "lse": arr((2, 8, 100), "float32", 0x500000)}
        a.update(over)
        return a

    def check(self, exc, needle, causal=False, softmax_scale=None, **over):
        a = self.args(**over)
        with self.assertRaises(exc) as cm:
            cake.attention_prefill(a["q"], a["k"], a["v"], causal=causal, softmax_scale=softmax_scale, out=a["out"], lse=a["lse"])
        self.assertIn(needle, str(cm.exception))

    def test_options(self):
        self.check(ValueError, "causal must be a bool; it is 1", causal=1)
        self.check(ValueError, "softmax_scale = -1.0 must be finite and > 0", softmax_scale=-1.0)
        self.check(ValueError, "softmax_scale = nan must be finite and > 0", softmax_scale=float("nan"))
        self.check(ValueError, "softmax_scale must be None or a number", softmax_scale="auto")

    def test_arrays(self):
        self.check(TypeError, "q must be a CUDA array", q=[[1.0]])
        self.check(ValueError, "q must be on a CUDA device; it is on cpu", q=T(0x100000, [2, 100, 8, 64], [51200, 512, 64, 1], "bfloat16", cpu=True))
        self.check(ValueError, "q must be bfloat16; it is float16", q=arr((2, 100, 8, 64), "float16", 0x100000))
        self.check(ValueError, "k must be bfloat16; it is float32", k=arr((2, 300, 2, 64), "float32", 0x200000))
        self.check(ValueError, "k is on cuda:1, the other arrays on cuda:0", k=T(0x200000, [2, 300, 2, 64], [38400, 128, 64, 1], "bfloat16", device_id=1))

    def test_shapes(self):
        self.check(ValueError, "q must be 4-D [B, S, H, D]; it has shape [100, 8, 64]", q=arr((100, 8, 64), "bfloat16", 0x100000))
        self.check(ValueError, "k must be [B, T, HK, D] with q's B and D", k=arr((3, 300, 2, 64), "bfloat16", 0x200000))
        self.check(ValueError, "k must be [B, T, HK, D] with q's B and D", k=arr((2, 300, 2, 128), "bfloat16", 0x200000))
        self.check(ValueError, "v must have shape [2, 300, 2, 64]; it has [2, 299, 2, 64]", v=arr((2, 299, 2, 64), "bfloat16", 0x300000))
        self.check(ValueError, "H = 8 must be a multiple of k's heads HK = 3", k=arr((2, 300, 3, 64), "bfloat16", 0x200000),
                   v=arr((2, 300, 3, 64), "bfloat16", 0x300000))
        self.check(ValueError, "out must have shape [2, 100, 8, 64]", out=arr((2, 8, 100, 64), "bfloat16", 0x400000))
        self.check(ValueError, "lse must have shape [2, 8, 100]; it has [2, 100, 8]", lse=arr((2, 100, 8), "float32", 0x500000))
        self.check(ValueError, "lse must be float32; it is bfloat16", lse=arr((2, 8, 100), "bfloat16", 0x500000))

    def test_contiguous_only(self):
        # a [B, H, S, D] tensor transposed to [B, S, H, D]: last dimension contiguous, the rest not
        self.check(ValueError, "q must be contiguous (row-major); its strides are [51200, 64, 6400, 1]: attention_prefill supports contiguous [B, S, H, D] only",
                   q=T(0x100000, [2, 100, 8, 64], [51200, 64, 6400, 1], "bfloat16"))
        self.check(ValueError, "v's last dimension must be contiguous", v=T(0x300000, [2, 300, 2, 64], [38400, 128, 1, 2], "bfloat16"))
        self.check(ValueError, "out must be contiguous", out=T(0x400000, [2, 100, 8, 64], [51200, 512, 128, 1], "bfloat16"))

    def test_outputs_needed_for_non_torch_arrays(self):
        self.check(ValueError, "out must be given for arrays that are not torch tensors", out=None)
        self.check(ValueError, "lse must be given for arrays that are not torch tensors", lse=None)

    def test_cpp_checks(self):
        # cake::attention::prefill's own checks, before any driver call
        self.check(ValueError, "D = 96 is not supported: 64, 128 or 256", q=arr((2, 100, 8, 96), "bfloat16", 0x100000), k=arr((2, 300, 2, 96), "bfloat16", 0x200000),
                   v=arr((2, 300, 2, 96), "bfloat16", 0x300000), out=arr((2, 100, 8, 96), "bfloat16", 0x400000))
        self.check(ValueError, "q must be a non-null device address aligned to 16", q=arr((2, 100, 8, 64), "bfloat16", 0x100008))
        self.check(ValueError, "lse must be a non-null device address aligned to 4", lse=arr((2, 8, 100), "float32", 0x500002))

    def test_no_driver(self):
        if cake._cake.driver_available():
            self.skipTest("a CUDA driver is present")
        a = self.args()
        with self.assertRaises(cake.NoDeviceError) as cm:
            cake.attention_prefill(a["q"], a["k"], a["v"], causal=True, softmax_scale=0.125, out=a["out"], lse=a["lse"])
        self.assertIn("libcuda", str(cm.exception))


class AttentionVarlenArguments(unittest.TestCase):
    # q, o [total_q, H, D] = [300, 8, 64]; k, v [total_k, HK, D] = [500, 2, 64]; lse [H, total_q]; cu [B + 1] = [4]
    def args(self, **over):
        a = {"q": arr((300, 8, 64), "bfloat16", 0x100000), "k": arr((500, 2, 64), "bfloat16", 0x200000),
             "v": arr((500, 2, 64), "bfloat16", 0x300000), "cu_q": arr((4,), "int32", 0x600000), "cu_k": arr((4,), "int32", 0x700000),
             "max_q": 200, "out": arr((300, 8, 64), "bfloat16", 0x400000), "lse": arr((8, 300), "float32", 0x500000)}
        a.update(over)
        return a

    def check(self, exc, needle, causal=False, **over):
        a = self.args(**over)
        with self.assertRaises(exc) as cm:
            cake.attention_prefill_varlen(a["q"], a["k"], a["v"], a["cu_q"], a["cu_k"], a["max_q"], causal=causal, out=a["out"], lse=a["lse"])
        self.assertIn(needle, str(cm.exception))

    def test_python_checks(self):
        self.check(ValueError, "causal must be a bool; it is 1", causal=1)
        self.check(ValueError, "max_seqlen_q must be an int; it is 2.5", max_q=2.5)
        self.check(ValueError, "q must be 3-D [total_q, H, D]; it has shape [2, 300, 8, 64]", q=arr((2, 300, 8, 64), "bfloat16", 0x100000))
        self.check(ValueError, "k must be [total_k, HK, D] with q's D", k=arr((500, 2, 128), "bfloat16", 0x200000))
        self.check(ValueError, "cu_seqlens_q must be 1-D [B + 1] with B >= 1", cu_q=arr((1,), "int32", 0x600000))
        self.check(ValueError, "cu_seqlens_k must have shape [4]; it has [5]", cu_k=arr((5,), "int32", 0x700000))
        self.check(ValueError, "cu_seqlens_q must be int32; it is float32", cu_q=arr((4,), "float32", 0x600000))
        self.check(ValueError, "lse must have shape [8, 300]; it has [300, 8]", lse=arr((300, 8), "float32", 0x500000))

    def test_cpp_checks(self):
        # cake::attention::prefill_varlen's own checks, before any driver call
        self.check(ValueError, "max_seqlen_q = 301 must be 1 .. total_q = 300", max_q=301)
        self.check(ValueError, "cu_seqlens_k must be a non-null device address aligned to 4", cu_k=arr((4,), "int32", 0x700002))


class AttentionDecodePagedArguments(unittest.TestCase):
    # q, o [B, H, D] = [4, 8, 128]; caches [num_pages, page_size, HK, D] = [64, 16, 2, 128]; page_table [B, max_pages] = [4, 16];
    # seq_lens [B]; lse [B, H]; workspace 1 MiB
    def args(self, **over):
        a = {"q": arr((4, 8, 128), "bfloat16", 0x100000), "k": arr((64, 16, 2, 128), "bfloat16", 0x200000),
             "v": arr((64, 16, 2, 128), "bfloat16", 0x300000), "pt": arr((4, 16), "int32", 0x600000), "lens": arr((4,), "int32", 0x700000),
             "max_seq_len": 0, "out": arr((4, 8, 128), "bfloat16", 0x400000), "lse": arr((4, 8), "float32", 0x500000),
             "ws": arr((1 << 18,), "float32", 0x800000)}
        a.update(over)
        return a

    def check(self, exc, needle, **over):
        a = self.args(**over)
        with self.assertRaises(exc) as cm:
            cake.attention_decode_paged(a["q"], a["k"], a["v"], a["pt"], a["lens"], max_seq_len=a["max_seq_len"], out=a["out"], lse=a["lse"],
                                        workspace=a["ws"], k_scale=a.get("k_scale"), v_scale=a.get("v_scale"))
        self.assertIn(needle, str(cm.exception))

    def test_python_checks(self):
        self.check(ValueError, "max_seq_len must be an int; it is 2.5", max_seq_len=2.5)
        self.check(ValueError, "q must be 3-D [B, H, D]; it has shape [4, 1, 8, 128]", q=arr((4, 1, 8, 128), "bfloat16", 0x100000))
        self.check(ValueError, "k_cache must be [num_pages, page_size, HK, D] with q's D", k=arr((64, 16, 2, 64), "bfloat16", 0x200000))
        self.check(ValueError, "v_cache must have shape [64, 16, 2, 128]", v=arr((64, 16, 1, 128), "bfloat16", 0x300000))
        self.check(ValueError, "q's heads H = 8 must be a multiple of k_cache's heads HK = 3",
                   k=arr((64, 16, 3, 128), "bfloat16", 0x200000), v=arr((64, 16, 3, 128), "bfloat16", 0x300000))
        self.check(ValueError, "page_table must be [B, max_pages] with q's B = 4", pt=arr((3, 16), "int32", 0x600000))
        self.check(ValueError, "seq_lens must be int32; it is float32", lens=arr((4,), "float32", 0x700000))
        self.check(ValueError, "lse must have shape [4, 8]; it has [8, 4]", lse=arr((8, 4), "float32", 0x500000))
        self.check(ValueError, "workspace holds 16 bytes; this decode needs", ws=arr((4,), "float32", 0x800000))
        # the caches are bf16, or fp8 (float8_e4m3fn, a torch dtype) with scales: scales for bf16 caches are a mistake
        self.check(ValueError, "k_cache must be bfloat16 or float8_e4m3fn; it is float32", k=arr((64, 16, 2, 128), "float32", 0x200000))
        self.check(ValueError, "k_scale and v_scale scale fp8 (float8_e4m3fn) caches; these are bfloat16", k_scale=0.5)

    def test_cpp_checks(self):
        # cake::attention::decode_paged's own checks (through the workspace size and the call), before any driver call
        self.check(ValueError, "page_size = 48 is not supported", k=arr((64, 48, 2, 128), "bfloat16", 0x200000),
                   v=arr((64, 48, 2, 128), "bfloat16", 0x300000))
        self.check(ValueError, "max_seq_len = 257 is more than max_pages * page_size = 16 * 16 = 256", max_seq_len=257)
        self.check(ValueError, "seq_lens must be a non-null device address aligned to 4", lens=arr((4,), "int32", 0x700002))
        self.assertGreater(cake.attention_decode_workspace_bytes(4, 8, 2, 128, 64, 16, 16), 0)

    def test_no_driver(self):
        if cake._cake.driver_available():
            self.skipTest("a CUDA driver is present")
        a = self.args()
        with self.assertRaises(cake.NoDeviceError) as cm:
            cake.attention_decode_paged(a["q"], a["k"], a["v"], a["pt"], a["lens"], out=a["out"], lse=a["lse"], workspace=a["ws"])
        self.assertIn("libcuda", str(cm.exception))


try:
    import torch
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "PyTorch is not installed here: PyTorch's side of the fake implementations is checked where it is (the H200 run); their shapes are checked here by test_fake_shapes.py")
class FakeImplementations(unittest.TestCase):
    def test_shapes_from_fake_tensors(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        with FakeTensorMode():
            a = torch.empty(33, 64, dtype=torch.bfloat16, device="cuda")
            b = torch.empty(48, 64, dtype=torch.bfloat16, device="cuda")
            d = torch.ops.cake.gemm(a, b, activation="gelu_tanh")
            self.assertEqual((tuple(d.shape), d.dtype), ((33, 48), torch.bfloat16))
            x = torch.empty(2, 5, 1000, dtype=torch.bfloat16, device="cuda")
            self.assertEqual(tuple(torch.ops.cake.softmax(x).shape), (2, 5, 1000))
            y = torch.ops.cake.rmsnorm(x, torch.empty(1000, dtype=torch.bfloat16, device="cuda"), 1e-5)
            self.assertEqual((tuple(y.shape), y.stride()), ((2, 5, 1000), x.stride()))
            q = torch.empty(2, 127, 32, 128, dtype=torch.bfloat16, device="cuda")
            k = torch.empty(2, 300, 8, 128, dtype=torch.bfloat16, device="cuda")
            o, lse = torch.ops.cake.attention_prefill(q, k, k, True, 0.1)
            self.assertEqual((tuple(o.shape), o.dtype, tuple(lse.shape), lse.dtype), ((2, 127, 32, 128), torch.bfloat16, (2, 32, 127), torch.float32))
            qv = torch.empty(1234, 32, 128, dtype=torch.bfloat16, device="cuda")
            kv = torch.empty(2000, 8, 128, dtype=torch.bfloat16, device="cuda")
            cu = torch.empty(5, dtype=torch.int32, device="cuda")
            o, lse = torch.ops.cake.attention_prefill_varlen(qv, kv, kv, cu, cu, 700, True, None)
            self.assertEqual((tuple(o.shape), o.dtype, tuple(lse.shape), lse.dtype), ((1234, 32, 128), torch.bfloat16, (32, 1234), torch.float32))
            qd = torch.empty(64, 32, 128, dtype=torch.bfloat16, device="cuda")
            kc = torch.empty(4096, 16, 8, 128, dtype=torch.bfloat16, device="cuda")
            pt = torch.empty(64, 256, dtype=torch.int32, device="cuda")
            o, lse = torch.ops.cake.attention_decode_paged(qd, kc, kc, pt, pt[:, 0], 4096, None)
            self.assertEqual((tuple(o.shape), o.dtype, tuple(lse.shape), lse.dtype), ((64, 32, 128), torch.bfloat16, (64, 32), torch.float32))
            xs = torch.empty(3, 1000, 96, dtype=torch.float16, device="cuda")
            cs = torch.empty(3, 64, 96, dtype=torch.float16, device="cuda")
            idx = torch.ops.cake.kmeans_assign(xs, cs, None, "inner_product")
            self.assertEqual((tuple(idx.shape), idx.dtype), ((3, 1000), torch.int32))
            norms, shift = torch.empty(3, 64, device="cuda"), torch.empty(3, 64, device="cuda")
            ws = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
            self.assertIsNone(torch.ops.cake.kmeans_update(xs, idx, cs, norms, shift, ws, "l2"))
            self.assertIsNone(torch.ops.cake.kmeans_fit(xs, cs, 2, idx, norms, shift, ws, "l2"))


if __name__ == "__main__":
    unittest.main()
