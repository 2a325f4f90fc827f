#!/usr/bin/env python3
"""Compile time and peak memory over the number of members of one flat
group (FSDP1-style storage: every parameter is an element range of one
flattened buffer).

  python3 bench/compile_time/flat_groups.py [--opt build/bin/muon-opt]
                                            [--baseline OTHER-muon-opt]
                                            [--counts 500,1000,2000,4000]

For each N it lowers (muon-opt --muon-to-llvm) a step of N 8x8 parameters,
members 0..N-1 of one `dist.flat_group` over `dp = 8`, and prints wall
seconds and peak MB, with --baseline a second muon-opt's and the ratios
(baseline / this), then the exponents of least-squares fits of log(time)
and log(peak MB) on log(N): 1.0 is linear growth. Every member's facts
refer to the group's list of N sizes, so a copy per member makes memory
grow as N^2.
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import measure, parser, slope  # noqa: E402


def flat_step(n):
    t = [f"!dist.tensor<8x8xf32, @m, [replicate], storage = flat<@g, {i}>>"
         for i in range(n)]
    args = ", ".join(f"%p{i}: {t[i]}, %g{i}: {t[i]}, %m{i}: {t[i]}"
                     for i in range(n))
    types = ", ".join(t)

    def names(x):
        return ", ".join(f"%{x}{i}" for i in range(n))
    return f"""dist.mesh @m [dp = 8]
dist.flat_group @g on @m[dp] numel [{", ".join(["64"] * n)}]
func.func @step({args}) -> ({types}, {types}) {{
  %r:{2 * n} = muon.step params({names("p")} : {types})
      grads({names("g")} : {types}) momenta({names("m")} : {types})
      {{lr = 0.02 : f64}}
  return {", ".join(f"%r#{i}" for i in range(2 * n))} : {types}, {types}
}}
"""


def main():
    ap = parser(__doc__)
    ap.add_argument("--counts", default="500,1000,2000,4000")
    args = ap.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    head = f"{'N':>6} {'s':>8} {'MB':>7}"
    if args.baseline:
        head += f" {'base s':>8} {'base MB':>8} {'s ratio':>8} {'MB ratio':>8}"
    print(head)
    fits = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.mlir")
        for n in counts:
            step = os.path.join(tmp, f"flat{n}.mlir")
            with open(step, "w") as f:
                f.write(flat_step(n))
            s, mb, _, _ = measure(args.opt, step, out, False)
            fits.setdefault("this s", []).append((n, s))
            fits.setdefault("this MB", []).append((n, mb))
            row = f"{n:6d} {s:8.2f} {mb:7.0f}"
            if args.baseline:
                b, bmb, _, _ = measure(args.baseline, step, out, False)
                fits.setdefault("base s", []).append((n, b))
                fits.setdefault("base MB", []).append((n, bmb))
                row += (f" {b:8.2f} {bmb:8.0f} {b / max(s, 0.01):8.2f}"
                        f" {bmb / max(mb, 1):8.2f}")
            print(row, flush=True)
    print("\nfitted exponents in N (1.0 = linear)")
    for which, points in fits.items():
        print(f"  {which}: {slope(points):.2f}")


if __name__ == "__main__":
    main()
