#!/usr/bin/env python3
"""How far torch.optim.Muon's Newton-Schulz (bf16, as shipped) is from ours,
with our ns_dtype f32 and bf16 (the CPU runtime's emulation), on random
gradients of a few shapes: |NS_a - NS_b|_F / |NS_b|_F for every pair, one
process.

    PYTHONPATH=build/python python3 bench/python/bf16_gap.py
"""
import numpy as np
import torch
import torch.optim._muon as shipped

import muon
from muon.reference import newton_schulz

COEFFS = (3.4445, -4.775, 2.0315)


def ours(g, dtype):
    """NS(g) from a compiled one-rank step: momentum 0, P = 0, lr 1, so the
    new parameter is -scale * NS(g)."""
    m, n = g.shape
    b = muon.StepBuilder({"dp": 1}, lr=1.0, momentum=0.0, nesterov=False,
                         ns_dtype=dtype)
    b.add("w", (m, n))
    step = muon.compile(b.build())
    z = np.zeros((m, n), np.float32)
    p, _ = step([z], [g.astype(np.float32)], [z])
    return -p[0] / max(1.0, m / n) ** 0.5


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    rng = np.random.default_rng(0)
    print(f"{'shape':>12} {'torch-bf16 vs f64':>18} {'ours-f32 vs f64':>16} "
          f"{'ours-bf16 vs f64':>17} {'torch vs ours-bf16':>19} "
          f"{'torch vs ours-f32':>18}")
    for m, n in [(12, 12), (22, 12), (128, 128), (256, 512), (1024, 1024)]:
        g = rng.standard_normal((m, n))
        f64 = newton_schulz(g, 5, COEFFS, 1e-7)
        t = shipped._zeropower_via_newtonschulz(
            torch.tensor(g, dtype=torch.float32), COEFFS, 5, 1e-7).float()
        t = t.numpy().astype(np.float64)
        o32, o16 = ours(g, "f32"), ours(g, "bf16")
        print(f"{m:>5}x{n:<6} {rel(t, f64):18.2e} {rel(o32, f64):16.2e} "
              f"{rel(o16, f64):17.2e} {rel(t, o16):19.2e} "
              f"{rel(t, o32):18.2e}", flush=True)


if __name__ == "__main__":
    main()
