"""Writes a muon.step over N SIZE x SIZE matrices stored in one flat group
over dp (FSDP1's flat parameter) on [dp = DP, tp = TP], replicated over
tp, with gradients partial over dp; the entry returns the step's results.

    python3 flat_step.py N SIZE DP TP
"""
import sys

n, size, dp, tp = (int(a) for a in sys.argv[1:5])
print(f"dist.mesh @m [dp = {dp}, tp = {tp}]")
print("dist.flat_group @g on @m[dp] numel [" +
      ", ".join([str(size * size)] * n) + "]")
params = [f"!dist.tensor<{size}x{size}xf32, @m, [replicate, replicate], "
          f"storage = flat<@g, {i}>>" for i in range(n)]
grad = f"!dist.tensor<{size}x{size}xf32, @m, [partial<sum>, replicate]>"
types = {"p": params, "g": [grad] * n, "m": params}
args = ", ".join(f"%{k}{i}: {types[k][i]}" for k in "pgm" for i in range(n))
print(f"func.func @step({args}) -> ({', '.join(params * 2)}) {{")
ops = lambda k: ", ".join(f"%{k}{i}" for i in range(n))
tys = lambda k: ", ".join(types[k])
print(f"  %r:{2 * n} = muon.step params({ops('p')} : {tys('p')}) "
      f"grads({ops('g')} : {tys('g')}) momenta({ops('m')} : {tys('m')}) "
      "{lr = 0.02 : f64}")
print("  return " + ", ".join(f"%r#{i}" for i in range(2 * n)) + " : " +
      ", ".join(params * 2))
print("}")
