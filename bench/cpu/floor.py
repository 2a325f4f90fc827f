#!/usr/bin/env python3
"""The distributed step against its no-communication floor, on CPU ranks.

For the main example on 2 ranks ([dp = 2, tp = 1]) and 4 ranks (its 2x2
mesh): the compiled step time muon-run measures on rank 0 (4 steps, those
after the first), and the floor: the same owners' Newton-Schulz work (from
muon-report's owner column), run by as many processes at once with no
collectives (muon-bench-ns-work, after an untimed repetition, as a step's
process allocates), the slowest process. The ratio separates our overhead
(collectives, waiting, momentum and update) from how the machine's cores
scale. Also one process doing everything (the 1-rank figure). The step is
measured twice, batched gathers and scatters (the default) and one rooted
call each (--batch-collectives=false), with the collective calls per rank
per step muon-run counts.

Three ratios per trial, each step over its floor:
- x_floor: mean seconds per step over mean seconds per repetition;
- best_x: the fastest step over the fastest repetition (per process, then
  the slowest process): on a machine shared with other work, the least
  disturbed of each;
- cpu_x: rank 0's processor seconds per step outside its waits for
  collectives (muon-run's "processor time" line, less the polling; the
  copies MPI makes inside its test calls there are left out too) over
  floor process 0's processor seconds per repetition (the same owner's
  work): what the step adds to that rank's Newton-Schulz. Waiting for a
  slower rank is not in it, and time other work takes from our processes
  moves it less than the wall-time ratios.

Two more compare the step with a floor that synchronises as the step's
rounds do (muon-bench-ns-work --sync: the same ranks under mpirun, each
running its matrices in the step's order, all meeting after each round,
no data moved):
- x_sync: the batched step's mean seconds per step over that floor's;
- sync_x: that floor over the plain floor: what meeting once per round
  costs on this machine by itself (on a machine with fewer cores than
  ranks, how processes that wait for each other share the cores).

A trial measures the floor, the batched and the rooted step and the
synchronised floor back to back (in a rotating order); the medians over
trials are printed last.

    python3 bench/cpu/floor.py [build dir] [--trials N]   (default 5)

Where there is no build (a GPU machine), a bundle made by
scripts/make-gpu-bundle.sh carries the two programs and the owners
(--write-owners at bundling): --bin BUNDLE/bin --owners
BUNDLE/floor-owners.json; scripts/gpu-check.sh runs it that way.
"""
import argparse, json, os, re, subprocess, tempfile
from statistics import median

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("build", nargs="?", default=os.path.join(root, "build"))
parser.add_argument("--trials", type=int, default=5)
parser.add_argument("--bin", help="take muon-run and muon-bench-ns-work from "
                    "this directory (a GPU bundle's bin) instead of the build; "
                    "needs --owners")
parser.add_argument("--owners", help="the owners' shapes per rank, as "
                    "--write-owners wrote them (instead of asking muon-opt)")
parser.add_argument("--write-owners", metavar="FILE",
                    help="write the owners' shapes per rank for 2 and 4 "
                    "ranks as JSON and stop")
args = parser.parse_args()
build, TRIALS = args.build, args.trials
if TRIALS < 1:
    parser.error("--trials must be at least 1")
if args.bin and not args.owners:
    parser.error("--bin needs --owners (muon-opt is not in a bundle)")
if not args.bin:
    subprocess.run(["cmake", "--build", build, "--target", "muon-bench-ns-work"],
                   check=True, stdout=subprocess.DEVNULL)
bindir = args.bin or f"{build}/bin"
opt, run = f"{build}/bin/muon-opt", f"{bindir}/muon-run"
work = f"{bindir}/muon-bench-ns-work"
# Steps written for muon-run go next to the binaries' build, or to a
# temporary directory with --bin.
scratch = tempfile.mkdtemp() if args.bin else build
example = open(f"{root}/examples/llama-tp-fsdp.mlir").read()
env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
REPEAT = 3


