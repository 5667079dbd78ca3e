#!/usr/bin/env python3
"""Split small-M GEMM times into a fixed cost per call and a streaming cost per K, per schedule and for the peer.

Input: JSON files of `cake_bench_gemm_sweep --shape M,N,K --k-ladder K1,K2,...` (one M and N, several K; every
candidate and the peer timed in one process, L2 flushed). For each (type, M, N) and each schedule with at
least three K, a least-squares line time = fixed + K x per_k: `fixed` is what a call costs at no K (launch,
prologue, first load's round trip, epilogue, drain), `per_k` what each K column of the weights costs once
streaming (shown as the HBM rate it implies: N x K x element bytes over the time). Across the domain's
shapes the committed sweep puts Cake's best small-M schedule at the peer's streaming rate with a fixed cost
1.1-1.8 us higher (docs/gemm.md, "Small M: where the time goes"); this splits that per schedule.

    python3 bench/gemm/k_ladder_fit.py FILE... [--json OUT]
    python3 bench/gemm/k_ladder_fit.py --across-shapes bench/results/h200/gemm_sweep.json [--max-m 64]
        the same line over the dispatcher sweep's shapes at each small M: time = fixed + weight MB x per-MB
        cost, for the fastest candidate of each shape and for the peer (no K ladder needed; coarser: the
        schedule differs between shapes)
    python3 bench/gemm/k_ladder_fit.py --self-test
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cost"))
from derive_calibration import lstsq  # noqa: E402  (the calibration's least squares: one source)


def line(points):
    """Least squares y = a + b x over (x, y) points, and the largest residual."""
    if len({x for x, _ in points}) < 2:
        raise ValueError("every point has the same K")
    a, b = lstsq([[1.0, x] for x, _ in points], [y for _, y in points])
    return a, b, max(abs(y - (a + b * x)) for x, y in points)


def fit(docs):
    """Rows of (dtype, M, N, name, fixed_us, per_k_ns, tb_per_s, max_residual_us, ks) from sweep JSON documents."""
    series = {}
    for d in docs:
        for r in d.get("rows", []):
            if not r.get("ok") or not r.get("ms"):
                continue
            key = (r["dtype"], r["M"], r["N"])
            series.setdefault(key + (r["plan"],), {})[r["K"]] = r["ms"] * 1e3
            if r.get("peer_ms"):
                series.setdefault(key + ("peer",), {}).setdefault(r["K"], r["peer_ms"] * 1e3)
    out = []
    for (dtype, m, n, name), by_k in sorted(series.items()):
        if len(by_k) < 3:
            continue
        a, b, res = line(sorted(by_k.items()))
        elem = 1 if dtype == "e4m3" else 2
        rate = n * elem / (b * 1e-6) / 1e12 if b > 0 else float("inf")  # bytes per K over seconds per K
        out.append((dtype, m, n, name, a, b * 1e3, rate, res, sorted(by_k)))
    return out


def across_shapes(sweep, max_m):
    """Rows of (dtype, M, shapes, fixed_us, us_per_mb, tb_per_s, peer_fixed_us, peer_us_per_mb, peer_tb_per_s): per small M,
    the line through each shape's fastest correct candidate (and through the peer) against the weights' bytes."""
    best, peer = {}, {}
    for r in sweep.get("rows", []):
        if not r.get("ok") or not r.get("ms") or not r.get("peer_ms") or r["M"] > max_m:
            continue
        mb = r["N"] * r["K"] * (1 if r["dtype"] == "e4m3" else 2) / 1e6
        key = (r["dtype"], r["M"], mb)
        best[key] = min(best.get(key, float("inf")), r["ms"] * 1e3)
        peer[key] = r["peer_ms"] * 1e3
    out = []
    for dtype, m in sorted({(k[0], k[1]) for k in best}):
        keys = sorted(k for k in best if k[:2] == (dtype, m))
        if len({k[2] for k in keys}) < 3:
            continue
        a, b, _ = line([(k[2], best[k]) for k in keys])
        pa, pb, _ = line([(k[2], peer[k]) for k in keys])
        out.append((dtype, m, len(keys), a, b, 1 / b, pa, pb, 1 / pb))
    return out


def self_test():
    # Two schedules and the peer on three K: exact lines come back exactly.
    rows = []
    for k in (1024, 4096, 8192):
        rows.append({"dtype": "bf16", "M": 1, "N": 4096, "K": k, "plan": "a", "ok": True, "ms": (12.0 + 0.002 * k) / 1e3, "peer_ms": (10.0 + 0.002 * k) / 1e3})
        rows.append({"dtype": "bf16", "M": 1, "N": 4096, "K": k, "plan": "b", "ok": True, "ms": (9.0 + 0.003 * k) / 1e3, "peer_ms": (10.0 + 0.002 * k) / 1e3})
    rows.append({"dtype": "bf16", "M": 1, "N": 4096, "K": 512, "plan": "c", "ok": True, "ms": 0.02})  # one K: no line
    rows.append({"dtype": "bf16", "M": 1, "N": 4096, "K": 512, "plan": "a", "ok": False, "ms": 0.001})  # wrong: not a point
    got = {r[3]: r for r in fit([{"rows": rows}])}
    assert set(got) == {"a", "b", "peer"}, got
    assert abs(got["a"][4] - 12.0) < 1e-9 and abs(got["a"][5] - 2.0) < 1e-9, got["a"]
    assert abs(got["peer"][4] - 10.0) < 1e-9 and got["peer"][8] == [1024, 4096, 8192], got["peer"]
    # 4096 bf16 columns (8 KiB) per K in 2 ns: 4.1 TB/s
    assert abs(got["a"][6] - 4096 * 2 / 2e-9 / 1e12) < 1e-9, got["a"]
    assert got["b"][7] < 1e-9
    try:
        line([(1, 2.0), (1, 3.0)])
    except ValueError:
        pass
    else:
        raise AssertionError("a line through one K was fitted")
    # Across shapes: two schedules per shape, the faster one's line and the peer's (1 MB = 1e6 bytes; 0.25 us/MB is 4 TB/s).
    sweep = {"rows": []}
    for n, k in ((1000, 1000), (2000, 2000), (4000, 2500)):
        mb = n * k * 2 / 1e6
        for name, extra in (("a", 0.0), ("b", 5.0)):
            sweep["rows"].append({"dtype": "bf16", "M": 1, "N": n, "K": k, "plan": name, "ok": True, "ms": (13.0 + extra + 0.25 * mb) / 1e3,
                                  "peer_ms": (11.0 + 0.25 * mb) / 1e3})
        sweep["rows"].append({"dtype": "bf16", "M": 256, "N": n, "K": k, "plan": "a", "ok": True, "ms": 1.0, "peer_ms": 1.0})  # past --max-m
    (row,) = across_shapes(sweep, 64)
    assert row[:3] == ("bf16", 1, 3) and abs(row[3] - 13.0) < 1e-9 and abs(row[5] - 4.0) < 1e-9 and abs(row[6] - 11.0) < 1e-9, row
    print("k_ladder_fit: self-test passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--json", default=None, help="write the lines here")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--across-shapes", default=None, metavar="SWEEP_JSON", help="the line across a dispatcher sweep's shapes at each small M")
    ap.add_argument("--max-m", type=int, default=64, help="--across-shapes: the largest M (default %(default)s)")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return
    if a.across_shapes:
        rows = across_shapes(json.load(open(a.across_shapes)), a.max_m)
        print("%-5s %5s %6s  %-30s  %-30s" % ("type", "M", "shapes", "fastest candidate: fixed + per MB", "peer: fixed + per MB"))
        for dtype, m, n, fa, fb, fr, pa, pb, pr in rows:
            print("%-5s %5d %6d  %6.1f us + %.3f us/MB (%.2f TB/s)  %6.1f us + %.3f us/MB (%.2f TB/s)" % (dtype, m, n, fa, fb, fr, pa, pb, pr))
        return
    if not a.files:
        sys.exit("k_ladder_fit: give the JSON files of cake_bench_gemm_sweep --k-ladder runs")
    docs = [json.load(open(f)) for f in a.files]
    rows = fit(docs)
    if not rows:
        sys.exit("k_ladder_fit: no schedule has three or more K in %s (was --k-ladder given three K?)" % ", ".join(a.files))
    print("%-5s %6s %6s  %-24s %9s %10s %8s %9s" % ("type", "M", "N", "schedule", "fixed us", "per K ns", "TB/s", "max res"))
    for dtype, m, n, name, fixed, per_k, rate, res, _ in rows:
        print("%-5s %6d %6d  %-24s %9.2f %10.3f %8.2f %9.2f" % (dtype, m, n, name, fixed, per_k, rate, res))
    if a.json:
        d0 = docs[0]
        doc = {"schema": "cake.gemm-k-ladder/1", "gpu": d0.get("gpu"), "driver": d0.get("driver"), "cuda": d0.get("cuda"), "date": d0.get("date"),
               "command": " + ".join(d.get("command", "?") for d in docs) + "; python3 bench/gemm/k_ladder_fit.py",
               "method": "least squares time = fixed + K x per_k over the ladder's K, per schedule and for the peer (same process, L2 flushed, median)",
               "rows": [{"dtype": r[0], "M": r[1], "N": r[2], "schedule": r[3], "fixed_us": round(r[4], 3), "per_k_ns": round(r[5], 4),
                         "tb_per_s": round(r[6], 3), "max_residual_us": round(r[7], 3), "ks": r[8]} for r in rows]}
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
