#!/usr/bin/env python3
"""Same-process peer bench: Cake (through the cake package) and Python peers on the same buffers.

Method: CUDA events around each run, the L2 flushed (a 256 MiB buffer written) before every run, Cake and
the peer alternating in rounds, median of --runs runs each, after a warm-up. Rows are checked against the
peer (relative error) before they are timed. Writes the results JSON of docs/benchmarks.md.

Families:
  gemm      cake.gemm vs torch.matmul (a @ b.T, cuBLAS) on the six bf16 shapes of bench/results/h200/gemm.json
  kmeans    cake.kmeans_assign, and one Lloyd iteration (cake.kmeans_step), vs flash-kmeans 0.3.1 (Triton; euclid_assign_triton with its H200 heuristic configs) on
            the four shapes of issue 13 (fp16 and bf16, tuned: the schedule was written for them) and two held-out
            shapes; needs the flash_kmeans package importable (its wheel installed with --no-deps)
  knn       cake.knn_search (exact top-k, squared L2) vs PyTorch: per database chunk torch.matmul (cuBLAS, fp16/bf16 out) to
            |y|^2 - 2 x.y in f32, torch.topk, merged with the running top-k (chunks of at most 2^28 scores: 1 GiB); on
            issue 13's 4096 queries x 2^20 vectors, D = 128, k = 10 and 100 (fp16 and bf16; the target is 3x) and two
            held-out shapes (1024 x 262144 D64 k=32, 16384 x 2^20 D128 k=10). TFLOP/s count the distance GEMM, 2 Q N D.
            A row is ok when the exact k-th distance of Cake's set is not worse than that of PyTorch's (both re-scored in f32); the recall of
            PyTorch's indices is reported
  ivf       cake.IvfFlat (IVF-Flat: k-means lists + list scan) on a clustered synthetic database (4096 random centres ~ N(0, 1)
            in D = 128, each vector a centre plus N(0, 0.75^2) noise per coordinate; uniform noise would make an inverted
            file meaningless), 2^20 vectors, nlist 1024 (--ivf-nlist), 10000 queries from the same distribution, k = 10:
            the build time (k-means 10 iterations + lists + list-ordered copy; after a warm-up build that JIT-compiles),
            then per nprobe in --ivf-nprobes (default 1,4,16,64,128,256) queries/s and recall@10 against the exact
            search (cake.knn_search, also timed: its queries/s is the reference). The summary gives the queries/s at
            the smallest nprobe whose recall@10 >= 0.95 (issue 13's figure) and its ratio to the exact search
  attention cake.attention_prefill vs torch.nn.functional.scaled_dot_product_attention with the cuDNN backend and
            with the flash backend (SDPBackend.CUDNN_ATTENTION / FLASH_ATTENTION; GQA through enable_gqa=True), on
            issue 12's prefill shapes: 16384 tokens (B x S) at S = 1024 .. 16384, head dim 64 and 128, 32 query
            heads with 32 and 8 KV heads, causal and not. SDPA gets [B, H, S, D] transposed views of the same
            [B, S, H, D] buffers. A row a backend refuses is recorded with the reason. Checked against the cuDNN
            output (the flash output where cuDNN refuses). TFLOP/s count 4 B S T H D (half of it when causal).
            Rows with 32 KV heads are "tuned" (the shapes the schedule was chosen on); the 8-KV-head rows are held out.
            --head-dims 256 runs head dim 256 instead (issue 12's stretch; a file of its own, not in the 64 / 128 means).
            Varlen rows (also --family attention_varlen alone): cake.attention_prefill_varlen on packed batches of
            mixed lengths (~16k tokens), against torch.ops.aten._flash_attention_forward with cum_seq_q / cum_seq_k
            (the FlashAttention-2 varlen kernel inside PyTorch; SDPA itself has no varlen) and against the dense
            cake.attention_prefill on the batch padded to its longest entry (the work a padded batch costs; its
            output is not compared). Checked against the flash varlen output. TFLOP/s count 4 H D per (query, key)
            pair an entry computes (causal: the pairs under the bottom-right diagonal)
  attention_decode
            cake.attention_decode_paged (pages of 16, shuffled page table) vs torch.nn.functional.scaled_dot_product_attention
            on the same K/V gathered to contiguous [B, HK, ctx, D] (q [B, H, 1, D]; every SDPA backend that runs is timed
            (flash, efficient, cudnn, math, and the default dispatch), with enable_gqa=True, or on K/V repeated to H heads
            where a backend refuses GQA; the fastest is the peer), on issue 12's decode grid: batch 1 .. 256 x context
            1k .. 32k (12 rows, at most 4 GiB of KV), 32 query / 8 KV heads, D = 128, all requests at the full context.
            Bytes/s count the K and V bytes read, 2 B ctx HK D 2; the plain read is torch.sum over the same K and V pages
            (f32 accumulation), timed in the same run. Checked against the SDPA output (rel err < 1e-2, max abs < 0.0625).
            --decode-fp8: also the same values in fp8 caches (float8_e4m3fn, per-tensor scales), checked against SDPA's
            math backend on the dequantized K and V (rel err < 1e-2) and timed in the same rounds (half the bytes)
  overhead  host time per call at a small shape (128 x 128 x 128): cake.gemm vs torch.matmul, and one call
            replayed from a CUDA graph (torch.cuda.CUDAGraph.replay), each timed over --calls calls enqueued
            back to back (the GPU work of one call is shorter than its host time, so the host is the limit)

  python3 bench/peers/bench_peers.py [--family gemm|kmeans|knn|ivf|attention|attention_varlen|attention_decode|overhead|all] [--runs N] [--calls N] [--json FILE]
                                     [--seqlens 1024,4096 (attention only: a subset of S)] [--head-dims 64,128 (attention only)] [--decode-fp8]
"""
import argparse
import datetime
import itertools
import json
import math
import os
import statistics
import subprocess
import time
import warnings

torch = cake = None  # imported in main(), after the arguments (so that --help needs neither)

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 7168, 2048), (4096, 2112, 7168), (2048, 24576, 1536), (16384, 16384, 1024)]


def gpu_facts():
    driver = "unknown"
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True,
                                check=True).stdout.split()[0]
    except Exception:
        pass
    major, minor = torch.cuda.get_device_capability()
    return {"gpu": torch.cuda.get_device_name(), "sm": f"sm_{major}{minor}{'a' if major == 9 else ''}", "driver": driver,
            "cuda": torch.version.cuda, "date": datetime.date.today().isoformat()}


