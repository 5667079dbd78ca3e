#!/usr/bin/env python3
"""Cross-checks the analyzer against compute-sanitizer on the verify corpus (issue 10, blind spot 8).

For every case of the corpus and each of its twins (bad, good), runs `cake_verify_launch --case NAME --twin T`
(one process per case: a trap or a hang ends only that case):
  1. once without a sanitizer (--no-launch when no GPU) to learn the analyzer's findings, whether the schedule
     lowers, and whether it can run on this GPU;
  2. where it launched: under `compute-sanitizer --tool racecheck` and `--tool synccheck`.
Writes <out>/sancorpus.json (every row) and <out>/sancorpus.md (the table docs/diagnostics.md quotes).

  python3 tests/verify/sanitize_corpus.py --bin build-h200/tests/verify/cake_verify_launch --out $OUT \
      [--jobs 4] [--timeout 60] [--budget 540] [--cases a,b,...]

Agreement, per row:
  agree: error & report   the analyzer reports an error and a sanitizer reports a hazard/error
  agree: clean & clean    no analyzer error and no sanitizer report
  analyzer only           an analyzer error the sanitizers do not see (expected for races they do not model:
                          mbarrier/TMA-proxy ordering, wgmma/tcgen05 async proxies, tensor memory, register
                          rules, resource and representation rules, or a schedule that is not meant to compute
                          anything meaningful)
  sanitizer only          a sanitizer report on a schedule the analyzer passes: a false negative to look at
  sanitizer only: tool    such a report, from a tool on a row of TOOL_LIMITS: the same report on a hand-written
                          kernel that computes the exact result (bench/h200/sanitizer_probe.cu)
  agree: error & launch failed          an analyzer error, and the plain launch trapped (hang check) or failed
  launch failed on a clean schedule     a failure the analyzer missed (or a launcher limitation: read the row)
  n/a                     not launched (does not lower, sm_100a, no GPU) or a sanitizer run that timed out
The sanitizers run only where the plain launch completed.
"""
import argparse
import concurrent.futures as futures
import json
import os
import re
import shutil
import subprocess
import sys
import time


def parse_lines(text):
    """The tool's JSON lines, merged into one object."""
    row = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                row.update(json.loads(line))
            except json.JSONDecodeError:
                pass
    return row


def run(cmd, timeout, env):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env, text=True, errors="replace")
        return p.returncode, p.stdout, time.time() - t0
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, time.time() - t0


RACE_RE = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
ERR_RE = re.compile(r"ERROR SUMMARY: (\d+) errors?")


def sanitizer_result(tool, rc, out):
    """{'status': ok|timeout|failed, 'count': N, 'detail': ...} for one compute-sanitizer run."""
    if rc is None:
        return {"status": "timeout", "count": None, "detail": ""}
    if tool == "racecheck":
        m = RACE_RE.search(out)
        if m:
            hazards, errors, warnings = (int(x) for x in m.groups())
            return {"status": "ok", "count": errors + warnings, "errors": errors, "warnings": warnings, "detail": first_report(out)}
    m = ERR_RE.search(out)
    if m:
        return {"status": "ok", "count": int(m.group(1)), "detail": first_report(out)}
    return {"status": "failed", "count": None, "detail": out.strip().splitlines()[-1][:200] if out.strip() else ""}


def first_report(out):
    for line in out.splitlines():
        if line.startswith("========= ") and ("Race" in line or "hazard" in line.lower() or "Barrier" in line or "error" in line.lower()) and "SUMMARY" not in line:
            return line[10:].strip()[:200]
    return ""


# Reports on clean schedules that a hand-written kernel of the same pattern reproduces while computing the
# exact result (bench/h200/sanitizer_probe.cu, step `sanprobe`, H200 2026-12-02): a limit of the tool, not a
# missed hazard. Keyed by (case, twin, tool); only these tools' reports are excused, on these rows only.
TOOL_LIMITS = {
    ("sync_cluster_sum_divergent", "good", "racecheck"):
        "racecheck does not order distributed shared memory through remote mbarrier arrive/wait "
        "(probe dsmem_mbar_cluster reports the same RAW hazards, 0 wrong sums; dsmem_barrier, with barrier.cluster, none)",
    ("instruction_cluster_sum_without_cluster", "good", "racecheck"):
        "racecheck does not order distributed shared memory through remote mbarrier arrive/wait "
        "(probe dsmem_mbar_cluster reports the same RAW hazards, 0 wrong sums; dsmem_barrier, with barrier.cluster, none)",
}


