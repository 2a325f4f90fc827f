#!/usr/bin/env python3
"""Mutation sweep through the real command line: small deterministic
mutations of every test section and example that verifies (delete, duplicate or swap a
line, change a number to an edge value, swap a type, a placement or a value
name, truncate) run through `muon-opt --verify-each` at three depths:
parse and verify, owner assignment + expansion + the SPMD check, and the
whole CPU pipeline. Each run must end in success or a diagnostic; a signal,
a timeout, running out of memory or an "internal error" is a finding.

    python3 scripts/mutation-sweep.py [--mutants N] [--seed S] [--jobs J]

Prints the counts by outcome and depth and every finding's command; exits 1
if there is any finding. Seeds and operators are fixed, so a run is
reproducible (docs/reliability.md has the numbers)."""
import argparse, glob, os, random, re, resource, shutil, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPTHS = {
    "parse": [],
    "expand": ["--muon-assign-owners", "--muon-expand-step",
               "--dist-verify-spmd"],
    "lower": ["--muon-to-llvm"],
}
EDGE_NUMBERS = ["0", "-1", "1", "3", "2147483648", "9223372036854775807",
                "-9223372036854775808", "18446744073709551616", "1e309", "nan"]
TYPES = ["f32", "f16", "bf16", "tf32", "f64", "i32", "index"]
PLACEMENTS = ["shard<0>", "shard<1>", "shard<7>", "replicate",
              "partial<sum>", "partial<avg>", "reduced"]


def sections(muon_opt):
    """Every test section and example that verifies as it is (mutating
    input that is already wrong finds little), and generated steps of
    every layout on five meshes."""
    paths = sorted(glob.glob(f"{ROOT}/test/**/*.mlir", recursive=True) +
                   glob.glob(f"{ROOT}/examples/*.mlir"))
    found = []
    for path in paths:
        for part in open(path).read().split("// -----"):
            # RUN/CHECK lines are comments: drop them to keep inputs small.
            text = "\n".join(l for l in part.splitlines()
                             if not l.lstrip().startswith("//"))
            if text.strip():
                found.append((os.path.relpath(path, ROOT), text))
    for mesh in ["dp=1", "dp=2", "dp=2,tp=2", "dp=3", "dp=2,fsdp=2,tp=2"]:
        text = subprocess.run(
            [sys.executable, f"{ROOT}/test/Run/Inputs/gen_step.py", "--mesh",
             mesh], capture_output=True, text=True, check=True).stdout
        found.append(("gen_step.py --mesh " + mesh, text))
    return [(origin, text) for origin, text in found
            if subprocess.run([muon_opt, "-o", os.devnull], input=text,
                              capture_output=True, text=True).returncode == 0]


def mutate(text, rng):
    lines = text.splitlines()
    op = rng.randrange(8)
    if op == 0 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif op == 1:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif op == 2 and len(lines) > 1:
        i = rng.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif op == 3:
        nums = list(re.finditer(r"(?<![\w%#@])-?\d+(\.\d+)?", text))
        if nums:
            m = rng.choice(nums)
            return text[:m.start()] + rng.choice(EDGE_NUMBERS) + text[m.end():]
    elif op == 4:
        spots = list(re.finditer(r"\b(f32|f16|bf16|tf32|f64|i32|index)\b",
                                 text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(TYPES) + text[m.end():]
    elif op == 5:
        spots = list(re.finditer(r"shard<\d+>|replicate|partial<\w+>|reduced",
                                 text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(PLACEMENTS) + text[m.end():]
    elif op == 6:
        names = list(re.finditer(r"%[\w#]+", text))
        if len(names) > 1:
            a, b = rng.sample(names, 2)
            return text[:a.start()] + b.group() + text[a.end():]
    else:
        return text[:rng.randrange(len(text) + 1)]
    return "\n".join(lines) + "\n"


def limit_memory():
    gib = 4 << 30
    resource.setrlimit(resource.RLIMIT_AS, (gib, gib))


def run(muon_opt, path, depth):
    cmd = [muon_opt, path, "--verify-each", "-o", os.devnull] + DEPTHS[depth]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                           preexec_fn=limit_memory)
    except subprocess.TimeoutExpired:
        return "timeout", cmd
    err = p.stderr
    if p.returncode < 0:
        return "signal", cmd
    if "internal error" in err:
        return "internal error", cmd
    if "bad_alloc" in err or "out of memory" in err.lower():
        return "out of memory", cmd
    if p.returncode == 0:
        return "ok", cmd
    if "error:" in err:
        return "diagnostic", cmd
    return "exit %d without a diagnostic" % p.returncode, cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutants", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--muon-opt", default=f"{ROOT}/build/bin/muon-opt")
    ap.add_argument("--keep", default="",
                    help="directory to keep the mutants in (default: temporary)")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    work = args.keep or tempfile.mkdtemp(prefix="muon-mutants-")
    os.makedirs(work, exist_ok=True)
    # A private copy: rebuilding the tree during a sweep must not change
    # (or remove) the binary under test.
    shutil.copy2(args.muon_opt, os.path.join(work, "muon-opt"))
    args.muon_opt = os.path.join(work, "muon-opt")
    corpus = sections(args.muon_opt)
    steps = [(o, t) for o, t in corpus if o.startswith("gen_step.py")]
    jobs = []
    for i in range(args.mutants):
        # Half from the generated steps: they are whole programs, so their
        # mutants reach the later passes more often.
        pool = steps if steps and rng.random() < 0.5 else corpus
        origin, text = rng.choice(pool)
        path = os.path.join(work, "mutant-%05d.mlir" % i)
        with open(path, "w") as f:
            f.write(mutate(text, rng))
        for depth in DEPTHS:
            jobs.append((path, depth, origin))

    counts, findings = {}, []
    with ThreadPoolExecutor(args.jobs) as pool:
        for (path, depth, origin), (outcome, cmd) in zip(
                jobs, pool.map(lambda j: run(args.muon_opt, j[0], j[1]), jobs)):
            counts.setdefault(depth, {}).setdefault(outcome, 0)
            counts[depth][outcome] += 1
            if outcome not in ("ok", "diagnostic"):
                findings.append((outcome, origin, " ".join(cmd)))

    print("mutation sweep: %d mutants of %d sections (seed %d), %d runs"
          % (args.mutants, len(corpus), args.seed, len(jobs)))
    for depth in DEPTHS:
        c = counts.get(depth, {})
        print("  %-7s " % depth + ", ".join(
            "%s %d" % (k, v) for k, v in sorted(c.items())))
    for outcome, origin, cmd in findings:
        print("FINDING (%s, mutant of %s): %s" % (outcome, origin, cmd))
    print("%d findings" % len(findings))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
