"""muon-report's tables as Python objects (and pandas DataFrames when
pandas is installed). Field names and units are those of
``muon-report{format=json}`` (docs/muon-dialect.md): bytes, FLOPs, and
microseconds on the report's H100 cost model."""
from __future__ import annotations

import dataclasses
import re
from typing import Dict, List, Optional, Tuple


def _location(text: str) -> str:
    """MLIR's loc("file":line:col) as file:line:col (<string> for text
    parsed from a string), as diagnostics print it; other forms unchanged."""
    m = re.fullmatch(r'loc\("(.*)":(\d+):(\d+)\)', text)
    if not m:
        return text
    name = m.group(1) if m.group(1) not in ("", "-") else "<string>"
    return f"{name}:{m.group(2)}:{m.group(3)}"


@dataclasses.dataclass(frozen=True)
class ParamReport:
    index: int
    name: str
    shape: Tuple[int, ...]
    owner: int
    owner_ranks: int       #: ranks that orthogonalise a part (experts)
    ns_flops: float        #: Newton-Schulz FLOPs, all its owners together
    gather_bytes: float
    scatter_bytes: float
    #: bytes all ranks send to reduce a partial gradient, as the step does
    #: it (reduce-scatter into the storage, then all-reduce) and as one
    #: all-reduce of the whole gradient would
    reduce_bytes: float
    allreduce_bytes: float
    #: blocked Newton-Schulz: the number of blocks (0: whole matrix), the
    #: mesh axis whose shards hold whole blocks ("" when none) and the
    #: gather and scatter bytes that saves
    ns_blocks: int
    block_axis: str
    block_saved_bytes: float
    chain: str             #: gathers innermost first, then broadcasts


@dataclasses.dataclass(frozen=True)
class RankReport:
    rank: int
    coords: Dict[str, int]
    params: int            #: parameters this rank orthogonalises
    ns_flops: float
    sent_bytes: float
    recv_bytes: float
    est_us: float          #: estimated finish of the step on this rank
    exposed_us: float      #: of which not hidden behind compute
    collectives: int       #: collective calls per step
    peak_bytes: float      #: gathered matrices held at once


@dataclasses.dataclass(frozen=True)
class StepReport:
    location: str
    mesh: str
    num_ranks: int
    axes: Tuple[str, ...]
    strategy: str
    ns_steps: int
    params: List[ParamReport]
    ranks: List[RankReport]
    balance: float         #: max / mean Newton-Schulz load
    #: kind ("rounds" or "sequential"), rounds, prefetch,
    #: early_release_rounds, ns_stack_bytes,
    #: collectives_per_rank (and _unbatched), est_step_us
    schedule: Dict[str, object]
    #: With ``report(schedules=True)``: one dict per schedule (schedule,
    #: step_us, x_bound, collectives_per_rank, peak_bytes_per_rank) and the
    #: two bounds; None otherwise.
    schedule_estimates: Optional[List[Dict[str, object]]] = None
    lower_bound_us: Optional[float] = None
    owner_path_bound_us: Optional[float] = None

    @classmethod
    def from_json(cls, d: dict) -> "StepReport":
        return cls(
            location=_location(d["location"]), mesh=d["mesh"], num_ranks=d["num_ranks"],
            axes=tuple(d["axes"]), strategy=d["strategy"],
            ns_steps=d["ns_steps"],
            params=[ParamReport(**{**p, "shape": tuple(p["shape"])})
                    for p in d["params"]],
            ranks=[RankReport(**r) for r in d["ranks"]],
            balance=d["balance"], schedule=dict(d["schedule"]),
            schedule_estimates=d.get("schedule_estimates"),
            lower_bound_us=d.get("lower_bound_us"),
            owner_path_bound_us=d.get("owner_path_bound_us"))

    def params_frame(self):
        """The parameter table as a pandas DataFrame (needs pandas)."""
        import pandas as pd
        return pd.DataFrame([dataclasses.asdict(p) for p in self.params])

    def ranks_frame(self):
        """The rank table as a pandas DataFrame, one column per mesh axis
        for the coordinates (needs pandas)."""
        import pandas as pd
        rows = []
        for r in self.ranks:
            row = dataclasses.asdict(r)
            coords = row.pop("coords")
            rows.append({**{a: coords[a] for a in self.axes}, **row})
        return pd.DataFrame(rows)
