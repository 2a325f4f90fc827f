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

import hashlib
import math
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from . import _run
from ._ir import MuonError
from .builder import LR_ADJUSTS, StepBuilder, _integer

__all__ = ["DistributedConfig", "Muon", "create_auto_config"]


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
        return _MeshInfo(list(zip(_names_of(first), shape)), first)


def _target_of(params: Sequence[torch.Tensor]) -> str:
    """The compile target of the parameters' local tensors: "cpu" for CPU
    tensors, "cuda" for CUDA tensors (every parameter on one kind)."""
    kinds = sorted({_local(p).device.type for p in params})
    if len(kinds) != 1:
        raise MuonError(f"the parameters live on devices of several kinds "
                        f"({', '.join(kinds)}); one optimizer step runs on "
                        "CPU tensors or on CUDA tensors")
    if kinds[0] not in ("cpu", "cuda"):
        raise MuonError(f"the parameters live on '{kinds[0]}'; this "
                        "optimizer runs on CPU tensors (the cpu target) or "
                        "CUDA tensors (the cuda target)")
    return kinds[0]


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


_LR_ADJUSTS = (None,) + LR_ADJUSTS

# Options of the whole step: a parameter group cannot carry its own.
_OPTIMIZER_WIDE = ("async_gpu_parallelism", "prefetch_count", "assignment",
                   "momentum_form", "ns_dtype", "distributed_config")


def _check_adjust_lr_fn(value) -> None:
    """torch.optim.Muon's check, also for a value set in param_groups."""
    if value not in _LR_ADJUSTS:
        raise ValueError(f"Adjust learning rate function {value} "
                         "is not supported")


def _split_of(group: dict) -> Optional[Tuple[int, Tuple[int, ...]]]:
    """A group's ``split=(dim, [sizes])`` with integer values, or None;
    anything else is a MuonError (never a truncated value)."""
    split = group.get("split")
    if split is None:
        return None
    if isinstance(split, (str, bytes)) or not hasattr(split, "__len__") \
            or len(split) != 2:
        raise MuonError("a parameter group's split must be (dim, [sizes]), "
                        f"got {split!r}")
    dim, sizes = split
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise MuonError("a parameter group's split sizes must be a list of "
                        f"integers, got {sizes!r}")
    sizes = tuple(_integer(x, "split size") for x in sizes)
    if not sizes:
        raise MuonError("a parameter group's split needs at least one size")
    return _integer(dim, "split dim"), sizes


def _local(t: torch.Tensor) -> torch.Tensor:
    return t.to_local() if _is_dtensor(t) else t


