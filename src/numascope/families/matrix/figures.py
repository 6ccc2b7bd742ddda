"""NUMA matrix heat maps: idle latency and read bandwidth, source node x target node."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.results.record import BenchResult

FAMILY = "matrix"
METRICS = (("latency", "Idle latency (ns)", "viridis"),
           ("bandwidth", "Read bandwidth (GB/s)", "viridis_r"),
           ("mlp", "Misses in flight per core (matrix --chains)", "viridis_r"),
           ("mlp_bandwidth", "One core's bandwidth, chains in lockstep (GB/s)", "viridis_r"))


def heatmap(rows: list[str], cols: list[str], m: list[list[float]], title: str, cmap: str,
            xlabel: str, ylabel: str, fmt: str = "{:.0f}") -> Figure:
    n = max(len(rows), len(cols))
    fig, ax = plt.subplots(figsize=(min(2 + 0.6 * n, 14), min(1.5 + 0.5 * n, 12)))
    im = ax.imshow(m, cmap=cmap)
    ax.set_xticks(range(len(cols)), cols, fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if n <= 16:
        for i, row in enumerate(m):
            for j, v in enumerate(row):
                if not math.isnan(v):
                    ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=7,
                            color="w")
    fig.colorbar(im, ax=ax, shrink=0.8)
    fig.tight_layout()
    return fig


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from numascope.families.matrix.bench import table
    rs = [r for r in results if r.family == FAMILY]
    if not rs:
        return []
    out = []
    for metric, title, cmap in METRICS:
        src, dst, m = table(rs, metric)
        if all(math.isnan(v) for row in m for v in row):
            continue
        fig = heatmap([f"N{i}" for i in src], [f"N{j}" for j in dst], m, title, cmap,
                      "memory node", "CPU node", "{:.0f}" if metric == "latency" else "{:.1f}")
        out.append((f"NUMA matrix: {metric}", fig))
    return out
