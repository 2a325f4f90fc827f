#!/usr/bin/env python3
"""Writes a muon.step over the matrices of a Llama-3 model (per layer: q, k,
v, o, gate, up, down; embeddings and the output head are left to another
optimizer, as Muon users do) on a mesh of RANKS ranks with one layout:

  fsdp     [dp = RANKS], every matrix shard<0>
  fsdp_tp  [dp = RANKS/8, tp = 8]: column-parallel q, k, v, gate, up are
           [shard<0>, shard<0>], row-parallel o, down [shard<0>, shard<1>]
  hsdp     [rep = RANKS/8, dp = 8], every matrix [replicate, shard<0>]
  3d       [dp = RANKS/(4 tp), fsdp = 4, tp = min(8, RANKS/4)]: replicas over
           dp, FSDP over fsdp, column/row-parallel over tp

    python3 bench/llama3_step.py {8b,70b,405b} RANKS {fsdp,fsdp_tp,hsdp,3d}
                                 [--returns]

--returns makes the entry return the step's results (what a compiled step
does; without it the results are dead, which is enough for the report but
lets the lowering drop the step).
"""
import sys

MODELS = {  # hidden, ffn, layers, kv width (8 KV heads of 128)
    "8b": (4096, 14336, 32, 1024),
    "70b": (8192, 28672, 80, 1024),
    "405b": (16384, 53248, 126, 1024),
}


def main():
    model, ranks, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    h, f, layers, kv = MODELS[model]
    if kind == "fsdp":
        mesh = f"[dp = {ranks}]"
        col = row = "[shard<0>]"
    elif kind == "fsdp_tp":
        assert ranks % 8 == 0
        mesh = f"[dp = {ranks // 8}, tp = 8]"
        col, row = "[shard<0>, shard<0>]", "[shard<0>, shard<1>]"
    elif kind == "hsdp":
        assert ranks % 8 == 0
        mesh = f"[rep = {ranks // 8}, dp = 8]"
        col = row = "[replicate, shard<0>]"
    elif kind == "3d":
        tp = min(8, ranks // 4)
        assert ranks % (4 * tp) == 0 and tp >= 1
        mesh = f"[dp = {ranks // (4 * tp)}, fsdp = 4, tp = {tp}]"
        col = "[replicate, shard<0>, shard<0>]"
        row = "[replicate, shard<0>, shard<1>]"
    else:
        raise SystemExit("unknown layout " + kind)
    mats = []
    for l in range(layers):
        for name, shape, lay in [("q", (h, h), col), ("k", (kv, h), col),
                                 ("v", (kv, h), col), ("o", (h, h), row),
                                 ("gate", (f, h), col), ("up", (f, h), col),
                                 ("down", (h, f), row)]:
            mats.append((f"layers.{l}.{name}", shape, lay))
    types = {}
    for _, shape, lay in mats:
        types.setdefault((shape, lay), f"!t{len(types)}")
    print(f"dist.mesh @m {mesh}")
    for (shape, lay), alias in types.items():
        print(f"{alias} = !dist.tensor<{shape[0]}x{shape[1]}xf32, @m, {lay}>")
    tys = [types[(s, l)] for _, s, l in mats]
    n = len(mats)
    args = ", ".join(f"%{k}{i}: {t}" for k in "pgm" for i, t in enumerate(tys))
    returns = "--returns" in sys.argv[4:]
    results = f" -> ({', '.join(tys + tys)})" if returns else ""
    print(f"func.func @step({args}){results} {{")
    ops = lambda k: ", ".join(f"%{k}{i}" for i in range(n))
    print(f"  %r:{2 * n} = muon.step params({ops('p')} : {', '.join(tys)})")
    print(f"      grads({ops('g')} : {', '.join(tys)})")
    print(f"      momenta({ops('m')} : {', '.join(tys)})")
    names = ", ".join(f'#muon.param<"{name}">' for name, _, _ in mats)
    print(f"      {{lr = 0.02 : f64, strategy = #muon.strategy<balanced>, "
          f"param_info = [{names}]}}")
    if returns:
        print("  return " + ", ".join(f"%r#{i}" for i in range(2 * n)) +
              " : " + ", ".join(tys + tys))
    else:
        print("  return")
    print("}")


if __name__ == "__main__":
    main()
