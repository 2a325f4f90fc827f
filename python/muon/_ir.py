"""Modules, steps and diagnostics: the compiler from Python.

Every call that can fail raises :class:`MuonError` with the diagnostics the
compiler emitted (severity, ``file:line:col`` location, message, notes).
Nothing is printed to stderr.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from . import _muon

if TYPE_CHECKING:
    from .report import StepReport


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One compiler message. ``location`` is ``file:line:col`` (``<string>``
    for text parsed from a string), or MLIR's form for other locations, or
    ``""`` for messages without one (e.g. a bad pass pipeline)."""

    severity: str
    location: str
    message: str
    notes: Tuple[Tuple[str, str], ...] = ()

    def __str__(self) -> str:
        head = f"{self.location}: " if self.location else ""
        lines = [f"{head}{self.severity}: {self.message}"]
        for loc, msg in self.notes:
            lines.append(f"{loc + ': ' if loc else ''}note: {msg}")
        return "\n".join(lines)


class MuonWarning(UserWarning):
    """A compiler warning about a step that compiles (e.g. Newton-Schulz
    coefficients that may diverge in bf16): :func:`compile` issues one per
    warning diagnostic of the lowering, its text ``str(Diagnostic)``."""


class MuonError(Exception):
    """A compiler or runtime-interface error. ``diagnostics`` holds every
    message the failing call produced; ``str()`` shows them all."""

    def __init__(self, what: str, diagnostics: Sequence[Diagnostic] = ()):
        self.what = what
        self.diagnostics = list(diagnostics)
        text = what
        if self.diagnostics:
            text += ":\n" + "\n".join(str(d) for d in self.diagnostics)
        super().__init__(text)

    @property
    def location(self) -> str:
        """The location of the first error ("" when it has none)."""
        for d in self.diagnostics:
            if d.severity == "error":
                return d.location
        return ""


class Context:
    """An MLIR context with muon's dialects and passes. Modules keep their
    context alive; one context per thread."""

    def __init__(self) -> None:
        self._ctx = _muon.Context()

    def _take(self) -> List[Diagnostic]:
        return [Diagnostic(s, loc, msg, tuple(tuple(n) for n in notes))
                for s, loc, msg, notes in self._ctx.take_diagnostics()]

    def _check(self, ok: bool, what: str) -> List[Diagnostic]:
        diags = self._take()
        if not ok:
            raise MuonError(what, diags)
        return diags


_default: Optional[Context] = None


def _context(context: Optional[Context]) -> Context:
    global _default
    if context is not None:
        return context
    if _default is None:
        _default = Context()
    return _default


def _is_boolean(value) -> bool:
    """A Python, NumPy or torch bool (each converts to 0 or 1)."""
    dtype = getattr(value, "dtype", None)
    return isinstance(value, bool) or \
        getattr(dtype, "kind", "") == "b" or str(dtype) == "torch.bool"


def _integer(where: str, name: str, value) -> int:
    """`value` as an int, or TypeError: a float, a string or a bool is
    refused, as the extension's typed options refuse them, never truncated
    or converted."""
    if _is_boolean(value) or not hasattr(value, "__index__"):
        raise TypeError(f"{where}: {name} must be an integer, got "
                        f"{type(value).__name__} {value!r}")
    return value.__index__()


def _real(where: str, name: str, value) -> float:
    """`value` as a float, or TypeError: a bool or a string is refused
    (True ran as 1.0, "0.1" as 0.1), as :func:`_integer` refuses them."""
    if not _is_boolean(value) and \
            not isinstance(value, (str, bytes, bytearray)):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{where}: {name} must be a real number, got "
                    f"{type(value).__name__} {value!r}")


def parse(text: str, context: Optional[Context] = None) -> "Module":
    """Parses and verifies MLIR text; raises MuonError with the parser's or
    verifier's diagnostics."""
    ctx = _context(context)
    mod = _muon.parse(ctx._ctx, text)
    ctx._check(mod is not None, "could not parse the module")
    return Module(mod, ctx)


def parse_file(path: str | os.PathLike,
               context: Optional[Context] = None) -> "Module":
    """Parses and verifies an .mlir file (locations name the file)."""
    ctx = _context(context)
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise MuonError(f"no such file: {path}")
    mod = _muon.parse_file(ctx._ctx, path)
    ctx._check(mod is not None, f"could not parse {path}")
    return Module(mod, ctx)


