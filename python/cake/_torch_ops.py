"""torch.ops.cake.{gemm, softmax, rmsnorm, attention_prefill, kmeans_assign, knn_search}: cake's entry points as PyTorch custom ops, each with a fake
(meta) implementation that gives the output's shape, dtype and strides without running anything, so that
they trace under torch.compile and record under CUDA graph capture. Imported by cake when PyTorch is
installed; the ops run on PyTorch's current stream. kmeans_update and kmeans_fit are not ops: they update the
caller's centroid buffers in place (call them outside a compiled region)."""
from typing import Optional, Tuple

import torch

from . import attention_prefill as _attention_prefill, gemm as _gemm, kmeans_assign as _kmeans_assign, knn_search as _knn_search, rmsnorm as _rmsnorm, softmax as _softmax


@torch.library.custom_op("cake::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor] = None, row_scale: Optional[torch.Tensor] = None,
         col_scale: Optional[torch.Tensor] = None, residual: Optional[torch.Tensor] = None, activation: str = "none",
         scale: float = 1.0) -> torch.Tensor:
    return _gemm(a, b, bias=bias, row_scale=row_scale, col_scale=col_scale, residual=residual, activation=activation, scale=scale)


@gemm.register_fake
def _(a, b, bias=None, row_scale=None, col_scale=None, residual=None, activation="none", scale=1.0):
    torch._check(a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[1], lambda: "cake::gemm: a is [M, K], b is [N, K]")
    return a.new_empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16)


@torch.library.custom_op("cake::softmax", mutates_args=())
def softmax(x: torch.Tensor) -> torch.Tensor:
    return _softmax(x)


@softmax.register_fake
def _(x):
    return torch.empty_strided(x.shape, x.stride(), dtype=torch.bfloat16, device=x.device)


@torch.library.custom_op("cake::rmsnorm", mutates_args=())
def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return _rmsnorm(x, weight, eps)


@rmsnorm.register_fake
def _(x, weight, eps=1e-6):
    return torch.empty_strided(x.shape, x.stride(), dtype=torch.bfloat16, device=x.device)


@torch.library.custom_op("cake::attention_prefill", mutates_args=())
def attention_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                      softmax_scale: Optional[float] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _attention_prefill(q, k, v, causal=causal, softmax_scale=softmax_scale)


@attention_prefill.register_fake
def _(q, k, v, causal=False, softmax_scale=None):
    torch._check(q.dim() == 4 and k.dim() == 4 and v.dim() == 4, lambda: "cake::attention_prefill: q is [B, S, H, D], k and v [B, T, HK, D]")
    B, S, H, D = q.shape
    return q.new_empty((B, S, H, D), dtype=torch.bfloat16), q.new_empty((B, H, S), dtype=torch.float32)


@torch.library.custom_op("cake::kmeans_assign", mutates_args=())
def kmeans_assign(x: torch.Tensor, centroids: torch.Tensor, c_norm: Optional[torch.Tensor] = None, metric: str = "l2") -> torch.Tensor:
    return _kmeans_assign(x, centroids, c_norm, metric=metric)


@kmeans_assign.register_fake
def _(x, centroids, c_norm=None, metric="l2"):
    torch._check(x.dim() in (2, 3) and x.dim() == centroids.dim() and x.shape[-1] == centroids.shape[-1],
                 lambda: "cake::kmeans_assign: x is [B, N, D] or [N, D], centroids [B, K, D] or [K, D]")
    return x.new_empty(tuple(x.shape[:-1]), dtype=torch.int32)


@torch.library.custom_op("cake::knn_search", mutates_args=())
def knn_search(queries: torch.Tensor, database: torch.Tensor, k: int, metric: str = "l2") -> Tuple[torch.Tensor, torch.Tensor]:
    return _knn_search(queries, database, k, metric=metric)


@knn_search.register_fake
def _(queries, database, k, metric="l2"):
    torch._check(queries.dim() == 2 and database.dim() == 2 and queries.shape[1] == database.shape[1],
                 lambda: "cake::knn_search: queries are [Q, D], database [N, D]")
    torch._check(1 <= k <= 256, lambda: f"cake::knn_search: k = {k} must be in 1 .. 256")
    Q = queries.shape[0]
    return queries.new_empty((Q, k), dtype=torch.float32), queries.new_empty((Q, k), dtype=torch.int32)
