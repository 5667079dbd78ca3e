#!/usr/bin/env python3
"""The peer's kernels per shape, from a run of cake_bench_gemm_peer_kernels under ncu (bench/h200/session.sh
peerkernels): joins the program's log (the shapes in call order, e4m3's cuBLASLt algorithm) with ncu's CSV (one
row per launch and metric) into one JSON row per (type, shape): the kernels cuBLAS / cuBLASLt launched for one
call (name, grid, block, cluster, registers, shared memory, time under ncu).

  python3 bench/gemm/peer_kernels_summary.py LOG CSV [--json OUT] [--gpu NAME --driver V --date D]
  python3 bench/gemm/peer_kernels_summary.py --self-test

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
        row = {"dtype": s["dtype"], "M": s["M"], "N": s["N"], "K": s["K"], "kernels": last,
               "call_us": round(sum(sum(x["time_us"] for x in c) for c in calls) / len(calls), 3)}
        if s["algo"]:
            row["cublaslt_algo"] = s["algo"]
        rows.append(row)
    if at != len(kernel_rows):
        raise SystemExit(f"peer_kernels_summary: {len(kernel_rows) - at} launches left over after the last shape")
    return rows


def self_test():
    import os
    import tempfile
    header = '"ID","Kernel Name","Grid Size","Block Size","Metric Name","Metric Value"\n'

    def launch(i, name, grid, us):
        return "".join(f'"{i}","{name}","{grid}","(384, 1, 1)","{m}","{v}"\n' for m, v in
                       (("gpu__time_duration.sum", f"{us * 1000:,.0f}"), ("Cluster Size", "2"), ("Registers Per Thread", "168")))

    main_k, red = "nvjet_sm90_tst_64x8_splitK_TNT", "void cublasLt::splitKreduce_kernel<32, 16>"
    # e4m3 (2 calls + the set-up run: 3 launches), then bf16 with a reduce after each of its 2 calls
    csv_text = header + launch(0, "nvjet_a", "(2, 66, 1)", 10) + launch(1, "nvjet_a", "(2, 66, 1)", 12) + launch(2, "nvjet_a", "(2, 66, 1)", 14)
    csv_text += launch(3, main_k, "(1, 132, 1)", 15) + launch(4, red, "(66, 1, 1)", 4) + launch(5, main_k, "(1, 132, 1)", 17) + launch(6, red, "(66, 1, 1)", 4)
    log_text = "==PROF== Connected\ne4m3 256x2112x7168: 2 calls; cuBLASLt algo id=66 tile=15\nbf16 8x2112x7168: 2 calls\n"
    with tempfile.TemporaryDirectory() as d:
        c, l = os.path.join(d, "n.csv"), os.path.join(d, "p.log")
        open(c, "w").write("==PROF== junk\n" + csv_text)
        open(l, "w").write(log_text)
        rows = join(shapes(l), launches(c))
        assert [(r["dtype"], r["M"], len(r["kernels"])) for r in rows] == [("e4m3", 256, 1), ("bf16", 8, 2)], rows
        assert rows[0]["call_us"] == 12.0 and rows[0]["cublaslt_algo"] == "id=66 tile=15", rows[0]
        assert rows[1]["call_us"] == 20.0 and rows[1]["kernels"][1]["name"] == red, rows[1]
        # a launch missing, and calls that ran different kernels: errors, not a guess
        for bad_csv in (header + launch(0, "nvjet_a", "(2, 66, 1)", 10) + launch(1, "nvjet_a", "(2, 66, 1)", 12),
                        header + launch(0, "nvjet_a", "(1, 1, 1)", 1) + launch(1, "nvjet_b", "(1, 1, 1)", 1) + launch(2, "nvjet_a", "(1, 1, 1)", 1)):
            open(c, "w").write(bad_csv)
            try:
                join(shapes(l), launches(c))
            except SystemExit as e:
                assert "peer_kernels_summary" in str(e), e
            else:
                raise AssertionError("a count that does not come out even was accepted")
    print("self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
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