class Module:
    """A builtin.module. Passes change it in place; :meth:`clone` first to
    keep the original."""

    def __init__(self, handle, context: Context):
        self._m = handle
        self.context = context
        #: Warnings and remarks of the last pass run that succeeded.
        self.diagnostics: List[Diagnostic] = []

    def __str__(self) -> str:
        return str(self._m)

    def print(self, debug_info: bool = False) -> str:
        """The module's text; with ``debug_info`` its locations too."""
        return self._m.print(debug_info)

    def clone(self) -> "Module":
        return Module(self._m.clone(), self.context)

    def verify(self) -> None:
        """Raises MuonError when the module does not verify."""
        self.context._check(self._m.verify(), "the module does not verify")

    def run_passes(self, pipeline: str) -> "Module":
        """Runs a textual pipeline as muon-opt would
        (``"muon-assign-owners,muon-expand-step"``, or a full
        ``builtin.module(...)``), verifying after every pass. Returns self."""
        self.diagnostics = self.context._check(
            self._m.run_pipeline(pipeline), f"pipeline '{pipeline}' failed")
        return self

    def lower(self, target: str = "cpu", assign_owners: bool = True,
              ns_stack_bytes: int = -1, batch_collectives: bool = True,
              max_prefetch_bytes: int = 0, place_deallocations: bool = True,
              cuda_chip: str = "sm_90") -> "Module":
        """Runs muon-to-llvm (``target``: "cpu" or "cuda") in place, with
        muon-opt's options and defaults:

        - ``ns_stack_bytes``: an owner's same-shape matrices of a round go
          to one batched Newton-Schulz call up to that many bytes (4 per
          element); 0: one call per matrix; -1: by target (64 MiB for cuda,
          0 for cpu).
        - ``batch_collectives``: a round's gathers and scatters over one
          communicator become batched calls; False: one rooted call each.
        - ``max_prefetch_bytes``: bound on the gathered matrices one rank
          holds at once (a step's prefetch_count is lowered to fit); 0: no
          bound.
        - ``place_deallocations``: free each buffer after its last use;
          False: MLIR's ownership-based deallocation.
        - ``cuda_chip``: with target "cuda", the GPU architecture of the
          generated kernels (ptxas's -arch).

        Raises MuonError for a value the pipeline refuses (a negative
        bound, an unknown target)."""
        ns_stack_bytes = _integer("lower", "ns_stack_bytes", ns_stack_bytes)
        max_prefetch_bytes = _integer("lower", "max_prefetch_bytes",
                                      max_prefetch_bytes)
        self.diagnostics = self.context._check(
            self._m.lower(target, assign_owners, ns_stack_bytes,
                          batch_collectives, max_prefetch_bytes,
                          place_deallocations, cuda_chip),
            f"muon-to-llvm (target={target}) failed")
        return self

    def report_text(self, schedules: bool = False,
                    ns_stack_bytes: int = 0) -> str:
        """muon-report's tables as text. Gives steps without owners their
        owners (in place), as muon-report does. ``schedules``: also every
        schedule's estimate against the lower bounds
        (``muon-report{schedules}``); ``ns_stack_bytes``: the rounds made
        with Newton-Schulz stacked up to that many bytes, as
        muon-expand-step does (0: one matrix per call)."""
        ns_stack_bytes = _integer("report_text", "ns_stack_bytes",
                                  ns_stack_bytes)
        text = self._m.report(False, schedules, ns_stack_bytes)
        self.context._check(text is not None, "the report failed")
        return text

    def report(self, schedules: bool = False,
               ns_stack_bytes: int = 0) -> List["StepReport"]:
        """muon-report's tables of every step as objects
        (:class:`muon.report.StepReport`; ``params_frame()`` and
        ``ranks_frame()`` give pandas DataFrames). Gives steps without
        owners their owners (in place). ``schedules`` and
        ``ns_stack_bytes`` as for :meth:`report_text`; with ``schedules``
        each report's ``schedule_estimates``, ``lower_bound_us`` and
        ``owner_path_bound_us`` are set."""
        from .report import StepReport
        ns_stack_bytes = _integer("report", "ns_stack_bytes", ns_stack_bytes)
        text = self._m.report(True, schedules, ns_stack_bytes)
        self.context._check(text is not None, "the report failed")
        return [StepReport.from_json(d) for d in json.loads(text)]

    def timeline(self, path: str | os.PathLike, schedule: str = "step",
                 prefetch: Optional[int] = None,
                 ns_stack_bytes: int = 0) -> None:
        """Writes the estimated timeline of every step as a Chrome trace
        (muon-timeline; ``schedule``: step, naive, sequential or rounds;
        ``ns_stack_bytes``: the rounds stacked as muon-expand-step makes
        them). The module is not changed."""
        path = os.fsdecode(path)
        ns_stack_bytes = _integer("timeline", "ns_stack_bytes", ns_stack_bytes)
        if prefetch is not None:
            prefetch = _integer("timeline", "prefetch", prefetch)
        if not isinstance(schedule, str) or not schedule.isidentifier():
            # Checked here too: a space would start another pass option.
            raise MuonError(f"timeline: schedule {schedule!r} is not one of "
                            "step, naive, sequential, rounds")
        if not path or any(c in path for c in '"{}'):
            raise MuonError(f"timeline: the path {path!r} is empty or has "
                            "a double quote or a brace, which a pass "
                            "option cannot carry")
        options = (f'output="{path}" schedule={schedule} '
                   f"ns-stack-bytes={ns_stack_bytes}")
        if prefetch is not None:
            options += f" prefetch={prefetch}"
        self.clone().run_passes(
            "muon-assign-owners,muon-timeline{" + options + "}")

    @property
    def steps(self) -> List["Step"]:
        """The module's muon.step ops, in program order."""
        return [Step(self, i) for i in range(self._m.num_steps())]

    def step(self) -> "Step":
        """The module's only step (MuonError when there is not exactly one)."""
        steps = self.steps
        if len(steps) != 1:
            raise MuonError(f"the module has {len(steps)} muon.step ops, "
                            "expected one")
        return steps[0]


