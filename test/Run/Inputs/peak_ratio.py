"""Reads the 'step buffers peak per rank (MiB)' line of two muon-run
outputs and prints the largest per-rank peak of each and their ratio.

    python3 peak_ratio.py FIRST.txt SECOND.txt
"""
import re
import sys


def peak(path):
    for line in open(path):
        if line.startswith("step buffers peak per rank"):
            return max(float(v) for v in re.findall(r"r\d+=([0-9.]+)", line))
    sys.exit(f"{path}: no 'step buffers peak' line")


a, b = peak(sys.argv[1]), peak(sys.argv[2])
print(f"peak {a:.3f} MiB vs {b:.3f} MiB: ratio {a / b:.2f}")
