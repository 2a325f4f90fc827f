"""Writes muon.step modules from Python.

    b = StepBuilder({"dp": 2, "tp": 2}, lr=0.02, weight_decay=0.01)
    b.add("layers.0.q", (256, 256), {"dp": Shard(0), "tp": Shard(0)})
    b.add("layers.0.o", (256, 256), [Shard(0), Shard(1)])
    module = b.build()            # parsed and verified: a muon.Module
    text = b.text()               # the same module as MLIR text

Each distinct tensor type gets an alias (``!p0 = !dist.tensor<...>``), so a
step over hundreds of parameters stays readable. The text round-trips
through ``muon-opt`` unchanged up to the printer's formatting. See
docs/python.md for every option; the syntax of placements and storage is
the ``dist`` dialect's (docs/dist-dialect.md).
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._ir import Context, Module, MuonError, parse


class Placement:
    """A compute placement on one mesh axis (its dist syntax is str())."""

    def __init__(self, text: str):
        self._text = text

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Placement({self._text!r})"

    def __eq__(self, other) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(self._text)


def Shard(dim: int) -> Placement:
    """Split tensor dim ``dim`` over the axis."""
    return Placement(f"shard<{_integer(dim, 'Shard dim')}>")


def Replicate() -> Placement:
    return Placement("replicate")


def Partial(reduce: str = "sum") -> Placement:
    """A term of a sum over the axis: ``reduce`` is sum, avg, max or min."""
    return Placement(f"partial<{reduce}>")


def Reduced() -> Placement:
    """Replicated, with the gradient a partial sum over the axis."""
    return Placement("reduced")


PlacementSpec = Union[Sequence[Union[Placement, str]],
                      Mapping[str, Union[Placement, str]]]

def _integer(v, name: str) -> int:
    """`v` as an int, refusing values it would change (2.5, True, "3")."""
    try:
        numpy_bool = getattr(getattr(v, "dtype", None), "kind", "") == "b"
        whole = not numpy_bool and \
            not isinstance(v, (bool, str, bytes, bytearray)) and \
            float(v).is_integer()
    except (TypeError, ValueError, OverflowError):
        whole = False
    if not whole:
        raise MuonError(f"{name} must be an integer, got {v!r}")
    return int(v)


def _boolean(v, name: str) -> str:
    """`v` as MLIR's true/false, refusing anything but a bool ("no")."""
    if type(v).__name__ not in ("bool", "bool_"):
        raise MuonError(f"{name} must be True or False, got {v!r}")
    return "true" if v else "false"


#: The cases of #muon.lr_adjust.
LR_ADJUSTS = ("original", "match_rms_adamw", "spectral_unclamped")

_HYPER = {
    # name: (attribute, how to print it)
    "lr": ("lr", lambda v: f"{_f64(v)} : f64"),
    "momentum": ("momentum", lambda v: f"{_f64(v)} : f64"),
    "nesterov": ("nesterov", lambda v: _boolean(v, "nesterov")),
    "ns_steps": ("ns_steps", lambda v: f"{_integer(v, 'ns_steps')} : i64"),
    "ns_coefficients": ("ns_coeffs",
                        lambda v: "array<f64: " +
                        ", ".join(_f64(c) for c in _flat(v)) + ">"),
    "eps": ("eps", lambda v: f"{_f64(v)} : f64"),
    "weight_decay": ("weight_decay", lambda v: f"{_f64(v)} : f64"),
    "lr_adjust": ("lr_adjust", lambda v: "#muon.lr_adjust<" + _choice(
        v, "lr_adjust", LR_ADJUSTS) + ">"),
    "momentum_form": ("momentum_form", lambda v: "#muon.momentum_form<" +
                      _choice(v, "momentum_form", ("lerp", "sum")) + ">"),
    "ns_dtype": ("ns_dtype", lambda v: str(v)),
    "strategy": ("strategy", lambda v: "#muon.strategy<" + _choice(
        v, "strategy", ("round_robin", "balanced", "explicit")) + ">"),
    "owners": ("owners",
               lambda v: "array<i64: " +
               ", ".join(str(_integer(o, "owners")) for o in v) + ">"),
    "async_gpu_parallelism": ("async_gpu_parallelism",
                              lambda v: _boolean(v, "async_gpu_parallelism")),
    "prefetch_count": ("prefetch_count",
                       lambda v: f"{_integer(v, 'prefetch_count')} : i64"),
}


