#!/usr/bin/env python3
"""Draws cake_bench_gemm_score results (the dispatcher's held-out shapes) as an SVG: one panel per input type,
each held-out shape's ratio to the peer (peer time / Cake time, dispatch counted) against M on a log axis, one
series per score file (e.g. the table before and after a re-sweep, measured on the same GPU), the line at 1.0
and each series' geometric mean. Plain SVG, no dependencies:

    python3 bench/gemm/plot_score.py OUT.svg LABEL=FILE.json [LABEL=FILE.json ...]
    python3 bench/gemm/plot_score.py --self-test
"""
import json
import math
import sys

COLORS = ["#9aa5b1", "#d9534f", "#5b7db1", "#5cb85c"]
PW, PH, LEFT, TOP = 520, 260, 55, 40


def panel(dtype, series, x0):
    """The SVG elements of one type's panel, its left edge at x0. series: [(label, rows)]."""
    rows = [r for _, rs in series for r in rs if r["dtype"] == dtype and r.get("ok", True)]
    if not rows:
        return []
    ms = [r["shape"]["M"] for r in rows]
    lo_m, hi_m = math.log2(min(ms)), math.log2(max(ms))
    lo_r = min(0.6, min(r["ratio"] for r in rows) - 0.02)
    hi_r = max(1.2, max(r["ratio"] for r in rows) + 0.02)
    x = lambda m: x0 + LEFT + (math.log2(m) - lo_m) / max(hi_m - lo_m, 1) * (PW - LEFT - 10)
    y = lambda v: TOP + (hi_r - v) / (hi_r - lo_r) * PH
    out = [f'<text x="{x0 + LEFT}" y="{TOP - 12}" font-weight="bold">{dtype}: held-out shapes, peer time / Cake time</text>']
    v = math.ceil(lo_r * 10) / 10
    while v <= hi_r + 1e-9:
        out.append(f'<line x1="{x0 + LEFT}" x2="{x0 + PW - 10}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="{"#888" if abs(v - 1) < 1e-9 else "#e4e4e4"}"/>'
                   f'<text x="{x0 + LEFT - 5}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
        v = round(v + 0.1, 10)
    m = 1
    while m <= 2 ** hi_m:
        if m >= 2 ** lo_m:
            out.append(f'<text x="{x(m):.1f}" y="{TOP + PH + 16}" text-anchor="middle">{m}</text>')
        m *= 4
    out.append(f'<text x="{x0 + LEFT + (PW - LEFT) / 2}" y="{TOP + PH + 32}" text-anchor="middle">M (log scale)</text>')
    for i, (label, rs) in enumerate(series):
        pts = [r for r in rs if r["dtype"] == dtype and r.get("ok", True)]
        color = COLORS[i % len(COLORS)]
        for r in pts:
            dx = (i - (len(series) - 1) / 2) * 3  # series side by side at one M
            out.append(f'<circle cx="{x(r["shape"]["M"]) + dx:.1f}" cy="{y(r["ratio"]):.1f}" r="2.2" fill="{color}" fill-opacity="0.8"/>')
        g = math.exp(sum(math.log(r["ratio"]) for r in pts) / len(pts))
        out.append(f'<line x1="{x0 + LEFT}" x2="{x0 + PW - 10}" y1="{y(g):.1f}" y2="{y(g):.1f}" stroke="{color}" stroke-dasharray="4 3"/>')
        out.append(f'<circle cx="{x0 + LEFT + 12}" cy="{TOP + PH + 50 + 15 * i}" r="4" fill="{color}"/>'
                   f'<text x="{x0 + LEFT + 22}" y="{TOP + PH + 54 + 15 * i}">{label}: geometric mean {g:.3f} over {len(pts)} shapes (dashed)</text>')
    return out


def svg(series, title):
    dtypes = sorted({r["dtype"] for _, rs in series for r in rs})
    height = TOP + PH + 60 + 15 * len(series)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{PW * len(dtypes) + 20}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="10" y="16" font-size="13" font-weight="bold">{title}</text>']
    for i, d in enumerate(dtypes):
        out += panel(d, series, 10 + i * PW)
    return "\n".join(out + ["</svg>"]) + "\n"


def self_test():
    rows = lambda f: [{"dtype": d, "shape": {"M": m, "N": 4096, "K": 4096}, "ratio": f * (0.9 + 0.05 * k), "ok": True}
                      for k, m in enumerate((1, 64, 4096)) for d in ("bf16", "e4m3")]
    s = svg([("before", rows(1.0)), ("after", rows(1.1))], "t")
    assert s.startswith("<svg") and s.rstrip().endswith("</svg>"), s[:80]
    assert s.count("<circle") == 2 * (6 + 2), s.count("<circle")  # 6 points and a legend dot per series and panel
    g = math.exp(sum(math.log(0.9 + 0.05 * k) for k in range(3)) / 3)
    assert ("geometric mean %.3f" % g) in s and ("geometric mean %.3f" % (1.1 * g)) in s
    print("plot_score: self-test passed")


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        sys.exit(__doc__)
    series = []
    for a in argv[1:]:
        label, path = a.split("=", 1)
        d = json.load(open(path))
        series.append((label, d["rows"]))
        gpu = d["gpu"]
    with open(argv[0], "w") as f:
        f.write(svg(series, "cake::gemm's dispatcher on the held-out shapes (%s, cake_bench_gemm_score)" % gpu))


if __name__ == "__main__":
    main(sys.argv[1:])
