"""torch.ops.cake.{gemm, softmax, rmsnorm, attention_prefill, attention_prefill_varlen, attention_decode_paged, kmeans_assign, kmeans_update,
kmeans_step, kmeans_fit, knn_search}: cake's entry points as PyTorch custom ops, each with a fake (meta) implementation that gives
the output's shape, dtype and strides (or, for an op that updates buffers in place, checks them) without running
anything, so that they trace under torch.compile and record under CUDA graph capture. Imported by cake when
PyTorch is installed; the ops run on PyTorch's current stream. kmeans_update, kmeans_step and kmeans_fit update the caller's
buffers in place and return nothing (declared through mutates_args, so torch.compile orders them correctly);
every buffer is an argument, none is allocated inside."""
from typing import Optional, Tuple

import torch

from . import (attention_decode_paged as _attention_decode_paged, attention_prefill as _attention_prefill, attention_prefill_varlen as _attention_prefill_varlen, gemm as _gemm,
               kmeans_assign as _kmeans_assign, kmeans_fit as _kmeans_fit, kmeans_step as _kmeans_step, kmeans_update as _kmeans_update,
               knn_search as _knn_search,
               rmsnorm as _rmsnorm, softmax as _softmax)


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


@torch.library.custom_op("cake::attention_prefill_varlen", mutates_args=())
def attention_prefill_varlen(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor, cu_seqlens_k: torch.Tensor,
                             max_seqlen_q: int, causal: bool = False, softmax_scale: Optional[float] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _attention_prefill_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal=causal, softmax_scale=softmax_scale)


@attention_prefill_varlen.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal=False, softmax_scale=None):
    torch._check(q.dim() == 3 and k.dim() == 3 and v.dim() == 3 and cu_seqlens_q.dim() == 1 and cu_seqlens_k.dim() == 1,
                 lambda: "cake::attention_prefill_varlen: q is [total_q, H, D], k and v [total_k, HK, D], cu_seqlens [B + 1]")
    total_q, H, D = q.shape
    return q.new_empty((total_q, H, D), dtype=torch.bfloat16), q.new_empty((H, total_q), dtype=torch.float32)


