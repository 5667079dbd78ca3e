#!/usr/bin/env python3
"""The instructions where a kernel's warps stall most, from ncu's per-SASS-instruction source page.

  ncu --section SourceCounters --page source --print-source sass --csv -k regex:NAME -c 1 APP > sass.csv
  python3 bench/h200/ncu_top_stalls.py sass.csv [--by-opcode]

Prints the columns ncu gave, the instruction and sample counts, then the 45 instructions with the most warp
stall samples (share of all samples, not-issued samples, address, SASS). Used for the prefill's worst row
(docs/attention.md; attention_prefill_ncu.json rows_2026_12_04c). With --by-opcode, also the warp-level
instructions executed and the stall share per opcode (predicate and modifiers dropped): what the k-means
assignment's consumer spent its ~1,050 instructions per tile on (docs/kmeans.md, "Where the time went").
"""
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
# find header row
hi = next(i for i, r in enumerate(rows) if any("Source" == c for c in r))
h = rows[hi]
print("columns:", [c for c in h][:30])
def col(name):
    for i, c in enumerate(h):
        if c.startswith(name): return i
    return None
src = col("Source"); alls = col("Warp Stall Sampling (All"); noti = col("Warp Stall Sampling (Not")
data = []
for r in rows[hi + 1:]:
    if len(r) <= max(src, alls): continue
    try: a = float(r[alls].replace(",", ""))
    except: continue
    data.append((a, r[noti] if noti is not None else "", r[col("Address")] if col("Address") is not None else "", r[src]))
tot = sum(d[0] for d in data)
print("instructions", len(data), "samples", tot)
for a, n, addr, s in sorted(data, reverse=True)[:45]:
    print(f"{100*a/tot:5.1f}% {n:>6} {addr} {s[:110]}")
if "--by-opcode" in sys.argv:
    import collections, re
    ex = col("Instructions Executed")
    stalls, executed = collections.Counter(), collections.Counter()
    for r in rows[hi + 1:]:
        if len(r) <= max(src, alls, ex): continue
        try: a, e = float(r[alls].replace(",", "")), float(r[ex].replace(",", ""))
        except ValueError: continue
        text = re.sub(r"^@!?U?P\w+\s+", "", r[src].strip())
        op = text.split()[0].split(".")[0] if text else "?"
        stalls[op] += a
        executed[op] += e
    print("opcode        stall share   executed")
    for op, a in stalls.most_common(30):
        print(f"{op:12s} {100 * a / tot:10.1f}% {executed[op]:11.3g}")
