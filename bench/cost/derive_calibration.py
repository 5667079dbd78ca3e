#!/usr/bin/env python3
"""Derive the cost model's calibration header from raw measurements of bench/cost/calibrate.cpp.

    python3 bench/cost/derive_calibration.py RAW.json [RAW.json ...] --id sm_90a/h200 \
        --out include/cake/cost/calibration/sm90a_h200.hpp

Each section (wgmma, tma, hbm, gemm) is taken from the last file that has it, so a later run can
re-measure one part. Every number in the header is a measurement or a fit written out below; the
raw files are committed next to the results (bench/results/h200/cost_calibration_*.json).

Derivations (docs/cost-model.md explains the model that uses them):
  mma               wgmma section as is: time per 128-byte K block for 2 warpgroups x m64nN.
  stage turnover    the per-SM ceiling of a TMA pipeline: one CTA, deep pipeline (3..6 stages),
                    L2-resident boxes; a line through the time per stage of 1, 2, 3 boxes of 16 KiB.
  TMA latency       unloaded round trip of one stage (one CTA, 1 stage): a line over the stage's KiB.
  L2 bandwidth      the largest aggregate TMA read rate seen: the microbenchmark's plateau, or the
                    GEMM calibration kernel's own (cluster 1, issued bytes / time), whichever is higher.
  L2 capacity       the working set up to which streaming re-reads keep 90% of the L2 rate (knee runs).
  HBM               the read / write / copy kernels.
  in-situ MMA       GEMM K sweep (BN 256, deepest pipeline, K >= 1024): time per K block / wgmma time.
  round trip        GEMM runs with 2 and 3 stages: the pipeline's round trip L that makes
                    max(mma, turnover, l2, (L + mma) / stages) fit their time per K block (least squares).
  epilogue, launch  GEMM K sweep at the deepest pipeline (T = 2, 4, 8 tiles per CTA, K >= 512): the time
                    left after the model's mainloop, fitted as launch + T * (us_per_store * TMA stores
                    per warpgroup + us_per_kib * tile KiB).
  sweep fit         --sweep-fit FILE (bench/cost/fit_sweep.py): l2_read_gbps (replacing the bound above),
                    mma_alternating, kblock_overhead_us, hbm_overlap_loss, cluster_sum_us_per_kib, wave_us,
                    global_sum_us, splitk_reread, stage_turnover_us (replacing the microbenchmark's fixed part, kept as
                    stage_turnover_microbenchmark_us) and the per-width MMA factors (mma_width_N: the header's mma_width table), fitted on half of the
                    GEMM dispatcher's sweep, and mma_idle_gain (set by fit_sweep.py, not fitted).
"""
import argparse
import json
import math
import sys


def lstsq(X, y):
    n = len(X[0])
    A = [[sum(X[k][i] * X[k][j] for k in range(len(X))) for j in range(n)] for i in range(n)]
    b = [sum(X[k][i] * y[k] for k in range(len(X))) for i in range(n)]
    M = [A[i] + [b[i]] for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(M[r][i]))
        M[i], M[p] = M[p], M[i]
        for r in range(n):
            if r != i:
                f = M[r][i] / M[i][i]
                M[r] = [M[r][c] - f * M[i][c] for c in range(n + 1)]
    return [M[i][n] / M[i][i] for i in range(n)]