#: Tensor kinds of a parameter (the runtime's role numbers).
PARAM, GRAD, MOMENTUM = 0, 1, 2
_KINDS = {"param": PARAM, "grad": GRAD, "momentum": MOMENTUM}


@dataclasses.dataclass(frozen=True)
class LocalShard:
    """What one rank stores of one tensor. ``shape``/``offsets`` is the
    block of the global tensor (global offsets). When ``flattened`` (flat
    storage), the rank stores elements ``[offsets[0], offsets[0] + shape[0])``
    of its compute block (``compute_shape`` at ``compute_offsets``) flattened
    row-major. ``global_shape`` is the whole tensor's shape: ``extract``
    and ``insert`` refuse a ``full`` array of another shape, and ``insert``
    a ``local`` of another shape than the piece, with ``MuonError``."""

    shape: Tuple[int, ...]
    offsets: Tuple[int, ...]
    flattened: bool
    compute_shape: Tuple[int, ...]
    compute_offsets: Tuple[int, ...]
    global_shape: Optional[Tuple[int, ...]] = None

    def _check_full(self, full, what: str) -> None:
        got = tuple(getattr(full, "shape", ()))
        if self.global_shape is not None and got != self.global_shape:
            raise MuonError(f"{what}: the full tensor has shape {got}, "
                            f"expected {self.global_shape}")

    def slices(self, block: bool = False) -> Tuple[slice, ...]:
        shape, offs = ((self.compute_shape, self.compute_offsets)
                       if block or self.flattened else
                       (self.shape, self.offsets))
        return tuple(slice(o, o + s) for o, s in zip(offs, shape))

    def extract(self, full):
        """This rank's piece of a full array (a view where NumPy can make
        one; flat storage of a compute block not contiguous in `full`: a
        copy)."""
        self._check_full(full, "extract")
        if self.flattened:
            start = self.offsets[0]
            return full[self.slices(block=True)].reshape(-1)[
                start:start + self.shape[0]]
        return full[self.slices()]

    def insert(self, full, local) -> None:
        """Writes this rank's piece back into a full array."""
        self._check_full(full, "insert")
        got = tuple(getattr(local, "shape", ()))
        # A flattened piece is any array of its element count.
        fits = (math.prod(got) == self.shape[0] if self.flattened
                else got == tuple(self.shape))
        if not fits:
            want = (f"{self.shape[0]} elements" if self.flattened
                    else f"shape {tuple(self.shape)}")
            raise MuonError(f"insert: the piece has shape {got}, expected "
                            f"{want}")
        if self.flattened:
            block = full[self.slices(block=True)]
            # reshape of a strided view may copy: work on an explicit copy
            # (NumPy .copy(), torch .clone()) and write the block back.
            flat = block.reshape(-1)
            flat = flat.clone() if hasattr(flat, "clone") else flat.copy()
            start = self.offsets[0]
            flat[start:start + self.shape[0]] = local.reshape(-1)
            block[...] = flat.reshape(block.shape)
            return
        full[self.slices()] = local


