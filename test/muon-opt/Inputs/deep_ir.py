#!/usr/bin/env python3
"""Prints IR nested DEPTH levels deep for muon-opt's deep-nesting test:
  attr:   a function whose attribute is DEPTH nested arrays;
  region: DEPTH nested scf.execute_region ops, each yielding the inner one's
          value."""
import sys

kind, depth = sys.argv[1], int(sys.argv[2])
if kind == "attr":
    print("func.func @deep() attributes {a = " + "[" * depth + "]" * depth +
          "} {\n  return\n}")
elif kind == "region":
    lines = ["func.func @deep(%x: f32) -> f32 {"]
    for i in range(depth):
        lines.append(f"%r{i} = scf.execute_region -> f32 {{")
    lines.append("scf.yield %x : f32")
    for i in reversed(range(depth)):
        lines.append(f"}}")
        if i > 0:
            lines.append(f"scf.yield %r{i} : f32")
    lines.append("return %r0 : f32\n}")
    print("\n".join(lines))
else:
    sys.exit(f"unknown kind {kind}")