@torch.library.custom_op("cake::attention_decode_paged", mutates_args=())
def attention_decode_paged(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, page_table: torch.Tensor, seq_lens: torch.Tensor,
                           max_seq_len: int = 0, softmax_scale: Optional[float] = None, k_scale: Optional[float] = None,
                           v_scale: Optional[float] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _attention_decode_paged(q, k_cache, v_cache, page_table, seq_lens, max_seq_len=max_seq_len, softmax_scale=softmax_scale, k_scale=k_scale,
                                   v_scale=v_scale)


@attention_decode_paged.register_fake
def _(q, k_cache, v_cache, page_table, seq_lens, max_seq_len=0, softmax_scale=None, k_scale=None, v_scale=None):
    torch._check(q.dim() == 3 and k_cache.dim() == 4 and v_cache.dim() == 4 and page_table.dim() == 2 and seq_lens.dim() == 1,
                 lambda: "cake::attention_decode_paged: q is [B, H, D], k_cache and v_cache [num_pages, page_size, HK, D], "
                         "page_table [B, max_pages], seq_lens [B]")
    B, H, D = q.shape
    return q.new_empty((B, H, D), dtype=torch.bfloat16), q.new_empty((B, H), dtype=torch.float32)


@torch.library.custom_op("cake::kmeans_assign", mutates_args=())
def kmeans_assign(x: torch.Tensor, centroids: torch.Tensor, c_norm: Optional[torch.Tensor] = None, metric: str = "l2") -> torch.Tensor:
    return _kmeans_assign(x, centroids, c_norm, metric=metric)


@kmeans_assign.register_fake
def _(x, centroids, c_norm=None, metric="l2"):
    torch._check(x.dim() in (2, 3) and x.dim() == centroids.dim() and x.shape[-1] == centroids.shape[-1],
                 lambda: "cake::kmeans_assign: x is [B, N, D] or [N, D], centroids [B, K, D] or [K, D]")
    return x.new_empty(tuple(x.shape[:-1]), dtype=torch.int32)


def _check_kmeans_buffers(op, x, centroids, idx, c_norm, shift):
    torch._check(x.dim() in (2, 3) and x.dim() == centroids.dim() and x.shape[-1] == centroids.shape[-1],
                 lambda: f"{op}: x is [B, N, D] or [N, D], centroids [B, K, D] or [K, D]")
    torch._check(tuple(idx.shape) == tuple(x.shape[:-1]), lambda: f"{op}: idx must have x's shape without D, {tuple(x.shape[:-1])}")
    for name, t in (("c_norm", c_norm), ("shift", shift)):
        torch._check(t is None or tuple(t.shape) == tuple(centroids.shape[:-1]),
                     lambda: f"{op}: {name} must have centroids' shape without D, {tuple(centroids.shape[:-1])}")


@torch.library.custom_op("cake::kmeans_update", mutates_args=("centroids", "c_norm", "shift", "workspace"))
def kmeans_update(x: torch.Tensor, idx: torch.Tensor, centroids: torch.Tensor, c_norm: Optional[torch.Tensor], shift: torch.Tensor,
                  workspace: torch.Tensor, metric: str = "l2", deterministic: bool = False, max_abs: float = 0.0) -> None:
    # deterministic with bfloat16 and max_abs 0: max |x| from x (a host synchronization: pass max_abs when capturing)
    _kmeans_update(x, idx, centroids, c_norm, shift, workspace=workspace, metric=metric, deterministic=deterministic,
                   max_abs=max_abs if max_abs > 0 else None)


@kmeans_update.register_fake
def _(x, idx, centroids, c_norm, shift, workspace, metric="l2", deterministic=False, max_abs=0.0):
    _check_kmeans_buffers("cake::kmeans_update", x, centroids, idx, c_norm, shift)
    torch._check(c_norm is not None or metric == "inner_product", lambda: "cake::kmeans_update: c_norm is needed unless metric is inner_product")


@torch.library.custom_op("cake::kmeans_step", mutates_args=("centroids", "idx", "c_norm", "shift", "workspace"))
def kmeans_step(x: torch.Tensor, centroids: torch.Tensor, idx: torch.Tensor, c_norm: Optional[torch.Tensor], shift: torch.Tensor,
                workspace: torch.Tensor, metric: str = "l2") -> None:
    # c_norm holds the centroids' norms on entry (as for kmeans_assign) and their new norms on return
    _kmeans_step(x, centroids, c_norm, idx=idx, shift=shift, workspace=workspace, metric=metric)


@kmeans_step.register_fake
def _(x, centroids, idx, c_norm, shift, workspace, metric="l2"):
    _check_kmeans_buffers("cake::kmeans_step", x, centroids, idx, c_norm, shift)
    torch._check(c_norm is not None or metric == "inner_product", lambda: "cake::kmeans_step: c_norm is needed unless metric is inner_product")


@torch.library.custom_op("cake::kmeans_fit", mutates_args=("centroids", "idx", "c_norm", "shift", "workspace"))
def kmeans_fit(x: torch.Tensor, centroids: torch.Tensor, iterations: int, idx: torch.Tensor, c_norm: torch.Tensor, shift: torch.Tensor,
               workspace: torch.Tensor, metric: str = "l2", deterministic: bool = False, max_abs: float = 0.0) -> None:
    _kmeans_fit(x, centroids, iterations, metric=metric, idx=idx, c_norm=c_norm, shift=shift, workspace=workspace, deterministic=deterministic,
                max_abs=max_abs if max_abs > 0 else None)


@kmeans_fit.register_fake
def _(x, centroids, iterations, idx, c_norm, shift, workspace, metric="l2", deterministic=False, max_abs=0.0):
    _check_kmeans_buffers("cake::kmeans_fit", x, centroids, idx, c_norm, shift)
    torch._check(iterations >= 1, lambda: "cake::kmeans_fit: iterations must be >= 1")


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
