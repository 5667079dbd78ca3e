#!/usr/bin/env python3
"""Draws every bench/results/<gpu>/<family>.json as a bar chart docs/img/<gpu>-<family>.svg.

One group of bars per row: Cake and the peer in TFLOP/s, the ratio (peer time / Cake time) written
above. Plain SVG, no dependencies:  python3 bench/plot_results.py
"""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
W_BAR, GAP, H = 26, 22, 260


def chart(data, title):
    rows = data["rows"]
    top = max(max(r.get("cake_tflops", 0), r.get("peer_tflops", 0)) for r in rows) * 1.15
    width = 70 + len(rows) * (2 * W_BAR + GAP) + 20
    y = lambda v: 30 + H - v / top * H
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{H + 120}" font-family="sans-serif" font-size="11">',
           f'<text x="10" y="18" font-size="13" font-weight="bold">{title}</text>']
    for t in range(0, int(top) + 1, max(100, int(top / 6) // 100 * 100)):
        out.append(f'<line x1="60" x2="{width - 10}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>'
                   f'<text x="55" y="{y(t) + 4:.1f}" text-anchor="end">{t}</text>')
    out.append(f'<text x="14" y="{30 + H / 2}" transform="rotate(-90 14 {30 + H / 2})" text-anchor="middle">TFLOP/s</text>')
    x = 70
    for r in rows:
        s = r["shape"]
        for v, color in ((r.get("cake_tflops", 0), "#d9534f"), (r.get("peer_tflops", 0), "#5b7db1")):
            out.append(f'<rect x="{x}" y="{y(v):.1f}" width="{W_BAR - 2}" height="{30 + H - y(v):.1f}" fill="{color}"/>')
            x += W_BAR
        label = f'{r["ratio"]:.3f}' if "ratio" in r else "FAILED"
        out.append(f'<text x="{x - W_BAR}" y="{y(max(r.get("cake_tflops", 0), r.get("peer_tflops", 0))) - 5:.1f}" text-anchor="middle">{label}</text>')
        out.append(f'<text x="{x - W_BAR}" y="{H + 46}" text-anchor="middle">{r["dtype"]}</text>'
                   f'<text x="{x - W_BAR}" y="{H + 60}" text-anchor="middle">{s["M"]}x{s["N"]}</text>'
                   f'<text x="{x - W_BAR}" y="{H + 74}" text-anchor="middle">x{s["K"]}</text>')
        x += GAP
    peers = sorted({r["peer"] for r in rows})
    out.append(f'<rect x="70" y="{H + 88}" width="10" height="10" fill="#d9534f"/><text x="84" y="{H + 97}">Cake</text>'
               f'<rect x="130" y="{H + 88}" width="10" height="10" fill="#5b7db1"/><text x="144" y="{H + 97}">{" / ".join(peers)}</text>'
               f'<text x="260" y="{H + 97}">numbers above bars: peer time / Cake time</text>')
    out.append(f'<text x="70" y="{H + 113}" fill="#666">{data["gpu"]}, driver {data["driver"]}, CUDA {data["cuda"]}, {data["date"]}</text></svg>')
    return "\n".join(out) + "\n"


def main():
    for path in sorted((ROOT / "bench" / "results").glob("*/*.json")):
        data = json.loads(path.read_text())
        if not data.get("rows") or str(data.get("schema", "")).startswith("cake.cost"):
            continue  # the cost model's files have their own chart (bench/cost/plot_sweep.py, below)
        if "_run" in path.stem or "_cluster" in path.stem:
            continue  # repeat runs and variants are data for the docs' tables, not charts of their own
        out = ROOT / "docs" / "img" / f"{path.parent.name}-{path.stem}.svg"
        out.write_text(chart(data, f"{path.stem}: Cake vs peer on {data['gpu']}"))
        print("wrote", out.relative_to(ROOT))
    import importlib.util
    spec = importlib.util.spec_from_file_location("plot_sweep", ROOT / "bench" / "cost" / "plot_sweep.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    sweep.main()


if __name__ == "__main__":
    main()
