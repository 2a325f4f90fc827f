#!/usr/bin/env python3
"""Checks a muon-run --trace file: valid Chrome trace JSON, every rank has
one "step k" event per step, every Newton-Schulz lies inside a step of its
rank, collectives are on the comm thread, and the Newton-Schulz events over
all ranks number matrices x steps (each matrix orthogonalised once).

    check_trace.py TRACE RANKS STEPS MATRICES"""
import json, sys

path, ranks, steps, matrices = sys.argv[1], *map(int, sys.argv[2:5])
events = [e for e in json.load(open(path))["traceEvents"] if e["ph"] == "X"]
names = {e["pid"] for e in events}
assert names == set(range(ranks)), names
ns = 0
for r in range(ranks):
    mine = [e for e in events if e["pid"] == r]
    step_events = [e for e in mine if e["name"].startswith("step ")]
    assert sorted(e["name"] for e in step_events) == \
        sorted(f"step {k}" for k in range(steps)), step_events
    for e in mine:
        assert e["dur"] >= 0, e
        if e["name"].startswith("newton_schulz"):
            assert e["tid"] == 0 and e["cat"] == "compute", e
            assert any(s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 1e-3
                       for s in step_events), ("NS outside a step", e)
            ns += 1
        elif e["tid"] == 1:
            assert e["cat"] == "comm", e
            # "<runtime op> mesh <shape> axes [...] ...": the collective
            # and its communicator.
            assert " mesh " in e["name"] and " axes [" in e["name"], e
    kinds = {e["name"].split()[0] for e in mine if e["tid"] == 1}
    assert {"gather", "scatter"} <= kinds, kinds
    print(f"rank {r}: {len(step_events)} steps, "
          f"{sum(e['tid'] == 1 for e in mine)} collectives")
print(f"newton_schulz events: {ns} (expected {matrices * steps})")
assert ns == matrices * steps
print("trace ok")
