#!/usr/bin/env python3
"""The distributed step against its no-communication floor, on CPU ranks.

For the main example on 2 ranks ([dp = 2, tp = 1]) and 4 ranks (its 2x2
mesh): the compiled step time muon-run measures (rank 0, 3 steps), and the
floor: the same owners' Newton-Schulz work (from muon-report's owner
column), run by as many processes at once with no collectives
(muon-bench-ns-work), the slowest process per step. The ratio separates
our overhead (collectives, waiting, momentum and update) from how the
machine's cores scale. Also one process doing everything (the 1-rank
figure).

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


def measured(text, ranks):
    path = f"{build}/floor-{ranks}.mlir"
    open(path, "w").write(text)
    out = subprocess.run([run, path, "--steps", str(REPEAT)], text=True,
                         capture_output=True, env=env).stdout
    m = re.search(r"compiled step ([0-9.]+) s/step", out)
    assert m and "PASS" in out, out
    return float(m.group(1))


two = example.replace("[dp = 2, tp = 2]", "[dp = 2, tp = 1]")
print("%-6s %14s %14s %8s" % ("ranks", "step s", "floor s", "ratio"))
all_shapes = sum(owners(example).values(), [])
print("%-6d %14s %14.4f %8s" % (1, "-", floor({0: all_shapes}, 1), "-"))
for ranks, text in ((2, two), (4, example)):
    step, fl = measured(text, ranks), floor(owners(text), ranks)
    print("%-6d %14.4f %14.4f %8.3f" % (ranks, step, fl, step / fl))
