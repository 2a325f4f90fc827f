#!/usr/bin/env python3
"""Checks muon-run's table against its --dump: each parameter's printed
max|dP| and max|dM| must be the largest difference over every element of
the last step's result and reference (to the 3 digits printed), also when
the check failed.

    check_reported_errors.py OUTPUT DUMP_DIR LAST_STEP"""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_dump import load  # noqa: E402

out, d, t = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [r for r in map(str.split, open(out))
        if len(r) == 7 and r[6] in ("ok", "MISMATCH")]
assert rows, "no parameter rows in " + out
for i, row in enumerate(rows):
    name = re.sub(r"[^A-Za-z0-9._-]", "_", row[0])
    prefix = f"{d}/p{i:03d}.{name}"
    for col, what in ((2, "param"), (4, "momentum")):
        got = load(f"{prefix}.{what}_step{t}.npy")[1]
        want = load(f"{prefix}.ref_{what}_step{t}.npy")[1]
        worst = max((abs(a - b) for a, b in zip(got, want)), default=0.0)
        printed = float(row[col])
        assert abs(printed - worst) <= 5e-3 * worst + 1e-12, (
            f"{row[0]}: printed max|d{what[0].upper()}| {printed:.3e}, "
            f"the dump's is {worst:.3e}")
print(f"reported errors: {len(rows)} parameters: ok")