def agreement(row):
    if row.get("launched") is not True:
        return "n/a"
    error = row.get("analyzer", {}).get("errors", 0) > 0
    if row.get("launch") != "ok":  # a trap (hang check), an illegal address, a timeout: the GPU saw it fail
        return "agree: error & launch failed" if error else "launch failed on a clean schedule"
    san = [row.get("racecheck", {}), row.get("synccheck", {})]
    if any(s.get("status") != "ok" for s in san):
        return "n/a"
    reported = any((s.get("count") or 0) > 0 for s in san)
    if error and reported:
        return "agree: error & report"
    if not error and not reported:
        return "agree: clean & clean"
    if error:
        return "analyzer only"
    reporting = [t for t in ("racecheck", "synccheck") if (row.get(t, {}).get("count") or 0) > 0]
    if all((row.get("case"), row.get("twin"), t) in TOOL_LIMITS for t in reporting):
        return "sanitizer only: tool"
    return "sanitizer only"


def one(binary, case, twin, args, gpu):
    env = dict(os.environ)
    env.setdefault("CAKE_HANG_TIMEOUT_MS", "2000")
    base = [binary, "--case", case, "--twin", twin]
    rc, out, secs = run(base + ([] if gpu else ["--no-launch"]), args.timeout, env)
    row = parse_lines(out)
    row.setdefault("case", case)
    row.setdefault("twin", twin)
    row["exit_code"] = rc
    if rc is None:  # killed: after the first line, while launching (a hang the trap did not end)
        row["launched"] = bool(gpu and row.get("lowers") and row.get("runnable_on_h200"))
        row["launch"] = "timeout after %d s" % args.timeout
    # The tools run where the plain launch completed: a trap or a hang is already the GPU's verdict, and would
    # cost a slot for the whole timeout. Under a tool kernels run many times slower, so the hang trap is
    # given more time there (a slow phase must not be mistaken for a deadlock).
    if gpu and row.get("launch") == "ok":
        tool_env = dict(env)
        tool_env["CAKE_HANG_TIMEOUT_MS"] = str(args.tool_hang_ms)
        for tool in ("racecheck", "synccheck"):
            trc, tout, _ = run(["compute-sanitizer", "--tool", tool, "--print-limit", "3"] + base, args.timeout * 3, tool_env)
            row[tool] = sanitizer_result(tool, trc, tout)
    row["agreement"] = agreement(row)
    return row


def cell_sanitizer(row, tool):
    s = row.get(tool)
    if not s:
        return "-"
    if s["status"] != "ok":
        return s["status"]
    return str(s["count"])


