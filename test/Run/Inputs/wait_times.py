"""Checks muon-run's processor-time and waiting lines against each other
and against the run: on every rank the polling in waits is part of the
step's processor time, and a rank other than 0 waits in every step after
the first for at least half of rank 0's reference step (rank 0 computes
the reference between steps while the others are already in the next
one). Prints one line per rank and 'waits ok' or exits with the reason.

    python3 wait_times.py MUON-RUN-OUTPUT.txt
"""
import re
import sys

text = open(sys.argv[1]).read()
cpu = re.search(r"processor time per rank \(s/step after the first; all, and "
                r"polling in waits\):(.*)", text)
wait = re.search(r"waiting for collectives per rank \(wall s/step after the "
                 r"first\):(.*)", text)
ref = re.search(r"reference ([0-9.]+) s/step", text)
if not (cpu and wait and ref):
    sys.exit("missing processor-time, waiting or reference line")
pairs = [tuple(map(float, v.split("/")))
         for v in re.findall(r"r\d+=([0-9.]+/[0-9.]+)", cpu.group(1))]
waits = [float(v) for v in re.findall(r"r\d+=([0-9.]+)", wait.group(1))]
reference = float(ref.group(1))
if len(pairs) != len(waits) or len(waits) < 2:
    sys.exit(f"{len(pairs)} processor-time and {len(waits)} waiting figures")
for r, ((total, polling), waited) in enumerate(zip(pairs, waits)):
    print(f"rank {r}: processor {total:.4f} s, polling {polling:.4f} s, "
          f"waiting {waited:.4f} s")
    # Figures are printed to 1e-4 s.
    if polling > total + 1e-4:
        sys.exit(f"rank {r}: polling {polling} s exceeds the step's {total} s")
    if r > 0 and waited < 0.5 * reference:
        sys.exit(f"rank {r}: waited {waited} s, under half of rank 0's "
                 f"reference step ({reference} s)")
print("waits ok")
