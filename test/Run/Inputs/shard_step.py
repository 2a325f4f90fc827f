#!/usr/bin/env python3
"""A Muon step on a 2x2 grid written twice: with MLIR `shard` annotations
(`--form shard`, plain tensors and a global-view muon.step) and by hand in
dist types (`--form dist`). Each row gives a parameter's shard sharding and
the dist layout it must import to, written independently of the import."""
import sys

# name, shape, shard sharding (split_axes [+ offsets] [+ for_users]), dist layout
PARAMS = [
    ("fsdp", "16x8", "split_axes = [[0]]", "[shard<0>, replicate]"),
    ("dp_outer", "16x8", "split_axes = [[0, 1]]", "[shard<0>, shard<0>]"),
    ("tp_outer", "16x8", "split_axes = [[1, 0]]",
     "[shard<0>, shard<0>], order = {0 = [tp, dp]}"),
    ("two_dims", "12x8", "split_axes = [[1], [0]]", "[shard<1>, shard<0>]"),
    ("replicated", "8x12", "split_axes = [[]]", "[replicate, replicate]"),
    # 10 rows, dp halves of 5 split 3 + 2 by tp: the chunk rule's offsets.
    ("uneven", "10x6", "split_axes = [[0, 1]] sharded_dims_offsets = [0, 3, 5, 8, 10]",
     "[shard<0>, shard<0>]"),
    ("experts", "2x8x6", "split_axes = [[0], [], [1]]", "[shard<0>, shard<2>]"),
    # Annotated only for their users: the argument takes that sharding.
    ("for_users", "8x8", "split_axes = [[], [1]]|users", "[replicate, shard<1>]"),
]


def shard_form():
    out = ['shard.grid @grid(shape = 2x2) {dist.axis_names = ["dp", "tp"]}']
    args, body, vals = [], [], {"p": [], "g": [], "m": []}
    for i, (name, shape, sharding, _) in enumerate(PARAMS):
        split, _, users = sharding.partition("|")
        body.append(f"  %s{i} = shard.sharding @grid {split} : !shard.sharding")
        for kind in "pgm":
            args.append(f"%{kind}{i}: tensor<{shape}xf32>")
            suffix = " annotate_for_users" if users else ""
            body.append(f"  %{kind}{i}_a = shard.shard %{kind}{i} to %s{i}{suffix}"
                        f" : tensor<{shape}xf32>")
            vals[kind].append((f"%{kind}{i}_a", f"tensor<{shape}xf32>"))
    return out, args, body, vals


def dist_form():
    out = ["dist.mesh @grid [dp = 2, tp = 2]"]
    args, vals = [], {"p": [], "g": [], "m": []}
    for i, (name, shape, _, layout) in enumerate(PARAMS):
        t = f"!dist.tensor<{shape}xf32, @grid, {layout}>"
        for kind in "pgm":
            args.append(f"%{kind}{i}: {t}")
            vals[kind].append((f"%{kind}{i}", t))
    return out, args, [], vals


form = sys.argv[sys.argv.index("--form") + 1]
out, args, body, vals = shard_form() if form == "shard" else dist_form()
n = len(PARAMS)
types = [t for _, t in vals["p"]] + [t for _, t in vals["m"]]
out.append(f"func.func @step({', '.join(args)}) -> ({', '.join(types)}) {{")
out += body
names = ", ".join(f'#muon.param<"{p[0]}">' for p in PARAMS)
ops = lambda k: ", ".join(v for v, _ in vals[k]) + " : " + ", ".join(t for _, t in vals[k])
out.append(f"  %r:{2 * n} = muon.step params({ops('p')}) grads({ops('g')}) "
           f"momenta({ops('m')}) {{lr = 0.02 : f64, weight_decay = 0.01 : f64, "
           f"param_info = [{names}]}}")
out.append("  return " + ", ".join(f"%r#{i}" for i in range(2 * n)) + " : " +
           ", ".join(types))
out.append("}")
print("\n".join(out))
