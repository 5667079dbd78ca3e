"""torch.ops.cake.{gemm, softmax, rmsnorm}: cake's entry points as PyTorch custom ops, each with a fake
(meta) implementation that gives the output's shape, dtype and strides without running anything, so that
they trace under torch.compile and record under CUDA graph capture. Imported by cake when PyTorch is
installed; the ops run on PyTorch's current stream."""
from typing import Optional

import torch

from . import gemm as _gemm, rmsnorm as _rmsnorm, softmax as _softmax


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
