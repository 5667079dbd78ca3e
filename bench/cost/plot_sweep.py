#!/usr/bin/env python3
"""Draws bench/results/<gpu>/cost_sweep.json as docs/img/<gpu>-cost-sweep.svg: one panel per shape,
every variant of the sm_90a GEMM as a point (x: the cost model's estimate, y: the measured median,
both relative to the measured best of the shape), the diagonal where estimate = measurement, the
Spearman rank correlation and the gap of the estimated-best variant in the title. Plain SVG, no
dependencies:  python3 bench/cost/plot_sweep.py   (also run by bench/plot_results.py)
"""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
PW, PH, PAD = 380, 270, 52
COLORS = {256: "#d9534f", 224: "#e8884f", 208: "#f0ad4e", 192: "#9cb84a", 176: "#5cb85c", 160: "#3fa796", 144: "#5bc0de",
          128: "#5b7db1", 96: "#8e6bb8", 64: "#777777"}


def panel(ox, oy, shape, rows):
    best = min(r["measured_ms"] for r in rows)
    pts = [(r["estimate_us"] / 1e3 / best, r["measured_ms"] / best, r) for r in rows]
    hi = max(max(p[0] for p in pts), max(p[1] for p in pts)) * 1.04
    lo = min(min(p[0] for p in pts), min(p[1] for p in pts)) * 0.96
    sx = lambda v: ox + PAD + (v - lo) / (hi - lo) * (PW - PAD - 10)
    sy = lambda v: oy + 30 + (hi - v) / (hi - lo) * (PH - 70)
    s = shape["shape"]
    out = [f'<text x="{ox + PAD}" y="{oy + 16}" font-weight="bold">{s["M"]}x{s["N"]}x{s["K"]} ({shape["role"]})</text>',
           f'<text x="{ox + PAD}" y="{oy + 28}" fill="#444" font-size="10">Spearman {shape["spearman"]:.3f}, estimated best {shape["best_gap_pct"]:+.2f}% from measured best</text>']
    step = next(st for st in (0.05, 0.1, 0.2, 0.25, 0.5, 1.0) if (hi - lo) / st <= 8)
    t = round(lo / step) * step
    while t <= hi:
        if t >= lo:
            out.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{sy(lo):.1f}" y2="{sy(hi):.1f}" stroke="#eee"/>'
                       f'<line x1="{sx(lo):.1f}" x2="{sx(hi):.1f}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" stroke="#eee"/>'
                       f'<text x="{sx(t):.1f}" y="{sy(lo) + 12:.1f}" text-anchor="middle" font-size="9">{t:.2f}</text>'
                       f'<text x="{sx(lo) - 4:.1f}" y="{sy(t) + 3:.1f}" text-anchor="end" font-size="9">{t:.2f}</text>')
        t += step
    out.append(f'<line x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}" stroke="#999" stroke-dasharray="4 3"/>')
    for x, y, r in pts:
        c = COLORS.get(r["bn"], "#000")
        shape_mark = (f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.6" fill="{c}" fill-opacity="0.85"/>' if r["cluster"] == 2 else
                      f'<rect x="{sx(x) - 3.2:.1f}" y="{sy(y) - 3.2:.1f}" width="6.4" height="6.4" fill="none" stroke="{c}" stroke-width="1.6"/>')
        out.append(f'{shape_mark}<title>{r["variant"]}: estimate {r["estimate_us"]:.1f} us, measured {r["measured_ms"] * 1e3:.1f} us</title>')
    out.append(f'<text x="{ox + PAD + (PW - PAD) / 2:.1f}" y="{oy + PH - 12}" text-anchor="middle" font-size="10">estimate / measured best</text>'
               f'<text x="{ox + 12}" y="{oy + PH / 2}" transform="rotate(-90 {ox + 12} {oy + PH / 2})" text-anchor="middle" font-size="10">measured / measured best</text>')
    return out


def chart(data):
    shapes = data["shapes"]
    cols = 2
    rows_n = (len(shapes) + cols - 1) // cols
    width, height = cols * (PW + 20) + 20, rows_n * (PH + 10) + 124
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="10" y="18" font-size="13" font-weight="bold">Cost model vs measurement: {len(data["rows"]) // max(1, len(shapes))} variants of the sm_90a GEMM on {data["gpu"]}</text>']
    for i, s in enumerate(shapes):
        name = f'{s["shape"]["M"]}x{s["shape"]["N"]}x{s["shape"]["K"]}'
        rows = [r for r in data["rows"] if r["shape"] == name and r.get("ok") and "measured_ms" in r and "estimate_us" in r]
        out += panel(10 + (i % cols) * (PW + 20), 26 + (i // cols) * (PH + 10), s, rows)
    y = 26 + rows_n * (PH + 10) + 8
    x = 14
    for bn, c in COLORS.items():
        out.append(f'<circle cx="{x}" cy="{y}" r="4" fill="{c}"/><text x="{x + 7}" y="{y + 4}">BN {bn}</text>')
        x += 70
    out.append(f'<text x="14" y="{y + 22}">filled circle: cluster 2 (B multicast); open square: cluster 1; dashed: estimate = measurement;</text>'
               f'<text x="14" y="{y + 36}">times relative to the shape\'s fastest variant (hover a point for its name)</text>')
    out.append(f'<text x="14" y="{y + 52}" fill="#666">{data["gpu"]}, driver {data["driver"]}, CUDA {data["cuda"]}, {data["date"]}; '
               f'validation min Spearman {data["summary"]["validation_min_spearman"]:.3f}, '
               f'max best-vs-best gap {data["summary"]["validation_max_best_gap_pct"]:.2f}%</text></svg>')
    return "\n".join(out) + "\n"


def main():
    for path in sorted((ROOT / "bench" / "results").glob("*/cost_sweep.json")):
        data = json.loads(path.read_text())
        out = ROOT / "docs" / "img" / f"{path.parent.name}-cost-sweep.svg"
        out.write_text(chart(data))
        print("wrote", out.relative_to(ROOT))


if __name__ == "__main__":
    main()
