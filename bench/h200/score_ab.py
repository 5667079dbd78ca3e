#!/usr/bin/env python3
"""Join the A/B runs of session.sh step gemmscoreab (two dispatch tables on the held-out pairs whose plan
differs): per table and run, the geometric mean of the ratio against the peer, and per pair new / old.

    python3 bench/h200/score_ab.py OUTDIR [--json FILE] [--control FILE]
--control FILE: pairs ("bf16|e4m3 M N K" lines) timed alongside whose plan is the same in both builds: summed apart,
as the run's noise.
"""
import argparse
import json
import math
import os


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--json", default=None)
    ap.add_argument("--what", default="old table: the wave rule's, new: the cost model's", help="what 'old' and 'new' are, for the method text")
    ap.add_argument("--control", default=None, help="pairs with the same plan in both (the noise), one 'TYPE M N K' per line")
    ap.add_argument("--command", default=None, help="the command the runs came from (default: step gemmscoreab's tables A/B)")
    a = ap.parse_args()
    runs = {}
    for t in ("oldtable", "new"):
        r = 1
        while os.path.exists(os.path.join(a.outdir, "ab_%s_%d.json" % (t, r))):  # every round the step ran (CAKE_AB_ROUNDS)
            f = os.path.join(a.outdir, "ab_%s_%d.json" % (t, r))
            runs[(t, r)] = {(x["dtype"], x["shape"]["M"], x["shape"]["N"], x["shape"]["K"]): x for x in json.load(open(f))["rows"]}
            r += 1
    if not runs:
        raise SystemExit("score_ab.py: no ab_*.json in %s" % a.outdir)
    for (t, r), rows in sorted(runs.items()):
        for d in ("bf16", "e4m3"):
            xs = [x["ratio"] for k, x in rows.items() if k[0] == d and x["ok"]]
            wrong = sum(1 for k, x in rows.items() if k[0] == d and not x["ok"])
            print("%-8s run %d %s: %2d pairs, geometric mean ratio %.4f, min %.3f, wrong %d" % (t, r, d, len(xs), geo(xs), min(xs) if xs else float("nan"), wrong))
    pairs = []
    keys = sorted(set.intersection(*[set(v) for v in runs.values()]))
    for k in keys:
        old = geo([runs[(t, r)][k]["cake_ms"] for (t, r) in runs if t == "oldtable"])
        new = geo([runs[(t, r)][k]["cake_ms"] for (t, r) in runs if t == "new"])
        peer = geo([runs[(t, r)][k]["peer_ms"] for (t, r) in runs])
        pairs.append({"dtype": k[0], "M": k[1], "N": k[2], "K": k[3], "old_plan": runs[("oldtable", 1)][k]["plan"], "new_plan": runs[("new", 1)][k]["plan"],
                      "old_ms": round(old, 5), "new_ms": round(new, 5), "peer_ms": round(peer, 5), "new_over_old_speed": round(old / new, 4)})
    control = set()
    if a.control:
        for line in open(a.control):
            f = line.split()
            if f:
                control.add((f[0], int(f[1]), int(f[2]), int(f[3])))
    for p in pairs:
        p["control"] = (p["dtype"], p["M"], p["N"], p["K"]) in control
    for d in ("bf16", "e4m3"):
        for ctl in (False, True):
            xs = [p["new_over_old_speed"] for p in pairs if p["dtype"] == d and p["control"] == ctl]
            if xs:
                print("%s: new / old speed on %d %s pairs: geometric mean %.4f (min %.3f, max %.3f)" % (
                    d, len(xs), "control (same plan)" if ctl else "changed", geo(xs), min(xs), max(xs)))
    if a.json:
        head = json.load(open(os.path.join(a.outdir, "ab_new_1.json")))
        rows = [{"kernel": "gemm", "dtype": p["dtype"], "shape": {"M": p["M"], "N": p["N"], "K": p["K"]}, "plan": p["new_plan"], "old_plan": p["old_plan"],
                 "cake_ms": p["new_ms"], "old_table_ms": p["old_ms"], "peer": "cublas" if p["dtype"] == "bf16" else "cublasLt", "peer_ms": p["peer_ms"],
                 "ratio": round(p["peer_ms"] / p["new_ms"], 4), "old_table_ratio": round(p["peer_ms"] / p["old_ms"], 4),
                 "new_over_old_speed": p["new_over_old_speed"], "control": p["control"], "ok": all(runs[key][(p["dtype"], p["M"], p["N"], p["K"])]["ok"] for key in runs)} for p in pairs]
        summary = {}
        for d, ctl in (("bf16", False), ("e4m3", False), ("bf16 control", True), ("e4m3 control", True)):
            xs = [r for r in rows if r["dtype"] == d.split()[0] and r["control"] == ctl]
            if xs:
                summary[d] = {"pairs": len(xs), "new_over_old_speed_geomean": round(geo([r["new_over_old_speed"] for r in xs]), 4),
                              "ratio_geomean": round(geo([r["ratio"] for r in xs]), 4), "old_table_ratio_geomean": round(geo([r["old_table_ratio"] for r in xs]), 4),
                              "wrong": sum(1 for r in xs if not r["ok"])}
        out = {k: head[k] for k in ("gpu", "sm", "driver", "cuda", "date")}
        out["command"] = a.command or ("bash bench/h200/session.sh gemmscoreab (cake_bench_gemm_score_oldtable and cake_bench_gemm_score --only score_changed_shapes.txt, "
                          "alternating, %d rounds); python3 bench/h200/score_ab.py OUTDIR --json FILE" % max(r for _, r in runs))
        out["method"] = head["method"] + "; per pair the geometric mean over the rounds of each table's time and of the peer's; " + a.what
        out["summary"] = summary
        out["rows"] = rows
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
