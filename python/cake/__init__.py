"""Cake's GPU kernels for Python: GEMM with fused epilogues, row softmax and RMSNorm, k-means, exact
k-nearest-neighbour search (exact, and the IVF-Flat index ``IvfFlat``), attention prefill and paged decode.

Arrays may be torch tensors, or any CUDA array that speaks DLPack (``__dlpack__``: CuPy, JAX, ...) or
the CUDA array interface. Every argument is checked before anything reaches the driver, and a bad one
raises ``ValueError`` (or ``TypeError``) naming it. Kernels run on ``stream`` (an int CUstream or a
``torch.cuda.Stream``); by default on PyTorch's current stream for torch tensors and on the legacy
default stream otherwise. A call enqueues work and returns: it never synchronizes, and after the first
call of a shape class (which JIT-compiles, cached on disk and shared with C++ callers) it allocates
nothing, so it can be captured in a CUDA graph. See docs/python.md.

With PyTorch installed, importing cake also registers ``torch.ops.cake.gemm``, ``torch.ops.cake.softmax``,
``torch.ops.cake.rmsnorm``, ``torch.ops.cake.attention_prefill``, ``torch.ops.cake.attention_prefill_varlen``,
``torch.ops.cake.attention_decode_paged``,
``torch.ops.cake.kmeans_assign`` and ``torch.ops.cake.knn_search`` (custom ops with fake implementations:
torch.compile and graph capture).
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional

from . import _cake
from ._cake import CakeError, NoDeviceError, UnsupportedDeviceError

__all__ = ["gemm", "softmax", "rmsnorm", "kmeans_assign", "kmeans_update", "kmeans_step", "kmeans_fit", "kmeans_fit_until", "kmeans_init_random", "kmeans_update_workspace_bytes", "kmeans_sorted_update_workspace_bytes", "knn_search", "knn_search_workspace_bytes", "IvfFlat", "attention_prefill", "attention_prefill_varlen", "attention_decode_paged", "attention_decode_workspace_bytes", "CakeError", "NoDeviceError", "UnsupportedDeviceError", "__version__"]
__version__ = _cake.version

_ACTIVATIONS = {None: 0, "none": 0, "gelu_tanh": 1, "gelu": 2, "gelu_erf": 2, "silu": 3, "relu": 4}


class _Array(NamedTuple):
    ptr: int
    shape: tuple
    strides: tuple  # elements
    dtype: str      # "bfloat16", "float32", "float8_e4m3fn", ...
    device: str     # "cuda", "cpu", ...
    index: int
    torch: bool
    contiguous: bool = False  # known row-major contiguous (torch's is_contiguous); False: _contiguous computes it


_CAI_TYPES = {"<f4": "float32", "<f2": "float16", "<i4": "int32", "<i8": "int64", "|u1": "uint8", "|i1": "int8"}
_DLPACK_TYPES = {"bfloat16": "bfloat16", "float32": "float32", "float16": "float16", "int32": "int32", "int64": "int64", "uint8": "uint8"}


_TORCH_TYPES: dict = {}  # type -> is it a torch tensor type (decided once per type: this runs for every argument of every call)
_TORCH_DTYPES: dict = {}  # torch dtype -> its name ("bfloat16")


def _is_torch(x: Any) -> bool:
    t = type(x)
    known = _TORCH_TYPES.get(t)
    if known is None:
        known = _TORCH_TYPES[t] = t.__module__.startswith("torch") and t.__name__ in ("Tensor", "Parameter", "FakeTensor", "FunctionalTensor")
    return known


def _view(x: Any, name: str) -> _Array:
    """Address, shape, element strides, dtype and device of an array argument."""
    if _is_torch(x):
        dev = x.device
        name = _TORCH_DTYPES.get(x.dtype)
        if name is None:
            name = _TORCH_DTYPES[x.dtype] = str(x.dtype).rsplit(".", 1)[-1]
        return _Array(x.data_ptr(), tuple(x.shape), x.stride(), name, dev.type, dev.index if dev.index is not None else 0, True, x.is_contiguous())
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        typestr = cai["typestr"]
        dtype = _CAI_TYPES.get(typestr, f"typestr {typestr}")
        size = int(typestr[2:]) if typestr[2:].isdigit() else 1
        shape = tuple(int(s) for s in cai["shape"])
        if cai.get("strides") is None:
            strides, acc = [], 1
            for s in reversed(shape):
                strides.append(acc)
                acc *= s
            strides = tuple(reversed(strides))
        else:
            if any(s % size for s in cai["strides"]):
                raise ValueError(f"{name}: strides {tuple(cai['strides'])} are not multiples of the element size {size}")
            strides = tuple(s // size for s in cai["strides"])
        return _Array(int(cai["data"][0]), shape, strides, dtype, "cuda", int(cai.get("device", 0) or 0), False)
    if hasattr(x, "__dlpack__"):
        ptr, shape, strides, dtype, device, index = _cake.describe(x)
        return _Array(ptr, tuple(shape), tuple(strides), _DLPACK_TYPES.get(dtype, dtype), device, index, False)
    raise TypeError(f"{name} must be a CUDA array (a torch tensor, or an object with __dlpack__ or __cuda_array_interface__); "
                    f"got {type(x).__name__}")


def _need(a: Optional[_Array], name: str, dtype: str, shape: tuple, device: int) -> None:
    if a is None:
        return
    if a.device != "cuda":
        raise ValueError(f"{name} must be on a CUDA device; it is on {a.device}")
    if a.index != device:
        raise ValueError(f"{name} is on cuda:{a.index}, the other arrays on cuda:{device}")
    if a.dtype != dtype:
        raise ValueError(f"{name} must be {dtype}; it is {a.dtype}")
    if a.shape != shape:
        raise ValueError(f"{name} must have shape {list(shape)}; it has {list(a.shape)}")
    if len(shape) >= 1 and shape[-1] > 1 and a.strides[-1] != 1:
        raise ValueError(f"{name}'s last dimension must be contiguous (stride 1); its strides are {list(a.strides)}")


def _stream(stream: Any, arrays: list, device: int) -> int:
    if stream is not None:
        return int(getattr(stream, "cuda_stream", stream))
    if any(a.torch for a in arrays if a is not None):
        import torch
        return torch.cuda.current_stream(device).cuda_stream
    return 0


def _new_like(like: Any, shape: tuple, dtype_name: str, name: str, strides: Optional[tuple] = None):
    if not _is_torch(like):
        raise ValueError(f"{name} must be given for arrays that are not torch tensors (cake allocates only through PyTorch)")
    import torch
    dtype = getattr(torch, dtype_name)
    if strides is None:
        return torch.empty(shape, dtype=dtype, device=like.device)
    return torch.empty_strided(shape, strides, dtype=dtype, device=like.device)


def gemm(a, b, out=None, *, bias=None, row_scale=None, col_scale=None, residual=None, activation: Optional[str] = None,
         scale: float = 1.0, stream=None):
    """out[M, N] = act(a @ b.T * row_scale[:, None] * col_scale[None, :] + bias) + residual.

    a: [M, K], b: [N, K] (the layout of a linear layer's weight), both bfloat16 (or both float8_e4m3fn,
    then the product is multiplied by ``scale`` and no epilogue part is taken), last dimension contiguous,
    row strides multiples of 8 (bf16) or 16 (fp8) elements. out: [M, N] bfloat16 (allocated for torch
    inputs when None). bias: bfloat16 [N]; row_scale: float32 [M]; col_scale: float32 [N]; residual:
    bfloat16 [M, N]. activation: None, "gelu_tanh", "gelu" (erf form), "silu" or "relu". Hopper only.
    Returns out.
    """
    A, B = _view(a, "a"), _view(b, "b")
    if len(A.shape) != 2:
        raise ValueError(f"a must be 2-D [M, K]; it has shape {list(A.shape)}")
    if len(B.shape) != 2:
        raise ValueError(f"b must be 2-D [N, K]; it has shape {list(B.shape)}")
    M, K = A.shape
    N = B.shape[0]
    if B.shape[1] != K:
        raise ValueError(f"a is [M, K] = {list(A.shape)} and b is [N, K] = {list(B.shape)}: their K differ")
    dev = A.index
    fp8 = A.dtype == "float8_e4m3fn"
    _need(A, "a", "float8_e4m3fn" if fp8 else "bfloat16", (M, K), dev)
    _need(B, "b", A.dtype if fp8 else "bfloat16", (N, K), dev)
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of None, 'gelu_tanh', 'gelu', 'silu', 'relu'; got {activation!r}")
    parts = {"bias": bias, "row_scale": row_scale, "col_scale": col_scale, "residual": residual}
    if fp8 and (any(p is not None for p in parts.values()) or _ACTIVATIONS[activation]):
        raise ValueError("the fp8 GEMM takes no epilogue (bias, row_scale, col_scale, residual, activation): apply it in bf16")
    if not fp8 and scale != 1.0:
        raise ValueError(f"scale = {scale} applies to fp8 inputs only")
    if not math.isfinite(scale):
        raise ValueError(f"scale = {scale} must be finite")
    if out is None:
        out = _new_like(a, (M, N), "bfloat16", "out")
    D = _view(out, "out")
    _need(D, "out", "bfloat16", (M, N), dev)
    V = {k: (_view(v, k) if v is not None else None) for k, v in parts.items()}
    _need(V["bias"], "bias", "bfloat16", (N,), dev)
    _need(V["row_scale"], "row_scale", "float32", (M,), dev)
    _need(V["col_scale"], "col_scale", "float32", (N,), dev)
    _need(V["residual"], "residual", "bfloat16", (M, N), dev)
    ld = lambda x: x.strides[0] if x.shape[0] > 1 else x.shape[1]  # a single row: any row stride is as good as K
    s = _stream(stream, [A, B, D] + list(V.values()), dev)
    if fp8:
        _cake.gemm_fp8(A.ptr, B.ptr, D.ptr, M, N, K, ld(A), ld(B), ld(D), float(scale), s, dev)
        return out
    R = V["residual"]
    _cake.gemm_bf16(A.ptr, B.ptr, D.ptr, M, N, K, ld(A), ld(B), ld(D), V["bias"].ptr if V["bias"] else 0,
                    V["row_scale"].ptr if V["row_scale"] else 0, V["col_scale"].ptr if V["col_scale"] else 0,
                    R.ptr if R else 0, ld(R) if R else 0, _ACTIVATIONS[activation], s, dev)
    return out


def _rows(X: _Array, name: str):
    """(rows, cols, row stride) of an array whose rows are its last dimension, uniformly strided."""
    if len(X.shape) == 0:
        raise ValueError(f"{name} must have at least one dimension")
    cols = X.shape[-1]
    rows = math.prod(X.shape[:-1]) if len(X.shape) > 1 else 1
    if cols > 1 and X.strides[-1] != 1:
        raise ValueError(f"{name}'s last dimension must be contiguous (stride 1); its strides are {list(X.strides)}")
    if len(X.shape) == 1:
        return rows, cols, cols
    ld = X.strides[-2] if X.shape[-2] > 1 else cols
    for i in range(len(X.shape) - 2):  # leading dimensions must fold into one row index
        if X.shape[i] > 1 and X.strides[i] != X.strides[i + 1] * X.shape[i + 1]:
            raise ValueError(f"{name}'s leading dimensions do not fold into rows of one stride (shape {list(X.shape)}, strides {list(X.strides)})")
    return rows, cols, ld


def _row_kernel(x, out, name: str, w=None, eps: float = 0.0, stream=None):
    X = _view(x, "x")
    if X.device != "cuda":
        raise ValueError(f"x must be on a CUDA device; it is on {X.device}")
    if X.dtype != "bfloat16":
        raise ValueError(f"x must be bfloat16; it is {X.dtype}")
    rows, cols, ld = _rows(X, "x")
    if out is None:
        out = _new_like(x, X.shape, "bfloat16", "out", X.strides)
    Y = _view(out, "out")
    _need(Y, "out", "bfloat16", X.shape, X.index)
    if Y.strides != X.strides and rows > 1:
        raise ValueError(f"out must have x's strides {list(X.strides)} (one row stride for both); it has {list(Y.strides)}")
    W = None
    if name == "rmsnorm":
        W = _view(w, "weight")
        _need(W, "weight", "bfloat16", (cols,), X.index)
        if not (math.isfinite(eps) and eps >= 0):
            raise ValueError(f"eps = {eps} must be finite and not negative")
    s = _stream(stream, [X, Y, W], X.index)
    if name == "softmax":
        _cake.softmax_bf16(X.ptr, Y.ptr, rows, cols, ld, s, X.index)
    else:
        _cake.rmsnorm_bf16(X.ptr, W.ptr, Y.ptr, rows, cols, ld, float(eps), s, X.index)
    return out


def softmax(x, out=None, *, stream=None):
    """out = softmax(x) over the last dimension (bfloat16, f32 math, up to 16384 columns). ``out`` may be x."""
    return _row_kernel(x, out, "softmax", stream=stream)


def rmsnorm(x, weight, eps: float = 1e-6, out=None, *, stream=None):
    """out = bf16(bf16(x * rsqrt(mean(x^2) + eps)) * weight) over the last dimension (bfloat16, f32 math,
    up to 16384 columns; the rounding of Hugging Face's LlamaRMSNorm). ``out`` may be x."""
    return _row_kernel(x, out, "rmsnorm", w=weight, eps=eps, stream=stream)


_METRICS = {"l2": 0, "inner_product": 1, "cosine": 2}


def _contiguous(a: _Array, name: str) -> None:
    if a.contiguous:
        return
    want, step = [], 1
    for n in reversed(a.shape):
        want.append(step)
        step *= n
    if any(n > 1 and st != w for n, st, w in zip(a.shape, a.strides, reversed(want))):
        raise ValueError(f"{name} must be contiguous (row-major); its strides are {list(a.strides)}")


def kmeans_assign(x, centroids, c_norm=None, out=None, *, metric: str = "l2", stream=None):
    """out[b, i] = index of the centroid of ``centroids[b]`` nearest to ``x[b, i]`` (int32; ties go to the
    lowest index). x: [B, N, D] or [N, D], centroids: [B, K, D] or [K, D], both float16 or both bfloat16,
    contiguous, D a multiple of 8 up to 512. metric: "l2" (c_norm = |c|^2, float32 [B, K] or [K]),
    "cosine" (c_norm = -1/|c|), "inner_product" (no c_norm). Without ``c_norm`` it is computed here
    with PyTorch (pass it when the centroids do not change between calls). Hopper only."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}; it is {metric!r}")
    X, C, B, N, K, D = _kmeans_shapes(x, centroids)
    if c_norm is None and metric != "inner_product":
        if not _is_torch(centroids):
            raise ValueError("c_norm must be given for arrays that are not torch tensors")
        sq = centroids.float().square().sum(-1)
        c_norm = sq if metric == "l2" else -sq.rsqrt()
    Nn = None
    if metric != "inner_product":
        Nn = _view(c_norm, "c_norm")
        _need(Nn, "c_norm", "float32", C.shape[:-1], X.index)
        _contiguous(Nn, "c_norm")
    if out is None:
        out = _new_like(x, X.shape[:-1], "int32", "out")
    O = _view(out, "out")
    _need(O, "out", "int32", X.shape[:-1], X.index)
    _contiguous(O, "out")
    s = _stream(stream, [X, C, Nn, O], X.index)
    _cake.kmeans_assign(X.ptr, C.ptr, Nn.ptr if Nn else 0, O.ptr, B, N, K, D, X.dtype == "float16", _METRICS[metric], s, X.index)
    return out


def _kmeans_shapes(x, centroids):
    """The views of a k-means call's points and centroids (checked) and B, N, K, D."""
    X, C = _view(x, "x"), _view(centroids, "centroids")
    if X.device != "cuda":
        raise ValueError(f"x must be on a CUDA device; it is on {X.device}")
    if X.dtype not in ("float16", "bfloat16"):
        raise ValueError(f"x must be float16 or bfloat16; it is {X.dtype}")
    if len(X.shape) not in (2, 3):
        raise ValueError(f"x must be [B, N, D] or [N, D]; it has shape {list(X.shape)}")
    batched = len(X.shape) == 3
    B, N, D = X.shape if batched else (1,) + X.shape
    if len(C.shape) != len(X.shape) or (batched and C.shape[0] != B) or C.shape[-1] != D:
        raise ValueError(f"centroids must be {'[B, K, D]' if batched else '[K, D]'} with x's B and D; x has shape {list(X.shape)}, centroids {list(C.shape)}")
    _need(C, "centroids", X.dtype, C.shape, X.index)
    _contiguous(X, "x")
    _contiguous(C, "centroids")
    return X, C, B, N, C.shape[-2], D


def _kmeans_out(given, like, shape, dtype, name, device):
    """An output array: the one given (checked) or a new torch tensor."""
    if given is None:
        given = _new_like(like, shape, dtype, name)
    V = _view(given, name)
    _need(V, name, dtype, tuple(shape), device)
    _contiguous(V, name)
    return given, V


def _kmeans_workspace(workspace, like, B, K, D, device, N=None):
    """The update's workspace (N given: the sorted update's, which holds the points' sorted copy)."""
    need = _cake.kmeans_update_workspace_bytes(B, K, D) if N is None else _cake.kmeans_sorted_update_workspace_bytes(B, N, K, D)
    if workspace is None:
        workspace = _new_like(like, (need,), "uint8", "workspace")
    W = _view(workspace, "workspace")
    if W.device != "cuda" or W.index != device:
        raise ValueError(f"workspace must be on cuda:{device}")
    size = math.prod(W.shape) * {"uint8": 1, "int8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int64": 8}.get(W.dtype, 1)
    if size < need:
        raise ValueError(f"workspace holds {size} bytes; this update needs {need} (cake.kmeans_{'sorted_' if N is not None else ''}update_workspace_bytes)")
    _contiguous(W, "workspace")
    return workspace, W


_KNN_METRICS = {"l2": 0, "inner_product": 1}


def knn_search_workspace_bytes(Q: int, N: int, D: int, k: int, metric: str = "l2") -> int:
    """Bytes of device workspace knn_search needs for this shape (norms, and the database splits' partial lists)."""
    if metric not in _KNN_METRICS:
        raise ValueError(f"metric must be one of {sorted(_KNN_METRICS)}; it is {metric!r}")
    return _cake.knn_search_workspace_bytes(Q, N, D, k, _KNN_METRICS[metric])


def knn_search(queries, database, k: int, *, metric: str = "l2", distances=None, indices=None, workspace=None, stream=None):
    """Exact k-nearest-neighbour search: ``(distances, indices)``, each [Q, k], best first (ties go to the
    lowest index). queries: [Q, D], database: [N, D], both float16 or both bfloat16, contiguous, D a
    multiple of 8 up to 512; 1 <= k <= 256. metric: "l2" (distances float32 = squared Euclidean distances,
    smallest first) or "inner_product" (the largest inner products first); for cosine, normalize the rows
    and use "inner_product". indices are int32 rows of the database; with k > N the entries past N are -1
    (distance +inf / -inf). ``workspace``: any CUDA array of at least knn_search_workspace_bytes(...) bytes
    (allocated through PyTorch when absent). Hopper only. docs/knn.md."""
    if metric not in _KNN_METRICS:
        raise ValueError(f"metric must be one of {sorted(_KNN_METRICS)}; it is {metric!r}")
    X, Y = _view(queries, "queries"), _view(database, "database")
    if X.device != "cuda":
        raise ValueError(f"queries must be on a CUDA device; it is on {X.device}")
    if X.dtype not in ("float16", "bfloat16"):
        raise ValueError(f"queries must be float16 or bfloat16; it is {X.dtype}")
    if len(X.shape) != 2:
        raise ValueError(f"queries must be [Q, D]; it has shape {list(X.shape)}")
    if len(Y.shape) != 2 or Y.shape[1] != X.shape[1]:
        raise ValueError(f"database must be [N, D] with the queries' D; queries have shape {list(X.shape)}, database {list(Y.shape)}")
    _need(Y, "database", X.dtype, Y.shape, X.index)
    _contiguous(X, "queries")
    _contiguous(Y, "database")
    Q, D = X.shape
    N = Y.shape[0]
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError(f"k must be an int; it is {type(k).__name__}")
    if k < 1 or k > 256:
        raise ValueError(f"k = {k} must be in 1 .. 256")
    distances, Dv = _kmeans_out(distances, queries, (Q, k), "float32", "distances", X.index)
    indices, Iv = _kmeans_out(indices, queries, (Q, k), "int32", "indices", X.index)
    need = knn_search_workspace_bytes(Q, N, D, k, metric)
    if workspace is None:
        workspace = _new_like(queries, (need,), "uint8", "workspace")
    W = _view(workspace, "workspace")
    if W.device != "cuda" or W.index != X.index:
        raise ValueError(f"workspace must be on cuda:{X.index}")
    size = math.prod(W.shape) * {"uint8": 1, "int8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int64": 8}.get(W.dtype, 1)
    if size < need:
        raise ValueError(f"workspace holds {size} bytes; this search needs {need} (cake.knn_search_workspace_bytes)")
    _contiguous(W, "workspace")
    s = _stream(stream, [X, Y, Dv, Iv, W], X.index)
    _cake.knn_search(X.ptr, Y.ptr, Dv.ptr, Iv.ptr, W.ptr, Q, N, D, k, X.dtype == "float16", _KNN_METRICS[metric], s, X.index)
    return distances, indices


def _check_queries(queries, D: int, dtype: str, device: int) -> _Array:
    X = _view(queries, "queries")
    if X.device != "cuda" or X.index != device:
        raise ValueError(f"queries must be on cuda:{device}; it is on {X.device}:{X.index}")
    if len(X.shape) != 2 or X.shape[1] != D:
        raise ValueError(f"queries must be [Q, {D}] (the index's D); it has shape {list(X.shape)}")
    if X.dtype != dtype:
        raise ValueError(f"queries must be {dtype} (the index's dtype); it is {X.dtype}")
    _contiguous(X, "queries")
    return X


class IvfFlat:
    """An IVF-Flat index over ``database`` [N, D] (float16 or bfloat16, contiguous, D a multiple of 8 up to
    512, N <= 2^24): k-means (l2; ``iterations`` Lloyd iterations from ``nlist`` distinct rows picked by
    ``seed``) into nlist inverted lists, the database copied in list order on the device (the index owns
    that copy: the database may be freed). ``metric``: "l2" or "inner_product", the metric of the scan
    (the lists are l2). The build synchronizes the stream once (the lists' offsets are a counting sort on
    the host). ``list_sizes``: the lists' sizes. Hopper only. docs/knn.md (IVF-Flat)."""

    def __init__(self, database, nlist: int, *, metric: str = "l2", seed: int = 0, iterations: int = 10, stream=None):
        if metric not in _KNN_METRICS:
            raise ValueError(f"metric must be one of {sorted(_KNN_METRICS)}; it is {metric!r}")
        for name, v in (("nlist", nlist), ("seed", seed), ("iterations", iterations)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{name} must be an int; it is {type(v).__name__}")
        if seed < 0:
            raise ValueError(f"seed = {seed} must be non-negative")
        Y = _view(database, "database")
        if Y.device != "cuda":
            raise ValueError(f"database must be on a CUDA device; it is on {Y.device}")
        if Y.dtype not in ("float16", "bfloat16"):
            raise ValueError(f"database must be float16 or bfloat16; it is {Y.dtype}")
        if len(Y.shape) != 2:
            raise ValueError(f"database must be [N, D]; it has shape {list(Y.shape)}")
        _contiguous(Y, "database")
        N, D = Y.shape
        s = _stream(stream, [Y], Y.index)
        self.metric = metric
        self.dtype = Y.dtype
        self._index = _cake.ivf_build(Y.ptr, N, D, nlist, Y.dtype == "float16", _KNN_METRICS[metric], seed, iterations, s, Y.index)

    @property
    def nlist(self) -> int:
        return self._index.nlist

    @property
    def dim(self) -> int:
        return self._index.D

    @property
    def ntotal(self) -> int:
        return self._index.N

    @property
    def device(self) -> int:
        return self._index.device

    @property
    def list_sizes(self) -> list:
        return list(self._index.list_sizes)

    _WALKS = {"auto": 0, "per_query": 1, "by_list": 2}

    def workspace_bytes(self, Q: int, k: int, nprobe: int, walk: str = "auto") -> int:
        """Bytes of device workspace search needs for Q queries (for that walk)."""
        if walk not in self._WALKS:
            raise ValueError(f"walk must be one of {sorted(self._WALKS)}; it is {walk!r}")
        return self._index.workspace_bytes(Q, k, nprobe, self._WALKS[walk])

    def search(self, queries, k: int, nprobe: int = 1, *, distances=None, indices=None, workspace=None, stream=None, walk: str = "auto"):
        """``(distances, indices)``, each [Q, k], best first: per query, the k best vectors of its ``nprobe``
        nearest lists (1 <= nprobe <= min(nlist, 256); nprobe = nlist is the exact search). indices are
        int32 rows of the database the index was built from; entries past the candidates are -1 (distance
        +inf / -inf). No host synchronization. ``walk``: how the lists are scanned (docs/knn.md): "by_list" (each
        query tile scans the lists its queries probe once; needs Q * nlist <= 2^24), "per_query" (each query's
        lists in turn), "auto" (by_list where it fits)."""
        if walk not in self._WALKS:
            raise ValueError(f"walk must be one of {sorted(self._WALKS)}; it is {walk!r}")
        for name, v in (("k", k), ("nprobe", nprobe)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{name} must be an int; it is {type(v).__name__}")
        if k < 1 or k > 256:
            raise ValueError(f"k = {k} must be in 1 .. 256")
        most = min(self.nlist, 256)
        if nprobe < 1 or nprobe > most:
            raise ValueError(f"nprobe = {nprobe} must be in 1 .. {most} (at most nlist = {self.nlist} and 256)")
        X = _check_queries(queries, self.dim, self.dtype, self.device)
        Q = X.shape[0]
        distances, Dv = _kmeans_out(distances, queries, (Q, k), "float32", "distances", X.index)
        indices, Iv = _kmeans_out(indices, queries, (Q, k), "int32", "indices", X.index)
        need = self.workspace_bytes(Q, k, nprobe, walk)
        if workspace is None:
            workspace = _new_like(queries, (need,), "uint8", "workspace")
        W = _view(workspace, "workspace")
        if W.device != "cuda" or W.index != X.index:
            raise ValueError(f"workspace must be on cuda:{X.index}")
        size = math.prod(W.shape) * {"uint8": 1, "int8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int64": 8}.get(W.dtype, 1)
        if size < need:
            raise ValueError(f"workspace holds {size} bytes; this search needs {need} (IvfFlat.workspace_bytes)")
        _contiguous(W, "workspace")
        s = _stream(stream, [X, Dv, Iv, W], X.index)
        self._index.search(X.ptr, Dv.ptr, Iv.ptr, W.ptr, Q, k, nprobe, s, self._WALKS[walk])
        return distances, indices


def kmeans_sorted_update_workspace_bytes(B: int, N: int, K: int, D: int) -> int:
    """Bytes of device workspace kmeans_update(method="sorted") needs (the scatter's, the clusters' offsets and
    the points' sorted copy with their cluster rows)."""
    return _cake.kmeans_sorted_update_workspace_bytes(B, N, K, D)


def kmeans_update_workspace_bytes(B: int, K: int, D: int) -> int:
    """Bytes of device workspace kmeans_update and kmeans_fit need (sums [B, K, D] of 8 bytes: i64 for the
    deterministic update, f32 otherwise; f32 counts [B, K])."""
    return _cake.kmeans_update_workspace_bytes(B, K, D)


def _kmeans_max_abs(x, X, deterministic, max_abs):
    """The bound on |x| the deterministic update's fixed point needs: the one given, 0 (the format's own
    bound) for float16, and for bfloat16 max |x| from PyTorch when absent (one host synchronization)."""
    if not deterministic:
        return 0.0
    if max_abs is not None:
        m = float(max_abs)
        if not math.isfinite(m) or m < 0:
            raise ValueError(f"max_abs must be a finite bound on |x|, at least 0; it is {max_abs!r}")
        return m
    if X.dtype == "float16":
        return 0.0
    if not hasattr(x, "abs"):
        raise ValueError("the deterministic update of bfloat16 points needs max_abs, a bound on |x| (pass max_abs=...)")
    return float(x.abs().max())


def kmeans_update(x, idx, centroids, c_norm=None, shift=None, *, workspace=None, metric: str = "l2", stream=None, deterministic: bool = False,
                  max_abs=None, method: str = "scatter"):
    """After an assignment: centroids (updated in place) = the mean of their points (an empty cluster keeps
    its centroid); c_norm (float32 [B, K] or [K]) refreshed in the metric's form; shift (float32, same
    shape) = |c_new - c_old|^2. Returns (centroids, c_norm, shift); c_norm is None for "inner_product".
    workspace: any CUDA array of at least kmeans_update_workspace_bytes(B, K, D) bytes (allocated through
    PyTorch when absent). deterministic: i64 fixed-point sums, the same bits on every run (slower: one
    64-bit atomic per element); max_abs bounds |x| for it (bfloat16: taken from x when None). method:
    "scatter" (atomic adds per point) or "sorted" (a counting sort by cluster, then sums over contiguous rows:
    faster when clusters are uneven; not with deterministic; its workspace is
    kmeans_sorted_update_workspace_bytes(B, N, K, D)). Hopper only."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}; it is {metric!r}")
    if method not in ("scatter", "sorted"):
        raise ValueError(f"method must be 'scatter' or 'sorted'; it is {method!r}")
    X, C, B, N, K, D = _kmeans_shapes(x, centroids)
    m = _kmeans_max_abs(x, X, deterministic, max_abs)
    I = _view(idx, "idx")
    _need(I, "idx", "int32", X.shape[:-1], X.index)
    _contiguous(I, "idx")
    Nn = None
    if metric != "inner_product":
        c_norm, Nn = _kmeans_out(c_norm, centroids, C.shape[:-1], "float32", "c_norm", X.index)
    shift, S = _kmeans_out(shift, centroids, C.shape[:-1], "float32", "shift", X.index)
    workspace, W = _kmeans_workspace(workspace, centroids, B, K, D, X.index, N if method == "sorted" else None)
    s = _stream(stream, [X, C, I, Nn, S, W], X.index)
    _cake.kmeans_update(X.ptr, I.ptr, C.ptr, Nn.ptr if Nn else 0, S.ptr, W.ptr, B, N, K, D, X.dtype == "float16", _METRICS[metric], s, X.index,
                        bool(deterministic), m, method == "sorted")
    return centroids, (c_norm if metric != "inner_product" else None), shift


def kmeans_step(x, centroids, c_norm=None, *, idx=None, shift=None, workspace=None, metric: str = "l2", stream=None):
    """One Lloyd iteration: idx = kmeans_assign(x, centroids, c_norm), then centroids (in place), c_norm and
    shift updated as by kmeans_update: the same results as the two calls, with the update's scatter fused
    into the assignment (the points read once; f32 atomic sums, so the last bits of a centroid can differ
    from run to run: kmeans_update's deterministic=True for identical runs). c_norm must hold the norms of
    the centroids in the metric's form (kmeans_assign says which); without it they are computed here with
    PyTorch. Returns (idx, centroids, c_norm, shift); c_norm is None for "inner_product". Hopper only."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}; it is {metric!r}")
    if c_norm is None and metric != "inner_product":
        if not _is_torch(centroids):
            raise ValueError("c_norm must be given for arrays that are not torch tensors")
        sq = centroids.float().square().sum(-1)
        c_norm = sq if metric == "l2" else -sq.rsqrt()
    idx, shift, a = _kmeans_loop_buffers(x, centroids, idx, c_norm, shift, workspace, stream, False, None)
    _cake.kmeans_step(*a.pointers, *a.shape, a.f16, _METRICS[metric], a.stream, a.device)
    return idx, centroids, (c_norm if metric != "inner_product" else None), shift


def kmeans_fit(x, centroids, iterations: int, *, metric: str = "l2", idx=None, c_norm=None, shift=None, workspace=None, stream=None,
               deterministic: bool = False, max_abs=None):
    """`iterations` Lloyd iterations (kmeans_step) from the given centroids (updated in place), enqueued
    without a host synchronization. Returns (idx, centroids, shift): the last assignment and the last
    update's movement per centroid (the caller's convergence check). deterministic / max_abs: as in
    kmeans_update (bfloat16 without max_abs: one host synchronization before the first launch, for max |x|).
    Hopper only."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}; it is {metric!r}")
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be an int >= 1; it is {iterations!r}")
    idx, shift, a = _kmeans_loop_buffers(x, centroids, idx, c_norm, shift, workspace, stream, deterministic, max_abs)
    _cake.kmeans_fit(*a.pointers, *a.shape, a.f16, _METRICS[metric], iterations, a.stream, a.device, bool(deterministic), a.max_abs)
    return idx, centroids, shift


class _LoopArgs(NamedTuple):
    pointers: tuple  # x, centroids, idx, c_norm, shift, workspace
    shape: tuple     # B, N, K, D
    f16: bool
    stream: int
    device: int
    max_abs: float


def _kmeans_loop_buffers(x, centroids, idx, c_norm, shift, workspace, stream, deterministic, max_abs):
    """kmeans_fit's and kmeans_fit_until's checked buffers (idx, c_norm, shift and workspace allocated through
    PyTorch when absent): (idx, shift, the extension's arguments)."""
    X, C, B, N, K, D = _kmeans_shapes(x, centroids)
    m = _kmeans_max_abs(x, X, deterministic, max_abs)
    idx, I = _kmeans_out(idx, x, X.shape[:-1], "int32", "idx", X.index)
    c_norm, Nn = _kmeans_out(c_norm, centroids, C.shape[:-1], "float32", "c_norm", X.index)
    shift, S = _kmeans_out(shift, centroids, C.shape[:-1], "float32", "shift", X.index)
    workspace, W = _kmeans_workspace(workspace, centroids, B, K, D, X.index)
    s = _stream(stream, [X, C, I, Nn, S, W], X.index)
    return idx, shift, _LoopArgs((X.ptr, C.ptr, I.ptr, Nn.ptr, S.ptr, W.ptr), (B, N, K, D), X.dtype == "float16", s, X.index, m)


def kmeans_init_random(x, K: int, *, seed: int = 0, centroids=None, stream=None):
    """Initial centroids: K distinct points of each batch entry of x ([B, N, D] or [N, D]), picked by seed + b
    (the same rows on every platform). Returns centroids ([B, K, D] or [K, D], x's dtype). K <= N. Hopper only."""
    X = _view(x, "x")
    if X.device != "cuda":
        raise ValueError(f"x must be on a CUDA device; it is on {X.device}")
    if len(X.shape) not in (2, 3):
        raise ValueError(f"x must be [B, N, D] or [N, D]; it has shape {list(X.shape)}")
    if not isinstance(K, int) or K < 1:
        raise ValueError(f"K must be an int >= 1; it is {K!r}")
    if not isinstance(seed, int) or seed < 0 or seed >= 1 << 64:
        raise ValueError(f"seed must be an int in [0, 2^64); it is {seed!r}")
    batched = len(X.shape) == 3
    B, N, D = X.shape if batched else (1,) + X.shape
    if K > N:
        raise ValueError(f"K = {K} distinct points of N = {N}: K must be at most N")
    if centroids is None:
        centroids = _new_like(x, (B, K, D) if batched else (K, D), X.dtype, "centroids")
    X, C, B, N, K, D = _kmeans_shapes(x, centroids)
    s = _stream(stream, [X, C], X.index)
    _cake.kmeans_init_random(X.ptr, C.ptr, B, N, K, D, X.dtype == "float16", seed, s, X.index)
    return centroids


def kmeans_fit_until(x, centroids, max_iterations: int, tolerance: float, *, check_every: int = 1, metric: str = "l2", idx=None, c_norm=None,
                     shift=None, workspace=None, stream=None, deterministic: bool = False, max_abs=None):
    """Lloyd iterations from the given centroids (updated in place) until every centroid moved by at most
    `tolerance` (Euclidean) in the last iteration, or max_iterations. The shifts are read back every
    check_every iterations (the loop's one host synchronization). Returns (idx, centroids, shift, iterations
    run). deterministic / max_abs: as in kmeans_update. Hopper only."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}; it is {metric!r}")
    if not isinstance(max_iterations, int) or max_iterations < 1:
        raise ValueError(f"max_iterations must be an int >= 1; it is {max_iterations!r}")
    if not isinstance(check_every, int) or check_every < 1:
        raise ValueError(f"check_every must be an int >= 1; it is {check_every!r}")
    if not math.isfinite(float(tolerance)) or float(tolerance) < 0:
        raise ValueError(f"tolerance must be a finite distance >= 0; it is {tolerance!r}")
    idx, shift, a = _kmeans_loop_buffers(x, centroids, idx, c_norm, shift, workspace, stream, deterministic, max_abs)
    run = _cake.kmeans_fit_until(*a.pointers, *a.shape, a.f16, _METRICS[metric], max_iterations, float(tolerance), check_every, a.stream, a.device,
                                 bool(deterministic), a.max_abs)
    return idx, centroids, shift, run


def _attention_contiguous(a: _Array, name: str, layout: str, who: str = "attention_prefill") -> None:
    try:
        _contiguous(a, name)
    except ValueError as e:
        raise ValueError(f"{e}: {who} supports contiguous {layout} only (pass .contiguous())") from None


def attention_prefill(q, k, v, *, causal: bool = False, softmax_scale: Optional[float] = None, out=None, lse=None, stream=None):
    """Attention prefill (FlashAttention's layouts): out = softmax(softmax_scale * q k^T [+ causal mask]) v per
    batch entry and query head, lse = each row's log-sum-exp (natural log). Returns (out, lse).

    q: [B, S, H, D], k and v: [B, T, HK, D], all bfloat16 and contiguous (the kernel reads row-major
    [B, S, H, D]; pass ``.contiguous()`` of a transposed or sliced view); D is 64, 128 or 256 (256: Hopper only); H a multiple of
    HK (MHA, GQA, MQA). causal: the mask is top-left aligned (query i sees keys 0..i, PyTorch's
    is_causal). softmax_scale: None for 1 / sqrt(D), else a finite number > 0. out: bfloat16 [B, S, H, D],
    lse: float32 [B, H, S], contiguous (allocated through PyTorch for torch inputs when None). Any device from
    cc 8.0: the sm_90a schedule on Hopper, the portable mma.sync fallback on the others (docs/attention.md).
    """
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be a bool; it is {causal!r}")
    scale = _softmax_scale(softmax_scale)
    Q, K, V = _view(q, "q"), _view(k, "k"), _view(v, "v")
    _attention_q(Q, 4, "[B, S, H, D]")
    B, S, H, D = Q.shape
    if len(K.shape) != 4 or K.shape[0] != B or K.shape[3] != D:
        raise ValueError(f"k must be [B, T, HK, D] with q's B and D; q has shape {list(Q.shape)}, k {list(K.shape)}")
    T, HK = K.shape[1], K.shape[2]
    dev = Q.index
    _need(K, "k", "bfloat16", K.shape, dev)
    _need(V, "v", "bfloat16", K.shape, dev)
    if HK < 1 or H % HK:
        raise ValueError(f"q's heads H = {H} must be a multiple of k's heads HK = {HK} (query heads per KV head)")
    for A, name in ((Q, "q"), (K, "k"), (V, "v")):
        _attention_contiguous(A, name, "[B, S, H, D]" if name == "q" else "[B, T, HK, D]")
    if out is None:
        out = _new_like(q, (B, S, H, D), "bfloat16", "out")
    O = _view(out, "out")
    _need(O, "out", "bfloat16", (B, S, H, D), dev)
    _attention_contiguous(O, "out", "[B, S, H, D]")
    if lse is None:
        lse = _new_like(q, (B, H, S), "float32", "lse")
    L = _view(lse, "lse")
    _need(L, "lse", "float32", (B, H, S), dev)
    _attention_contiguous(L, "lse", "[B, H, S]")
    s = _stream(stream, [Q, K, V, O, L], dev)
    _cake.attention_prefill(Q.ptr, K.ptr, V.ptr, O.ptr, L.ptr, B, S, T, H, HK, D, causal, scale, s, dev)
    return out, lse


def _attention_q(Q, rank: int, layout: str):
    """The attention entry points' checks of q: on a CUDA device, bfloat16, `rank` dims (`layout` names them)."""
    if Q.device != "cuda":
        raise ValueError(f"q must be on a CUDA device; it is on {Q.device}")
    if Q.dtype != "bfloat16":
        raise ValueError(f"q must be bfloat16; it is {Q.dtype}")
    if len(Q.shape) != rank:
        raise ValueError(f"q must be {rank}-D {layout}; it has shape {list(Q.shape)}")


def _softmax_scale(softmax_scale) -> float:
    """The scale the entry points take: 0.0 for None (the kernel then uses 1 / sqrt(D)), else a finite float > 0."""
    if softmax_scale is None:
        return 0.0
    try:
        scale = float(softmax_scale)
    except (TypeError, ValueError):
        raise ValueError(f"softmax_scale must be None or a number; it is {softmax_scale!r}") from None
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"softmax_scale = {softmax_scale} must be finite and > 0 (None: 1 / sqrt(D))")
    return scale


def attention_prefill_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q: int, *, causal: bool = False,
                             softmax_scale: Optional[float] = None, out=None, lse=None, stream=None):
    """Attention prefill over a packed batch of entries of different lengths (FlashAttention's varlen layout).
    Returns (out, lse).

    q: [total_q, H, D], k and v: [total_k, HK, D], bfloat16 and contiguous; cu_seqlens_q / cu_seqlens_k: int32
    [B + 1] offsets on the same device (entry b's queries are rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1,
    its keys likewise); max_seqlen_q: the longest entry's query count (an int: it sizes the grid). causal:
    bottom-right aligned (FlashAttention >= 2.1: query i sees keys j <= i + len_k - len_q). out: bfloat16
    [total_q, H, D], lse: float32 [H, total_q] (FlashAttention's varlen LSE layout). The offsets are the
    caller's contract and are not read on the host (docs/attention.md): non-decreasing, within total_q /
    total_k, max_seqlen_q >= every len_q, len_k > 0 where len_q > 0, len_k >= len_q when causal. Rows no
    entry covers are not written. Hopper only.
    """
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be a bool; it is {causal!r}")
    if isinstance(max_seqlen_q, bool) or not isinstance(max_seqlen_q, int):
        raise ValueError(f"max_seqlen_q must be an int; it is {max_seqlen_q!r}")
    scale = _softmax_scale(softmax_scale)
    Q, K, V = _view(q, "q"), _view(k, "k"), _view(v, "v")
    _attention_q(Q, 3, "[total_q, H, D]")
    total_q, H, D = Q.shape
    if len(K.shape) != 3 or K.shape[2] != D:
        raise ValueError(f"k must be [total_k, HK, D] with q's D; q has shape {list(Q.shape)}, k {list(K.shape)}")
    total_k, HK = K.shape[0], K.shape[1]
    dev = Q.index
    _need(K, "k", "bfloat16", K.shape, dev)
    _need(V, "v", "bfloat16", K.shape, dev)
    if HK < 1 or H % HK:
        raise ValueError(f"q's heads H = {H} must be a multiple of k's heads HK = {HK} (query heads per KV head)")
    CQ, CK = _view(cu_seqlens_q, "cu_seqlens_q"), _view(cu_seqlens_k, "cu_seqlens_k")
    if len(CQ.shape) != 1 or CQ.shape[0] < 2:
        raise ValueError(f"cu_seqlens_q must be 1-D [B + 1] with B >= 1; it has shape {list(CQ.shape)}")
    B = CQ.shape[0] - 1
    _need(CQ, "cu_seqlens_q", "int32", (B + 1,), dev)
    _need(CK, "cu_seqlens_k", "int32", (B + 1,), dev)
    for A, name, layout in ((Q, "q", "[total_q, H, D]"), (K, "k", "[total_k, HK, D]"), (V, "v", "[total_k, HK, D]"),
                            (CQ, "cu_seqlens_q", "[B + 1]"), (CK, "cu_seqlens_k", "[B + 1]")):
        _attention_contiguous(A, name, layout)
    if out is None:
        out = _new_like(q, (total_q, H, D), "bfloat16", "out")
    O = _view(out, "out")
    _need(O, "out", "bfloat16", (total_q, H, D), dev)
    _attention_contiguous(O, "out", "[total_q, H, D]")
    if lse is None:
        lse = _new_like(q, (H, total_q), "float32", "lse")
    L = _view(lse, "lse")
    _need(L, "lse", "float32", (H, total_q), dev)
    _attention_contiguous(L, "lse", "[H, total_q]")
    s = _stream(stream, [Q, K, V, O, L, CQ, CK], dev)
    _cake.attention_prefill_varlen(Q.ptr, K.ptr, V.ptr, O.ptr, L.ptr, CQ.ptr, CK.ptr, B, total_q, total_k, max_seqlen_q, H, HK, D, causal, scale, s, dev)
    return out, lse


def attention_decode_workspace_bytes(B: int, H: int, HK: int, D: int, num_pages: int, page_size: int, max_pages: int, max_seq_len: int = 0) -> int:
    """Bytes of device workspace attention_decode_paged needs for this shape (the split slices' partial results)."""
    return _cake.attention_decode_workspace_bytes(B, H, HK, D, num_pages, page_size, max_pages, max_seq_len)


def attention_decode_paged(q, k_cache, v_cache, page_table, seq_lens, *, max_seq_len: int = 0, softmax_scale: Optional[float] = None,
                           k_scale: Optional[float] = None, v_scale: Optional[float] = None, out=None, lse=None, workspace=None, stream=None):
    """Paged decode attention (vLLM / FlashInfer layout): one new query token per request against a paged KV
    cache. Returns (out, lse).

    q: [B, H, D] bfloat16; k_cache, v_cache: [num_pages, page_size, HK, D] bfloat16 (page_size 16, 32 or 64), or
    both float8_e4m3fn with per-tensor scales k_scale and v_scale (key = k_scale * stored, value = v_scale * stored;
    default 1; vLLM's fp8 KV cache), all contiguous; page_table: int32 [B, max_pages] (key j of request b is row j % page_size of page
    page_table[b, j // page_size]); seq_lens: int32 [B], on the same device. D 64 or 128, H a multiple of HK with
    H // HK <= 64. max_seq_len: the longest seq_lens[b] if the caller knows it (checked against max_pages *
    page_size; it sizes the split over the context), 0 for max_pages * page_size. out: bfloat16 [B, H, D], lse:
    float32 [B, H] (natural log). workspace: any CUDA array of at least attention_decode_workspace_bytes(...)
    bytes (allocated through PyTorch when absent). The page table and lengths are the caller's contract and
    are not read on the host: seq_lens[b] <= max_pages * page_size and the first ceil(seq_lens[b] / page_size)
    entries of row b are pages in [0, num_pages); a request of length 0 gets out = 0 and lse = -inf. Hopper only.
    """
    if isinstance(max_seq_len, bool) or not isinstance(max_seq_len, int):
        raise ValueError(f"max_seq_len must be an int; it is {max_seq_len!r}")
    scale = _softmax_scale(softmax_scale)
    Q, K, V = _view(q, "q"), _view(k_cache, "k_cache"), _view(v_cache, "v_cache")
    _attention_q(Q, 3, "[B, H, D]")
    B, H, D = Q.shape
    if len(K.shape) != 4 or K.shape[3] != D:
        raise ValueError(f"k_cache must be [num_pages, page_size, HK, D] with q's D; q has shape {list(Q.shape)}, k_cache {list(K.shape)}")
    num_pages, page_size, HK = K.shape[0], K.shape[1], K.shape[2]
    dev = Q.index
    fp8 = K.dtype == "float8_e4m3fn"
    if K.dtype not in ("bfloat16", "float8_e4m3fn"):
        raise ValueError(f"k_cache must be bfloat16 or float8_e4m3fn; it is {K.dtype}")
    _need(K, "k_cache", K.dtype, K.shape, dev)
    _need(V, "v_cache", K.dtype, K.shape, dev)
    if not fp8 and (k_scale is not None or v_scale is not None):
        raise ValueError("k_scale and v_scale scale fp8 (float8_e4m3fn) caches; these are bfloat16")
    ks = 1.0 if k_scale is None else float(k_scale)
    vs = 1.0 if v_scale is None else float(v_scale)
    if fp8 and not (math.isfinite(ks) and math.isfinite(vs) and ks > 0 and vs > 0):
        raise ValueError(f"k_scale = {ks} and v_scale = {vs} must be finite and positive")
    if HK < 1 or H % HK:
        raise ValueError(f"q's heads H = {H} must be a multiple of k_cache's heads HK = {HK} (query heads per KV head)")
    P, L_ = _view(page_table, "page_table"), _view(seq_lens, "seq_lens")
    if len(P.shape) != 2 or P.shape[0] != B:
        raise ValueError(f"page_table must be [B, max_pages] with q's B = {B}; it has shape {list(P.shape)}")
    max_pages = P.shape[1]
    _need(P, "page_table", "int32", (B, max_pages), dev)
    _need(L_, "seq_lens", "int32", (B,), dev)
    for A, name, layout in ((Q, "q", "[B, H, D]"), (K, "k_cache", "[num_pages, page_size, HK, D]"), (V, "v_cache", "[num_pages, page_size, HK, D]"),
                            (P, "page_table", "[B, max_pages]"), (L_, "seq_lens", "[B]")):
        _attention_contiguous(A, name, layout, "attention_decode_paged")
    need = attention_decode_workspace_bytes(B, H, HK, D, num_pages, page_size, max_pages, max_seq_len)
    if workspace is None:
        workspace = _new_like(q, (need,), "uint8", "workspace")
    W = _view(workspace, "workspace")
    if W.device != "cuda" or W.index != dev:
        raise ValueError(f"workspace must be on cuda:{dev}")
    size = math.prod(W.shape) * {"uint8": 1, "int8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int64": 8}.get(W.dtype, 1)
    if size < need:
        raise ValueError(f"workspace holds {size} bytes; this decode needs {need} (cake.attention_decode_workspace_bytes)")
    _contiguous(W, "workspace")
    if out is None:
        out = _new_like(q, (B, H, D), "bfloat16", "out")
    O = _view(out, "out")
    _need(O, "out", "bfloat16", (B, H, D), dev)
    _attention_contiguous(O, "out", "[B, H, D]", "attention_decode_paged")
    if lse is None:
        lse = _new_like(q, (B, H), "float32", "lse")
    L = _view(lse, "lse")
    _need(L, "lse", "float32", (B, H), dev)
    _attention_contiguous(L, "lse", "[B, H]", "attention_decode_paged")
    s = _stream(stream, [Q, K, V, P, L_, O, L, W], dev)
    if fp8:
        _cake.attention_decode_paged_fp8(Q.ptr, K.ptr, V.ptr, P.ptr, L_.ptr, O.ptr, L.ptr, W.ptr, B, H, HK, D, num_pages, page_size, max_pages,
                                         max_seq_len, scale, ks, vs, s, dev)
    else:
        _cake.attention_decode_paged(Q.ptr, K.ptr, V.ptr, P.ptr, L_.ptr, O.ptr, L.ptr, W.ptr, B, H, HK, D, num_pages, page_size, max_pages, max_seq_len,
                                     scale, s, dev)
    return out, lse


try:  # PyTorch custom ops, when PyTorch is there
    import torch as _torch  # noqa: F401
except ImportError:
    pass
else:
    from . import _torch_ops  # noqa: F401
