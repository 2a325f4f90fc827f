#!/usr/bin/env python3
"""Compile time of the checking passes over call chains: dist-verify-spmd
and dist-verify-reduced on a module whose entry calls a chain of N helper
functions, the last of which all-reduces.

  python3 bench/compile_time/calls.py [--opt build/bin/muon-opt]
                                      [--baseline OTHER-muon-opt]
                                      [--sizes 1000,3000,10000,20000]

For each chain length, each pass, and helpers private (run only through
the calls: simulated where they are called) or public (each an entry
point, so checking them all is quadratic in the chain by construction),
it prints the seconds of the pass alone (--mlir-timing, so parsing the
input is not counted) and the exponent of a least-squares fit of
log(time) on log(N): 1.0 is linear growth. --baseline times another
muon-opt on the same inputs (e.g. a build of an older commit) and prints
the ratio baseline / this.
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
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    opts = [("this", args.opt)] + (
        [("baseline", args.baseline)] if args.baseline else [])
    with tempfile.TemporaryDirectory() as tmp:
        for private in (True, False):
            kind = "private" if private else "public"
            for name in PASSES:
                points = {label: [] for label, _ in opts}
                print(f"\n{name}, {kind} helpers")
                print(f"{'N':>7} " + " ".join(
                    f"{label + ' s':>12}" for label, _ in opts) +
                    ("  baseline/this" if args.baseline else ""))
                for n in sizes:
                    if not private and n > args.public_max:
                        continue
                    path = os.path.join(tmp, f"{kind}{n}.mlir")
                    if not os.path.exists(path):
                        with open(path, "w") as f:
                            f.write(chain(n, private))
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
