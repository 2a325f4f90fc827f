#!/usr/bin/env python3
"""Prints a muon.step over a Llama-7B-like parameter list: 32 layers of
q/k/v/o (4096x4096) and gate/up (11008x4096), down (4096x11008), FSDP over
8 ranks, for the balanced-assignment test."""
import sys

layers = int(sys.argv[1]) if len(sys.argv) > 1 else 32
shapes = [("attn.q", "4096x4096"), ("attn.k", "4096x4096"),
          ("attn.v", "4096x4096"), ("attn.o", "4096x4096"),
          ("mlp.gate", "11008x4096"), ("mlp.up", "11008x4096"),
          ("mlp.down", "4096x11008")]
params = [(f"layers.{l}.{n}", s) for l in range(layers) for n, s in shapes]
types = {s: f"!dist.tensor<{s}xf32, @m, [shard<0>]>" for _, s in shapes}
print("dist.mesh @m [dp = 8]")
args = []
for kind in ("p", "g", "m"):
    for i, (_, s) in enumerate(params):
        args.append(f"%{kind}{i}: {types[s]}")
print(f"func.func @llama({', '.join(args)}) {{")
def group(kind):
    names = ", ".join(f"%{kind}{i}" for i in range(len(params)))
    tys = ", ".join(types[s] for _, s in params)
    return f"{names} : {tys}"
info = ", ".join(f'#muon.param<"{n}">' for n, _ in params)
print(f"  %r:{2 * len(params)} = muon.step params({group('p')}) "
      f"grads({group('g')}) momenta({group('m')}) "
      f"{{lr = 0.02 : f64, strategy = #muon.strategy<balanced>, "
      f"param_info = [{info}]}}")
print("  return\n}")