class Muon(torch.optim.Optimizer):
    """torch.optim.Muon's interface over the compiled distributed step.

    Arguments as torch.optim.Muon (lr, weight_decay, momentum, nesterov,
    ns_coefficients, eps, ns_steps, adjust_lr_fn: None or "original",
    "match_rms_adamw" or "spectral_unclamped"), plus: ``async_gpu_parallelism`` (rounds, default
    True), ``prefetch_count`` (default 1), ``assignment`` (owner strategy:
    "balanced" (default), "round_robin"), ``momentum_form`` ("lerp" as
    torch, or "sum"), ``ns_dtype`` ("f32", or "bf16": bf16 operands with
    fp32 accumulation, emulated on the cpu target).
    Newton-Schulz runs in fp32 by default, where torch.optim.Muon casts to
    bf16: results then match an fp32 single-device step to 1e-5.

    A parameter group may carry ``split=(dim, [sizes])``: each of its
    matrices is orthogonalised in blocks of those sizes along ``dim``
    (fused QKV or gate/up projections, attention heads), each scaled for
    its own shape.

    The parameters are CPU tensors (the step compiles for the cpu target)
    or CUDA tensors (the cuda target: Newton-Schulz and the elementwise
    work on the GPU, each rank on GPU local rank mod device count; the
    step's result copies stay on the device).

    ``distributed_config`` (from :func:`create_auto_config`) describes
    plain-tensor parameters that hold local shards by the process groups
    they are split over, for models that do not use DTensor. Its
    ``async_gpu_parallelism`` and ``prefetch_count`` are the step's; given
    to the optimizer as well, they must agree (else MuonError)."""

    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: Tuple[float, float, float] = (
                     3.4445, -4.775, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5,
                 adjust_lr_fn: Optional[str] = None, *,
                 async_gpu_parallelism: Optional[bool] = None,
                 prefetch_count: Optional[int] = None,
                 assignment: str = "balanced",
                 momentum_form: str = "lerp", ns_dtype: str = "f32",
                 distributed_config: Optional["DistributedConfig"] = None):
        # torch.optim.Muon's checks and errors (`not 0.0 <= x`: NaN too).
        if isinstance(lr, torch.Tensor):
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            lr = float(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(
                f"weight decay should be >= 0 but is: {weight_decay}")
        _check_adjust_lr_fn(adjust_lr_fn)
        if assignment not in ("balanced", "round_robin"):
            raise MuonError("assignment must be 'balanced' or 'round_robin', "
                            f"got {assignment!r}")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        nesterov=nesterov,
                        ns_coefficients=tuple(ns_coefficients), eps=eps,
                        ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        self._config = distributed_config
        schedule = _schedule_options(
            distributed_config, async_gpu_parallelism=async_gpu_parallelism,
            prefetch_count=prefetch_count)
        self.options = dict(schedule, strategy=assignment,
                            momentum_form=momentum_form, ns_dtype=ns_dtype)
        for group in self.param_groups:
            self._check_hyper(group)
        # compile key -> (compiled step, its parameters' indices, the key)
        self._compiled: Dict[tuple, Tuple[_run.CompiledStep, List[int],
                                          tuple]] = {}
        self._mesh: Optional[_MeshInfo] = None
        self._target = "cpu"

    def add_param_group(self, param_group) -> None:
        """torch's add_param_group (the constructor adds its groups through
        it too), with Muon's checks on the group's parameters and their
        momenta created."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        try:
            if hasattr(self, "options"):  # the constructor checks its own
                self._check_hyper(group)
            self._check_group(group)
        except (MuonError, ValueError, RuntimeError):
            self.param_groups.pop()
            raise
        # Momenta exist from the start (zeros with the parameters'
        # placements), so a checkpoint taken before the first step already
        # holds them and torch.distributed.checkpoint needs no dry step.
        for p in group["params"]:
            self._momentum(p)
        # A group added after the first step may bring another mesh (or
        # device): look again at the next step.
        if getattr(self, "_mesh", None) is not None:
            self._mesh = None

    @staticmethod
    def _check_group(group: dict) -> None:
        """Refuses what a group holds that the step cannot take: its own
        copy of a step-wide option, a parameter twice, a bad split, and
        parameters torch.optim.Muon refuses (with its errors) or that are
        not floating point."""
        wide = [k for k in _OPTIMIZER_WIDE if k in group]
        if wide:
            raise MuonError(f"'{wide[0]}' is an option of the whole step: "
                            "give it to the optimizer, not to a parameter "
                            "group")
        params = group["params"]
        if len({id(p) for p in params}) < len(params):
            raise MuonError("a parameter group holds the same parameter twice")
        _split_of(group)
        for p in params:
            if p.ndim < 2:
                raise ValueError("Muon only supports 2D parameters whereas we "
                                 f"found a parameter with size: {p.size()}")
            if torch.is_complex(p):
                raise RuntimeError("Muon does not support complex parameters")
            if not p.is_floating_point():
                raise MuonError("Muon needs floating-point parameters, found "
                                f"one of {p.dtype}")

    def _hyper(self, group: dict) -> dict:
        """The step's hyper-parameters for `group`: lr and weight_decay are
        read at run time (schedulers change them every step); the rest is
        compiled in."""
        _check_adjust_lr_fn(group["adjust_lr_fn"])
        return dict(momentum=group["momentum"], nesterov=group["nesterov"],
                    ns_steps=group["ns_steps"],
                    ns_coefficients=list(group["ns_coefficients"]),
                    eps=group["eps"],
                    lr_adjust=group["adjust_lr_fn"] or "original",
                    **self.options)

    def _check_hyper(self, group: dict) -> None:
        """Refuses a group's options when they are given (the constructor,
        add_param_group), not at the first step(): a one-matrix step with
        them is built and parsed, so every value is checked where the
        compiled step's would be (MuonError)."""
        b = StepBuilder([("x", 1)], runtime_hyper=("lr", "weight_decay"),
                        **self._hyper(group))
        b.add("w", (2, 2), ["replicate"])
        b.build()

    def load_state_dict(self, state_dict) -> None:
        """torch's, then a zero momentum for every parameter the loaded
        state has none for (a torch.optim.Muon parameter that never had a
        gradient), so that the state holds every momentum, as after the
        constructor."""
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            for p in group["params"]:
                self._momentum(p)

    def _momentum(self, p: torch.Tensor) -> torch.Tensor:
        """p's momentum buffer, zero where there is none yet (a state loaded
        from a torch.optim.Muon whose parameter never had a gradient)."""
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = torch.zeros_like(p.detach())
        return state["momentum_buffer"]

    # -- building -----------------------------------------------------------

    def _describe(self, p: torch.Tensor, flat: int, what: str):
        """(global shape, placements, gradient placements, order, expert)
        of parameter `p` (index `flat` over all groups)."""
        if self._config is not None:
            return self._config._describe(p, flat, what)
        pl, order = _layout(p, self._mesh, what)
        gl, _ = _layout(p.grad, self._mesh, what + " (gradient)")
        return tuple(p.shape), pl, gl, order, None

    def _compile(self, gi: int, group: dict, with_grad: List[int]):
        mesh = self._mesh
        params = group["params"]
        first = sum(len(g["params"]) for g in self.param_groups[:gi])
        hyper = self._hyper(group)
        # Blocked Newton-Schulz for every parameter of the group:
        # {"params": [...], "split": (dim, [sizes])} (fused QKV, heads).
        split = _split_of(group)
        layouts = []
        for i in with_grad:
            p = params[i]
            what = f"parameter {first + i} (group {gi}) {tuple(p.shape)}"
            shape, pl, gl, order, expert = self._describe(p, first + i, what)
            layouts.append((tuple(shape), tuple(pl), tuple(gl),
                            tuple(sorted((order or {}).items())), expert))
        key = (gi, self._target, tuple(with_grad), tuple(layouts), split,
               tuple(sorted((k, str(v)) for k, v in hyper.items())))
        if key in self._compiled:
            return self._compiled[key]
        b = StepBuilder(mesh.axes, entry=f"muon_group{gi}",
                        runtime_hyper=("lr", "weight_decay"), **hyper)
        for i, (shape, pl, gl, order, expert) in zip(with_grad, layouts):
            b.add(f"group{gi}.param{i}", shape, list(pl),
                  grad_placements=list(gl), order=dict(order) or None,
                  expert=expert, split=split)
        compiled = _run.compile(b.build(), target=self._target)
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized() and \
                compiled.rank != dist.get_rank():
            raise MuonError(
                f"the runtime's rank {compiled.rank} is not torch's rank "
                f"{dist.get_rank()}: start the job with mpirun and "
                "initialise torch.distributed with the same ranks")
        self._compiled[key] = (compiled, with_grad, key)
        return self._compiled[key]

    def _agree(self, gi: int, what, error: Optional[BaseException]) -> None:
        """Every rank of the job compares `what` (this rank's description of
        group gi's step: its parameters, layouts, hyper-parameters and lr /
        weight_decay) and whether preparing it failed, over torch.distributed
        (one small all-gather per group and step). A rank that failed, or
        that would run another step than its peers, would leave the others
        waiting in a collective for ever or exchanging tensors of the wrong
        sizes: every rank raises instead."""
        import torch.distributed as dist
        if not (dist.is_available() and dist.is_initialized()) or \
                dist.get_world_size() == 1:
            if error is not None:
                raise error
            return
        digest = hashlib.sha256(repr(what).encode()).hexdigest()[:16]
        # The group count too: a rank with fewer groups would return from
        # step() while its peers wait in the next group's all-gather.
        mine = (digest, None if error is None else
                f"{type(error).__name__}: {error}", len(self.param_groups))
        everyone = [None] * dist.get_world_size()
        dist.all_gather_object(everyone, mine)
        counts = [n for _, _, n in everyone]
        if len(set(counts)) > 1:
            differ = [r for r, n in enumerate(counts) if n != counts[0]]
            raise MuonError(
                f"ranks {differ} have {[counts[r] for r in differ]} "
                f"parameter groups where rank 0 has {counts[0]} (every rank "
                "must step the same parameter groups), so no rank steps")
        if error is not None:
            raise error
        failed = [(r, e) for r, (_, e, _) in enumerate(everyone) if e]
        if failed:
            r, e = failed[0]
            raise MuonError(f"parameter group {gi}: rank {r} could not "
                            f"prepare its step ({e}), so no rank runs it")
        digests = [d for d, _, _ in everyone]
        if len(set(digests)) > 1:
            differ = [r for r, d in enumerate(digests) if d != digests[0]]
            raise MuonError(
                f"parameter group {gi}: ranks {differ} would run another "
                "step than rank 0 (every rank must step the same "
                "parameters, with the same shapes, layouts, gradients "
                "present and hyper-parameters, lr and weight_decay "
                "included), so no rank runs it")

    # -- stepping -----------------------------------------------------------

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if self._mesh is None:
            everything = [p for g in self.param_groups for p in g["params"]]
            mesh = (self._config._mesh(everything)
                    if self._config is not None
                    else _MeshInfo.of(everything))
            ranks = math.prod(size for _, size in mesh.axes)
            if ranks != _run.world_size():
                # Plain tensors without torch.distributed make a 1-rank
                # step; under mpirun with more processes every rank would
                # stop with an error about its rank alone.
                raise MuonError(
                    f"the parameters make a step over {ranks} rank(s) "
                    f"(plain tensors: torch.distributed's world, 1 when it "
                    f"is not initialised), but the runtime's MPI job has "
                    f"{_run.world_size()} process(es): start the job with "
                    "mpirun, one process per rank, and initialise "
                    "torch.distributed with the same ranks (or give the "
                    "parameters DTensor placements on a mesh of them)")
            self._mesh = mesh
            self._target = _target_of(everything)
        for gi, group in enumerate(self.param_groups):
            params = group["params"]
            with_grad = [i for i, p in enumerate(params)
                         if p.grad is not None]
            error, prepared, what = None, None, ("no gradients", gi)
            try:
                for i in with_grad:
                    if params[i].grad.is_sparse:
                        raise RuntimeError(
                            "Muon does not support sparse gradients")
                if with_grad:
                    compiled, order, key = self._compile(gi, group,
                                                         with_grad)
                    P = [_local(params[i]).detach() for i in order]
                    G = [_local(params[i].grad).detach() for i in order]
                    M = [_local(self._momentum(params[i])) for i in order]
                    lr = float(group["lr"])
                    weight_decay = float(group["weight_decay"])
                    what = (key, lr, weight_decay)
                    prepared = compiled._prepare(P, G, M, lr=lr,
                                                 weight_decay=weight_decay)
            except Exception as e:  # every rank learns of it (_agree)
                error = e
            self._agree(gi, what, error)
            if prepared is None:
                continue
            newP, newM = compiled._invoke(prepared)
            for k, i in enumerate(order):
                P[k].copy_(newP[k])
                M[k].copy_(newM[k])
        return loss


