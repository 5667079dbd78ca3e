#!/usr/bin/env python3
"""The cooperative tile at a width between the sweep's own (bench/gemm/sweep_candidates.hpp, model_width_plan)
against the fastest of the other candidates, per (type, shape), from cake_bench_gemm_sweep files (session.sh step
midwidth: the search shapes with --between-widths-only, held-out ones with --shape); prints a table and writes a
results JSON (docs/benchmarks.md format: rows with ratios).

    python3 bench/gemm/midwidth_summary.py FILE.json... [--json OUT] [--command TEXT]
"""
import argparse
import json
import math
import os
import re


def between_prefixes():
    """Plan-name prefixes of the between widths, read from their one definition (sweep_candidates.hpp, between_widths)."""
    src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep_candidates.hpp")).read()
    m = re.search(r"between_widths = \{([0-9, ]+)\};", src)
    if not m:
        raise SystemExit("midwidth_summary.py: no 'between_widths = {...};' in bench/gemm/sweep_candidates.hpp")
    return tuple("bn%d_" % int(w) for w in m.group(1).split(","))


BETWEEN = between_prefixes()


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", default=None)
    ap.add_argument("--command", default="bash bench/h200/session.sh midwidth")
    a = ap.parse_args()
    rows, head = [], None
    for f in a.files:
        d = json.load(open(f))
        head = head or d
        part = "held_out" if " --shape " in " " + d.get("command", "") + " " else "search"
        for key in sorted({(r["dtype"], r["M"], r["N"], r["K"]) for r in d["rows"]}):
            rs = [r for r in d["rows"] if (r["dtype"], r["M"], r["N"], r["K"]) == key and r["ms"] and r["ok"]]
            mid = [r for r in rs if r["plan"].startswith(BETWEEN)]
            own = [r for r in rs if not r["plan"].startswith(BETWEEN)]
            if not mid or not own:
                print("%s %dx%dx%d: no %s row" % (key + ("between-width" if not mid else "other",)))
                continue
            b, m = min(own, key=lambda r: r["ms"]), min(mid, key=lambda r: r["ms"])
            peer = rs[0]["peer_ms"]
            rows.append({"kernel": "gemm", "dtype": key[0], "shape": {"M": key[1], "N": key[2], "K": key[3]}, "part": part,
                         "best_other_plan": b["plan"], "best_other_ms": b["ms"], "between_plan": m["plan"], "between_ms": m["ms"],
                         "peer": "cublas" if key[0] == "bf16" else "cublasLt", "peer_ms": peer,
                         "ratio_best_other": peer / b["ms"] if peer else None, "ratio_between": peer / m["ms"] if peer else None,
                         "other_over_between": b["ms"] / m["ms"]})
    print("%-5s %-8s %5s %6s %6s  %-20s %8s  %-12s %8s  %8s  %s" % ("type", "part", "M", "N", "K", "best other", "ms", "between", "ms", "peer", "other/between"))
    for r in rows:
        s = r["shape"]
        print("%-5s %-8s %5d %6d %6d  %-20s %8.4f  %-12s %8.4f  %8.4f  %.3f" % (r["dtype"], r["part"], s["M"], s["N"], s["K"], r["best_other_plan"], r["best_other_ms"],
                                                                          r["between_plan"], r["between_ms"], r["peer_ms"] or 0, r["other_over_between"]))
    summary = {}
    for part in ("search", "held_out"):
        x = [r["other_over_between"] for r in rows if r["part"] == part]
        if x:
            summary[part] = {"pairs": len(x), "other_over_between_geomean": round(geo(x), 4), "between_faster": sum(v > 1 for v in x), "min": round(min(x), 4)}
            print("%s: %d pairs, best other / between width: geometric mean %.3f, between faster on %d, lowest %.3f" % (
                part, len(x), geo(x), summary[part]["between_faster"], min(x)))
    if a.json and head:
        out = {"gpu": head["gpu"], "sm": head.get("sm", "sm_90a"), "driver": head["driver"], "cuda": head["cuda"], "date": head["date"],
               "command": a.command, "method": head["method"] + "; per (type, shape): the fastest between-width candidate against the fastest other one",
               "rows": rows, "summary": summary}
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
