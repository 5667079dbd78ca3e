#!/usr/bin/env python3
"""An A/B of two builds of cake_bench_gemm_sweep on the same shapes (`--shape` runs, one process each): for every
(type, shape, schedule) the mean time of the "before" runs and of the "after" runs, their ratio, and per shape the
fastest schedule of each build against the peer (timed in every run).

  python3 bench/gemm/ab_sweeps.py --before B1.json B2.json --after A1.json A2.json [--json OUT] [--note TEXT] [--changed REGEX]
  python3 bench/gemm/ab_sweeps.py --self-test

(Two settings of one build compare the same way: step clusterexit runs one binary without and with CAKE_CLUSTER_EXIT.)
--changed: the schedules the change touches (a regular expression on plan names), summarized apart from the rest,
which are the run's control.

Run order is the caller's (bench/h200/session.sh, step skfence, alternates before / after / after / before so that
neither build is always timed first). Ratios are before / after: above 1, the after build is faster.
"""
import argparse
import json
import math
import re
import sys
from collections import defaultdict


def rows_of(paths):
    """{(dtype, M, N, K, plan): [ms, ...]} and {(dtype, M, N, K): [peer_ms, ...]} over the files."""
    times, peers, meta = defaultdict(list), defaultdict(list), {}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        if d.get("placeholder"):
            raise SystemExit(f"ab_sweeps.py: {p} is a placeholder (no GPU run)")
        meta = {k: d.get(k) for k in ("gpu", "driver", "cuda", "date")}
        for r in d["rows"]:
            if r.get("ms") is None or not r.get("ok", True):
                continue
            shape = (r["dtype"], r["M"], r["N"], r["K"])
            times[shape + (r["plan"],)].append(r["ms"])
            if r.get("peer_ms"):
                peers[shape].append(r["peer_ms"])
    return times, peers, meta


def mean(v):
    return sum(v) / len(v)


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def compare(before, after, changed=None):
    tb, pb, meta = rows_of(before)
    ta, pa, _ = rows_of(after)
    rows, shapes = [], defaultdict(dict)
    for key in sorted(set(tb) & set(ta)):
        b, a = mean(tb[key]), mean(ta[key])
        dtype, m, n, k, plan = key
        # (each build's runs too: a row whose runs disagree within one build is noise, not a difference)
        rows.append({"dtype": dtype, "M": m, "N": n, "K": k, "plan": plan, "before_ms": round(b, 5), "after_ms": round(a, 5),
                     "ratio": round(b / a, 4), "before_runs_ms": [round(x, 5) for x in tb[key]], "after_runs_ms": [round(x, 5) for x in ta[key]]})
        s = shapes[(dtype, m, n, k)]
        for side, t in (("before", b), ("after", a)):
            if t < s.get(side + "_best_ms", float("inf")):
                s[side + "_best_ms"], s[side + "_best"] = t, plan
    best = []
    for shape, s in sorted(shapes.items()):
        peer = mean(pb.get(shape, []) + pa.get(shape, [])) if (pb.get(shape) or pa.get(shape)) else None
        e = {"dtype": shape[0], "M": shape[1], "N": shape[2], "K": shape[3], "before_best": s["before_best"],
             "before_best_ms": round(s["before_best_ms"], 5), "after_best": s["after_best"], "after_best_ms": round(s["after_best_ms"], 5)}
        if peer:
            e["peer_ms"] = round(peer, 5)
            e["vs_peer_before"] = round(peer / s["before_best_ms"], 4)
            e["vs_peer_after"] = round(peer / s["after_best_ms"], 4)
        best.append(e)
    # the cluster's split-K (its sum the change touched), the global-sum split-K (sk..._g: no cluster sum) and the rest
    split = [r["ratio"] for r in rows if r["plan"].startswith("sk") and not r["plan"].endswith("_g")]
    global_sum = [r["ratio"] for r in rows if r["plan"].startswith("sk") and r["plan"].endswith("_g")]
    other = [r["ratio"] for r in rows if not r["plan"].startswith("sk")]
    if changed:  # the rows of the schedules the change touches (a regular expression on the plan name) and the rest
        touched = [r["ratio"] for r in rows if re.search(changed, r["plan"])]
        untouched = [r["ratio"] for r in rows if not re.search(changed, r["plan"])]
    spread = lambda v: max(v) / min(v) - 1 if len(v) > 1 else 0.0
    noisy = [r for r in rows if max(spread(r["before_runs_ms"]), spread(r["after_runs_ms"])) > 0.10]
    summary = {"split_k_geomean_ratio": round(geomean(split), 4), "split_k_rows": len(split),
               "global_sum_geomean_ratio": round(geomean(global_sum), 4), "global_sum_rows": len(global_sum),
               "other_geomean_ratio": round(geomean(other), 4), "other_rows": len(other),
               "rows_whose_runs_differ_by_more_than_10pct": len(noisy),
               "best_vs_peer_before": round(geomean([b["vs_peer_before"] for b in best if "vs_peer_before" in b]), 4),
               "best_vs_peer_after": round(geomean([b["vs_peer_after"] for b in best if "vs_peer_after" in b]), 4)}
    if changed:
        summary.update({"changed": changed, "changed_geomean_ratio": round(geomean(touched), 4), "changed_rows": len(touched),
                        "unchanged_geomean_ratio": round(geomean(untouched), 4), "unchanged_rows": len(untouched)})
    return meta, rows, best, summary


