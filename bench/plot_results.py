#!/usr/bin/env python3
"""Draws every bench/results/<gpu>/<family>.json as a bar chart docs/img/<gpu>-<family>.svg.

One group of bars per row: Cake and the peer in TFLOP/s (GEMMs) or GB/s (memory-bound kernels, rows with
cake_gbps), the ratio (peer time / Cake time) written above. Plain SVG, no dependencies:
python3 bench/plot_results.py
"""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
W_BAR, GAP, H = 26, 22, 260


def chart(data, title):
    rows = [r for r in data["rows"] if not r.get("sweep")]
    unit = "TFLOP/s" if any("cake_tflops" in r for r in rows) else "GB/s"
    key = "tflops" if unit == "TFLOP/s" else "gbps"
    rows = [r for r in rows if "cake_" + key in r or "ratio" not in r]  # rows of other measures (host overhead) are tables only
    cake = lambda r: r.get("cake_" + key, 0)
    peer = lambda r: r.get("peer_" + key, 0)
    top = max(max(cake(r), peer(r)) for r in rows) * 1.15
    width = 70 + len(rows) * (2 * W_BAR + GAP) + 20
    y = lambda v: 30 + H - v / top * H
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{H + 120}" font-family="sans-serif" font-size="11">',
           f'<text x="10" y="18" font-size="13" font-weight="bold">{title}</text>']
    for t in range(0, int(top) + 1, max(100, int(top / 6) // 100 * 100)):
        out.append(f'<line x1="60" x2="{width - 10}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>'
                   f'<text x="55" y="{y(t) + 4:.1f}" text-anchor="end">{t}</text>')
    out.append(f'<text x="14" y="{30 + H / 2}" transform="rotate(-90 14 {30 + H / 2})" text-anchor="middle">{unit}</text>')
    x = 70
    for r in rows:
        s = r["shape"]
        for v, color in ((cake(r), "#d9534f"), (peer(r), "#5b7db1")):
            out.append(f'<rect x="{x}" y="{y(v):.1f}" width="{W_BAR - 2}" height="{30 + H - y(v):.1f}" fill="{color}"/>')
            x += W_BAR
        label = f'{r["ratio"]:.3f}' if "ratio" in r else "FAILED"
        out.append(f'<text x="{x - W_BAR}" y="{y(max(cake(r), peer(r))) - 5:.1f}" text-anchor="middle">{label}</text>')
        dims = list(s.values())
        # the first label line: a variant (the config before ":"), else the kernel (GB/s charts) or the dtype
        head = r.get("config", "").split(":")[0] if ":" in r.get("config", "") else ""
        variant = r.get("variant") or (head if head and " " not in head else "")  # "pp128: bm 128 ..." -> pp128
        first = variant or (r.get("kernel", r["dtype"]) if unit == "GB/s" else r["dtype"])
        out.append(f'<text x="{x - W_BAR}" y="{H + 46}" text-anchor="middle">{first}</text>'
                   f'<text x="{x - W_BAR}" y="{H + 60}" text-anchor="middle">{"x".join(map(str, dims[:2]))}</text>'
                   f'<text x="{x - W_BAR}" y="{H + 74}" text-anchor="middle">{"x" + "x".join(map(str, dims[2:])) if dims[2:] else ("held out" if r.get("tuned") is False else "")}</text>')
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
        if any(tag in path.stem for tag in ("_run", "_cluster", "_sweep", "_rejected", "_probe")):
            continue  # repeat runs, variants, sweeps, probes and rejected runs are data for the docs' tables, not charts
        if not any("cake_tflops" in r or "cake_gbps" in r for r in data["rows"]):
            continue  # only other measures (host time per call): a table in the docs, no chart
        if not all(isinstance(r.get("shape"), dict) and "peer" in r for r in data["rows"]):
            continue  # rows without a shape object and a peer (a first look's table, e.g. h100/attention_prefill_d256.json): no chart
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
