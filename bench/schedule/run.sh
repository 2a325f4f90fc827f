#!/usr/bin/env bash
# Estimated step time of every schedule (muon-report schedules=true, the
# H100 cost model of docs/schedule.md) for Llama-3 8B and 70B matrices on 8,
# 64 and 512 ranks with FSDP, FSDP + TP and HSDP: naive (every rank
# orthogonalises everything), one parameter at a time, rounds, rounds +
# prefetch 1 and 2, each as a ratio to the lower bound max(per-rank link
# time, per-rank Newton-Schulz time) of the same owners; then the
# collective calls per rank of the rounds schedule with batched gathers and
# scatters (what muon-expand-step emits) and with one rooted call each
# (unb), and the blocking rounds without batching as a ratio (r_unb);
# pref1_ms is the default schedule's (rounds, prefetch 1) estimated step;
# path_ms the owner path bound (a rank's shortest way in, all its
# Newton-Schulz, its shortest way out; what each rank must receive after the
# Newton-Schulz that releases it, an owner's run one after another: no
# schedule that orthogonalises each matrix whole on its owner beats it;
# docs/schedule.md) and p1/path the default schedule over it.
# stk_*: the same owners with Newton-Schulz stacked as target=cuda compiles
# (ns-stack-bytes = 64 MiB): its rounds, collective calls per rank, and the
# default schedule over the same bound.
#
#   bash bench/schedule/run.sh [muon-opt]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
opt=${1:-$root/build/bin/muon-opt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf "%-5s %5s %-8s %12s %10s %8s %8s %8s %8s %8s %8s %6s %6s %8s %10s %8s %8s %8s %8s\n" model ranks layout \
  bound_ms pref1_ms naive seq rounds pref1 pref2 best colls unb r_unb path_ms p1/path \
  stk_rnds stk_coll stk_p1
for model in 8b 70b; do
  for ranks in 8 64 512; do
    for layout in fsdp fsdp_tp hsdp; do
      python3 "$root/bench/llama3_step.py" "$model" "$ranks" "$layout" > "$tmp/step.mlir"
      "$opt" "$tmp/step.mlir" --muon-assign-owners \
        --muon-report=schedules=true -o /dev/null > "$tmp/report.txt"
      "$opt" "$tmp/step.mlir" --muon-assign-owners \
        --muon-report="schedules=true ns-stack-bytes=67108864" -o /dev/null \
        > "$tmp/stacked.txt"
      python3 - "$tmp/report.txt" "$model" "$ranks" "$layout" "$tmp/stacked.txt" <<'PY'
import re
import sys
stacked = open(sys.argv[5]).read()
stk_rounds = int(re.search(r"schedule: rounds, (\d+) rounds?", stacked).group(1))
stk = {}
for l in stacked.split("schedule estimates", 1)[1].splitlines()[2:]:
    f = l.split()
    if f and f[0] not in ("lower", "owner"):
        stk[f[0]] = (float(f[2]), int(f[3]))
lines = open(sys.argv[1]).read().split("schedule estimates", 1)[1].splitlines()
rows = {}
for l in lines[2:]:
    f = l.split()
    if f[:2] == ["lower", "bound"]:
        bound = float(f[2])
    elif f[:3] == ["owner", "path", "bound"]:
        path = float(f[3])
    elif f:
        rows[f[0]] = (float(f[2]), int(f[3]), float(f[1]))
names = ["naive", "sequential", "rounds", "rounds+prefetch1", "rounds+prefetch2"]
ratios = [rows[n][0] for n in names]
# The estimate itself, not its ratio rounded to 3 digits times the bound.
pref1 = rows["rounds+prefetch1"][2]
print("%-5s %5s %-8s %12.2f %10.2f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %6d %6d %8.3f %10.2f %8.3f %8d %8d %8.3f" % (
    sys.argv[2], sys.argv[3], sys.argv[4], bound / 1e3, pref1 / 1e3,
    *ratios, min(ratios[2:]), rows["rounds"][1], rows["rounds-unbatched"][1],
    rows["rounds-unbatched"][0], path / 1e3, pref1 / path,
    stk_rounds, stk["rounds"][1], stk["rounds+prefetch1"][0]))
PY
    done
  done
done
