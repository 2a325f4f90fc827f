#!/usr/bin/env python3
"""Renders a Chrome trace written by `muon-opt --muon-timeline` or
`muon-run --trace` as a PNG: one row pair per rank (compute above, comm
below), Newton-Schulz in orange, steps in light grey, collectives in blue.
Needs matplotlib (pip install matplotlib).

    python3 bench/plot_timeline.py TRACE.json OUT.png [--title T] [--from US] [--to US]
"""
import argparse, json

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--title", default="")
    ap.add_argument("--from", dest="start", type=float, default=None,
                    help="first microsecond shown")
    ap.add_argument("--to", dest="end", type=float, default=None,
                    help="last microsecond shown")
    a = ap.parse_args()
    events = [e for e in json.load(open(a.trace))["traceEvents"]
              if e["ph"] == "X"]
    ranks = sorted({e["pid"] for e in events})
    start = a.start if a.start is not None else min(e["ts"] for e in events)
    end = a.end if a.end is not None else max(e["ts"] + e["dur"] for e in events)
    scale, unit = (1e3, "ms") if end - start > 5e3 else (1.0, "us")
    fig, ax = plt.subplots(figsize=(12, 0.55 * 2 * len(ranks) + 1.2))
    for i, r in enumerate(ranks):
        for e in events:
            if e["pid"] != r or e["ts"] + e["dur"] < start or e["ts"] > end:
                continue
            lane = e["tid"]
            y = (len(ranks) - 1 - i) * 2 + (1 - lane)
            name = e["name"]
            if lane == 1:
                color, height = "#3b75af", 0.8
            elif name.startswith("newton_schulz"):
                color, height = "#ef8636", 0.8
            else:  # steps and host work: a background band
                color, height = "#dddddd", 0.95
            ax.broken_barh([((e["ts"] - start) / scale, e["dur"] / scale)],
                           (y - height / 2, height), facecolors=color,
                           edgecolors="none", zorder=1 if color == "#dddddd" else 2)
    ax.set_yticks([y for i in range(len(ranks)) for y in
                   ((len(ranks) - 1 - i) * 2 + 1, (len(ranks) - 1 - i) * 2)])
    ax.set_yticklabels([f"rank {r} {lane}" for r in ranks
                        for lane in ("compute", "comm")])
    ax.set_xlim(0, (end - start) / scale)
    ax.set_xlabel(unit)
    ax.set_title(a.title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in
               ("#ef8636", "#3b75af", "#dddddd")]
    ax.legend(handles, ["Newton-Schulz", "collective", "step"], loc="upper right",
              fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=90)


if __name__ == "__main__":
    main()
