"""Writes a muon.step over matrices of the given shapes, each
[replicate, shard<0>] on [rep = REP, dp = DP] (HSDP: every replica holds
the whole model, sharded over dp), the entry returning the step's results.

    python3 replica_step.py REP DP ROWSxCOLS...
"""
import sys

rep, dp = int(sys.argv[1]), int(sys.argv[2])
shapes = sys.argv[3:]
ty = [f"!dist.tensor<{s}xf32, @m, [replicate, shard<0>]>" for s in shapes]
print(f"dist.mesh @m [rep = {rep}, dp = {dp}]")
args = ", ".join(f"%{k}{i}: {t}" for k in "pgm" for i, t in enumerate(ty))
print(f"func.func @step({args}) -> ({', '.join(ty * 2)}) {{")
tys = ", ".join(ty)
ops = lambda k: ", ".join(f"%{k}{i}" for i in range(len(ty)))
print(f"  %r:{2 * len(ty)} = muon.step params({ops('p')} : {tys}) "
      f"grads({ops('g')} : {tys}) momenta({ops('m')} : {tys}) "
      "{lr = 0.02 : f64}")
print("  return " + ", ".join(f"%r#{i}" for i in range(2 * len(ty))) + " : " +
      ", ".join(ty * 2))
print("}")
