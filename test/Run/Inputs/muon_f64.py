#!/usr/bin/env python3
"""An independent float64 Muon step written from docs/muon-dialect.md (not
from muon-run's reference): replays the initial state and gradients that
muon-run --dump wrote and compares every step's distributed parameter and
momentum like numpy.allclose(rtol=atol=1e-5). Plain Python, no numpy.

  muon_f64.py DUMP STEPS --lr LR --beta BETA [--wd WD] [--sum] [--no-nesterov]
"""
import argparse, ast, glob, math, os, struct, sys

QUINTIC = (3.4445, -4.7750, 2.0315)

def load(path):
    with open(path, "rb") as f:
        assert f.read(8) == b"\x93NUMPY\x01\x00", path
        (n,) = struct.unpack("<H", f.read(2))
        header = ast.literal_eval(f.read(n).decode())
        data = f.read()
    shape = header["shape"]
    count = math.prod(shape)
    return shape, list(struct.unpack(f"<{count}f", data))

def matmul(a, b, n, k, m):  # (n x k) @ (k x m), row-major lists
    return [sum(a[i * k + t] * b[t * m + j] for t in range(k))
            for i in range(n) for j in range(m)]

def transpose(a, r, c):
    return [a[i * c + j] for j in range(c) for i in range(r)]

def newton_schulz(u, rows, cols, steps, eps):
    x, r, c = list(u), rows, cols
    tall = rows > cols
    if tall:
        x, r, c = transpose(x, rows, cols), cols, rows
    norm = math.sqrt(sum(v * v for v in x))
    x = [v / (norm + eps) for v in x]
    for _ in range(steps):
        a_, b_, c_ = QUINTIC
        A = matmul(x, transpose(x, r, c), r, c, r)        # X X^T, r x r
        AA = matmul(A, A, r, r, r)
        B = [b_ * p + c_ * q for p, q in zip(A, AA)]
        BX = matmul(B, x, r, r, c)
        x = [a_ * p + q for p, q in zip(x, BX)]
    return transpose(x, r, c) if tall else x

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("steps", type=int)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--beta", type=float, required=True)
    ap.add_argument("--wd", type=float, default=0.0)
    ap.add_argument("--eps", type=float, default=1e-7)
    ap.add_argument("--ns-steps", type=int, default=5)
    ap.add_argument("--sum", action="store_true")
    ap.add_argument("--no-nesterov", action="store_true")
    o = ap.parse_args()
    names = sorted({os.path.basename(p).rsplit(".", 2)[0]
                    for p in glob.glob(f"{o.dump}/*.npy")})
    ok = True
    for name in names:
        shape, P = load(f"{o.dump}/{name}.param_init.npy")
        _, M = load(f"{o.dump}/{name}.momentum_init.npy")
        rows, cols = shape[-2], shape[-1]
        scale = math.sqrt(max(1.0, rows / cols))
        worst = 0.0
        for t in range(o.steps):
            _, G = load(f"{o.dump}/{name}.grad_step{t}.npy")
            if o.sum:
                M = [o.beta * m + g for m, g in zip(M, G)]
                U = [g + o.beta * m for g, m in zip(G, M)]
            else:
                M = [m + (1 - o.beta) * (g - m) for m, g in zip(M, G)]
                U = [g + o.beta * (m - g) for g, m in zip(G, M)]
            if o.no_nesterov:
                U = list(M)
            O = newton_schulz(U, rows, cols, o.ns_steps, o.eps)
            P = [p * (1 - o.lr * o.wd) - o.lr * (v * scale) for p, v in zip(P, O)]
            for what, want in (("param", P), ("momentum", M)):
                _, got = load(f"{o.dump}/{name}.{what}_step{t}.npy")
                for g, w in zip(got, want):
                    d = abs(g - w)
                    worst = max(worst, d)
                    if d > 1e-5 + 1e-5 * abs(w):
                        ok = False
        print(f"{name} {'x'.join(map(str, shape))} max|d|={worst:.1e} "
              f"{'ok' if worst <= 1e-5 else 'MISMATCH'}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1

sys.exit(main())
