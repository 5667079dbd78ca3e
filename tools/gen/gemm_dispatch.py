#!/usr/bin/env python3
"""Generate cake::gemm's shape-bucket dispatcher (include/cake/gemm_dispatch.hpp) from sweep evidence.

The evidence is the JSON written by cake_bench_gemm_sweep (bench/gemm/bench_gemm_sweep.cpp): one row per
(search shape, candidate schedule) with its median time, the peer's, and its correctness check. Run by a
person after a sweep, the output committed with the evidence:

    python3 tools/gen/gemm_dispatch.py bench/results/h200/gemm_sweep.json           # rewrite the header
    python3 tools/gen/gemm_dispatch.py bench/results/h200/gemm_sweep.json --check   # exit 1 if it is stale

Or from `cake evolve` logs (docs/evolve.md, "The evidence log"), converted into the sweep's rows and plans
(evolve_evidence: bench-gate times, candidates a run or bench gate rejected banned, candidates no plan can say
skipped and counted, each shape placed in bench/gemm/domain.hpp), the rules below unchanged:

    python3 tools/gen/gemm_dispatch.py --from-evolve LOG [LOG...] [--family NAME=TYPE] [--sm-count N] [-o PATH]

How buckets are made (docs/gemm.md, "The dispatcher"):
  - a schedule that computed a wrong result on any shape of an input type is never chosen for that type;
    rows without a peer (no correctness check) are not evidence;
  - cells: each (N, K) of the evidence is a cell, N and K ranges reaching halfway (geometric mean) to the
    neighbouring values of the evidence, and 1.25x beyond the outermost ones; a shape in no cell, or in a
    cell with no bucket for its M, takes the fallback (choose_gemm);
  - within a cell, each searched M is a bucket of its fastest schedule; an M strictly between two
    searched ones (where the held-out shapes lie) takes, among the schedules timed at either neighbour,
    the one the cost model (cake::cost::estimate with the committed calibration, through
    bench/cost/domain_rank.cpp's program: --cost-bin) estimates fastest at the bucket's largest M. The
    gap is cut where some candidate's row tiles change (multiples of its rows per tile x cluster), so the
    tile counts are fixed within a bucket. (Before 2026-12-05 the prediction was the neighbours' measured
    times scaled by waves: `--wave-rule` keeps it, for comparison; it scored 0.973 / 0.973 in the
    leave-one-out below against the model's 0.994 / 0.995.) Where both neighbours measured the same schedule
    fastest, that one is the pick between them (only a schedule neither timed can displace it, below). Going up M, a bucket keeps its schedule
    while that is predicted within 3% of the best (estimated within 1%; so that a gap has few buckets).
    M below the smallest searched one takes its schedule, M above the largest up to twice it takes that one's; adjacent
    buckets with one schedule are merged.
  - between searched M, also any schedule the sweep would time at the bucket's largest M (sweep_candidates in
    bench/gemm/sweep_candidates.hpp, through the cost program's --model-candidates, with the sweep's measured
    split-K concurrency) that neither neighbour timed, where the model estimates it at least UNTIMED_MARGIN faster
    than every schedule timed at either: the candidates change with M (the split-K fill's width and splits, the
    width between the sweep's own that fills the waves; docs/gemm.md, "Widths between the sweep's own", "Schedules
    timed at neither neighbour"), and a neighbour's time says nothing of a schedule it did not time.
"""
import argparse
import concurrent.futures
import gzip
import json
import math
import os
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "cost"))
from domain_rank import plan_fields  # noqa: E402  (the schedule's fields as the cost program reads them: one source)

DEFAULT_COST_BIN = ROOT / "build" / "bench" / "cake_cost_domain_rank"
OUTPUT = ROOT / "include" / "cake" / "gemm_dispatch.hpp"
SCRIPT = "tools/gen/gemm_dispatch.py"
DTYPES = [("bf16", "gemm_input::bf16"), ("e4m3", "gemm_input::e4m3")]
TOL = {"bf16": 1e-2, "e4m3": 3e-2}


class EvidenceError(Exception):
    pass


def ranges(values):
    """Half-open [lo, hi) per value: boundaries at geometric means of neighbours, 1.25x beyond the ends."""
    vs = sorted(set(values))
    bounds = [int(math.floor(vs[0] / 1.25))]
    for a, b in zip(vs, vs[1:]):
        bounds.append(int(round(math.sqrt(a * b))))
    bounds.append(int(math.ceil(vs[-1] * 1.25)) + 1)
    return {v: (bounds[i], bounds[i + 1]) for i, v in enumerate(vs)}


def plan_init(name, p):
    if p["kernel"] == "splitk":
        return "{gemm_kernel::splitk, {}, {.bn = %d, .bm = %d, .splits = %d, .stages = %d%s}}" % (
            p["bn"], p.get("bm", 64), p["splits"], p["stages"], ", .global_sum = true" if p.get("global_sum") else "")
    if p["kernel"] != "sm90":
        raise EvidenceError("plan %s: unknown kernel '%s'" % (name, p["kernel"]))
    b = lambda v: "true" if v else "false"
    return ("{gemm_kernel::sm90, {.bm = %d, .bn = %d, .stages = %d, .cluster_m = %d, .raster_group = %d, .pingpong = %s, .in_flight = %d, "
            ".persistent = %s}, {}}" % (p["bm"], p["bn"], p["stages"], p["cluster_m"], p["raster_group"], b(p["pingpong"]), p["in_flight"],
                                        b(p["persistent"])))


KEEP = 1.03  # a between-bucket keeps its schedule while that is predicted at most this much slower than the best
KEEP_MODEL = 1.01  # the same for the cost model's estimates (leave-one-out: 0.994 / 0.995 at 1.01, 0.991 / 0.991 at 1.03)
UNTIMED_MARGIN = 0.03  # a schedule no sweep timed at either neighbour must be estimated this much faster than all that were


