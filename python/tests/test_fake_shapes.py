"""The fake (meta) implementations of torch.ops.cake.* give the right output shapes, dtypes and strides.

CI has no PyTorch (PyPI's wheel brings ~3 GB of CUDA libraries), so this test loads cake/_torch_ops.py itself
against a minimal stand-in for the few torch names it uses (torch.library.custom_op / register_fake,
torch._check, torch.empty_strided, Tensor.new_empty / shape / stride / dim, the dtypes) and calls the fake
implementations it registers. What it checks is the code in _torch_ops.py; what it does not check is
PyTorch's side of the registration (schemas, FakeTensor propagation), which python/tests/test_gpu.py
(FakeImplementations) checks with real PyTorch on the H200.
"""
import importlib.util
import pathlib
import sys
import types
import unittest

import cake


class StandInTensor:
    def __init__(self, shape, dtype="bfloat16", stride=None, device="cuda"):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device
        if stride is None:
            stride, n = [], 1
            for extent in reversed(self.shape):
                stride.insert(0, n)
                n *= extent
        self._stride = tuple(stride)

    def dim(self):
        return len(self.shape)

    def stride(self):
        return self._stride

    def new_empty(self, shape, dtype=None):
        return StandInTensor(shape, dtype or self.dtype, device=self.device)


def stand_in_torch():
    torch = types.ModuleType("torch")
    torch.bfloat16, torch.float32, torch.int32, torch.Tensor = "bfloat16", "float32", "int32", StandInTensor

    def _check(cond, message):
        if not cond:
            raise RuntimeError(message())

    torch._check = _check
    torch.empty_strided = lambda shape, stride, dtype, device: StandInTensor(shape, dtype, stride, device)

    class Op:
        def __init__(self, fn):
            self.fn, self.fake = fn, None

        def register_fake(self, fake):
            self.fake = fake
            return fake

    library = types.ModuleType("torch.library")
    library.custom_op = lambda name, mutates_args: (lambda fn: Op(fn))
    torch.library = library
    return torch


