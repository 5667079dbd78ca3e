#!/usr/bin/env python3
"""Fits the polynomial of cake_dev::exp2f_poly (include/cake/device/compute.cuh) and checks it.

2^f on f in [-0.5, 0.5] by p(f) = 1 + c1 f + c2 f^2 + c3 f^3 + c4 f^4 (p(0) = 1 exactly, so that exp2(-inf)
is +0 and exp2(0) is 1), minimizing the maximum relative error (Remez exchange, in doubles). Then the
coefficients are rounded to f32 and the device function is replayed in f32 arithmetic (the same operation
order, round-to-nearest after each step, fma rounded once) over x in [-126, 127] to report the error the
kernel sees. Pure Python (no numpy). Run: python3 tools/gen/exp2_poly.py
"""
import math
import struct


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def solve(a, b):
    n = len(a)
    m = [row[:] + [bb] for row, bb in zip(a, b)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(n):
            if r != i:
                f = m[r][i] / m[i][i]
                for c in range(i, n + 1):
                    m[r][c] -= f * m[i][c]
    return [m[i][n] / m[i][i] for i in range(n)]


def remez(deg, lo=-0.5, hi=0.5, iters=40, grid=20001):
    pts = [lo + (hi - lo) * (1 - math.cos(math.pi * i / deg)) / 2 for i in range(deg + 1)]
    xs = [lo + (hi - lo) * i / (grid - 1) for i in range(grid)]
    c = []
    for _ in range(iters):
        # 1 + sum c_k f^k - 2^f = (-1)^i E 2^f at the deg + 1 reference points
        a = [[f**k for k in range(1, deg + 1)] + [-((-1) ** i) * 2**f] for i, f in enumerate(pts)]
        sol = solve(a, [2**f - 1 for f in pts])
        c = sol[:deg]
        es = [(1 + sum(ck * x ** (k + 1) for k, ck in enumerate(c))) / 2**x - 1 for x in xs]
        segs, cur = [], [0]
        for i in range(1, grid):
            if (es[i] >= 0) == (es[cur[0]] >= 0):
                cur.append(i)
            else:
                segs.append(cur)
                cur = [i]
        segs.append(cur)
        if len(segs) != deg + 1:
            break
        pts = [xs[max(s, key=lambda i: abs(es[i]))] for s in segs]
    return c


def device_exp2(x, c):
    """exp2f_poly replayed in f32 (c: the f32 coefficients c1..c4)."""
    x = min(max(x, -127.0), 128.0)
    t = f32(x + 12582912.0)
    f = f32(x - f32(t - 12582912.0))
    p = f32(c[3] * f + c[2])
    p = f32(p * f + c[1])
    p = f32(p * f + c[0])
    p = f32(p * f + 1.0)
    bits = (struct.unpack("<I", struct.pack("<f", p))[0] + (struct.unpack("<I", struct.pack("<f", t))[0] << 23)) & 0xFFFFFFFF
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def main():
    c = [f32(v) for v in remez(4)]
    print("coefficients c1..c4 (f32):", ", ".join(float.hex(v).replace("0000000p", "p") for v in c))
    worst = 0.0
    n = 200001
    for i in range(n):
        x = -126.0 + 253.0 * i / (n - 1)
        worst = max(worst, abs(device_exp2(x, c) / 2.0**x - 1))
    print(f"max relative error over [-126, 127]: {worst:.3g} (2^{math.log2(worst):.2f})")
    for x in (-math.inf, -200.0, -127.0, 0.0, 1.0, -1.0, 128.0, math.inf):
        print(f"exp2({x}) = {device_exp2(x, c)!r}")


if __name__ == "__main__":
    main()