def self_test():
    import os
    import tempfile
    def sweep(ms_sk, ms_bn, ms_g):
        row = lambda plan, ms: {"dtype": "bf16", "M": 8, "N": 2112, "K": 7168, "plan": plan, "ms": ms, "peer_ms": 0.02, "ok": True}
        return {"rows": [row("sk4_bn64_s6", ms_sk), row("bn128_s6_c1", ms_bn), row("sk2_bn64_s6_g", ms_g)]}
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, (sk, bn, g) in enumerate([(0.0215, 0.04, 0.03), (0.0205, 0.04, 0.036), (0.019, 0.04, 0.03), (0.019, 0.04, 0.03)]):
            paths.append(os.path.join(d, f"{i}.json"))
            with open(paths[-1], "w") as f:
                json.dump(sweep(sk, bn, g), f)
        _, rows, best, summary = compare(paths[:2], paths[2:])
        _, _, _, by_regex = compare(paths[:2], paths[2:], changed=r"_c1$")  # (--changed: the touched schedules apart)
    assert len(rows) == 3 and summary["split_k_rows"] == 1 and summary["global_sum_rows"] == 1, rows
    assert abs(summary["split_k_geomean_ratio"] - 0.021 / 0.019) < 1e-3, summary
    assert abs(summary["global_sum_geomean_ratio"] - 0.033 / 0.03) < 1e-3, summary
    assert summary["other_geomean_ratio"] == 1.0, summary
    # the global-sum row's before runs differ by 20%: counted as noisy; the split-K row's by 5%: not
    assert summary["rows_whose_runs_differ_by_more_than_10pct"] == 1, summary
    assert [r["before_runs_ms"] for r in rows if r["plan"] == "sk2_bn64_s6_g"] == [[0.03, 0.036]], rows
    assert by_regex["changed_rows"] == 1 and by_regex["changed_geomean_ratio"] == 1.0 and by_regex["unchanged_rows"] == 2, by_regex
    assert abs(by_regex["unchanged_geomean_ratio"] - math.sqrt(0.021 / 0.019 * 0.033 / 0.03)) < 1e-3, by_regex
    assert best[0]["before_best"] == "sk4_bn64_s6" and abs(best[0]["vs_peer_after"] - 0.02 / 0.019) < 1e-3, best
    print("ab_sweeps.py self-test: ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", nargs="+")
    ap.add_argument("--after", nargs="+")
    ap.add_argument("--json")
    ap.add_argument("--note", default="")
    ap.add_argument("--changed", help="a regular expression on plan names: the schedules the change touches, summarized apart from the rest")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.before or not a.after:
        ap.error("give --before and --after sweep JSON files")
    meta, rows, best, summary = compare(a.before, a.after, a.changed)
    for b in best:
        print("%s %5d x %6d x %6d  before %-22s %.4f ms  after %-22s %.4f ms  peer %s" % (
            b["dtype"], b["M"], b["N"], b["K"], b["before_best"], b["before_best_ms"], b["after_best"], b["after_best_ms"],
            "%.4f ms (vs peer %.3f -> %.3f)" % (b["peer_ms"], b["vs_peer_before"], b["vs_peer_after"]) if "peer_ms" in b else "-"))
    print("cluster split-K schedules: before / after %.4f (geometric mean, %d rows); global-sum split-K %.4f (%d); others %.4f (%d rows); "
          "%d rows whose runs differ by > 10%%; best vs peer %.4f -> %.4f" % (
        summary["split_k_geomean_ratio"], summary["split_k_rows"], summary["global_sum_geomean_ratio"], summary["global_sum_rows"],
        summary["other_geomean_ratio"], summary["other_rows"], summary["rows_whose_runs_differ_by_more_than_10pct"],
        summary["best_vs_peer_before"], summary["best_vs_peer_after"]))
    if a.changed:
        print("schedules matching %s: before / after %.4f (%d rows); the rest %.4f (%d rows)" % (
            a.changed, summary["changed_geomean_ratio"], summary["changed_rows"], summary["unchanged_geomean_ratio"], summary["unchanged_rows"]))
    if a.json:
        out = dict(meta, command="python3 bench/gemm/ab_sweeps.py --before %s --after %s" % (" ".join(p.split("/")[-1] for p in a.before),
                                                                                       " ".join(p.split("/")[-1] for p in a.after)),
                   note=a.note, method="cake_bench_gemm_sweep --shape runs of two builds (or settings) in one device call, alternating before / after / "
                   "after / before; per (type, shape, schedule) the mean of each build's runs; ratio = before / after",
                   summary=summary, best=best, rows=rows)
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
        print("wrote", a.json)


if __name__ == "__main__":
    sys.exit(main())
