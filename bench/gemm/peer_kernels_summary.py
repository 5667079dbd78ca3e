#!/usr/bin/env python3
"""The peer's kernels per shape, from a run of cake_bench_gemm_peer_kernels under ncu (bench/h200/session.sh
peerkernels): joins the program's log (the shapes in call order, e4m3's cuBLASLt algorithm) with ncu's CSV (one
row per launch and metric) into one JSON row per (type, shape): the kernels cuBLAS / cuBLASLt launched for one
call (name, grid, block, cluster, registers, shared memory, time under ncu).

  python3 bench/gemm/peer_kernels_summary.py LOG CSV [--json OUT] [--gpu NAME --driver V --date D]

Launches are assigned to shapes in order: each call is one main kernel (nvjet / sm90 ...) and, where cuBLAS
splits K outside the kernel, the reduce kernel after it; an e4m3 shape has one launch more than its calls
(cuBLASLt's algorithm is run once when the peer is set up). A count that does not come out even is an error,
not a guess."""
import argparse
import csv
import json
import re
import sys


def launches(csv_path):
    lines = [l for l in open(csv_path) if l.startswith('"')]
    by_id = {}
    for r in csv.DictReader(lines):
        k = by_id.setdefault(int(r["ID"]), {"name": r["Kernel Name"], "grid": r["Grid Size"], "block": r["Block Size"], "metrics": {}})
        k["metrics"][r["Metric Name"]] = r["Metric Value"]
    out = []
    for i in sorted(by_id):
        k, m = by_id[i], by_id[i]["metrics"]
        num = lambda key: int(str(m.get(key, "0")).replace(",", "") or 0)
        out.append({"name": k["name"], "grid": k["grid"], "block": k["block"], "cluster": num("Cluster Size"), "registers": num("Registers Per Thread"),
                    "smem_bytes": num("Dynamic Shared Memory Per Block") + num("Static Shared Memory Per Block"),
                    "time_us": num("gpu__time_duration.sum") / 1000.0})
    return out


def shapes(log_path):
    pat = re.compile(r"^(bf16|e4m3) (\d+)x(\d+)x(\d+): (\d+) calls(?:; cuBLASLt algo (.*))?$")
    out = []
    for line in open(log_path):
        m = pat.match(line.strip())
        if m:
            out.append({"dtype": m[1], "M": int(m[2]), "N": int(m[3]), "K": int(m[4]), "calls": int(m[5]), "algo": m[6]})
    return out


def is_reduce(name):
    return "splitKreduce" in name or "reduce_kernel" in name


def join(shape_rows, kernel_rows):
    rows, at = [], 0
    for s in shape_rows:
        want = s["calls"] + (1 if s["dtype"] == "e4m3" else 0)
        calls = []
        while len(calls) < want:
            if at >= len(kernel_rows) or is_reduce(kernel_rows[at]["name"]):
                raise SystemExit(f"peer_kernels_summary: launch {at}: expected a main kernel for {s['dtype']} {s['M']}x{s['N']}x{s['K']}")
            call = [kernel_rows[at]]
            at += 1
            if at < len(kernel_rows) and is_reduce(kernel_rows[at]["name"]):
                call.append(kernel_rows[at])
                at += 1
            calls.append(call)
        names = {tuple(k["name"] for k in c) for c in calls}
        if len(names) != 1:
            raise SystemExit(f"peer_kernels_summary: {s['dtype']} {s['M']}x{s['N']}x{s['K']}: its calls ran different kernels {sorted(names)}")
        last = calls[-1]
        row = {"dtype": s["dtype"], "M": s["M"], "N": s["N"], "K": s["K"], "kernels": [{k: v for k, v in x.items()} for x in last],
               "call_us": round(sum(sum(x["time_us"] for x in c) for c in calls) / len(calls), 3)}
        if s["algo"]:
            row["cublaslt_algo"] = s["algo"]
        rows.append(row)
    if at != len(kernel_rows):
        raise SystemExit(f"peer_kernels_summary: {len(kernel_rows) - at} launches left over after the last shape")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("csv")
    ap.add_argument("--json")
    ap.add_argument("--gpu", default="unknown")
    ap.add_argument("--driver", default="unknown")
    ap.add_argument("--date", default="unknown")
    a = ap.parse_args()
    rows = join(shapes(a.log), launches(a.csv))
    for r in rows:
        k = r["kernels"][0]
        extra = f" + {r['kernels'][1]['name'][:40]}" if len(r["kernels"]) > 1 else ""
        print(f"{r['dtype']} {r['M']:>5} x {r['N']:>5} x {r['K']:>5}  {r['call_us']:8.2f} us  grid {k['grid']:<12} cluster {k['cluster']}  {k['name']}{extra}")
    if a.json:
        doc = {"gpu": a.gpu, "driver": a.driver, "cuda": "13.0", "date": a.date,
               "command": "ncu --csv --print-units base --section LaunchStats --metrics gpu__time_duration.sum cake_bench_gemm_peer_kernels --calls 2 SHAPES "
                          "(bench/h200/session.sh peerkernels); python3 bench/gemm/peer_kernels_summary.py LOG CSV",
               "method": "the peer called exactly as the GEMM benchmarks call it and nothing else, under ncu (its clocks, caches flushed per launch); "
                         "call_us: the mean over the calls of the kernels' summed duration",
               "rows": rows}
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
