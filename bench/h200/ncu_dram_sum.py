#!/usr/bin/env python3
"""DRAM bytes read and time per Cake GEMM kernel launch configuration from ncu's raw CSV (session.sh step
splitkreread): per (kernel name, grid size), the median of dram__bytes_read.sum and gpu__time_duration.sum.

    python3 bench/h200/ncu_dram_sum.py NCU_CSV...
"""
import csv, sys, statistics, collections
# ncu --csv --page raw: header row, units row, then one row per profiled kernel
for f in sys.argv[1:]:
    rows = list(csv.reader(open(f)))
    start = next(i for i, r in enumerate(rows) if r and r[0] == 'ID')
    hdr = rows[start]; data = rows[start + 2:]
    ix = {h: i for i, h in enumerate(hdr)}
    g = collections.defaultdict(list)
    for r in data:
        if len(r) < len(hdr): continue
        key = (r[ix['Kernel Name']][:40], r[ix['launch__grid_size']])
        g[key].append((float(r[ix['dram__bytes_read.sum']].replace(',', '')), float(r[ix['gpu__time_duration.sum']].replace(',', ''))))
    print(f, 'units:', rows[start + 1][ix['dram__bytes_read.sum']], rows[start + 1][ix['gpu__time_duration.sum']])
    for k, v in sorted(g.items()):
        print('  %-40s grid %6s n %2d dram_read %10.1f time %10.1f' % (k[0], k[1], len(v), statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)))