def rel_err(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


WARM_MS = 300  # see time_many
# A spin of this many GPU clock cycles (~50 us at the H200's 1.98 GHz) is enqueued after the flush and before the
# start event: the GPU is still busy with it while the host enqueues the timed call, so a call whose host side
# is slower than the flush is timed by its GPU work, not by its host code (host time per call is reported on
# its own: --family overhead, and the decode rows' host_us).
HOLD_CYCLES = 100_000


def time_many(fns, runs, rounds=4):
    """Median ms of each function of the dict `fns`, L2 flushed before every run, alternating rounds."""
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    times = {name: [] for name in fns}
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    per_round = max(1, runs // rounds)
    # Warm up until the GPU has run these functions for WARM_MS: after host work (input generation) the
    # SM clock has dropped (345 MHz idle on the H200) and ramps up over ~100 ms; a few warm-up calls are not
    # enough, and whoever ran first in a round was timed at a lower clock.
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < WARM_MS / 1000.0:
        for fn in fns.values():
            fn()
        torch.cuda.synchronize()
    for _ in range(rounds):
        for name, fn in fns.items():
            for _ in range(per_round):
                flush.zero_()
                torch.cuda._sleep(HOLD_CYCLES)
                start.record()
                fn()
                stop.record()
                stop.synchronize()
                times[name].append(start.elapsed_time(stop))
    return {name: statistics.median(t) for name, t in times.items()}


def host_us(fn, calls=200, batches=1):
    """Host wall time per call (us): the median over `batches` of `calls` calls enqueued back to back with no
    flush and no synchronization inside a batch (at least the GPU's time per call when that is longer)."""
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    per = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        per.append((t1 - t0) / calls * 1e6)
    return statistics.median(per)


def time_pair(cake_fn, peer_fn, runs, rounds=4):
    """Median ms of each, L2 flushed before every run, alternating rounds."""
    t = time_many({"cake": cake_fn, "peer": peer_fn}, runs, rounds)
    return t["cake"], t["peer"]


def bench_gemm(runs):
    rows, logs = [], 0.0
    g = torch.Generator(device="cuda").manual_seed(1)
    for M, N, K in SHAPES:
        a = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
        b = torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16)
        out, ref = torch.empty(M, N, dtype=torch.bfloat16, device="cuda"), torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
        cake.gemm(a, b, out)
        torch.matmul(a, b.T, out=ref)
        err = rel_err(out, ref)
        ok = err < 1e-2 and bool(torch.isfinite(out).all())
        row = {"kernel": "gemm", "dtype": "bf16", "shape": {"M": M, "N": N, "K": K}, "peer": "torch.matmul", "max_rel_err": round(err, 6), "ok": ok}
        if ok:
            for _ in range(10):  # warm-up at the sustained clock
                cake.gemm(a, b, out)
                torch.matmul(a, b.T, out=ref)
            c_ms, p_ms = time_pair(lambda: cake.gemm(a, b, out), lambda: torch.matmul(a, b.T, out=ref), runs)
            flops = 2.0 * M * N * K
            row.update({"cake_ms": round(c_ms, 4), "peer_ms": round(p_ms, 4), "ratio": round(p_ms / c_ms, 4),
                        "cake_tflops": round(flops / c_ms / 1e9, 1), "peer_tflops": round(flops / p_ms / 1e9, 1)})
            logs += math.log(p_ms / c_ms)
        rows.append(row)
        print(f"gemm {M}x{N}x{K}: " + (f"cake {row['cake_ms']} ms, torch {row['peer_ms']} ms, ratio {row['ratio']}" if ok else f"FAILED rel_err {err}"),
              flush=True)
    timed = [r for r in rows if "ratio" in r]
    return rows, {"bf16_geomean_ratio": round(math.exp(logs / len(timed)), 4)} if timed else {}


# (B, N, K, D, held_out): the four shapes of issue 13 (from the flash-kmeans baseline) and two held out.
KMEANS_SHAPES = [(32, 65536, 1024, 128, False), (1, 1048576, 4096, 128, False), (1, 1048576, 65536, 128, False), (8, 262144, 16384, 64, False),
                 (2, 300000, 2000, 96, True), (16, 20000, 512, 256, True)]


def bench_kmeans(runs, dtypes=("float16", "bfloat16")):
    from flash_kmeans.assign_euclid_triton import euclid_assign_triton
    rows, logs = [], {}
    g = torch.Generator(device="cuda").manual_seed(2)
    for dt in dtypes:
        dtype = getattr(torch, dt)
        for B, N, K, D, held_out in KMEANS_SHAPES:
            x = torch.randn(B, N, D, device="cuda", generator=g).to(dtype)
            c = torch.randn(B, K, D, device="cuda", generator=g).to(dtype)
            x_sq = x.float().square().sum(-1)
            c_sq = c.float().square().sum(-1)
            mine, theirs = torch.empty(B, N, dtype=torch.int32, device="cuda"), torch.empty(B, N, dtype=torch.int32, device="cuda")
            mine.fill_(-1)
            cake.kmeans_assign(x, c, c_sq, mine)
            euclid_assign_triton(x, c, x_sq, theirs, c_sq=c_sq)
            # Near-ties may go either way: the distance of Cake's choice must be within rounding of the peer's.
            def dist(idx):
                out = torch.empty(B, N, device="cuda")
                for b in range(B):
                    for n0 in range(0, N, 1 << 18):
                        n1 = min(N, n0 + (1 << 18))
                        out[b, n0:n1] = (x[b, n0:n1].float() - c[b][idx[b, n0:n1].long()].float()).square().sum(-1)
                return out
            valid = bool(((mine >= 0) & (mine < K)).all())
            d_mine, d_theirs = dist(mine.clamp(0, K - 1)), dist(theirs.clamp(0, K - 1))
            worse = int((d_mine > d_theirs + 1e-4 * (x_sq + c_sq.max())).sum())
            agree = float((mine == theirs).float().mean())
            ok = valid and worse == 0
            tag = "bf16" if dt == "bfloat16" else "fp16"
            row = {"kernel": "kmeans_assign", "dtype": tag, "shape": {"B": B, "N": N, "K": K, "D": D}, "tuned": not held_out, "peer": "flash-kmeans 0.3.1",
                   "agreement": round(agree, 6), "points_farther_than_peer": worse, "ok": ok}
            if ok:
                for _ in range(3):
                    cake.kmeans_assign(x, c, c_sq, mine)
                    euclid_assign_triton(x, c, x_sq, theirs, c_sq=c_sq)
                n_runs = runs if B * N * K * D < (1 << 40) else max(10, runs // 5)
                c_ms, p_ms = time_pair(lambda: cake.kmeans_assign(x, c, c_sq, mine), lambda: euclid_assign_triton(x, c, x_sq, theirs, c_sq=c_sq), n_runs)
                flops = 2.0 * B * N * K * D
                row.update({"cake_ms": round(c_ms, 4), "peer_ms": round(p_ms, 4), "ratio": round(p_ms / c_ms, 4), "runs": n_runs,
                            "cake_tflops": round(flops / c_ms / 1e9, 1), "peer_tflops": round(flops / p_ms / 1e9, 1)})
                key = f"kmeans_assign_{tag}_{'held_out' if held_out else 'tuned'}_geomean_ratio"
                logs.setdefault(key, []).append(math.log(p_ms / c_ms))
            rows.append(row)
            print(f"kmeans assign {tag} B{B} N{N} K{K} D{D}{' (held out)' if held_out else ''}: "
                  + (f"cake {row['cake_ms']} ms ({row['cake_tflops']} TFLOP/s), flash-kmeans {row['peer_ms']} ms ({row['peer_tflops']}), ratio {row['ratio']}"
                     if ok else f"FAILED valid {valid} farther {worse}") + f", agreement {agree:.4f}", flush=True)
            del x, c, x_sq, c_sq, mine, theirs
            torch.cuda.empty_cache()
    return rows, {k: round(math.exp(sum(v) / len(v)), 4) for k, v in logs.items()}


# (Q, N, D, k, held_out): issue 13's exact search (4096 queries x 1M vectors, D = 128, k = 10 and 100) and two held out.
KNN_SHAPES = [(4096, 1 << 20, 128, 10, False), (4096, 1 << 20, 128, 100, False), (1024, 262144, 64, 32, True), (16384, 1 << 20, 128, 10, True)]


def torch_knn(x, y, y_sq, x_sq, k, chunk):
    """The PyTorch way: per chunk of the database, the distance GEMM (cuBLAS), |y|^2 - 2 x.y in f32, topk,
    merged with the running top-k; |x|^2 added at the end. Returns (distances, indices int64)."""
    best_d = best_i = None
    for n0 in range(0, y.shape[0], chunk):
        s = torch.matmul(x, y[n0:n0 + chunk].T)
        d = y_sq[n0:n0 + chunk] - 2.0 * s.float()
        v, i = torch.topk(d, min(k, d.shape[1]), dim=1, largest=False)
        i += n0
        if best_d is None:
            best_d, best_i = v, i
        else:
            v, j = torch.topk(torch.cat((best_d, v), 1), k, dim=1, largest=False)
            best_i = torch.gather(torch.cat((best_i, i), 1), 1, j)
            best_d = v
    return best_d + x_sq[:, None], best_i


def bench_knn(runs, dtypes=("float16", "bfloat16")):
    rows, logs = [], {}
    g = torch.Generator(device="cuda").manual_seed(3)
    for dt in dtypes:
        for Q, N, D, k, held_out in KNN_SHAPES:
            x = torch.randn(Q, D, device="cuda", generator=g).to(getattr(torch, dt))
            y = torch.randn(N, D, device="cuda", generator=g).to(getattr(torch, dt))
            x_sq, y_sq = x.float().square().sum(1), y.float().square().sum(1)
            chunk = max(8192, (1 << 28) // Q)
            dist = torch.empty(Q, k, dtype=torch.float32, device="cuda")
            idx = torch.empty(Q, k, dtype=torch.int32, device="cuda")
            ws = torch.empty(cake.knn_search_workspace_bytes(Q, N, D, k), dtype=torch.uint8, device="cuda")
            cake.knn_search(x, y, k, distances=dist, indices=idx, workspace=ws)
            ref_d, ref_i = torch_knn(x, y, y_sq, x_sq, k, chunk)
            torch.cuda.synchronize()
            # PyTorch's GEMM rounds the dot products to fp16/bf16, so its distances (and its ranking) carry that
            # rounding. Both answers are re-scored in f32 from the inputs (the differences are exact,
            # the sums rounded to f32) before comparing: the exact k-th distance of Cake's set must not exceed that of PyTorch's set.
            def exact_kth(ids):
                worst = torch.empty(Q, device="cuda")
                for q0 in range(0, Q, 1024):
                    xs, ys = x[q0:q0 + 1024].float(), y[ids[q0:q0 + 1024].long()].float()
                    worst[q0:q0 + 1024] = (xs[:, None, :] - ys).square().sum(-1).max(1).values
                return worst
            mine, theirs = exact_kth(idx.clamp(0, N - 1)), exact_kth(ref_i)
            worse = int((mine > theirs * (1 + 1e-5) + 1e-4).sum())
            sorted_ok = bool((dist[:, 1:] >= dist[:, :-1]).all()) and bool(((idx >= 0) & (idx < N)).all())
            overlap = (idx.long()[:, :, None] == ref_i[:, None, :]).any(2).float().mean().item()
            ok = sorted_ok and worse == 0
            tag = "bf16" if dt == "bfloat16" else "fp16"
            row = {"kernel": "knn_search", "dtype": tag, "shape": {"Q": Q, "N": N, "D": D, "k": k}, "metric": "l2", "tuned": not held_out,
                   "peer": "torch.matmul + torch.topk (chunked)", "recall_of_peer": round(overlap, 6), "queries_worse_than_peer": worse, "ok": ok}
            if ok:
                n_runs = runs if Q * N * D < (1 << 38) else max(10, runs // 5)
                c_ms, p_ms = time_pair(lambda: cake.knn_search(x, y, k, distances=dist, indices=idx, workspace=ws),
                                       lambda: torch_knn(x, y, y_sq, x_sq, k, chunk), n_runs)
                flops = 2.0 * Q * N * D
                row.update({"cake_ms": round(c_ms, 4), "peer_ms": round(p_ms, 4), "ratio": round(p_ms / c_ms, 4), "runs": n_runs,
                            "cake_tflops": round(flops / c_ms / 1e9, 1), "peer_tflops": round(flops / p_ms / 1e9, 1)})
                key = f"knn_search_{tag}_{'held_out' if held_out else 'tuned'}_geomean_ratio"
                logs.setdefault(key, []).append(math.log(p_ms / c_ms))
            rows.append(row)
            print(f"knn {tag} Q{Q} N{N} D{D} k{k}{' (held out)' if held_out else ''}: "
                  + (f"cake {row['cake_ms']} ms ({row['cake_tflops']} TFLOP/s), torch {row['peer_ms']} ms ({row['peer_tflops']}), ratio {row['ratio']}"
                     if ok else f"FAILED sorted/in range {sorted_ok} worse {worse}") + f", recall of torch's {overlap:.4f}", flush=True)
            del x, y, x_sq, y_sq, dist, idx, ws, ref_d, ref_i
            torch.cuda.empty_cache()
    return rows, {k: round(math.exp(sum(v) / len(v)), 4) for k, v in logs.items()}


def bench_ivf(runs, nlist=1024, nprobes=(1, 4, 16, 64, 128, 256), N=1 << 20, D=128, Q=10000, k=10, dtype="float16"):
    """IVF-Flat: build time, then queries/s and recall@k per nprobe against the exact search (see the header)."""
    rows, summary = [], {}
    g = torch.Generator(device="cuda").manual_seed(5)
    dt = getattr(torch, dtype)
    centres = torch.randn(4096, D, device="cuda", generator=g)

    def clustered(n):
        which = torch.randint(0, centres.shape[0], (n,), device="cuda", generator=g)
        return (centres[which] + 0.75 * torch.randn(n, D, device="cuda", generator=g)).to(dt).contiguous()

    y, x = clustered(N), clustered(Q)
    tag = "bf16" if dtype == "bfloat16" else "fp16"
    cake.IvfFlat(y[:65536].contiguous(), 64)  # warm-up: JIT-compiles the build's kernels (all dims are dynamic)
    torch.cuda.synchronize()
    builds = []
    for _ in range(3):
        t0 = time.perf_counter()
        index = cake.IvfFlat(y, nlist, seed=0, iterations=10)
        torch.cuda.synchronize()
        builds.append((time.perf_counter() - t0) * 1e3)
    build_ms = statistics.median(builds)
    sizes = index.list_sizes
    rows.append({"kernel": "ivf_build", "dtype": tag, "shape": {"N": N, "D": D, "nlist": nlist}, "iterations": 10, "cake_ms": round(build_ms, 2),
                 "runs": len(builds), "list_size_min": min(sizes), "list_size_max": max(sizes), "empty_lists": sum(1 for s in sizes if s == 0), "ok": True})
    print(f"ivf build {tag} N{N} D{D} nlist{nlist}: {build_ms:.1f} ms (median of {len(builds)}), lists {min(sizes)} .. {max(sizes)}", flush=True)
    ex_d = torch.empty(Q, k, dtype=torch.float32, device="cuda")
    ex_i = torch.empty(Q, k, dtype=torch.int32, device="cuda")
    ex_ws = torch.empty(cake.knn_search_workspace_bytes(Q, N, D, k), dtype=torch.uint8, device="cuda")
    cake.knn_search(x, y, k, distances=ex_d, indices=ex_i, workspace=ex_ws)
    exact_ms = time_many({"exact": lambda: cake.knn_search(x, y, k, distances=ex_d, indices=ex_i, workspace=ex_ws)}, max(10, runs // 5))["exact"]
    exact_qps = Q / (exact_ms / 1e3)
    rows.append({"kernel": "knn_search (exact, the recall reference)", "dtype": tag, "shape": {"Q": Q, "N": N, "D": D, "k": k}, "cake_ms": round(exact_ms, 4),
                 "queries_per_s": round(exact_qps), "ok": True})
    print(f"exact search {tag} Q{Q} N{N}: {exact_ms:.3f} ms, {exact_qps:.0f} queries/s", flush=True)
    truth = ex_i.long()
    best = None
    # walks: "auto" (by list where Q * nlist <= 2^24, as here at nlist 1024) for every nprobe, and "per_query"
    # (the simple walk, 64 query rows per useful one) up to nprobe 16, for the comparison
    runs_of = [(nprobe, "auto") for nprobe in nprobes] + [(nprobe, "per_query") for nprobe in nprobes if nprobe <= 16]
    for nprobe, walk in runs_of:
        if nprobe > min(nlist, 256):
            continue
        dist = torch.empty(Q, k, dtype=torch.float32, device="cuda")
        idx = torch.empty(Q, k, dtype=torch.int32, device="cuda")
        ws = torch.empty(index.workspace_bytes(Q, k, nprobe, walk), dtype=torch.uint8, device="cuda")
        index.search(x, k, nprobe, distances=dist, indices=idx, workspace=ws, walk=walk)
        torch.cuda.synchronize()
        recall = (idx.long()[:, :, None] == truth[:, None, :]).any(2).float().mean().item()
        sorted_ok = bool((dist[:, 1:] >= dist[:, :-1]).all()) and bool(((idx >= -1) & (idx < N)).all())
        ms = time_many({"ivf": lambda: index.search(x, k, nprobe, distances=dist, indices=idx, workspace=ws, walk=walk)}, runs)["ivf"]
        qps = Q / (ms / 1e3)
        rows.append({"kernel": "ivf_search", "dtype": tag, "walk": walk, "shape": {"Q": Q, "N": N, "D": D, "k": k, "nlist": nlist, "nprobe": nprobe},
                     "cake_ms": round(ms, 4), "queries_per_s": round(qps), "recall_at_k": round(recall, 5), "vs_exact": round(exact_ms / ms, 3),
                     "ok": sorted_ok})
        print(f"ivf search {tag} nprobe {nprobe} ({walk}): {ms:.3f} ms, {qps:.0f} queries/s ({exact_ms / ms:.2f}x exact), recall@{k} {recall:.4f}"
              + ("" if sorted_ok else " FAILED: unsorted or out of range"), flush=True)
        if walk == "auto" and sorted_ok and recall >= 0.95 and best is None:
            best = (nprobe, qps, recall, exact_ms / ms)
    if best:
        summary.update({"ivf_nprobe_at_recall_0.95": best[0], "ivf_queries_per_s_at_recall_0.95": round(best[1]), "ivf_recall_there": round(best[2], 5),
                        "ivf_vs_exact_at_recall_0.95": round(best[3], 3)})
    summary["ivf_build_ms"] = round(build_ms, 2)
    summary["exact_queries_per_s"] = round(exact_qps)
    return rows, summary


def bench_kmeans_iteration(runs, dtypes=("float16", "bfloat16")):
    """One Lloyd iteration: Cake's kmeans_step (for D > 64 the assignment with the update's scatter fused, then
    the finalize; at D <= 64 assign + update) against flash-kmeans' compiled iteration (assign, centroid update, shift), on the same points
    and centroids. Cake's new centroids are checked first against PyTorch means of Cake's own assignment."""
    from flash_kmeans.kmeans_triton_impl import _euclid_iter_compiled
    rows, logs = [], {}
    g = torch.Generator(device="cuda").manual_seed(3)
    for dt in dtypes:
        dtype = getattr(torch, dt)
        for B, N, K, D, held_out in KMEANS_SHAPES:
            x = torch.randn(B, N, D, device="cuda", generator=g).to(dtype)
            c0 = torch.randn(B, K, D, device="cuda", generator=g).to(dtype)
            x_sq = x.float().square().sum(-1)
            c, theirs_c = c0.clone(), c0.clone()
            c_norm = c.float().square().sum(-1)
            idx = torch.empty(B, N, dtype=torch.int32, device="cuda")
            shift = torch.empty(B, K, device="cuda")
            ws = torch.empty(cake.kmeans_update_workspace_bytes(B, K, D), dtype=torch.uint8, device="cuda")
            tag = "bf16" if dt == "bfloat16" else "fp16"
            row = {"kernel": "kmeans_iteration", "dtype": tag, "shape": {"B": B, "N": N, "K": K, "D": D}, "tuned": not held_out, "peer": "flash-kmeans 0.3.1"}
            try:
                cake.kmeans_step(x, c, c_norm, idx=idx, shift=shift, workspace=ws)
                sums = torch.stack([torch.zeros(K, D, device="cuda").index_add_(0, idx[b].long(), x[b].float()) for b in range(B)])
                counts = torch.stack([torch.bincount(idx[b].long(), minlength=K) for b in range(B)]).float()
                want = torch.where(counts[..., None] > 0, sums / counts.clamp_min(1)[..., None], c0.float())
                err = rel_err(c, want)
                row.update({"max_rel_err": round(err, 6), "ok": err < 1e-2})
            except Exception as e:  # the update has not run on a GPU before: record, do not stop the bench
                row.update({"ok": False, "error": str(e)[:300]})
            if row["ok"]:
                def cake_iter():
                    cake.kmeans_step(x, c, c_norm, idx=idx, shift=shift, workspace=ws)
                peer_iter = lambda: _euclid_iter_compiled(x, x_sq, theirs_c, True)
                for _ in range(3):
                    cake_iter()
                    peer_iter()
                n_runs = runs if B * N * K * D < (1 << 40) else max(10, runs // 5)
                c_ms, p_ms = time_pair(cake_iter, peer_iter, n_runs)
                flops = 2.0 * B * N * K * D
                row.update({"cake_ms": round(c_ms, 4), "peer_ms": round(p_ms, 4), "ratio": round(p_ms / c_ms, 4), "runs": n_runs,
                            "cake_tflops": round(flops / c_ms / 1e9, 1), "peer_tflops": round(flops / p_ms / 1e9, 1)})
                key = f"kmeans_iteration_{tag}_{'held_out' if held_out else 'tuned'}_geomean_ratio"
                logs.setdefault(key, []).append(math.log(p_ms / c_ms))
            rows.append(row)
            print(f"kmeans iteration {tag} B{B} N{N} K{K} D{D}{' (held out)' if held_out else ''}: "
                  + (f"cake {row['cake_ms']} ms, flash-kmeans {row['peer_ms']} ms, ratio {row['ratio']}" if row["ok"] else f"FAILED {row}"), flush=True)
            del x, c0, c, theirs_c, x_sq, c_norm, idx, shift, ws
            torch.cuda.empty_cache()
    return rows, {k: round(math.exp(sum(v) / len(v)), 4) for k, v in logs.items()}


# Issue 12's prefill shapes: 16384 tokens (B x S), head dims 64 and 128, 32 query heads with 32 (MHA) and 8 (GQA)
# KV heads, causal and not. The schedule's parameters were swept at S = 4096 and its walk chosen on the 32-KV-head
# rows of every S (docs/attention.md): those rows are "tuned", the 8-KV-head rows held out.
ATTN_TOKENS = 16384
ATTN_SEQLENS = (1024, 2048, 4096, 8192, 16384)
ATTN_TUNED_KV_HEADS = (32,)
ATTN_HEADS = ((32, 32), (32, 8))
ATTN_HEAD_DIMS = (64, 128)


def _sdpa_backend_call(backend, q, k, v, causal, gqa):
    """A call of torch SDPA restricted to one backend on [B, H, S, D] views of [B, S, H, D] buffers, or the
    reason it cannot run (the backend refused the shape, or this PyTorch has no enable_gqa)."""
    from torch.nn.attention import sdpa_kernel
    F = torch.nn.functional
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    kw = {"is_causal": causal}
    if gqa:
        if "enable_gqa" not in (F.scaled_dot_product_attention.__doc__ or ""):
            return None, f"PyTorch {torch.__version__} has no enable_gqa"
        kw["enable_gqa"] = True

    def fn():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(qt, kt, vt, **kw)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn()
            torch.cuda.synchronize()
    except RuntimeError as e:
        why = " | ".join(str(w.message).strip() for w in caught if "sdp" in str(w.message).lower() or "backend" in str(w.message).lower())
        return None, (str(e).strip() + (f" ({why})" if why else ""))[:400]
    return (fn, out), None


def bench_attention(runs, seqlens=ATTN_SEQLENS, head_dims=ATTN_HEAD_DIMS):
    from torch.nn.attention import SDPBackend
    rows, logs = [], {}
    g = torch.Generator(device="cuda").manual_seed(4)
    peers = (("cudnn", SDPBackend.CUDNN_ATTENTION, "torch SDPA (cuDNN backend)"), ("flash", SDPBackend.FLASH_ATTENTION, "torch SDPA (flash backend)"))
    for S in seqlens:
        B, T = ATTN_TOKENS // S, S
        for D in head_dims:
            for H, HK in ATTN_HEADS:
                for causal in (False, True):
                    tuned = HK in ATTN_TUNED_KV_HEADS
                    shape = {"B": B, "S": S, "T": T, "H": H, "HK": HK, "D": D, "causal": causal}
                    row = {"kernel": "attention_prefill", "dtype": "bf16", "shape": shape, "tuned": tuned, "peer": peers[0][2], "peer2": peers[1][2]}
                    q = torch.randn(B, S, H, D, device="cuda", generator=g).to(torch.bfloat16)
                    k = torch.randn(B, T, HK, D, device="cuda", generator=g).to(torch.bfloat16)
                    v = torch.randn(B, T, HK, D, device="cuda", generator=g).to(torch.bfloat16)
                    out = torch.full((B, S, H, D), float("nan"), dtype=torch.bfloat16, device="cuda")
                    lse = torch.full((B, H, S), float("nan"), dtype=torch.float32, device="cuda")
                    cake_fn = lambda: cake.attention_prefill(q, k, v, causal=causal, out=out, lse=lse)
                    try:
                        cake_fn()
                        torch.cuda.synchronize()
                    except Exception as e:  # record, do not stop the bench
                        row["cake_error"] = f"{type(e).__name__}: {e}"[:400]
                    calls, outs = {}, {}
                    for name, backend, _ in peers:
                        got, why = _sdpa_backend_call(backend, q, k, v, causal, H != HK)
                        if got is None:
                            row[f"{name}_error"] = why
                        else:
                            calls[name], outs[name] = got[0], got[1].transpose(1, 2)  # back to [B, S, H, D]
                    ok = "cake_error" not in row
                    if ok:
                        finite = bool(torch.isfinite(out).all()) and bool(torch.isfinite(lse).all())
                        row["finite"] = finite
                        ok = finite
                        for name, ref in outs.items():
                            row[f"max_abs_diff_vs_{name}"] = round((out.float() - ref.float()).abs().max().item(), 6)
                            row[f"rel_err_vs_{name}"] = round(rel_err(out, ref), 6)
                        ref_name = next(iter(outs), None)
                        row["reference"] = ref_name
                        if ref_name is None:
                            row["check"] = "finite only: no peer ran this shape"
                        else:  # bf16 output: a relative error of 1e-2, and no element off by more than 1/16
                            ok = ok and row[f"rel_err_vs_{ref_name}"] < 1e-2 and row[f"max_abs_diff_vs_{ref_name}"] < 0.0625
                    row["ok"] = ok
                    if ok:
                        fns = {"cake": cake_fn}
                        fns.update(calls)
                        for _ in range(3):
                            for fn in fns.values():
                                fn()
                        t = time_many(fns, runs)
                        flops = 4.0 * B * S * T * H * D * (0.5 if causal else 1.0)
                        row.update({"runs": runs, "cake_ms": round(t["cake"], 4), "cake_tflops": round(flops / t["cake"] / 1e9, 1)})
                        for name in calls:
                            row.update({f"{name}_ms": round(t[name], 4), f"{name}_tflops": round(flops / t[name] / 1e9, 1),
                                        f"ratio_vs_{name}": round(t[name] / t["cake"], 4)})
                            key = f"attention_prefill_{'tuned' if tuned else 'held_out'}_geomean_ratio_vs_{name}"
                            logs.setdefault(key, []).append(math.log(t[name] / t["cake"]))
                            logs.setdefault(f"attention_prefill_geomean_ratio_vs_{name}", []).append(math.log(t[name] / t["cake"]))
                        if "cudnn" in calls:  # the kmeans rows' fields: the peer is cuDNN
                            row.update({"peer_ms": row["cudnn_ms"], "peer_tflops": row["cudnn_tflops"], "ratio": row["ratio_vs_cudnn"]})
                    rows.append(row)
                    desc = f"attention B{B} S{S} H{H} HK{HK} D{D}{' causal' if causal else ''}{' (tuned)' if tuned else ''}: "
                    if ok and "cake_ms" in row:
                        desc += f"cake {row['cake_ms']} ms ({row['cake_tflops']} TFLOP/s)"
                        for name in ("cudnn", "flash"):
                            desc += (f", {name} {row[name + '_ms']} ms ({row[name + '_tflops']}) ratio {row['ratio_vs_' + name]}" if name + "_ms" in row
                                     else f", {name} refused")
                        desc += f", max abs diff vs {row['reference']} {row.get('max_abs_diff_vs_' + str(row['reference']))}"
                    else:
                        desc += "FAILED " + json.dumps({k: v for k, v in row.items() if k not in ("kernel", "dtype", "shape", "peer", "peer2")})[:300]
                    print(desc, flush=True)
                    del q, k, v, out, lse, calls, outs
                    torch.cuda.empty_cache()
    summary = {k: round(math.exp(sum(v) / len(v)), 4) for k, v in logs.items()}
    summary["attention_prefill_rows"] = len(rows)
    summary["attention_prefill_rows_ok"] = sum(1 for r in rows if r["ok"])
    summary["attention_prefill_rows_cudnn_refused"] = sum(1 for r in rows if "cudnn_error" in r)
    summary["attention_prefill_rows_flash_refused"] = sum(1 for r in rows if "flash_error" in r)
    return rows, summary


# Varlen batches (~16k tokens each): issue 12's ragged lengths three times over, and lengths drawn from 256..4096.
ATTN_VARLEN_BATCHES = (("mixed", (1, 7, 127, 1000, 4097) * 3),
                       ("spread", (3901, 517, 2250, 1190, 3333, 264, 1770, 2811)))


def _varlen_pairs(lens, causal):
    """(query, key) pairs the entries compute: all of them, or (causal) those under the bottom-right diagonal."""
    if not causal:
        return sum(n * n for n in lens)
    return sum(n * (n + 1) // 2 for n in lens)  # len_q == len_k here


def bench_attention_varlen(runs):
    rows, logs = [], {}
    g = torch.Generator(device="cuda").manual_seed(5)
    flash = getattr(torch.ops.aten, "_flash_attention_forward", None)
    for batch, lens in ATTN_VARLEN_BATCHES:
        B, total, longest = len(lens), sum(lens), max(lens)
        cu = torch.tensor([0] + list(itertools.accumulate(lens)), dtype=torch.int32, device="cuda")
        for D in ATTN_HEAD_DIMS:
            for H, HK in ATTN_HEADS:
                for causal in (False, True):
                    shape = {"batch": batch, "lengths": list(lens), "total": total, "H": H, "HK": HK, "D": D, "causal": causal}
                    row = {"kernel": "attention_prefill_varlen", "dtype": "bf16", "shape": shape,
                           "peer": "torch.ops.aten._flash_attention_forward (FlashAttention-2 varlen in PyTorch)",
                           "peer2": "cake.attention_prefill on the batch padded to its longest entry"}
                    q = torch.randn(total, H, D, device="cuda", generator=g).to(torch.bfloat16)
                    k = torch.randn(total, HK, D, device="cuda", generator=g).to(torch.bfloat16)
                    v = torch.randn(total, HK, D, device="cuda", generator=g).to(torch.bfloat16)
                    out = torch.full((total, H, D), float("nan"), dtype=torch.bfloat16, device="cuda")
                    lse = torch.full((H, total), float("nan"), dtype=torch.float32, device="cuda")
                    cake_fn = lambda: cake.attention_prefill_varlen(q, k, v, cu, cu, longest, causal=causal, out=out, lse=lse)
                    try:
                        cake_fn()
                        torch.cuda.synchronize()
                    except Exception as e:
                        row["cake_error"] = f"{type(e).__name__}: {e}"[:400]
                    calls, ref = {}, None
                    if flash is None:
                        row["flash_error"] = f"PyTorch {torch.__version__} has no aten._flash_attention_forward"
                    else:
                        def flash_fn():
                            return flash(q, k, v, cu, cu, longest, longest, 0.0, causal, False)[0]
                        try:
                            ref = flash_fn()
                            torch.cuda.synchronize()
                            calls["flash"] = flash_fn
                        except Exception as e:
                            row["flash_error"] = f"{type(e).__name__}: {e}"[:400]
                    # the padded dense batch: every entry copied to the front of a [B, longest] slot
                    qp = torch.zeros(B, longest, H, D, dtype=torch.bfloat16, device="cuda")
                    kp = torch.zeros(B, longest, HK, D, dtype=torch.bfloat16, device="cuda")
                    vp = torch.zeros(B, longest, HK, D, dtype=torch.bfloat16, device="cuda")
                    at = 0
                    for b, n in enumerate(lens):
                        qp[b, :n], kp[b, :n], vp[b, :n] = q[at:at + n], k[at:at + n], v[at:at + n]
                        at += n
                    op = torch.empty(B, longest, H, D, dtype=torch.bfloat16, device="cuda")
                    lp = torch.empty(B, H, longest, dtype=torch.float32, device="cuda")
                    calls["padded"] = lambda: cake.attention_prefill(qp, kp, vp, causal=causal, out=op, lse=lp)
                    ok = "cake_error" not in row
                    if ok:
                        row["finite"] = ok = bool(torch.isfinite(out).all()) and bool(torch.isfinite(lse).all())
                        if ref is not None:
                            row["max_abs_diff_vs_flash"] = round((out.float() - ref.float()).abs().max().item(), 6)
                            row["rel_err_vs_flash"] = round(rel_err(out, ref), 6)
                            ok = ok and row["rel_err_vs_flash"] < 1e-2 and row["max_abs_diff_vs_flash"] < 0.0625
                        else:
                            row["check"] = "finite only: the flash varlen peer did not run"
                    row["ok"] = ok
                    if ok:
                        fns = {"cake": cake_fn}
                        fns.update(calls)
                        t = time_many(fns, runs)
                        flops = 4.0 * _varlen_pairs(lens, causal) * H * D
                        row.update({"runs": runs, "cake_ms": round(t["cake"], 4), "cake_tflops": round(flops / t["cake"] / 1e9, 1)})
                        for name in calls:
                            row.update({f"{name}_ms": round(t[name], 4), f"ratio_vs_{name}": round(t[name] / t["cake"], 4)})
                            logs.setdefault(f"attention_prefill_varlen_geomean_ratio_vs_{name}", []).append(math.log(t[name] / t["cake"]))
                        if "flash" in calls:
                            row.update({"flash_tflops": round(flops / t["flash"] / 1e9, 1), "peer_ms": row["flash_ms"], "ratio": row["ratio_vs_flash"]})
                    rows.append(row)
                    desc = f"attention varlen {batch} ({B} entries, {total} tokens) H{H} HK{HK} D{D}{' causal' if causal else ''}: "
                    if ok and "cake_ms" in row:
                        desc += f"cake {row['cake_ms']} ms ({row['cake_tflops']} TFLOP/s)"
                        desc += (f", flash varlen {row['flash_ms']} ms ratio {row['ratio_vs_flash']}" if "flash_ms" in row else ", flash varlen did not run")
                        desc += f", cake padded {row['padded_ms']} ms ratio {row['ratio_vs_padded']}"
                    else:
                        desc += "FAILED " + json.dumps({k: v for k, v in row.items() if k not in ("kernel", "dtype", "shape", "peer", "peer2")})[:300]
                    print(desc, flush=True)
                    del q, k, v, out, lse, qp, kp, vp, op, lp, calls, ref
                    torch.cuda.empty_cache()
    summary = {k: round(math.exp(sum(v) / len(v)), 4) for k, v in logs.items()}
    summary["attention_prefill_varlen_rows"] = len(rows)
    summary["attention_prefill_varlen_rows_ok"] = sum(1 for r in rows if r["ok"])
    return rows, summary


# (batch, context): issue 12's decode grid, batch 1 .. 256 x context 1k .. 32k, at most 2^20 tokens (4 GiB of K and V at
# 8 KV heads, D 128, bf16). decode_config_for's rule was fitted to these (cake_bench_decode --sweep): "tuned"; the
# DECODE_HELD_OUT shapes were not looked at when it was chosen.
DECODE_GRID = [(1, 1024), (1, 8192), (1, 32768), (8, 4096), (16, 32768), (32, 8192), (64, 1024), (64, 4096), (64, 16384), (128, 2048),
               (256, 1024), (256, 4096)]
DECODE_HELD_OUT = [(2, 16384), (4, 2048), (12, 12288), (48, 3072), (96, 1536), (160, 6144)]
DECODE_H, DECODE_HK, DECODE_D, DECODE_PAGE = 32, 8, 128, 16


def bench_attention_decode(runs, grid=DECODE_GRID, held_out=DECODE_HELD_OUT, fp8=False):
    F = torch.nn.functional
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows, logs = [], {}
    g = torch.Generator(device="cuda").manual_seed(7)
    H, HK, D, ps = DECODE_H, DECODE_HK, DECODE_D, DECODE_PAGE
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "math": SDPBackend.MATH}
    for B, ctx, tuned in [(b, c, True) for b, c in grid] + [(b, c, False) for b, c in held_out]:
        shape = {"B": B, "ctx": ctx, "H": H, "HK": HK, "D": D, "page_size": ps}
        row = {"kernel": "attention_decode_paged", "dtype": "bf16", "shape": shape, "tuned": tuned,
               "peer": "torch.nn.functional.scaled_dot_product_attention on contiguous [B, HK, ctx, D] (fastest backend that runs)"}
        pages_per_req = ctx // ps
        num_pages = B * pages_per_req
        kc = torch.randn(num_pages, ps, HK, D, device="cuda", generator=g).to(torch.bfloat16)
        vc = torch.randn(num_pages, ps, HK, D, device="cuda", generator=g).to(torch.bfloat16)
        perm = torch.randperm(num_pages, device="cuda", generator=g).to(torch.int32)
        table = perm.view(B, pages_per_req).contiguous()
        lens = torch.full((B,), ctx, dtype=torch.int32, device="cuda")
        q = torch.randn(B, H, D, device="cuda", generator=g).to(torch.bfloat16)
        out = torch.full((B, H, D), float("nan"), dtype=torch.bfloat16, device="cuda")
        lse = torch.full((B, H), float("nan"), dtype=torch.float32, device="cuda")
        ws = torch.empty(cake.attention_decode_workspace_bytes(B, H, HK, D, num_pages, ps, pages_per_req, ctx), dtype=torch.uint8, device="cuda")
        cake_fn = lambda: cake.attention_decode_paged(q, kc, vc, table, lens, max_seq_len=ctx, out=out, lse=lse, workspace=ws)
        try:
            cake_fn()
            torch.cuda.synchronize()
        except Exception as e:
            row["cake_error"] = f"{type(e).__name__}: {e}"[:400]
        # the same K and V, contiguous per request: [B, HK, ctx, D]
        kd = kc[table.long()].reshape(B, ctx, HK, D).transpose(1, 2).contiguous()
        vd = vc[table.long()].reshape(B, ctx, HK, D).transpose(1, 2).contiguous()
        qd = q.view(B, H, 1, D)
        calls, refs, how = {}, {}, {}
        repeated = []  # K and V repeated to H heads, built once, for backends that refuse enable_gqa

        def kv(gqa):
            if gqa:
                return kd, vd
            if not repeated:
                repeated.extend((kd.repeat_interleave(H // HK, dim=1), vd.repeat_interleave(H // HK, dim=1)))
            return repeated[0], repeated[1]
        for name, be in list(backends.items()) + [("default", None)]:
            for gqa in (True, False):
                try:
                    kk, vv = kv(gqa)

                    def fn(be=be, kk=kk, vv=vv, gqa=gqa):
                        if be is None:
                            return F.scaled_dot_product_attention(qd, kk, vv, enable_gqa=gqa)
                        with sdpa_kernel(be):
                            return F.scaled_dot_product_attention(qd, kk, vv, enable_gqa=gqa)
                    refs[name] = fn().view(B, H, D)
                    torch.cuda.synchronize()
                    calls[name], how[name] = fn, "enable_gqa" if gqa else "K/V repeated to H heads"
                    break
                except Exception as e:
                    row[f"sdpa_{name}_error" + ("" if gqa else "_repeat")] = f"{type(e).__name__}: {e}"[:200]
        row["sdpa_gqa"] = how
        ok = "cake_error" not in row and bool(calls)
        # (--decode-fp8) the same values in fp8 caches (e4m3, per-tensor scales), checked against SDPA's math backend on
        # the dequantized K and V, and timed beside the bf16 call: half the bytes
        fp8_fn = None
        if ok and fp8:
            ks, vs = 1.0 / 64, 1.0 / 64
            kc8, vc8 = (kc.float() / ks).to(torch.float8_e4m3fn), (vc.float() / vs).to(torch.float8_e4m3fn)
            out8 = torch.full((B, H, D), float("nan"), dtype=torch.bfloat16, device="cuda")
            lse8 = torch.full((B, H), float("nan"), dtype=torch.float32, device="cuda")
            fp8_fn = lambda: cake.attention_decode_paged(q, kc8, vc8, table, lens, max_seq_len=ctx, k_scale=ks, v_scale=vs, out=out8, lse=lse8, workspace=ws)
            try:
                fp8_fn()
                nb = min(B, 8)  # (the reference in f32 over the first requests: all of them would not fit next to 4 GiB of caches)
                with sdpa_kernel(SDPBackend.MATH):
                    deq = lambda c, sc: (c[table[:nb].long()].float() * sc).reshape(nb, ctx, HK, D).transpose(1, 2)
                    ref8 = F.scaled_dot_product_attention(qd[:nb].float(), deq(kc8, ks), deq(vc8, vs), enable_gqa=True).view(nb, H, D)
                torch.cuda.synchronize()
                row["fp8_rel_err_vs_sdpa_math_dequantized"] = round(rel_err(out8[:nb], ref8), 6)
                row["fp8_checked_requests"] = nb
                row["fp8_ok"] = bool(torch.isfinite(out8).all()) and row["fp8_rel_err_vs_sdpa_math_dequantized"] < 1e-2
                del ref8
                if not row["fp8_ok"]:
                    fp8_fn = None  # (not timed; kc8 etc. go with the next shape's)
            except Exception as e:
                row["cake_fp8_error"] = f"{type(e).__name__}: {e}"[:400]
                fp8_fn = None
        if ok:
            ref = refs["math"] if "math" in refs else next(iter(refs.values()))
            row["finite"] = bool(torch.isfinite(out).all()) and bool(torch.isfinite(lse).all())
            row["max_abs_diff_vs_sdpa"] = round((out.float() - ref.float()).abs().max().item(), 6)
            row["rel_err_vs_sdpa"] = round(rel_err(out, ref), 6)
            ok = row["finite"] and row["rel_err_vs_sdpa"] < 1e-2 and row["max_abs_diff_vs_sdpa"] < 0.0625
        row["ok"] = ok
        if ok:
            plain = lambda: (kc.sum(dtype=torch.float32), vc.sum(dtype=torch.float32))
            fns = {"cake": cake_fn, "plain_read": plain}
            if fp8_fn is not None:
                fns["cake_fp8"] = fp8_fn
            fns.update({f"sdpa_{n}": f for n, f in calls.items()})
            t = time_many(fns, runs)
            kv_bytes = 2.0 * B * ctx * HK * D * 2
            best = min(calls, key=lambda n: t[f"sdpa_{n}"])
            row.update({"runs": runs, "kv_bytes": int(kv_bytes), "cake_ms": round(t["cake"], 4), "cake_gbps": round(kv_bytes / t["cake"] / 1e6, 1),
                        "plain_read_ms": round(t["plain_read"], 4), "plain_read_gbps": round(kv_bytes / t["plain_read"] / 1e6, 1)})
            row["cake_fraction_of_plain_read"] = round(t["plain_read"] / t["cake"], 4)
            for n in calls:
                row[f"sdpa_{n}_ms"] = round(t[f"sdpa_{n}"], 4)
            row.update({"peer_backend": best, "peer_ms": row[f"sdpa_{best}_ms"], "ratio": round(t[f"sdpa_{best}"] / t["cake"], 4),
                        "peer_gbps": round(kv_bytes / t[f"sdpa_{best}"] / 1e6, 1),
                        "cake_host_us": round(host_us(cake_fn), 1), "peer_host_us": round(host_us(calls[best]), 1)})
            if fp8_fn is not None:
                row.update({"cake_fp8_ms": round(t["cake_fp8"], 4), "cake_fp8_gbps": round(kv_bytes / 2 / t["cake_fp8"] / 1e6, 1),
                            "cake_fp8_ratio_vs_sdpa_bf16": round(t[f"sdpa_{best}"] / t["cake_fp8"], 4),
                            "cake_fp8_fraction_of_plain_read_bf16_rate": round(t["plain_read"] / 2 / t["cake_fp8"], 4)})
                logs.setdefault("attention_decode_fp8_geomean_ratio_vs_sdpa_bf16", []).append(math.log(row["cake_fp8_ratio_vs_sdpa_bf16"]))
                logs.setdefault("attention_decode_fp8_geomean_speedup_vs_cake_bf16", []).append(math.log(t["cake"] / t["cake_fp8"]))
            part = "" if tuned else "held_out_"
            logs.setdefault(f"attention_decode_{part}geomean_ratio_vs_sdpa", []).append(math.log(row["ratio"]))
            logs.setdefault(f"attention_decode_{part}geomean_fraction_of_plain_read", []).append(math.log(row["cake_fraction_of_plain_read"]))
        rows.append(row)
        desc = f"attention decode B {B} ctx {ctx} H{H} HK{HK} D{D} page {ps}{'' if tuned else ' (held out)'}: "
        if ok:
            desc += (f"cake {row['cake_ms']} ms ({row['cake_gbps']} GB/s, {row['cake_fraction_of_plain_read']} of plain read {row['plain_read_gbps']} GB/s), "
                     f"sdpa {best} {row['peer_ms']} ms ratio {row['ratio']}")
            if "cake_fp8_ms" in row:
                desc += (f"; fp8 {row['cake_fp8_ms']} ms ({row['cake_fp8_gbps']} GB/s of fp8 bytes, {row['cake_fp8_ratio_vs_sdpa_bf16']}x sdpa on bf16, "
                         f"rel err {row['fp8_rel_err_vs_sdpa_math_dequantized']})")
        else:
            desc += "FAILED " + json.dumps({k: v for k, v in row.items() if k not in ("kernel", "dtype", "shape", "peer")})[:400]
        print(desc, flush=True)
        del kc, vc, kd, vd, q, qd, out, lse, ws, table, perm, calls, refs, repeated
        torch.cuda.empty_cache()
    summary = {k: round(math.exp(sum(v) / len(v)), 4) for k, v in logs.items()}
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    if ratios:
        summary["attention_decode_min_ratio_vs_sdpa"] = min(ratios)
    summary["attention_decode_rows"] = len(rows)
    summary["attention_decode_rows_ok"] = sum(1 for r in rows if r["ok"])
    return rows, summary


def bench_overhead(calls):
    M = N = K = 128
    a, b = torch.randn(M, K, device="cuda").to(torch.bfloat16), torch.randn(N, K, device="cuda").to(torch.bfloat16)
    out = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")

    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        cake.gemm(a, b, out)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        cake.gemm(a, b, out)
    cake_us = host_us(lambda: cake.gemm(a, b, out), calls, 5)
    op_us = host_us(lambda: torch.ops.cake.gemm(a, b), calls, 5)
    torch_us = host_us(lambda: torch.matmul(a, b.T, out=out), calls, 5)
    replay_us = host_us(graph.replay, calls, 5)
    rows = [{"kernel": "gemm_host_overhead", "dtype": "bf16", "shape": {"M": M, "N": N, "K": K}, "peer": "torch.matmul",
             "cake_us_per_call": round(cake_us, 2), "torch_op_us_per_call": round(op_us, 2), "peer_us_per_call": round(torch_us, 2),
             "graph_replay_us_per_call": round(replay_us, 2), "ratio": round(torch_us / cake_us, 4)}]
    print(f"host overhead per call: cake.gemm {cake_us:.2f} us, torch.ops.cake.gemm {op_us:.2f} us, torch.matmul {torch_us:.2f} us, "
          f"graph replay {replay_us:.2f} us", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", choices=["gemm", "kmeans", "knn", "ivf", "attention", "attention_varlen", "attention_decode", "overhead", "all"], default="all")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--decode-fp8", action="store_true", help="attention_decode: also fp8 (e4m3) caches of the same values, checked and timed beside")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--json", default="peers.json")
    ap.add_argument("--seqlens", default=",".join(map(str, ATTN_SEQLENS)),
                    help="attention only: the sequence lengths S to run (comma-separated; B = 16384 / S)")
    ap.add_argument("--head-dims", default=",".join(map(str, ATTN_HEAD_DIMS)),
                    help="attention (dense) only: the head dims to run (comma-separated; 64, 128, 256)")
    ap.add_argument("--ivf-nlist", type=int, default=1024, help="ivf only: the number of lists")
    ap.add_argument("--ivf-nprobes", default="1,4,16,64,128,256", help="ivf only: the nprobe values to run (comma-separated, each <= min(nlist, 256))")
    args = ap.parse_args()
    seqlens = tuple(int(x) for x in args.seqlens.split(",") if x)
    if any(S < 1 or ATTN_TOKENS % S for S in seqlens):
        ap.error(f"--seqlens: each S must divide {ATTN_TOKENS}")
    head_dims = tuple(int(x) for x in args.head_dims.split(",") if x)
    if not head_dims or any(D not in (64, 128, 256) for D in head_dims):
        ap.error("--head-dims: each of 64, 128 or 256")
    global torch, cake
    import torch
    import cake
    facts = gpu_facts()
    rows, summary = [], {}
    if args.family in ("gemm", "all"):
        r, s = bench_gemm(args.runs)
        rows += r
        summary.update(s)
    if args.family in ("kmeans", "all"):
        r, s = bench_kmeans(args.runs)
        rows += r
        summary.update(s)
        r, s = bench_kmeans_iteration(args.runs)
        rows += r
        summary.update(s)
    if args.family in ("knn", "all"):
        r, s = bench_knn(args.runs)
        rows += r
        summary.update(s)
    if args.family in ("ivf", "all"):
        r, s = bench_ivf(args.runs, args.ivf_nlist, tuple(int(v) for v in args.ivf_nprobes.split(",") if v))
        rows += r
        summary.update(s)
    if args.family in ("attention", "all"):
        r, s = bench_attention(args.runs, seqlens, head_dims)
        rows += r
        summary.update(s)
    # (the varlen rows go with the dense ones of the head dims, not with a --head-dims 256 run)
    if args.family in ("attention_varlen", "all") or (args.family == "attention" and head_dims == ATTN_HEAD_DIMS):
        r, s = bench_attention_varlen(args.runs)
        rows += r
        summary.update(s)
    if args.family in ("attention_decode", "all"):
        r, s = bench_attention_decode(args.runs, fp8=args.decode_fp8)
        rows += r
        summary.update(s)
    if args.family in ("overhead", "all"):
        rows += bench_overhead(args.calls)
    doc = dict(facts)
    # (the JSON's file name only: the machine's output folder is not part of the command)
    doc["command"] = "python3 bench/peers/bench_peers.py " + " ".join(f"--{k} {os.path.basename(v) if k == 'json' else v}" for k, v in vars(args).items())
    doc["method"] = (f"one Python process, same buffers; CUDA events, L2 flushed (256 MiB written) and a {HOLD_CYCLES}-cycle GPU spin (so the host's "
                     f"enqueue is not timed) before each run, median of {args.runs} runs in 4 "
                     f"alternating rounds of Cake (cake package {cake.__version__}) and the peer (PyTorch {torch.__version__}); host overhead: "
                     f"median over 5 batches of {args.calls} calls enqueued back to back, perf_counter, no synchronization inside a batch")
    doc["rows"] = rows
    doc["summary"] = summary
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
