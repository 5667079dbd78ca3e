"""The cake package on a GPU with PyTorch (skipped elsewhere, with the reason): every entry point against a
PyTorch reference in f32 (attention prefill: torch's math SDPA) on fresh random inputs (seed printed; CAKE_SEED reproduces), outputs poisoned
with NaN first, ragged shapes, strided rows; a side stream; CUDA graph capture and replay; torch.compile
of a transformer MLP block written with torch.ops.cake, against the same block in plain PyTorch.
"""
import os
import random
import unittest

import cake

try:
    import torch
except ImportError:
    torch = None

REASON = None
if torch is None:
    REASON = "PyTorch is not installed"
elif not torch.cuda.is_available():
    REASON = "no CUDA device"
elif torch.cuda.get_device_capability(0) != (9, 0):
    REASON = f"the GEMM needs a cc 9.0 device; device 0 is {torch.cuda.get_device_name(0)}"

SEED = int(os.environ.get("CAKE_SEED", random.SystemRandom().randrange(1 << 31)))
print(f"python/tests/test_gpu.py: seed {SEED}")


def rel_err(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


@unittest.skipIf(REASON is not None, f"skipped: {REASON}")
class OnTheGPU(unittest.TestCase):
    def setUp(self):
        self.g = torch.Generator(device="cuda").manual_seed(SEED)

    def randn(self, *shape, scale=1.0, dtype=None):
        return (torch.randn(*shape, device="cuda", generator=self.g) * scale).to(dtype or torch.bfloat16)

    def test_gemm_and_epilogues(self):
        for M, N, K in [(128, 256, 64), (300, 1000, 520), (7, 136, 2000), (4096, 4096, 4096)]:
            a, b = self.randn(M, K), self.randn(N, K)
            bias, rs, cs, res = self.randn(N), self.randn(M, dtype=torch.float32), self.randn(N, dtype=torch.float32), self.randn(M, N)
            acc = a.float() @ b.float().T
            cases = [({}, acc),
                     ({"bias": bias, "activation": "gelu_tanh"}, torch.nn.functional.gelu(acc + bias.float(), approximate="tanh")),
                     ({"bias": bias, "activation": "gelu"}, torch.nn.functional.gelu(acc + bias.float())),
                     ({"row_scale": rs, "col_scale": cs, "residual": res, "activation": "silu"},
                      torch.nn.functional.silu(acc * rs[:, None] * cs[None, :]) + res.float())]
            for kw, want in cases:
                with self.subTest(M=M, N=N, K=K, parts=sorted(kw)):
                    out = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                    self.assertIs(cake.gemm(a, b, out, **kw), out)
                    self.assertTrue(torch.isfinite(out).all().item())
                    self.assertLess(rel_err(out, want), 1e-2)
            self.assertLess(rel_err(cake.gemm(a, b), acc), 1e-2)  # out allocated by cake (through PyTorch)

    def test_gemm_fp8(self):
        M, N, K = 256, 512, 1024
        a, b = self.randn(M, K).to(torch.float8_e4m3fn), self.randn(N, K).to(torch.float8_e4m3fn)
        out = cake.gemm(a, b, scale=0.5)
        self.assertLess(rel_err(out, 0.5 * (a.float() @ b.float().T)), 1e-2)

    def test_gemm_strided_operands(self):
        big_a, big_b = self.randn(100, 264), self.randn(72, 264)
        a, b = big_a[:, :256], big_b[:, :256]  # rows 264 elements apart
        self.assertLess(rel_err(cake.gemm(a, b), a.float() @ b.float().T), 1e-2)

    def test_kmeans_assign(self):
        # Nearest centroid against PyTorch in f32; a choice within 1e-4 of the best distance is accepted
        # (near-ties), every 5th centroid is a copy of the one before and must never be chosen.
        for B, N, K, D, dtype, metric in [(1, 1000, 300, 128, torch.bfloat16, "l2"), (3, 4097, 129, 64, torch.float16, "l2"),
                                          (None, 500, 77, 104, torch.bfloat16, "l2"), (2, 700, 200, 256, torch.float16, "inner_product"),
                                          (1, 600, 130, 128, torch.bfloat16, "cosine")]:
            with self.subTest(B=B, N=N, K=K, D=D, dtype=dtype, metric=metric):
                shape_x, shape_c = ((N, D), (K, D)) if B is None else ((B, N, D), (B, K, D))
                x, c = self.randn(*shape_x, dtype=dtype), self.randn(*shape_c, dtype=dtype)
                c[..., 5::5, :] = c[..., 4:-1:5, :][..., : c[..., 5::5, :].shape[-2], :]
                out = torch.full(shape_x[:-1], -7, dtype=torch.int32, device="cuda")
                self.assertIs(cake.kmeans_assign(x, c, out=out, metric=metric), out)
                xf, cf = x.float(), c.float()
                if metric == "l2":
                    score = cf.square().sum(-1).unsqueeze(-2) - 2 * xf @ cf.transpose(-1, -2)
                elif metric == "inner_product":
                    score = -(xf @ cf.transpose(-1, -2))
                else:
                    score = -(xf @ cf.transpose(-1, -2)) / cf.norm(dim=-1).unsqueeze(-2)
                best = score.min(-1).values
                got = score.gather(-1, out.long().clamp(0, K - 1).unsqueeze(-1)).squeeze(-1)
                self.assertTrue(((out >= 0) & (out < K)).all().item())
                self.assertTrue((got <= best + 1e-4 * (best.abs() + xf.square().sum(-1) + 1)).all().item())
                self.assertFalse(((out % 5 == 0) & (out > 0)).any().item(), "a copy of a centroid was chosen over the original")

    def test_knn_search(self):
        # Exact top-k against a full torch sort of f32 scores: the k-th distance within a tolerance, rows
        # sorted, every 5th database row a copy of the one before (a copy only after its original), k > N.
        for Q, N, D, k, dtype, metric in [(100, 3000, 128, 10, torch.bfloat16, "l2"), (77, 5001, 64, 100, torch.float16, "l2"),
                                          (50, 2000, 104, 32, torch.float16, "inner_product"), (9, 40, 128, 64, torch.bfloat16, "l2")]:
            with self.subTest(Q=Q, N=N, D=D, k=k, dtype=dtype, metric=metric):
                x, y = self.randn(Q, D, dtype=dtype), self.randn(N, D, dtype=dtype)
                y[5::5] = y[4:-1:5][: y[5::5].shape[0]]
                dist = torch.full((Q, k), float("nan"), device="cuda")
                idx = torch.full((Q, k), -7, dtype=torch.int32, device="cuda")
                got_d, got_i = cake.knn_search(x, y, k, metric=metric, distances=dist, indices=idx)
                self.assertIs(got_d, dist)
                self.assertIs(got_i, idx)
                xf, yf = x.float(), y.float()
                score = xf @ yf.T
                if metric == "l2":
                    score = xf.square().sum(1, keepdim=True) + yf.square().sum(1) - 2 * score
                ref = score.sort(1, descending=(metric != "l2")).values
                valid = min(k, N)
                tol = 1e-3 * (xf.square().sum(1, keepdim=True) + yf.square().sum(1).max())
                self.assertTrue(((dist[:, :valid] - ref[:, :valid]).abs() <= tol).all().item())
                self.assertTrue(((idx[:, :valid] >= 0) & (idx[:, :valid] < N)).all().item())
                step = dist[:, 1:valid] - dist[:, : valid - 1]
                self.assertTrue(((step >= 0) if metric == "l2" else (step <= 0)).all().item())
                if k > N:
                    self.assertTrue((idx[:, N:] == -1).all().item())
                    self.assertTrue(torch.isinf(dist[:, N:]).all().item())
                for q in range(Q):
                    row = idx[q, :valid].tolist()
                    for j, n in enumerate(row):
                        if n > 0 and n % 5 == 0:
                            self.assertIn(n - 1, row[:j], "a copy of a database row came before (or without) its original")
        # The custom op, eagerly and compiled.
        x, y = self.randn(64, 128), self.randn(1000, 128)
        d_op, i_op = torch.ops.cake.knn_search(x, y, 16)
        d_py, i_py = cake.knn_search(x, y, 16)
        self.assertTrue(torch.equal(d_op, d_py) and torch.equal(i_op, i_py))
        d_c, i_c = torch.compile(lambda a, b: torch.ops.cake.knn_search(a, b, 16), fullgraph=True)(x, y)
        self.assertTrue(torch.equal(d_c, d_py) and torch.equal(i_c, i_py))

    def test_kmeans_update_and_fit(self):
        # update: means of the assigned points (empty clusters keep theirs); fit: separated blobs found.
        B, N, K, D = 2, 5000, 32, 64
        x = self.randn(B, N, D)
        c = self.randn(B, K, D)
        idx = torch.randint(0, K - 3, (B, N), device="cuda", generator=self.g, dtype=torch.int32)  # 3 empty clusters
        old = c.clone()
        _, c_norm, shift = cake.kmeans_update(x, idx, c)
        sums = torch.stack([torch.zeros(K, D, device="cuda").index_add_(0, idx[b].long(), x[b].float()) for b in range(B)])
        counts = torch.stack([torch.bincount(idx[b].long(), minlength=K) for b in range(B)]).float()
        want = torch.where(counts[..., None] > 0, sums / counts.clamp_min(1)[..., None], old.float())
        self.assertLess(rel_err(c, want), 1e-2)
        self.assertTrue(torch.equal(c[:, K - 3:], old[:, K - 3:]))
        self.assertLess(rel_err(c_norm, c.float().square().sum(-1)), 1e-4)
        self.assertLess(rel_err(shift, (c.float() - old.float()).square().sum(-1)), 1e-3)
        # the sorted update: the same means (up to the f32 sums' order)
        c_sorted = old.clone()
        _, n_sorted, _ = cake.kmeans_update(x, idx, c_sorted, method="sorted")
        self.assertLess(rel_err(c_sorted, want), 1e-2)
        self.assertTrue(torch.equal(c_sorted[:, K - 3:], old[:, K - 3:]))
        self.assertLess(rel_err(n_sorted, c_sorted.float().square().sum(-1)), 1e-4)
        centres = self.randn(B, K, D, scale=20.0, dtype=torch.float32)
        blob = torch.randint(0, K, (B, N), device="cuda", generator=self.g)
        pts = (centres.gather(1, blob[..., None].expand(-1, -1, D)) + 0.3 * torch.randn(B, N, D, device="cuda", generator=self.g)).to(torch.bfloat16)
        start = (centres + 0.3 * torch.randn(B, K, D, device="cuda", generator=self.g)).to(torch.bfloat16)
        got, _, last_shift = cake.kmeans_fit(pts, start, 6)
        self.assertTrue(torch.equal(got.long(), blob))
        self.assertLess(last_shift.max().item(), 0.1)
        # step: the indices of kmeans_assign and the means of kmeans_update, in one call
        c1, c2 = old.clone(), old.clone()
        want_idx = cake.kmeans_assign(x, c1)
        want_c, _, want_shift = cake.kmeans_update(x, want_idx, c1)
        got_idx, got_c, got_norm, got_shift = cake.kmeans_step(x, c2)
        self.assertTrue(torch.equal(got_idx, want_idx))
        self.assertLess(rel_err(got_c, want_c), 1e-2)
        self.assertLess(rel_err(got_norm, got_c.float().square().sum(-1)), 1e-4)
        self.assertLess(rel_err(got_shift, want_shift), 1e-2)

    def test_kmeans_deterministic_init_and_fit_until(self):
        # deterministic=True: two updates, and the points in another order, give the same centroid bits (bf16:
        # max |x| taken from x); init_random picks rows of x (the same for the same seed); fit_until stops
        # below its cap on separated blobs with every last shift within the tolerance.
        B, N, K, D = 2, 5000, 16, 64
        x = self.randn(B, N, D, dtype=torch.bfloat16)
        c0 = self.randn(B, K, D, dtype=torch.bfloat16)
        idx = cake.kmeans_assign(x, c0)
        a, _, _ = cake.kmeans_update(x, idx, c0.clone(), deterministic=True)
        b, _, _ = cake.kmeans_update(x, idx, c0.clone(), deterministic=True)
        perm = torch.randperm(N, device="cuda", generator=self.g)
        c, _, _ = cake.kmeans_update(x[:, perm].contiguous(), idx[:, perm].contiguous(), c0.clone(), deterministic=True)
        self.assertTrue(torch.equal(a, b))
        self.assertTrue(torch.equal(a, c))
        init = cake.kmeans_init_random(x, K, seed=3)
        self.assertTrue(torch.equal(init, cake.kmeans_init_random(x, K, seed=3)))
        for bb in range(B):  # every initial centroid is a row of its batch entry
            self.assertTrue(bool((init[bb][:, None, :] == x[bb][None]).all(-1).any(-1).all()))
        centres = self.randn(B, K, D, scale=20.0, dtype=torch.float32)
        blob = torch.randint(0, K, (B, N), device="cuda", generator=self.g)
        pts = (centres.gather(1, blob[..., None].expand(-1, -1, D)) + 0.3 * torch.randn(B, N, D, device="cuda", generator=self.g)).to(torch.bfloat16)
        _, _, shift, run = cake.kmeans_fit_until(pts, cake.kmeans_init_random(pts, K, seed=1), 50, 0.01)
        self.assertLess(run, 50)
        self.assertLessEqual(shift.max().sqrt().item(), 0.01)

    def test_kmeans_ops_eager_compiled_and_captured(self):
        # torch.ops.cake.kmeans_update / kmeans_fit update their buffers in place: the same results as the plain
        # functions, eager, under torch.compile (fullgraph) and replayed from a CUDA graph. Not bit for bit: the
        # sums are f32 atomics, whose order varies between runs (docs/kmeans.md).
        B, N, K, D = 2, 3000, 48, 128
        x, c0 = self.randn(B, N, D, dtype=torch.float16), self.randn(B, K, D, dtype=torch.float16)
        ws = torch.empty(cake.kmeans_update_workspace_bytes(B, K, D), dtype=torch.uint8, device="cuda")
        idx = cake.kmeans_assign(x, c0)
        want_c, want_norm, want_shift = cake.kmeans_update(x, idx, c0.clone())

        def step(c, norm, shift):
            torch.ops.cake.kmeans_update(x, idx, c, norm, shift, ws, "l2")

        for run in (step, torch.compile(step, fullgraph=True)):
            c, norm, shift = c0.clone(), torch.full((B, K), float("nan"), device="cuda"), torch.full((B, K), float("nan"), device="cuda")
            run(c, norm, shift)
            self.assertLess(rel_err(c, want_c), 1e-3)
            self.assertLess(rel_err(norm, want_norm), 1e-3)
            self.assertLess(rel_err(shift, want_shift), 1e-2)
        # kmeans_step as an op: the indices of kmeans_assign, the means of kmeans_update
        sc, sidx = c0.clone(), torch.full((B, N), -1, dtype=torch.int32, device="cuda")
        snorm, sshift = c0.float().square().sum(-1), torch.full((B, K), float("nan"), device="cuda")
        torch.ops.cake.kmeans_step(x, sc, sidx, snorm, sshift, ws, "l2")
        self.assertTrue(torch.equal(sidx, idx))
        self.assertLess(rel_err(sc, want_c), 1e-3)
        self.assertLess(rel_err(sshift, want_shift), 1e-2)
        fit = [c0.clone(), torch.empty(B, N, dtype=torch.int32, device="cuda"), torch.empty(B, K, device="cuda"), torch.empty(B, K, device="cuda")]
        want_idx, want_fit, _ = cake.kmeans_fit(x, c0.clone(), 3)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: compiles
            torch.ops.cake.kmeans_fit(x, fit[0], 3, fit[1], fit[2], fit[3], ws, "l2")
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            torch.ops.cake.kmeans_fit(x, fit[0], 3, fit[1], fit[2], fit[3], ws, "l2")
        fit[0].copy_(c0)
        fit[1].fill_(-1)
        graph.replay()
        torch.cuda.synchronize()
        self.assertLess(rel_err(fit[0], want_fit), 1e-2)
        self.assertGreater((fit[1] == want_idx).float().mean().item(), 0.99)

    def test_attention_prefill(self):
        # Against torch's math SDPA in f32 (GQA: k, v repeated per query head for the reference); out and lse
        # poisoned with NaN first; ragged S; S != T; causal masks top-left aligned (is_causal).
        from torch.nn.attention import SDPBackend, sdpa_kernel
        for B, S, T, H, HK, D, causal in [(1, 128, 128, 4, 4, 128, False), (2, 127, 127, 8, 2, 64, True), (1, 1000, 1000, 32, 8, 128, True),
                                          (3, 1000, 1000, 4, 1, 64, False), (1, 127, 1000, 8, 8, 128, False), (2, 300, 300, 16, 4, 128, True),
                                          (1, 500, 500, 8, 2, 256, True), (2, 200, 333, 4, 4, 256, False)]:  # (D 256: Hopper only)
            if D == 256 and torch.cuda.get_device_capability() != (9, 0):
                continue
            for scale in (None, 0.05):
                with self.subTest(B=B, S=S, T=T, H=H, HK=HK, D=D, causal=causal, scale=scale):
                    q, k, v = self.randn(B, S, H, D), self.randn(B, T, HK, D), self.randn(B, T, HK, D)
                    out = torch.full((B, S, H, D), float("nan"), dtype=torch.bfloat16, device="cuda")
                    lse = torch.full((B, H, S), float("nan"), dtype=torch.float32, device="cuda")
                    got, got_lse = cake.attention_prefill(q, k, v, causal=causal, softmax_scale=scale, out=out, lse=lse)
                    self.assertIs(got, out)
                    self.assertIs(got_lse, lse)
                    qf = q.float().transpose(1, 2)                                   # [B, H, S, D]
                    kf = k.float().transpose(1, 2).repeat_interleave(H // HK, dim=1)  # [B, H, T, D]
                    vf = v.float().transpose(1, 2).repeat_interleave(H // HK, dim=1)
                    sc = scale if scale is not None else D ** -0.5
                    with sdpa_kernel(SDPBackend.MATH):
                        want = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=causal, scale=sc).transpose(1, 2)
                    logits = (qf @ kf.transpose(-1, -2)) * sc
                    if causal:
                        logits = logits.masked_fill(torch.ones(S, T, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
                    want_lse = torch.logsumexp(logits, dim=-1)
                    self.assertTrue(torch.isfinite(out).all().item())
                    self.assertTrue(torch.isfinite(lse).all().item())
                    self.assertLess(rel_err(out, want), 2e-2)
                    self.assertLess((lse - want_lse).abs().max().item(), 1e-3)
        q, k = self.randn(2, 256, 8, 64), self.randn(2, 256, 2, 64)
        o, l = cake.attention_prefill(q, k, k, causal=True)  # outputs allocated through PyTorch
        self.assertEqual((tuple(o.shape), o.dtype, tuple(l.shape), l.dtype), ((2, 256, 8, 64), torch.bfloat16, (2, 8, 256), torch.float32))
        o2, l2 = torch.ops.cake.attention_prefill(q, k, k, True, None)  # the custom op: same kernel, same bits
        self.assertTrue(torch.equal(o, o2) and torch.equal(l, l2))

    def paged_table(self, lens, ps):
        """A page table over a shuffled pool (2 pages no request owns): (B, pages per request, pool size, table)."""
        B, max_pages = len(lens), (max(lens) + ps - 1) // ps
        need = [(n + ps - 1) // ps for n in lens]
        num_pages = sum(need) + 2
        perm = torch.randperm(num_pages, device="cuda", generator=self.g).to(torch.int32)
        table = torch.full((B, max_pages), -1, dtype=torch.int32, device="cuda")
        at = 0
        for b, n in enumerate(need):
            table[b, :n] = perm[at:at + n]
            at += n
        return B, need, num_pages, table

    def test_attention_decode_paged(self):
        # Against f32 attention over each request's keys gathered through a shuffled page table; out and lse
        # poisoned with NaN first; mixed lengths in one batch; pages of 16 and 64; GQA 4; the torch op gives
        # the same bits.
        for ps, H, HK, D in [(16, 32, 8, 128), (64, 8, 2, 64)]:
            with self.subTest(page_size=ps, H=H, HK=HK, D=D):
                lens = [1, 7, 127, 1000, 4097]
                B, need, num_pages, table = self.paged_table(lens, ps)
                kc, vc, q = self.randn(num_pages, ps, HK, D), self.randn(num_pages, ps, HK, D), self.randn(B, H, D)
                seq = torch.tensor(lens, dtype=torch.int32, device="cuda")
                out = torch.full((B, H, D), float("nan"), dtype=torch.bfloat16, device="cuda")
                lse = torch.full((B, H), float("nan"), dtype=torch.float32, device="cuda")
                got, got_lse = cake.attention_decode_paged(q, kc, vc, table, seq, out=out, lse=lse)
                self.assertIs(got, out)
                for b, n in enumerate(lens):
                    rows = table[b, :need[b]].long()
                    kb = kc[rows].reshape(-1, HK, D)[:n].float().repeat_interleave(H // HK, dim=1)  # [n, H, D]
                    vb = vc[rows].reshape(-1, HK, D)[:n].float().repeat_interleave(H // HK, dim=1)
                    logits = torch.einsum("hd,nhd->hn", q[b].float(), kb) * D ** -0.5
                    want = torch.einsum("hn,nhd->hd", torch.softmax(logits, dim=-1), vb)
                    self.assertLess(rel_err(out[b], want), 2e-2)
                    self.assertLess((lse[b] - torch.logsumexp(logits, dim=-1)).abs().max().item(), 1e-3)
                o2, l2 = torch.ops.cake.attention_decode_paged(q, kc, vc, table, seq, 0, None)
                self.assertTrue(torch.equal(out, o2) and torch.equal(lse, l2))

    def test_attention_decode_paged_fp8(self):
        # fp8 (float8_e4m3fn) caches with per-tensor scales against f32 attention over the dequantized keys and
        # values (key = k_scale * stored); mixed lengths, a shuffled page table, GQA 4; the torch op gives the same bits
        ps, H, HK, D = 16, 32, 8, 128
        lens = [1, 7, 127, 1000, 4097]
        B, need, num_pages, table = self.paged_table(lens, ps)
        ks, vs = 1.0 / 64, 1.0 / 32
        kc = (self.randn(num_pages, ps, HK, D).float() / ks).to(torch.float8_e4m3fn)
        vc = (self.randn(num_pages, ps, HK, D).float() / vs).to(torch.float8_e4m3fn)
        q = self.randn(B, H, D)
        seq = torch.tensor(lens, dtype=torch.int32, device="cuda")
        out, lse = cake.attention_decode_paged(q, kc, vc, table, seq, k_scale=ks, v_scale=vs)
        for b, n in enumerate(lens):
            rows = table[b, :need[b]].long()
            kb = (kc[rows].float() * ks).reshape(-1, HK, D)[:n].repeat_interleave(H // HK, dim=1)
            vb = (vc[rows].float() * vs).reshape(-1, HK, D)[:n].repeat_interleave(H // HK, dim=1)
            logits = torch.einsum("hd,nhd->hn", q[b].float(), kb) * D ** -0.5
            want = torch.einsum("hn,nhd->hd", torch.softmax(logits, dim=-1), vb)
            self.assertLess(rel_err(out[b], want), 2e-2)
            self.assertLess((lse[b] - torch.logsumexp(logits, dim=-1)).abs().max().item(), 1e-3)
        o2, l2 = torch.ops.cake.attention_decode_paged(q, kc, vc, table, seq, 0, None, ks, vs)
        self.assertTrue(torch.equal(out, o2) and torch.equal(lse, l2))

    def test_softmax_and_rmsnorm(self):
        for shape in [(1, 128), (37, 1000), (2, 3, 4096), (5, 16384)]:
            x = self.randn(*shape, scale=3.0)
            w = self.randn(shape[-1])
            with self.subTest(shape=shape):
                y = cake.softmax(x)
                self.assertEqual(y.shape, x.shape)
                self.assertLess(rel_err(y, torch.softmax(x.float(), dim=-1)), 1e-2)
                r = cake.rmsnorm(x, w, 1e-6)
                xf = x.float()
                want = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(torch.bfloat16).float() * w.float()
                self.assertLess(rel_err(r, want), 1e-2)
        big = self.randn(64, 1032)
        x = big[:, :1000]  # padded rows: one row stride for x and out
        out = torch.empty_strided(x.shape, x.stride(), dtype=torch.bfloat16, device="cuda")
        cake.softmax(x, out)
        self.assertLess(rel_err(out, torch.softmax(x.float(), -1)), 1e-2)
        inplace = x.clone()
        cake.softmax(inplace, inplace)
        self.assertLess(rel_err(inplace, torch.softmax(x.float(), -1)), 1e-2)

    def test_side_stream(self):
        a, b = self.randn(512, 512), self.randn(512, 512)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            out = cake.gemm(a, b)  # on s: PyTorch's current stream inside the block
        explicit = torch.empty(512, 512, dtype=torch.bfloat16, device="cuda")
        cake.gemm(a, b, explicit, stream=s)
        s.synchronize()
        want = a.float() @ b.float().T
        self.assertLess(rel_err(out, want), 1e-2)
        self.assertLess(rel_err(explicit, want), 1e-2)

    def test_cuda_graph_capture_and_replay(self):
        a, b, bias = self.randn(256, 512), self.randn(384, 512), self.randn(384)
        out = torch.empty(256, 384, dtype=torch.bfloat16, device="cuda")
        probs = torch.empty_like(out)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: the first calls compile
            cake.gemm(a, b, out, bias=bias, activation="gelu_tanh")
            cake.softmax(out, probs)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            cake.gemm(a, b, out, bias=bias, activation="gelu_tanh")
            cake.softmax(out, probs)
        for _ in range(3):
            a.copy_(self.randn(256, 512))
            graph.replay()
            torch.cuda.synchronize()
            h = torch.nn.functional.gelu(a.float() @ b.float().T + bias.float(), approximate="tanh")
            self.assertLess(rel_err(out, h), 1e-2)
            self.assertLess(rel_err(probs, torch.softmax(out.float(), -1)), 1e-2)

    def test_compiled_mlp_block(self):
        d, hidden, tokens = 1024, 4096, 333
        w1, b1, w2, b2 = self.randn(hidden, d, scale=0.03), self.randn(hidden), self.randn(d, hidden, scale=0.02), self.randn(d)
        x = self.randn(tokens, d)

        def cake_block(x):
            h = torch.ops.cake.gemm(x, w1, bias=b1, activation="gelu_tanh")
            return torch.ops.cake.gemm(h, w2, bias=b2, residual=x)

        def torch_block(x):
            h = torch.nn.functional.gelu(torch.nn.functional.linear(x.float(), w1.float(), b1.float()), approximate="tanh").to(torch.bfloat16)
            return (torch.nn.functional.linear(h.float(), w2.float(), b2.float()) + x.float())

        compiled = torch.compile(cake_block, fullgraph=True)
        self.assertLess(rel_err(compiled(x), torch_block(x)), 2e-2)
        self.assertLess(rel_err(cake_block(x), torch_block(x)), 2e-2)


if __name__ == "__main__":
    unittest.main()
