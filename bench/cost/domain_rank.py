#!/usr/bin/env python3
"""How well the cost model ranks the GEMM dispatcher's candidates on the shapes of its H200 sweep.

For every shape of bench/results/h200/gemm_sweep.json with at least three correct, timed candidates, the
Spearman rank correlation between the model's estimates (cake_cost_domain_rank, no GPU) and the measured
times, and the best-vs-best gap: how much slower the candidate the model ranks first measured than the
fastest one. Issue 14's targets for held-out shapes: Spearman >= 0.8 and a gap within 5%. The model was
calibrated on its own GEMMs (docs/cost-model.md) and five of its constants on the shapes of some layers
of this sweep (bench/cost/fit_sweep.py): those shapes are reported as "fit", the others as "held out".

    python3 bench/cost/domain_rank.py [--bin build/bench/cake_cost_domain_rank] [--json OUT]
"""
import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ranks(xs):
    """Average ranks (ties share the mean of their positions)."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for t in range(i, j + 1):
            r[order[t]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va > 0 and vb > 0 else float("nan")


def plan_fields(p):
    if p["kernel"] == "splitk":
        return "splitk %d %d %d %d %d" % (p["bn"], p["splits"], p["stages"], p.get("bm", 64), int(p.get("global_sum", False)))
    return "sm90 %d %d %d %d %d %d %d %d" % (p["bm"], p["bn"], p["stages"], p["cluster_m"], p["raster_group"], int(p["pingpong"]),
                                             p["in_flight"], int(p["persistent"]))


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", default=os.path.join(ROOT, "bench/results/h200/gemm_sweep.json"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "build/bench/cake_cost_domain_rank"))
    ap.add_argument("--json", default=None, help="write the per-shape results here")
    ap.add_argument("--fit", default=os.path.join(ROOT, "bench/results/h200/cost_sweep_fit.json"),
                    help="the sweep fit (bench/cost/fit_sweep.py): its layers' shapes are reported as 'fit', the others as 'held out'")
    ap.add_argument("--expect-shapes", type=int, default=None, help="fail unless exactly this many shapes are ranked (the ctest)")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        sys.exit("domain_rank: %s is not built (cmake --build build --target cake_cost_domain_rank)" % a.bin)
    sweep = json.load(open(a.sweep))
    rows = [r for r in sweep["rows"] if r.get("ok") and r.get("ms")]
    lines = ["%s %d %d %d %s %s" % (r["dtype"], r["M"], r["N"], r["K"], r["plan"], plan_fields(sweep["plans"][r["plan"]])) for r in rows]
    out = subprocess.run([a.bin], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout
    est = {}
    for line in out.splitlines():
        f = line.split("\t")
        key = (f[0], int(f[1]), int(f[2]), int(f[3]), f[4])
        est[key] = (float(f[6]), f[7]) if f[5] == "ok" else (None, f[6])
    shapes = {}
    unestimated = {}
    for r in rows:
        key = (r["dtype"], r["M"], r["N"], r["K"])
        e = est[key + (r["plan"],)]
        if e[0] is None:
            unestimated[e[1]] = unestimated.get(e[1], 0) + 1
            continue
        shapes.setdefault(key, []).append((r["plan"], r["ms"], e[0], r.get("peer_ms")))
    results = []
    for key, cands in sorted(shapes.items()):
        if len(cands) < 3:
            continue
        meas = [c[1] for c in cands]
        estv = [c[2] for c in cands]
        best_m = min(cands, key=lambda c: c[1])
        best_e = min(cands, key=lambda c: c[2])
        results.append({"dtype": key[0], "M": key[1], "N": key[2], "K": key[3], "candidates": len(cands), "spearman": round(spearman(estv, meas), 4),
                        "measured_best": best_m[0], "measured_best_ms": best_m[1], "estimated_best": best_e[0], "estimated_best_ms": best_e[1],
                        "gap_pct": round((best_e[1] / best_m[1] - 1) * 100, 2),
                        "estimate_over_measured": round(geo([c[2] / 1000.0 / c[1] for c in cands]), 3)})
    def summary(sel):
        rs = [r for r in results if sel(r)]
        if not rs:
            return None
        rhos = [r["spearman"] for r in rs if not math.isnan(r["spearman"])]
        return {"shapes": len(rs), "median_spearman": round(sorted(rhos)[len(rhos) // 2], 3) if rhos else None,
                "spearman_at_least_0.8": sum(1 for x in rhos if x >= 0.8), "gap_within_5pct": sum(1 for r in rs if r["gap_pct"] <= 5),
                "mean_gap_pct": round(sum(r["gap_pct"] for r in rs) / len(rs), 2), "worst_gap_pct": max(r["gap_pct"] for r in rs),
                "estimate_over_measured_geomean": round(geo([r["estimate_over_measured"] for r in rs]), 3)}
    # Three constants were fitted on the shapes of some layers (bench/cost/fit_sweep.py): the others are
    # the held-out ones, reported apart.
    fit = json.load(open(a.fit)) if os.path.exists(a.fit) else {"fit_layers": []}
    fit_shapes = {(r["dtype"], r["M"], r["N"], r["K"]) for r in rows if r["layer"].split(".")[0] in fit["fit_layers"]}
    for r in results:
        r["part"] = "fit" if (r["dtype"], r["M"], r["N"], r["K"]) in fit_shapes else "held out"
    groups = {}
    for part in ("held out", "fit"):
        for dt in ("bf16", "e4m3"):
            groups["%s %s M<=128" % (part, dt)] = summary(lambda r, dt=dt, part=part: r["part"] == part and r["dtype"] == dt and r["M"] <= 128)
            groups["%s %s M>128" % (part, dt)] = summary(lambda r, dt=dt, part=part: r["part"] == part and r["dtype"] == dt and r["M"] > 128)
    for dt in ("bf16", "e4m3"):
        groups[dt + " all"] = summary(lambda r, dt=dt: r["dtype"] == dt)
    print("%-22s %6s %8s %10s %10s %9s %9s %9s" % ("group", "shapes", "median", "rho>=0.8", "gap<=5%", "mean gap", "worst", "est/meas"))
    for g, s in groups.items():
        if s:
            print("%-22s %6d %8.3f %10d %10d %8.1f%% %8.1f%% %9.3f" % (g, s["shapes"], s["median_spearman"], s["spearman_at_least_0.8"], s["gap_within_5pct"],
                                                                  s["mean_gap_pct"], s["worst_gap_pct"], s["estimate_over_measured_geomean"]))
    if unestimated:
        print("not estimated (rows, reason):")
        for why, n in sorted(unestimated.items(), key=lambda x: -x[1]):
            print("  %5d  %s" % (n, why[:150]))
    if a.expect_shapes is not None and len(results) != a.expect_shapes:
        sys.exit("domain_rank: ranked %d shapes, expected %d" % (len(results), a.expect_shapes))
    if a.json:
        doc = {"schema": "cake.cost-domain-rank/1", "gpu": sweep["gpu"], "sm": sweep.get("sm"), "driver": sweep["driver"], "cuda": sweep["cuda"],
               "date": sweep["date"], "command": "python3 bench/cost/domain_rank.py --json " + os.path.basename(a.json),
               "method": "cake::cost::estimate (the committed calibration) for every correct, timed row of gemm_sweep.json; per shape with >= 3 "
                         "candidates: Spearman of estimate vs measured time (average ranks for ties), and the gap: the measured time of the "
                         "model's first choice over the fastest measured, minus 1",
               "source": os.path.relpath(a.sweep, ROOT), "fit_layers": fit["fit_layers"], "summary": groups, "not_estimated": unestimated, "rows": results}
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
