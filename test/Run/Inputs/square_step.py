"""Writes a muon.step over N square SIZE x SIZE matrices, FSDP on
[dp = RANKS] (shard<0>), the entry returning the step's results.

    python3 square_step.py N SIZE RANKS
"""
import sys

n, size, ranks = (int(a) for a in sys.argv[1:4])
t = f"!dist.tensor<{size}x{size}xf32, @m, [shard<0>]>"
print(f"dist.mesh @m [dp = {ranks}]")
args = ", ".join(f"%{k}{i}: {t}" for k in "pgm" for i in range(n))
print(f"func.func @step({args}) -> ({', '.join([t] * 2 * n)}) {{")
tys = ", ".join([t] * n)
ops = lambda k: ", ".join(f"%{k}{i}" for i in range(n))
print(f"  %r:{2 * n} = muon.step params({ops('p')} : {tys}) "
      f"grads({ops('g')} : {tys}) momenta({ops('m')} : {tys}) "
      "{lr = 0.02 : f64}")
print("  return " + ", ".join(f"%r#{i}" for i in range(2 * n)) + " : " +
      ", ".join([t] * 2 * n))
print("}")
