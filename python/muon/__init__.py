"""muon: a compiler for the distributed Muon optimizer step (Python API).

See docs/python.md. The main entry points:

- :func:`parse` / :func:`parse_file` -> :class:`Module` (print, verify, run
  passes, lower, report);
- :class:`StepBuilder` writes a ``muon.step`` module from a mesh and
  parameters;
- :func:`compile` -> :class:`CompiledStep`, which runs the step on this
  process's local shards (NumPy arrays or torch CPU tensors);
- :class:`MuonError` carries the compiler's diagnostics;
  :class:`MuonWarning` is what :func:`compile` warns with.
"""
from ._ir import (Context, Diagnostic, LocalShard, Module, MuonError,
                  MuonWarning, Step, parse, parse_file)
from .builder import (Partial, Placement, Reduced, Replicate, Shard,
                      StepBuilder)
from ._run import (CompiledStep, barrier, compile, counters, reset_counters,
                   world_rank, world_size)
from . import reference, report


def __getattr__(name: str):
    # muon.optim needs torch: imported when first named, not with muon.
    if name == "optim":
        import importlib
        return importlib.import_module(".optim", __name__)
    raise AttributeError(f"module 'muon' has no attribute {name!r}")


__all__ = ["Partial", "Placement", "Reduced", "Replicate", "Shard",
           "StepBuilder", "CompiledStep", "Context", "Diagnostic", "LocalShard", "Module",
           "MuonError", "MuonWarning", "Step", "barrier", "compile", "counters", "parse",
           "parse_file", "reset_counters", "world_rank", "world_size"]