def _schedule_options(config: Optional["DistributedConfig"],
                      **given) -> Dict[str, object]:
    """The schedule options: each as given to the optimizer, else as the
    distributed_config says, else the default. Given in both places with
    different values is an error (neither silently wins)."""
    defaults = dict(async_gpu_parallelism=True, prefetch_count=1)
    chosen = {}
    for name, value in given.items():
        configured = getattr(config, name) if config is not None else None
        if value is not None and configured is not None and \
                value != configured:
            raise MuonError(
                f"{name}={value!r} was given to the optimizer but its "
                f"distributed_config says {name}={configured!r}; give it in "
                f"one place (create_auto_config takes {name} too)")
        chosen[name] = next(v for v in (value, configured, defaults[name])
                            if v is not None)
    return chosen


class DistributedConfig:
    """How plain-tensor parameters are split over process groups (the
    process-group form, for models that do not use DTensor). Build it with
    :func:`create_auto_config`."""

    # Axis names in the order the groups nest by default, outer first.
    _AXES = ("ddp", "cp", "fsdp", "tp")

    def __init__(self, groups: Dict[str, object], tp_dim_per_param,
                 async_gpu_parallelism: bool, prefetch_count: int):
        self.groups = groups
        valid = tp_dim_per_param is None or (
            isinstance(tp_dim_per_param, int)
            and not isinstance(tp_dim_per_param, bool)) or (
            isinstance(tp_dim_per_param, dict) and all(
                isinstance(k, int) and isinstance(v, int)
                and not isinstance(v, bool)
                for k, v in tp_dim_per_param.items()))
        if not valid:
            raise MuonError(
                "tp_dim_per_param must be an int (every parameter's dim) or "
                "a dict of parameter index -> dim, got "
                f"{type(tp_dim_per_param).__name__} {tp_dim_per_param!r}")
        self.tp_dim_per_param = tp_dim_per_param
        self.async_gpu_parallelism = async_gpu_parallelism
        self.prefetch_count = prefetch_count
        self._axes: List[Tuple[str, int]] = []
        self._shapes = None  # every rank's local shapes, by parameter

    def _mesh(self, params: Sequence[torch.Tensor]) -> "_MeshInfo":
        """The mesh the groups form: world ranks must be row-major over
        the groups' coordinates in some order of the groups (tried in every
        order); each rank's local shapes are gathered once to know the
        global shapes."""
        import itertools
        import torch.distributed as dist
        if not (dist.is_available() and dist.is_initialized()):
            raise MuonError("create_auto_config needs torch.distributed "
                            "initialised (the process groups' job)")
        for p in params:
            if _is_dtensor(p):
                raise MuonError("distributed_config describes plain-tensor "
                                "parameters; this one is a DTensor (drop "
                                "distributed_config: DTensors carry their "
                                "placements)")
        world, rank = dist.get_world_size(), dist.get_rank()
        names = [n for n in self._AXES if n in self.groups]
        mine = [dist.get_group_rank(self.groups[n], rank) for n in names]
        sizes = [dist.get_world_size(self.groups[n]) for n in names]
        everyone: List[list] = [None] * world
        dist.all_gather_object(everyone,
                               (mine, [tuple(p.shape) for p in params]))
        if math.prod(sizes) != world:
            raise MuonError(
                f"the process groups {dict(zip(names, sizes))} span "
                f"{math.prod(sizes)} ranks, but the job has {world}: give "
                "one group per parallelism so that their sizes multiply to "
                "the world size")
        for perm in itertools.permutations(range(len(names))):
            ok = True
            for r, (coords, _) in enumerate(everyone):
                index = 0
                for a in perm:
                    index = index * sizes[a] + coords[a]
                if index != r:
                    ok = False
                    break
            if ok:
                self._axes = [(names[a], sizes[a]) for a in perm]
                self._shapes = [shapes for _, shapes in everyone]
                self._coords = [dict(zip(names, c)) for c, _ in everyone]
                return _MeshInfo(self._axes)
        raise MuonError(
            f"the process groups {names} do not form a mesh: world ranks are "
            "not row-major over their ranks in any order of the groups")

    def _tp_dim(self, flat: int) -> int:
        if isinstance(self.tp_dim_per_param, int):
            return self.tp_dim_per_param
        return (self.tp_dim_per_param or {}).get(flat, 0)

    def _describe(self, p: torch.Tensor, flat: int, what: str):
        placements = {n: "replicate" for n, _ in self._axes}
        split: Dict[int, List[str]] = {}
        if "fsdp" in placements:
            split.setdefault(0, []).append("fsdp")
        if "tp" in placements:
            d = self._tp_dim(flat)
            if not 0 <= d < p.ndim:
                raise MuonError(f"{what}: tp dim {d} is not a dim of the "
                                f"parameter's {p.ndim} dims (0 to "
                                f"{p.ndim - 1})")
            split.setdefault(d, []).append("tp")
        for d, axes in split.items():
            for a in axes:
                placements[a] = f"shard<{d}>"
        # The global extent of a split dim: the sum of the local extents of
        # the ranks along its axes (the other coordinates at 0).
        shape = list(p.shape)
        for d, axes in split.items():
            total = 0
            for r, coords in enumerate(self._coords):
                if all(coords[n] == 0 for n, _ in self._axes
                       if n not in axes):
                    total += self._shapes[r][flat][d]
            shape[d] = total
        pl = [placements[n] for n, _ in self._axes]
        # FSDP is the outer split where both split one dim (the design's
        # gather order: TP first, then FSDP).
        order = {d: ("fsdp", "tp") for d, axes in split.items()
                 if len(axes) == 2}
        return tuple(shape), pl, pl, order or None, None


