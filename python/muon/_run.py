"""Compiled steps: run a muon.step on this process's local shards.

One process per rank (``mpirun -np N python script.py``; a single process
is a one-rank job). Every rank compiles the same module and calls the step
with the tensors it holds; the step's collectives run over MPI through the
runtime. Arrays are NumPy arrays or torch CPU tensors, float32, C-contiguous
(others are converted, which copies them); the compiled code reads and
writes their memory directly.
"""
from __future__ import annotations

import atexit
import warnings
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _muon
from ._ir import (GRAD, MOMENTUM, PARAM, Module, MuonError, MuonWarning, Step,
                  _integer, _real, parse)

#: Roles of f64 arguments: hyper-parameters the step reads at run time.
LR, WEIGHT_DECAY = 3, 4
_ROLE_NAMES = {PARAM: "param", GRAD: "grad", MOMENTUM: "momentum",
               LR: "lr", WEIGHT_DECAY: "weight_decay"}


_started = False


def _start() -> None:
    """Initialises the runtime (and MPI) once; finalises it at exit, as
    MPI requires of every process that initialised it."""
    global _started
    if not _started:
        _muon.runtime_init()
        atexit.register(_muon.finalize)
        _started = True


def world_rank() -> int:
    """This process's rank (initialises the runtime, and MPI, if needed)."""
    _start()
    return int(_muon.world_rank())


def world_size() -> int:
    _start()
    return int(_muon.world_size())


def barrier() -> None:
    _start()
    _muon.barrier()


def counters() -> dict:
    """This rank's runtime counters since the start or the last reset:
    Newton-Schulz calls, matrices and FLOPs (2mnk per product), collectives
    started, bytes sent, the most bytes compiled steps held at once in
    buffers of their own (``heap_bytes_peak``), and the time spent waiting
    for collectives to complete: wall seconds (``wait_seconds``) and the
    processor seconds of polling in those waits (``wait_cpu_seconds``)."""
    calls, mats, flops, colls, sent, heap, wait, wait_cpu = _muon.counters()
    return {"ns_calls": calls, "ns_matrices": mats, "ns_flops": flops,
            "collectives": colls, "bytes_sent": sent,
            "heap_bytes_peak": heap, "wait_seconds": wait,
            "wait_cpu_seconds": wait_cpu}


def reset_counters() -> None:
    _muon.reset_counters()


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def _as_buffer(x, what: str, target: str = "cpu"):
    """A float32 C-contiguous array the code can use in place: in host
    memory for the cpu target, a CUDA torch tensor for the cuda target."""
    if target == "cuda":
        if not _is_torch(x) or x.device.type != "cuda":
            where = x.device if _is_torch(x) else "the host"
            raise MuonError(f"{what}: an array on {where}; the cuda target "
                            "runs on CUDA torch tensors (on the GPU the "
                            "runtime uses: local rank mod device count)")
    if _is_torch(x):
        import torch
        if target != "cuda" and x.device.type != "cpu":
            raise MuonError(f"{what}: a tensor on {x.device}; the CPU target "
                            "runs on CPU tensors")
        if x.dtype != torch.float32 or not x.is_contiguous():
            x = x.detach().to(torch.float32).contiguous()
        return x.detach()
    a = np.asarray(x)
    if a.dtype != np.float32 or not a.flags.c_contiguous:
        a = np.ascontiguousarray(a, dtype=np.float32)
    return a


def _shape(x) -> Tuple[int, ...]:
    return tuple(int(s) for s in x.shape)


