#!/usr/bin/env python3
"""The distributed step against its no-communication floor, on CPU ranks.

For the main example on 2 ranks ([dp = 2, tp = 1]) and 4 ranks (its 2x2
mesh): the compiled step time muon-run measures (rank 0, 3 steps), and the
floor: the same owners' Newton-Schulz work (from muon-report's owner
column), run by as many processes at once with no collectives
(muon-bench-ns-work), the slowest process per step. The ratio separates
our overhead (collectives, waiting, momentum and update) from how the
machine's cores scale. Also one process doing everything (the 1-rank
figure). The step is measured twice, batched gathers and scatters (the
default) and one rooted call each (--batch-collectives=false), with the
collective calls per rank per step muon-run counts.

    python3 bench/cpu/floor.py [build dir]
"""
import os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
subprocess.run(["cmake", "--build", build, "--target", "muon-bench-ns-work"],
               check=True, stdout=subprocess.DEVNULL)
opt, run = f"{build}/bin/muon-opt", f"{build}/bin/muon-run"
work = f"{build}/bin/muon-bench-ns-work"
example = open(f"{root}/examples/llama-tp-fsdp.mlir").read()
env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
REPEAT = 3


def owners(text):
    report = subprocess.run([opt, "--muon-assign-owners", "--muon-report",
                             "-o", os.devnull], input=text, text=True,
                            capture_output=True, check=True).stdout
    per_rank = {}
    for line in report.splitlines():
        f = line.split()
        if len(f) > 4 and re.fullmatch(r"\d+", f[0]) and re.fullmatch(r"\d+x\d+", f[2]):
            per_rank.setdefault(int(f[3]), []).append(f[2])
    return per_rank


def floor(per_rank, ranks):
    procs = [subprocess.Popen([work, str(REPEAT)] + per_rank.get(r, []),
                              stdout=subprocess.PIPE, text=True, env=env)
             for r in range(ranks)]
    return max(float(p.communicate()[0]) for p in procs)


def measured(text, ranks, batch):
    path = f"{build}/floor-{ranks}.mlir"
    open(path, "w").write(text)
    out = subprocess.run([run, path, "--steps", str(REPEAT),
                          f"--batch-collectives={'true' if batch else 'false'}"],
                         text=True, capture_output=True, env=env).stdout
    m = re.search(r"compiled step ([0-9.]+) s/step", out)
    calls = re.search(r"collective calls per rank per step: r0=([0-9.]+)", out)
    assert m and calls and "PASS" in out, out
    return float(m.group(1)), float(calls.group(1))


two = example.replace("[dp = 2, tp = 2]", "[dp = 2, tp = 1]")
print("%-6s %10s %10s %10s %8s %8s %7s %7s" % (
    "ranks", "batched s", "rooted s", "floor s", "x_floor", "x_floor_r",
    "calls", "calls_r"))
all_shapes = sum(owners(example).values(), [])
print("%-6d %10s %10s %10.4f" % (1, "-", "-", floor({0: all_shapes}, 1)))
for ranks, text in ((2, two), (4, example)):
    (b, bc), (r, rc) = measured(text, ranks, True), measured(text, ranks, False)
    fl = floor(owners(text), ranks)
    print("%-6d %10.4f %10.4f %10.4f %8.3f %8.3f %7.0f %7.0f" % (
        ranks, b, r, fl, b / fl, r / fl, bc, rc))
