#!/usr/bin/env python3
"""Join GEMM sweep files (cake_bench_gemm_sweep --json) measured in several device calls into one evidence file.

  python3 tools/gen/merge_sweeps.py OUT.json IN1.json IN2.json ...
  python3 tools/gen/merge_sweeps.py --self-test

A sweep of the whole domain takes longer than one device call allows (docs/gemm.md, "The dispatcher"): run it
in parts (e.g. `--dtype e4m3`, then `--dtype bf16`) and join them here before tools/gen/gemm_dispatch.py.
The inputs must come from the same GPU (name, SM count), driver and CUDA; their plans must agree by name.
A later file that holds a (dtype, M, N, K) replaces every row of that shape (a shape's candidates and peer
are compared within one run, never across runs; a re-sweep with a new candidate set drops the old set). The result is
"complete" when every type it holds has a row for every search shape of the domain, as the inputs'
"domain" member counts them; otherwise it stays partial (the generator then needs --allow-partial).
"""
import json
import pathlib
import sys

SAME = ("schema", "gpu", "sm_count", "sm", "driver", "cuda")


class MergeError(Exception):
    pass


def merge(docs, names):
    if not docs:
        raise MergeError("no input files")
    first = docs[0]
    for d, n in zip(docs[1:], names[1:]):
        for key in SAME:
            if d.get(key) != first.get(key):
                raise MergeError("%s has %s %r, %s has %r: sweeps of different machines or software are not joined" % (n, key, d.get(key), names[0], first.get(key)))
        if d.get("placeholder") or first.get("placeholder"):
            raise MergeError("a placeholder file (modeled times) is not joined with measurements")
    plans, shapes_rows = {}, {}
    for d, n in zip(docs, names):
        for name, plan in d.get("plans", {}).items():
            if name in plans and plans[name] != plan:
                raise MergeError("plan %s differs between the inputs (%s): not the same candidate set" % (name, n))
            plans[name] = plan
        mine = {}
        for r in d.get("rows", []):
            mine.setdefault((r["dtype"], r["M"], r["N"], r["K"]), {})[r["plan"]] = r
        shapes_rows.update(mine)  # this file's shapes replace the earlier files' rows of those shapes
    rows = {(k, p): r for k, by_plan in shapes_rows.items() for p, r in by_plan.items()}
    used = {r["plan"] for r in rows.values()}
    plans = {name: plan for name, plan in plans.items() if name in used}
    out = dict(first)
    out["plans"] = dict(sorted(plans.items()))
    out["rows"] = sorted(rows.values(), key=lambda r: (r["dtype"], r["M"], r["N"], r["K"], not r.get("fallback", False), r["plan"]))
    out["date"] = max(d.get("date", "") for d in docs)
    out["command"] = " + ".join(d.get("command", "?") for d in docs)
    # an input that is itself a merge stands for the files it was merged from
    out["merged_from"] = [f for d, n in zip(docs, names) for f in (d.get("merged_from") or [pathlib.Path(n).name])]
    # The cluster concurrency (a property of the device and the kernels, not of a shape) per (type, plan): the
    # latest input that measured a schedule wins, the others' entries stay (a run of one type keeps the other's).
    conc = {}
    for d in docs:
        for c in d.get("cluster_concurrency") or []:
            conc[(c.get("dtype"), c["plan"])] = c
    if conc:
        out["cluster_concurrency"] = list(conc.values())
    search = (first.get("domain") or {}).get("search")
    shapes = {}
    for r in out["rows"]:
        if r.get("split", "search") == "search":
            shapes.setdefault(r["dtype"], set()).add((r["M"], r["N"], r["K"]))
    out["complete"] = bool(search) and bool(shapes) and all(len(s) == search for s in shapes.values())
    out["coverage"] = {t: "%d of %s search shapes" % (len(s), search) for t, s in sorted(shapes.items())}
    return out