class CompiledStep:
    """A lowered and JIT-compiled muon.step entry for one rank.

    ``step(params, grads, momenta)`` takes, per parameter in the step's
    order (lists, or dicts keyed by parameter name), the local shards this
    rank holds, and returns ``(new_params, new_momenta)`` as new arrays of
    the same kind (NumPy or torch). A gradient with partial placements is
    this rank's term (see :meth:`Step.partial_term`). A step that reads lr
    or weight_decay at run time (:attr:`runtime_hyper`) takes them as the
    keyword arguments ``lr=`` / ``weight_decay=``."""

    def __init__(self, module: Module, entry: Optional[str] = None,
                 target: str = "cpu", opt_level: int = 2,
                 rank: Optional[int] = None):
        # The queries need layouts (a step written against MLIR shard
        # annotations gets them from the import) and owners
        # (muon-assign-owners keeps given ones).
        opt_level = _integer("compile", "opt_level", opt_level)
        if rank is not None:
            rank = _integer("compile", "rank", rank)
        self.module = module.clone().run_passes(
            "convert-shard-to-dist,muon-assign-owners")
        self.step: Step = self._find_step(entry)
        self.entry = self.step._q.function_name()
        self.target = target
        lowered = self.module.clone().lower(target=target)
        for d in lowered.diagnostics:
            if d.severity == "warning":
                warnings.warn(str(d), MuonWarning, stacklevel=3)
        exe, error = _muon.compile(lowered._m, self.entry, opt_level)
        if exe is None:
            raise MuonError(f"could not compile @{self.entry}: {error}")
        self._exe = exe
        self._args, self._results = self._read_roles(exe.roles())
        #: The hyper-parameters the step reads at run time ("lr",
        #: "weight_decay"), which __call__ takes as keywords.
        self.runtime_hyper = [_ROLE_NAMES[r] for r, _ in self._args
                              if r in (LR, WEIGHT_DECAY)]
        self.rank = world_rank() if rank is None else rank
        n = self.step.num_ranks
        if not 0 <= self.rank < n:
            raise MuonError(f"rank {self.rank} is not a rank of the step's "
                            f"mesh ({n} ranks)")
        # What this rank passes and gets back: fixed for the step.
        self._arg_shapes = [
            None if role in (LR, WEIGHT_DECAY) else
            self.local_shape(param, _ROLE_NAMES[role])
            for role, param in self._args]
        self._result_shapes = [self.local_shape(param, "param")
                               for _, param in self._results]

    def _find_step(self, entry: Optional[str]) -> Step:
        steps = [s for s in self.module.steps
                 if entry is None or s._q.function_name() == entry]
        if len(steps) != 1:
            where = f"function @{entry}" if entry else "the module"
            raise MuonError(f"{where} holds {len(steps)} muon.step ops; "
                            "compile runs exactly one (choose with entry=)")
        return steps[0]

    def _read_roles(self, table: Sequence[int]):
        if len(table) < 3:
            raise MuonError("the compiled step's role table is empty")
        nargs, nres = table[1], table[2]
        at, tensors = 3, []
        for i in range(nargs + nres):
            k = table[at]
            triples = [tuple(table[at + 1 + 3 * j:at + 4 + 3 * j])
                       for j in range(k)]
            at += 1 + 3 * k
            what = (f"argument #{i}" if i < nargs
                    else f"result #{i - nargs}")
            if len(triples) != 1:
                raise MuonError(
                    f"@{self.entry}: {what} plays {len(triples)} roles; "
                    "compile needs every argument and result to be exactly "
                    "one parameter, gradient or momentum of the step")
            role, _, param = triples[0]
            tensors.append((role, param))
        return tensors[:nargs], tensors[nargs:]

    # -- shapes and shards --------------------------------------------------

    @property
    def num_params(self) -> int:
        return self.step.num_params

    @property
    def param_names(self) -> List[str]:
        return self.step.param_names

    def local_shape(self, param: int, kind: str = "param",
                    rank: Optional[int] = None) -> Tuple[int, ...]:
        r = self.rank if rank is None else rank
        return self.step.local_shard(param, kind, r).shape

    def shard(self, full, param: int, kind: str = "param",
              rank: Optional[int] = None):
        """This rank's (or ``rank``'s) piece of a full tensor, as a new
        float32 C-contiguous array."""
        r = self.rank if rank is None else rank
        piece = self.step.local_shard(param, kind, r).extract(full)
        if _is_torch(piece):
            return piece.to(dtype=__import__("torch").float32).contiguous()
        return np.ascontiguousarray(piece, dtype=np.float32)

    # -- running ------------------------------------------------------------

    def _by_param(self, values, what: str) -> list:
        n = self.num_params
        if isinstance(values, dict):
            names = self.param_names
            twice = sorted({nm for nm in names if names.count(nm) > 1})
            if twice:
                raise MuonError(f"{what}: the step has several parameters "
                                f"named {twice}; pass a list in parameter "
                                "order")
            unknown = set(values) - set(names)
            if unknown:
                raise MuonError(f"{what}: unknown parameter names "
                                f"{sorted(unknown)}")
            missing = [nm for nm in names if nm not in values]
            if missing:
                raise MuonError(f"{what}: no tensor for {missing}")
            return [values[nm] for nm in names]
        values = list(values)
        if len(values) != n:
            raise MuonError(f"{what}: {len(values)} tensors for a step of "
                            f"{n} parameters")
        return values

    def __call__(self, params, grads, momenta, *, lr=None,
                 weight_decay=None):
        return self._invoke(self._prepare(params, grads, momenta, lr=lr,
                                          weight_decay=weight_decay))

    def _prepare(self, params, grads, momenta, *, lr=None,
                 weight_decay=None):
        """Every check of a call, and its buffers (arguments, then the
        out-buffers): raises MuonError before anything runs. What
        _invoke runs."""
        given = {PARAM: self._by_param(params, "params"),
                 GRAD: self._by_param(grads, "grads"),
                 MOMENTUM: self._by_param(momenta, "momenta")}
        scalars = {LR: lr, WEIGHT_DECAY: weight_decay}
        for role, value in scalars.items():
            name = _ROLE_NAMES[role]
            if value is not None and name not in self.runtime_hyper:
                raise MuonError(f"{name}= is for a step that reads {name} at "
                                "run time; this step has it as a constant")
            if value is None and name in self.runtime_hyper:
                raise MuonError(f"the step reads {name} at run time: pass "
                                f"{name}=")
        buffers = []
        for (role, param), want in zip(self._args, self._arg_shapes):
            if role in scalars:
                value = _real("step", _ROLE_NAMES[role], scalars[role])
                # muon.step's bound on the constant form (the step computes
                # in f32).
                if not 0 <= value <= 2.0 ** 60:
                    raise MuonError(f"{_ROLE_NAMES[role]} must be a number in "
                                    f"[0, 2^60], got {value}")
                buffers.append(value)
                continue
            name = self.param_names[param]
            what = f"{_ROLE_NAMES[role]} of '{name}'"
            buf = _as_buffer(given[role][param], what, self.target)
            if _shape(buf) != want:
                raise MuonError(f"{what} on rank {self.rank}: local shape "
                                f"{_shape(buf)}, the layout gives this rank "
                                f"{want}")
            buffers.append(buf)
        use_torch = any(_is_torch(b) for b in buffers)
        # (floats among the buffers are the scalars)
        outs = []
        device = next((b.device for b in buffers if _is_torch(b)), None)
        for shape in self._result_shapes:
            if use_torch:
                import torch
                outs.append(torch.empty(shape, dtype=torch.float32,
                                        device=device))
            else:
                outs.append(np.empty(shape, dtype=np.float32))
        if self.target == "cuda" and device is not None:
            # The step runs on the legacy default stream: the inputs must be
            # complete whatever stream the caller wrote them on.
            import torch
            torch.cuda.current_stream(device).synchronize()
        # The runtime would end the whole process on a job of another size
        # or another rank (muon-rt: error: ... and MPI_Abort): say so here.
        ranks, me = world_size(), world_rank()
        if ranks != self.step.num_ranks or me != self.rank:
            raise MuonError(
                f"@{self.entry} was compiled for rank {self.rank} of "
                f"{self.step.num_ranks}, but this process is rank {me} of a "
                f"job of {ranks} (launch with mpirun -np "
                f"{self.step.num_ranks}, one process per rank)")
        return buffers, outs

    def _invoke(self, prepared):
        buffers, outs = prepared
        error = self._exe.invoke(buffers + outs)
        if error:
            raise MuonError(f"@{self.entry}: {error}")
        new_p: list = [None] * self.num_params
        new_m: list = [None] * self.num_params
        for (role, param), out in zip(self._results, outs):
            (new_p if role == PARAM else new_m)[param] = out
        return new_p, new_m


def compile(module: Union[Module, str], entry: Optional[str] = None,
            target: str = "cpu", opt_level: int = 2,
            rank: Optional[int] = None) -> CompiledStep:
    """Lowers (muon-to-llvm) and JIT-compiles the step of ``module`` (a
    Module or MLIR text) for this process. ``module`` is not changed."""
    if isinstance(module, str):
        module = parse(module)
    return CompiledStep(module, entry, target, opt_level, rank)