def write_table(rows, path, note):
    with open(path, "w") as f:
        f.write("| case | twin | analyzer | lowers | launched | racecheck | synccheck | agreement |\n")
        f.write("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
        for r in rows:
            an = r.get("analyzer", {})
            rules = ", ".join(an.get("rules", [])) or "clean"
            lowers = "yes" if r.get("lowers") else ("no: " + (r.get("lower_error") or "?")[:60])
            launch = r.get("launch", "-")
            launched = "yes" if launch == "ok" else (launch or "-")[:60]
            f.write("| %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r.get("case"), r.get("twin"), rules, lowers, launched, cell_sanitizer(r, "racecheck"), cell_sanitizer(r, "synccheck"), r.get("agreement")))
        f.write("\n" + note + "\n")


def self_test():
    """The agreement classes on synthetic rows (no tool run): exits 1 on the first mismatch."""
    def row(case, twin, errors, race, sync, launch="ok"):
        return {"case": case, "twin": twin, "launched": True, "launch": launch, "analyzer": {"errors": errors},
                "racecheck": {"status": "ok", "count": race}, "synccheck": {"status": "ok", "count": sync}}
    known = "sync_cluster_sum_divergent"
    checks = [
        (row("x", "good", 0, 0, 0), "agree: clean & clean"),
        (row("x", "bad", 1, 3, 0), "agree: error & report"),
        (row("x", "bad", 1, 0, 0), "analyzer only"),
        (row("x", "good", 0, 5, 0), "sanitizer only"),
        (row(known, "good", 0, 5, 0), "sanitizer only: tool"),       # the excused tool on the excused row
        (row(known, "good", 0, 5, 288), "sanitizer only"),           # another tool's report is not excused
        (row(known, "bad", 0, 5, 0), "sanitizer only"),              # nor the other twin
        (row("x", "good", 0, 0, 0, launch="trap"), "launch failed on a clean schedule"),
        (row("x", "bad", 2, 0, 0, launch="trap"), "agree: error & launch failed"),
    ]
    for r, want in checks:
        got = agreement(r)
        if got != want:
            print("self-test FAILED: %s/%s -> %r, expected %r" % (r["case"], r["twin"], got, want))
            sys.exit(1)
    print("self-test: %d agreement classes as expected" % len(checks))


def main():
    if "--self-test" in sys.argv:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="cake_verify_launch")
    ap.add_argument("--out", required=True, help="folder for sancorpus.json and sancorpus.md")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=30, help="seconds per plain run (sanitizer runs get 3x)")
    ap.add_argument("--tool-hang-ms", type=int, default=20000, help="CAKE_HANG_TIMEOUT_MS under a sanitizer")
    ap.add_argument("--budget", type=int, default=0, help="stop starting new cases after this many seconds (0: none)")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--shard", default="", help="i/n: run every n-th case starting at i (0-based)")
    ap.add_argument("--no-gpu", action="store_true", help="analyzer and lowering only")
    args = ap.parse_args()

    listing = subprocess.run([args.bin, "--list"], stdout=subprocess.PIPE, text=True, check=True).stdout.split("\n")
    cases = [l.split()[0] for l in listing if l.strip()]
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in cases if c in wanted]
    if args.shard:  # "i/n": every n-th case from the i-th (0-based), to split the corpus over device calls
        i, n = (int(x) for x in args.shard.split("/"))
        cases = cases[i::n]
    gpu = not args.no_gpu and shutil.which("compute-sanitizer") is not None and shutil.which("nvidia-smi") is not None
    os.makedirs(args.out, exist_ok=True)
    start = time.time()
    rows, skipped = [], []
    with futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        pending = {}
        queue = [(c, t) for c in cases for t in ("bad", "good")]
        while queue or pending:
            while queue and len(pending) < args.jobs:
                if args.budget and time.time() - start > args.budget:
                    skipped.extend(queue)
                    queue = []
                    break
                c, t = queue.pop(0)
                pending[pool.submit(one, args.bin, c, t, args, gpu)] = (c, t)
            if not pending:
                break
            done, _ = futures.wait(list(pending), return_when=futures.FIRST_COMPLETED)
            for f in done:
                c, t = pending.pop(f)
                try:
                    rows.append(f.result())
                except Exception as e:  # a driver problem: record it, keep going
                    rows.append({"case": c, "twin": t, "launch": "driver error: %s" % e, "agreement": "n/a"})
                r = rows[-1]
                print("%-48s %-4s %-28s racecheck %-8s synccheck %-8s %s" % (
                    c, t, (r.get("launch") or "-")[:28], cell_sanitizer(r, "racecheck"), cell_sanitizer(r, "synccheck"), r.get("agreement")), flush=True)
                write_all(rows, cases, skipped, queue + list(pending.values()), start, gpu, args.out)
    note = write_all(rows, cases, skipped, queue=[], start=start, gpu=gpu, out=args.out)
    print(note)
    return 0


def write_all(rows, cases, skipped, queue, start, gpu, out):
    """Writes sancorpus.json and sancorpus.md from the rows so far (called after every row, so that a step
    killed by its time limit still leaves a table)."""
    order = {c: i for i, c in enumerate(cases)}
    rows = sorted(rows, key=lambda r: (order.get(r.get("case"), 1 << 30), r.get("twin") != "bad"))
    counts = {}
    for r in rows:
        counts[r["agreement"]] = counts.get(r["agreement"], 0) + 1
    summary = ", ".join("%s: %d" % kv for kv in sorted(counts.items()))
    not_run = list(skipped) + list(queue)
    note = "%d rows (%s)%s; %.0f s, %s." % (
        len(rows), summary, ("; not run: %d (time budget)" % len(not_run)) if not_run else "", time.time() - start,
        "with compute-sanitizer" if gpu else "no GPU: analyzer and lowering only")
    with open(os.path.join(out, "sancorpus.json"), "w") as f:
        json.dump({"rows": rows, "not_run": [{"case": c, "twin": t} for c, t in not_run], "summary": counts, "gpu": gpu}, f, indent=1)
    write_table(rows, os.path.join(out, "sancorpus.md"), note)
    return note


if __name__ == "__main__":
    sys.exit(main())
