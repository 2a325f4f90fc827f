"""Train a small Llama-like model with FSDP2 over tensor parallelism and the
compiled distributed Muon, on CPU processes started by mpirun:

    PYTHONPATH=build/python mpirun -np 4 python3 examples/torch_fsdp_tp.py

(4 ranks: a 2 x 2 mesh, dp x tp; `--oversubscribe` when the machine has
fewer cores, and `--allow-run-as-root` as root.) Matrices (attention and MLP
weights) go to muon.optim.Muon; embeddings and norms go to AdamW, as Muon
users do. The learning rate follows a cosine schedule, which Muon reads at
run time (one compilation for the whole run). After the last step rank 0
prints the loss and saves a checkpoint with torch.distributed.checkpoint
(resumable on another mesh). Copy it and change the model.
"""
import argparse
import math
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn.functional as F
from torch.distributed.checkpoint.state_dict import get_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import (ColwiseParallel,
                                               RowwiseParallel,
                                               parallelize_module)

from muon.optim import Muon


class Block(torch.nn.Module):
    def __init__(self, dim, ffn, heads):
        super().__init__()
        self.head_dim = dim // heads
        self.norm1 = torch.nn.RMSNorm(dim)
        self.q = torch.nn.Linear(dim, dim, bias=False)
        self.k = torch.nn.Linear(dim, dim, bias=False)
        self.v = torch.nn.Linear(dim, dim, bias=False)
        self.o = torch.nn.Linear(dim, dim, bias=False)
        self.norm2 = torch.nn.RMSNorm(dim)
        self.gate = torch.nn.Linear(dim, ffn, bias=False)
        self.up = torch.nn.Linear(dim, ffn, bias=False)
        self.down = torch.nn.Linear(ffn, dim, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.norm1(x)
        # q, k, v are column-parallel: each TP rank holds whole heads of
        # size head_dim, as many as its shard of the features.
        q, k, v = self.q(h), self.k(h), self.v(h)
        q, k, v = (y.reshape(b, t, -1, self.head_dim).transpose(1, 2)
                   for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, -1))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(torch.nn.Module):
    def __init__(self, vocab=256, dim=64, ffn=172, heads=4, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.blocks = torch.nn.ModuleList(
            Block(dim, ffn, heads) for _ in range(layers))
        self.norm = torch.nn.RMSNorm(dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--checkpoint", default="")
    a = ap.parse_args()

    # mpirun's ranks are torch's ranks (the compiled step's runtime uses
    # the same MPI ranks).
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29400")
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    dp, tp = world // a.tp, a.tp
    mesh = init_device_mesh("cpu", (dp, tp), mesh_dim_names=("dp", "tp"))

    torch.manual_seed(0)
    model = Model()
    for b in model.blocks:
        parallelize_module(b, mesh["tp"], {
            "q": ColwiseParallel(), "k": ColwiseParallel(),
            "v": ColwiseParallel(), "o": RowwiseParallel(),
            "gate": ColwiseParallel(), "up": ColwiseParallel(),
            "down": RowwiseParallel()})
    for b in model.blocks:
        fully_shard(b, mesh=mesh["dp"])
    fully_shard(model, mesh=mesh["dp"])

    blocks = [p for b in model.blocks for n, p in b.named_parameters()
              if p.ndim == 2]
    others = [p for p in model.parameters()
              if not any(p is q for q in blocks)]
    muon = Muon(blocks, lr=0.02, weight_decay=0.01)
    adamw = torch.optim.AdamW(others, lr=3e-3)
    schedules = [torch.optim.lr_scheduler.LambdaLR(
        o, lambda s: 0.5 * (1 + math.cos(math.pi * s / a.steps)))
        for o in (muon, adamw)]

    # Each dp coordinate learns its own fixed batch (so the loss falls
    # visibly); put a real data loader here.
    g = torch.Generator().manual_seed(1 + mesh.get_coordinate()[0])
    tokens = torch.randint(0, 256, (4, 33), generator=g)
    for step in range(a.steps):
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 256),
                               tokens[:, 1:].reshape(-1))
        loss.backward()
        for o in (muon, adamw):
            o.step()
            o.zero_grad()
        for s in schedules:
            s.step()
        if rank == 0 and (step % 5 == 0 or step == a.steps - 1):
            print(f"step {step:3d}  loss {loss.item():.4f}  "
                  f"lr {muon.param_groups[0]['lr']:.5f}", flush=True)

    if a.checkpoint:
        msd, osd = get_state_dict(model, muon)
        dcp.save({"model": msd, "muon": osd}, checkpoint_id=a.checkpoint)
        if rank == 0:
            print(f"checkpoint written to {a.checkpoint}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
