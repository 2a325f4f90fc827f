"""The model of the PyTorch frontend tests: a small Llama-like block stack
with uneven shapes and an expert stack, its data, and how it is
parallelised (FSDP2 over TP on a dp x tp mesh, or FSDP2 alone)."""
import os

import torch

DIM, FFN, EXPERTS, BATCH = 12, 22, 3, 8


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(DIM, DIM, bias=False)
        self.o = torch.nn.Linear(DIM, DIM, bias=False)
        self.up = torch.nn.Linear(DIM, FFN, bias=False)
        self.down = torch.nn.Linear(FFN, DIM, bias=False)
        # A mixture of experts' weights as one stacked parameter.
        self.experts = torch.nn.Parameter(
            torch.randn(EXPERTS, DIM, DIM) / DIM ** 0.5)

    def forward(self, x):
        x = x + self.o(torch.tanh(self.q(x)))
        x = x + self.down(torch.relu(self.up(x)))
        return x + torch.einsum("bd,eod->beo", x, self.experts).mean(1)


class Model(torch.nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        torch.manual_seed(0)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(layers))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def batch(step):
    g = torch.Generator().manual_seed(1000 + step)
    return torch.randn(BATCH, DIM, generator=g)


def loss_of(model, x):
    return model(x).pow(2).mean()


def init_distributed():
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    return rank, world


def parallelise_hsdp(model, rep, dp):
    """FSDP2's HSDP: replicas over `rep`, FSDP over `dp`; every rank is a
    data-parallel rank. Returns (model, mesh, this rank's data index, the
    data-parallel degree)."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    mesh = init_device_mesh("cpu", (rep, dp), mesh_dim_names=("rep", "dp"))
    fully_shard(model, mesh=mesh)
    r, d = mesh.get_coordinate()
    return model, mesh, r * dp + d, rep * dp


def parallelise(model, mesh_shape):
    """FSDP2 over TP on (dp, tp) = mesh_shape, or FSDP2 alone when tp = 1.
    Returns (model, mesh, this rank's dp coordinate, dp size)."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   RowwiseParallel,
                                                   parallelize_module)
    dp, tp = mesh_shape
    if tp > 1:
        mesh = init_device_mesh("cpu", (dp, tp), mesh_dim_names=("dp", "tp"))
        for b in model.blocks:
            parallelize_module(b, mesh["tp"], {
                "q": ColwiseParallel(), "o": RowwiseParallel(),
                "up": ColwiseParallel(), "down": RowwiseParallel()})
        fully_shard(model, mesh=mesh["dp"])
        coord = mesh.get_coordinate()[0]
    else:
        mesh = init_device_mesh("cpu", (dp,), mesh_dim_names=("dp",))
        fully_shard(model, mesh=mesh)
        coord = mesh.get_coordinate()[0]
    return model, mesh, coord, dp


def local_batch(step, coord, dp):
    x = batch(step)
    per = BATCH // dp
    return x[coord * per:(coord + 1) * per]
