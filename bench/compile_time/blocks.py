#!/usr/bin/env python3
"""Compile time over the number of Newton-Schulz pieces one call puts
together: a matrix split into N blocks, and N same-shape matrices stacked
into one batched call.

  python3 bench/compile_time/blocks.py [--opt build/bin/muon-opt]
                                       [--baseline OTHER-muon-opt]
                                       [--counts 32,64,128,256]

For each N it lowers (muon-opt --muon-to-llvm) two one-rank steps:
  split: one N x 64 parameter with `split = 0 [1, 1, ...]` (N one-row
         blocks, each orthogonalised alone, the results put together);
  stack: N replicated 8 x 8 parameters with ns-stack-bytes large enough
         for all of them (one batched Newton-Schulz on an N x 8 x 8 stack).
It prints wall seconds and peak MB, with --baseline a second muon-opt's
seconds and the ratio (baseline / this), and the exponents of a
least-squares fit of log(time) on log(N) (1.0 = linear growth).
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import measure, parser, slope  # noqa: E402


def split_step(n):
    sizes = ", ".join(["1"] * n)
    return f"""dist.mesh @m [dp = 1]
!t = !dist.tensor<{n}x64xf32, @m, [replicate]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {{
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {{lr = 0.02 : f64, param_info = [#muon.param<"w", split = 0 [{sizes}]>]}}
  return %r#0, %r#1 : !t, !t
}}
"""


def stack_step(n):
    args = ", ".join(f"%p{i}: !t, %g{i}: !t, %m{i}: !t" for i in range(n))
    types = ", ".join(["!t"] * n)

    def names(x):
        return ", ".join(f"%{x}{i}" for i in range(n))
    return f"""dist.mesh @m [dp = 1]
!t = !dist.tensor<8x8xf32, @m, [replicate]>
func.func @step({args}) -> ({", ".join(["!t"] * (2 * n))}) {{
  %r:{2 * n} = muon.step params({names("p")} : {types})
      grads({names("g")} : {types}) momenta({names("m")} : {types})
      {{lr = 0.02 : f64}}
  return {", ".join(f"%r#{i}" for i in range(2 * n))} : \
{", ".join(["!t"] * (2 * n))}
}}
"""


def main():
    ap = parser(__doc__)
    ap.add_argument("--counts", default="32,64,128,256")
    args = ap.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    # Bytes of N 8x8 f32 matrices, so every stack holds all of them.
    stack_bytes = max(counts) * 8 * 8 * 4
    kinds = {"split": (split_step, "--muon-to-llvm"),
             "stack": (stack_step,
                       f"--muon-to-llvm=ns-stack-bytes={stack_bytes}")}
    head = f"{'kind':6} {'N':>5} {'s':>8} {'MB':>7}"
    if args.baseline:
        head += f" {'base s':>8} {'base/this':>9}"
    print(head)
    fits = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.mlir")
        for kind, (make, flag) in kinds.items():
            for n in counts:
                step = os.path.join(tmp, f"{kind}{n}.mlir")
                with open(step, "w") as f:
                    f.write(make(n))
                s, mb, _, _ = measure(args.opt, step, out, False, flag)
                row = f"{kind:6} {n:5d} {s:8.2f} {mb:7.0f}"
                fits.setdefault((kind, "this"), []).append((n, s))
                if args.baseline:
                    b, _, _, _ = measure(args.baseline, step, out, False,
                                         flag)
                    fits.setdefault((kind, "base"), []).append((n, b))
                    row += f" {b:8.2f} {b / max(s, 0.01):9.1f}"
                print(row, flush=True)
    print("\nfitted exponents of time in N (1.0 = linear)")
    for (kind, which), points in fits.items():
        print(f"  {kind} {which}: {slope(points):.2f}")


if __name__ == "__main__":
    main()