def _choice(v, name: str, values: Tuple[str, ...]) -> str:
    """`v` when it is one of `values` (the attribute's cases), else a
    MuonError naming them (not the parser's error on the generated text)."""
    if not isinstance(v, str) or v not in values:
        raise MuonError(f"{name} must be one of " +
                        ", ".join(repr(c) for c in values) + f", got {v!r}")
    return v


def _f64(v: float) -> str:
    v = float(v)
    if not math.isfinite(v):
        raise MuonError(f"hyper-parameter value {v} is not finite")
    # MLIR's float literals need a '.' before any exponent ("1.0e-07").
    text = repr(v)
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def _flat(v) -> List[float]:
    out: List[float] = []
    for c in v:
        if isinstance(c, (list, tuple)):
            out.extend(float(x) for x in c)
        else:
            out.append(float(c))
    return out


class StepBuilder:
    """Builds a module holding one function ``@entry`` whose arguments are
    the parameters, gradients and momenta (in that order per parameter) and
    whose results are the step's new parameters then new momenta.

    ``mesh``: axis name -> size, in mesh order (a dict or (name, size)
    pairs). Keyword arguments are the step's hyper-parameters, named as
    torch.optim.Muon names them where it has them: lr (required), momentum,
    nesterov, ns_steps, ns_coefficients (one (a, b, c) triple or one per
    iteration), eps, weight_decay, plus lr_adjust ("original",
    "match_rms_adamw" or "spectral_unclamped"), momentum_form ("lerp" or "sum"), ns_dtype ("f32" or
    "bf16"), strategy ("round_robin", "balanced", "explicit"), owners,
    async_gpu_parallelism and prefetch_count.

    ``runtime_hyper``: hyper-parameters the step reads when it runs instead
    of constants, from among "lr" and "weight_decay" (a learning-rate
    schedule without recompiling). Each becomes an f64 argument of the
    entry, after the tensors (``%lr``, then ``%weight_decay``), and must not
    be given as a constant too."""

    def __init__(self, mesh: Union[Mapping[str, int],
                                   Sequence[Tuple[str, int]]],
                 *, entry: str = "step", mesh_name: str = "m",
                 runtime_hyper: Sequence[str] = (), **hyper):
        self.axes: List[Tuple[str, int]] = [
            (str(a), _integer(s, f"mesh axis {a!r}")) for a, s in
            (mesh.items() if isinstance(mesh, Mapping) else mesh)]
        if not self.axes:
            raise MuonError("the mesh needs at least one axis")
        self.entry = entry
        self.mesh_name = mesh_name
        unknown = set(hyper) - set(_HYPER)
        if unknown:
            raise MuonError(f"unknown hyper-parameters {sorted(unknown)}; "
                            f"known: {sorted(_HYPER)}")
        if isinstance(runtime_hyper, str):
            raise MuonError(f"runtime_hyper is a list of names; got the "
                            f"string {runtime_hyper!r} (write "
                            f"({runtime_hyper!r},))")
        self.runtime_hyper = [h for h in ("lr", "weight_decay")
                              if h in runtime_hyper]
        bad = set(runtime_hyper) - {"lr", "weight_decay"}
        if bad:
            raise MuonError(f"runtime_hyper {sorted(bad)}: only lr and "
                            "weight_decay can be read at run time")
        both = set(runtime_hyper) & set(hyper)
        if both:
            raise MuonError(f"{sorted(both)} given as constants and in "
                            "runtime_hyper; choose one")
        if "lr" not in hyper and "lr" not in self.runtime_hyper:
            raise MuonError("the step needs lr (a constant, or "
                            "runtime_hyper=('lr',))")
        self.hyper = dict(hyper)
        for k, v in self.hyper.items():
            _HYPER[k][1](v)  # a value that cannot be written fails now
        self.params: List[dict] = []
        self.flat_groups: List[Tuple[str, str, List[int]]] = []

    # -- declarations -------------------------------------------------------

    def flat_group(self, name: str, axis: str, numel: Sequence[int]) -> None:
        """Declares ``dist.flat_group @name on @mesh[axis] numel [...]``:
        members that ``storage="flat<@name, i>"`` refers to; ``numel`` has
        one element count per member."""
        self._axis(axis)
        if isinstance(numel, (str, bytes)) or not isinstance(numel, Sequence):
            raise MuonError(f"flat_group {name!r}: numel must be a list of "
                            f"element counts, one per member, got {numel!r}")
        counts = [_integer(n, f"flat_group {name!r} numel") for n in numel]
        if not counts or any(n <= 0 for n in counts):
            raise MuonError(f"flat_group {name!r}: numel must be one positive "
                            f"element count per member, got {list(numel)!r}")
        self.flat_groups.append((name, axis, counts))

    def add(self, name: str, shape: Sequence[int],
            placements: Optional[PlacementSpec] = None, *,
            grad_placements: Optional[PlacementSpec] = None,
            storage: Optional[str] = None,
            order: Optional[Mapping[int, Sequence[str]]] = None,
            grad_storage: Optional[str] = None,
            expert: Optional[Tuple[str, int]] = None,
            stage: Optional[Tuple[str, int]] = None,
            split: Optional[Tuple[int, Sequence[int]]] = None) -> int:
        """Adds a parameter and returns its index.

        ``placements``: one per mesh axis (a list) or axis -> placement (a
        dict; other axes replicate); default all replicate. The momentum
        has the parameter's layout; the gradient has ``grad_placements``
        (default: the parameter's, with ``reduced`` axes as
        ``partial<sum>``, as the gradient of a reduced weight is a partial
        sum). ``storage`` (dist syntax, e.g. ``"dim<0 on dp>"``,
        ``"block<0 on dp, 1 on tp>"``, ``"flat<@g, 0>"``,
        ``"whole<on dp owner 1>"``) and ``order`` (tensor dim -> axes, outer
        split first) complete the layout; the gradient gets the same, minus
        the storage splits over its partial axes (a partial gradient is each
        rank's whole contribution; the step reduce-scatters it), unless
        ``grad_storage`` says otherwise. ``expert=(axis, i)`` /
        ``stage=(axis, i)`` mark an expert or pipeline-stage parameter.
        ``split=(d, sizes)`` orthogonalises each matrix in blocks of
        ``sizes`` along dim ``d`` (fused QKV, heads)."""
        if any(p["name"] == name for p in self.params):
            raise MuonError(f"parameter '{name}' is added twice; names "
                            "key the tensors of a call (dicts)")
        shape = tuple(_integer(s, f"parameter '{name}': shape") for s in shape)
        if any(d < 0 for d in shape):
            raise MuonError(f"parameter '{name}': shape {shape} has a "
                            "negative size")
        if len(shape) < 2:
            raise MuonError(
                f"parameter '{name}' has {len(shape)} dims; Muon "
                "orthogonalises matrices (2 or more dims): give 1-D "
                "parameters (biases, norms) to another optimizer")
        p = self._placements(placements, name)
        if grad_placements is None:
            g = ["partial<sum>" if x == "reduced" else x for x in p]
        else:
            g = self._placements(grad_placements, name)
        if grad_storage is None:
            partial = {self.axes[i][0] for i, x in enumerate(g)
                       if x.startswith("partial")}
            grad_storage = self._storage_without(storage, partial)
        expert, stage = (
            None if v is None else
            (str(v[0]), _integer(v[1], f"parameter '{name}': {what} index"))
            for what, v in (("expert", expert), ("stage", stage)))
        self.params.append({
            "name": name, "shape": shape,
            "layout": self._layout(p, storage, order),
            "grad_layout": self._layout(g, grad_storage, order),
            "expert": expert, "stage": stage,
            "split": None if split is None else
            (_integer(split[0], f"parameter '{name}': split dim"),
             [_integer(x, f"parameter '{name}': split size")
              for x in split[1]])})
        return len(self.params) - 1

    # -- output -------------------------------------------------------------

    def text(self) -> str:
        if not self.params:
            raise MuonError("the step has no parameters")
        mesh = ", ".join(f"{a} = {s}" for a, s in self.axes)
        lines = [f"dist.mesh @{self.mesh_name} [{mesh}]"]
        for gname, axis, numel in self.flat_groups:
            lines.append(f"dist.flat_group @{gname} on @{self.mesh_name}"
                         f"[{axis}] numel [{', '.join(map(str, numel))}]")
        aliases: Dict[str, str] = {}

        def alias(shape, layout) -> str:
            ty = ("!dist.tensor<" + "x".join(map(str, shape)) +
                  f"xf32, @{self.mesh_name}, {layout}>")
            if ty not in aliases:
                aliases[ty] = f"!t{len(aliases)}"
            return aliases[ty]

        P = [alias(p["shape"], p["layout"]) for p in self.params]
        G = [alias(p["shape"], p["grad_layout"]) for p in self.params]
        lines += [f"{a} = {ty}" for ty, a in aliases.items()]
        n = len(self.params)
        args = []
        for i in range(n):
            args += [f"%p{i}: {P[i]}", f"%g{i}: {G[i]}", f"%m{i}: {P[i]}"]
        args += [f"%{h}: f64" for h in self.runtime_hyper]
        res = P + P
        attrs = [f"{_HYPER[k][0]} = {_HYPER[k][1](v)}"
                 for k, v in self.hyper.items()]
        infos = []
        for p in self.params:
            extra = ""
            if p["expert"] is not None:
                extra += f", expert = {p['expert'][0]}[{p['expert'][1]}]"
            if p["stage"] is not None:
                extra += f", stage = {p['stage'][0]}[{p['stage'][1]}]"
            if p["split"] is not None:
                d, sizes = p["split"]
                extra += f", split = {d} [{', '.join(map(str, sizes))}]"
            infos.append(f"#muon.param<{_quote(p['name'])}{extra}>")
        attrs.append("param_info = [" + ", ".join(infos) + "]")
        ops = lambda k: ", ".join(f"%{k}{i}" for i in range(n))
        lines.append(f"func.func @{self.entry}({', '.join(args)}) -> "
                     f"({', '.join(res)}) {{")
        lines.append(f"  %r:{2 * n} = muon.step params({ops('p')} : "
                     f"{', '.join(P)})")
        lines.append(f"      grads({ops('g')} : {', '.join(G)})")
        lines.append(f"      momenta({ops('m')} : {', '.join(P)})" +
                     "".join(f" {h}(%{h})" for h in self.runtime_hyper))
        lines.append("      {" + ", ".join(attrs) + "}")
        lines.append("  return " + ", ".join(f"%r#{j}" for j in range(2 * n))
                     + " : " + ", ".join(res))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def build(self, context: Optional[Context] = None) -> Module:
        """The module, parsed and verified (MuonError with the verifier's
        diagnostics when a layout or hyper-parameter is refused)."""
        return parse(self.text(), context)

    # -- helpers ------------------------------------------------------------

    def _axis(self, axis: str) -> int:
        for i, (a, _) in enumerate(self.axes):
            if a == axis:
                return i
        raise MuonError(f"no mesh axis '{axis}' (axes: "
                        f"{[a for a, _ in self.axes]})")

    def _placements(self, spec: Optional[PlacementSpec], name: str) -> List[str]:
        if spec is None:
            return ["replicate"] * len(self.axes)
        if isinstance(spec, Mapping):
            out = ["replicate"] * len(self.axes)
            for axis, pl in spec.items():
                out[self._axis(axis)] = str(pl)
            return out
        if isinstance(spec, (str, Placement)):
            # A string would be read character by character.
            raise MuonError(f"parameter '{name}': placements are one per "
                            "mesh axis, as a list or a dict axis -> "
                            f"placement; got the single {spec!r} (write "
                            f"[{spec!r}])")
        spec = [str(x) for x in spec]
        if len(spec) != len(self.axes):
            raise MuonError(f"parameter '{name}': {len(spec)} placements for "
                            f"a mesh of {len(self.axes)} axes")
        return spec

    def _storage_without(self, storage: Optional[str],
                         axes: set) -> Optional[str]:
        """``storage`` without its splits over ``axes`` (the dist dialect's
        cotangent rule: a block keeps its other split as a dim split)."""
        if not storage or not axes:
            return storage
        text = storage.strip()
        if text.startswith("flat<"):
            group = text[len("flat<"):].split(",")[0].strip().lstrip("@")
            for gname, axis, _ in self.flat_groups:
                if gname == group:
                    return None if axis in axes else storage
            return storage
        if text.startswith("whole<"):
            axis = re.search(r"on\s+(\w+)", text).group(1)
            return None if axis in axes else storage
        splits = re.findall(r"(\d+\s+on\s+(\w+)(?:\s+weights\s*\[[^\]]*\])?)",
                            text)
        kept = [full for full, axis in splits if axis not in axes]
        if len(kept) == len(splits):
            return storage
        return f"dim<{kept[0]}>" if kept else None

    def _layout(self, placements: List[str], storage: Optional[str],
                order: Optional[Mapping[int, Sequence[str]]]) -> str:
        text = "[" + ", ".join(placements) + "]"
        if order:
            text += ", order = {" + ", ".join(
                f"{_integer(d, 'order dim')} = [{', '.join(axes)}]"
                for d, axes in sorted(order.items())) + "}"
        if storage:
            text += f", storage = {storage}"
        return text


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