def load_ops_with(torch_module):
    """cake/_torch_ops.py executed as a submodule of the installed cake package, `import torch` bound to the
    stand-in for the duration of the import (a real torch, if any, is put back)."""
    path = pathlib.Path(cake.__file__).with_name("_torch_ops.py")
    saved = {k: sys.modules.get(k) for k in ("torch", "torch.library")}
    sys.modules["torch"], sys.modules["torch.library"] = torch_module, torch_module.library
    try:
        spec = importlib.util.spec_from_file_location("cake._torch_ops_fake_check", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


class FakeShapes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ops = load_ops_with(stand_in_torch())

    def test_gemm(self):
        out = self.ops.gemm.fake(StandInTensor((384, 96)), StandInTensor((200, 96)))
        self.assertEqual(out.shape, (384, 200))
        self.assertEqual(out.dtype, "bfloat16")
        with self.assertRaisesRegex(RuntimeError, r"a is \[M, K\], b is \[N, K\]"):
            self.ops.gemm.fake(StandInTensor((384, 96)), StandInTensor((200, 64)))

    def test_row_kernels_keep_shape_and_strides(self):
        x = StandInTensor((7, 4096), stride=(8192, 1))  # rows of a wider buffer
        for out in (self.ops.softmax.fake(x), self.ops.rmsnorm.fake(x, StandInTensor((4096,)))):
            self.assertEqual(out.shape, (7, 4096))
            self.assertEqual(out.stride(), (8192, 1))
            self.assertEqual(out.dtype, "bfloat16")

    def test_attention_prefill(self):
        q, kv = StandInTensor((2, 1000, 32, 128)), StandInTensor((2, 1000, 8, 128))
        out, lse = self.ops.attention_prefill.fake(q, kv, kv, causal=True)
        self.assertEqual(out.shape, (2, 1000, 32, 128))
        self.assertEqual(out.dtype, "bfloat16")
        self.assertEqual(lse.shape, (2, 32, 1000))
        self.assertEqual(lse.dtype, "float32")
        with self.assertRaisesRegex(RuntimeError, r"q is \[B, S, H, D\]"):
            self.ops.attention_prefill.fake(StandInTensor((1000, 32, 128)), kv, kv)

    def test_attention_prefill_varlen(self):
        q, kv = StandInTensor((1234, 32, 128)), StandInTensor((2000, 8, 128))
        cu = StandInTensor((5,), "int32")
        out, lse = self.ops.attention_prefill_varlen.fake(q, kv, kv, cu, cu, 700, causal=True)
        self.assertEqual(out.shape, (1234, 32, 128))
        self.assertEqual(out.dtype, "bfloat16")
        self.assertEqual(lse.shape, (32, 1234))  # FlashAttention's varlen LSE: [H, total_q]
        self.assertEqual(lse.dtype, "float32")
        with self.assertRaisesRegex(RuntimeError, r"q is \[total_q, H, D\]"):
            self.ops.attention_prefill_varlen.fake(StandInTensor((2, 1000, 32, 128)), kv, kv, cu, cu, 700)

    def test_attention_decode_paged(self):
        q, kv = StandInTensor((64, 32, 128)), StandInTensor((4096, 16, 8, 128))
        table, lens = StandInTensor((64, 256), "int32"), StandInTensor((64,), "int32")
        out, lse = self.ops.attention_decode_paged.fake(q, kv, kv, table, lens, 4096)
        self.assertEqual(out.shape, (64, 32, 128))
        self.assertEqual(out.dtype, "bfloat16")
        self.assertEqual(lse.shape, (64, 32))  # [B, H]
        self.assertEqual(lse.dtype, "float32")
        with self.assertRaisesRegex(RuntimeError, r"q is \[B, H, D\], k_cache and v_cache \[num_pages, page_size, HK, D\]"):
            self.ops.attention_decode_paged.fake(StandInTensor((64, 1, 32, 128)), kv, kv, table, lens)

    def test_kmeans_assign(self):
        for x, c, want in (((4, 1000, 128), (4, 64, 128), (4, 1000)), ((1000, 96), (64, 96), (1000,))):
            idx = self.ops.kmeans_assign.fake(StandInTensor(x, "float16"), StandInTensor(c, "float16"))
            self.assertEqual(idx.shape, want)
            self.assertEqual(idx.dtype, "int32")
        with self.assertRaisesRegex(RuntimeError, r"x is \[B, N, D\] or \[N, D\]"):
            self.ops.kmeans_assign.fake(StandInTensor((1000, 96)), StandInTensor((64, 64)))

    def test_kmeans_update_and_fit_check_their_buffers(self):
        x, c = StandInTensor((4, 1000, 128), "float16"), StandInTensor((4, 64, 128), "float16")
        idx, per_centroid, ws = StandInTensor((4, 1000), "int32"), StandInTensor((4, 64), "float32"), StandInTensor((1 << 20,), "uint8")
        self.assertIsNone(self.ops.kmeans_update.fake(x, idx, c, per_centroid, per_centroid, ws))
        self.assertIsNone(self.ops.kmeans_update.fake(x, idx, c, None, per_centroid, ws, metric="inner_product"))
        self.assertIsNone(self.ops.kmeans_fit.fake(x, c, 3, idx, per_centroid, per_centroid, ws))
        with self.assertRaisesRegex(RuntimeError, r"c_norm is needed unless metric is inner_product"):
            self.ops.kmeans_update.fake(x, idx, c, None, per_centroid, ws)
        with self.assertRaisesRegex(RuntimeError, r"idx must have x's shape without D, \(4, 1000\)"):
            self.ops.kmeans_fit.fake(x, c, 3, StandInTensor((4, 999), "int32"), per_centroid, per_centroid, ws)
        with self.assertRaisesRegex(RuntimeError, r"shift must have centroids' shape without D, \(4, 64\)"):
            self.ops.kmeans_update.fake(x, idx, c, per_centroid, StandInTensor((4, 63), "float32"), ws)
        with self.assertRaisesRegex(RuntimeError, r"iterations must be >= 1"):
            self.ops.kmeans_fit.fake(x, c, 0, idx, per_centroid, per_centroid, ws)
        self.assertIsNone(self.ops.kmeans_step.fake(x, c, idx, per_centroid, per_centroid, ws))
        self.assertIsNone(self.ops.kmeans_step.fake(x, c, idx, None, per_centroid, ws, metric="inner_product"))
        with self.assertRaisesRegex(RuntimeError, r"kmeans_step: c_norm is needed unless metric is inner_product"):
            self.ops.kmeans_step.fake(x, c, idx, None, per_centroid, ws)
        with self.assertRaisesRegex(RuntimeError, r"kmeans_step: idx must have x's shape without D, \(4, 1000\)"):
            self.ops.kmeans_step.fake(x, c, StandInTensor((4, 999), "int32"), per_centroid, per_centroid, ws)

    def test_knn_search(self):
        for q, y, k in (((4096, 128), (100000, 128), 10), ((7, 64), (5, 64), 256)):
            dist, idx = self.ops.knn_search.fake(StandInTensor(q, "float16"), StandInTensor(y, "float16"), k)
            self.assertEqual(dist.shape, (q[0], k))
            self.assertEqual(dist.dtype, "float32")
            self.assertEqual(idx.shape, (q[0], k))
            self.assertEqual(idx.dtype, "int32")
        with self.assertRaisesRegex(RuntimeError, r"queries are \[Q, D\], database \[N, D\]"):
            self.ops.knn_search.fake(StandInTensor((100, 64)), StandInTensor((50, 128)), 10)
        with self.assertRaisesRegex(RuntimeError, r"k = 257 must be in 1 .. 256"):
            self.ops.knn_search.fake(StandInTensor((100, 64)), StandInTensor((50, 64)), 257)


if __name__ == "__main__":
    unittest.main()