def create_auto_config(fsdp_process_group=None, tp_process_group=None,
                       ddp_process_group=None, ep_process_group=None,
                       cp_process_group=None, tp_dim_per_param=None,
                       expert_assignments=None,
                       async_gpu_parallelism: bool = True,
                       prefetch_count: int = 1) -> DistributedConfig:
    """The process-group form: parameters are plain tensors holding this
    rank's local shard, split by FSDP over ``fsdp_process_group`` (dim 0,
    the outer split), by TP over ``tp_process_group`` (dim
    ``tp_dim_per_param``: an int for all, or parameter index -> dim over
    the optimizer's parameters in order, default 0), and replicated over
    ``ddp_process_group`` and ``cp_process_group`` (their gradients already
    reduced). Together the groups must form a mesh of the job's ranks.

    Expert parallelism in this form (``ep_process_group``,
    ``expert_assignments``) is refused: a compiled step needs every rank to
    know every parameter; give experts as one stacked DTensor parameter
    sharded on its expert dim instead."""
    if ep_process_group is not None or expert_assignments:
        raise MuonError(
            "create_auto_config: expert parallelism over process groups is "
            "not supported (each rank would build a step over different "
            "parameters); stack the experts in one DTensor parameter "
            "sharded on its leading dim")
    groups = {name: g for name, g in (("ddp", ddp_process_group),
                                      ("cp", cp_process_group),
                                      ("fsdp", fsdp_process_group),
                                      ("tp", tp_process_group))
              if g is not None}
    return DistributedConfig(groups, tp_dim_per_param,
                             async_gpu_parallelism, prefetch_count)
