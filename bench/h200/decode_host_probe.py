"""Where the host time of one cake.attention_decode_paged call goes (issue 12 decode, small batches): the wrapper,
the extension call alone, and PyTorch SDPA, as wall time per call over calls enqueued back to back; then a
cProfile of the wrapper. Run on the H200 with the package built (bench/h200/session.sh decode)."""
import cProfile
import os
import pstats
import sys

import torch

import cake
from cake import _cake

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
import bench_peers  # noqa: E402  (the benches' own host-time measure, host_us)

bench_peers.torch = torch  # (bench_peers imports torch in its main(), so that --help needs none)
host_us = bench_peers.host_us


B, ctx, H, HK, D, ps = 1, 1024, 32, 8, 128, 16
mp = ctx // ps
kc = torch.randn(B * mp, ps, HK, D, device="cuda").to(torch.bfloat16)
vc = torch.randn_like(kc)
table = torch.randperm(B * mp, device="cuda").to(torch.int32).view(B, mp)
lens = torch.full((B,), ctx, dtype=torch.int32, device="cuda")
q = torch.randn(B, H, D, device="cuda").to(torch.bfloat16)
out = torch.empty(B, H, D, dtype=torch.bfloat16, device="cuda")
lse = torch.empty(B, H, dtype=torch.float32, device="cuda")
ws = torch.empty(cake.attention_decode_workspace_bytes(B, H, HK, D, B * mp, ps, mp, ctx), dtype=torch.uint8, device="cuda")
wrapper = lambda: cake.attention_decode_paged(q, kc, vc, table, lens, max_seq_len=ctx, out=out, lse=lse, workspace=ws)
s = torch.cuda.current_stream().cuda_stream
args = (q.data_ptr(), kc.data_ptr(), vc.data_ptr(), table.data_ptr(), lens.data_ptr(), out.data_ptr(), lse.data_ptr(), ws.data_ptr(), B, H, HK, D,
        B * mp, ps, mp, ctx, 1.0 / D ** 0.5, s, 0)
direct = lambda: _cake.attention_decode_paged(*args)
op = lambda: torch.ops.cake.attention_decode_paged(q, kc, vc, table, lens, ctx, None)
kd = kc[table.long()].reshape(B, ctx, HK, D).transpose(1, 2).contiguous()
vd = vc[table.long()].reshape(B, ctx, HK, D).transpose(1, 2).contiguous()
sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(q.view(B, H, 1, D), kd, vd, enable_gqa=True)
for name, fn in (("wrapper", wrapper), ("extension call", direct), ("torch op", op), ("sdpa", sdpa)):
    try:
        print(f"{name:16s} host {host_us(fn, 2000):7.1f} us/call (at least the GPU's time per call)")
    except Exception as e:
        print(f"{name:16s} error {type(e).__name__}: {str(e)[:200]}")
pr = cProfile.Profile()
pr.enable()
for _ in range(500):
    wrapper()
pr.disable()
torch.cuda.synchronize()
pstats.Stats(pr).sort_stats("tottime").print_stats(14)