def epilogue_stores(bn):
    """TMA stores per warpgroup per tile in kernels/gemm/sm90_bf16.hpp: chunks of 64, 32 or 16 columns."""
    chunk = 64 if bn % 64 == 0 else 32 if bn % 32 == 0 else 16
    return bn // chunk


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw", nargs="+")
    ap.add_argument("--id", default="sm_90a/h200")
    ap.add_argument("--name", default="sm90a_h200")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cluster-concurrency", default=None,
                    help="the GEMM sweep's evidence (its cluster_concurrency member: clusters of each size that run at once)")
    ap.add_argument("--sweep-fit", default=None,
                    help="constants fitted on the GEMM sweep (bench/cost/fit_sweep.py): l2_read_gbps, mma_alternating, kblock_overhead_us, hbm_overlap_loss, cluster_sum_us_per_kib, wave_us, global_sum_us, stage_turnover_us, splitk_reread, mma_width_N, mma_width_long_N, long_run_from_us, long_run_to_us, mma_idle_gain (set there, not fitted)")
    a = ap.parse_args()

    files = [json.load(open(f)) for f in a.raw]
    section, source = {}, {}
    for path, d in zip(a.raw, files):
        for s in ("wgmma", "tma", "hbm", "gemm"):
            if d.get(s):
                section[s], source[s] = d[s], (path, d)
    for s in ("wgmma", "tma", "hbm", "gemm"):
        if s not in section:
            sys.exit("derive_calibration: no '%s' section in %s" % (s, a.raw))
    last = files[-1]
    sms = last["sm_count"]

    mma = {(r["dtype"], r["n"]): r["kblock_us"] for r in section["wgmma"]}

    # Stage turnover: one CTA, 3+ stages, L2-resident.
    tma = section["tma"]
    per_box = {}
    for r in tma:
        if r["what"] == "latency" and r["stages"] >= 3 and r["ok"]:
            per_box.setdefault(r["boxes"], []).append(r["stage_us"])
    X = [[1, b * 16] for b in sorted(per_box)]
    y = [min(per_box[b]) for b in sorted(per_box)]
    turn0, turn1 = lstsq(X, y)
    # Unloaded latency: one CTA, one stage.
    lat = {r["boxes"]: r["stage_us"] for r in tma if r["what"] == "latency" and r["stages"] == 1}
    lat0, lat1 = lstsq([[1, b * 16] for b in sorted(lat)], [lat[b] for b in sorted(lat)])
    lat_hbm = [r["stage_us"] for r in tma if r["what"] == "latency-hbm" and r["boxes"] == 1]
    # L2 aggregate read rate (issued bytes).
    l2_micro = max(r["issued_gbps"] for r in tma if r["what"] in ("l2", "l2-multicast") and r["ok"])
    gemm = section["gemm"]
    sets = {}
    for r in gemm:
        sets.setdefault((r["bn"], r["stages"], r["cluster"]), []).append(r)

    def slope(rows):
        rows = [r for r in rows if r["k"] >= 1024]
        yy = [r["ms"] * 1e3 for r in rows]
        if len({r["tiles_per_cta"] for r in rows}) > 1:
            return lstsq([[1, r["tiles_per_cta"], r["tiles_per_cta"] * r["kblocks"]] for r in rows], yy)[2]
        return lstsq([[1, r["kblocks"] * r["tiles_per_cta"]] for r in rows], yy)[1]

    slopes = {k: slope(v) for k, v in sets.items()}
    l2_insitu = 0.0
    for (bn, s, cl), sl in slopes.items():
        issued = 128 * 128 + bn * 128 / cl
        l2_insitu = max(l2_insitu, issued * sms / (sl * 1e-6) / 1e9)
    l2 = max(l2_micro, l2_insitu)
    # L2 capacity: knee runs (streaming re-reads of a growing working set).
    knee = sorted((r["working_set_mib"], r["issued_gbps"]) for r in tma if r["what"] == "l2-knee")
    top = knee[0][1]
    cap = knee[-1][0]
    for (w0, g0), (w1, g1) in zip(knee, knee[1:]):
        if g0 >= 0.9 * top > g1:
            cap = w0 + (w1 - w0) * (g0 - 0.9 * top) / (g0 - g1)
            break
    hbm = {r["what"]: r["gbps"] for r in section["hbm"]}

    # In-situ MMA factor.
    deepest = {bn: max(s for (b, s, c) in sets if b == bn and c == 2) for bn in {k[0] for k in sets}}
    in_situ = slopes[(256, deepest[256], 2)] / mma[("bf16", 256)]

    def kblock(bn, s, cl, L):
        c = mma[("bf16", bn)] * in_situ
        kib = (128 + bn) * 128 / 1024
        issued = 128 * 128 + bn * 128 / cl
        return max(c, turn0 + turn1 * kib, issued * sms / (l2 * 1e3), (L + c) / s)

    shallow = [(k, v) for k, v in slopes.items() if k[1] <= 3]
    best = None
    for i in range(400, 2001):
        L = i / 1000.0
        err = sum((kblock(bn, s, cl, L) / sl - 1) ** 2 for (bn, s, cl), sl in shallow)
        if best is None or err < best[0]:
            best = (err, L)
    round_trip = best[1]

    # Epilogue and launch: what is left after the model's mainloop.
    X, y = [], []
    for (bn, s, cl), rows in sets.items():
        if cl != 2 or s != deepest[bn] or len({r["tiles_per_cta"] for r in rows}) < 2:
            continue
        tk = kblock(bn, s, cl, round_trip)
        for r in rows:
            if r["k"] < 512:
                continue
            T = r["tiles_per_cta"]
            X.append([1, T * epilogue_stores(bn), T * 128 * bn * 2 / 1024])
            y.append(r["ms"] * 1e3 - T * r["kblocks"] * tk)
    launch, per_store, per_kib = lstsq(X, y)
    res = [sum(u * v for u, v in zip(x, (launch, per_store, per_kib))) - w for x, w in zip(X, y)]
    epi_rms = math.sqrt(sum(r * r for r in res) / len(res))
    fit_err = [kblock(bn, s, cl, round_trip) / sl - 1 for (bn, s, cl), sl in slopes.items()]
    mac = [r for d in files for r in d.get("max_active_clusters", [])]
    max_clusters = mac[-1]["max_active_clusters"] if mac else 0
    # CTAs of each cluster size that run at once (the GEMM sweep's split-K kernels): per size the fewest
    # over the kernels, i.e. those of one CTA per SM (a 64-wide split-K tile fits two per SM).
    cluster_ctas = [0] * 9
    if a.cluster_concurrency:
        sweep = json.load(open(a.cluster_concurrency))
        for r in sweep.get("cluster_concurrency", []):
            size, ctas = r["cluster"], r["max_active_clusters"] * r["cluster"]
            if 2 <= size <= 8 and ctas > 0 and (cluster_ctas[size] == 0 or ctas < cluster_ctas[size]):
                cluster_ctas[size] = ctas

    def prov(s):
        path, d = source[s]
        return "%s: %s, driver %s, CUDA %s, %s; %s" % (s, d["gpu"], d["driver"], d["cuda"], d["date"], d["command"])

    # Constants fitted on half of the GEMM dispatcher's sweep (bench/cost/fit_sweep.py): they replace the
    # calibration's lower bound of the L2 rate and add the two terms it does not measure.
    sweep_fit = json.load(open(a.sweep_fit)) if a.sweep_fit else None
    alternating, overlap_loss, cluster_sum, kblock_overhead, wave, global_sum = 1.0, 0.0, 0.0, 0.0, 0.0, 0.0
    turn_fit = None
    if sweep_fit:
        c = sweep_fit["constants"]
        l2 = c["l2_read_gbps"]
        alternating, overlap_loss, cluster_sum = c["mma_alternating"], c["hbm_overlap_loss"], c["cluster_sum_us_per_kib"]
        kblock_overhead = c["kblock_overhead_us"]
        wave, global_sum = c.get("wave_us", 0.0), c.get("global_sum_us", 0.0)  # (fits before 2026-12-05 have neither)
        turn_fit = c.get("stage_turnover_us")  # replaces the microbenchmark's fixed part, kept for reference
    fitted = sweep_fit["constants"] if sweep_fit else {}
    widths = sorted((int(k[len("mma_width_"):]), v) for k, v in fitted.items() if k.startswith("mma_width_") and k[len("mma_width_"):].isdigit())
    # the long-run factor per width and its ramp (fits before 2026-12-06 have none)
    long_widths = sorted((int(k[len("mma_width_long_"):]), v) for k, v in fitted.items() if k.startswith("mma_width_long_"))

    n = a.name
    lines = []
    w = lines.append
    w("#pragma once")
    w("// GENERATED by bench/cost/derive_calibration.py from measurements of bench/cost/calibrate.cpp; do not edit.")
    w("//   python3 bench/cost/derive_calibration.py %s --id %s%s --out <this file>"
      % (" ".join(a.raw), a.id, (" --cluster-concurrency " + a.cluster_concurrency if a.cluster_concurrency else "") +
         (" --sweep-fit " + a.sweep_fit if a.sweep_fit else "")))
    for s in ("wgmma", "tma", "hbm", "gemm"):
        w("// " + prov(s))
    if sweep_fit:
        w("// sweep fit (%s): %s, %s on %d shapes of %s; %s"
          % (", ".join(sweep_fit["constants"]), sweep_fit["source"], sweep_fit["date"], sweep_fit["fit_shapes"], " + ".join(sweep_fit["fit_layers"]), sweep_fit["command"]))
    w("// Fit quality: time per K block of the %d calibration GEMM configurations within %+.1f%% .. %+.1f%% (rms %.1f%%);"
      % (len(fit_err), 100 * min(fit_err), 100 * max(fit_err), 100 * math.sqrt(sum(e * e for e in fit_err) / len(fit_err))))
    w("// epilogue + launch fit rms %.2f us over %d runs." % (epi_rms, len(y)))
    w('#include "../calibration.hpp"')
    w("")
    w("namespace cake::cost::calibrations {")
    w("")
    w("inline constexpr mma_rate %s_mma[] = {" % n)
    for (dt, nn) in sorted(mma):
        w("    {dtype::%s, %d, %.5f}," % (dt, nn, mma[(dt, nn)]))
    w("};")
    w("")
    for suffix, rows in (("", widths), ("_long", long_widths)):  # the per-width tables (none where the fit has no rows)
        if rows:
            w("inline constexpr mma_width_factor %s_mma_width%s[] = {" % (n, suffix))
            for nn, f in rows:
                w("    {%d, %.4f}," % (nn, f))
            w("};")
            w("")
    w("inline constexpr calibration %s = {" % n)
    src = source["gemm"][1]
    fields = [
        ("id", '"%s"' % a.id), ("target", "target_id::sm_90a"), ("gpu", '"%s"' % src["gpu"]), ("driver", '"%s"' % src["driver"]),
        ("cuda", '"%s"' % src["cuda"]), ("date", '"%s"' % src["date"]),
        ("command", '"bash bench/cost/h200_session.sh calibrate (cake_cost_calibrate); python3 bench/cost/derive_calibration.py"'),
        ("raw_data", '"%s"' % " + ".join(p.split("/")[-1] for p in a.raw)),
        ("sm_count", "%d" % sms), ("l2_bytes", "%d" % last["l2_bytes"]), ("l2_effective_bytes", "%.0f" % (cap * 1048576)),
        ("max_active_clusters_2", "%d" % max_clusters), ("max_cluster_ctas", "{%s}" % ", ".join(str(c) for c in cluster_ctas)), ("mma", "%s_mma" % n), ("mma_in_situ", "%.4f" % in_situ),
        *([("mma_width", "%s_mma_width" % n)] if widths else []),
        *([("mma_width_long", "%s_mma_width_long" % n), ("long_run_from_us", "%.1f" % fitted["long_run_from_us"]),
           ("long_run_to_us", "%.1f" % fitted["long_run_to_us"])] if long_widths else []),
        ("mma_alternating", "%.4f" % alternating), ("kblock_overhead_us", "%.4f" % kblock_overhead),
        *([("mma_idle_gain", "%.4f" % fitted["mma_idle_gain"])] if "mma_idle_gain" in fitted else []),  # (fits before 2026-12-06 have none)
        ("stage_turnover_us", "%.4f" % (turn_fit if turn_fit is not None else turn0)), ("stage_turnover_us_per_kib", "%.6f" % turn1),
        ("stage_turnover_microbenchmark_us", "%.4f" % turn0),
        ("pipeline_round_trip_us", "%.3f" % round_trip),
        ("tma_latency_us", "%.4f" % lat0), ("tma_latency_us_per_kib", "%.6f" % lat1),
        ("tma_latency_hbm_us", "%.4f" % (lat_hbm[0] if lat_hbm else 0)),
        ("l2_read_gbps", "%.0f" % l2), ("l2_read_microbenchmark_gbps", "%.0f" % l2_micro),
        ("hbm_read_gbps", "%.0f" % hbm["read"]), ("hbm_write_gbps", "%.0f" % hbm["write"]), ("hbm_copy_gbps", "%.0f" % hbm["copy"]),
        ("epilogue_us_per_store", "%.4f" % per_store), ("epilogue_us_per_kib", "%.6f" % per_kib), ("launch_us", "%.3f" % launch),
        ("hbm_overlap_loss", "%.4f" % overlap_loss), ("cluster_sum_us_per_kib", "%.5f" % cluster_sum),
        ("wave_us", "%.4f" % wave), ("global_sum_us", "%.4f" % global_sum),
        *([("splitk_reread", "%.4f" % fitted["splitk_reread"])] if "splitk_reread" in fitted else []),  # (fits before 2026-12-07 have none)
        *([("sm_hbm_gbps", "%.2f" % fitted["sm_hbm_gbps"])] if "sm_hbm_gbps" in fitted else []),  # (fits before the eighth have none)
    ]
    for k, v in fields:
        w("    .%s = %s," % (k, v))
    w("};")
    w("")
    w("}  // namespace cake::cost::calibrations")
    open(a.out, "w").write("\n".join(lines) + "\n")
    print("wrote %s: in-situ mma %.3f, turnover %.3f + %.5f/KiB us, round trip %.2f us, L2 %.0f GB/s (microbenchmark %.0f), "
          "L2 knee %.1f MiB, epilogue %.3f us/store + %.5f us/KiB, launch %.2f us; K-block fit rms %.1f%%"
          % (a.out, in_situ, turn0, turn1, round_trip, l2, l2_micro, cap, per_store, per_kib, launch,
             100 * math.sqrt(sum(e * e for e in fit_err) / len(fit_err))))


if __name__ == "__main__":
    main()