def owners(text):
    """Per rank, the shapes it orthogonalises, in the order the step does
    (the estimated timeline's Newton-Schulz order: the i-th of each rank
    are one round where every rank owns one matrix per round)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as timeline:
        report = subprocess.run(
            [opt, "--muon-assign-owners", "--muon-report",
             f"--muon-timeline=output={timeline.name}", "-o", os.devnull],
            input=text, text=True, capture_output=True, check=True).stdout
        events = json.load(open(timeline.name))
    events = events["traceEvents"] if isinstance(events, dict) else events
    shape = {}
    for line in report.splitlines():
        f = line.split()
        if len(f) > 4 and re.fullmatch(r"\d+", f[0]) and re.fullmatch(r"\d+x\d+", f[2]):
            shape[f[1]] = (int(f[3]), f[2])
    per_rank = {}
    # The owner's Newton-Schulz of each matrix (the timeline may also show
    # the other ranks of a call the owner's group makes).
    for e in sorted((e for e in events if e.get("ph") == "X" and
                     e["name"].startswith("newton_schulz ")),
                    key=lambda e: (e["pid"], e["ts"])):
        owner, dims = shape[e["name"].split(" ", 1)[1]]
        if owner == e["pid"]:
            per_rank.setdefault(owner, []).append(dims)
    assert sum(map(len, per_rank.values())) == len(shape), \
        "the timeline does not show every matrix on its owner once"
    return per_rank


def floor(per_rank, ranks):
    """Per process: (mean wall, mean processor, fastest wall) seconds per
    repetition."""
    procs = [subprocess.Popen([work, str(REPEAT)] + per_rank.get(r, []),
                              stdout=subprocess.PIPE, text=True, env=env)
             for r in range(ranks)]
    return [tuple(map(float, p.communicate()[0].split())) for p in procs]


def synced(per_rank, ranks):
    """The floor whose ranks meet after each round and move no data: rank
    0's (mean wall, mean processor, fastest wall) seconds per repetition,
    the ranks started by mpirun as muon-run starts a step's."""
    lists = [",".join(per_rank.get(r, [])) or "-" for r in range(ranks)]
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks),
           "-x", "OPENBLAS_NUM_THREADS", work, "--sync", str(REPEAT)] + lists
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    out = subprocess.run(cmd, text=True, capture_output=True, env=env,
                         check=True).stdout
    return tuple(map(float, out.split()))


def measured(text, ranks, batch):
    """Rank 0's (mean, fastest) wall seconds per step and processor seconds
    per step outside the polling in waits; collective calls per step."""
    path = f"{scratch}/floor-{ranks}.mlir"
    open(path, "w").write(text)
    out = subprocess.run([run, path, "--steps", str(REPEAT + 1),
                          f"--batch-collectives={'true' if batch else 'false'}"],
                         text=True, capture_output=True, env=env).stdout
    m = re.search(r"([0-9.]+) s/step after the first, fastest ([0-9.]+) s", out)
    calls = re.search(r"collective calls per rank per step: r0=([0-9.]+)", out)
    cpu = re.search(r"processor time per rank \(s/step after the first; all, "
                    r"and polling in waits\): r0=([0-9.]+)/([0-9.]+)", out)
    assert m and calls and cpu and "PASS" in out, out
    return (float(m.group(1)), float(m.group(2)),
            float(cpu.group(1)) - float(cpu.group(2)), float(calls.group(1)))


two = example.replace("[dp = 2, tp = 2]", "[dp = 2, tp = 1]")
if args.owners:
    saved = json.load(open(args.owners))
    per_ranks = {n: {int(r): v for r, v in saved[str(n)].items()}
                 for n in (2, 4)}
else:
    per_ranks = {2: owners(two), 4: owners(example)}
if args.write_owners:
    json.dump(per_ranks, open(args.write_owners, "w"))
    raise SystemExit(0)
configs = [(2, two, per_ranks[2]), (4, example, per_ranks[4])]
all_shapes = sum(configs[1][2].values(), [])
print("1 rank (one process, all the Newton-Schulz): %.4f s" %
      floor({0: all_shapes}, 1)[0][0])
columns = ("x_floor", "x_floor_r", "best_x", "best_x_r", "cpu_x", "cpu_x_r",
           "x_sync", "sync_x")
print(("%-5s %-5s" + " %9s" * 3 + " %9s" * len(columns) + " %6s %6s") % (
    ("ranks", "trial", "batched", "rooted", "floor") + columns +
    ("calls", "calls_r")))
ratios = {ranks: {c: [] for c in columns} for ranks, _, _ in configs}
for trial in range(TRIALS):
    for ranks, text, per_rank in configs:
        parts = {"floor": lambda: floor(per_rank, ranks),
                 "batched": lambda: measured(text, ranks, True),
                 "rooted": lambda: measured(text, ranks, False),
                 "synced": lambda: synced(per_rank, ranks)}
        turn = trial % len(parts)
        order = list(parts)[turn:] + list(parts)[:turn]
        got = {name: parts[name]() for name in order}
        procs, b, r = got["floor"], got["batched"], got["rooted"]
        sync = got["synced"]
        wall = max(p[0] for p in procs)
        fastest = max(p[2] for p in procs)
        cpu = procs[0][1]
        row = dict(zip(columns, (b[0] / wall, r[0] / wall, b[1] / fastest,
                                 r[1] / fastest, b[2] / cpu, r[2] / cpu,
                                 b[0] / sync[0], sync[0] / wall)))
        for c in columns:
            ratios[ranks][c].append(row[c])
        print(("%-5d %-5d" + " %9.4f" * 3 + " %9.3f" * len(columns) +
               " %6.0f %6.0f") % ((ranks, trial, b[0], r[0], wall) +
                                  tuple(row[c] for c in columns) +
                                  (b[3], r[3])), flush=True)
print("medians over %d trials:" % TRIALS)
for ranks, _, _ in configs:
    print(("%-5d %-5s" + " %9s" * 3 + " %9.3f" * len(columns)) % (
        (ranks, "", "", "", "") +
        tuple(median(ratios[ranks][c]) for c in columns)))
