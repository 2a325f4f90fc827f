"""muon: a compiler for the distributed Muon optimizer step (Python API).

See docs/python.md. The main entry points:

- :func:`parse` / :func:`parse_file` -> :class:`Module` (print, verify, run
  passes, lower, report);
- :class:`StepBuilder` writes a ``muon.step`` module from a mesh and
  parameters;
- :func:`compile` -> :class:`CompiledStep`, which runs the step on this
  process's local shards (NumPy arrays or torch CPU tensors);
- :class:`MuonError` carries the compiler's diagnostics.
"""
from ._ir import (Context, Diagnostic, LocalShard, Module, MuonError, Step,
                  parse, parse_file)
from .builder import (Partial, Placement, Reduced, Replicate, Shard,
                      StepBuilder)
from ._run import (CompiledStep, barrier, compile, counters, reset_counters,
                   world_rank, world_size)

__all__ = ["Partial", "Placement", "Reduced", "Replicate", "Shard",
           "StepBuilder", "CompiledStep", "Context", "Diagnostic", "LocalShard", "Module",
           "MuonError", "Step", "barrier", "compile", "counters", "parse",
           "parse_file", "reset_counters", "world_rank", "world_size"]
