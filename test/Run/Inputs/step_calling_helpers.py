"""Writes square_step.py's step (N SIZE x SIZE matrices on dp = RANKS) whose
entry also calls two helpers: @repeat, whose loop carries a tensor through
a call (a structure muon-place-deallocations leaves to MLIR's pipeline),
and @plain, which it takes; @repeat calls @plain in its loop, so buffers
cross between the two kinds of function in both directions.

    python3 step_calling_helpers.py N SIZE RANKS
"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
step = subprocess.run([sys.executable, os.path.join(here, "square_step.py")] +
                      sys.argv[1:4], check=True, capture_output=True,
                      text=True).stdout.splitlines()
t = "tensor<65536xf32>"
calls = [f"  %z = arith.constant dense<1.0> : {t}",
         "  %c3 = arith.constant 3 : index",
         f"  %q = call @repeat(%z, %c3) : ({t}, index) -> {t}",
         f"  %q2 = call @plain(%q) : ({t}) -> {t}"]
ret = next(i for i, line in enumerate(step) if line.startswith("  return"))
print("\n".join(step[:ret] + calls + step[ret:]))
print(f"""
func.func @repeat(%x: {t}, %n: index) -> {t} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> {t} {{
    %s = func.call @plain(%t) : ({t}) -> {t}
    scf.yield %s : {t}
  }}
  return %r : {t}
}}
func.func @plain(%x: {t}) -> {t} {{
  %s = dist.all_reduce %x on @m axes [dp] reduce sum : {t} -> {t}
  %s2 = dist.all_reduce %s on @m axes [dp] reduce sum : {t} -> {t}
  return %s2 : {t}
}}""")
