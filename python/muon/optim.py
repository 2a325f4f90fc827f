"""A drop-in distributed Muon for PyTorch: ``muon.optim.Muon``.

    from muon.optim import Muon
    opt = Muon(model.parameters(), lr=0.02, weight_decay=0.01)
    loss.backward(); opt.step(); opt.zero_grad()

The constructor takes torch.optim.Muon's arguments, plus the compiler's
distributed options. Parameters may be DTensors on one DeviceMesh that
spans the job (FSDP2 per-parameter sharding, TP column/row, HSDP, FSDP2
over TP (``_StridedShard``), expert stacks sharded on their leading dim) or
plain tensors (replicated, gradients already reduced, as DDP leaves them).
The optimizer reads the placements, builds one ``muon.step`` per parameter
group, compiles it once (again only when the set of parameters with
gradients or a hyper-parameter changes), and runs it on the local shards
every ``step()``: every matrix is orthogonalised by exactly one owner rank.
lr and weight_decay are read when the step runs, so learning-rate
schedulers (which change ``param_groups[i]["lr"]``) need no recompilation.

One process per rank (``mpirun``, with torch.distributed initialised on
gloo from the same ranks: the runtime's MPI rank must equal torch's). The
momentum buffers are DTensors with the parameters' placements in
``state[p]["momentum_buffer"]``, so ``torch.distributed.checkpoint`` saves
them and loads them onto another mesh. See docs/python.md.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from . import _run
from ._ir import MuonError
from .builder import StepBuilder

__all__ = ["Muon"]


def _dtensor_types():
    from torch.distributed.tensor import DTensor, Partial
    from torch.distributed.tensor.placement_types import _StridedShard
    return DTensor, Partial, _StridedShard


def _is_dtensor(t) -> bool:
    DTensor, _, _ = _dtensor_types()
    return isinstance(t, DTensor)


def _root(mesh):
    """The mesh a sub-mesh (mesh["dp"]) was sliced from, or the mesh."""
    get = getattr(mesh, "_get_root_mesh", None)
    root = get() if get is not None else None
    return root if root is not None else mesh


def _names_of(mesh) -> Tuple[str, ...]:
    return tuple(mesh.mesh_dim_names or
                 (f"d{i}" for i in range(mesh.ndim)))


class _MeshInfo:
    """The job's mesh: axis names and sizes, row-major over world ranks.
    Parameters may live on the root mesh or on sub-meshes sliced from it
    by name (FSDP2 puts parameters that TP leaves alone on mesh["dp"])."""

    def __init__(self, axes: List[Tuple[str, int]], device_mesh=None):
        self.axes = axes
        self.device_mesh = device_mesh

    def axis_of(self, mesh, i: int, what: str) -> int:
        """The root axis of dim i of `mesh` (the root or a sub-mesh)."""
        name = _names_of(mesh)[i]
        for a, (n, _) in enumerate(self.axes):
            if n == name:
                return a
        raise MuonError(f"{what}: mesh dim '{name}' is not a dim of the "
                        f"job's mesh {self.device_mesh}")

    @staticmethod
    def of(params: Sequence[torch.Tensor]) -> "_MeshInfo":
        meshes = [p.device_mesh for p in params if _is_dtensor(p)]
        if not meshes:
            return _MeshInfo([("world", _world_size())])
        first = _root(meshes[0])
        for m in meshes[1:]:
            if _root(m) != first:
                raise MuonError(
                    "All DTensor parameters must use the same device mesh "
                    "(or sub-meshes of it). Found incompatible meshes: "
                    f"{first} vs {m}")
        if any(m != first for m in meshes) and first.mesh_dim_names is None:
            raise MuonError("parameters live on sub-meshes of a mesh "
                            "without dim names; name the mesh's dims")
        shape = tuple(first.mesh.shape)
        ranks = first.mesh.flatten().tolist()
        if ranks != list(range(math.prod(shape))) or \
                math.prod(shape) != _world_size():
            raise MuonError(
                f"the parameters' device mesh {first} must span the job's "
                f"{_world_size()} ranks in row-major order (ranks "
                f"{ranks})")
        if first.device_type != "cpu":
            raise MuonError(
                f"the parameters live on '{first.device_type}'; this "
                "optimizer runs the CPU target (GPU tensors need the cuda "
                "target through torch, not yet available)")
        return _MeshInfo(list(zip(_names_of(first), shape)), first)


def _world_size() -> int:
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return 1


def _layout(t: torch.Tensor, mesh: _MeshInfo, what: str):
    """(placements, order) of a tensor in the builder's terms."""
    if not _is_dtensor(t):
        return ["replicate"] * len(mesh.axes), None
    _, Partial, StridedShard = _dtensor_types()
    placements: List[str] = ["replicate"] * len(mesh.axes)
    strided: Dict[int, int] = {}
    for i, pl in enumerate(t.placements):
        axis = mesh.axis_of(t.device_mesh, i, what)
        if isinstance(pl, StridedShard):
            placements[axis] = f"shard<{pl.dim}>"
            strided[axis] = pl.split_factor
        elif pl.is_shard():
            placements[axis] = f"shard<{pl.dim}>"
        elif pl.is_replicate():
            placements[axis] = "replicate"
        elif pl.is_partial():
            op = getattr(pl, "reduce_op", "sum")
            if op not in ("sum", "avg"):
                raise MuonError(f"{what}: Partial({op}) is not a gradient "
                                "reduction Muon can finish (sum or avg)")
            placements[axis] = f"partial<{op}>"
        else:
            raise MuonError(f"{what}: unsupported placement {pl}")
    order = None
    if strided:
        order = {}
        for axis, sf in strided.items():
            dim = int(placements[axis][len("shard<"):-1])
            later = [a for a in range(axis + 1, len(mesh.axes))
                     if placements[a] == f"shard<{dim}>"]
            inner = math.prod(mesh.axes[a][1] for a in later)
            if inner != sf:
                raise MuonError(
                    f"{what}: _StridedShard(dim={dim}, sf={sf}) on mesh "
                    f"axis '{mesh.axes[axis][0]}' is not FSDP over the "
                    f"{inner} ranks that shard dim {dim} after it")
            # DTensor splits in mesh order; a strided axis splits after
            # the later axes that shard the same dim.
            earlier = [a for a in range(axis)
                       if placements[a] == f"shard<{dim}>"]
            order[dim] = tuple(mesh.axes[a][0]
                               for a in earlier + later + [axis])
    return placements, order


