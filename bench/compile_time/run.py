#!/usr/bin/env python3
"""Compile time of the whole pipeline (muon-opt --muon-to-llvm) over model
size, rank count and layout, with fitted growth exponents.

  python3 bench/compile_time/run.py [--quick] [--opt build/bin/muon-opt]
                                    [--baseline OTHER-muon-opt] [--timing]
                                    [--instructions] [--models 8b,405b]
                                    [--ranks 8,512]

For each Llama-3 model (8B: 224 matrices, 70B: 560, 405B: 882), rank count
(8, 64, 512, 1024) and layout (fsdp, fsdp_tp, 3d: bench/llama3_step.py,
the entry returning the step's results) it prints wall seconds, peak RSS
and the size of the LLVM-dialect output, then the exponents of a
least-squares fit of log(time) on log(matrices) (per layout and rank
count) and on log(ranks) (per model and layout): 1.0 is linear growth.
--baseline runs a second muon-opt on the same inputs and prints its seconds,
peak MB and the ratio (baseline / this), and its exponents beside ours,
e.g. a build of an older commit. --timing adds the three
slowest passes of each run (--mlir-timing). --quick: 8B and 70B on 8, 64
and 512 ranks.

--instructions measures instructions instead of seconds: each run goes
through valgrind's callgrind, counting only inside the pass manager (the
lowering, without parsing the input or printing the output), with
--verify-each=false and check-output-once=true when the muon-opt knows
that option (the lowering as muon-run, the C API and the Python package
run it) and on one thread (callgrind counts a thread only from
where it enters the pass manager, so work on MLIR's worker threads would
be missed). The counts do not depend on what else the machine is
doing, so their exponents show how the compiler's work grows, apart from
the cache misses of a larger module that wall time also contains. About
10x slower than timing (--quick: about 10 minutes per muon-opt).
"""

import argparse
import functools
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
MATRICES = {"8b": 224, "70b": 560, "405b": 882}


def measure(opt, step, out, timing, lowering="--muon-to-llvm"):
    cmd = ["/usr/bin/time", "-f", "TIME %e %M", opt, step, lowering,
           "-o", out]
    if timing:
        cmd.append("--mlir-timing")
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"TIME ([0-9.]+) ([0-9]+)", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit(f"{opt} failed on {step}:\n{p.stderr[-2000:]}")
    slow = []
    if timing:
        # "  user ( u%)  wall ( w%)  Name" rows; pipelines ('func.func'
        # Pipeline) and the total contain other rows and are left out.
        row = re.compile(r"\s+[0-9.]+ \(\s*[0-9.]+%\)\s+([0-9.]+) "
                         r"\(\s*[0-9.]+%\)\s+(\S.*)$")
        for line in p.stderr.splitlines():
            t = row.match(line)
            if t and not t.group(2).startswith(("Total", "'")):
                slow.append((float(t.group(1)), t.group(2).strip()))
        slow = sorted(slow, reverse=True)[:3]
    return float(m.group(1)), int(m.group(2)) / 1024.0, os.path.getsize(out), slow


@functools.lru_cache(maxsize=None)
def lowering_flag(opt):
    """--muon-to-llvm as runMuonToLLVMPipeline builds it (one check of the
    three conversions to runtime calls), where `opt` has that option; an
    older muon-opt checks after each. Asked once per muon-opt."""
    help_text = subprocess.run([opt, "--help"], capture_output=True,
                               text=True).stdout
    if "check-output-once" in help_text:
        return "--muon-to-llvm=check-output-once=true"
    return "--muon-to-llvm"


def measure_instructions(opt, step, out):
    """Instructions executed inside mlir::PassManager::run, and the output
    size."""
    counts = out + ".callgrind"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={counts}",
           "--toggle-collect=mlir::PassManager::run(*", opt, step,
           lowering_flag(opt), "--verify-each=false",
           "--mlir-disable-threading", "-o", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{opt} failed under callgrind on {step}:\n"
                 f"{p.stderr[-2000:]}")
    with open(counts) as f:
        totals = [line for line in f if line.startswith("totals:")]
    os.remove(counts)
    if not totals:
        sys.exit(f"callgrind wrote no totals for {opt} on {step}")
    return int(totals[-1].split()[1]) / 1e9, os.path.getsize(out)


def slope(points):
    """Least-squares slope of log(y) on log(x)."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(max(y, 1e-3)) for _, y in points]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0


def parser(doc):
    """The options every compile-time script takes: the muon-opt to time
    and a baseline muon-opt timed on the same inputs."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--opt", default=os.path.join(ROOT, "build", "bin",
                                                  "muon-opt"))
    ap.add_argument("--baseline", default="")
    return ap


