#!/usr/bin/env python3
"""Writes a module whose @check redistributes N random layout pairs.

    random_redistribute.py --mesh dp=2,tp=2 --pairs 100 --seed 1

Each pair is a tensor of a random shape (2-D or 3-D, dims 1 to 13) with two
random layouts on the mesh: per axis shard<d>, replicate, reduced or partial
(sum/avg in the source; in the target sum/avg, max or min, one
kind per layout, since other mixes do not commute), a random nesting
order where several axes shard one dim, and random storage on the
replicated axes (dim or 2-D block, weighted or not, flat group member,
whole tensor). muon-redistribute-check runs them on data. With
--zero-dim one dim of every shape is 0 (tensors without elements); with
--low-rank the tensors are scalars and vectors (rank 0 or 1).
"""
import argparse
import random


def parse_mesh(text):
    return [(n.strip(), int(s)) for n, s in (p.split("=") for p in text.split(","))]


def random_layout(rng, axes, rank, source, flat_groups, shape):
    names = [a for a, _ in axes]
    placements = []
    # A layout's partial reductions commute: all sum or avg, all max, or
    # all min.
    kinds = (["sum", "avg"] if source else
             rng.choice([["sum", "avg"], ["max"], ["min"]]))
    for _ in names:
        r = rng.random()
        if r < 0.35 and rank > 0:
            placements.append(f"shard<{rng.randrange(rank)}>")
        elif r < 0.55:
            placements.append("replicate")
        elif r < 0.7:
            placements.append("reduced")
        else:
            placements.append(f"partial<{rng.choice(kinds)}>")
    text = "[" + ", ".join(placements) + "]"
    # Nesting order: a random permutation where several axes shard one dim.
    orders = []
    for d in range(rank):
        sharding = [names[i] for i, p in enumerate(placements) if p == f"shard<{d}>"]
        if len(sharding) > 1 and rng.random() < 0.5:
            rng.shuffle(sharding)
            orders.append(f"{d} = [{', '.join(sharding)}]")
    if orders:
        text += ", order = {" + ", ".join(orders) + "}"
    free = [i for i, p in enumerate(placements) if p in ("replicate", "reduced")]
    sizes = dict(axes)

    def weights(axis):
        if rng.random() < 0.5:
            return ""
        return " weights [" + ", ".join(str(rng.randint(1, 4)) for _ in range(sizes[axis])) + "]"

    r = rng.random()
    if free and rank > 0 and r < 0.2:
        a = names[rng.choice(free)]
        text += f", storage = dim<{rng.randrange(rank)} on {a}{weights(a)}>"
    elif len(free) >= 2 and rank >= 2 and r < 0.35:
        a, b = rng.sample(free, 2)
        d0, d1 = rng.sample(range(rank), 2)
        text += (f", storage = block<{d0} on {names[a]}{weights(names[a])}, "
                 f"{d1} on {names[b]}{weights(names[b])}>")
    elif (free and r < 0.45 and 0 not in shape
          and not any(p.startswith("shard") for p in placements)):
        # A flat group member (never empty): the compute block is the
        # whole tensor.
        a = names[rng.choice(free)]
        numel = 1
        for s in shape:
            numel *= s
        g = f"@g{len(flat_groups)}"
        before, after = rng.randint(0, 20), rng.randint(0, 20)
        members = [x for x in (before, numel, after) if x > 0]
        member = 1 if before > 0 else 0
        w = weights(a)
        flat_groups.append(f"dist.flat_group {g} on @m[{a}] numel [{', '.join(map(str, members))}]{w}")
        text += f", storage = flat<{g}, {member}>"
    elif free and rank > 0 and r < 0.55:
        a = names[rng.choice(free)]
        text += f", storage = whole<on {a} owner {rng.randrange(sizes[a])}>"
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mesh", required=True)
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--zero-dim", action="store_true")
    ap.add_argument("--low-rank", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    axes = parse_mesh(a.mesh)
    groups, args, results, body = [], [], [], []
    for i in range(a.pairs):
        rank = rng.choice([0, 1] if a.low_rank else [2, 2, 2, 3])
        shape = [rng.randint(1, 13) for _ in range(rank)]
        if a.zero_dim and rank > 0:
            shape[rng.randrange(rank)] = 0
        src = random_layout(rng, axes, rank, True, groups, shape)
        dst = random_layout(rng, axes, rank, False, groups, shape)
        dims = "".join(f"{d}x" for d in shape)
        ta = f"!dist.tensor<{dims}f32, @m, {src}>"
        tb = f"!dist.tensor<{dims}f32, @m, {dst}>"
        args.append(f"%x{i}: {ta}")
        results.append(tb)
        body.append(f"  %r{i} = dist.redistribute %x{i} : {ta} -> {tb}")
    print("dist.mesh @m [" + ", ".join(f"{n} = {s}" for n, s in axes) + "]")
    print("\n".join(groups))
    print(f"func.func @check({', '.join(args)}) -> ({', '.join(results)}) {{")
    print("\n".join(body))
    print("  return " + ", ".join(f"%r{i}" for i in range(a.pairs)) + " : " +
          ", ".join(results))
    print("}")


if __name__ == "__main__":
    main()
