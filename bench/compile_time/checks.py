#!/usr/bin/env python3
"""Compile time of the checking passes (dist-verify-spmd,
dist-verify-reduced) on programs that grow in one direction:

  private  an entry calls a chain of N private helpers, the last of which
           all-reduces (each helper runs only through its call, and is
           simulated there);
  public   the same chain of public helpers: each is an entry point whose
           simulation runs the rest of the chain, quadratic in N by
           construction (up to --public-max);
  loop     a loop of 20,000 iterations around an all_reduce and an inner
           loop of N operations without collectives (every rank's
           simulation steps through the outer loop).

  python3 bench/compile_time/checks.py [--opt build/bin/muon-opt]
                                       [--baseline OTHER-muon-opt]
                                       [--sizes 1000,3000,10000,20000]
                                       [--kinds private,public,loop]

For each kind, pass and N it prints the seconds of the pass alone
(--mlir-timing, so parsing the input is not counted) and the exponent of
a least-squares fit of log(time) on log(N): 1.0 is linear growth.
--baseline times another muon-opt on the same inputs (e.g. a build of an
older commit) and prints the ratio baseline / this.
"""

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import parser, slope  # noqa: E402

PASSES = ["dist-verify-spmd", "dist-verify-reduced"]


def chain(n, private):
    """An entry calling @f1 -> @f2 -> ... -> @fN, which all-reduces."""
    vis = "private " if private else ""
    out = ["dist.mesh @m [dp = 2]",
           f"func.func {vis}@f{n}(%x: tensor<4xf32>) -> tensor<4xf32> {{",
           "  %a = dist.all_reduce %x on @m axes [dp] reduce sum"
           " : tensor<4xf32> -> tensor<4xf32>",
           "  return %a : tensor<4xf32>", "}"]
    for i in range(n - 1, -1, -1):
        out += [f"func.func {vis if i else ''}@f{i}(%x: tensor<4xf32>)"
                " -> tensor<4xf32> {",
                f"  %a = func.call @f{i + 1}(%x)"
                " : (tensor<4xf32>) -> tensor<4xf32>",
                "  return %a : tensor<4xf32>", "}"]
    return "\n".join(out) + "\n"


def loop(n, trips=20000):
    """A loop around an all_reduce and an inner loop of n additions."""
    out = ["dist.mesh @m [dp = 2]",
           "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {",
           "  %c0 = arith.constant 0 : index",
           "  %c1 = arith.constant 1 : index",
           f"  %n = arith.constant {trips} : index",
           "  %y = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x)"
           " -> tensor<4xf32> {",
           "    %a = dist.all_reduce %acc on @m axes [dp] reduce sum"
           " : tensor<4xf32> -> tensor<4xf32>",
           "    %s = scf.for %j = %c0 to %c1 step %c1 iter_args(%t = %c0)"
           " -> index {"]
    prev = "%j"
    for i in range(n):
        out.append(f"      %v{i} = arith.addi {prev}, {prev} : index")
        prev = f"%v{i}"
    out += [f"      scf.yield {prev} : index", "    }",
            "    scf.yield %a : tensor<4xf32>", "  }",
            "  return %y : tensor<4xf32>", "}"]
    return "\n".join(out) + "\n"


def pass_seconds(opt, path, name):
    p = subprocess.run([opt, path, f"--{name}", "--mlir-timing",
                        "-o", os.devnull], capture_output=True, text=True,
                       timeout=3600)
    if p.returncode != 0:
        sys.exit(f"{opt} --{name} failed on {path}:\n{p.stderr[-2000:]}")
    # "   0.1234 ( 12.3%)  DistVerifySpmd" (pass names in CamelCase).
    camel = "".join(w.capitalize() for w in name.split("-"))
    for line in p.stderr.splitlines():
        m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+" + camel + r"\s*$",
                     line)
        if m:
            return float(m.group(1))
    sys.exit(f"no timing row for {camel} in:\n{p.stderr[-2000:]}")


def main():
    ap = parser(__doc__)
    ap.add_argument("--sizes", default="1000,3000,10000,20000")
    ap.add_argument("--public-max", type=int, default=3000,
                    help="longest public chain to time (quadratic)")
    ap.add_argument("--kinds", default="private,public,loop")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    opts = [("this", args.opt)] + (
        [("baseline", args.baseline)] if args.baseline else [])
    make = {"private": lambda n: chain(n, True),
            "public": lambda n: chain(n, False), "loop": loop}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            if kind not in make:
                sys.exit(f"unknown kind '{kind}' (private, public, loop)")
            for name in PASSES:
                points = {label: [] for label, _ in opts}
                print(f"\n{name}, {kind}")
                print(f"{'N':>7} " + " ".join(
                    f"{label + ' s':>12}" for label, _ in opts) +
                    ("  baseline/this" if args.baseline else ""))
                for n in sizes:
                    if kind == "public" and n > args.public_max:
                        continue
                    path = os.path.join(tmp, f"{kind}{n}.mlir")
                    if not os.path.exists(path):
                        with open(path, "w") as f:
                            f.write(make[kind](n))
                    secs = [pass_seconds(opt, path, name) for _, opt in opts]
                    for (label, _), s in zip(opts, secs):
                        points[label].append((n, s))
                    ratio = (f"  {secs[1] / max(secs[0], 1e-4):13.1f}"
                             if args.baseline else "")
                    print(f"{n:>7} " + " ".join(f"{s:12.3f}" for s in secs)
                          + ratio)
                print("exponent " + " ".join(
                    f"{label} {slope(points[label]):.2f}"
                    for label, _ in opts))


if __name__ == "__main__":
    main()