def main():
    ap = parser(__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", default="",
                    help="comma-separated, e.g. 8b,405b (overrides --quick)")
    ap.add_argument("--ranks", default="",
                    help="comma-separated, e.g. 8,512 (overrides --quick)")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--instructions", action="store_true",
                    help="count the lowering's instructions (callgrind) "
                         "instead of timing the whole run")
    args = ap.parse_args()
    if args.instructions and args.timing:
        ap.error("--timing and --instructions measure different runs; "
                 "give one")
    models = ["8b", "70b"] if args.quick else ["8b", "70b", "405b"]
    ranks = [8, 64, 512] if args.quick else [8, 64, 512, 1024]
    if args.models:
        models = [m.strip() for m in args.models.split(",")]
        unknown = [m for m in models if m not in MATRICES]
        if unknown:
            ap.error(f"unknown models {unknown}: choose from "
                     f"{', '.join(MATRICES)}")
    if args.ranks:
        try:
            ranks = [int(r) for r in args.ranks.split(",")]
        except ValueError:
            ap.error(f"--ranks takes integers, got {args.ranks!r}")
        if any(r < 1 for r in ranks):
            ap.error(f"--ranks takes positive integers, got {args.ranks!r}")
    layouts = ["fsdp", "fsdp_tp", "3d"]
    tmp = tempfile.mkdtemp()
    rows = []
    # Each run gives (seconds or G instructions, peak MB or None, output
    # bytes, slowest passes).
    if args.instructions:
        unit, base_unit, digits = "G_instr", "base_G", 3

        def run(opt, step, out, timing):
            g, size = measure_instructions(opt, step, out)
            return g, None, size, []
    else:
        unit, base_unit, digits = "s", "base_s", 2
        run = measure
    mb_head, base_mb_head = ("", "") if args.instructions else (f" {'MB':>7}",
                                                      f" {'base_MB':>7}")
    print(f"{'model':>5} {'ranks':>5} {'layout':>8} {unit:>8}{mb_head} "
          f"{'out_MB':>7}" +
          (f" {base_unit:>8}{base_mb_head} {'base/this':>9}" if args.baseline
           else ""))
    for model in models:
        for r in ranks:
            for layout in layouts:
                step = os.path.join(tmp, "step.mlir")
                out = os.path.join(tmp, "out.mlir")
                with open(step, "w") as f:
                    subprocess.run([sys.executable,
                                    os.path.join(ROOT, "bench",
                                                 "llama3_step.py"),
                                    model, str(r), layout, "--returns"],
                                   stdout=f, check=True)
                s, mb, size, slow = run(args.opt, step, out, args.timing)
                line = (f"{model:>5} {r:>5} {layout:>8} {s:8.{digits}f}" +
                        ("" if mb is None else f" {mb:7.0f}") +
                        f" {size / 2**20:7.1f}")
                b = None
                if args.baseline:
                    b, bmb, _, _ = run(args.baseline, step, out, False)
                    line += (f" {b:8.{digits}f}" +
                             ("" if bmb is None else f" {bmb:7.0f}") +
                             f" {b / s:8.2f}x")
                print(line, flush=True)
                for t, name in slow:
                    print(f"{'':22} {t:8.2f}  {name}")
                rows.append((model, r, layout, s, b))
    # Column 3 is this muon-opt's time (or instructions), column 4 the
    # baseline's.
    columns = [(3, "this")] + ([(4, "baseline")] if args.baseline else [])
    what = "instructions" if args.instructions else "time"
    print(f"\nfitted exponents of {what} (1.0 = linear)" +
          ("; this, then the baseline" if args.baseline else ""))
    # A fit needs two sizes: with one model (or one rank count) there is
    # no exponent in matrices (ranks) to print.
    for layout in layouts if len(models) > 1 else []:
        for r in ranks:
            fits = [slope([(MATRICES[row[0]], row[c]) for row in rows
                           if row[1] == r and row[2] == layout])
                    for c, _ in columns]
            print(f"  matrices, {layout:>8} on {r:>4} ranks: " +
                  " ".join(f"{f:5.2f}" for f in fits))
    for model in models if len(ranks) > 1 else []:
        for layout in layouts:
            fits = [slope([(row[1], row[c]) for row in rows
                           if row[0] == model and row[2] == layout])
                    for c, _ in columns]
            print(f"  ranks,    {layout:>8} {model:>4}: " +
                  " ".join(f"{f:5.2f}" for f in fits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
