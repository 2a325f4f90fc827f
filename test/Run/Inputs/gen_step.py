#!/usr/bin/env python3
"""Writes a muon.step module covering every layout a mesh can express.

    gen_step.py --mesh dp=2,tp=2 [--nesterov false] [--lr-adjust match_rms_adamw|spectral_unclamped]
                [--polar | --polar-safe] [--sum] [--only NAME,...] [--big]

Meshes: one axis (dp), two (dp, tp) or three (dp, fsdp, tp). Each parameter
is named after its layout (fsdp, tp_row, hsdp, ...) so muon-run's per-
parameter report says which layout failed. Shapes mix tall (the transpose
path), wide, uneven (7x5, 10 rows over 4, a 3x2 matrix smaller than the
rank count) and, with --big, 1000x999.
"""
import argparse


def parse_mesh(text):
    axes = []
    for part in text.split(","):
        name, size = part.split("=")
        axes.append((name.strip(), int(size)))
    return axes


def params_for(axes, big):
    names = [a for a, _ in axes]
    size = dict(axes)
    n = len(axes)
    rep = ["replicate"] * n

    def pl(**by_axis):
        return "[" + ", ".join(by_axis.get(a, "replicate") for a in names) + "]"

    ps = []  # (name, shape, param layout, grad layout, info)

    def add(name, shape, p, g=None, info=""):
        ps.append((name, shape, p, g or p, info))

    dp = names[0]
    add("fsdp.tall", [64, 24], pl(**{dp: "shard<0>"}))
    add("fsdp.wide", [24, 40], pl(**{dp: "shard<0>"}))
    # Weights are (out_features, in_features), as PyTorch's nn.Linear:
    # column-parallel TP shards the output features (dim 0), row-parallel
    # the input features (dim 1).
    add("tp_row", [24, 48], pl(**{names[-1]: "shard<1>"}))
    add("tp_col", [48, 24], pl(**{names[-1]: "shard<0>"}))
    add("ddp", [32, 16], pl(**{a: "reduced" for a in names}),
        pl(**{a: "partial<avg>" for a in names}))
    add("cp", [16, 32], pl(**{dp: "shard<0>"}),
        pl(**{dp: "shard<0>", **{a: "partial<sum>" for a in names[1:]}}))
    add("storage.dim", [40, 16], pl() + f", storage = dim<0 on {dp}>")
    w = ", ".join(str(i % 3 + 1) for i in range(size[dp]))
    add("storage.weighted", [36, 16],
        pl() + f", storage = dim<0 on {dp} weights [{w}]>")
    add("storage.flat0", [12, 20], pl() + ", storage = flat<@group, 0>")
    add("storage.flat1", [6, 10], pl() + ", storage = flat<@group, 1>")
    add("storage.whole", [20, 12],
        pl() + f", storage = whole<on {dp} owner {size[dp] - 1}>")
    add("uneven.rows", [10, 6], pl(**{dp: "shard<0>"}))
    add("tiny", [3, 2], pl(**{a: f"shard<{i % 2}>" for i, a in enumerate(names)}))
    add("ep.stack", [2 * size[dp], 12, 8], pl(**{dp: "shard<0>", **(
        {names[1]: "shard<1>"} if n > 1 else {})}))
    add("ep.expert", [16, 16], pl(**({names[1]: "shard<0>"} if n > 1 else {})),
        info=f'expert = {dp}[{size[dp] - 1}]')
    add("pp.stage", [16, 24], pl(**({names[-1]: "shard<1>"} if n > 1 else {})),
        info=f'stage = {dp}[0]')
    if n >= 2:
        tp = names[-1]
        add("fsdp_tp.default", [48, 32], pl(**{dp: "shard<0>", tp: "shard<0>"}))
        add("fsdp_tp.tp_outer", [48, 32],
            pl(**{dp: "shard<0>", tp: "shard<0>"}) + f", order = {{0 = [{tp}, {dp}]}}")
        add("fsdp_on_tp", [40, 24], pl(**{tp: "shard<0>"}) + f", storage = dim<0 on {dp}>")
        add("two_dims", [40, 24], pl(**{dp: "shard<0>", tp: "shard<1>"}))
        add("hsdp", [32, 32], pl(**{tp: "shard<0>"}),
            pl(**{dp: "partial<avg>", tp: "shard<0>"}))
        add("storage.block", [24, 20], pl() + f", storage = block<0 on {dp}, 1 on {tp}>")
        add("uneven.both", [7, 5], pl(**{dp: "shard<0>", tp: "shard<1>"}))
    if n >= 3:
        add("three_d", [32, 48], pl(**{names[1]: "shard<0>", names[2]: "shard<1>"}),
            pl(**{names[0]: "partial<avg>", names[1]: "shard<0>", names[2]: "shard<1>"}))
    # Added after the layouts above so that their data (streams numbered by
    # parameter) stays what the tests were written against.
    # Reduced weights stored in pieces (FSDP, flat, weighted): the gradient
    # is the cotangent, partial and whole; the step reduce-scatters it.
    add("reduced.fsdp", [20, 12], pl(**{dp: "reduced"}) + f", storage = dim<0 on {dp}>",
        pl(**{dp: "partial<sum>"}))
    add("reduced.weighted", [18, 10],
        pl(**{dp: "reduced"}) + f", storage = dim<1 on {dp} weights [{w}]>",
        pl(**{dp: "partial<avg>"}))
    add("reduced.flat", [6, 4], pl(**{dp: "reduced"}) + ", storage = flat<@group, 2>",
        pl(**{dp: "partial<sum>"}))
    # Newton-Schulz in blocks (split = dim [sizes]): whole heads per dp
    # shard when dp divides them evenly (dp is then independent), else
    # gathered; unequal QKV-like column blocks, each scaled for its shape.
    add("split.heads", [32, 12], pl(**{dp: "shard<0>"}), info="split = 0 [8, 8, 8, 8]")
    add("split.qkv", [16, 24], pl() + f", storage = dim<1 on {dp}>",
        info="split = 1 [12, 6, 6]")
    if n >= 2:
        tp = names[-1]
        # Block storage reduced over its inner axis only, then over both;
        # FSDP storage on an uneven TP shard; HSDP with the shard axis
        # reduce-scattered and the replica axis all-reduced.
        add("reduced.block_inner", [24, 20],
            pl(**{tp: "reduced"}) + f", storage = block<0 on {dp}, 1 on {tp}>",
            pl(**{tp: "partial<sum>"}) + f", storage = dim<0 on {dp}>")
        add("reduced.block_both", [12, 10],
            pl(**{dp: "reduced", tp: "reduced"}) + f", storage = block<1 on {dp}, 0 on {tp}>",
            pl(**{dp: "partial<avg>", tp: "partial<sum>"}))
        add("reduced.on_tp", [7, 9],
            pl(**{dp: "reduced", tp: "shard<0>"}) + f", storage = dim<0 on {dp}>",
            pl(**{dp: "partial<sum>", tp: "shard<0>"}))
        add("split.tp_heads", [24, 16], pl(**{tp: "shard<0>", dp: "shard<1>"}),
            info="split = 0 [6, 6, 6, 6]")
        add("reduced.hsdp", [16, 12],
            pl(**{dp: "reduced", tp: "reduced"}) + f", storage = dim<0 on {tp}>",
            pl(**{dp: "partial<avg>", tp: "partial<sum>"}))
    if big:
        add("big.uneven", [1000, 999], pl(**{dp: "shard<0>"}))
    return ps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mesh", required=True)
    ap.add_argument("--nesterov", default="true")
    ap.add_argument("--lr-adjust", default="original")
    ap.add_argument("--sum", action="store_true")
    ap.add_argument("--polar", action="store_true")
    ap.add_argument("--polar-safe", action="store_true")
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--weight-decay", default="0.01")
    ap.add_argument("--prefetch", type=int, default=None,
                    help="prefetch_count (default: the attribute's default)")
    ap.add_argument("--dynamic-hyper", action="store_true",
                    help="lr and weight_decay as f64 entry arguments read "
                         "by the step (lr(%%lr) weight_decay(%%wd)) instead "
                         "of attributes")
    ap.add_argument("--sequential", action="store_true",
                    help="async_gpu_parallelism = false: one parameter at "
                         "a time instead of rounds")
    a = ap.parse_args()
    axes = parse_mesh(a.mesh)
    ps = params_for(axes, a.big)
    if a.only:
        keep = a.only.split(",")
        ps = [p for p in ps if any(p[0].startswith(k) for k in keep)]
    dp, dps = axes[0]
    out = ["dist.mesh @m [" + ", ".join(f"{n} = {s}" for n, s in axes) + "]"]
    flat = [p for p in ps if "flat<" in p[2]]
    if flat:
        numel = sorted(((p[2].split("flat<@group, ")[1][0], p[1][0] * p[1][1]) for p in flat))
        out.append(f"dist.flat_group @group on @m[{dp}] numel [" +
                   ", ".join(str(x) for _, x in numel) + "]")
    ty = lambda shape, lay: ("!dist.tensor<" + "x".join(map(str, shape)) +
                             f"xf32, @m, {lay}>")
    args, P, G, M = [], [], [], []
    for i, (name, shape, pl, gl, info) in enumerate(ps):
        args += [f"%p{i}: {ty(shape, pl)}", f"%g{i}: {ty(shape, gl)}",
                 f"%m{i}: {ty(shape, pl)}"]
        P.append((f"%p{i}", ty(shape, pl)))
        G.append((f"%g{i}", ty(shape, gl)))
        M.append((f"%m{i}", ty(shape, pl)))
    k = len(ps)
    res = [t for _, t in P] + [t for _, t in M]
    attrs = ([] if a.dynamic_hyper else
             ["lr = 0.02 : f64", f"weight_decay = {a.weight_decay} : f64"])
    attrs += [f"nesterov = {a.nesterov}",
             f"lr_adjust = #muon.lr_adjust<{a.lr_adjust}>",
             "strategy = #muon.strategy<balanced>"]
    if a.sum:
        attrs.append("momentum_form = #muon.momentum_form<sum>")
    if a.sequential:
        attrs.append("async_gpu_parallelism = false")
    if a.prefetch is not None:
        attrs.append(f"prefetch_count = {a.prefetch} : i64")
    if a.polar or a.polar_safe:
        # Polar Express (Amsel et al. 2025), 5 iterations, one triple each.
        coeffs = [8.28721201814563, -23.595886519098837, 17.300387312530933,
                  4.107059111542203, -2.9478499167379106, 0.5448431082926601,
                  3.9486908534822946, -2.908902115962949, 0.5518191394370137,
                  3.3184196573706015, -2.488488024314874, 0.51004894012372,
                  2.300652019954817, -1.6689039845747493, 0.4188073119525673]
        if a.polar_safe:
            # The safety factor its authors apply: every triple but the
            # last as (a/1.01, b/1.01^3, c/1.01^5).
            for i in range(0, len(coeffs) - 3, 3):
                coeffs[i] /= 1.01
                coeffs[i + 1] /= 1.01 ** 3
                coeffs[i + 2] /= 1.01 ** 5
        attrs.append("ns_coeffs = array<f64: " + ", ".join(map(str, coeffs)) + ">")
    infos = []
    for name, _, _, _, info in ps:
        infos.append(f'#muon.param<"{name}"' + (f", {info}" if info else "") + ">")
    attrs.append("param_info = [" + ", ".join(infos) + "]")
    if a.dynamic_hyper:
        args += ["%lr: f64", "%wd: f64"]
    out.append(f"func.func @step({', '.join(args)}) -> ({', '.join(res)}) {{")
    out.append(f"  %r:{2 * k} = muon.step params({', '.join(v for v, _ in P)} : "
               f"{', '.join(t for _, t in P)})")
    out.append(f"      grads({', '.join(v for v, _ in G)} : {', '.join(t for _, t in G)})")
    out.append(f"      momenta({', '.join(v for v, _ in M)} : {', '.join(t for _, t in M)})"
               + (" lr(%lr) weight_decay(%wd)" if a.dynamic_hyper else ""))
    out.append("      {" + ", ".join(attrs) + "}")
    out.append("  return " + ", ".join(f"%r#{j}" for j in range(2 * k)) +
               " : " + ", ".join(res))
    out.append("}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
