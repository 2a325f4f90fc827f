#!/usr/bin/env python3
"""Compares the distributed results of two muon-run --dump directories byte
for byte: every parameter's and momentum's tensor after every step. Two
schedules with the same owners and the same Newton-Schulz kernel do the same
arithmetic in the same order per parameter, so their results must be
bitwise equal. Prints one line per parameter and a total."""
import glob, os, sys

a, b = sys.argv[1], sys.argv[2]
files = sorted(os.path.basename(p) for p in glob.glob(f"{a}/*.npy")
               if ".param_step" in p or ".momentum_step" in p)
assert files, "no dumps in " + a
params = {}
for f in files:
    with open(os.path.join(a, f), "rb") as x, open(os.path.join(b, f), "rb") as y:
        same = x.read() == y.read()
    name = f.rsplit(".", 2)[0]
    params[name] = params.get(name, True) and same
for name, same in params.items():
    print(f"{name} {'bitwise equal' if same else 'DIFFERENT'}")
print(f"{sum(params.values())} of {len(params)} parameters bitwise equal "
      f"({len(files)} tensors)")
