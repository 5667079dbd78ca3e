"""One cuDNN SDPA forward (PyTorch, the cuDNN backend) on an issue-12 prefill shape, after warm-up calls: for ncu
(bench/h200/session.sh prefillncu). Usage: python3 sdpa_one.py S D causal(0/1) [HK]"""
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

S, D, causal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
HK = int(sys.argv[4]) if len(sys.argv) > 4 else 32
B, H = 16384 // S, 32
q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
k = torch.randn(B, HK, S, D, device="cuda", dtype=torch.bfloat16)
v = torch.randn(B, HK, S, D, device="cuda", dtype=torch.bfloat16)
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for _ in range(3):
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=HK != H)
    torch.cuda.synchronize()
print("ok", tuple(o.shape))
