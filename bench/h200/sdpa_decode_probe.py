# The peer's decode kernel alone, for ncu: PyTorch SDPA (default backend choice, cuDNN on the H200 at these
# shapes) on a contiguous [B, HK, ctx, D] bf16 K/V with one query token per request and GQA, as
# bench_peers.py --family attention_decode times it. Usage: python3 sdpa_decode_probe.py B ctx [H HK]
import sys

import torch
import torch.nn.functional as F

B, ctx = int(sys.argv[1]), int(sys.argv[2])
H, HK = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (32, 8)
D = 128
q = torch.randn(B, H, 1, D, device="cuda", dtype=torch.bfloat16)
k = torch.randn(B, HK, ctx, D, device="cuda", dtype=torch.bfloat16)
v = torch.randn(B, HK, ctx, D, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    o = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
torch.cuda.synchronize()
print("sdpa decode probe", B, ctx, H, HK, tuple(o.shape))
