#!/usr/bin/env python3
"""Start-up of a compiled step: lowering (muon-to-llvm) and JIT compilation
to machine code, the time every job pays before its first step (muon-run
compiles once per job; the Python package on every rank).

    python3 bench/compile_time/jit.py [--build build] [--baseline OLD_BUILD]
        [--models 8b,70b] [--ranks 8] [--layouts fsdp,3d] [--levels 0,2]
        [--repeat N]

Each case runs in a fresh process (bench/llama3_step.py writes the step)
through the Python package of BUILD, and of OLD_BUILD when given, in the
same run: wall seconds of the lowering and of the JIT (the step is compiled,
not run: a 70B step's state does not fit this machine), and the ratio
baseline / now."""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CHILD = r"""
import sys, time
import muon
from muon import _muon
text = open(sys.argv[1]).read()
module = muon.parse(text)
t = time.perf_counter()
lowered = module.clone().lower(target="cpu")
lower_s = time.perf_counter() - t
t = time.perf_counter()
exe, error = _muon.compile(lowered._m, "step", int(sys.argv[2]))
jit_s = time.perf_counter() - t
assert exe is not None, error
print(f"{lower_s:.3f} {jit_s:.3f}")
"""


def measure(build, path, level):
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    out = subprocess.run([sys.executable, "-c", CHILD, path, str(level)],
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{build}: {out.stderr.strip()[-2000:]}")
    return [float(x) for x in out.stdout.split()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--baseline", help="another build directory to compare")
    ap.add_argument("--models", default="8b")
    ap.add_argument("--ranks", default="8")
    ap.add_argument("--layouts", default="fsdp")
    ap.add_argument("--levels", default="0,2")
    ap.add_argument("--repeat", type=int, default=1,
                    help="measure each case N times (builds alternating) "
                         "and report the fastest")
    a = ap.parse_args()
    head = "| model | ranks | layout | -O | lower s | JIT s |"
    rule = "|---|---|---|---|---|---|"
    if a.baseline:
        head += (" baseline lower s | baseline JIT s | JIT baseline / now |"
                 " lower + JIT baseline / now |")
        rule += "---|---|---|---|"
    print(head)
    print(rule)
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models.split(","):
            for ranks in a.ranks.split(","):
                for layout in a.layouts.split(","):
                    path = os.path.join(tmp, f"{model}_{ranks}_{layout}.mlir")
                    with open(path, "w") as f:
                        subprocess.run(
                            [sys.executable,
                             os.path.join(ROOT, "bench", "llama3_step.py"),
                             model, ranks, layout, "--returns"],
                            stdout=f, check=True)
                    for level in a.levels.split(","):
                        # Builds alternate within each repeat, so a slow
                        # spell of the machine hits both; each figure is
                        # the fastest of its repeats.
                        now, base = [], []
                        for _ in range(a.repeat):
                            now.append(measure(a.build, path, level))
                            if a.baseline:
                                base.append(measure(a.baseline, path, level))
                        lower = min(x[0] for x in now)
                        jit = min(x[1] for x in now)
                        row = (f"| {model} | {ranks} | {layout} | {level} | "
                               f"{lower:.2f} | {jit:.2f} |")
                        if a.baseline:
                            blower = min(x[0] for x in base)
                            bjit = min(x[1] for x in base)
                            row += (f" {blower:.2f} | {bjit:.2f} | "
                                    f"{bjit / jit:.2f}x | "
                                    f"{(blower + bjit) / (lower + jit):.2f}x |")
                        print(row, flush=True)


if __name__ == "__main__":
    main()
