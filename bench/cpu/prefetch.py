#!/usr/bin/env python3
"""Prefetch on CPU ranks: the main example's compiled step with
prefetch_count 0 (every collective blocks), 1 (the default) and 2, on 2
ranks ([dp = 2, tp = 1], one per core) and its 4 ranks (2x2, two per core),
alternated REPEAT times in one run (muon-run, rank 0, 3 steps; PASS
required). Prints seconds per step and the best time over prefetch 0's.

    python3 bench/cpu/prefetch.py [build dir] [repeat]
"""
import os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 2
run = f"{build}/bin/muon-run"
example = open(f"{root}/examples/llama-tp-fsdp.mlir").read()
env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
DEPTHS = (0, 1, 2)


def measured(text, ranks, k):
    path = f"{build}/prefetch-{ranks}-{k}.mlir"
    text = text.replace("{lr = 0.02 : f64,",
                        f"{{lr = 0.02 : f64, prefetch_count = {k} : i64,", 1)
    open(path, "w").write(text)
    out = subprocess.run([run, path, "--steps", "3"], text=True,
                         capture_output=True, env=env).stdout
    m = re.search(r"compiled step ([0-9.]+) s/step", out)
    assert m and "PASS" in out, out
    return float(m.group(1))


two = example.replace("[dp = 2, tp = 2]", "[dp = 2, tp = 1]")
print("%-6s %-9s %s %10s" % ("ranks", "prefetch",
                             " ".join("%8s" % f"run{i}" for i in range(repeat)),
                             "best/p0"))
for ranks, text in ((2, two), (4, example)):
    times = {k: [] for k in DEPTHS}
    for _ in range(repeat):
        for k in DEPTHS:
            times[k].append(measured(text, ranks, k))
    best0 = min(times[0])
    for k in DEPTHS:
        print("%-6d %-9d %s %10.3f" % (
            ranks, k, " ".join("%8.4f" % t for t in times[k]),
            min(times[k]) / best0))
