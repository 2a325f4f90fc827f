"""One rank of the process-group form check (test_torch.py): plain-tensor
parameters holding FSDP x TP shards (dp outer on dim 0, TP on each
parameter's tp dim) of known global tensors, 3 steps of muon.optim.Muon
with create_auto_config, then the reassembled parameters against the
float64 reference on rank 0. Prints "max error E".

    mpirun -np 4 python torch_groups.py
"""
import math
import os

import numpy as np
import torch
import torch.distributed as dist

from muon.optim import Muon, create_auto_config
from muon.reference import muon_step

SHAPES = [(22, 12), (12, 22), (9, 6)]
TP_DIMS = {0: 0, 1: 1, 2: 0}
HYPER = dict(lr=0.05, weight_decay=0.1)


def chunk(length, parts, i):
    c = math.ceil(length / parts)
    return slice(min(length, i * c), min(length, (i + 1) * c))


def local(full, dim, f, t, fsdp, tp):
    """FSDP outer on dim 0, then TP on `dim` (inner when dim == 0)."""
    x = full[chunk(full.shape[0], fsdp, f)]
    idx = [slice(None)] * full.ndim
    idx[dim] = chunk(x.shape[dim], tp, t)
    return x[tuple(idx)]


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    fsdp, tp = 2, 2
    f, t = rank // tp, rank % tp
    tp_groups = [dist.new_group([a * tp + b for b in range(tp)])
                 for a in range(fsdp)]
    fsdp_groups = [dist.new_group([a * tp + b for a in range(fsdp)])
                   for b in range(tp)]
    rng = np.random.default_rng(7)
    full = [rng.uniform(-1, 1, s) for s in SHAPES]
    params = [torch.nn.Parameter(torch.tensor(
        local(full[i], TP_DIMS[i], f, t, fsdp, tp), dtype=torch.float32))
        for i in range(len(SHAPES))]
    config = create_auto_config(fsdp_process_group=fsdp_groups[t],
                                tp_process_group=tp_groups[f],
                                tp_dim_per_param=TP_DIMS)
    opt = Muon(params, distributed_config=config, **HYPER)
    refs = [(p.copy(), np.zeros(p.shape)) for p in full]
    for step in range(3):
        grads = [np.random.default_rng(100 + step).uniform(-1, 1, s)
                 for s in SHAPES]
        for i, p in enumerate(params):
            p.grad = torch.tensor(local(grads[i], TP_DIMS[i], f, t, fsdp, tp),
                                  dtype=torch.float32)
            refs[i] = muon_step(refs[i][0], grads[i], refs[i][1], **HYPER)
        opt.step()
    pieces = [None] * world
    dist.all_gather_object(pieces, [p.detach().numpy() for p in params])
    if rank == 0:
        worst = 0.0
        for i, s in enumerate(SHAPES):
            got = np.full(s, np.nan)
            for r in range(world):
                view = local(got, TP_DIMS[i], r // tp, r % tp, fsdp, tp)
                view[...] = pieces[r][i]
            worst = max(worst, float(np.abs(got - refs[i][0]).max()))
        print(f"max error {worst:.3e}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