def self_test():
    def doc(rows, date="2026-12-02", **kw):
        d = {"schema": "cake.gemm-sweep/1", "gpu": "H200", "sm_count": 132, "sm": "sm_90a", "driver": "1", "cuda": "13.0", "date": date,
             "command": "sweep", "complete": False, "domain": {"search": 2}, "plans": {"a": {"bn": 256}, "b": {"bn": 128}}, "rows": rows}
        d.update(kw)
        return d

    def row(t, m, plan, ms):
        return {"dtype": t, "M": m, "N": 8, "K": 8, "split": "search", "plan": plan, "fallback": plan == "a", "ms": ms, "peer_ms": 1.0, "ok": True}

    e4 = doc([row("e4m3", 1, "a", 1.0), row("e4m3", 2, "a", 1.0)])
    bf_part = doc([row("bf16", 1, "a", 2.0)])
    bf_rest = doc([row("bf16", 1, "a", 3.0), row("bf16", 2, "b", 1.5)], date="2026-12-03")
    m = merge([e4, bf_part], ["e4.json", "bf1.json"])
    assert not m["complete"] and m["coverage"] == {"bf16": "1 of 2 search shapes", "e4m3": "2 of 2 search shapes"}, m["coverage"]
    m = merge([e4, bf_part, bf_rest], ["e4.json", "bf1.json", "bf2.json"])
    assert m["complete"], m["coverage"]
    assert len(m["rows"]) == 4 and [r["ms"] for r in m["rows"] if r["dtype"] == "bf16" and r["M"] == 1] == [3.0], m["rows"]  # the later file wins
    assert m["date"] == "2026-12-03" and m["merged_from"] == ["e4.json", "bf1.json", "bf2.json"]
    # a re-sweep of a shape with another candidate set: the earlier file's rows of that shape are gone
    e4_again = doc([row("e4m3", 1, "b", 0.5)], date="2026-12-04")
    m = merge([e4, e4_again], ["e4.json", "e4b.json"])
    assert [(r["M"], r["plan"]) for r in m["rows"]] == [(1, "b"), (2, "a")], m["rows"]
    # the cluster concurrency of the latest input that measured a (type, plan) is kept, the other entries too
    c1 = [{"dtype": "bf16", "plan": "sk4", "cluster": 4, "max_active_clusters": 30}, {"dtype": "e4m3", "plan": "sk4", "cluster": 4, "max_active_clusters": 31}]
    c2 = [{"dtype": "bf16", "plan": "sk4", "cluster": 4, "max_active_clusters": 29}]
    m = merge([doc([], cluster_concurrency=c1), doc([], cluster_concurrency=c2), doc([])], ["x.json", "y.json", "z.json"])
    assert m["cluster_concurrency"] == [c2[0], c1[1]], m.get("cluster_concurrency")
    # a merged input's sources are listed in its place
    m = merge([doc([], merged_from=["p.json", "q.json"]), doc([])], ["pq.json", "r.json"])
    assert m["merged_from"] == ["p.json", "q.json", "r.json"], m["merged_from"]
    for bad, why in ((doc([], driver="2"), "driver"), (doc([], plans={"a": {"bn": 192}}), "plan a differs"), (doc([], placeholder=True), "placeholder")):
        try:
            merge([e4, bad], ["e4.json", "bad.json"])
        except MergeError as e:
            assert why in str(e), str(e)
        else:
            raise AssertionError("joined a file it must refuse (%s)" % why)
    print("merge_sweeps.py: self-test passed")
    return 0


def dump(doc):
    """The sweep's own layout: header fields indented, one line per row (the file stays diffable)."""
    head = {k: v for k, v in doc.items() if k != "rows"}
    text = json.dumps(head, indent=1)[:-2]
    rows = ",\n".join("  " + json.dumps(r) for r in doc["rows"])
    return text + ',\n "rows": [\n' + rows + "\n ]\n}\n"


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) < 2 or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, ins = argv[0], argv[1:]
    try:
        docs = [json.loads(pathlib.Path(n).read_text()) for n in ins]
        merged = merge(docs, ins)
    except (OSError, ValueError, KeyError, MergeError) as e:
        print("merge_sweeps.py: %s" % e, file=sys.stderr)
        return 2
    pathlib.Path(out).write_text(dump(merged))
    print("merge_sweeps.py: wrote %s (%d rows; %s; %s)" % (out, len(merged["rows"]), ", ".join("%s %s" % kv for kv in merged["coverage"].items()),
                                                         "complete" if merged["complete"] else "partial"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