def waves(p, concurrent, sm_count, m, n):
    """Waves of tiles (split-K: CTAs) plan p runs at M = m, N = n: what the GPU holds at once at a time."""
    if p["kernel"] == "splitk":
        ctas = -(-m // p.get("bm", 64)) * -(-n // p["bn"]) * p["splits"]
        if p.get("global_sum"):  # no cluster: as many CTAs as the SMs hold, whatever the split
            at_once = concurrent.get(p["name"], sm_count)
        else:
            at_once = max(p["splits"], concurrent.get(p["name"], sm_count // p["splits"] * p["splits"]))
    else:
        cm = p["cluster_m"]
        ctas = -(-(-(-m // p["bm"])) // cm) * cm * -(-n // p["bn"])
        at_once = sm_count // cm * cm
    return -(-ctas // at_once)


def gap_pieces(plans, names, m0, m1):
    """[(lo, hi)] cutting m0 + 1 .. m1 - 1 where some candidate's row tiles change: at multiples of its rows per
    tile (x cluster), and of 64. Within a piece every candidate runs the same tiles."""
    steps = sorted({plans[p]["bm"] * plans[p]["cluster_m"] if plans[p]["kernel"] == "sm90" else plans[p].get("bm", 64) for p in names} | {64})
    starts = sorted({m0 + 1} | {k + 1 for s in steps for k in range((m0 // s + 1) * s, m1 - 1, s)})
    return [(lo, starts[i + 1] - 1 if i + 1 < len(starts) else m1 - 1) for i, lo in enumerate(starts)]


class CostModel:
    """cake::cost::estimate (the committed calibration, no GPU) through bench/cost/domain_rank.cpp's program:
    estimates of (dtype, M, N, K, schedule) asked for in batches (about a millisecond each), remembered."""

    def __init__(self, binary, plans):
        self.binary, self.plans, self.known, self.cands = pathlib.Path(binary), plans, {}, {}
        if not os.access(self.binary, os.X_OK):
            raise EvidenceError("the cost model's program %s is not built (cmake --build build --target cake_cost_domain_rank; or "
                                "--cost-bin PATH, or --wave-rule for the rule without the model)" % self.binary)

    def _run(self, args, lines, rows_per_part, head=()):
        """The program's output for input lines, in parallel parts of at least rows_per_part lines each (each part
        after the lines of head)."""
        parts = max(1, min(os.cpu_count() or 1, 8, len(lines) // rows_per_part + 1))

        def run(chunk):
            return subprocess.run([str(self.binary)] + args, input="\n".join(list(head) + chunk) + "\n", capture_output=True, text=True, check=True).stdout

        try:
            with concurrent.futures.ThreadPoolExecutor(parts) as pool:
                return "".join(pool.map(run, [lines[i::parts] for i in range(parts)]))
        except subprocess.CalledProcessError as e:
            raise EvidenceError("%s%s failed (exit %d): %s" % (self.binary, "".join(" " + a for a in args), e.returncode, e.stderr.strip()[:400]))

    def _missing(self, todo, known, what=""):
        missing = [k for k in todo if k not in known]
        if missing:
            raise EvidenceError("%s%s gave no answer for %d rows (the first: %s)" % (self.binary, what, len(missing), missing[0]))

    def prefetch(self, keys):
        todo = sorted(set(k for k in keys if k not in self.known))
        if not todo:
            return
        out = self._run([], ["%s %d %d %d %s %s" % (d, m, n, k, p, plan_fields(self.plans[p])) for d, m, n, k, p in todo], 500)
        for line in out.splitlines():
            f = line.split("\t")
            self.known[(f[0], int(f[1]), int(f[2]), int(f[3]), f[4])] = float(f[6]) if f[5] == "ok" else None
        self._missing(todo, self.known)

    def __call__(self, dtype, m, n, k, plan):
        key = (dtype, m, n, k, plan)
        if key not in self.known:
            self.prefetch([key])
        return self.known[key]

    def prefetch_candidates(self, keys, concurrency):
        """The schedules the sweep would time at each (dtype, M, N, K) (the program's --model-candidates, given the
        sweep's cluster_concurrency rows), remembered as lists of names; each plan is added to self.plans under its
        name (one the evidence defines otherwise is an error)."""
        todo = sorted(set(k for k in keys if k not in self.cands))
        if not todo:
            return
        head = ["conc %s %s %d %d" % (c["dtype"], c["plan"], c["cluster"], c["max_active_clusters"]) for c in concurrency]
        out = self._run(["--model-candidates"], ["%s %d %d %d" % k for k in todo], 20, head)
        got = {}
        for line in out.splitlines():
            f = line.split("\t")
            v = f[5].split() if len(f) == 6 else []
            if v and v[0] == "sm90" and len(v) == 9:
                bm, bn, stages, cluster_m, raster, pp, in_flight, persistent = map(int, v[1:])
                plan = {"kernel": "sm90", "bm": bm, "bn": bn, "stages": stages, "cluster_m": cluster_m, "raster_group": raster, "pingpong": bool(pp),
                        "in_flight": in_flight, "persistent": bool(persistent)}
            elif v and v[0] == "splitk" and len(v) == 6:
                bn, splits, stages, bm, global_sum = map(int, v[1:])
                plan = {"kernel": "splitk", "bn": bn, "splits": splits, "stages": stages, "bm": bm, "global_sum": bool(global_sum)}
            else:
                raise EvidenceError("%s --model-candidates: unreadable row: %s" % (self.binary, line))
            known = self.plans.get(f[4])
            if known is not None and plan_fields(known) != plan_fields(plan):
                raise EvidenceError("%s --model-candidates names %s as %s, the evidence as %s" % (self.binary, f[4], plan, known))
            self.plans.setdefault(f[4], plan)
            got.setdefault((f[0], int(f[1]), int(f[2]), int(f[3])), []).append(f[4])
        for k in todo:
            if k not in got:
                raise EvidenceError("%s --model-candidates gave no schedule for %s %d x %d x %d" % ((self.binary,) + k))
            self.cands[k] = got[k]

    def candidates(self, dtype, m, n, k, concurrency=()):
        key = (dtype, m, n, k)
        if key not in self.cands:
            self.prefetch_candidates([key], concurrency)
        return self.cands[key]


def gap_queries(ev, dtype, cells, gaps):
    """The cost-model estimates between() will ask for: every candidate at every piece's largest M."""
    for (n, k), m0, m1 in gaps:
        per = cells[(n, k)]
        names = sorted(set(per[m0]) | set(per[m1]))
        for _, hi in gap_pieces(ev["plans"], names, m0, m1):
            for p in names:
                yield (dtype, hi, n, k, p)


def between(plans, concurrent, sm_count, n, m0, m1, at0, at1, estimate=None, candidates=None):
    """Buckets for lo..hi strictly between searched M = m0 and m1: [(lo, hi, plan, why)], each the schedule the
    cost model estimates fastest at hi (estimate(plan, M) -> us, or None where the model cannot say), or
    without a model (or where it estimates none) the one of least predicted time (a neighbour's time x waves
    at M / waves there; both neighbours' geometric mean). candidates(M): the schedules the sweep would time at M
    (names); one timed at neither neighbour is taken where the model estimates it UNTIMED_MARGIN faster than every
    timed one. Where both neighbours measured one schedule fastest, it is the pick between them whatever the
    estimates say of the other timed ones (the measurement at both ends outranks the model's ranking; only a
    schedule neither timed can displace it, by the margin)."""
    names = sorted(set(at0) | set(at1))
    fastest = [min(at, key=lambda p: (at[p]["ms"], p)) if at else None for at in (at0, at1)]
    agreed = fastest[0] if fastest[0] == fastest[1] else None
    plan = {p: dict(plans[p], name=p) for p in names}
    out = []
    for lo, hi in gap_pieces(plans, names, m0, m1):
        modeled = {p: estimate(p, hi) for p in names} if estimate else {}
        modeled = {p: t for p, t in modeled.items() if t is not None}

        def waves_predict(p):
            w = waves(plan[p], concurrent, sm_count, lo, n)
            est = [at[p]["ms"] * w / waves(plan[p], concurrent, sm_count, ref, n) for ref, at in ((m0, at0), (m1, at1)) if p in at]
            return math.exp(sum(math.log(e) for e in est) / len(est))

        if modeled:
            cands, predict = sorted(modeled), lambda p: modeled.get(p, math.inf)
        else:
            cands, predict = names, waves_predict
        pick = min(cands, key=lambda p: (predict(p), p))
        both = agreed in cands
        if both:
            pick = agreed
        others = {p: estimate(p, hi) for p in (candidates(hi) if candidates and modeled else []) if p not in plan}
        others = {p: t for p, t in others.items() if t is not None}
        w = min(others, key=lambda p: (others[p], p)) if others else None
        w_us = others[w] if w else None
        if w_us is not None and w_us < (1 - UNTIMED_MARGIN) * predict(pick):
            if out and out[-1][2] == w:
                out[-1] = (out[-1][0], hi, w, out[-1][3])
                continue
            out.append((lo, hi, w, "between M=%d and M=%d: %s, a sweep candidate timed at neither, the cost model's estimate from M=%d (at M=%d), %.1f us "
                                   "against %.1f us for %s, the least of those timed" % (m0, m1, w, lo, hi, w_us, predict(pick), pick)))
            continue
        # the bucket before goes on while its schedule is predicted within 3% (estimated within 1%) of the best here (few buckets)
        if out and predict(out[-1][2]) <= (KEEP_MODEL if modeled else KEEP) * predict(pick):
            out[-1] = (out[-1][0], hi, out[-1][2], out[-1][3])
            continue
        if both:
            why = "between M=%d and M=%d: the fastest at both, from M=%d (%s at M=%d: %.4g)" % (m0, m1, lo, "estimated" if modeled else "predicted",
                                                                                                 hi if modeled else lo, predict(pick))
        elif modeled:
            why = "between M=%d and M=%d: the cost model's least estimate from M=%d (at M=%d), %.1f us" % (m0, m1, lo, hi, predict(pick))
        else:
            why = "between M=%d and M=%d: least predicted time (neighbours' times x waves) from M=%d, %.4f ms" % (m0, m1, lo, predict(pick))
        out.append((lo, hi, pick, why))
    return out


def evidence_of(ev, dtype):
    """One input type's evidence: (schedules never chosen (wrong on some shape), the rows that count, their cells
    {(N, K): {M: {plan: row}}}, the measured split-K concurrency {plan: CTAs at once}). Rows of the splits in
    ev["evidence_splits"] count (a sweep: "search" only); a row marked "rejected" (an evolve candidate a run or bench
    gate rejected, at any shape) has no times and bans its schedule."""
    splits = ev.get("evidence_splits", ["search"])
    rejected = [r for r in ev["rows"] if r["dtype"] == dtype and r.get("rejected")]
    rows = [r for r in ev["rows"] if r["dtype"] == dtype and r["split"] in splits and r["peer_ms"] is not None]
    for r in rows + rejected:
        if r["plan"] not in ev["plans"]:
            raise EvidenceError("row %s %dx%dx%d names plan '%s', which the file's 'plans' does not define" % (dtype, r["M"], r["N"], r["K"], r["plan"]))
    bad = sorted({r["plan"] for r in rows + rejected if not r["ok"]})
    rows = [r for r in rows if r["ok"] and r["plan"] not in bad]
    cells = {}
    for r in rows:
        cells.setdefault((r["N"], r["K"]), {}).setdefault(r["M"], {})[r["plan"]] = r
    concurrent = {c["plan"]: c["max_active_clusters"] * c["cluster"] for c in ev.get("cluster_concurrency", []) if c["dtype"] == dtype}
    return bad, rows, cells, concurrent


def build(ev, model=None):
    """The buckets of every input type: [(dtype, n_range, k_range, [(m_lo, m_hi, plan, evidence lines)])], banned plans,
    summary. model: a CostModel for the M between searched ones (None: the wave rule)."""
    for key in ("rows", "plans", "gpu", "date", "sm_count"):
        if key not in ev:
            raise EvidenceError("the evidence has no '%s' (not a cake_bench_gemm_sweep file?)" % key)
    out, banned, summary = [], {}, {}
    for dtype, _ in DTYPES:
        banned[dtype], rows, cells, concurrent = evidence_of(ev, dtype)
        if not rows:
            continue
        if model:
            gaps = [(nk, a, b) for nk, per in cells.items() for a, b in zip(sorted(per), sorted(per)[1:]) if b > a + 1]
            queries = list(gap_queries(ev, dtype, cells, gaps))
            conc_rows = [c for c in ev.get("cluster_concurrency", []) if c["dtype"] == dtype]
            model.prefetch_candidates({q[:4] for q in queries}, conc_rows)
            model.prefetch(queries + [q[:4] + (c,) for q in queries for c in model.cands[q[:4]] if c not in banned[dtype]])
        nr, kr = ranges(r["N"] for r in rows), ranges(r["K"] for r in rows)
        logs_best, logs_fallback = [], []
        for (n, k) in sorted(cells):
            per_m = cells[(n, k)]
            ms = sorted(per_m)
            best = {}
            for m in ms:
                best[m] = min(per_m[m].values(), key=lambda r: (r["ms"], r["plan"]))
                logs_best.append(math.log(best[m]["peer_ms"] / best[m]["ms"]))
                fb = [r for r in per_m[m].values() if r["fallback"]]
                if fb:
                    logs_fallback.append(math.log(fb[0]["peer_ms"] / fb[0]["ms"]))

            def line(m, r):
                fb = [x for x in per_m[m].values() if x["fallback"]]
                s = "M=%d: %s %.4f ms, peer %.4f ms, ratio %.3f" % (m, r["plan"], r["ms"], r["peer_ms"], r["peer_ms"] / r["ms"])
                if fb and fb[0]["plan"] != r["plan"]:
                    s += " (fallback %s: %.3f)" % (fb[0]["plan"], fb[0]["peer_ms"] / fb[0]["ms"])
                if r.get("note"):  # (an evolve row: its log, family and place in the domain)
                    s += " [%s]" % r["note"]
                return s

            pieces = []  # (m_lo, m_hi, plan, lines)
            for i, m in enumerate(ms):
                lo = 1 if i == 0 else m
                pieces.append((lo, m, best[m]["plan"], [line(m, best[m])]))
                hi_end = 2 * m if i + 1 == len(ms) else None
                if hi_end is not None:
                    pieces.append((m + 1, hi_end, best[m]["plan"], ["above M=%d, up to twice it: as M=%d" % (m, m)]))
                    continue
                nxt = ms[i + 1]
                if nxt == m + 1:
                    continue
                est = (lambda p, mm, n=n, k=k: model(dtype, mm, n, k, p)) if model else None
                cands = (lambda mm, n=n, k=k: [c for c in model.candidates(dtype, mm, n, k, conc_rows) if c not in banned[dtype]]) if model else None
                for lo, hi, pick, why in between(ev["plans"], concurrent, ev["sm_count"], n, m, nxt, per_m[m], per_m[nxt], est, cands):
                    pieces.append((lo, hi, pick, [why]))
            merged = []
            for p in pieces:
                if merged and merged[-1][2] == p[2] and merged[-1][1] + 1 == p[0]:
                    merged[-1] = (merged[-1][0], p[1], p[2], merged[-1][3] + p[3])
                else:
                    merged.append(p)
            out.append((dtype, (n, k), nr[n], kr[k], merged))
        summary[dtype] = {
            "shapes": len(logs_best),
            "best": math.exp(sum(logs_best) / len(logs_best)),
            "fallback": math.exp(sum(logs_fallback) / len(logs_fallback)) if logs_fallback else None,
        }
    return out, banned, summary


def leave_one_out(ev, model=None, keep_cell=lambda n, k: True, untimed=True):
    """How well the rule for M between searched ones does where it can be checked: each interior searched M of a
    cell is predicted from the searched M on either side (two steps of the domain's M grid apart, twice the
    held-out gaps) and the pick's measured time compared with that M's fastest. Per type: (geometric mean of
    fastest / pick's time, shapes scored, shapes whose pick was not timed there, shapes below 0.95). untimed: the
    sweep's candidates timed at neither neighbour among the choices, as the generator has them (False: only those
    timed, for comparison)."""
    out = {}
    for dtype, _ in DTYPES:
        bad, _, cells, concurrent = evidence_of(ev, dtype)
        conc_rows = [c for c in ev.get("cluster_concurrency", []) if c["dtype"] == dtype]
        if model:
            queries = list(gap_queries(ev, dtype, cells, [(nk, a, c) for nk, per in cells.items() for a, c in zip(sorted(per), sorted(per)[2:])]))
            if untimed:
                model.prefetch_candidates({q[:4] for q in queries}, conc_rows)
                queries += [q[:4] + (c,) for q in queries for c in model.cands[q[:4]] if c not in bad]
            model.prefetch(queries)
        logs, not_timed = [], 0
        for (n, k), per in sorted(cells.items()):
            if not keep_cell(n, k):
                continue
            ms = sorted(per)
            for m0, m, m1 in zip(ms, ms[1:], ms[2:]):
                est = (lambda p, mm, n=n, k=k: model(dtype, mm, n, k, p)) if model else None
                cands = (lambda mm, n=n, k=k: [c for c in model.candidates(dtype, mm, n, k, conc_rows) if c not in bad]) if model and untimed else None
                pick = [p for lo, hi, p, _ in between(model.plans if model else ev["plans"], concurrent, ev["sm_count"], n, m0, m1, per[m0], per[m1], est, cands)
                        if lo <= m <= hi][0]
                if pick not in per[m]:
                    not_timed += 1
                    continue
                logs.append(math.log(min(r["ms"] for r in per[m].values()) / per[m][pick]["ms"]))
        if logs:
            out[dtype] = (math.exp(sum(logs) / len(logs)), len(logs), not_timed, sum(1 for x in logs if x < math.log(0.95)))
    return out


def generate(evidence_path, allow_partial=False, model=None):
    """The header's text. model: a CostModel for the M between searched ones (None: the wave rule)."""
    path = pathlib.Path(evidence_path).resolve()
    try:
        ev = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise EvidenceError("cannot read %s: %s" % (evidence_path, e))
    try:
        rel = path.relative_to(ROOT).as_posix()
    except ValueError:
        rel = path.name
    why = not_a_sweep(ev)
    if why:
        raise EvidenceError("%s is %s, not a sweep of the domain's search shapes" % (evidence_path, why))
    if ev.get("complete") is False and not allow_partial:
        raise EvidenceError("%s is from a sweep that did not finish (\"complete\": false); rerun it, or pass --allow-partial to use "
                            "the shapes it measured" % evidence_path)
    regen = "%s%s%s" % (rel, " --allow-partial" if ev.get("complete") is False else "", "" if model else " --wave-rule")
    return render(ev, model, rel, regen)


def render(ev, model, rel, regen, evolve=None):
    """The header's text from evidence in the sweep's form (ev), named rel, regenerated by `python3 SCRIPT regen`.
    evolve: the provenance of evidence converted from `cake evolve` logs (evolve_evidence), else None (a sweep)."""
    if model:
        model.plans = dict(ev.get("plans", {}))  # (and the sweep's candidates the model adds)
    cells, banned, summary = build(ev, model)
    all_plans = model.plans if model else ev["plans"]
    placeholder = bool(ev.get("placeholder", False))
    used = sorted({b[2] for c in cells for b in c[4]})
    index = {name: i for i, name in enumerate(used)}
    L = []
    L.append("#pragma once")
    L.append("// GENERATED by %s from %s -- do not edit; regenerate with" % (SCRIPT, rel))
    L.append("//   python3 %s %s" % (SCRIPT, regen))
    if evolve:
        L.append("// (--check with these arguments fails on a hand edit or a stale header, and so does the unit test 'gemm dispatch header")
        L.append("// regenerates from its evidence' where this is include/cake/gemm_dispatch.hpp).")
    else:
        L.append("// (the unit test 'gemm dispatch header regenerates from its evidence' fails on a hand edit or a stale header).")
    L.append("//")
    if ev.get("complete") is False:
        L.append("// PARTIAL EVIDENCE: the sweep did not finish; shapes it did not reach take the fallback.")
    if placeholder and evolve:
        L.append("// PLACEHOLDER EVIDENCE: %s." % ev["placeholder_why"])
        L.append("// `measured` is false: cake::gemm ignores these buckets and runs choose_gemm's schedule for every shape.")
    elif placeholder:
        L.append("// PLACEHOLDER EVIDENCE: the times in %s are modeled, not measured (no H200 sweep has been run yet)." % rel)
        L.append("// `measured` is false: cake::gemm ignores these buckets and runs choose_gemm's schedule for every shape.")
    if evolve:
        L.append("// Evidence: `cake evolve` logs (bench gates: Cake's median against the peer timed beside it), %s, %d SMs; driver, CUDA and"
                 % (ev["gpu"], ev["sm_count"]))
        L.append("// date are not in the logs. Per log: its families, the searched shapes with the timed rows each gave, and its candidates:")
        for line in evolve["lines"]:
            L.append("//   " + line)
    else:
        L.append("// Evidence: %s, %d SMs, driver %s, CUDA %s, %s" % (ev["gpu"], ev["sm_count"], ev.get("driver", "?"), ev.get("cuda", "?"), ev["date"]))
    if ev.get("command"):
        L.append("//   measured by: %s" % ev["command"])
    if model:
        L.append("// Between searched M: the schedule timed at either neighbour that the cost model (cake::cost::estimate, the")
        L.append("// committed calibration) estimates fastest; the estimate is in each bucket's line (docs/gemm.md, \"The dispatcher\").")
        L.append("// Or a schedule the sweep would time at the bucket's largest M, timed at neither neighbour, where the model estimates")
        L.append("// it %d%% faster than all that were (docs/gemm.md, \"Schedules timed at neither neighbour\")." % round(100 * UNTIMED_MARGIN))
    else:
        L.append("// Between searched M: the wave rule (neighbours' times x waves; docs/gemm.md, \"The dispatcher\").")
    for dtype, _ in DTYPES:
        if dtype in summary:
            s = summary[dtype]
            fb = "%.3f" % s["fallback"] if s["fallback"] is not None else "n/a"
            L.append("// %s: %d %s; geometric mean of peer time / time: fastest schedule %.3f, fallback (choose_gemm) %s" % (
                dtype, s["shapes"], "searched shapes" if evolve else "search shapes", s["best"], fb))
        if banned.get(dtype):
            L.append("// %s: never chosen (%s): %s" % (dtype, ev.get("banned_why", "a wrong result on some search shape"), ", ".join(banned[dtype])))
    L.append('#include <array>')
    L.append('')
    L.append('#include "gemm_plan.hpp"')
    L.append('')
    L.append("namespace cake::gemm_dispatch_table {")
    L.append("")
    L.append('inline constexpr const char* evidence = "%s (%s, %s); between searched M: %s";' % (
        evolve["evidence"].replace("\\", "/").replace('"', "'") if evolve else rel, ev["gpu"], ev["date"], "the cost model" if model else "the wave rule"))
    L.append("inline constexpr bool measured = %s;" % ("false" if placeholder else "true"))
    L.append("inline constexpr int sm_count = %d;" % ev["sm_count"])
    L.append("")
    L.append("inline constexpr std::array<gemm_plan, %d> plans{{" % len(used))
    for name in used:
        L.append("    %s,  // %d %s" % (plan_init(name, all_plans[name]), index[name], name))
    L.append("}};")
    L.append("")
    nb = sum(len(c[4]) for c in cells)
    L.append("inline constexpr std::array<gemm_dispatch_bucket, %d> buckets{{" % nb)
    first, cell_lines = 0, []
    for dtype, (n, k), (n_lo, n_hi), (k_lo, k_hi), merged in cells:
        L.append("    // %s N=%d K=%d (cell %d)" % (dtype, n, k, len(cell_lines)))
        for m_lo, m_hi, plan, lines in merged:
            L.append("    {%d, %d, %d},  // M %d..%d: %s" % (m_lo, m_hi, index[plan], m_lo, m_hi, plan))
            for ln in lines:
                L.append("    //   " + ln)
        enum = dict(DTYPES)[dtype]
        cell_lines.append("    {%s, %d, %d, %d, %d, %d, %d},  // N=%d K=%d" % (enum, n_lo, n_hi, k_lo, k_hi, first, len(merged), n, k))
        first += len(merged)
    L.append("}};")
    L.append("")
    L.append("// {input, N from, N to (excluded), K from, K to (excluded), first bucket, buckets}")
    L.append("inline constexpr std::array<gemm_dispatch_cell, %d> cells{{" % len(cell_lines))
    L.extend(cell_lines)
    L.append("}};")
    L.append("")
    L.append("}  // namespace cake::gemm_dispatch_table")
    return "\n".join(L) + "\n"


def committed_evidence(header_text):
    """The evidence path a generated header names on its 'regenerate with' line."""
    m = re.search(r"^//   python3 " + re.escape(SCRIPT) + r" (\S+)( --allow-partial)?( --wave-rule)?$", header_text, re.M)
    if not m:
        raise EvidenceError("%s has no 'regenerate with' line: not generated by %s (hand-written?)" % (OUTPUT, SCRIPT))
    return ROOT / m.group(1), bool(m.group(3))


def not_a_sweep(ev):
    """Why a cake_bench_gemm_sweep file is no evidence for the table (a run of one shape or of a K ladder), or None."""
    command = " " + ev.get("command", "") + " "
    if " --k-ladder " in command:
        return "a K-ladder run (--k-ladder)"
    if " --shape " in command:
        return "a run of one shape (--shape)"
    return None


# ---- evidence from `cake evolve` logs (docs/evolve.md, "The evidence log"; docs/gemm.md, "The dispatcher") ----

# The GEMM families whose logs are evidence, and their input type: the generator is cake::kernels::gemm_sm90 (a
# gemm_sm90_config per point) and the seed leaves every field that is not an axis at gemm_sm90_config's default
# (tests/cli/gemm_sm90_family.cpp: gemm_bf16 and gemm_e4m3). --family NAME=TYPE declares another such family.
FAMILY_DTYPE = {"gemm_bf16": "bf16", "gemm_e4m3": "e4m3"}
# The peer `cake bench` times a GEMM against (tools/cli/gpu.hpp): cuBLAS for bf16 inputs, cuBLASLt for fp8 ones.
PEER_DTYPE = {"cublas": "bf16", "cublaslt": "e4m3"}
# The point's parameters a plan says (the fields of plan_init and of plan_fields, the cost program's form) ...
PLAN_PARAMS = ("bm", "bn", "stages", "cluster_m", "raster_group", "pingpong", "in_flight", "persistent")
# ... and those an evolve family has that no plan can say, with the one value the plans stand for: the dispatcher's
# plans keep the TMA-store epilogue (its guards refuse a direct store), so a direct-store candidate is not a plan.
NOT_IN_PLANS = {"direct_store": False}
EVOLVE_SCHEMA = "cake.evolve/1"


def read_evolve_log(path):
    """The records of a `cake evolve` log (JSON lines; gzip allowed)."""
    try:
        raw = pathlib.Path(path).read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        text = raw.decode()
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as e:
        raise EvidenceError("cannot read %s: %s" % (path, e))
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError as e:
            raise EvidenceError("%s:%d is not JSON (%s): not a `cake evolve` log?" % (path, i, e))
        if not isinstance(r, dict) or r.get("schema") != EVOLVE_SCHEMA:
            raise EvidenceError("%s:%d is not a %s line: not a `cake evolve` log?" % (path, i, EVOLVE_SCHEMA))
        out.append(r)
    return out


def parse_shape(text):
    """'M=4096,N=4096,K=4096' -> (4096, 4096, 4096), or None for another form."""
    kv = dict(p.split("=", 1) for p in text.split(",") if "=" in p)
    try:
        return (int(kv["M"]), int(kv["N"]), int(kv["K"])) if sorted(kv) == ["K", "M", "N"] else None
    except ValueError:
        return None


def name_rows(binary, rows):
    """For rows (dtype, M, N, K, sm_count, plan): (the plan's canonical name, the name of choose_gemm's plan there, the
    domain layer of (N, K) or None, the shape's split: search / held_out / outside), from the C++ side
    (cake::plan_name, cake::choose_gemm, bench/gemm/domain.hpp) through the cost program's --name-rows."""
    if not rows:
        return []
    binary = pathlib.Path(binary)
    if not os.access(binary, os.X_OK):
        raise EvidenceError("the cost model's program %s is not built; --from-evolve names plans and places shapes in the domain with it "
                            "(cmake --build build --target cake_cost_domain_rank; or --cost-bin PATH)" % binary)
    lines = ["%s %d %d %d %d %s" % (d, m, n, k, sm, plan_fields(p)) for d, m, n, k, sm, p in rows]
    try:
        out = subprocess.run([str(binary), "--name-rows"], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout
    except subprocess.CalledProcessError as e:
        raise EvidenceError("%s --name-rows failed (exit %d): %s" % (binary, e.returncode, e.stderr.strip()[:400]))
    got = [line.split("\t") for line in out.splitlines()]
    if len(got) != len(rows) or any(len(f) != 8 or f[:4] != [str(x) for x in r[:4]] for f, r in zip(got, rows)):
        raise EvidenceError("%s --name-rows answered %d rows for %d (or out of order)" % (binary, len(got), len(rows)))
    return [(f[4], f[5], None if f[6] == "-" else f[6], f[7]) for f in got]


def evolve_evidence(paths, cost_bin, sm_count=None, families=(), held_out=False, display=None):
    """Evidence in the sweep's form (what build() reads) from `cake evolve` logs, with its provenance. A (candidate,
    shape) whose last bench line passed is a row (Cake's median and the peer's, the check's ok and error); one a run or
    bench gate rejected (a wrong result, a crash, a hang or a time-out; at any shape, the minimization's included) is a
    "rejected" row that bans its plan for the type; anything else (budget, no GPU, no reference) is no evidence.
    Candidates whose parameters no plan can say (NOT_IN_PLANS, an axis that is no plan field, a field that is not an
    axis) are skipped and counted, never mapped to a plan. Each shape is placed in the domain (its layer, searched or
    held out, or outside it): rows at held-out shapes are left out (they are the score's) unless held_out; rows outside
    the domain count. The logs hold no date, driver, CUDA version or split-K concurrency: the header says so, and the
    cost model's split-K candidates between searched M plan with the SMs / splits."""
    display = display or [str(p) for p in paths]
    dtypes = dict(FAMILY_DTYPE)
    for f in families:
        name, _, dtype = f.partition("=")
        if dtype not in TOL:
            raise EvidenceError("--family %s: want NAME=TYPE with TYPE one of %s" % (f, ", ".join(sorted(TOL))))
        dtypes[name] = dtype
    last = {}  # (family, candidate, shape, gate) -> (log index, record): the later line counts, across logs in order
    replaced = 0
    for i, path in enumerate(paths):
        for r in read_evolve_log(path):
            for key in ("family", "candidate", "shape", "gate", "verdict", "params", "evidence"):
                if key not in r:
                    raise EvidenceError("%s: a line without '%s': not a `cake evolve` log?" % (path, key))
            key = (r["family"], r["candidate"], r["shape"], r["gate"])
            if key in last and last[key][0] != i and r["gate"] == "bench" and last[key][1]["verdict"] == "pass":
                replaced += 1
            last[key] = (i, r)
    points = {}  # (family, candidate, shape) -> {gate: (log index, record)} of the GPU gates
    for (fam, cand, shape, gate), v in last.items():
        if gate in ("run", "bench") and shape:
            points.setdefault((fam, cand, shape), {})[gate] = v
    unknown, skipped, untimed = {}, {}, 0  # family -> points; reason -> {candidate: timed at some shape}
    found = []  # (family, dtype, candidate, params, (M, N, K), log index, kind, shape row or why)
    devices = set()
    for (fam, cand, shape), gates in sorted(points.items()):
        if fam not in dtypes:
            unknown[fam] = unknown.get(fam, 0) + 1
            continue
        dtype = dtypes[fam]
        bench = gates.get("bench")
        timed = bench is not None and bench[1]["verdict"] == "pass"
        params = next(iter(gates.values()))[1]["params"]
        missing = [k for k in PLAN_PARAMS + tuple(NOT_IN_PLANS) if k not in params]
        extra = sorted(set(params) - set(PLAN_PARAMS) - set(NOT_IN_PLANS))
        why = ("the point does not say %s (an axis of no plan field, or a field that is not an axis)" % ", ".join(missing) if missing else
               "axes no plan says: %s" % ", ".join(extra) if extra else
               next(("%s=%s (no plan says it)" % (k, json.dumps(params[k])) for k, v in NOT_IN_PLANS.items() if params[k] != v), None))
        if why:
            seen = skipped.setdefault(why, {})
            seen[cand] = seen.get(cand, False) or timed
            continue
        mnk = parse_shape(shape)
        if mnk is None:
            raise EvidenceError("%s: shape '%s' is not M=..,N=..,K=..: not a GEMM family?" % (fam, shape))
        for _, r in gates.values():
            if (r["evidence"] or {}).get("device"):
                devices.add(r["evidence"]["device"])
        rejects = [r for _, r in gates.values() if r["verdict"] == "reject"]
        if rejects:
            wrong = any(s.get("ok") is False for r in rejects for s in (r["evidence"] or {}).get("shapes", []))
            found.append((fam, dtype, cand, params, mnk, max(i for i, _ in gates.values()), "rejected",
                          "a wrong result" if wrong else (rejects[0]["evidence"] or {}).get("cause") or "rejected"))
        if timed:
            i, r = bench
            rows = [x for x in r["evidence"].get("shapes", []) if parse_shape(",".join("%s=%s" % kv for kv in x.get("shape", {}).items())) == mnk]
            if not rows:
                raise EvidenceError("%s: the bench line of %s at %s has no row of that shape" % (display[i], cand, shape))
            x = rows[0]
            peer = x.get("peer")
            if PEER_DTYPE.get(peer) != dtype:
                raise EvidenceError("%s: family %s is taken as %s, but its bench peer is '%s' (%s)" % (display[i], fam, dtype, peer,
                                    ", ".join("%s for %s" % kv for kv in PEER_DTYPE.items())))
            if x.get("ok") and (x.get("cake_ms") is None or x.get("peer_ms") is None):
                untimed += 1
                continue
            found.append((fam, dtype, cand, params, mnk, i, "timed" if x.get("ok") else "rejected", x if x.get("ok") else "a wrong result"))
        elif not rejects:
            untimed += 1
    # The GPU: one for all rows (a table is for one SM count); a mocked run says no SM count (--sm-count).
    sms = {int(m.group(2)) for d in devices for m in [re.match(r"^(.*), (\d+) SMs$", d)] if m}
    names = {re.sub(r", \d+ SMs$", "", d) for d in devices}
    if len(names) > 1:
        raise EvidenceError("the logs come from more than one GPU (%s): a table is for one" % "; ".join(sorted(names)))
    if len(sms) > 1 or (sm_count and sms and sms != {sm_count}):
        raise EvidenceError("the logs' GPUs have %s SMs%s" % (" and ".join(map(str, sorted(sms))), ", not --sm-count %d" % sm_count if sm_count else ""))
    sm = sm_count or (sms.pop() if sms else None)
    if found and not sm:
        raise EvidenceError("the logs do not say the GPU's SM count (device '%s': a mocked GPU?): pass --sm-count N" % ", ".join(sorted(devices)))
    gpu = names.pop() if names else "?"
    mock = "mock" in gpu.lower() or "CAKE_GPU_MOCK" in gpu
    # Names, the fallback and the domain from the C++ side; rows in the sweep's form.
    plan_of = lambda p: dict({"kernel": "sm90"}, **{k: p[k] for k in PLAN_PARAMS})
    named = name_rows(cost_bin, [(d, m, n, k, sm, plan_of(p)) for _, d, _, p, (m, n, k), _, _, _ in found])
    plans, rows, per_log = {}, [], [dict(families=set(), shapes={}, timed=0, rejected=set()) for _ in paths]
    left_out = 0
    for (fam, dtype, cand, params, (m, n, k), i, kind, x), (name, fallback, layer, split) in zip(found, named):
        plan = plan_of(params)
        if name in plans and plans[name] != plan:
            raise EvidenceError("cake::plan_name gives %s for %s and for %s: the name does not tell them apart" % (name, plans[name], plan))
        plans[name] = plan
        where = ("a search shape of %s" % layer if split == "search" else "a held-out shape of %s" % layer if split == "held_out" else
                 "outside the domain (N, K of %s)" % layer if layer else "outside the domain")
        log = per_log[i]
        log["families"].add("%s (%s)" % (fam, dtype))
        row = {"dtype": dtype, "layer": layer, "M": m, "N": n, "K": k, "split": split, "plan": name, "fallback": name == fallback,
               "family": fam, "candidate": cand, "log": display[i]}
        if kind == "rejected":
            log["rejected"].add(cand)
            rows.append(dict(row, ms=None, peer_ms=None, ok=False, rejected=True, why=x))
            continue
        if split == "held_out" and not held_out:
            left_out += 1
        log["timed"] += 1
        log["shapes"].setdefault("M=%d,N=%d,K=%d" % (m, n, k), [where, 0])[1] += 1
        rows.append(dict(row, ms=x["cake_ms"], peer_ms=x["peer_ms"], rel_err=x.get("rel_err"), ok=True,
                         note="%s: %s; %s" % (display[i], fam, where)))
    lines, notes = [], []
    for i, log in enumerate(per_log):
        shapes = "; ".join("%s (%s): %d timed" % (s, w, c) for s, (w, c) in log["shapes"].items()) or "no timed candidate"
        lines.append("%s: %s; %s; %d rejected at run or bench" % (display[i], ", ".join(sorted(log["families"])) or "no family taken", shapes,
                                                                  len(log["rejected"])))
    for why, cands in sorted(skipped.items()):
        notes.append("skipped %d candidate(s) (%d of them timed): %s" % (len(cands), sum(cands.values()), why))
    for fam, c in sorted(unknown.items()):
        notes.append("skipped %d (candidate, shape) of family %s: no input type known for it (--family %s=bf16|e4m3 if its generator is "
                     "gemm_sm90 with the other fields at their defaults)" % (c, fam, fam))
    if left_out:
        notes.append("left out %d timed row(s) at held-out shapes of the domain (the held-out score's; --include-held-out takes them)" % left_out)
    if untimed:
        notes.append("%d (candidate, shape) with no time and no rejection (budget, no GPU, no reference): not evidence" % untimed)
    if replaced:
        notes.append("%d bench result(s) replaced by a later log's for the same candidate and shape" % replaced)
    splits = ["search", "outside"] + (["held_out"] if held_out else [])
    if not any(r["split"] in splits and not r.get("rejected") for r in rows):
        raise EvidenceError("the logs hold no timed, correct candidate the dispatcher can run at a shape that counts%s" % "".join("; " + n for n in notes))
    ev = {"schema": "cake.gemm-sweep/1 (from cake.evolve/1)", "placeholder": mock, "complete": True, "gpu": gpu, "sm_count": sm, "date": "date not in the logs",
          "plans": plans, "rows": rows, "cluster_concurrency": [], "evidence_splits": splits,
          "domain": {"source": "bench/gemm/domain.hpp"},
          "banned_why": "rejected at a run or bench gate of a log: a wrong result, a crash, a hang or a time-out"}
    if mock:
        ev["placeholder_why"] = "the GPU verdicts of these logs are scripted (CAKE_GPU_MOCK: device '%s'), not measured" % gpu
    return ev, {"lines": lines + ["over all logs: " + n for n in notes], "notes": notes, "evidence": "evolve logs " + ", ".join(display)}


def evolve_regen(display, sm_count, families, held_out, wave_rule):
    """The arguments that regenerate a header from evolve logs (its 'regenerate with' line)."""
    args = ["--from-evolve"] + list(display)
    if sm_count:
        args += ["--sm-count", str(sm_count)]
    for f in families:
        args += ["--family", f]
    if held_out:
        args.append("--include-held-out")
    if wave_rule:
        args.append("--wave-rule")
    return " ".join(shlex.quote(a) for a in args)


def generate_evolve(logs, cost_bin, model=None, sm_count=None, families=(), held_out=False):
    """The header's text from `cake evolve` logs, and the notes to print (what was skipped or left out, counted)."""
    display = []
    for p in logs:
        path = pathlib.Path(p).resolve()
        try:
            display.append(path.relative_to(ROOT).as_posix())
        except ValueError:
            display.append(str(p))
    ev, prov = evolve_evidence(logs, cost_bin, sm_count, families, held_out, display)
    regen = evolve_regen(display, sm_count, families, held_out, model is None)
    return render(ev, model, "the `cake evolve` logs " + ", ".join(display), regen, prov), prov["notes"]


def self_test():
    """The bucket rules on a small evidence file, and the stale-header check on an edited copy."""
    plan = {"kernel": "sm90", "bm": 128, "bn": 256, "stages": 4, "cluster_m": 2, "raster_group": 8, "pingpong": False, "in_flight": 0,
            "persistent": True}
    ev = {"gpu": "test", "date": "-", "sm_count": 132, "plans": {"a": plan, "b": dict(plan, bn=128), "c": dict(plan, cluster_m=1)}, "rows": []}

    def row(m, name, ms, ok=True, fallback=False, split="search", dtype="bf16", n=1000, k=500, peer=1.0):
        ev["rows"].append({"dtype": dtype, "M": m, "N": n, "K": k, "split": split, "plan": name, "fallback": fallback, "ms": ms, "peer_ms": peer, "ok": ok})

    # M = 8: a fastest; M = 64: b fastest; M = 256: c wrong there (so never chosen), b fastest; the
    # held-out row and the row without a peer are not evidence.
    row(8, "a", 1.0, fallback=True), row(8, "b", 2.0), row(8, "c", 1.1)
    row(64, "a", 1.5, fallback=True), row(64, "b", 1.0), row(64, "c", 1.01)
    row(256, "a", 2.0, fallback=True), row(256, "b", 1.0), row(256, "c", 0.5, ok=False)
    row(32, "c", 0.01, split="held_out")
    row(8, "a", 1.0, dtype="e4m3", peer=None)  # no peer: not evidence
    cells, banned, summary = build(ev)
    assert banned["bf16"] == ["c"], banned
    # A run of one shape or a K ladder is not evidence (its K are not the domain's).
    assert not_a_sweep(dict(ev, command="cake_bench_gemm_sweep --json x.json")) is None
    assert "K-ladder" in not_a_sweep(dict(ev, command="cake_bench_gemm_sweep --shape 1,4096,4096 --k-ladder 64,128 --json x.json"))
    assert "one shape" in not_a_sweep(dict(ev, command="cake_bench_gemm_sweep --dtype bf16 --shape 512,2112,7168 --json y.json"))
    assert len(cells) == 1, cells
    dtype, nk, nr, kr, merged = cells[0]
    got = [(lo, hi, p) for lo, hi, p, _ in merged]
    # between 8 and 64: a (1 + 1.5) beats b (2 + 1); between 64 and 256: b (1 + 1) beats a; then merged
    assert got == [(1, 63, "a"), (64, 512, "b")], got
    assert nr == (800, 1251) and kr == (400, 626), (nr, kr)
    assert "e4m3" not in summary
    # Without the wrong row, c is the compromise between M = 8 and M = 64 (1.1 + 1.01 < 2 + 1 and < 1 + 1.5).
    ev["rows"] = [r for r in ev["rows"] if not (r["plan"] == "c" and r["M"] == 256)]
    got = [(lo, hi, p) for lo, hi, p, _ in build(ev)[0][0][4]]
    assert got == [(1, 8, "a"), (9, 63, "c"), (64, 512, "b")], got
    # Whole waves: x (128 x 128 tiles) and y (128 x 256) at N = 16896 (132 columns of 128) run 1..4 and 1..2
    # waves between M = 128 and 512; y is faster at one wave each, x where y's second wave is half empty.
    # x timed 0.7 / 2.8 ms, y 1.5 / 2.0 ms: 129..256 y (1.22 against 1.4), 257..384 x (2.1 against 2.45),
    # 385..511 y again (2.45 against 2.8, more than 3% apart).
    plans = {"x": dict(plan, bn=128, cluster_m=1), "y": dict(plan, bn=256, cluster_m=1)}
    r = lambda ms: {"ms": ms}
    got = [(lo, hi, p) for lo, hi, p, _ in between(plans, {}, 132, 16896, 128, 512, {"x": r(0.7), "y": r(1.5)}, {"x": r(2.8), "y": r(2.0)})]
    assert got == [(129, 256, "y"), (257, 384, "x"), (385, 511, "y")], got
    # Split-K through global memory: its plan line says so, and its waves count CTAs at the SMs' full number
    # whatever the split (a cluster of 4 would hold 120 of the 132): 4 x 17 x 2 = 136 CTAs are two waves, 8 x 8 x 2 one.
    g = {"kernel": "splitk", "bm": 128, "bn": 128, "splits": 2, "stages": 6, "global_sum": True, "name": "g"}
    assert plan_init("g", g).endswith(".stages = 6, .global_sum = true}}"), plan_init("g", g)
    assert ".global_sum" not in plan_init("k", dict(g, global_sum=False))
    assert waves(g, {}, 132, 512, 2112) == 2 and waves(dict(g, bm=64, bn=264), {}, 132, 512, 2112) == 1
    assert waves(dict(g, splits=4), {}, 132, 128, 2112) == 1  # 68 CTAs
    assert waves(dict(g, splits=4, global_sum=False), {}, 132, 256, 2112) == 2  # 136 CTAs in clusters of 4: 132 at most
    # Leave-one-out on the toy evidence: M = 64 predicted from M = 8 and 256 (1 wave each): c (1.1, timed at M = 8
    # only) before b (sqrt(2 x 1)); c measured 1.01 there against b's 1.0
    loo = leave_one_out(ev)
    assert loo["bf16"][1:3] == (1, 0) and abs(loo["bf16"][0] - 1 / 1.01) < 1e-12, loo
    # With the cost model and the sweep's candidates: at N = 1000 the model offers u, timed at no M and estimated far
    # faster, so M = 64's pick is u (not timed there: counted apart); at N = 2000 it offers none and b is scored.
    # Without the candidates (untimed=False) both cells are scored from the timed schedules.
    class FakeModel:
        def __init__(self):
            self.plans, self.cands = dict(ev["plans"]), {}

        def prefetch(self, keys):
            pass

        def prefetch_candidates(self, keys, concurrency):
            for key in keys:
                self.cands[key] = ["u"] if key[2] == 1000 else []
            self.plans.setdefault("u", dict(plan, bn=64))

        def candidates(self, dtype, m, n, k, concurrency=()):
            self.prefetch_candidates([(dtype, m, n, k)], concurrency)
            return self.cands[(dtype, m, n, k)]

        def __call__(self, dtype, m, n, k, p):
            return 1.0 if p == "u" else 10.0 + len(p)

    ev2 = dict(ev, rows=ev["rows"] + [dict(r, N=2000) for r in ev["rows"] if r["N"] == 1000 and r["dtype"] == "bf16"])
    assert leave_one_out(ev2, FakeModel(), untimed=False)["bf16"][1:3] == (2, 0)
    assert leave_one_out(ev2, FakeModel(), untimed=True)["bf16"][1:3] == (1, 1)
    # The cost model's rule: between M = 128 and 512 the pieces end at multiples of 64 (and at 511); the model is
    # asked at each piece's largest M and its least estimate wins whatever the measured neighbours say (the
    # wave rule above picked y at 129..256); within 1% the bucket before goes on (x at 257..384, where y is
    # estimated 0.8% faster); a piece where it estimates nothing falls back to the wave rule (y above 384).
    asked = []

    def fake(p, m):
        asked.append((p, m))
        if m > 384:
            return None
        return {"x": 10.0, "y": 20.0}[p] if m <= 256 else {"x": 30.24, "y": 30.0}[p]

    got = [(lo, hi, p) for lo, hi, p, _ in between(plans, {}, 132, 16896, 128, 512, {"x": r(0.7), "y": r(1.5)}, {"x": r(2.8), "y": r(2.0)}, fake)]
    assert got == [(129, 384, "x"), (385, 511, "y")], got
    assert sorted(set(m for _, m in asked)) == [192, 256, 320, 384, 448, 511], asked
    fake2 = lambda p, m: None if m > 384 else ({"x": 10.0, "y": 20.0}[p] if m <= 256 else {"x": 30.5, "y": 30.0}[p])  # 1.7%: switch
    got = [(lo, hi, p) for lo, hi, p, _ in between(plans, {}, 132, 16896, 128, 512, {"x": r(0.7), "y": r(1.5)}, {"x": r(2.8), "y": r(2.0)}, fake2)]
    assert got == [(129, 256, "x"), (257, 511, "y")], got
    # A schedule the sweep would time at the piece's M that neither neighbour timed (w, v): the fastest estimated
    # of them taken where at least 3% under the least timed estimate (w: 9.6 against 10 at 129..256; v, 9.9, is
    # estimated slower), not at 2% (257..384: 29.4 against 30), and where the sweep would time none (above 384) or
    # the model cannot say, the rule above stands; a candidate timed at a neighbour (x) is not counted twice.
    fake3 = lambda p, m: None if m > 384 else {"x": 10.0, "y": 20.0, "w": 9.6, "v": 9.9}[p] if m <= 256 else {"x": 30.5, "y": 30.0, "w": 29.4, "v": None}[p]
    cands = lambda m: ["x", "v", "w"] if m <= 384 else []
    got = between(plans, {}, 132, 16896, 128, 512, {"x": r(0.7), "y": r(1.5)}, {"x": r(2.8), "y": r(2.0)}, fake3, cands)
    assert [(lo, hi, p) for lo, hi, p, _ in got] == [(129, 256, "w"), (257, 511, "y")], got
    assert "a sweep candidate timed at neither" in got[0][3] and "9.6 us against 10.0 us for x" in got[0][3], got[0][3]
    # Both neighbours measured x fastest (0.7 against 1.5, 1.9 against 2.0): x between them although the model puts y
    # ahead (20 against 30 us at 129..256, 30 against 40 above), one bucket; a schedule neither timed (w) estimated
    # 3% under x's estimate still displaces it (at 257..384: 29 against 40).
    fake4 = lambda p, m: {"x": 30.0, "y": 20.0, "w": 31.0}[p] if m <= 256 else {"x": 40.0, "y": 30.0, "w": 29.0 if m <= 384 else 45.0}[p]
    got = between(plans, {}, 132, 16896, 128, 512, {"x": r(0.7), "y": r(1.5)}, {"x": r(1.9), "y": r(2.0)}, fake4, lambda m: ["w"])
    assert [(lo, hi, p) for lo, hi, p, _ in got] == [(129, 256, "x"), (257, 384, "w"), (385, 511, "x")], got
    assert "the fastest at both" in got[0][3], got[0][3]
    got = between(plans, {}, 132, 16896, 128, 512, {"x": r(0.7), "y": r(1.5)}, {"x": r(1.9), "y": r(2.0)}, fake4)
    assert [(lo, hi, p) for lo, hi, p, _ in got] == [(129, 511, "x")], got
    # The estimates come from the cost program's output rows (a stand-in program here): "ok TIME" is a time in
    # us, "no REASON" no estimate; a program that fails, or leaves a row unanswered, is an error that names it.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        def stand_in(body):
            f = pathlib.Path(tmp) / ("cost%d" % len(os.listdir(tmp)))
            f.write_text("#!/bin/sh\n" + body)
            f.chmod(0o755)
            return CostModel(f, {"x": plans["x"]})
        cm = stand_in("""awk '{ if ($2 == 7) printf "%s\\t%s\\t%s\\t%s\\t%s\\tno\\ttoo small\\n", $1, $2, $3, $4, $5;
                           else printf "%s\\t%s\\t%s\\t%s\\t%s\\tok\\t%d.5\\tmma\\n", $1, $2, $3, $4, $5, $2 }'\n""")
        assert cm("bf16", 300, 16896, 512, "x") == 300.5 and cm("bf16", 7, 16896, 512, "x") is None, cm.known
        for body, words in (("echo broken >&2; exit 3\n", "failed (exit 3): broken"), ("true\n", "gave no answer for 1 rows")):
            try:
                stand_in(body)("bf16", 300, 16896, 512, "x")
                raise AssertionError("no error from a cost program that " + body)
            except EvidenceError as e:
                assert words in str(e), e
        # --model-candidates rows: every schedule of the shape (each added to the model's plans under its name), after
        # the concurrency rows it was given (the stand-in echoes how many); a plan that the evidence defines otherwise,
        # or a shape without a row, is an error
        body = """awk '/^conc/ { c++; next } { printf "%s\\t%s\\t%s\\t%s\\tbn144_s6_c2\\tsm90 128 144 6 2 8 0 0 1\\n", $1, $2, $3, $4;
                                     if ($2 <= 128) printf "%s\\t%s\\t%s\\t%s\\tsk%d_bm128_bn96_s6\\tsplitk 96 %d 6 128 0\\n", $1, $2, $3, $4, c, c }'\n"""
        cm = stand_in(body)
        conc = [{"dtype": "bf16", "plan": "sk4_bn128_s6", "cluster": 4, "max_active_clusters": 30}] * 4
        assert cm.candidates("bf16", 2048, 2112, 7168, conc) == ["bn144_s6_c2"] and cm.candidates("bf16", 128, 2112, 7168, conc) == ["bn144_s6_c2", "sk4_bm128_bn96_s6"], cm.cands
        assert cm.plans["bn144_s6_c2"] == dict(plan, bn=144, stages=6), cm.plans
        assert cm.plans["sk4_bm128_bn96_s6"] == {"kernel": "splitk", "bn": 96, "splits": 4, "stages": 6, "bm": 128, "global_sum": False}, cm.plans
        assert plan_init("bn144_s6_c2", cm.plans["bn144_s6_c2"]).startswith("{gemm_kernel::sm90, {.bm = 128, .bn = 144, .stages = 6, .cluster_m = 2"), cm.plans
        cm2 = stand_in(body)
        cm2.plans["bn144_s6_c2"] = dict(plan, bn=144, stages=5)
        try:
            cm2.candidates("bf16", 2048, 2112, 7168, conc)
            raise AssertionError("no error for a schedule the evidence defines otherwise")
        except EvidenceError as e:
            assert "names bn144_s6_c2 as" in str(e), e
        try:
            stand_in("awk '{ }'\n").candidates("bf16", 2048, 2112, 7168)
            raise AssertionError("no error for a shape without candidates")
        except EvidenceError as e:
            assert "gave no schedule for bf16 2048 x 2112 x 7168" in str(e), e
        try:
            CostModel(pathlib.Path(tmp) / "absent", {})
            raise AssertionError("no error for a cost program that is not built")
        except EvidenceError as e:
            assert "is not built" in str(e) and "--cost-bin" in str(e), e
    print("gemm_dispatch.py: self-test passed")
    return 0


def check_committed(model, cost_bin):
    """The committed header regenerates identically from the evidence it names (and an edited copy would not)."""
    text = OUTPUT.read_text()
    m = re.search(r"^//   python3 " + re.escape(SCRIPT) + r" (--from-evolve .*)$", text, re.M)
    if m:  # a header from `cake evolve` logs: its line's arguments, the logs' paths from the source root
        a = parser().parse_args(shlex.split(m.group(1)))
        logs = [str(ROOT / p) for p in a.from_evolve]
        fresh, _ = generate_evolve(logs, cost_bin, None if a.wave_rule else model, a.sm_count, a.family or (), a.include_held_out)
        if fresh != text:
            print("gemm_dispatch.py: %s is stale or hand-edited; regenerate: python3 %s %s" % (OUTPUT, SCRIPT, m.group(1)), file=sys.stderr)
            return 1
        print("gemm_dispatch.py: %s matches %s" % (OUTPUT, m.group(1)))
        return 0
    partial = "// PARTIAL EVIDENCE:" in text
    evidence, wave_rule = committed_evidence(text)
    fresh = generate(evidence, partial, None if wave_rule else model)
    edited = text.replace("inline constexpr int sm_count = ", "inline constexpr int sm_count = 1", 1)
    assert edited != text and fresh != edited
    if fresh != text:
        print("gemm_dispatch.py: %s is stale or hand-edited; regenerate: python3 %s %s%s" % (OUTPUT, SCRIPT, evidence, " --wave-rule" if wave_rule else ""),
              file=sys.stderr)
        return 1
    print("gemm_dispatch.py: %s matches %s" % (OUTPUT, evidence))
    return 0


def parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("evidence", nargs="?", help="the sweep JSON (cake_bench_gemm_sweep --json)")
    ap.add_argument("--from-evolve", nargs="+", metavar="LOG", help="the evidence is `cake evolve` logs (JSON lines, gzip allowed) instead of a sweep: "
                    "each (candidate, shape) its bench gate timed is a row (docs/gemm.md, \"The dispatcher\")")
    ap.add_argument("--sm-count", type=int, default=None, help="(--from-evolve) the GPU's SM count where the logs do not say it (a mocked GPU)")
    ap.add_argument("--family", action="append", metavar="NAME=TYPE", help="(--from-evolve) a family's input type (bf16 or e4m3) beyond the known "
                    "ones (%s); its generator must be gemm_sm90 with the fields that are not axes at their defaults" % ", ".join(
                        "%s=%s" % kv for kv in sorted(FAMILY_DTYPE.items())))
    ap.add_argument("--include-held-out", action="store_true", help="(--from-evolve) take rows at the domain's held-out shapes too (then the held-out "
                    "score of the table is no longer held out)")
    ap.add_argument("-o", "--output", default=str(OUTPUT), help="the header to write (default include/cake/gemm_dispatch.hpp)")
    ap.add_argument("--check", action="store_true", help="exit 1 if the header differs from what the evidence generates")
    ap.add_argument("--check-committed", action="store_true", help="--check against the evidence the committed header names")
    ap.add_argument("--allow-partial", action="store_true", help="take a sweep file that did not finish (\"complete\": false)")
    ap.add_argument("--self-test", action="store_true", help="test the bucket rules and the stale-header check")
    ap.add_argument("--leave-one-out", action="store_true", help="score the rule for M between searched ones on the searched M themselves")
    ap.add_argument("--timed-only", action="store_true", help="(--leave-one-out) only the schedules timed at a neighbour, none the sweep would time "
                    "there that neither did (for comparison)")
    ap.add_argument("--cost-bin", default=str(DEFAULT_COST_BIN), help="the cost model's program (cmake target cake_cost_domain_rank; default %(default)s)")
    ap.add_argument("--wave-rule", action="store_true", help="between searched M, the neighbours' times x waves instead of the cost model")
    return ap


def main(argv):
    ap = parser()
    a = ap.parse_args(argv)
    if a.from_evolve and a.evidence:
        ap.error("either a sweep file or --from-evolve LOG..., not both")
    if not a.from_evolve and (a.sm_count or a.family or a.include_held_out):
        ap.error("--sm-count, --family and --include-held-out go with --from-evolve")
    notes = []
    try:
        if a.self_test:
            return self_test()
        model = None if a.wave_rule else CostModel(a.cost_bin, {})
        if a.check_committed:
            return check_committed(model, a.cost_bin)
        if not a.evidence and not a.from_evolve:
            ap.error("the evidence file (or --from-evolve LOG...) is required")
        if a.leave_one_out:
            if a.from_evolve:
                ev, _ = evolve_evidence(a.from_evolve, a.cost_bin, a.sm_count, a.family or (), a.include_held_out)
            else:
                ev = json.loads(pathlib.Path(a.evidence).read_text())
            if model:
                model.plans = dict(ev["plans"])  # (and the sweep's candidates the model adds)
            # also apart: the layers five of the cost model's constants were fitted on (bench/cost/fit_sweep.py) and the others
            fit = json.loads((ROOT / "bench/results/h200/cost_sweep_fit.json").read_text())["fit_layers"]
            fitted = {(r["N"], r["K"]) for r in ev["rows"] if (r.get("layer") or "").split(".")[0] in fit}
            for part, keep in (("", lambda n, k: True), (" (cost fit's layers)", lambda n, k: (n, k) in fitted),
                               (" (other layers)", lambda n, k: (n, k) not in fitted)):
                for dtype, (gm, n, untimed, low) in leave_one_out(ev, model, keep, not a.timed_only).items():
                    print("%s%s: %d interior searched M predicted from their neighbours: pick / fastest %.4f (geometric mean), %d below 0.95, "
                          "%d more whose pick was not timed there" % (dtype, part, n, gm, low, untimed))
            return 0
        if a.from_evolve:
            text, notes = generate_evolve(a.from_evolve, a.cost_bin, model, a.sm_count, a.family or (), a.include_held_out)
            source = evolve_regen(a.from_evolve, a.sm_count, a.family or (), a.include_held_out, a.wave_rule)
        else:
            text = generate(a.evidence, a.allow_partial, model)
            source = a.evidence + (" --wave-rule" if a.wave_rule else "")
    except EvidenceError as e:
        print("gemm_dispatch.py: %s" % e, file=sys.stderr)
        return 2
    for n in notes:  # (--from-evolve: what was skipped or left out, counted)
        print("gemm_dispatch.py: %s" % n)
    out = pathlib.Path(a.output)
    if a.check:
        current = out.read_text() if out.exists() else ""
        if current != text:
            print("gemm_dispatch.py: %s is stale or hand-edited; regenerate: python3 %s %s" % (a.output, SCRIPT, source), file=sys.stderr)
            return 1
        print("gemm_dispatch.py: %s matches %s" % (a.output, a.evidence or " ".join(a.from_evolve)))
        return 0
    out.write_text(text)
    print("gemm_dispatch.py: wrote %s" % a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
