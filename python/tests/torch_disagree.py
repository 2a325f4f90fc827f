"""Ranks that disagree about a step (run under mpirun, 2 ranks, with
torch.distributed on gloo): another shape on one rank, a gradient on one
rank only, another lr, an error on one rank only, a second parameter group
on one rank only. Every rank must raise
(no rank may hang in a collective or run with wrong sizes); prints one
line per case and rank, and "done" when every case raised everywhere."""
import os
import sys

import torch
import torch.distributed as dist

from muon._ir import MuonError
from muon.optim import Muon


def case(name, shape, grad=True, lr=0.02, sparse=False, groups=1):
    torch.manual_seed(1)
    w = torch.nn.Parameter(torch.randn(*shape))
    extra = [torch.nn.Parameter(torch.randn(5, 6)) for _ in range(groups - 1)]
    for e in extra:
        e.grad = torch.randn(5, 6)
    opt = Muon([{"params": [w]}] + [{"params": [e]} for e in extra], lr=lr)
    if grad:
        w.grad = torch.randn(*shape)
        if sparse:
            w.grad = w.grad.to_sparse()
    try:
        opt.step()
    except (MuonError, RuntimeError) as e:
        print(f"{name} rank {rank}: {type(e).__name__}: {e}", flush=True)
        return True
    print(f"{name} rank {rank}: stepped", flush=True)
    return False


os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
dist.init_process_group("gloo", rank=rank, world_size=world)
raised = [
    case("shape", (6, 4) if rank == 0 else (60, 40)),
    case("gradient", (6, 4), grad=rank == 0),
    case("lr", (6, 4), lr=0.02 if rank == 0 else 0.03),
    case("error", (6, 4), sparse=rank == 1),
    case("groups", (6, 4), groups=1 if rank == 0 else 2),
]
# The same step on every rank still runs after the refusals.
torch.manual_seed(1)
w = torch.nn.Parameter(torch.randn(6, 4))
w.grad = torch.randn(6, 4)
Muon([w], lr=0.02).step()
dist.destroy_process_group()
if all(raised):
    print(f"rank {rank} done", flush=True)
sys.exit(0)