class Step:
    """A muon.step of a module: its parameters and where they live."""

    def __init__(self, module: Module, index: int):
        self.module = module
        self.index = index
        self._s = _muon.Step(module._m, index)

    @property
    def _q(self):
        # A Step names the module's step number `index` at each call:
        # passes change the module in place, and one may remove the op.
        if not self._s.exists():
            raise MuonError(f"the module no longer has muon.step #{self.index} "
                            "(a pass removed it: passes change a module in "
                            "place); take the module's steps again")
        return self._s

    def _check(self, value, what: str):
        self.module.context._check(value is not None, what)
        return value

    @property
    def num_params(self) -> int:
        return self._q.num_params()

    @property
    def num_ranks(self) -> int:
        n = self._q.num_ranks()
        self.module.context._check(n >= 0, "the step does not plan")
        return n

    def param_name(self, param: int) -> str:
        param = _integer("param_name", "param", param)
        return self._check(self._q.param_name(param),
                           f"no parameter {param}")

    def param_shape(self, param: int) -> Tuple[int, ...]:
        param = _integer("param_shape", "param", param)
        return tuple(self._check(self._q.param_shape(param),
                                 f"no parameter {param}"))

    def param_blocks(self, param: int) -> Optional[Tuple[int, Tuple[int, ...]]]:
        """Blocked Newton-Schulz (``#muon.param<..., split = d [sizes]>``):
        ``(d, sizes)``, or None when the parameter's matrices are
        orthogonalised whole. ``muon.reference.muon_step(..., split=...)``
        takes it as is."""
        param = _integer("param_blocks", "param", param)
        got = self._q.param_blocks(param)
        self.module.context._check(got is not False, f"no parameter {param}")
        return None if got is None else (got[0], tuple(got[1]))

    @property
    def param_names(self) -> List[str]:
        return [self.param_name(i) for i in range(self.num_params)]

    def local_shard(self, param: int, kind: str | int, rank: int) -> LocalShard:
        """Where tensor ``kind`` ("param", "grad" or "momentum") of parameter
        ``param`` lives on ``rank``."""
        if isinstance(kind, str):
            if kind not in _KINDS:
                raise MuonError(f"unknown tensor kind '{kind}'; expected "
                                "'param', 'grad' or 'momentum'")
            k = _KINDS[kind]
        else:
            k = _integer("local_shard", "kind", kind)
        param = _integer("local_shard", "param", param)
        rank = _integer("local_shard", "rank", rank)
        got = self._check(self._q.local_shard(param, k, rank),
                          f"no shard of parameter {param} on rank {rank}")
        shape, offs, flat, cshape, coffs = got
        return LocalShard(tuple(shape), tuple(offs), bool(flat), tuple(cshape),
                          tuple(coffs), self.param_shape(param))

    def holds(self, param: int, rank: int) -> bool:
        """Whether ``rank`` holds (part of) the parameter: False outside the
        group of an ``expert``/``stage`` annotation, where the parameter
        does not exist (the rank still passes tensors of its local shape;
        its results for that parameter carry no meaning), and for ``whole``
        storage away from the owner's coordinate (the rank stores nothing:
        its local shape is empty)."""
        param = _integer("holds", "param", param)
        rank = _integer("holds", "rank", rank)
        held = self._q.holds(param, rank)
        self.module.context._check(held >= 0,
                                   f"no parameter {param} or rank {rank}")
        return bool(held)

    def partial_term(self, param: int, rank: int) -> Tuple[int, int, float]:
        """(term, number of terms, scale) of the parameter's gradient on
        ``rank``: with partial placements each rank passes one term of a sum;
        the gradient is ``scale * sum(terms)``."""
        param = _integer("partial_term", "param", param)
        rank = _integer("partial_term", "rank", rank)
        return tuple(self._check(self._q.partial_term(param, rank),
                                 f"no parameter {param} or rank {rank}"))

    def plan(self, param: int) -> List[str]:
        """The collective plan of one parameter for its owner (needs owners:
        call Module.report_text() or run muon-assign-owners first)."""
        param = _integer("plan", "param", param)
        return self._check(self._q.plan(param),
                           f"no plan for parameter {param}")