def _local(t: torch.Tensor) -> torch.Tensor:
    return t.to_local() if _is_dtensor(t) else t


class Muon(torch.optim.Optimizer):
    """torch.optim.Muon's interface over the compiled distributed step.

    Arguments as torch.optim.Muon (lr, weight_decay, momentum, nesterov,
    ns_coefficients, eps, ns_steps, adjust_lr_fn: None or "original", or
    "match_rms_adamw"), plus: ``async_gpu_parallelism`` (rounds, default
    True), ``prefetch_count`` (default 1), ``assignment`` (owner strategy:
    "balanced" (default), "round_robin"), ``momentum_form`` ("lerp" as
    torch, or "sum"), ``ns_dtype`` ("f32"; "bf16" needs the cuda target).
    Newton-Schulz runs in fp32 by default, where torch.optim.Muon casts to
    bf16: results then match an fp32 single-device step to 1e-5."""

    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: Tuple[float, float, float] = (
                     3.4445, -4.775, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5,
                 adjust_lr_fn: Optional[str] = None, *,
                 async_gpu_parallelism: bool = True,
                 prefetch_count: int = 1, assignment: str = "balanced",
                 momentum_form: str = "lerp", ns_dtype: str = "f32"):
        if isinstance(lr, torch.Tensor):
            lr = float(lr)
        if lr < 0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if momentum < 0:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if weight_decay < 0:
            raise ValueError(
                f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} "
                             "is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        nesterov=nesterov,
                        ns_coefficients=tuple(ns_coefficients), eps=eps,
                        ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        self.options = dict(async_gpu_parallelism=async_gpu_parallelism,
                            prefetch_count=prefetch_count,
                            strategy=assignment, momentum_form=momentum_form,
                            ns_dtype=ns_dtype)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim < 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found "
                        f"a parameter with size: {p.size()}")
        # Momenta exist from the start (zeros with the parameters'
        # placements), so a checkpoint taken before the first step already
        # holds them and torch.distributed.checkpoint needs no dry step.
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["momentum_buffer"] = torch.zeros_like(
                    p.detach())
        self._compiled: Dict[tuple, Tuple[_run.CompiledStep, List[int]]] = {}
        self._mesh: Optional[_MeshInfo] = None

    # -- building -----------------------------------------------------------

    def _compile(self, gi: int, group: dict, with_grad: List[int]):
        mesh = self._mesh
        params = group["params"]
        # lr and weight_decay are read at run time (schedulers change them
        # every step); the rest is compiled in.
        hyper = dict(momentum=group["momentum"], nesterov=group["nesterov"],
                     ns_steps=group["ns_steps"],
                     ns_coefficients=list(group["ns_coefficients"]),
                     eps=group["eps"],
                     lr_adjust=group["adjust_lr_fn"] or "original",
                     **self.options)
        layouts = []
        for i in with_grad:
            p = params[i]
            what = f"parameter {i} of group {gi} {tuple(p.shape)}"
            pl, order = _layout(p, mesh, what)
            gl, gorder = _layout(p.grad, mesh, what + " (gradient)")
            layouts.append((tuple(p.shape), tuple(pl), tuple(gl),
                            tuple(sorted((order or {}).items()))))
        key = (gi, tuple(with_grad), tuple(layouts),
               tuple(sorted((k, str(v)) for k, v in hyper.items())))
        if key in self._compiled:
            return self._compiled[key]
        b = StepBuilder(mesh.axes, entry=f"muon_group{gi}",
                        runtime_hyper=("lr", "weight_decay"), **hyper)
        for i, (shape, pl, gl, order) in zip(with_grad, layouts):
            b.add(f"group{gi}.param{i}", shape, list(pl),
                  grad_placements=list(gl), order=dict(order) or None)
        compiled = _run.compile(b.build())
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized() and \
                compiled.rank != dist.get_rank():
            raise MuonError(
                f"the runtime's rank {compiled.rank} is not torch's rank "
                f"{dist.get_rank()}: start the job with mpirun and "
                "initialise torch.distributed with the same ranks")
        self._compiled[key] = (compiled, with_grad)
        return self._compiled[key]

    # -- stepping -----------------------------------------------------------

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if self._mesh is None:
            everything = [p for g in self.param_groups for p in g["params"]]
            self._mesh = _MeshInfo.of(everything)
        for gi, group in enumerate(self.param_groups):
            params = group["params"]
            with_grad = [i for i, p in enumerate(params)
                         if p.grad is not None]
            if not with_grad:
                continue
            compiled, order = self._compile(gi, group, with_grad)
            P = [_local(params[i]).detach() for i in order]
            G = [_local(params[i].grad).detach() for i in order]
            M = [_local(self.state[params[i]]["momentum_buffer"])
                 for i in order]
            newP, newM = compiled(P, G, M, lr=float(group["lr"]),
                                  weight_decay=float(group["weight_decay"]))
            for k, i in enumerate(order):
                P[k].copy_(newP[k])
                M[k].copy_(newM[k])
        return loss
